// Making and losing links: node_impl's part (see node/node_impl.hpp).
//
// A handshake that ends well makes its link here (node/handshake.hpp): the
// link's way out (its connection, or a same-host lane beside it), the link
// in the node's table, the dispatcher the connection reports to from then
// on, the reader of the link's incoming lane, and the node's watchers
// hearing `node_up`. A link whose connection or lane ends goes down here:
// its proxies end with `remote_link_unreachable`, and the watchers hear
// `node_down` with the reason. A link that receives through a lane goes
// down once its reader has taken what the ring holds: the connection beside
// it may close before the reader got to the peer's last frames.
#include "lane/lane_transport.hpp"
#include "link/actor_links.hpp"
#include "link/link_dispatch.hpp"
#include "node/node_impl.hpp"

#include "ferry/errc.hpp"

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <algorithm>

namespace ferry::detail {

link_table::admission
node_impl::make_link(const std::shared_ptr<net::connection>& conn,
                     const peer_info& peer, const link_config& cfg,
                     std::vector<std::string> send_families,
                     std::optional<lane::ring>& offered,
                     std::shared_ptr<net::connection::handler>& dispatch,
                     const std::function<void()>& first) {
  auto same_host = shares_store_with(peer.who);
  // A lane when both offered a ring (both sides apply this one rule): the
  // link's way out is then the peer's ring, else the connection.
  auto lane =
    same_host && cfg.lane && offered.has_value() && !peer.offer.lane.empty();
  if (!lane && offered) {
    offered->unlink();
    offered.reset();
  }
  std::shared_ptr<transport> out = conn;
  if (lane) {
    if (auto ring = lane::ring::open(peer.offer.lane)) {
      ring->unlink();
      out = std::make_shared<lane_transport>(
        std::make_shared<lane::ring>(std::move(*ring)), conn);
    } else {
      log("cannot write into the same-host lane node " + peer.who.node_name +
          " offered (this node sends it through the TCP connection): " +
          render(ring.error()));
    }
  }
  // Frames go compressed only in a compression the peer reads.
  auto sending = cfg;
  if (auto& reads = peer.offer.compressions;
      cfg.compression != compression::none &&
      std::find(reads.begin(), reads.end(), to_string(cfg.compression)) ==
        reads.end()) {
    sending.compression = compression::none;
    std::string listed;
    for (auto& x : reads)
      listed += (listed.empty() ? "" : ", ") + x;
    log("node " + peer.who.node_name + " reads no " +
        to_string(cfg.compression) +
        " frames (it reads: " + (listed.empty() ? "none" : listed) +
        "): this node sends it frames uncompressed");
  }
  auto admitted = links_.admit(peer.who.node_id, [&] {
    auto link = std::make_shared<link_state>(
      *this, peer, sending, std::move(send_families), same_host, out);
    // Before anything else can send on the link (it is in the table once
    // this returns).
    first();
    return link;
  });
  if (!admitted.made)
    return admitted;
  auto& link = admitted.link;
  auto d = std::make_shared<link_dispatch>(*this, link, cfg);
  conn->set_handler(d);
  conn->linked(cfg.heartbeat_interval, cfg.connection_timeout);
  dispatch = d;
  if (offered) {
    auto in = std::make_shared<lane::ring>(std::move(*offered));
    offered.reset();
    link->adopt_lane_in(in);
    read_lane(link, std::move(in), d, out);
  }
  // The peer hears when this node's default actor ends.
  if (auto whom = exposed_.find(exposed_.default_id()))
    link->export_actor(whom);
  // A link taken down meanwhile (its peer gone, the cluster ending it)
  // reported its `down` already: it never reads as up after that.
  watch_.up(peer.who.node_name, [&link] { return !link->is_down(); });
  return admitted;
}

std::shared_ptr<link_state> node_impl::link_to(const std::string& name) {
  auto link = links_.find(name);
  return link && !link->is_down() ? link : nullptr;
}

void node_impl::post_link_change(link_change x) {
  caf::anon_send(linker_, std::move(x));
}

void node_impl::link_lost(const std::shared_ptr<link_state>& link,
                          const caf::error& why, bool final) {
  // What the peer wrote into the lane before it went (its goodbye after
  // its last messages) is still delivered.
  if (!final && link->drain_lane(why))
    return;
  if (!link->shut_down(caf::exit_reason::remote_link_unreachable, nullptr))
    return;
  links_.drop(link);
  watch_.down(link->peer_name(), why);
}

} // namespace ferry::detail
