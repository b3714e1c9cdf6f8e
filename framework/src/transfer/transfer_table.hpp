// transfer_table: frames a node holds for its peer to pull.
//
// Between nodes that share no store, frames of at least `pull_threshold`
// bytes (and store objects behind handles, `remote_handle`) stay with the
// sender as transfers; the message names each by its transfer id and the
// receiver pulls it in chunks (link/puller.cpp). The peer releases each
// transfer with `transfer_done` once pulled. A message the peer has taken
// (the `delivered` count of its credit) needs none of its frames any more,
// so those go then at the latest: a peer that never says `transfer_done`
// cannot make this node hold them while the link lives.
//
// Each byte is served once: a peer asking for the same range again and
// again (without reading its socket) would grow CAF's send buffer here
// without bound.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the table. Frames are released after the lock.
#pragma once

#include "thread_safety.hpp"
#include "wire/control.hpp"

#include "ferry/serializers/frame.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ferry::detail {

class transfer_table {
public:
  /// `chunk_size` bounds the chunks served (4 times it at most); the names
  /// go into errors.
  transfer_table(uint64_t chunk_size, std::string node_name,
                 std::string peer_name);

  /// Holds `frame` for the peer to pull; returns its transfer id.
  uint64_t add(std::shared_ptr<serializers::frame> frame);

  /// Notes that the message with sequence number `seq` (the largest so far)
  /// holds the transfers `ids`.
  void record(uint64_t seq, const std::vector<uint64_t>& ids);

  /// Serves a chunk of a transfer; the error says why not (unknown
  /// transfer, a range outside it, a chunk too large, bytes served before).
  caf::expected<chunk_reply> serve(const chunk_request& req);

  /// The peer has (or gave up on) transfer `id`: releases it.
  void finish(uint64_t id);

  /// The peer took every message below `delivered`: releases their
  /// transfers.
  void taken(uint64_t delivered);

  /// Releases every transfer (the link went down).
  void clear();

  /// Returns the number of transfers held.
  size_t size() const;

private:
  struct held_transfer {
    std::shared_ptr<serializers::frame> frame;
    /// Bytes served so far.
    uint64_t served = 0;
  };

  /// Removes transfer `id` and returns its frame, for the caller to drop
  /// after the lock.
  std::shared_ptr<serializers::frame> take_locked(uint64_t id)
    FERRY_REQUIRES(mtx_);

  const uint64_t chunk_size_;
  const std::string node_name_;
  const std::string peer_name_;

  mutable mutex mtx_;
  uint64_t next_id_ FERRY_GUARDED_BY(mtx_) = 1;
  std::unordered_map<uint64_t, held_transfer> transfers_ FERRY_GUARDED_BY(mtx_);
  /// (sequence number of the message, transfer id), in sequence order.
  std::deque<std::pair<uint64_t, uint64_t>> by_message_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
