// Registrations of `registry`: construction, snapshots and their publication,
// message types (names, CAF built-in type numbers), run-time families,
// per-type serializers, exceptions carrying errors and tracing. Encoding is
// in registry_encode.cpp, decoding in registry_decode.cpp; the state they
// share is in registry_state.hpp.
//
// Contract: every registration goes through `update`, which publishes a new
// immutable state and then bumps `generation()`, or changes nothing (and
// leaves the generation alone) when the registration is there already or is
// refused. The first registration of a type or a name stays; a conflicting
// one is refused with an error naming both.
//
// Thread-safety: readers (`type_name`, `has_type`, `element_type`,
// `families`, `can_encode`, ...) load one snapshot and never block; writers
// are serialised by the write mutex and never block readers.

#include "registry_state.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <utility>

namespace ferry::serializers {

std::string registry::state::name_of(std::type_index type) const {
  if (auto i = types.find(type); i != types.end())
    return i->second.name;
  return detail::demangle_name(type.name());
}

namespace detail {

std::string list_names(const std::vector<std::string>& xs) {
  std::string result = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      result += ", ";
    result += xs[i];
  }
  result += ']';
  return result;
}

} // namespace detail

namespace {

using detail::make_error;

bool env_trace() {
  auto value = std::getenv("FERRY_SERIALIZERS_TRACE");
  if (value == nullptr)
    return false;
  std::string_view v{value};
  return v == "1" || v == "true" || v == "on" || v == "yes";
}

bool valid_family_name(std::string_view name) {
  if (name.empty() || name.size() > 255)
    return false;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u > 0x7e)
      return false;
  }
  return true;
}

} // namespace

registry::registry() {
  auto st = std::make_shared<state>();
  st->sink = std::make_shared<const std::function<void(std::string_view)>>(
    [](std::string_view line) { std::clog << line << '\n'; });
  state_.store(std::move(st));
  trace_ = env_trace();
}

registry::~registry() = default;

std::shared_ptr<const registry::state> registry::snapshot() const noexcept {
  return state_.load(std::memory_order_acquire);
}

template <class F>
bool registry::update(F&& f) {
  detail::lock_guard guard{write_mutex_};
  auto next = std::make_shared<state>(*state_.load());
  if (!f(*next))
    return false;
  state_.store(std::move(next), std::memory_order_release);
  // After the store: a plan takes the count before its state, so a plan
  // that sees this state either sees the new count or is made again.
  generation_.fetch_add(1, std::memory_order_release);
  return true;
}

uint64_t registry::generation() const noexcept {
  return generation_.load(std::memory_order_acquire);
}

// -- types --------------------------------------------------------------------

caf::error registry::add_type_impl(const detail::type_ops& ops,
                                   std::string name, uint16_t type_nr,
                                   decode_message_fn fn) {
  caf::error err;
  if (name.empty() || name.size() > 1024)
    return make_error(errc::invalid_type_name,
                      "add_type: the name of " +
                        detail::demangle_name(ops.type.name()) +
                        " must have 1 to 1024 characters");
  update([&](state& st) {
    auto i = st.types.find(ops.type);
    auto j = st.names.find(name);
    if (i != st.types.end() && i->second.name == name)
      return false;
    if (i != st.types.end()) {
      err = make_error(errc::type_name_taken,
                       "add_type: " + detail::demangle_name(ops.type.name()) +
                         " is registered as '" + i->second.name +
                         "' already, not adding it as '" + name +
                         "'; use one name per type on every node");
      return false;
    }
    if (j != st.names.end()) {
      err = make_error(errc::type_name_taken,
                       "add_type: the name '" + name + "' belongs to " +
                         detail::demangle_name(j->second.name()) +
                         " already, not giving it to " +
                         detail::demangle_name(ops.type.name()) +
                         "; choose another name");
      return false;
    }
    st.types.emplace(ops.type, state::type_entry{name, &ops, fn});
    st.names.emplace(name, ops.type);
    // CAF gives integer types of one size one number: the first keeps it.
    if (type_nr != 0 && type_nr < st.builtin_types.size() &&
        !st.builtin_types[type_nr])
      st.builtin_types[type_nr] = ops.type;
    return true;
  });
  return err;
}

void registry::report_conflict(const caf::error& err) {
  std::cerr << "ferry.serializers: " << render(err) << '\n';
}

std::optional<std::string> registry::type_name(std::type_index type) const {
  auto st = snapshot();
  if (auto i = st->types.find(type); i != st->types.end())
    return i->second.name;
  return std::nullopt;
}

bool registry::has_type(std::string_view name) const {
  auto st = snapshot();
  return st->names.find(name) != st->names.end();
}

std::vector<registry::type_shape> registry::type_shapes() const {
  auto st = snapshot();
  std::vector<type_shape> result;
  result.reserve(st->types.size());
  for (auto& [type, entry] : st->types)
    result.push_back(type_shape{entry.name, entry.ops->shape()});
  std::sort(
    result.begin(), result.end(),
    [](const type_shape& x, const type_shape& y) { return x.name < y.name; });
  return result;
}

std::optional<std::type_index> registry::element_type(const caf::message& msg,
                                                      size_t pos) const {
  if (pos >= msg.size())
    return std::nullopt;
  auto [type_nr, info] = msg.type(pos);
  auto st = snapshot();
  if (info == nullptr) {
    if (type_nr < st->builtin_types.size())
      return st->builtin_types[type_nr];
    return std::nullopt;
  }
  std::type_index type{*info};
  if (st->types.find(type) == st->types.end())
    return std::nullopt;
  return type;
}

// -- families -----------------------------------------------------------------

std::vector<std::string> registry::families() const {
  std::vector<std::string> result;
  for (auto name : detail::builtin_names)
    result.emplace_back(name);
  auto st = snapshot();
  for (auto& [name, f] : st->families)
    result.push_back(name);
  return result;
}

bool registry::can_encode(std::string_view fam, std::type_index type) const {
  auto st = snapshot();
  const detail::type_ops* ops = nullptr;
  if (auto s = st->stand_ins.find(type); s != st->stand_ins.end())
    ops = s->second->ops;
  else if (auto i = st->types.find(type); i != st->types.end())
    ops = i->second.ops;
  if (ops == nullptr)
    return false;
  if (auto b = detail::builtin_from_name(fam))
    return ops->can_encode(*b);
  if (auto f = st->families.find(fam); f != st->families.end())
    return f->second->can_encode(ops->type);
  return false;
}

caf::error registry::register_family(std::string name,
                                     std::shared_ptr<const family> f) {
  if (!valid_family_name(name) || f == nullptr)
    return make_error(errc::family_exists,
                      "register_family: '" + name +
                        "' is not a valid family (1 to 255 printable "
                        "characters, no spaces, and a non-null family)");
  if (detail::builtin_from_name(name))
    return make_error(errc::family_exists,
                      "register_family: '" + name +
                        "' is a built-in family; choose another name");
  caf::error err;
  update([&](state& st) {
    auto i = st.families.find(name);
    if (i != st.families.end()) {
      if (i->second != f)
        err = make_error(errc::family_exists,
                         "register_family: '" + name +
                           "' is registered already with another family; "
                           "deregister_family it first");
      return false;
    }
    st.families.emplace(name, std::move(f));
    return true;
  });
  return err;
}

bool registry::deregister_family(std::string_view name) {
  return update([&](state& st) {
    auto i = st.families.find(name);
    if (i == st.families.end())
      return false;
    st.families.erase(i);
    return true;
  });
}

// -- per-type serializers -----------------------------------------------------

bool registry::register_serializer_impl(std::type_index type,
                                        stand_in_spec spec) {
  auto ptr = std::make_shared<const stand_in_spec>(std::move(spec));
  return update([&](state& st) {
    auto i = st.stand_ins.find(type);
    if (i != st.stand_ins.end()) {
      auto& old = *i->second;
      bool same = old.ops == ptr->ops && old.to_type == ptr->to_type &&
                  old.from_type == ptr->from_type &&
                  old.to_ptr == ptr->to_ptr && old.from_ptr == ptr->from_ptr &&
                  old.stateless && ptr->stateless;
      if (same)
        return false;
      i->second = ptr;
      return true;
    }
    st.stand_ins.emplace(type, ptr);
    return true;
  });
}

bool registry::deregister_serializer_impl(std::type_index type) {
  return update([&](state& st) { return st.stand_ins.erase(type) > 0; });
}

// -- exceptions carrying errors -----------------------------------------------

bool registry::register_error_exception_impl(detail::error_exception x) {
  return update([&](state& st) {
    for (auto& y : st.error_exceptions)
      if (y.type == x.type)
        return false;
    st.error_exceptions.push_back(x);
    return true;
  });
}

// -- tracing ------------------------------------------------------------------

void registry::trace(bool on) noexcept {
  trace_ = on;
}

bool registry::trace() const noexcept {
  return trace_;
}

void registry::trace_sink(std::function<void(std::string_view)> sink) {
  auto ptr = std::make_shared<const std::function<void(std::string_view)>>(
    std::move(sink));
  update([&](state& st) {
    st.sink = ptr;
    return true;
  });
}

} // namespace ferry::serializers
