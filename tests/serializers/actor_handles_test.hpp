// Fixture of the actor handle tests (actor_handles_test.cpp): an actor
// system with three live actors, a test hook that maps ids to actors (as a
// link's hook would), the value types holding handles, and per family the
// exact bytes of a top-level caf::actor token.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "test_types.hpp"

namespace ferry::serializers::test {

/// Errors of the test hook.
enum class hook_errc : uint8_t {
  none = 0,
  /// The actor is not in the test map.
  unknown_actor,
  /// The token's kind is not the test hook's.
  unknown_kind,
};

} // namespace ferry::serializers::test

CAF_ERROR_CODE_ENUM(ferry::serializers::test::hook_errc, "test_hook")

namespace ferry::serializers::test {

using echo_actor = caf::typed_actor<caf::replies_to<int32_t>::with<int32_t>>;

inline constexpr uint64_t first_id = 101;
inline constexpr uint64_t second_id = 202;
inline constexpr uint64_t typed_id = 303;
/// An id the hook knows as an actor that is gone.
inline constexpr uint64_t gone_id = 404;

/// Maps ids to actors with kind 1; counts its calls.
class map_hook : public handle_hook {
public:
  std::map<uint64_t, caf::strong_actor_ptr> actors;
  size_t saves = 0;
  size_t loads = 0;
  handle_token last_loaded;

  caf::expected<handle_token> save(const caf::strong_actor_ptr& x) override {
    ++saves;
    for (auto& [id, ptr] : actors)
      if (ptr == x)
        return handle_token{1, id};
    return caf::error{static_cast<uint8_t>(hook_errc::unknown_actor),
                      caf::atom("test_hook"),
                      caf::make_message(std::string{"not in the test map"})};
  }

  caf::expected<caf::strong_actor_ptr> load(const handle_token& x) override {
    ++loads;
    last_loaded = x;
    if (x.kind != 1)
      return caf::error{static_cast<uint8_t>(hook_errc::unknown_kind),
                        caf::atom("test_hook"),
                        caf::make_message(std::string{"not kind 1"})};
    if (x.id == gone_id)
      return caf::strong_actor_ptr{};
    auto i = actors.find(x.id);
    if (i == actors.end())
      return caf::error{static_cast<uint8_t>(hook_errc::unknown_actor),
                        caf::atom("test_hook"),
                        caf::make_message(std::string{"no such id"})};
    return i->second;
  }
};

/// An aggregate holding handles (every family walks it field by field).
struct holder {
  std::string name;
  caf::actor boss;
  caf::actor_addr addr;
  int32_t n = 0;
  std::vector<caf::actor> workers;
  friend bool operator==(const holder&, const holder&) = default;
};

/// A handle inside a type with its own serialization for every family.
class worker_ref {
public:
  worker_ref() = default;
  worker_ref(caf::actor a, int32_t n) : a_(std::move(a)), n_(n) {}
  friend bool operator==(const worker_ref&, const worker_ref&) = default;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(a_, n_);
  }

  MSGPACK_DEFINE(a_, n_)

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, worker_ref& x) {
    return f(caf::meta::type_name("worker_ref"), x.a_, x.n_);
  }

private:
  caf::actor a_;
  int32_t n_ = 0;
};

/// An actor system with three actors the hook knows.
class handle_fixture : public ::testing::Test {
protected:
  handle_fixture() : sys(config()) {
    first = spawn_plain();
    second = spawn_plain();
    typed = sys.spawn([]() -> echo_actor::behavior_type {
      return {[](int32_t x) {
        return x;
      }};
    });
    hook.actors[first_id] = caf::actor_cast<caf::strong_actor_ptr>(first);
    hook.actors[second_id] = caf::actor_cast<caf::strong_actor_ptr>(second);
    hook.actors[typed_id] = caf::actor_cast<caf::strong_actor_ptr>(typed);
  }

  ~handle_fixture() override {
    caf::anon_send_exit(first, caf::exit_reason::kill);
    caf::anon_send_exit(second, caf::exit_reason::kill);
    caf::anon_send_exit(typed, caf::exit_reason::kill);
  }

  caf::actor spawn_plain() {
    return sys.spawn([] {
      return caf::behavior{[](int32_t) {
      }};
    });
  }

  static caf::actor_system_config& config() {
    static caf::actor_system_config cfg;
    return cfg;
  }

  caf::actor_system sys;
  caf::actor first;
  caf::actor second;
  echo_actor typed;
  map_hook hook;
  registry sut;
};

/// Appends `x` in little-endian (LE) or big-endian byte order.
inline void append(std::vector<std::byte>& out, uint64_t x, bool big) {
  for (int i = 0; i < 8; ++i) {
    auto shift = big ? 8 * (7 - i) : 8 * i;
    out.push_back(static_cast<std::byte>((x >> shift) & 0xff));
  }
}

struct cereal_binary_handles : cereal_binary_family {
  static constexpr bool text = false;
  static std::vector<std::byte> token(uint8_t kind, uint64_t id) {
    std::vector<std::byte> out{std::byte{kind}};
    append(out, id, false);
    return out;
  }
};

struct cereal_portable_handles : cereal_portable_family {
  static constexpr bool text = false;
  static std::vector<std::byte> token(uint8_t kind, uint64_t id) {
    // The endianness byte (1: little-endian stream), then the token.
    std::vector<std::byte> out{std::byte{1}, std::byte{kind}};
    append(out, id, false);
    return out;
  }
};

struct cereal_json_handles : cereal_json_family {
  static constexpr bool text = true;
  static std::vector<std::byte> token(uint8_t kind, uint64_t id) {
    auto text = "{\"value0\": {\"kind\": " + std::to_string(kind) +
                ", \"id\": " + std::to_string(id) + "}}";
    auto p = reinterpret_cast<const std::byte*>(text.data());
    return {p, p + text.size()};
  }
};

struct msgpack_handles : msgpack_family {
  static constexpr bool text = false;
  static std::vector<std::byte> token(uint8_t kind, uint64_t id) {
    // [kind, id]: fixarray of 2, then msgpack's shortest integers (the
    // test's kinds are below 128, a positive fixint).
    std::vector<std::byte> out{std::byte{0x92}, std::byte{kind}};
    if (id < 128) {
      out.push_back(static_cast<std::byte>(id));
    } else if (id < 256) {
      out.push_back(std::byte{0xcc});
      out.push_back(static_cast<std::byte>(id));
    } else {
      out.push_back(std::byte{0xcf});
      append(out, id, true);
    }
    return out;
  }
};

struct caf_handles : caf_family {
  static constexpr bool text = false;
  static std::vector<std::byte> token(uint8_t kind, uint64_t id) {
    std::vector<std::byte> out{std::byte{kind}};
    append(out, id, true);
    return out;
  }
};

using handle_families =
  ::testing::Types<cereal_binary_handles, cereal_portable_handles,
                   cereal_json_handles, msgpack_handles, caf_handles>;

} // namespace ferry::serializers::test
