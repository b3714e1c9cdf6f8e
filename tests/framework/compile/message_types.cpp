// Compiled by the ctest cases framework_message_types_* (never linked): the
// rule of docs/limits.md, "When a message type needs
// CAF_ALLOW_UNSAFE_MESSAGE_TYPE", at compile time. A plain aggregate and a
// type with an inspect function go into messages as they are; a class with
// private members and no inspect function, and an aggregate with a member
// CAF cannot serialize (std::optional), stop the build at CAF's static_assert
// unless marked. Each message is sent to an actor of the same process: the
// check is the same whoever receives it.
//
//   FERRY_TEST_MARK            marks the two types that need it: compiles
//   FERRY_TEST_PRIVATE_CLASS   sends the unmarked class: fails
//   FERRY_TEST_OPTIONAL_MEMBER sends the unmarked aggregate: fails
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace app {

/// Needs nothing: ferry gives plain aggregates CAF's inspect.
struct plain {
  int32_t id = 0;
  std::string name;
  std::vector<double> values;
};

/// Needs nothing: CAF's own way.
class inspected {
public:
  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, inspected& x) {
    return f(caf::meta::type_name("inspected"), x.id_);
  }

private:
  int32_t id_ = 0;
};

/// Not an aggregate, no inspect: needs the macro.
class private_class {
public:
  private_class() = default;
  explicit private_class(int32_t id) : id_(id) {
    // nop
  }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(id_);
  }

private:
  int32_t id_ = 0;
};

/// An aggregate with a member CAF cannot serialize: needs the macro.
struct with_optional {
  int32_t id = 0;
  std::optional<std::string> note;
};

} // namespace app

#ifdef FERRY_TEST_MARK
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(app::private_class)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(app::with_optional)
#endif

void send_all(caf::event_based_actor* self, const caf::actor& to) {
  self->send(to, app::plain{});
  self->send(to, app::inspected{});
#if defined(FERRY_TEST_MARK) || defined(FERRY_TEST_PRIVATE_CLASS)
  self->send(to, app::private_class{1});
#endif
#if defined(FERRY_TEST_MARK) || defined(FERRY_TEST_OPTIONAL_MEMBER)
  self->send(to, app::with_optional{});
#endif
}

void register_all(ferry::node_config& cfg) {
  cfg.add_message_type<app::plain>("app.plain");
  cfg.add_message_type<app::inspected>("app.inspected");
  cfg.add_message_type<app::private_class>("app.private_class");
  cfg.add_message_type<app::with_optional>("app.with_optional");
}
