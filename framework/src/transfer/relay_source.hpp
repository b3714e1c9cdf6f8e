// relay_source: one store object this node pulls (or pulled) from another
// host, served to the nodes that pull it after this one.
//
// The relaying side of wire/relay_hint.hpp. While the puller lands the
// object's chunks it reports each (`landed`); a `relay_request` for a range
// already in is answered at once from the object's memory, one for a range
// still on its way waits (`parked`) until it lands, so a chain of receivers
// moves the object in a pipeline, each a few chunks behind the one before.
// A pull given up (`failed`) answers every waiting request with the reason,
// and the asking node falls back to the owner.
//
// Relaying keeps an object alive only for the nodes pulling it from here.
// While the object lands, replies hold its unsealed memory (the landing
// buffer) until CAF has written them. Once sealed (`sealed`), the source
// holds the object while a node that has begun pulling it from here has
// not asked for all of it (a receiver a few chunks behind this one), and
// at most until the source is swept, `linger` after the last request
// (transfer/relay_sources.hpp); beyond that, it takes a new handle from the
// store for each reply, serving the object while anyone on this host holds
// it. When it is gone, a request is answered with an error and the asking
// node pulls from the owner. So an object nobody pulls from here is held no
// longer than its receiver holds it.
//
// Bounds, since the asking node is a peer: a request must lie within the
// object and be at most `max_chunk` bytes; each node is served at most the
// object's size in all (a node asking for the same range again and again
// cannot grow this node's send buffer); at most `max_parked` requests wait.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the state, and replies are sent after it.
#pragma once

#include "clock.hpp"
#include "thread_safety.hpp"
#include "transfer/landing_buffer.hpp"
#include "wire/control.hpp"

#include "ferry/store/object_ref.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/expected.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ferry::detail {

class relay_source {
public:
  /// Answers one relay request (on the caller's thread, or later on the
  /// thread that lands the range).
  using reply_fn = std::function<void(caf::expected<chunk_reply>)>;

  /// Requests waiting for their range at most.
  static constexpr size_t max_parked = 64;

  /// The object `bytes`, landing in `buffer`, pulled from node `owner`;
  /// `node_name` goes into errors; uses are timed on `time`, which must
  /// outlive the source.
  relay_source(std::span<const std::byte> bytes,
               std::shared_ptr<landing_buffer> buffer, std::string owner,
               std::string node_name, uint64_t max_chunk,
               const clock& time = clock::steady());

  /// Bytes `offset` to `offset + length` have landed: answers the requests
  /// waiting for them.
  void landed(uint64_t offset, uint64_t length);

  /// The object is complete and sealed as `ref` in `store`: answers the
  /// requests still waiting, and later ones while the store holds it.
  void sealed(const store::object_ref& ref, store::object_store store);

  /// The pull was given up: answers waiting and later requests with `why`.
  /// Returns false, changing nothing, when the object is sealed already.
  bool failed(const caf::error& why);

  /// Answers node `requester`'s request for `length` bytes at `offset`,
  /// naming `request` in the reply, now or once the bytes are in.
  void serve(const std::string& requester, uint64_t offset, uint64_t length,
             uint64_t request, reply_fn reply);

  /// Returns whether the object is sealed and was last asked for before
  /// `cutoff`.
  bool idle_since(clock::time_point cutoff) const;

private:
  /// What keeps the object's memory while replies are written: the
  /// landing buffer, and from sealing on a handle (shared by the replies
  /// made before the object was sealed).
  struct memory {
    std::shared_ptr<landing_buffer> buffer;
    std::optional<store::object_ref> ref;
  };

  /// Where a reply takes its bytes from: the landing memory, or (sealed)
  /// the store, which holds the object as `id`.
  struct origin {
    std::shared_ptr<memory> landing;
    std::optional<store::object_store> store;
    store::object_id id{};
  };

  struct parked {
    uint64_t offset;
    uint64_t length;
    uint64_t request;
    reply_fn reply;
  };

  /// Returns whether every byte of the range has landed.
  bool covers_locked(uint64_t offset, uint64_t length) const
    FERRY_REQUIRES(mtx_);

  /// Returns whether a node began pulling from here and has not asked for
  /// every byte.
  bool pulled_from_locked() const FERRY_REQUIRES(mtx_);

  /// Returns where replies take their bytes from now.
  origin origin_locked() const FERRY_REQUIRES(mtx_);

  /// The reply for a range that has landed (without the lock: `from` says
  /// all it needs).
  caf::expected<chunk_reply> reply_for(const origin& from, uint64_t offset,
                                       uint64_t length, uint64_t request) const;

  const std::span<const std::byte> bytes_;
  const std::string owner_;
  const std::string node_name_;
  const uint64_t max_chunk_;

  mutable mutex mtx_;
  /// The object's memory while it lands (null once sealed).
  std::shared_ptr<memory> memory_ FERRY_GUARDED_BY(mtx_);
  /// The sealed object, while a node pulling it from here has not asked
  /// for all of it.
  std::optional<store::object_ref> held_ FERRY_GUARDED_BY(mtx_);
  /// The store holding the sealed object, and its id there.
  std::optional<store::object_store> store_ FERRY_GUARDED_BY(mtx_);
  store::object_id id_ FERRY_GUARDED_BY(mtx_) = {};
  /// Why the pull was given up (empty: it was not).
  caf::error failure_ FERRY_GUARDED_BY(mtx_);
  /// The ranges landed, merged: start → end.
  std::map<uint64_t, uint64_t> landed_ FERRY_GUARDED_BY(mtx_);
  /// Bytes served to each node.
  std::map<std::string, uint64_t> served_ FERRY_GUARDED_BY(mtx_);
  std::vector<parked> parked_ FERRY_GUARDED_BY(mtx_);
  const clock* clock_;
  clock::time_point last_use_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail
