// relay_directory: which nodes a node gave each of its store objects to.
//
// The owner's side of relaying (wire/relay_hint.hpp). When a store object
// goes to a node on another host as a `remote_handle` transfer, the link's
// encoder asks the directory for the object's hint: its relay key (drawn
// when the object first goes out) and the node it went to last. The
// receivers thus form a chain, owner → first → second → third: each pulls
// from the one before as the chunks land there, so every node sends the
// object about once, whatever the number of receivers (the owner's link,
// not the receivers', is what a broadcast to many hosts runs out of).
//
// An entry lives while a transfer of its object is held (every transfer holds a
// lease on it) and for `linger` after the last one ends, matching the time a
// receiver keeps a sealed object's source for relaying
// (transfer/relay_sources.hpp): an object sent again soon after goes on along the
// chain, as far as the receivers still hold it. Entries are keyed by the
// store's object id, which the store never reuses in its life, so a key never
// names two objects.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the table.
#pragma once

#include "clock.hpp"
#include "thread_safety.hpp"
#include "transfer/relay_registry.hpp"
#include "wire/relay_hint.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>

namespace ferry::detail {

class relay_directory {
public:
  /// A directory whose entries linger `linger` after their last transfer,
  /// timed on `time` (which must outlive the directory and its leases).
  explicit relay_directory(clock::duration linger = std::chrono::seconds{5},
                           const clock& time = clock::steady());

  /// Notes that store object `object_id` goes to node `peer` now and
  /// returns its hint for `peer`.
  relay_offer offer(uint64_t object_id, const std::string& peer);

private:
  struct entry {
    uint64_t key = 0;
    /// The node the object went to last.
    std::string last;
    /// Leases held, and when the last one ended (clock ticks).
    std::atomic<size_t> leases{0};
    std::atomic<clock::duration::rep> released{0};
  };

  /// Drops entries without leases whose linger is over.
  void prune_locked() FERRY_REQUIRES(mtx_);

  const clock::duration linger_;
  const clock* clock_;
  mutable mutex mtx_;
  std::mt19937_64 keys_ FERRY_GUARDED_BY(mtx_);
  /// An entry's `key` and `last` are also read and written only under
  /// `mtx_` (its leases are atomic).
  std::unordered_map<uint64_t, std::shared_ptr<entry>>
    entries_ FERRY_GUARDED_BY(mtx_);
  /// Table size after the last prune; the next prune comes at twice that.
  size_t pruned_at_ FERRY_GUARDED_BY(mtx_) = 16;
};

} // namespace ferry::detail
