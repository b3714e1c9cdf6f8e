// Turning a frame of array elements into a decoded container: the last step
// of the raw decoder and of every split (two-frame) array decoder.
#pragma once

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/frame.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace ferry::serializers::detail {

/// Fills `out` (a std::vector or std::basic_string of trivially copyable
/// elements) with the elements that are `source`'s bytes. A
/// std::vector<std::byte> takes the bytes over instead when `adopt` is
/// `source` and owns them. Memory not aligned for the element type is copied
/// bytewise. REQUIRES: the byte count is a multiple of the element size (the
/// caller checked it against the format's own count).
template <class T>
void take_elements(const frame& source, frame* adopt, T& out) {
  if constexpr (std::is_same_v<T, std::vector<std::byte>>) {
    if (adopt == &source && adopt->owned()) {
      out = adopt->release();
      return;
    }
  }
  using E = typename T::value_type;
  auto bytes = source.bytes();
  auto count = bytes.size() / sizeof(E);
  if (count == 0) {
    out.clear();
  } else if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(E) == 0) {
    assign_fresh(out, reinterpret_cast<const E*>(bytes.data()), count);
  } else {
    out.resize(count);
    std::memcpy(out.data(), bytes.data(), bytes.size());
  }
}

} // namespace ferry::serializers::detail
