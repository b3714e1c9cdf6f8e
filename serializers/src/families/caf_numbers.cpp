// The caf family's vectors of numbers in one loop (families/caf.hpp,
// `caf_flat_vector`): what CAF's walk writes and reads for a std::vector of
// fixed-width integers, floats, doubles or std::byte (its size, then each
// element in network byte order), with the checks the walk's per-element
// calls make.
//
// Contract: the bytes are CAF's, byte for byte; a float or double the
// writer would refuse one at a time is refused here too, naming its offset;
// the reader refuses a size the bytes left cannot hold before it allocates,
// and floating-point bits the writer never writes.
//
// Thread-safety: stateless functions; a sink or source belongs to the one
// call that made it.
#include "ferry/serializers/families/caf.hpp"

#include "caf_bits.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace ferry::serializers::detail {

using caf_bits::refuse_inexact;
using caf_bits::refuse_unwritten;
using caf_bits::to_big_endian;

namespace {

/// The unsigned integer of `E`'s width.
template <class E>
using bits_of = std::conditional_t<
  sizeof(E) == 1, uint8_t,
  std::conditional_t<sizeof(E) == 2, uint16_t,
                     std::conditional_t<sizeof(E) == 4, uint32_t, uint64_t>>>;

} // namespace

template <class E>
caf::error caf_save_numbers(checked_caf_sink& sink, const std::vector<E>& xs) {
  using U = bits_of<E>;
  auto n = xs.size();
  if (auto err = sink.begin_sequence(n))
    return err;
  auto& out = sink.out_;
  auto at = out.size();
  out.resize(at + n * sizeof(E));
  auto* pos = out.data() + at;
  for (auto x : xs) {
    if constexpr (std::is_floating_point_v<E>) {
      // What apply_impl refuses; a value it accepts packs to its own bits
      // (see families/caf.hpp).
      if (auto err = refuse_inexact(x)) {
        out.resize(static_cast<size_t>(pos - out.data())); // names its offset
        return err;
      }
    }
    auto bits = to_big_endian(std::bit_cast<U>(x));
    std::memcpy(pos, &bits, sizeof(U));
    pos += sizeof(U);
  }
  return sink.end_sequence();
}

template <class E>
caf::error caf_load_numbers(checked_caf_source& source, std::vector<E>& xs) {
  using U = bits_of<E>;
  size_t n = 0;
  if (auto err = source.begin_sequence(n))
    return err;
  if (n > source.remaining() / sizeof(E))
    return make_error(errc::truncated_frame,
                      "a sequence claims " + std::to_string(n) +
                        " elements of " + std::to_string(sizeof(E)) +
                        " bytes but only " +
                        std::to_string(source.remaining()) + " bytes remain");
  xs.resize(n);
  const auto* pos = source.in_.data() + source.pos_;
  for (auto& x : xs) {
    U bits;
    std::memcpy(&bits, pos, sizeof(U));
    bits = to_big_endian(bits);
    if constexpr (std::is_floating_point_v<E>) {
      constexpr int exponent_bits = sizeof(E) == 4 ? 8 : 11;
      if (auto err = refuse_unwritten(bits, exponent_bits))
        return err;
    }
    x = std::bit_cast<E>(bits);
    pos += sizeof(U);
  }
  source.pos_ += n * sizeof(E);
  return source.end_sequence();
}

#define FERRY_CAF_FLAT(E)                                                      \
  template caf::error caf_save_numbers<E>(checked_caf_sink&,                   \
                                          const std::vector<E>&);              \
  template caf::error caf_load_numbers<E>(checked_caf_source&, std::vector<E>&);
FERRY_CAF_FLAT(int8_t)
FERRY_CAF_FLAT(uint8_t)
FERRY_CAF_FLAT(int16_t)
FERRY_CAF_FLAT(uint16_t)
FERRY_CAF_FLAT(int32_t)
FERRY_CAF_FLAT(uint32_t)
FERRY_CAF_FLAT(int64_t)
FERRY_CAF_FLAT(uint64_t)
FERRY_CAF_FLAT(float)
FERRY_CAF_FLAT(double)
FERRY_CAF_FLAT(std::byte)
#undef FERRY_CAF_FLAT

} // namespace ferry::serializers::detail
