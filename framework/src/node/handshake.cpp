// Handshakes: how two nodes make a link (node_impl's part; see
// node/node_impl.hpp and docs/wire-format.md, "Handshake").
//
// The connecting node asks the peer's gateway for its name (`identify`),
// which selects its link config, then sends its `hello`: who it is, its
// families (preference list, allowlist, what it can decode at all), its
// store, its credit window and the token it expects on the link. The peer
// answers with its own hello after making its side of the link (`accept`);
// the connecting node then makes its side from that answer. Each side sends
// with the families of its preference list that the other accepts and can
// decode; a link with none in one direction is refused, naming both lists.
// The link goes down on both sides when CAF loses the connection.
#include "node/node_impl.hpp"


#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include <algorithm>

namespace ferry::detail {

using serializers::detail::list_names;

namespace {

/// Families of `prefs` (in order) that the peer accepts and can decode.
std::vector<std::string> meet(const std::vector<std::string>& prefs,
                              const std::vector<std::string>& accepted,
                              const std::vector<std::string>& decodable) {
  std::vector<std::string> result;
  for (auto& family : prefs)
    if (std::find(accepted.begin(), accepted.end(), family) != accepted.end()
        && std::find(decodable.begin(), decodable.end(), family)
             != decodable.end())
      result.push_back(family);
  return result;
}

/// The error of a link without a common family in one direction.
caf::error no_common_family(const std::string& sender,
                            const std::string& receiver,
                            const std::vector<std::string>& prefs,
                            const std::vector<std::string>& allowed,
                            const std::vector<std::string>& decodable) {
  // Families both lists name that the receiver has no decoder for.
  std::vector<std::string> missing;
  for (auto& family : meet(prefs, allowed, prefs))
    if (std::find(decodable.begin(), decodable.end(), family)
        == decodable.end())
      missing.push_back(family);
  return caf::make_error(
    errc::no_common_family,
    "node " + sender + " sends with serializers " + list_names(prefs)
      + " but node " + receiver + " accepts only deserializers "
      + list_names(allowed)
      + (missing.empty()
           ? std::string{}
           : ", and of those it cannot decode " + list_names(missing)
               + " (no such family registered there)")
      + "; add a common family to one of the lists (ferry.links." + receiver
      + ".serializers on " + sender + " or ferry.links." + sender
      + ".deserializers on " + receiver + ")");
}

} // namespace

bool node_impl::shares_store_with(const hello& peer) const {
  return store_.has_value() && peer.has_store && peer.host_id == cfg_.host_id
         && peer.store_name == cfg_.store_name
         && peer.store_token == store_->token();
}

hello node_impl::make_hello(const link_config& cfg) const {
  hello result;
  result.node_name = cfg_.node_name;
  result.host_id = cfg_.host_id;
  result.store_name = cfg_.store_name;
  result.has_store = store_.has_value();
  result.store_token = store_ ? store_->token() : 0;
  result.serializers = cfg.serializers;
  result.deserializers = cfg.deserializers;
  result.decodable = registry_->families();
  result.gateway = gateway_;
  result.default_actor = exposed_.default_id();
  result.window_bytes = cfg.window_bytes;
  result.window_messages = cfg.window_messages;
  return result;
}

caf::expected<hello> node_impl::accept(const hello& peer,
                                       const link_config* chosen) {
  if (peer.protocol != wire_protocol_version) {
    // A hello of another version is read only as far as its version: the
    // peer's name is not known (unless the peer answered an identify).
    auto who = peer.node_name.empty() ? std::string{"the peer"}
                                      : "node " + peer.node_name;
    return caf::make_error(errc::handshake_failed,
                           who + " speaks ferry wire protocol "
                             + std::to_string(peer.protocol) + ", node "
                             + cfg_.node_name + " speaks "
                             + std::to_string(wire_protocol_version)
                             + "; run the same ferry version on both");
  }
  if (!peer.gateway)
    return caf::make_error(errc::handshake_failed,
                           "handshake without a gateway");
  // The connecting side passes the config it offered in its hello (one set
  // for the peer's address counts there); the accepting side goes by name.
  auto& cfg = chosen != nullptr ? *chosen : cfg_.link_for(peer.node_name);
  // Its link_token is set below, with the link it names.
  auto mine = make_hello(cfg);
  auto send_families = meet(cfg.serializers, peer.deserializers,
                            peer.decodable);
  auto receive_families = meet(peer.serializers, cfg.deserializers,
                               mine.decodable);
  if (send_families.empty())
    return no_common_family(cfg_.node_name, peer.node_name, cfg.serializers,
                            peer.deserializers, peer.decodable);
  if (receive_families.empty())
    return no_common_family(peer.node_name, cfg_.node_name, peer.serializers,
                            cfg.deserializers, mine.decodable);
  auto peer_node = peer.gateway.node();
  auto admitted = links_.admit(
    peer_node, peer.link_token, [&](uint64_t token) {
      return std::make_shared<link_state>(*this, peer, cfg, send_families,
                                          shares_store_with(peer), token);
    });
  if (!admitted.link)
    return caf::make_error(
      errc::handshake_failed,
      "node " + cfg_.node_name + " still holds a link to node "
        + peer.node_name
        + " from an earlier connection (or a third node sent a hello in its "
          "name); retry once that link is down");
  // The answer names the link's token whatever happened meanwhile.
  mine.link_token = admitted.link->inbound_token();
  if (!admitted.made)
    return mine;
  // The link goes down when CAF loses the connection (the peer gateway's
  // proxy terminates) or the peer node shuts down.
  std::weak_ptr<link_state> weak = admitted.link;
  auto* self = this;
  caf::actor_cast<caf::abstract_actor*>(peer.gateway)
    ->attach_functor([weak, self, peer_node](const caf::error& reason) {
      if (auto l = weak.lock()) {
        l->shut_down(reason ? reason
                            : caf::error{caf::exit_reason::remote_link_unreachable},
                     nullptr);
        self->links_.drop(peer_node);
      }
    });
  return mine;
}

caf::expected<std::shared_ptr<link_state>>
node_impl::connect(const std::string& host, uint16_t port) {
  auto address = host + ":" + std::to_string(port);
  if (auto existing = links_.find_by_address(address))
    return existing;
  auto peer_gateway = sys_.middleman().remote_actor(host, port);
  if (!peer_gateway)
    return caf::make_error(errc::connect_failed,
                           "cannot connect to " + address + ": "
                             + render(peer_gateway.error()));
  if (auto existing = links_.find(peer_gateway->node())) {
    links_.note_address(address, peer_gateway->node());
    return existing;
  }
  caf::scoped_actor self{sys_};
  caf::error failure;
  std::string peer_name;
  self->request(*peer_gateway, handshake_timeout, identify{})
    .receive([&](std::string& name) { peer_name = std::move(name); },
             [&](caf::error& err) { failure = std::move(err); });
  if (failure)
    return caf::make_error(errc::handshake_failed,
                           "node at " + address + " did not identify itself: "
                             + render(failure));
  auto& cfg = cfg_.links.count(peer_name) != 0
                ? cfg_.links.at(peer_name)
                : cfg_.link_for(address);
  auto offer = make_hello(cfg);
  offer.link_token = links_.inbound_token(peer_gateway->node());
  hello reply;
  self->request(*peer_gateway, handshake_timeout, offer)
    .receive([&](hello& x) { reply = std::move(x); },
             [&](caf::error& err) { failure = std::move(err); });
  if (failure) {
    if (failure.category() == caf::atom("ferry_fw"))
      return failure;
    return caf::make_error(errc::handshake_failed,
                           "handshake with node " + peer_name + " at "
                             + address + " failed: " + render(failure));
  }
  // The peer accepted; build our side from its answer.
  if (peer_name != reply.node_name)
    reply.node_name = peer_name;
  auto accepted = accept(reply, &cfg);
  if (!accepted)
    return std::move(accepted.error());
  links_.note_address(address, peer_gateway->node());
  auto link = links_.find(peer_gateway->node());
  if (!link)
    return caf::make_error(errc::link_down,
                           "the link to " + address + " went down at once");
  link->set_default_actor(reply.default_actor);
  return link;
}

} // namespace ferry::detail
