// Same-host lanes: node_impl's part (see node/node_impl.hpp, lane/ring.hpp,
// lane/lane_transport.hpp and docs/architecture.md, "Same-host lanes").
//
// Two nodes that share the host store and both have `link_config::lane` on
// send a link's frames through two rings, one per direction, beside their
// TCP connection. Each node makes the ring it will read and names it in its
// hello (node/handshake.hpp); when the link is made, each opens the ring
// the peer named, to write, and removes its name. A node that cannot make
// or open a ring logs why, and that direction uses the connection; the
// frames of a direction always take one way, so their order holds. A lane
// is used only when both nodes offered a ring; otherwise both send through
// the connection and the ring offered goes. A node's reader of its own ring
// starts when its side of the link exists: what the peer wrote before waits
// in the ring.
#include "lane/lane_transport.hpp"
#include "link/link_dispatch.hpp"
#include "node/node_impl.hpp"
#include "transport/frame_reader.hpp"

#include "ferry/errc.hpp"

#include <algorithm>

namespace ferry::detail {

std::optional<lane::ring> node_impl::offer_lane(const link_config& cfg) {
  if (!cfg.lane || !store_)
    return std::nullopt;
  auto made = lane::ring::create(cfg.lane_bytes);
  if (!made) {
    log("offers no same-host lane (the link uses its TCP connection): " +
        render(made.error()));
    return std::nullopt;
  }
  made->set_spin(cfg.lane_spin);
  return std::move(*made);
}

void node_impl::read_lane(const std::shared_ptr<link_state>& link,
                          std::shared_ptr<lane::ring> in,
                          std::shared_ptr<link_dispatch> dispatch,
                          std::shared_ptr<transport> out) {
  // A record holds one frame, of any type the link takes (each is checked
  // against its own bound when read).
  auto max_record = dispatch->max_frame();
  auto deliver = [dispatch](std::span<const std::byte> record) {
    return net::frame_reader::read_record(record, *dispatch);
  };
  std::weak_ptr<link_state> weak = link;
  auto peer_name = link->peer_name();
  auto ended = [this, weak, peer_name](const caf::error& err) {
    auto l = weak.lock();
    if (!l || l->is_down())
      return;
    auto why = err ? err : l->drain_reason();
    if (!why)
      why = caf::make_error(errc::link_down,
                            "node " + peer_name +
                              " closed the same-host lane (its side of the "
                              "link went down)");
    link_lost(l, why, true);
  };
  lane::readers::backlog backlog;
  if (auto lane_out = std::dynamic_pointer_cast<lane_transport>(out)) {
    backlog.pending = lane_out->backlog_flag();
    backlog.drain = [lane_out] {
      lane_out->drain_backlog();
    };
  } else {
    backlog.pending = std::make_shared<std::atomic<bool>>(false);
    backlog.drain = [] {
    };
  }
  lanes_.start(std::move(in), max_record, std::move(deliver), std::move(ended),
               std::move(backlog));
}

} // namespace ferry::detail
