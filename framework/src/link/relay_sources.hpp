// relay_sources: the store objects a node relays, by relay key.
//
// The relaying side of wire/relay_hint.hpp, node-wide: a pull arrives on
// the link to the owner, the requests for its chunks on links to other
// receivers. Each puller opens a source for every store object it pulls
// with a relay key, reports its chunks and its end to it
// (link/relay_source.hpp), and closes it when the pull fails. The gateway
// hands each `relay_request` to `serve`: a key this node does not know
// (never pulled, or kept past its linger) is answered at once with an
// error, and the asking node pulls that chunk from the owner.
//
// A sealed object is kept for `linger` after its last use, so receivers a
// little behind still find it; `sweep` (the node's timer) then lets it
// go, and the store frees it once the receiving actor has dropped it too.
// Kept objects never crowd out new ones: a pull that finds the store full
// lets every kept object go (`drop_sealed`) and tries again.
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the table, and sources are served and dropped after it.
#pragma once

#include "link/relay_source.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ferry::detail {

class relay_sources {
public:
  /// How long a sealed object stays after its last use by default.
  static constexpr auto default_linger = std::chrono::seconds{5};

  explicit relay_sources(std::string node_name,
                         std::chrono::steady_clock::duration linger
                         = default_linger);

  /// Opens the source of the object with relay key `key` (its bytes
  /// `bytes`, landing in `buffer`, pulled from node `owner`); null when
  /// this node relays that key already (it pulls the object twice: the
  /// first pull serves).
  std::shared_ptr<relay_source>
  open(uint64_t key, std::span<const std::byte> bytes,
       std::shared_ptr<landing_buffer> buffer, const std::string& owner,
       uint64_t max_chunk);

  /// The pull of `source` (key `key`) failed: answers its waiting requests
  /// with `why` and forgets it.
  void close(uint64_t key, const std::shared_ptr<relay_source>& source,
             const caf::error& why);

  /// Answers node `requester`'s `req` (see relay_source::serve).
  void serve(const relay_request& req, const std::string& requester,
             relay_source::reply_fn reply);

  /// Forgets sealed objects unused for `linger` (the node's sweeper calls
  /// this every half linger).
  void sweep();

  /// Forgets every sealed object at once, linger or not: the store needs
  /// their room for a new object. Returns how many it forgot.
  size_t drop_sealed();

  /// Forgets every source (the node shuts down).
  void clear();

  std::chrono::steady_clock::duration linger() const { return linger_; }

  /// Returns the number of sources (for tests and metrics).
  size_t size() const;

private:
  const std::string node_name_;
  const std::chrono::steady_clock::duration linger_;
  mutable std::mutex mtx_;
  std::unordered_map<uint64_t, std::shared_ptr<relay_source>> sources_;
};

} // namespace ferry::detail
