// Handshakes: the hellos two nodes exchange to make a link, and the side
// that answers one (node_impl's part; see node/node_impl.hpp and
// docs/wire-format.md, "Handshake"; the connecting side is
// node/connect.cpp).
//
// A hello says who a node is, its families (preference list, allowlist,
// what it can decode at all), its store, its credit window and the token it
// expects on the link. The node that receives one makes its side of the
// link (`accept`) and answers with its own hello; the connecting node makes
// its side from that answer. Each side sends with the families of its
// preference list that the other accepts and can decode; a link with none
// in one direction is refused, naming both lists. The link goes down on
// both sides when CAF loses the connection.
#include "node/node_impl.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>

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
  for (auto& type : registry_->type_shapes()) {
    result.type_names.push_back(std::move(type.name));
    result.type_shapes.push_back(std::move(type.shape));
  }
  return result;
}

caf::expected<hello> node_impl::accept(const hello& peer,
                                       const link_config* chosen,
                                       std::optional<lane::ring>* offered) {
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
  if (peer.type_names.size() != peer.type_shapes.size())
    return caf::make_error(errc::handshake_failed,
                           "node " + peer.node_name + " sent a hello with "
                             + std::to_string(peer.type_names.size())
                             + " type names but "
                             + std::to_string(peer.type_shapes.size())
                             + " type shapes");
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
  auto same_host = shares_store_with(peer);
  auto lane = same_host ? join_lane(peer, cfg, offered) : lane_pair{};
  auto admitted = links_.admit(
    peer_node, peer.link_token, [&](uint64_t token) {
      return std::make_shared<link_state>(*this, peer, cfg, send_families,
                                          same_host, token, lane);
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
  if (!admitted.made) {
    // Handshakes that crossed: the link this node made answering the peer's
    // hello writes into the ring the peer offered, and the peer's link,
    // made answering this node's hello, writes into the ring offered here
    // (the answer names a lane only then). Read it for the link there is.
    if (offered != nullptr && lane.in) {
      admitted.link->adopt_crossed_lane(lane.in);
      read_lane(admitted.link, peer.gateway, peer.node_name, lane.in, cfg);
    }
    return mine;
  }
  if (lane.in) {
    read_lane(admitted.link, peer.gateway, peer.node_name, lane.in, cfg);
    // Answering, this node names its ring; the asker writes into it.
    if (offered == nullptr)
      mine.lane = lane.in->name();
  }
  // The peer hears when this node's default actor ends.
  if (auto whom = exposed_.find(exposed_.default_id()))
    admitted.link->export_actor(whom);
  watch_.up(peer.node_name);
  // The link goes down when CAF loses the connection (the peer gateway's
  // proxy terminates) or the peer node shuts down.
  std::weak_ptr<link_state> weak = admitted.link;
  auto* self = this;
  auto peer_name = peer.node_name;
  caf::actor_cast<caf::abstract_actor*>(peer.gateway)
    ->attach_functor([weak, self, peer_node,
                      peer_name](const caf::error& reason) {
      if (auto l = weak.lock()) {
        auto why = reason ? reason
                          : caf::error{caf::exit_reason::remote_link_unreachable};
        l->shut_down(why, nullptr);
        self->links_.drop(peer_node);
        self->watch_.down(peer_name, why);
      }
    });
  return mine;
}

} // namespace ferry::detail
