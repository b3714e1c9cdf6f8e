// Message types shared by the integration tests and their peer processes.
// Both sides register them under the same names (register_test_types).
#pragma once

#include "ferry/node_config.hpp"

#include "ferry/store/parked_ref.hpp"
#include "ferry/store/shared_array.hpp"

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/meta/type_name.hpp>

#include <msgpack.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ferry::test {

/// A record like the benchmark's: encodable by every structured family.
struct record {
  int64_t id = 0;
  std::string name;
  std::vector<float> values;
  std::map<std::string, int32_t> tags;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, name, values, tags);
  }

  MSGPACK_DEFINE(id, name, values, tags)

  friend bool operator==(const record&, const record&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, record& x) {
  return f(caf::meta::type_name("record"), x.id, x.name, x.values, x.tags);
}

/// A type only cereal can encode: its own cereal `serialize`, no msgpack
/// adaptor, no inspect, and not an aggregate (so no reflection either).
class cereal_only {
public:
  cereal_only() = default;
  explicit cereal_only(int32_t value) : value_(value) {
    // nop
  }

  int32_t value() const { return value_; }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(value_);
  }

private:
  int32_t value_ = 0;
};

/// A plain aggregate with neither an inspect function nor
/// CAF_ALLOW_UNSAFE_MESSAGE_TYPE: ferry gives it CAF's inspect, so CAF holds
/// it in messages and every structured family encodes it (docs/limits.md,
/// "When a message type needs CAF_ALLOW_UNSAFE_MESSAGE_TYPE").
struct plain_point {
  int32_t x = 0;
  std::string label;
  std::vector<double> values;

  friend bool operator==(const plain_point&, const plain_point&) = default;
};

/// A class that only its CAF inspect function describes (private members,
/// a constructor): CAF holds it in messages, only the caf family encodes it.
class inspected_only {
public:
  inspected_only() = default;
  explicit inspected_only(int32_t value) : value_(value) {
    // nop
  }

  int32_t value() const { return value_; }

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f,
                                                 inspected_only& x) {
    return f(caf::meta::type_name("inspected_only"), x.value_);
  }

private:
  int32_t value_ = 0;
};

/// Two store-backed arrays in one value (the same object twice in tests of
/// shared identity across hosts).
struct array_pair {
  store::shared_array<double> first;
  store::shared_array<double> second;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(first, second);
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, array_pair& x) {
  return f(caf::meta::type_name("array_pair"), x.first, x.second);
}

/// A store array with a label: a plain aggregate holding a store handle, so
/// every structured family walks it (msgpack through ferry's adaptors for
/// the store's handles).
struct labelled_array {
  std::string label;
  store::shared_array<double> values;
};

/// Actors by position and by role: a user type holding actor handles (a
/// plain aggregate, so every structured family walks it).
struct crew {
  std::string name;
  std::vector<caf::actor> members;
  std::map<std::string, caf::actor> by_role;
};

/// A badge: an aggregate holding an actor handle, with an inspect function
/// of its own. Inside such a function CAF's code would get the handle, so
/// the caf family refuses the type (actor_handle_unsupported) and a link
/// sends it with its next family; the others walk its fields.
struct badge {
  std::string name;
  caf::actor holder;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, badge& x) {
  return f(caf::meta::type_name("badge"), x.name, x.holder);
}

} // namespace ferry::test

// Not an aggregate and no inspect function: CAF 0.17 holds it in messages
// only when it is marked (docs/limits.md). The other types here need no mark.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ferry::test::cereal_only)

namespace ferry::test {

/// Registers the test types on `cfg` (call in every test process).
/// Registering a type instantiates every built-in family for it: this is
/// compiled once, in test_types.cpp (library ferry_integration_types).
void register_test_types(node_config& cfg);

/// Returns a record with `n` values, deterministic in `id`.
inline record make_record(int64_t id, size_t n) {
  record result;
  result.id = id;
  result.name = "record-" + std::to_string(id);
  result.values.resize(n);
  for (size_t i = 0; i < n; ++i)
    result.values[i] = static_cast<float>(id) + static_cast<float>(i) * 0.5f;
  for (int i = 0; i < 8; ++i)
    result.tags["tag" + std::to_string(i)] = i * static_cast<int32_t>(id);
  return result;
}

} // namespace ferry::test
