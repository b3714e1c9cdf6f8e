// store_worker: the actors that call the entities' database (see
// entities/store_worker.hpp).
#include "entities/store_worker.hpp"

#include "entities/protocol.hpp"

#include <caf/event_based_actor.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace ferry::detail::entities {

namespace {

caf::behavior worker(caf::event_based_actor*,
                     std::shared_ptr<state_store> store) {
  using std::chrono::milliseconds;
  return {
    [store](load_atom, const std::string& type, const std::string& key)
      -> caf::result<std::string, std::vector<std::byte>, uint64_t> {
      auto x = store->load(type, key);
      if (!x)
        return std::move(x.error());
      return {std::move(x->family), std::move(x->bytes), x->version};
    },
    [store](save_atom, const std::string& type, const std::string& key,
            uint64_t expected, const std::string& family,
            const std::vector<std::byte>& bytes) -> caf::result<uint64_t> {
      auto x = store->save(type, key, expected, family, bytes);
      if (!x)
        return std::move(x.error());
      return *x;
    },
    [store](acquire_atom, uint32_t shard, const std::string& owner,
            int64_t ttl_ms, int64_t grace_ms) -> caf::result<lease_grant> {
      auto x = store->acquire(shard, owner, milliseconds{ttl_ms},
                              milliseconds{grace_ms});
      if (!x)
        return std::move(x.error());
      return std::move(*x);
    },
    [store](renew_atom, const std::string& owner,
            int64_t ttl_ms) -> caf::result<std::vector<uint32_t>> {
      auto x = store->renew(owner, milliseconds{ttl_ms});
      if (!x)
        return std::move(x.error());
      return std::move(*x);
    },
    [store](release_atom, uint32_t shard, const std::string& owner,
            const std::string& hand_to) -> caf::result<bool> {
      if (auto err = store->release(shard, owner, hand_to))
        return err;
      return true;
    },
  };
}

} // namespace

caf::actor spawn_store_worker(caf::actor_system& sys,
                              std::shared_ptr<state_store> store) {
  return sys.spawn<caf::detached>(worker, std::move(store));
}

} // namespace ferry::detail::entities
