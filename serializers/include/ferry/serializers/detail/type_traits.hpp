// Compile-time classification of types for the built-in families. Not API.
#pragma once

#include "ferry/serializers/fwd.hpp"
#include "ferry/serializers/reflect.hpp"

#include <array>
#include <condition_variable>
#include <deque>
#include <forward_list>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace ferry::serializers {

/// Specialise as `std::true_type` for a type that has a user-written msgpack
/// adaptor (`msgpack::adaptor::pack`/`convert` specialisations); types with
/// `MSGPACK_DEFINE` are detected without it.
template <class T>
struct msgpack_adaptor : std::false_type {};

/// Specialise as `std::true_type` for a type whose members cannot be
/// serialized (a mutex, a thread, a raw pointer) but which is only ever sent
/// through a serializer registered at run time (`register_serializer<T>`);
/// this silences the compile-time check of `add_type`, `encode` and `decode`.
template <class T>
struct custom_only : std::false_type {};

} // namespace ferry::serializers

namespace ferry::serializers::detail {

template <class T, template <class...> class Tmpl>
struct is_instance : std::false_type {};

template <template <class...> class Tmpl, class... Ts>
struct is_instance<Tmpl<Ts...>, Tmpl> : std::true_type {};

template <class T, template <class...> class Tmpl>
inline constexpr bool is_instance_v = is_instance<T, Tmpl>::value;

template <class T>
inline constexpr bool is_string_v = is_instance_v<T, std::basic_string>;

/// True for enums with a fixed underlying type (every scoped enum, and
/// unscoped ones declared as `enum E : int`): every value of the underlying
/// type is then a value of the enum, so converting any decoded number is
/// defined. For other enums a number outside the enumerators' range is
/// undefined behaviour. Only enums with a fixed type can be
/// list-initialized from their underlying type, which is what this checks.
template <class T>
concept fixed_enum = std::is_enum_v<T> && requires {
  T{std::underlying_type_t<T>{}};
};

template <class T>
inline constexpr bool is_sequence_v =
  is_instance_v<T, std::vector> || is_instance_v<T, std::deque> ||
  is_instance_v<T, std::list> || is_instance_v<T, std::forward_list> ||
  is_instance_v<T, std::set> || is_instance_v<T, std::multiset> ||
  is_instance_v<T, std::unordered_set> ||
  is_instance_v<T, std::unordered_multiset>;

template <class T>
inline constexpr bool is_map_v =
  is_instance_v<T, std::map> || is_instance_v<T, std::multimap> ||
  is_instance_v<T, std::unordered_map> ||
  is_instance_v<T, std::unordered_multimap>;

/// True for the standard maps and sets that hold each key once: decoding
/// refuses a key given twice in them (`errc::duplicate_key`).
template <class T>
inline constexpr bool is_unique_keyed_v =
  is_instance_v<T, std::map> || is_instance_v<T, std::unordered_map> ||
  is_instance_v<T, std::set> || is_instance_v<T, std::unordered_set>;

template <class T>
inline constexpr bool is_smart_ptr_v =
  is_instance_v<T, std::shared_ptr> || is_instance_v<T, std::unique_ptr> ||
  is_instance_v<T, std::weak_ptr>;

template <class T>
struct is_span : std::false_type {};

template <class T, size_t N>
struct is_span<std::span<T, N>> : std::true_type {};

template <class T>
inline constexpr bool is_lock_v =
  std::is_same_v<T, std::mutex> || std::is_same_v<T, std::recursive_mutex> ||
  std::is_same_v<T, std::timed_mutex> ||
  std::is_same_v<T, std::recursive_timed_mutex> ||
  std::is_same_v<T, std::shared_mutex> ||
  std::is_same_v<T, std::shared_timed_mutex> ||
  std::is_same_v<T, std::condition_variable>;

template <class T>
inline constexpr bool is_thread_v =
  std::is_same_v<T, std::thread> || std::is_same_v<T, std::jthread>;

// -- own serialization, detected without recursion ----------------------------

struct cereal_probe {};

template <class T>
concept has_own_cereal = requires(T& x, cereal_probe& a) {
  x.serialize(a);
}
|| requires(T& x, cereal_probe& a) {
  x.serialize(a, uint32_t{0});
}
|| requires(T& x, cereal_probe& a) {
  x.load(a);
}
|| requires(const T& x, cereal_probe& a) {
  x.save(a);
}
|| requires(const T& x, const cereal_probe& a) {
  x.save_minimal(a);
}
|| requires(T& x, cereal_probe& a) {
  serialize(a, x);
}
|| requires(T& x, cereal_probe& a) {
  load(a, x);
}
|| requires(const T& x, cereal_probe& a) {
  save(a, x);
}
|| requires(const T& x, const cereal_probe& a) {
  save_minimal(a, x);
};

struct caf_probe {
  using result_type = void;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = false;
};

template <class T>
concept has_own_inspect = requires(T& x, caf_probe& f) {
  inspect(f, x);
};

struct msgpack_object_probe;

template <class T>
concept has_msgpack_define = requires(T& x) {
  &T::msgpack_unpack;
};

template <class T>
concept has_own_any =
  has_own_cereal<T> || has_own_inspect<T> || has_msgpack_define<T>;

// -- forbidden members (compile-time diagnostics) -----------------------------

enum class forbidden { none, lock, thread, raw_pointer };

template <class T>
constexpr forbidden find_forbidden();

template <class Tuple, size_t... Is>
constexpr forbidden find_forbidden_in(std::index_sequence<Is...>) {
  forbidden result = forbidden::none;
  ((result = result != forbidden::none
               ? result
               : find_forbidden<std::tuple_element_t<Is, Tuple>>()),
   ...);
  return result;
}

template <class T>
constexpr forbidden find_forbidden() {
  using U = std::remove_cv_t<T>;
  if constexpr (is_lock_v<U>)
    return forbidden::lock;
  else if constexpr (is_thread_v<U>)
    return forbidden::thread;
  else if constexpr (std::is_pointer_v<U> &&
                     !std::is_function_v<std::remove_pointer_t<U>>)
    return forbidden::raw_pointer;
  else if constexpr (is_sequence_v<U> || is_instance_v<U, std::optional>)
    return find_forbidden<typename U::value_type>();
  else if constexpr (is_reflectable_v<U> && !has_own_any<U>)
    return find_forbidden_in<field_types<U>>(
      std::make_index_sequence<std::tuple_size_v<field_types<U>>>{});
  else
    return forbidden::none;
}

} // namespace ferry::serializers::detail
