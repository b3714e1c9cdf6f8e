// entity: an actor named by a type and a key, with durable state.
//
// A program registers an entity type by name with the behavior each
// activation runs (`node_config::add_entity_type`); any member of the cluster
// then reaches the entity ("cart", "user-42") through a handle from
// `node::entities().ref(type, key)`, as it reaches any actor. The entity is
// activated on the member holding its key's shard when a message comes
// (its state loaded first), passivated when idle (its state saved first),
// and activated again, possibly elsewhere, by the next message
// (docs/entities.md).
//
// An `entity<State>` is a CAF event-based actor with a `State` that lives in
// the entities' database: `state()` holds what the last save stored (a
// default `State` for an entity never saved) once the behavior runs, and
// `save(done)` stores it, calling `done` once the database committed it (an
// acknowledged save) or with the error. Saves are conditional on the version
// the activation loaded: when another activation saved since, the save fails
// with `errc::state_conflict` and this activation stops (answering what it
// still holds with that error). `ferry::no_state` makes an entity without
// state, which needs no loading or saving.
//
// Usage:
//
//     struct cart { std::vector<std::string> items; /* serialize / inspect */ };
//     cfg.add_entity_type<cart>("cart", [](ferry::entity<cart>* self) {
//       return caf::behavior{
//         [self](add_item& x) -> caf::result<uint64_t> {
//           self->state().items.push_back(x.name);
//           auto rp = self->make_response_promise<uint64_t>();
//           self->save([self, rp](const caf::error& err) mutable {
//             if (err) rp.deliver(err);
//             else rp.deliver(uint64_t{self->state().items.size()});
//           });
//           return rp;
//         }};
//     });
//
// The state type is registered as a message type under "<type>.state" (if
// it is not registered already) and written by the type's family
// (cereal.binary by default; msgpack or cereal.json keep rows readable).
//
// Thread-safety: an actor; its members are for its own handlers.
#pragma once

#include "ferry/errc.hpp"
#include "ferry/node_config.hpp"

#include "ferry/serializers/registry.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ferry {

/// The state of an entity that keeps none.
struct no_state {};

namespace detail {

struct lease_fence;

/// What an activation knows of where it runs (made by the node's entity
/// host).
struct entity_setup {
  std::string type;
  std::string key;
  /// The family that writes the state.
  std::string family;
  const serializers::registry* registry = nullptr;
  /// Answers loads and saves (entities/store_worker.hpp).
  caf::actor store;
  /// The node's entity host, told when the entity asks to be passivated.
  caf::actor host;
  /// Until when the activation may act (entities/lease_fence.hpp); none:
  /// always.
  std::shared_ptr<const lease_fence> fence;
};

/// An entity type as registered: how to spawn an activation.
struct entity_type {
  std::string name;
  std::string family;
  bool stateful = true;
  std::function<caf::actor(caf::actor_system&, entity_setup)> spawn;
};

/// What every entity does whatever its state: loading before the first
/// message, saving one at a time, stopping when its host says (defined in
/// framework/src/entities/entity_base.cpp).
class entity_base : public caf::event_based_actor {
public:
  entity_base(caf::actor_config& cfg, entity_setup setup);

  ~entity_base() override;

  /// Returns the entity's type.
  const std::string& type() const { return setup_.type; }

  /// Returns the entity's key.
  const std::string& key() const { return setup_.key; }

  /// Returns the version of the state this activation loaded or last saved
  /// (0: none stored).
  uint64_t version() const { return version_; }

  /// Stores the state; `done` hears `caf::none` once the database committed
  /// it, or the error. Saves run one at a time, in order: a save asked for
  /// while one runs stores the state as it is when that one ends.
  void save(std::function<void(const caf::error&)> done = {});

  /// Asks the host to passivate this activation now (as when idle): what
  /// reached it first is processed, the state saved, and the next message
  /// activates it again.
  void passivate();

  caf::behavior make_behavior() final;

  /// Refuses every message sent to the activation once its shard's lease
  /// may have run out (entities/lease_fence.hpp), then processes it.
  caf::invoke_message_result consume(caf::mailbox_element& x) final;

protected:
  /// Whether the entity has state to load and save.
  virtual bool stateful() const = 0;

  /// Sets the state from what the store holds (`version` 0: nothing,
  /// the default state).
  virtual caf::error read_state(const std::string& family,
                                std::span<const std::byte> bytes,
                                uint64_t version) = 0;

  /// Returns the state as the type's family writes it.
  virtual caf::expected<std::vector<std::byte>> store_state() = 0;

  /// Returns the behavior the entity type registered.
  virtual caf::behavior entity_behavior() = 0;

  const entity_setup& setup() const { return setup_; }

private:
  struct save_state;

  /// Asks for a save (whether or not the activation is ending).
  void queue_save(std::function<void(const caf::error&)> done);

  /// Starts the next save, if one is asked for and none runs.
  void start_save();

  /// Answers what the mailbox holds with `why`, then ends with it.
  void fail(caf::error why);

  /// The messages every activation takes besides the type's own.
  caf::behavior system_behavior();

  entity_setup setup_;
  uint64_t version_ = 0;
  std::unique_ptr<save_state> saves_;
};

/// Writes `x` with `family` as one byte string.
template <class State>
caf::expected<std::vector<std::byte>>
encode_state(const serializers::registry& reg, const std::string& family,
             const State& x) {
  serializers::encode_options opts;
  opts.serializers = {family};
  auto p = reg.encode(x, opts);
  if (!p)
    return std::move(p.error());
  std::vector<std::byte> result;
  result.reserve(p->size());
  for (auto& f : p->frames)
    result.insert(result.end(), f.bytes().begin(), f.bytes().end());
  return result;
}

/// Reads `bytes`, written by `family`, into `x`.
template <class State>
caf::error decode_state(const serializers::registry& reg,
                        const std::string& family,
                        std::span<const std::byte> bytes, State& x) {
  serializers::payload p;
  p.header.family = family;
  p.header.type_name = reg.type_name(typeid(State)).value_or("");
  p.header.frame_sizes = {bytes.size()};
  p.frames.push_back(serializers::frame::view(bytes));
  serializers::decode_options opts;
  opts.deserializers = {family};
  auto decoded = reg.decode<State>(p, opts);
  if (!decoded)
    return std::move(decoded.error());
  x = std::move(*decoded);
  return caf::none;
}

} // namespace detail

/// An activation of an entity whose state is a `State`.
template <class State>
class entity final : public detail::entity_base {
public:
  using behavior_fn = std::function<caf::behavior(entity*)>;

  entity(caf::actor_config& cfg, detail::entity_setup setup, behavior_fn fn)
    : detail::entity_base(cfg, std::move(setup)),
      fn_(std::move(fn)) {
    // nop
  }

  /// Returns the state (what the last save stored, once the behavior runs).
  State& state() { return state_; }

  const char* name() const override { return "ferry.entity"; }

protected:
  bool stateful() const override { return !std::is_same_v<State, no_state>; }

  caf::error read_state(const std::string& family,
                        std::span<const std::byte> bytes,
                        uint64_t version) override {
    if constexpr (std::is_same_v<State, no_state>) {
      return caf::none;
    } else {
      if (version == 0) {
        state_ = State{};
        return caf::none;
      }
      return detail::decode_state(*setup().registry, family, bytes, state_);
    }
  }

  caf::expected<std::vector<std::byte>> store_state() override {
    if constexpr (std::is_same_v<State, no_state>)
      return std::vector<std::byte>{};
    else
      return detail::encode_state(*setup().registry, setup().family, state_);
  }

  caf::behavior entity_behavior() override { return fn_(this); }

private:
  State state_{};
  behavior_fn fn_;
};

template <class State, class F>
node_config& node_config::add_entity_type(std::string name, F behavior,
                                          std::string family) {
  auto x = std::make_shared<detail::entity_type>();
  x->name = name;
  x->family = family;
  x->stateful = !std::is_same_v<State, no_state>;
  typename entity<State>::behavior_fn fn = std::move(behavior);
  x->spawn = [fn](caf::actor_system& sys, detail::entity_setup setup) {
    return sys.spawn<entity<State>>(std::move(setup), fn);
  };
  if constexpr (!std::is_same_v<State, no_state>)
    if (!registry_->type_name(typeid(State)))
      registry_->add_type<State>(name + ".state");
  add_entity_type_impl(std::move(x));
  return *this;
}

} // namespace ferry
