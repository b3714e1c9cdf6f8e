// link_dispatch: the way in of a link, what its peer sends handed to the
// link's parts.
//
// Once a connection's handshake made a link, every frame that arrives on it
// comes here, on the connection's I/O thread, and so does every record of
// the link's incoming same-host lane, on the lane's reader thread
// (frame_reader::read_record): the way in mirrors the way out (link_state
// → transport). A frame belongs to the link of the way it came on, so
// nothing a peer sends can speak for another node (or another link of this
// one): user messages and batches go to the link to be delivered, control
// frames to the part they concern, requests to the link (chunks) or,
// through `link_host`, to the node (lookups, spawns, relays) and are
// answered on the same link, and answers to this node's requests to the
// link's pending asks. A peer's bytes reach CAF's deserializer only inside
// a `caf`-family payload, through ferry's checked reader.
//
// What the peer may send is bounded per frame type (`max_body`, from the
// link's config): larger frames, handshake frames and malformed ones end
// the connection (the error names what was wrong), as does a goodbye (the
// peer stops). When the connection ends, the link's host takes it down
// (`link_host::link_lost`).
//
// Thread-safety: called by one reading thread at a time per way (the
// connection's I/O thread, the lane's reader); the two ways of one link may
// call at once, as the link's parts allow.
#pragma once

#include "link/link_host.hpp"
#include "link/link_state.hpp"
#include "transport/connection.hpp"

#include <memory>

namespace ferry::detail {

class link_dispatch final : public net::connection::handler {
public:
  /// Hands what arrives for `link` (of the node `host`, with the config
  /// `cfg`) on.
  link_dispatch(link_host& host, std::weak_ptr<link_state> link,
                const link_config& cfg);

  uint64_t max_body(wire::frame_type type) const override;

  /// Returns the longest frame, header included, that any type may make (a
  /// lane's record bound).
  uint64_t max_frame() const;

  caf::error on_frame(wire::frame_type type,
                      std::span<const std::byte> body) override;

  caf::error on_message(wire_message&& msg) override;

  net::chunk_place chunk_landing(uint64_t request, uint64_t length) override;

  caf::error on_chunk(uint64_t request, wire_bytes data, bool landed) override;

  import_landing* imports() override;

  void on_open(net::connection&) override;

  void on_closed(net::connection& conn, const caf::error& why) override;

private:
  /// Completes ask `request` with `x`, an answer of kind `k` (or a failed
  /// one), counting an answer to nothing.
  void answered(link_state& link, uint64_t request, pending_asks::answer x,
                pending_asks::kind k, bool failed = false);

  link_host& host_;
  std::weak_ptr<link_state> link_;
  const uint64_t max_message_;
  const uint64_t max_chunk_;
};

} // namespace ferry::detail
