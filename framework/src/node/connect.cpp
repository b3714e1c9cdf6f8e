// Connecting to a peer (node_impl's part; see node/node_impl.hpp, and
// node/handshake.hpp for what happens on the connection).
//
// `connect` returns the live link an address led to before, or opens a
// connection and waits for its handshake. When the two nodes connected to
// each other at once, the deciding node keeps one connection and refuses
// the other with `already_linked`; a connect whose connection was refused
// so waits for the link the other connection makes (it comes with that
// connection's welcome). Should that connection fail too, the connect
// dials again, a few times with a growing pause.
//
// Thread-safety: `connect` may run on any number of threads at once; it
// blocks its caller for at most about twice the handshake timeout.
#include "node/handshake.hpp"
#include "node/node_impl.hpp"
#include "thread_safety.hpp"

#include "ferry/errc.hpp"

#include <condition_variable>
#include <thread>

namespace ferry::detail {

namespace {

/// Connections one connect opens at most.
constexpr int max_dials = 4;

/// Waits until `table` holds a live link to `peer` or `deadline` passes.
std::shared_ptr<link_state>
await_link(link_table& table, uint64_t peer,
           std::chrono::steady_clock::time_point deadline) {
  struct signal {
    mutex mtx;
    std::condition_variable cv;
    bool fired FERRY_GUARDED_BY(mtx) = false;
  };
  auto sig = std::make_shared<signal>();
  auto key = table.watch(peer, [sig] {
    {
      lock_guard guard{sig->mtx};
      sig->fired = true;
    }
    sig->cv.notify_all();
  });
  auto live = [&] {
    auto l = table.find(peer);
    return l && !l->is_down() ? l : nullptr;
  };
  auto result = live();
  if (!result) {
    unique_lock guard{sig->mtx};
    while (!sig->fired)
      if (sig->cv.wait_until(guard.native(), deadline) ==
          std::cv_status::timeout)
        break;
    guard.unlock();
    result = live();
  }
  table.unwatch(key);
  return result;
}

} // namespace

caf::expected<std::shared_ptr<link_state>>
node_impl::connect(const std::string& host, uint16_t port) {
  auto address = host + ":" + std::to_string(port);
  if (auto existing = links_.find_by_address(address))
    return existing;
  // The dial and the handshake each have the handshake timeout (the
  // connection keeps it on the node's clock); this bounds the caller's wait
  // in real time besides.
  auto& real = clock::steady();
  auto deadline =
    real.now() + 2 * cfg_.handshake_timeout + std::chrono::seconds{1};
  auto pause = std::chrono::milliseconds{10};
  caf::error last;
  for (int attempt = 0; attempt < max_dials; ++attempt) {
    auto waiter = std::make_shared<connect_wait>();
    dial(host, port, waiter);
    auto out = waiter->wait(deadline);
    if (!out)
      return caf::make_error(errc::handshake_failed,
                             "no handshake with the node at " + address +
                               " within " +
                               std::to_string(cfg_.handshake_timeout.count()) +
                               " ms (ferry.transport.handshake-timeout)");
    if (out->link) {
      links_.note_address(address, out->link->peer_id());
      return std::move(out->link);
    }
    if (out->error != errc::already_linked || out->peer == 0) {
      if (out->error.category() == caf::atom("ferry_fw"))
        return std::move(out->error);
      return caf::make_error(errc::handshake_failed,
                             "handshake with the node at " + address +
                               " failed: " + render(out->error));
    }
    // The two nodes connected to each other at once: the peer's connection
    // brings the link.
    if (auto link = await_link(links_, out->peer, deadline)) {
      links_.note_address(address, link->peer_id());
      return link;
    }
    last = std::move(out->error);
    if (real.now() + pause >= deadline)
      break;
    std::this_thread::sleep_for(pause);
    pause *= 4;
  }
  return caf::make_error(errc::connect_failed,
                         "cannot connect to " + address +
                           ": the node refused this connection as a second "
                           "one, and the link it has with this node went "
                           "away each time (" +
                           render(last) + ")");
}

} // namespace ferry::detail
