// make_pooled_message: a CAF message whose data block comes from a
// `block_pool`. Not API.
//
// A decoded value reaches its actor as a CAF message; CAF allocates each
// message's data block when it is made (on the thread that decoded it) and
// frees it where the message is done with (the receiving actor's thread). A
// message made here is CAF's own `tuple_vals<Ts...>` with a class
// `operator new`/`operator delete` over `block_pool<sizeof(...)>`: CAF frees
// it with `delete` through its virtual destructor, which calls the class's
// `operator delete`, so the block goes back to the pool. A copy CAF makes
// (copy on write) is a plain `tuple_vals<Ts...>`. Everything else about the
// message (its type, matching, serialization) is CAF's.
//
// Thread-safety: as `caf::message`; the pool may be used from any thread.
#pragma once

#include "ferry/serializers/detail/block_pool.hpp"

#include <caf/detail/tuple_vals.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace ferry::serializers::detail {

template <class... Ts>
class pooled_vals final : public caf::detail::tuple_vals<Ts...> {
public:
  static_assert(alignof(caf::detail::tuple_vals<Ts...>) <=
                __STDCPP_DEFAULT_NEW_ALIGNMENT__);

  using caf::detail::tuple_vals<Ts...>::tuple_vals;

  static void* operator new(std::size_t size) { return pool::take(size); }

  static void operator delete(void* ptr, std::size_t size) noexcept {
    pool::give(ptr, size);
  }

private:
  using pool = block_pool<sizeof(caf::detail::tuple_vals<Ts...>), 256>;
};

/// Returns a message holding `xs` (as `caf::make_message` would, but with
/// the element types as given: pass an atom as `caf::atom_value`), its data
/// block from the pool. Over-aligned content comes from `caf::make_message`.
template <class... Ts>
caf::message make_pooled_message(Ts&&... xs) {
  using vals = caf::detail::tuple_vals<std::decay_t<Ts>...>;
  if constexpr (alignof(vals) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    return caf::make_message(std::forward<Ts>(xs)...);
  } else {
    caf::message::data_ptr content{
      new pooled_vals<std::decay_t<Ts>...>(std::forward<Ts>(xs)...), false};
    return caf::message{std::move(content)};
  }
}

} // namespace ferry::serializers::detail
