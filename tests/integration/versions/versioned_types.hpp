// Message types at two versions, from one source: FERRY_TEST_TYPE_VERSION
// (1 or 2) picks the definitions a build sees, as a service's old and new
// builds would during a rolling upgrade. Each type changes in one way
// between the versions (its name says how). The types with a
// `ferry_version` evolve (type_version.hpp): msgpack and cereal.json carry
// them by member name, cereal.binary and cereal.portable by the sender's
// shape. `same` does not change; `frozen` changes without a
// version; the `pod_*` types are trivially copyable, so the raw family
// carries them too. `describe` shows every member, as the receiving build
// sees it.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#ifndef FERRY_TEST_TYPE_VERSION
#  error "build with FERRY_TEST_TYPE_VERSION=1 or 2"
#endif

namespace ferry::test::versions {

inline constexpr uint32_t version = FERRY_TEST_TYPE_VERSION;

struct same {
  int32_t id = 0;
  std::string name;
};

#if FERRY_TEST_TYPE_VERSION == 1

struct added {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  std::string name;
};

struct removed {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  std::string name;
  double price = 7.25;
};

struct renamed {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  std::string name;
};

struct reordered {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  std::string name;
};

struct widened {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  int32_t qty = 0;
};

struct line {
  static constexpr uint32_t ferry_version = version;
  std::string item;
  int32_t qty = 0;
};

struct frozen {
  int32_t id = 0;
  int32_t qty = 0;
};

struct pod_widened {
  int32_t id = 0;
  int32_t qty = 0;
};

#else

struct added {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  std::string name;
  double price = 9.5;
};

struct removed {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  std::string name;
};

struct renamed {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  std::string label;
};

struct reordered {
  static constexpr uint32_t ferry_version = version;
  std::string name;
  int32_t id = 0;
};

struct widened {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  int64_t qty = 0;
};

struct line {
  static constexpr uint32_t ferry_version = version;
  std::string item;
  int64_t qty = 0;
};

struct frozen {
  int32_t id = 0;
  int64_t qty = 0;
};

struct pod_widened {
  int32_t id = 0;
  int64_t qty = 0;
};

#endif

/// A type whose member type changed (`line`, above).
struct nested {
  static constexpr uint32_t ferry_version = version;
  int32_t id = 0;
  std::vector<line> lines;
};

struct pod_same {
  int32_t id = 0;
  double value = 0;
};

/// Every member of `x`, "name=value" separated by spaces, in one fixed
/// order whatever order the type declares them in.
template <class T>
std::string describe(const T& x) {
  std::ostringstream out;
  bool first = true;
  auto show = [&](const char* name, const auto& value) {
    out << (first ? "" : " ") << name << "=" << value;
    first = false;
  };
  if constexpr (requires { x.id; })
    show("id", x.id);
  if constexpr (requires { x.item; })
    show("item", x.item);
  if constexpr (requires { x.name; })
    show("name", x.name);
  if constexpr (requires { x.label; })
    show("label", x.label);
  if constexpr (requires { x.qty; })
    show("qty", x.qty);
  if constexpr (requires { x.price; })
    show("price", x.price);
  if constexpr (requires { x.value; })
    show("value", x.value);
  if constexpr (requires { x.lines; }) {
    std::string lines;
    for (auto& l : x.lines)
      lines.append("[").append(describe(l)).append("]");
    show("lines", lines);
  }
  return out.str();
}

} // namespace ferry::test::versions
