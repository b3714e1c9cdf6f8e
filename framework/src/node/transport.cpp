// Transport: the one switch between plain and TLS links, and the check of
// a TLS peer's identity (node_impl's part; see node/node_impl.hpp).
//
// A plain node publishes and connects through CAF's middleman. A TLS node
// (node/tls_settings.hpp) does both only through CAF's OpenSSL module, so it
// has no plain port and never connects plain: a plain peer fails CAF's TLS
// handshake on either side. Its links are authenticated both ways by CAF
// (each side presents a certificate chaining to the other's CA file); ferry
// then binds the name a peer gives in its handshake to that certificate:
// the node name must be the certificate's subject CN or one of its
// subjectAltName DNS names (node/tls_identity.hpp finds the certificate of
// the BASP connection that CAF's middleman reports for the peer's node).
// Where CAF only reports a lost connection, the TLS records say why
// (unknown CA, expired, not yet valid, not TLS at all, the alert the peer
// sent); a refused peer is logged in one line on the node that refused it.
//
// A connection CAF closes at a heartbeat before the peer's handshake. CAF
// 0.17 leaves the time it last heard from a connection it opened unset
// until the peer's first bytes arrive, so a heartbeat tick that falls
// between the connect and the peer's handshake takes the connection for
// silent past `middleman.connection-timeout` and closes it:
// `remote_actor` fails with `connection_timeout` although the peer was
// about to answer. ferry's heartbeats are on by default, so a busy peer
// meets this now and then. `dial` connects again then, until the
// handshake timeout, 10 ms after each such close (a node with a very short
// heartbeat interval would otherwise open a connection per tick); a peer
// that never answers CAF's handshake fails with an error that says so.
//
// On a TLS node the connection CAF gave up on is not closed at once: CAF's
// OpenSSL module shuts it down gracefully, which first finishes the TLS
// handshake and sends the BASP handshake it holds, so it closes only once
// the peer answers. Meanwhile the peer may take it for a second connection
// from this node and, for a moment, route to it instead of to the new one;
// what it sends there is lost. So a TLS `dial` connects again only once
// the TLS handshakes it began have ended (tls_identity.hpp) and their
// connections have closed, within the handshake timeout.
//
// Thread-safety: every function may be called from any thread; the
// listener keys are guarded by `tls_mtx_`.
#include "node/node_impl.hpp"

#include "node/tls_identity.hpp"
#include "node/tls_settings.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

namespace ferry::detail {

namespace {

/// How long a TLS connection CAF gave up on may take to close once its
/// handshake has ended (it sends what it holds, then closes).
constexpr auto settle_time = std::chrono::milliseconds{500};

} // namespace

void node_impl::set_tls(std::shared_ptr<const tls_settings> x) {
  tls_ = std::move(x);
}

void node_impl::stop_tls_listeners() {
  std::lock_guard<std::mutex> guard{tls_mtx_};
  for (auto key : tls_listeners_)
    tls_identity::unlisten(key);
  tls_listeners_.clear();
}

caf::expected<uint16_t> node_impl::open_port(const caf::actor& whom,
                                             uint16_t port,
                                             const std::string& address) {
  if (!tls_)
    return sys_.middleman().publish(whom, port, address.c_str(), true);
  auto result = caf::openssl::publish(whom, port, address.c_str(), true);
  if (result) {
    auto settings = tls_;
    auto key = tls_identity::listen(
      *result, [this, settings](const tls_identity::record& x) {
        log("TLS: " + tls_identity::explain(x, settings->own_problem()));
      });
    std::lock_guard<std::mutex> guard{tls_mtx_};
    tls_listeners_.push_back(key);
  }
  return result;
}

caf::expected<caf::actor> node_impl::dial(const std::string& host,
                                          uint16_t port) {
  auto deadline = std::chrono::steady_clock::now() + handshake_timeout;
  for (int attempt = 1;; ++attempt) {
    auto result = dial_once(host, port, deadline);
    if (result || result.error() != caf::sec::connection_timeout)
      return result;
    if (std::chrono::steady_clock::now() >= deadline)
      return caf::make_error(
        errc::connect_failed,
        "the node at " + host + ":" + std::to_string(port)
          + " accepted " + std::to_string(attempt)
          + " connections but answered CAF's handshake on none before "
            "this node's next heartbeat tick, for "
          + std::to_string(handshake_timeout.count())
          + " s; is a CAF node listening there, and is it alive? ("
          + render(result.error()) + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
}

caf::expected<caf::actor>
node_impl::dial_once(const std::string& host, uint16_t port,
                     std::chrono::steady_clock::time_point deadline) {
  auto address = host + ":" + std::to_string(port);
  if (!tls_) {
    auto result = sys_.middleman().remote_actor(host, port);
    if (!result && result.error() == caf::sec::disconnect_during_handshake)
      return caf::make_error(
        errc::handshake_failed,
        "the node at " + address
          + " closed the connection during CAF's handshake; a TLS node "
            "(ferry.tls options set there) does so: it refuses plain peers "
            "such as this node ("
          + render(result.error()) + ")");
    return result;
  }
  auto since = tls_identity::last_seq();
  auto result = caf::openssl::remote_actor(sys_, host, port);
  if (result)
    return result;
  // Given up at a heartbeat tick (above): `dial` connects again once the
  // connection is gone. Its handshake ends first, then CAF closes it.
  if (result.error() == caf::sec::connection_timeout) {
    auto abandoned = tls_identity::unsettled_clients(port, since);
    if (tls_identity::await_settled(abandoned, deadline))
      tls_identity::await_freed(abandoned, std::min(
        deadline, std::chrono::steady_clock::now() + settle_time));
    return result;
  }
  if (auto failed = tls_identity::find_failed_client(port, since)) {
    auto why = tls_identity::explain(*failed, tls_->own_problem());
    log("TLS: connecting to " + address + ": " + why);
    return caf::make_error(errc::handshake_failed,
                           "TLS link to " + address + " refused: " + why);
  }
  return result;
}

caf::error node_impl::verify_peer(const std::string& addr, uint16_t port,
                                  const std::string& claimed) const {
  if (!tls_)
    return caf::none;
  auto who = "node '" + claimed + "' at " + addr + ":" + std::to_string(port);
  auto refuse = [&](const std::string& why) {
    auto line = "refused " + who + ": " + why;
    log("TLS: " + line);
    return caf::make_error(errc::handshake_failed, line);
  };
  auto found = tls_identity::find_done(addr, port);
  if (!found)
    return refuse("its connection is not a TLS connection this node "
                  "verified");
  if (found->verify_result != 0)
    return refuse("its certificate did not verify: "
                  + tls_identity::describe_x509_error(
                    static_cast<int>(found->verify_result)));
  auto& names = found->names;
  if (std::find(names.begin(), names.end(), claimed) != names.end())
    return caf::none;
  std::string listed;
  for (auto& x : names)
    listed += (listed.empty() ? "'" : " or '") + x + "'";
  return refuse("name mismatch: the peer presents a certificate for "
                + (listed.empty() ? std::string{"no name"} : listed)
                + " but calls itself '" + claimed + "'");
}

void node_impl::find_connection(
  const caf::node_id& peer,
  std::function<void(caf::expected<std::pair<std::string, uint16_t>>)> then) {
  auto middleman = sys_.middleman().actor_handle();
  sys_.spawn<caf::hidden>([middleman, peer,
                           then = std::move(then)](caf::event_based_actor* self) {
    self
      ->request(middleman, handshake_timeout, caf::get_atom::value, peer)
      .then(
        [then](const caf::node_id&, std::string& addr, uint16_t port) {
          then(std::pair{std::move(addr), port});
        },
        [then](caf::error& err) { then(std::move(err)); });
  });
}

caf::error node_impl::check_identity(const caf::node_id& peer,
                                     const std::string& claimed) {
  if (!tls_)
    return caf::none;
  caf::scoped_actor self{sys_};
  std::string addr;
  uint16_t port = 0;
  caf::error failure;
  self
    ->request(sys_.middleman().actor_handle(), handshake_timeout,
              caf::get_atom::value, peer)
    .receive(
      [&](const caf::node_id&, std::string& a, uint16_t p) {
        addr = std::move(a);
        port = p;
      },
      [&](caf::error& err) { failure = std::move(err); });
  if (failure)
    return caf::make_error(errc::handshake_failed,
                           "cannot find the connection to node '" + claimed
                             + "': " + render(failure));
  return verify_peer(addr, port, claimed);
}

} // namespace ferry::detail
