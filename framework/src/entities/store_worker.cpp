// store_worker: the actors that call the entities' database (see
// entities/store_worker.hpp).
#include "entities/store_worker.hpp"

#include "entities/protocol.hpp"

#include "ferry/clock.hpp"
#include "ferry/errc.hpp"

#include <caf/event_based_actor.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace ferry::detail::entities {

namespace {

/// Counts one call that began at `since` and ended with `err`.
void count(store_figures& x, clock::time_point since, const caf::error& err) {
  auto took = clock::steady().now() - since;
  x.calls.fetch_add(1, std::memory_order_relaxed);
  x.call_nanoseconds.fetch_add(
    static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()),
    std::memory_order_relaxed);
  if (err == errc::state_conflict)
    x.conflicts.fetch_add(1, std::memory_order_relaxed);
  else if (err)
    x.failures.fetch_add(1, std::memory_order_relaxed);
}

/// Runs `call` (returning a `caf::expected`), counted in `x`.
template <class F>
auto timed(store_figures& x, F call) {
  auto since = clock::steady().now();
  auto result = call();
  count(x, since, result ? caf::error{} : result.error());
  return result;
}

caf::behavior worker(caf::event_based_actor*,
                     std::shared_ptr<state_store> store,
                     std::shared_ptr<store_figures> fig) {
  using std::chrono::milliseconds;
  return {
    [store, fig](load_atom, const std::string& type, const std::string& key)
      -> caf::result<std::string, std::vector<std::byte>, uint64_t> {
      auto x = timed(*fig, [&] { return store->load(type, key); });
      if (!x)
        return std::move(x.error());
      return {std::move(x->family), std::move(x->bytes), x->version};
    },
    [store, fig](save_atom, const std::string& type, const std::string& key,
                 uint64_t expected, const std::string& family,
                 const std::vector<std::byte>& bytes) -> caf::result<uint64_t> {
      auto x = timed(
        *fig, [&] { return store->save(type, key, expected, family, bytes); });
      if (!x)
        return std::move(x.error());
      fig->saves.fetch_add(1, std::memory_order_relaxed);
      return *x;
    },
    [store, fig](acquire_atom, uint32_t shard, const std::string& owner,
                 int64_t ttl_ms, int64_t grace_ms) -> caf::result<lease_grant> {
      auto x = timed(*fig, [&] {
        return store->acquire(shard, owner, milliseconds{ttl_ms},
                              milliseconds{grace_ms});
      });
      if (!x)
        return std::move(x.error());
      return std::move(*x);
    },
    [store, fig](renew_atom, const std::string& owner,
                 int64_t ttl_ms) -> caf::result<std::vector<uint32_t>> {
      auto x =
        timed(*fig, [&] { return store->renew(owner, milliseconds{ttl_ms}); });
      if (!x)
        return std::move(x.error());
      return std::move(*x);
    },
    [store, fig](release_atom, uint32_t shard, const std::string& owner,
                 const std::string& hand_to) -> caf::result<bool> {
      auto since = clock::steady().now();
      auto err = store->release(shard, owner, hand_to);
      count(*fig, since, err);
      if (err)
        return err;
      return true;
    },
  };
}

} // namespace

caf::actor spawn_store_worker(caf::actor_system& sys,
                              std::shared_ptr<state_store> store,
                              std::shared_ptr<store_figures> figures) {
  return sys.spawn<caf::detached>(worker, std::move(store), std::move(figures));
}

} // namespace ferry::detail::entities
