// lazy_store: a state store that opens its database when first used, and
// again after it could not.
//
// A node starts whether or not its entities' database answers: the store
// is opened on the first call, and a call while it cannot be opened fails
// with `state_store_failed` naming why (at most one attempt a second, the
// others answering the last reason), so entities work once the database
// is up, and the node keeps running meanwhile. Once open, the store behaves
// as the one it opened (a PostgreSQL store reconnects by itself).
//
// Thread-safety: as a state_store; one mutex guards the opening.
#pragma once

#include "clock.hpp"
#include "entities/state_store.hpp"
#include "thread_safety.hpp"

#include <memory>
#include <string>

namespace ferry::detail::entities {

class lazy_store final : public state_store {
public:
  /// A store for `cfg`, opened now if it can be (`opened` tells).
  explicit lazy_store(state_store_config cfg);

  ~lazy_store() override;

  /// Returns whether the database was opened.
  bool opened() const;

  /// Returns why the last attempt to open it failed (none when open).
  caf::error last_error() const;

  std::string describe() const override;
  caf::expected<stored_state> load(const std::string& type,
                                   const std::string& key) override;
  caf::expected<uint64_t> save(const std::string& type, const std::string& key,
                               uint64_t expected, const std::string& family,
                               std::span<const std::byte> bytes) override;
  caf::expected<lease_grant> acquire(uint32_t shard, const std::string& owner,
                                     std::chrono::milliseconds ttl,
                                     std::chrono::milliseconds grace) override;
  caf::expected<std::vector<uint32_t>>
  renew(const std::string& owner, std::chrono::milliseconds ttl) override;
  caf::error release(uint32_t shard, const std::string& owner,
                     const std::string& hand_to) override;
  caf::expected<std::vector<shard_lease>> leases() override;

private:
  /// Returns the open store, opening it when it is not (and may be tried).
  caf::expected<std::shared_ptr<state_store>> get();

  const state_store_config cfg_;
  mutable mutex mtx_;
  std::shared_ptr<state_store> store_ FERRY_GUARDED_BY(mtx_);
  caf::error last_error_ FERRY_GUARDED_BY(mtx_);
  clock::time_point last_try_ FERRY_GUARDED_BY(mtx_);
};

} // namespace ferry::detail::entities
