// The calling thread's handle hook (actor_handles.hpp) and the token rules
// every family applies (detail/actor_handles.hpp).
//
// Invariants: `hook_ptr` is the innermost live `handle_scope`'s hook of this
// thread, or null; each scope restores the hook it found. `failure_count`
// only grows; it counts the handles of this thread that failed to translate.
//
// Thread-safety: both are thread_local; nothing here is shared between
// threads.

#include "ferry/serializers/actor_handles.hpp"

#include "ferry/serializers/detail/actor_handles.hpp"

#include <string>

namespace ferry::serializers {

namespace {

thread_local handle_hook* hook_ptr = nullptr;

thread_local uint64_t failure_count = 0;

} // namespace

handle_hook::~handle_hook() = default;

handle_scope::handle_scope(handle_hook& hook) noexcept : prev_(hook_ptr) {
  hook_ptr = &hook;
}

handle_scope::~handle_scope() {
  hook_ptr = prev_;
}

handle_hook* handle_scope::current() noexcept {
  return hook_ptr;
}

} // namespace ferry::serializers

namespace ferry::serializers::detail {

namespace {

constexpr const char* over_links =
  "actor handles travel only over ferry links (node::remote_actor), "
  "whose handle hook gives them meaning on the other node";

caf::error failed(caf::error err) {
  ++failure_count;
  return err;
}

} // namespace

caf::expected<handle_token> token_of(const caf::strong_actor_ptr& x,
                                     const std::type_info& what) {
  if (!x)
    return handle_token{};
  auto hook = hook_ptr;
  if (hook == nullptr)
    return failed(make_error(errc::actor_handle_without_link,
                             "a non-null " + demangle(what) +
                               " cannot be encoded here: " + over_links +
                               ", and no handle hook is installed on this "
                               "thread"));
  auto token = hook->save(x);
  if (!token)
    return failed(std::move(token.error()));
  if (token->kind == 0 && token->id != 0)
    return failed(make_error(errc::encode_failed,
                             "the handle hook gave a " + demangle(what) +
                               " the token kind 0 (no actor) with id " +
                               std::to_string(token->id) +
                               "; kind 0 must have id 0"));
  return token;
}

caf::expected<caf::strong_actor_ptr> handle_of(const handle_token& x,
                                               const std::type_info& what) {
  if (x.kind == 0) {
    if (x.id != 0)
      return failed(make_error(errc::malformed_frame,
                               "a " + demangle(what) +
                                 " token of kind 0 (no actor) carries the "
                                 "id " +
                                 std::to_string(x.id) +
                                 "; the bytes are corrupt or hostile"));
    return caf::strong_actor_ptr{};
  }
  auto hook = hook_ptr;
  if (hook == nullptr)
    return failed(make_error(errc::actor_handle_without_link,
                             "the input holds a " + demangle(what) +
                               " (token kind " + std::to_string(x.kind) +
                               ", id " + std::to_string(x.id) +
                               ") but no handle hook is installed on this "
                               "thread to resolve it: " +
                               over_links));
  auto result = hook->load(x);
  if (!result)
    return failed(std::move(result.error()));
  return result;
}

namespace {

[[noreturn]] void throw_error(caf::error err) {
  // ferry's own errors unwind as decode_fault, so that `guarded` puts the
  // family, the type and the position in front of the text; other
  // categories (a hook's) leave unchanged.
  if (err.category() == caf::atom("ferry_ser")) {
    std::string what;
    if (err.context().match_elements<std::string>())
      what = err.context().get_as<std::string>(0);
    throw decode_fault{static_cast<errc>(err.code()), std::move(what)};
  }
  throw error_fault{std::move(err)};
}

} // namespace

handle_token token_or_throw(const caf::strong_actor_ptr& x,
                            const std::type_info& what) {
  auto result = token_of(x, what);
  if (!result)
    throw_error(std::move(result.error()));
  return *result;
}

caf::strong_actor_ptr handle_or_throw(const handle_token& x,
                                      const std::type_info& what) {
  auto result = handle_of(x, what);
  if (!result)
    throw_error(std::move(result.error()));
  return std::move(*result);
}

uint64_t handle_failures() noexcept {
  return failure_count;
}

} // namespace ferry::serializers::detail
