// Non-template parts of the caf family (families/caf.hpp): ferry's own
// reader and writer of CAF 0.17's binary format, the one-block path for a
// std::vector<std::byte> value, its two-frame (split) form, and the
// translation of CAF's errors into ferry's (CAF's no_context, which only an
// actor handle inside a type with its own inspect meets here, becomes
// `errc::actor_handle_unsupported`).
//
// Contract: what `checked_caf_sink` writes is byte for byte what
// caf::binary_serializer writes, so caf::binary_deserializer reads it; it
// refuses what CAF 0.17 would write wrongly (infinite, NaN, subnormal and
// negative-zero floating-point values, non-finite long doubles, sequences
// longer than 2^32 - 1). `checked_caf_source` reads that format and never
// reads past its input, never allocates for more elements than the bytes
// left can hold, refuses nesting deeper than the given depth, sequence sizes
// above 2^32 - 1 and floating-point bits the sink never writes; every
// refusal is an error value with ferry's errc.
//
// Thread-safety: a sink or source belongs to the one encode or decode call
// that made it; the free functions are stateless and safe to call from any
// number of threads.

#include "ferry/serializers/families/caf.hpp"
#include "ferry/serializers/detail/exact.hpp"
#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/take_elements.hpp"

#include "caf_bits.hpp"

#include <caf/atom.hpp>
#include <caf/sec.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ferry::serializers::detail {

using caf_bits::refuse_inexact;
using caf_bits::refuse_unwritten;
using caf_bits::to_big_endian;
using caf_bits::to_hex;

// Both classes read and write CAF 0.17's binary format themselves (what
// caf::serializer_impl writes and caf::binary_deserializer reads): sequence
// sizes as 7-bit groups, least significant first, at most 5 bytes; integers in
// network byte order; floating point as CAF's IEEE 754 packing writes it
// (for every value the writer accepts, its own bits: the packing is not
// run); long double as decimal text.

checked_caf_sink::checked_caf_sink(std::vector<std::byte>& out)
  : caf::serializer(static_cast<caf::execution_unit*>(nullptr)),
    out_(out) {
  out_.clear();
}

caf::error checked_caf_sink::begin_object(uint16_t& typenr, std::string& name) {
  if (auto err = apply_impl(typenr))
    return err;
  if (typenr == 0)
    return apply_impl(name);
  return {};
}

caf::error checked_caf_sink::end_object() {
  return {};
}

caf::error checked_caf_sink::begin_sequence(size_t& num) {
  if (num > UINT32_MAX)
    return make_error(errc::length_out_of_range,
                      "a sequence of " + std::to_string(num) +
                        " elements exceeds CAF 0.17's 32-bit lengths; use "
                        "another family or split the value");
  uint8_t buf[5];
  size_t n = 0;
  auto x = static_cast<uint32_t>(num);
  while (x > 0x7f) {
    buf[n++] = static_cast<uint8_t>((x & 0x7f) | 0x80);
    x >>= 7;
  }
  buf[n++] = static_cast<uint8_t>(x & 0x7f);
  return apply_raw(n, buf);
}

caf::error checked_caf_sink::end_sequence() {
  return {};
}

caf::error checked_caf_sink::apply_raw(size_t num_bytes, void* data) {
  auto p = static_cast<const std::byte*>(data);
  out_.insert(out_.end(), p, p + num_bytes);
  return {};
}

template <class T>
caf::error checked_caf_sink::put(T x) {
  auto y = to_big_endian(x);
  auto at = out_.size();
  out_.resize(at + sizeof(T));
  std::memcpy(out_.data() + at, &y, sizeof(T));
  return {};
}

caf::error checked_caf_sink::apply_impl(int8_t& x) {
  return apply_raw(1, &x);
}
caf::error checked_caf_sink::apply_impl(uint8_t& x) {
  return apply_raw(1, &x);
}
caf::error checked_caf_sink::apply_impl(int16_t& x) {
  return put(static_cast<uint16_t>(x));
}
caf::error checked_caf_sink::apply_impl(uint16_t& x) {
  return put(x);
}
caf::error checked_caf_sink::apply_impl(int32_t& x) {
  return put(static_cast<uint32_t>(x));
}
caf::error checked_caf_sink::apply_impl(uint32_t& x) {
  return put(x);
}
caf::error checked_caf_sink::apply_impl(int64_t& x) {
  return put(static_cast<uint64_t>(x));
}
caf::error checked_caf_sink::apply_impl(uint64_t& x) {
  return put(x);
}
caf::error checked_caf_sink::apply_impl(float& x) {
  if (auto err = refuse_inexact(x))
    return err;
  // CAF's IEEE 754 packing of a value refuse_inexact accepts is its bits
  // (families/caf.hpp), without the packing's loop over the exponent.
  return put(std::bit_cast<uint32_t>(x));
}
caf::error checked_caf_sink::apply_impl(double& x) {
  if (auto err = refuse_inexact(x))
    return err;
  return put(std::bit_cast<uint64_t>(x));
}
caf::error checked_caf_sink::apply_impl(long double& x) {
  // CAF writes the decimal text, which its own reader cannot read back for
  // an infinity or a NaN.
  if (!std::isfinite(x))
    return make_error(errc::inexact_value,
                      "an infinite or NaN long double cannot be sent: CAF "
                      "0.17 writes it as text its reader refuses; use "
                      "cereal.binary for such values");
  std::ostringstream oss;
  oss << std::setprecision(std::numeric_limits<long double>::digits) << x;
  auto tmp = oss.str();
  return apply_impl(tmp);
}
caf::error checked_caf_sink::apply_impl(std::string& x) {
  auto n = x.size();
  if (auto err = begin_sequence(n))
    return err;
  if (n > 0)
    if (auto err = apply_raw(n, x.data()))
      return err;
  return end_sequence();
}
caf::error checked_caf_sink::apply_impl(std::u16string& x) {
  auto n = x.size();
  if (auto err = begin_sequence(n))
    return err;
  for (auto c : x)
    if (auto err = put(static_cast<uint16_t>(c)))
      return err;
  return end_sequence();
}
caf::error checked_caf_sink::apply_impl(std::u32string& x) {
  auto n = x.size();
  if (auto err = begin_sequence(n))
    return err;
  for (auto c : x)
    if (auto err = put(static_cast<uint32_t>(c)))
      return err;
  return end_sequence();
}

checked_caf_source::checked_caf_source(std::span<const std::byte> in,
                                       uint32_t max_depth)
  : caf::deserializer(static_cast<caf::execution_unit*>(nullptr)),
    in_(in),
    max_depth_(max_depth) {
}

caf::error checked_caf_source::begin_object(uint16_t& typenr,
                                            std::string& name) {
  if (auto err = apply_impl(typenr))
    return err;
  if (typenr == 0)
    return apply_impl(name);
  return {};
}

caf::error caf_save_bytes(checked_caf_sink& sink,
                          const std::vector<std::byte>& xs) {
  auto n = xs.size();
  if (auto err = sink.begin_sequence(n))
    return err;
  if (n > 0)
    if (auto err = sink.apply_raw(n, const_cast<std::byte*>(xs.data())))
      return err;
  return sink.end_sequence();
}

caf::error caf_load_bytes(checked_caf_source& source,
                          std::vector<std::byte>& xs) {
  size_t n = 0;
  if (auto err = source.begin_sequence(n))
    return err;
  if (n > source.remaining())
    return make_error(errc::truncated_frame,
                      "a byte sequence claims " + std::to_string(n) +
                        " bytes but only " +
                        std::to_string(source.remaining()) + " remain");
  assign_fresh(xs, source.in_.data() + source.pos_, n);
  source.pos_ += n;
  return source.end_sequence();
}

caf::error caf_encode_split(const std::vector<std::byte>& x,
                            std::vector<std::byte>& head,
                            std::vector<frame>& frames,
                            const std::shared_ptr<const void>& keep_alive,
                            const call_info& info) {
  return guarded(
    info,
    [&]() -> caf::error {
      head.clear();
      checked_caf_sink sink{head};
      auto n = x.size();
      if (auto err = sink.begin_sequence(n))
        return from_caf_error(err, info, 0);
      frames.push_back(frame::view(std::span{x.data(), x.size()}, keep_alive));
      return {};
    },
    [] { return std::string{}; });
}

caf::error caf_decode_split(std::span<const frame> frames, frame* adopt,
                            std::vector<std::byte>& out,
                            const call_info& info) {
  // Like every decoder, inside guarded: the copy below may fail to allocate.
  return guarded_frames(info, [&](size_t& frame_index) -> caf::error {
    // CAF's sequence size: 7 bits per byte, low bits first, at most 5
    // bytes.
    auto head = frames[0].bytes();
    uint64_t n = 0;
    size_t used = 0;
    bool done = false;
    while (used < head.size() && used < 5 && !done) {
      auto b = std::to_integer<uint8_t>(head[used]);
      n |= static_cast<uint64_t>(b & 0x7f) << (7 * used);
      done = (b & 0x80) == 0;
      ++used;
    }
    if (!done)
      return make_error(
        head.size() < 5 ? errc::truncated_frame : errc::malformed_frame,
        describe(info) + " (frame 0): not a complete CAF sequence size");
    if (used != head.size())
      return make_error(errc::trailing_bytes,
                        describe(info) +
                          " (frame 0): " + std::to_string(head.size() - used) +
                          " bytes follow the sequence size of a split "
                          "byte vector");
    frame_index = 1;
    auto bytes = frames[1].bytes();
    if (n != bytes.size())
      return make_error(errc::frame_mismatch,
                        describe(info) + " (frame 1): the sequence size says " +
                          std::to_string(n) + " bytes, the frame holds " +
                          std::to_string(bytes.size()));
    // The bytes are frame 1's: the allocation is bounded by what arrived.
    take_elements(frames[1], adopt, out);
    return {};
  });
}

caf::error checked_caf_source::end_object() {
  return {};
}

caf::error checked_caf_source::begin_sequence(size_t& num) {
  // Five groups of 7 bits hold 35: accumulate all of them, then refuse what
  // does not fit CAF's 32-bit sizes (a 32-bit accumulator would wrap 2^32
  // to 0).
  uint64_t x = 0;
  for (int i = 0;; ++i) {
    if (i == 5)
      return make_error(errc::malformed_frame,
                        "a sequence size runs longer than 5 bytes");
    uint8_t low7 = 0;
    if (auto err = apply_raw(1, &low7))
      return err;
    x |= static_cast<uint64_t>(low7 & 0x7f) << (7 * i);
    if ((low7 & 0x80) == 0)
      break;
  }
  if (x > UINT32_MAX)
    return make_error(errc::length_out_of_range,
                      "a sequence size of " + std::to_string(x) +
                        " exceeds CAF 0.17's 32-bit sizes, which its "
                        "encoder never writes; the input is corrupt or "
                        "hostile");
  num = static_cast<size_t>(x);
  if (num / 8 > remaining())
    return make_error(errc::length_out_of_range,
                      "a sequence claims " + std::to_string(num) +
                        " elements but only " + std::to_string(remaining()) +
                        " bytes remain");
  if (++depth_ > max_depth_)
    return make_error(errc::nesting_too_deep,
                      "nests deeper than limits::max_depth (" +
                        std::to_string(max_depth_) + ")");
  return {};
}

caf::error checked_caf_source::end_sequence() {
  --depth_;
  return {};
}

caf::error checked_caf_source::apply_raw(size_t num_bytes, void* data) {
  if (num_bytes > remaining())
    return make_error(errc::truncated_frame,
                      "needs " + std::to_string(num_bytes) +
                        " bytes but only " + std::to_string(remaining()) +
                        " remain");
  if (num_bytes > 0)
    std::memcpy(data, in_.data() + pos_, num_bytes);
  pos_ += num_bytes;
  return {};
}

template <class T>
caf::error checked_caf_source::get(T& x) {
  T tmp = 0;
  if (auto err = apply_raw(sizeof(T), &tmp))
    return err;
  x = to_big_endian(tmp);
  return {};
}

caf::error checked_caf_source::apply_impl(int8_t& x) {
  return apply_raw(1, &x);
}
caf::error checked_caf_source::apply_impl(uint8_t& x) {
  return apply_raw(1, &x);
}
caf::error checked_caf_source::apply_impl(int16_t& x) {
  uint16_t tmp = 0;
  auto err = get(tmp);
  x = static_cast<int16_t>(tmp);
  return err;
}
caf::error checked_caf_source::apply_impl(uint16_t& x) {
  return get(x);
}
caf::error checked_caf_source::apply_impl(int32_t& x) {
  uint32_t tmp = 0;
  auto err = get(tmp);
  x = static_cast<int32_t>(tmp);
  return err;
}
caf::error checked_caf_source::apply_impl(uint32_t& x) {
  return get(x);
}
caf::error checked_caf_source::apply_impl(int64_t& x) {
  uint64_t tmp = 0;
  auto err = get(tmp);
  x = static_cast<int64_t>(tmp);
  return err;
}
caf::error checked_caf_source::apply_impl(uint64_t& x) {
  return get(x);
}
caf::error checked_caf_source::apply_impl(float& x) {
  uint32_t tmp = 0;
  if (auto err = get(tmp))
    return err;
  if (auto err = refuse_unwritten(tmp, 8))
    return err;
  // Bits refuse_unwritten accepts are what CAF's unpacking reads them as.
  x = std::bit_cast<float>(tmp);
  return {};
}
caf::error checked_caf_source::apply_impl(double& x) {
  uint64_t tmp = 0;
  if (auto err = get(tmp))
    return err;
  if (auto err = refuse_unwritten(tmp, 11))
    return err;
  x = std::bit_cast<double>(tmp);
  return {};
}

caf::error checked_caf_source::apply_impl(long double& x) {
  // CAF writes long double as its decimal text.
  std::string tmp;
  if (auto err = apply_impl(tmp))
    return err;
  try {
    size_t used = 0;
    x = std::stold(tmp, &used);
    if (used != tmp.size())
      throw std::invalid_argument{"trailing characters"};
    if (!std::isfinite(x))
      return make_error(errc::inexact_value,
                        "a long double that is not finite ('" +
                          tmp.substr(0, 64) +
                          "'), which CAF 0.17's own reader refuses and "
                          "ferry's encoder never writes");
  } catch (const std::exception&) {
    return make_error(errc::malformed_frame,
                      "a long double is not a number: '" + tmp.substr(0, 64) +
                        "'");
  }
  return {};
}

caf::error checked_caf_source::apply_impl(std::string& x) {
  size_t n = 0;
  if (auto err = begin_sequence(n))
    return err;
  if (n > remaining())
    return make_error(errc::truncated_frame,
                      "a string claims " + std::to_string(n) +
                        " bytes but only " + std::to_string(remaining()) +
                        " remain");
  x.resize(n);
  if (auto err = apply_raw(n, x.data()))
    return err;
  return end_sequence();
}

caf::error checked_caf_source::apply_impl(std::u16string& x) {
  size_t n = 0;
  if (auto err = begin_sequence(n))
    return err;
  if (n > remaining() / 2)
    return make_error(errc::truncated_frame,
                      "a u16string claims " + std::to_string(n) +
                        " characters but only " + std::to_string(remaining()) +
                        " bytes remain");
  x.resize(n);
  for (auto& c : x) {
    uint16_t tmp = 0;
    if (auto err = get(tmp))
      return err;
    c = static_cast<char16_t>(tmp);
  }
  return end_sequence();
}

caf::error checked_caf_source::apply_impl(std::u32string& x) {
  size_t n = 0;
  if (auto err = begin_sequence(n))
    return err;
  if (n > remaining() / 4)
    return make_error(errc::truncated_frame,
                      "a u32string claims " + std::to_string(n) +
                        " characters but only " + std::to_string(remaining()) +
                        " bytes remain");
  x.resize(n);
  for (auto& c : x) {
    uint32_t tmp = 0;
    if (auto err = get(tmp))
      return err;
    c = static_cast<char32_t>(tmp);
  }
  return end_sequence();
}

caf::error caf_duplicate_key(size_t index) {
  return make_error(errc::duplicate_key,
                    "a map or set holds a key twice (element " +
                      std::to_string(index) +
                      " repeats an earlier key); its encoder writes each "
                      "key once, so the input is corrupt or hostile");
}

caf::error caf_in_member(caf::error err, const std::type_info& owner,
                         size_t index, const std::type_info& member) {
  if (err.category() != caf::atom("ferry_ser") ||
      !err.context().match_elements<std::string>())
    return err;
  auto what = err.context().get_as<std::string>(0);
  note_member(what, owner, index, member);
  return make_error(static_cast<errc>(err.code()), std::move(what));
}

caf::error from_caf_error(const caf::error& err, const call_info& info,
                          size_t offset) {
  auto where = " (frame 0, offset " + std::to_string(offset) + "): ";
  if (err.category() == caf::atom("ferry_ser")) {
    auto code = static_cast<errc>(err.code());
    std::string what;
    if (err.context().match_elements<std::string>())
      what = err.context().get_as<std::string>(0);
    return make_error(code, describe(info) + where + what);
  }
  // CAF's own categories get the family, type and offset; any other is a
  // type's own error (the store's, say) and keeps its code.
  auto category = err.category();
  if (category == caf::atom("system") &&
      err.code() == static_cast<uint8_t>(caf::sec::no_context))
    return make_error(
      errc::actor_handle_unsupported,
      describe(info) + where +
        "the value holds an actor handle inside a type with its own "
        "inspect function, where CAF 0.17 resolves handles through its "
        "actor registry (CAF reports no_context); ferry does not use that "
        "registry, so the caf family carries actor handles only as the "
        "value itself, as members of plain aggregates and in the standard "
        "containers around them. Send this type with cereal.binary, "
        "cereal.portable, cereal.json or msgpack, which carry handles "
        "anywhere");
  if (category != caf::atom("system") && category != caf::atom("parser") &&
      category != caf::atom("exit"))
    return err;
  auto code = info.decoding ? errc::decode_failed : errc::encode_failed;
  return make_error(code, describe(info) + where + "CAF reports " +
                            caf::to_string(err) +
                            (info.decoding ? "; the bytes are corrupt or "
                                             "hostile"
                                           : ""));
}

} // namespace ferry::serializers::detail
