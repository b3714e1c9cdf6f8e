// exposed_actors: the actors a node serves to its peers.
//
// A node publishes one default actor (`node::publish`) and exposes others
// under names (`node::expose`); a peer finds them by name (`lookup`) and
// addresses them by actor id. Every link reaches them, unlike an actor
// exported on one link (a message's sender, a spawned actor).
//
// Thread-safety: every member function may be called from any thread; one
// mutex guards the tables.
#pragma once

#include "thread_safety.hpp"

#include <caf/actor.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

namespace ferry::detail {

class exposed_actors {
public:
  /// `node_name` goes into errors.
  explicit exposed_actors(std::string node_name);

  /// Makes `whom` the default actor (nothing for an invalid handle).
  void publish_default(const caf::actor& whom);

  /// Exposes `whom` under `name` (nothing for an invalid handle).
  void expose(const std::string& name, const caf::actor& whom);

  /// Returns the id of the actor exposed as `name` (the default actor for
  /// an empty name); `no_such_actor` naming what is exposed otherwise.
  caf::expected<uint64_t> lookup(const std::string& name) const;

  /// Returns the published or exposed actor `id`, or null.
  caf::strong_actor_ptr find(uint64_t id) const;

  /// Returns the id of the default actor (0: none).
  uint64_t default_id() const;

private:
  const std::string node_name_;
  mutable mutex mtx_;
  std::map<std::string, caf::actor> by_name_ FERRY_GUARDED_BY(mtx_);
  std::unordered_map<uint64_t, caf::strong_actor_ptr>
    by_id_ FERRY_GUARDED_BY(mtx_);
  uint64_t default_ FERRY_GUARDED_BY(mtx_) = 0;
};

} // namespace ferry::detail
