// state_store: where sharded entities keep their state and their shards'
// leases, in a database that outlives every process.
//
// An entity is named by (type, key). Its state is one byte string written by
// a serialization family, stored with a version: 0 means nothing is stored,
// the first save makes 1, each save adds 1. A save names the version its
// activation loaded and is refused with `errc::state_conflict` when the
// stored version is another (optimistic concurrency: a duplicate activation
// cannot overwrite what a newer one saved). A save that returned its version
// is committed.
//
// A shard is held by one owner (a cluster member) at a time through a lease
// that runs out `ttl` after it was last taken or extended, measured on the
// database's clock so that members' clocks do not matter. An owner that
// gives a shard up may hand it to another owner, which alone may take it
// until a grace period after the release. Each time an owner takes a shard
// that another owner held last, the shard's epoch grows by 1.
//
// Two stores implement it: SQLite (one file, for the members of one host;
// sqlite_store.hpp) and PostgreSQL (members on several hosts;
// postgres_store.hpp). docs/entities.md describes the tables.
//
// Usage (on a thread that may block, never on CAF's scheduler threads):
//
//     state_store_config cfg;
//     cfg.location = "sqlite:/var/lib/ferry/entities.db";
//     auto store = open_state_store(cfg);            // expected<unique_ptr>
//     auto loaded = (*store)->load("counter", "k1");  // version 0: none
//     auto saved = (*store)->save("counter", "k1", loaded->version,
//                                 "cereal.binary", bytes);
//
// Thread-safety: every member function of a store may be called from any
// thread, at once; each call blocks its thread until the database answers
// (or a bounded timeout passes). Several processes may use one database at
// once.
#pragma once

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ferry::detail::entities {

/// One entity's stored state.
struct stored_state {
  /// The serialization family that wrote `bytes` ("cereal.binary", ...);
  /// empty when nothing is stored.
  std::string family;
  /// The state as the family wrote it.
  std::vector<std::byte> bytes;
  /// 0: nothing stored; the first save makes 1.
  uint64_t version = 0;
};

/// What `acquire` found.
struct lease_grant {
  /// This owner holds the shard now.
  bool held = false;
  /// The shard's epoch now (grows by 1 each time another owner takes it).
  uint64_t epoch = 0;
  /// When not held: who holds it ("" when nobody does).
  std::string holder;
  /// When not held: how long the holder's lease still runs.
  std::chrono::milliseconds holder_left{0};
  /// When not held and nobody holds it: the owner a hand-off keeps the
  /// shard for ("" when none does).
  std::string reserved_for;
  /// When reserved: how long the hand-off's grace still runs.
  std::chrono::milliseconds reserved_left{0};
  /// When held: this call took the shard (false: it extended a lease the
  /// owner held already).
  bool taken = false;
  /// When taken: the owner that held the shard last ("" if none did; the
  /// owner itself when its own lease had run out or it had released it).
  std::string previous;
  /// When taken: the previous owner released the shard to this owner (a
  /// hand-off: its buffered messages are on their way), rather than its
  /// lease running out.
  bool handed_off = false;
};

/// One shard's lease as stored (`state_store::leases`).
struct shard_lease {
  uint32_t shard = 0;
  /// The owner that took the shard last ("" if none did).
  std::string holder;
  uint64_t epoch = 0;
  /// How long the holder's lease still runs (0: nobody holds the shard).
  std::chrono::milliseconds left{0};
  /// The owner a release handed the shard to ("" when none).
  std::string hand_to;
};

/// The durable state of sharded entities and their shards' leases.
class state_store {
public:
  virtual ~state_store();

  /// Returns where the store is, for errors and logs
  /// ("sqlite:/var/lib/x.db", "postgresql:host=... dbname=..." without a
  /// password).
  virtual std::string describe() const = 0;

  /// Returns the state of entity (type, key): version 0 and no bytes when
  /// none is stored. Fails with `errc::state_store_failed` when the
  /// database fails or the stored row is not one this store writes (larger
  /// than `max_state_bytes`, an odd version or family).
  [[nodiscard]] virtual caf::expected<stored_state>
  load(const std::string& type, const std::string& key) = 0;

  /// Stores `bytes`, written by `family`, as the state of (type, key) if
  /// its stored version is `expected` (0: nothing stored yet); returns the
  /// new version (expected + 1). Fails with `errc::state_conflict` when the
  /// stored version is another (a newer activation saved since this one
  /// loaded) and with `errc::state_store_failed` when the database fails or
  /// the arguments break a limit (`max_state_bytes`, names: see
  /// store_checks.hpp). A save that returned a version is committed.
  [[nodiscard]] virtual caf::expected<uint64_t>
  save(const std::string& type, const std::string& key, uint64_t expected,
       const std::string& family, std::span<const std::byte> bytes) = 0;

  /// Takes, or extends, `owner`'s lease on `shard` for `ttl` (measured on
  /// the database's clock). Granted when nobody holds the shard (never
  /// held, released, or its lease ran out), or `owner` holds it already. A
  /// shard released as a hand-off to another owner (`release` with
  /// `hand_to`) is granted only to that owner, until `hand_off_grace` after
  /// the release; then to anyone. Fails with `errc::invalid_config` for a
  /// `ttl` outside (0, 1 day] or a grace outside [0, 1 day].
  [[nodiscard]] virtual caf::expected<lease_grant>
  acquire(uint32_t shard, const std::string& owner,
          std::chrono::milliseconds ttl,
          std::chrono::milliseconds hand_off_grace) = 0;

  /// Extends every lease `owner` holds and has not let run out by `ttl`;
  /// returns the shards it still holds (sorted).
  [[nodiscard]] virtual caf::expected<std::vector<uint32_t>>
  renew(const std::string& owner, std::chrono::milliseconds ttl) = 0;

  /// Gives up `owner`'s lease on `shard` (nothing if it does not hold it),
  /// for `hand_to` alone when not empty (a hand-off).
  [[nodiscard]] virtual caf::error release(uint32_t shard,
                                           const std::string& owner,
                                           const std::string& hand_to) = 0;

  /// Returns every shard's lease as stored (sorted by shard), for
  /// operators and tests.
  [[nodiscard]] virtual caf::expected<std::vector<shard_lease>> leases() = 0;
};

/// Where the store is and its limits.
struct state_store_config {
  /// "sqlite:PATH" or "postgresql:CONNINFO" (libpq's keyword/value or URI
  /// form).
  std::string location;
  /// PostgreSQL: connections kept open (each call takes one; callers on
  /// more threads wait for one).
  size_t pool_size = 4;
  /// PostgreSQL: how long connecting may take (libpq's connect_timeout,
  /// whole seconds, at least 2) unless the location sets connect_timeout.
  std::chrono::seconds connect_timeout{5};
  /// SQLite: how long a writer waits for another process's write
  /// (busy_timeout).
  std::chrono::milliseconds busy_timeout{5000};
  /// Most bytes of one state; a save above it fails with
  /// state_store_failed naming the limit, a load of more (written by
  /// another build) too.
  uint64_t max_state_bytes = uint64_t{16} << 20;
};

/// Opens the store at `cfg.location` (copying `cfg`), creating its tables
/// if they are missing (idempotent, safe when several processes do it at
/// once). Fails with `errc::invalid_config` for a location of another scheme
/// or an empty path (naming the forms), and with `errc::state_store_failed`
/// when the database cannot be reached (naming where, the library's message
/// and how to fix it).
[[nodiscard]] caf::expected<std::unique_ptr<state_store>>
open_state_store(const state_store_config& cfg);

} // namespace ferry::detail::entities
