// Same-host lanes: node_impl's part (see node/node_impl.hpp, lane/ring.hpp
// and docs/architecture.md, "Same-host lanes").
//
// Two nodes that share the host store and both have `link_config::lane` on
// send a link's messages through two rings, one per direction, instead of
// CAF's middleman. The asking node makes the ring it will read and names it
// in its hello. The answering node opens that ring to write, makes its own
// to read, and names it in its answer, which tells the asker that its ring
// is in use; the asker then opens the answering node's ring to write. Each
// opener removes the ring's name once it holds it open. A node that cannot
// make or open a ring logs why, and that direction (or the whole link, when
// the answering node has no lane) uses CAF's middleman; the messages of a
// direction always take one way, so their order holds.
//
// Handshakes that cross (both nodes connect at once) make each node's link
// while it answers the other's hello: each then writes into the ring the
// other offered, so a node keeps reading the ring it offered for whichever
// link it ends with, also when its own handshake ends early because the
// peer's hello made the link (node/connect.cpp). A ring the peer never
// opened is read in vain until the link goes down.
#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/mailbox_element.hpp>

#include <algorithm>

#include "node/node_impl.hpp"

namespace ferry::detail {

std::optional<lane::ring> node_impl::offer_lane(const link_config& cfg) {
  if (!cfg.lane || !store_)
    return std::nullopt;
  auto made = lane::ring::create(cfg.lane_bytes);
  if (!made) {
    log("offers no same-host lane (the link uses CAF's middleman): " +
        render(made.error()));
    return std::nullopt;
  }
  made->set_spin(cfg.lane_spin);
  return std::move(*made);
}

lane_pair node_impl::join_lane(const hello& peer, const link_config& cfg,
                               std::optional<lane::ring>* offered) {
  if (!cfg.lane || peer.lane.empty())
    return {};
  auto cannot_open = [&](const caf::error& err) {
    log(
      "cannot write into the same-host lane node " + peer.node_name +
      " offered (this node sends it through CAF's middleman): " + render(err));
  };
  if (offered == nullptr) {
    // Answering: write into the asker's ring, read from one of this node's.
    auto out = lane::ring::open(peer.lane);
    if (!out) {
      cannot_open(out.error());
      return {};
    }
    out->unlink();
    auto in = offer_lane(cfg);
    if (!in)
      return {};
    return {std::make_shared<lane::ring>(std::move(*out)),
            std::make_shared<lane::ring>(std::move(*in))};
  }
  // Asking: the answer names the peer's ring and says the peer writes into
  // the one offered (which it holds open by now).
  if (!offered->has_value())
    return {};
  lane_pair result;
  (*offered)->unlink();
  result.in = std::make_shared<lane::ring>(std::move(**offered));
  offered->reset();
  if (auto out = lane::ring::open(peer.lane)) {
    out->unlink();
    result.out = std::make_shared<lane::ring>(std::move(*out));
  } else {
    cannot_open(out.error());
  }
  return result;
}

void node_impl::read_lane(const std::shared_ptr<link_state>& link,
                          const caf::actor& peer_gateway,
                          const std::string& peer_name,
                          std::shared_ptr<lane::ring> in,
                          const link_config& cfg) {
  // A record holds one CAF message: a wire message (at most
  // max_message_size of frames), a batch of small ones, or a control
  // message; the slack covers their headers.
  auto max_record =
    std::max(cfg.max_message_size, uint64_t{1} << 20) + (uint64_t{1} << 20);
  auto sender = caf::actor_cast<caf::strong_actor_ptr>(peer_gateway);
  auto deliver = [gateway = gateway_, sender](caf::message msg) {
    gateway->enqueue(caf::make_mailbox_element(sender, caf::make_message_id(),
                                               {}, std::move(msg)),
                     nullptr);
  };
  auto refused = [this, peer_name](const caf::error& err) {
    log("dropped what node " + peer_name + " sent: " + render(err));
  };
  std::weak_ptr<link_state> weak = link;
  auto peer_node = peer_gateway.node();
  auto ended = [this, weak, peer_node, peer_name](const caf::error& err) {
    auto l = weak.lock();
    if (!l || l->is_down())
      return;
    auto why = err ? err
                   : caf::make_error(errc::link_down,
                                     "node " + peer_name +
                                       " closed the same-host lane (its "
                                       "side of the link went down)");
    l->shut_down(why, nullptr);
    if (find_link(peer_node) == l)
      links_.drop(peer_node);
    watch_.down(peer_name, why);
  };
  lane::readers::backlog out;
  out.pending = link->lane_backlog_flag();
  out.drain = [weak] {
    if (auto l = weak.lock())
      l->drain_lane_backlog();
  };
  lanes_.start(std::move(in), sys_, max_record, std::move(deliver),
               std::move(refused), std::move(ended), std::move(out));
}

void node_impl::keep_offered_lane(const std::shared_ptr<link_state>& link,
                                  std::optional<lane::ring>& offered,
                                  const caf::actor& peer_gateway,
                                  const std::string& peer_name,
                                  const link_config& cfg) {
  if (!offered || !link || link->is_down())
    return;
  auto in = std::make_shared<lane::ring>(std::move(*offered));
  offered.reset();
  // The name stays until the peer opens the ring (it removes it then) or
  // the ring goes with the link: the peer may not have read the hello yet.
  link->adopt_crossed_lane(in);
  read_lane(link, peer_gateway, peer_name, std::move(in), cfg);
}

} // namespace ferry::detail
