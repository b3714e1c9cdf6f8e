#include "ferry/serializers/detail/scope.hpp"

#include "ferry/serializers/detail/error.hpp"

namespace ferry::serializers::detail {

namespace {

thread_local codec_scope* scope_ptr = nullptr;

} // namespace

codec_scope* current_scope() noexcept {
  return scope_ptr;
}

scope_guard::scope_guard(codec_scope& s) noexcept : prev_(scope_ptr) {
  scope_ptr = &s;
}

scope_guard::~scope_guard() {
  scope_ptr = prev_;
}

void charge(uint64_t n, uint64_t size, std::string_view what) {
  auto s = scope_ptr;
  if (s == nullptr || size == 0)
    return;
  if (n > s->budget / size)
    throw decode_fault{
      errc::allocation_limit_exceeded,
      std::string{what} + " claims " + std::to_string(n) + " elements of " +
        std::to_string(size) + " bytes, more than the allocation budget of " +
        std::to_string(s->budget) +
        " bytes left; the input is hostile or corrupt, or raise "
        "limits::allocation_factor"};
  s->budget -= n * size;
}

bool carried_error(caf::error& out) {
  auto s = scope_ptr;
  if (s == nullptr)
    return false;
  for (auto& x : s->error_exceptions)
    if (x.carried(out))
      return true;
  return false;
}

void trace_member(const std::type_info& owner, size_t index,
                  const std::type_info& member) {
  auto s = scope_ptr;
  if (s == nullptr || s->trace == nullptr)
    return;
  std::string line = "ferry.serializers trace: ";
  line += s->op;
  line += ' ';
  line += s->family;
  line += ": ";
  line += demangle(owner);
  line += " member #";
  line += std::to_string(index);
  line += " (";
  line += demangle(member);
  line += ')';
  (*s->trace)(line);
}

} // namespace ferry::serializers::detail
