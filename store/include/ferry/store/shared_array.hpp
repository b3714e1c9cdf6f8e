// Typed read-only arrays backed by store objects (zero copy).
//
// `shared_array<T>` views a store object as `size()` elements of a trivially
// copyable `T`. Elements are const: the object is immutable, like Ray's
// read-only numpy arrays. Code that needs to mutate takes a copy with
// `to_vector()`. The array holds an `object_ref`, so copying it adds a
// reference and it serializes as its handle (in band inside ferry messages).
//
// Usage:
//
//     std::vector<double> xs = ...;
//     auto arr = ferry::store::make_shared_array<double>(store, xs);
//     double sum = std::accumulate(arr->begin(), arr->end(), 0.0);
//
// Thread-safety: as `object_ref`; the elements never change.
#pragma once

#include "ferry/store/errc.hpp"
#include "ferry/store/object_ref.hpp"
#include "ferry/store/object_store.hpp"

#include <caf/expected.hpp>
#include <caf/make_message.hpp>
#include <caf/meta/type_name.hpp>

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace ferry::store {

/// A read-only array of `T` in a store object. See the header comment.
template <class T>
class shared_array {
public:
  static_assert(std::is_trivially_copyable_v<T>,
                "shared_array<T> requires a trivially copyable T");
  static_assert(alignof(T) <= 64, "store objects are 64-byte aligned");

  using value_type = T;
  using const_iterator = const T*;
  using iterator = const T*;

  /// Constructs an empty array.
  shared_array() noexcept = default;

  /// Views the object of `ref` as elements of `T`. Fails with
  /// `errc::invalid_size` if the object's size is not a multiple of
  /// `sizeof(T)`.
  [[nodiscard]] static caf::expected<shared_array> from_ref(object_ref ref) {
    if (ref.size() % sizeof(T) != 0)
      return caf::make_error(
        errc::invalid_size,
        "object " + to_string(ref.id()) + " has " + std::to_string(ref.size()) +
          " bytes, not a multiple of sizeof(T) = " + std::to_string(sizeof(T)) +
          "; view it with a matching element type");
    return shared_array{std::move(ref)};
  }

  /// Returns the number of elements.
  size_t size() const noexcept {
    return static_cast<size_t>(ref_.size() / sizeof(T));
  }

  /// Returns true if there are no elements.
  bool empty() const noexcept { return size() == 0; }

  /// Returns a pointer to the first element (null for an empty handle).
  const T* data() const noexcept {
    return reinterpret_cast<const T*>(ref_.bytes().data());
  }

  /// Returns element `i`.
  /// REQUIRES: `i < size()`.
  const T& operator[](size_t i) const noexcept { return data()[i]; }

  /// Returns an iterator to the first element.
  const T* begin() const noexcept { return data(); }

  /// Returns an iterator past the last element.
  const T* end() const noexcept { return data() + size(); }

  /// Returns the elements as a span.
  std::span<const T> span() const noexcept { return {data(), size()}; }

  /// Returns a mutable copy of the elements.
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  /// Returns the underlying handle.
  const object_ref& ref() const noexcept { return ref_; }

  /// Serializes the array as its handle (cereal).
  template <class Archive>
  void save(Archive& ar) const {
    ref_.save(ar);
  }

  /// Deserializes the array from a handle (cereal).
  /// @throws ref_serialization_error
  template <class Archive>
  void load(Archive& ar) {
    object_ref ref;
    ref.load(ar);
    auto arr = from_ref(std::move(ref));
    if (!arr)
      throw ref_serialization_error{std::move(arr.error())};
    *this = std::move(*arr);
  }

  /// Describes `x` for CAF 0.17 inspectors (as its handle).
  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f,
                                                 shared_array& x) {
    if constexpr (std::is_same_v<typename Inspector::result_type, caf::error>) {
      if constexpr (Inspector::reads_state) {
        return inspect(f, x.ref_);
      } else {
        object_ref ref;
        if (auto err = inspect(f, ref))
          return err;
        auto arr = from_ref(std::move(ref));
        if (!arr)
          return std::move(arr.error());
        x = std::move(*arr);
        return caf::none;
      }
    } else {
      return inspect(f, x.ref_);
    }
  }

private:
  explicit shared_array(object_ref ref) noexcept : ref_(std::move(ref)) {
    // nop
  }

  object_ref ref_;
};

/// Puts a copy of `xs` into `store` and returns it as a shared array.
template <class T>
[[nodiscard]] caf::expected<shared_array<T>>
make_shared_array(object_store& store, std::span<const T> xs) {
  auto builder = store.create(xs.size_bytes());
  if (!builder)
    return std::move(builder.error());
  if (!xs.empty())
    std::memcpy(builder->bytes().data(), xs.data(), xs.size_bytes());
  auto ref = builder->seal();
  if (!ref)
    return std::move(ref.error());
  return shared_array<T>::from_ref(std::move(*ref));
}

/// Puts a copy of `xs` into `store` and returns it as a shared array.
template <class T>
[[nodiscard]] caf::expected<shared_array<T>>
make_shared_array(object_store& store, const std::vector<T>& xs) {
  return make_shared_array(store, std::span<const T>{xs});
}

} // namespace ferry::store
