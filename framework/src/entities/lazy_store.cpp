// lazy_store: opening the entities' database on demand (see
// entities/lazy_store.hpp).
#include "entities/lazy_store.hpp"

namespace ferry::detail::entities {

lazy_store::lazy_store(state_store_config cfg) : cfg_(std::move(cfg)) {
  static_cast<void>(get());
}

lazy_store::~lazy_store() = default;

bool lazy_store::opened() const {
  lock_guard guard{mtx_};
  return store_ != nullptr;
}

caf::error lazy_store::last_error() const {
  lock_guard guard{mtx_};
  return last_error_;
}

caf::expected<std::shared_ptr<state_store>> lazy_store::get() {
  lock_guard guard{mtx_};
  if (store_)
    return store_;
  auto now = clock::steady().now();
  if (last_error_ && now - last_try_ < std::chrono::seconds{1})
    return last_error_;
  last_try_ = now;
  auto made = open_state_store(cfg_);
  if (!made) {
    last_error_ = std::move(made.error());
    return last_error_;
  }
  last_error_ = caf::error{};
  store_ = std::move(*made);
  return store_;
}

std::string lazy_store::describe() const {
  lock_guard guard{mtx_};
  return store_ ? store_->describe() : cfg_.location;
}

caf::expected<stored_state> lazy_store::load(const std::string& type,
                                             const std::string& key) {
  auto s = get();
  if (!s)
    return std::move(s.error());
  return (*s)->load(type, key);
}

caf::expected<uint64_t> lazy_store::save(const std::string& type,
                                         const std::string& key,
                                         uint64_t expected,
                                         const std::string& family,
                                         std::span<const std::byte> bytes) {
  auto s = get();
  if (!s)
    return std::move(s.error());
  return (*s)->save(type, key, expected, family, bytes);
}

caf::expected<lease_grant>
lazy_store::acquire(uint32_t shard, const std::string& owner,
                    std::chrono::milliseconds ttl,
                    std::chrono::milliseconds grace) {
  auto s = get();
  if (!s)
    return std::move(s.error());
  return (*s)->acquire(shard, owner, ttl, grace);
}

caf::expected<std::vector<uint32_t>>
lazy_store::renew(const std::string& owner, std::chrono::milliseconds ttl) {
  auto s = get();
  if (!s)
    return std::move(s.error());
  return (*s)->renew(owner, ttl);
}

caf::error lazy_store::release(uint32_t shard, const std::string& owner,
                               const std::string& hand_to) {
  auto s = get();
  if (!s)
    return std::move(s.error());
  return (*s)->release(shard, owner, hand_to);
}

caf::expected<std::vector<shard_lease>> lazy_store::leases() {
  auto s = get();
  if (!s)
    return std::move(s.error());
  return (*s)->leases();
}

} // namespace ferry::detail::entities
