// relay_source: one store object this node pulls (or pulled) from another
// host, served to the nodes that pull it after this one.
//
// The relaying side of wire/relay_hint.hpp. While the puller lands the
// object's chunks it reports each (`landed`); a `relay_request` for a range
// already in is answered at once from the object's memory, one for a range
// still on its way waits (`parked`) until it lands, so a chain of receivers
// moves the object in a pipeline, each a few chunks behind the one before.
// Once the object is sealed (`sealed`) every range is in; the source keeps
// the object for the `linger` of node/relay_sources.hpp. A pull given up
// (`failed`) answers every waiting request with the reason, and the asking
// node falls back to the owner.
//
// A reply is a view of the object's memory that holds this source, so the
// object stays mapped until CAF has written the reply, even if its pull is
// given up or its receiver drops it meanwhile.
//
// Bounds, since the asking node is a peer: a request must lie within the
// object and be at most `max_chunk` bytes; each node is served at most the
// object's size in all (a node asking for the same range again and again
// cannot grow this node's send buffer); at most `max_parked` requests wait.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the state, and replies are sent after it.
#pragma once

#include "link/landing_buffer.hpp"
#include "wire/control.hpp"

#include "ferry/store/object_ref.hpp"

#include <caf/expected.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ferry::detail {

class relay_source : public std::enable_shared_from_this<relay_source> {
public:
  using clock = std::chrono::steady_clock;

  /// Answers one relay request (on the caller's thread, or later on the
  /// thread that lands the range).
  using reply_fn = std::function<void(caf::expected<chunk_reply>)>;

  /// Requests waiting for their range at most.
  static constexpr size_t max_parked = 64;

  /// The object `bytes`, landing in `buffer`, pulled from node `owner`;
  /// `node_name` goes into errors.
  relay_source(std::span<const std::byte> bytes,
               std::shared_ptr<landing_buffer> buffer, std::string owner,
               std::string node_name, uint64_t max_chunk);

  /// Bytes `offset` to `offset + length` have landed: answers the requests
  /// waiting for them.
  void landed(uint64_t offset, uint64_t length);

  /// The object is complete and sealed as `ref`: keeps it for later
  /// requests.
  void sealed(store::object_ref ref);

  /// The pull was given up: answers waiting and later requests with `why`.
  /// Returns false, changing nothing, when the object is sealed already.
  bool failed(const caf::error& why);

  /// Answers node `requester`'s request for `length` bytes at `offset`,
  /// naming `landing` in the reply, now or once the bytes are in.
  void serve(const std::string& requester, uint64_t offset, uint64_t length,
             uint64_t landing, reply_fn reply);

  /// Returns whether the object is sealed and was last used before
  /// `cutoff`.
  bool idle_since(clock::time_point cutoff) const;

private:
  struct parked {
    uint64_t offset;
    uint64_t length;
    uint64_t landing;
    reply_fn reply;
  };

  /// Returns whether every byte of the range has landed (requires `mtx_`).
  bool covers_locked(uint64_t offset, uint64_t length) const;

  /// The reply for a range that has landed.
  chunk_reply reply_for(uint64_t offset, uint64_t length, uint64_t landing);

  const std::span<const std::byte> bytes_;
  const std::string owner_;
  const std::string node_name_;
  const uint64_t max_chunk_;

  mutable std::mutex mtx_;
  /// The object while it lands (dropped once sealed).
  std::shared_ptr<landing_buffer> buffer_;
  /// The sealed object.
  std::optional<store::object_ref> ref_;
  /// Why the pull was given up (empty: it was not).
  caf::error failure_;
  /// The ranges landed, merged: start → end.
  std::map<uint64_t, uint64_t> landed_;
  /// Bytes served to each node.
  std::map<std::string, uint64_t> served_;
  std::vector<parked> parked_;
  clock::time_point last_use_ = clock::now();
};

} // namespace ferry::detail
