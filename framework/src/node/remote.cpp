// Reaching actors of other nodes: node_impl's part (see node/node_impl.hpp).
//
// `remote_actor` makes or takes the link to a node and returns a proxy of
// its default actor or of the actor it exposes under a name (a `lookup`
// asked on the link); `remote_spawn` asks the node to spawn a registered
// actor type. Both wait for the peer's answer on the calling thread, at
// most the handshake timeout (a lookup) or the caller's (a spawn), and give
// the ask up after it: a late answer counts as unasked
// (docs/wire-format.md, "Requests and answers").
#include "node/node_impl.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/sec.hpp>

#include <future>

namespace ferry::detail {

namespace {

/// Waits for the answer of an ask (lookup, spawn) for at most `timeout`;
/// gives the ask up when none came (a late answer is then counted as
/// unasked).
caf::expected<uint64_t> await_answer(
  const std::shared_ptr<link_state>& link, std::chrono::milliseconds timeout,
  const std::function<caf::expected<uint64_t>(pending_asks::callback)>& ask,
  const std::string& what) {
  auto answer = std::make_shared<std::promise<pending_asks::answer>>();
  auto result = answer->get_future();
  auto id =
    ask([answer](pending_asks::answer a) { answer->set_value(std::move(a)); });
  if (!id)
    return std::move(id.error());
  if (result.wait_for(timeout) != std::future_status::ready) {
    auto why =
      caf::make_error(caf::sec::request_timeout,
                      "node " + link->peer_name() + " did not answer " + what +
                        " within " + std::to_string(timeout.count()) + " ms");
    link->give_up_ask(*id, why);
    return why;
  }
  auto a = result.get();
  if (a.error)
    return std::move(a.error);
  return a.actor;
}

} // namespace

caf::expected<caf::actor> node_impl::remote_actor(const std::string& host,
                                                  uint16_t port,
                                                  const std::string& name) {
  auto link = connect(host, port);
  if (!link)
    return std::move(link.error());
  uint64_t id = 0;
  if (name.empty()) {
    id = (*link)->default_actor();
    if (id == 0)
      return caf::make_error(errc::no_such_actor,
                             "node " + (*link)->peer_name() +
                               " has no published default actor; pass "
                               "the name of an exposed actor");
  } else {
    auto found = await_answer(
      *link, cfg_.handshake_timeout,
      [&](pending_asks::callback cb) -> caf::expected<uint64_t> {
        return (*link)->ask_lookup(name, std::move(cb));
      },
      "a lookup of \"" + name + "\"");
    if (!found)
      return std::move(found.error());
    id = *found;
  }
  return caf::actor_cast<caf::actor>((*link)->proxy(id));
}

caf::expected<caf::actor>
node_impl::remote_spawn(const std::string& host, uint16_t port,
                        const std::string& type_name, const caf::message& args,
                        std::chrono::milliseconds timeout) {
  auto link = connect(host, port);
  if (!link)
    return std::move(link.error());
  auto id = await_answer(
    *link, timeout,
    [&](pending_asks::callback cb) {
      return (*link)->ask_spawn(type_name, args, std::move(cb));
    },
    "a spawn of \"" + type_name + "\"");
  if (!id)
    return std::move(id.error());
  return caf::actor_cast<caf::actor>((*link)->proxy(*id));
}

caf::expected<uint16_t> node_impl::listen(const std::string& address,
                                          uint16_t port) {
  auto result = open_port(port, address);
  if (!result)
    return caf::make_error(errc::connect_failed, "cannot listen on " + address +
                                                   ":" + std::to_string(port) +
                                                   ": " +
                                                   render(result.error()));
  return *result;
}

} // namespace ferry::detail
