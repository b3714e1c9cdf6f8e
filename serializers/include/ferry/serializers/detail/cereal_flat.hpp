// Flat cereal values: a number, or a top-level array of numbers or
// std::byte, written and read by ferry without a cereal archive, as exactly
// the bytes cereal's binary archives write (`cereal_flat` below says which
// types and why). Reading takes only what the bounds-checked archive would
// accept under the same limits and charges the same budget; anything else
// is left to the archive, which reads it and reports what is wrong. These
// arrays are also the ones a large value splits into two frames
// (families/cereal.hpp). Stateless: the charges go to the calling thread's
// decode scope, so any thread may call these.
#pragma once

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/scope.hpp"
#include "ferry/serializers/detail/type_traits.hpp"
#include "ferry/serializers/options.hpp"

#include <cereal/cereal.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace ferry::serializers::detail {

/// The three cereal families.
enum class cereal_format { binary, portable, json };

template <class T>
struct cereal_splittable : std::false_type {};

template <class E>
inline constexpr bool cereal_split_element = (std::is_arithmetic_v<E> &&
                                              !std::is_same_v<E, bool>) ||
                                             std::is_same_v<E, std::byte>;

template <class E, class A>
struct cereal_splittable<std::vector<E, A>>
  : std::bool_constant<cereal_split_element<E>> {};

template <class E, class Tr, class A>
struct cereal_splittable<std::basic_string<E, Tr, A>>
  : std::bool_constant<cereal_split_element<E>> {};

/// Whether cereal's binary format F writes a T as fixed bytes that ferry
/// writes and reads without an archive ("flat"): a number (not bool or long
/// double) as it is in memory, or a splittable array as its size tag then
/// its elements as they are in memory; the portable format puts its
/// endianness byte first and is flat on little-endian machines only. The
/// bytes are exactly cereal's (tests compare them), and building a cereal
/// archive and stream per value cost more than a small value itself.
template <cereal_format F, class T>
inline constexpr bool cereal_flat =
  F != cereal_format::json &&
  (F == cereal_format::binary || std::endian::native == std::endian::little) &&
  ((std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
    !std::is_same_v<T, long double>) ||
   cereal_splittable<T>::value);

/// Writes what cereal's archive of format F writes for `x` (see cereal_flat).
template <cereal_format F, class T>
requires cereal_flat<F, T>
void cereal_flat_encode(const T& x, std::vector<std::byte>& out) {
  constexpr size_t flag = F == cereal_format::portable ? 1 : 0;
  if constexpr (std::is_arithmetic_v<T>) {
    out.resize(flag + sizeof(T));
    std::memcpy(out.data() + flag, &x, sizeof(T));
  } else {
    using E = typename T::value_type;
    auto n = static_cast<cereal::size_type>(x.size());
    out.resize(flag + sizeof(n) + x.size() * sizeof(E));
    std::memcpy(out.data() + flag, &n, sizeof(n));
    if (!x.empty())
      std::memcpy(out.data() + flag + sizeof(n), x.data(),
                  x.size() * sizeof(E));
  }
  if constexpr (flag != 0)
    out[0] = std::byte{1}; // little-endian stream
}

/// Reads `in` into `out` if it is exactly what cereal_flat_encode writes
/// and the bounds-checked archive would accept it with `lim`; returns false
/// (leaving `out` as it was) for anything else, which the archive then reads
/// and reports. Charges the decode scope's allocation budget like the
/// archive (and fails as it does when the budget is spent).
template <cereal_format F, class T>
requires cereal_flat<F, T>
bool cereal_flat_decode(std::span<const std::byte> in, T& out,
                        const limits& lim) {
  // The archive enters a nesting level for the value, its size tag and the
  // tag's number: below 3 levels it refuses what this would accept.
  if (lim.max_depth < 3)
    return false;
  if constexpr (F == cereal_format::portable) {
    if (in.empty() || in[0] != std::byte{1})
      return false;
    in = in.subspan(1);
  }
  if constexpr (std::is_arithmetic_v<T>) {
    if (in.size() != sizeof(T))
      return false;
    std::memcpy(&out, in.data(), sizeof(T));
  } else {
    using E = typename T::value_type;
    cereal::size_type n = 0;
    if (in.size() < sizeof(n))
      return false;
    std::memcpy(&n, in.data(), sizeof(n));
    auto body = in.subspan(sizeof(n));
    if (body.size() % sizeof(E) != 0 || body.size() / sizeof(E) != n)
      return false;
    if constexpr (is_instance_v<T, std::vector>)
      charge(n, sizeof(E), "a std::vector");
    auto count = static_cast<size_t>(n);
    if (reinterpret_cast<uintptr_t>(body.data()) % alignof(E) == 0) {
      assign_fresh(out, reinterpret_cast<const E*>(body.data()), count);
    } else {
      out.resize(count);
      if (count != 0)
        std::memcpy(out.data(), body.data(), body.size());
    }
  }
  return true;
}

} // namespace ferry::serializers::detail
