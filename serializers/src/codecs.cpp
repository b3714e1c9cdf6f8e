// Non-template parts of the built-in family codecs.

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/take_elements.hpp"
#include "ferry/serializers/detail/type_ops.hpp"

#include <caf/detail/ieee_754.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>

namespace ferry::serializers::detail {

std::string describe(const call_info& info) {
  std::string result = info.decoding ? "decoding " : "encoding ";
  result += info.type_name;
  result += " with family ";
  result += info.family;
  return result;
}

namespace {

/// The stream `ostream_lease` hands out on this thread.
struct cached_ostream {
  std::ostream os{nullptr};
  bool busy = false;
};

cached_ostream& thread_ostream() {
  thread_local cached_ostream instance;
  return instance;
}

} // namespace

ostream_lease::ostream_lease(std::streambuf* buf) {
  auto& cached = thread_ostream();
  if (cached.busy) {
    own_.emplace(buf);
    os_ = &*own_;
    return;
  }
  cached.busy = true;
  cached.os.rdbuf(buf); // Also clears the state bits.
  os_ = &cached.os;
}

ostream_lease::~ostream_lease() {
  if (own_)
    return;
  auto& cached = thread_ostream();
  cached.os.rdbuf(nullptr);
  cached.busy = false;
}

caf::error require_main_frame(const call_info& info,
                              std::span<const frame> frames) {
  if (frames.empty())
    return make_error(errc::frame_mismatch,
                      describe(info)
                        + ": the payload has no frames; the sender is broken "
                          "or the payload was truncated");
  return {};
}

std::optional<builtin> builtin_from_name(std::string_view name) noexcept {
  for (size_t i = 0; i < builtin_count; ++i)
    if (builtin_names[i] == name)
      return static_cast<builtin>(i);
  return std::nullopt;
}

// -- cereal.json ---------------------------------------------------------------

// Returns the deepest bracket nesting of a JSON text, ignoring strings. Also
// refuses (throwing decode_fault) numbers with more than 40 mantissa digits,
// more than 20 significant ones (leading zeros not counted), more than 3
// exponent digits, or a zero mantissa with an exponent or more than 17
// digits: rapidjson 1.1's exact strtod path has undefined behaviour on such
// input (an out-of-bounds table read for ~400 leading zeros, a negative
// shift, clz of zero: a 21-digit significand starting 18446744073709551615
// rounds up to 2^64, i.e. zero), and cereal never writes them (at most 17
// significant digits for a double, 20 for a std::uint64_t).
namespace {

/// What a character starts, outside strings (json_depth).
enum json_class : uint8_t { plain, quote, open, close, number };

constexpr std::array<uint8_t, 256> json_classes = [] {
  std::array<uint8_t, 256> result{};
  result['"'] = quote;
  result['['] = open;
  result['{'] = open;
  result[']'] = close;
  result['}'] = close;
  result['-'] = number;
  for (int c = '0'; c <= '9'; ++c)
    result[static_cast<size_t>(c)] = number;
  return result;
}();

bool is_digit(unsigned char c) {
  return static_cast<unsigned>(c - '0') < 10u;
}

} // namespace

size_t json_depth(std::span<const std::byte> text) {
  // One pass; runs of plain characters (whitespace, punctuation, letters of
  // true/false/null) and string bodies are skipped in tight loops, since
  // this check runs over every byte a cereal.json payload holds.
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t depth = 0;
  size_t deepest = 0;
  size_t i = 0;
  while (i < n) {
    while (i < n && json_classes[s[i]] == plain)
      ++i;
    if (i == n)
      break;
    switch (json_classes[s[i]]) {
      case quote: {
        // Skip to the closing quote: one preceded by an even number of
        // backslashes (counted back to the opening quote at most).
        auto opening = i++;
        for (;;) {
          auto* q = static_cast<const unsigned char*>(
            std::memchr(s + i, '"', n - i));
          if (q == nullptr) {
            i = n;
            break;
          }
          auto pos = static_cast<size_t>(q - s);
          size_t backslashes = 0;
          while (pos - backslashes > opening + 1
                 && s[pos - backslashes - 1] == '\\')
            ++backslashes;
          i = pos + 1;
          if (backslashes % 2 == 0)
            break;
        }
        break;
      }
      case open:
        deepest = std::max(deepest, ++depth);
        ++i;
        break;
      case close:
        if (depth > 0)
          --depth;
        ++i;
        break;
      default: { // number
        auto start = i;
        size_t mantissa = 0;
        size_t significant = 0;
        size_t exponent = 0;
        bool nonzero = false;
        bool has_exponent = false;
        // JSON's grammar, as rapidjson reads it: one '.' at most, so that
        // "0.000.5" is the zero "0.000" here too, not one number.
        auto digits = [&] {
          for (; i < n && is_digit(s[i]); ++i) {
            ++mantissa;
            nonzero = nonzero || s[i] != '0';
            significant += nonzero ? 1 : 0;
          }
        };
        if (s[i] == '-')
          ++i;
        digits();
        if (i < n && s[i] == '.') {
          ++i;
          digits();
        }
        if (i < n && (s[i] == 'e' || s[i] == 'E')) {
          has_exponent = true;
          ++i;
          if (i < n && (s[i] == '+' || s[i] == '-'))
            ++i;
          for (; i < n && is_digit(s[i]); ++i)
            ++exponent;
        }
        if (mantissa > 40 || significant > 20 || exponent > 3
            || (!nonzero && (has_exponent || mantissa > 17)))
          throw decode_fault{errc::malformed_frame,
                             "the number at offset " + std::to_string(start)
                               + " has more digits than cereal ever writes"};
        break;
      }
    }
  }
  return deepest;
}

// -- msgpack -------------------------------------------------------------------

namespace {

// msgpack-cxx's object builder, with depth and budget checks ahead of every
// container allocation. parse_imp calls these members statically, so hiding
// the base's members is enough.
class checked_object_visitor
  : public msgpack::v2::detail::create_object_visitor {
public:
  using super = msgpack::v2::detail::create_object_visitor;

  checked_object_visitor(uint64_t budget, uint32_t max_depth)
    : super(reference_all, nullptr, msgpack::unpack_limit{}),
      budget_(budget),
      max_depth_(max_depth) {
  }

  bool start_array(uint32_t n) {
    enter(n, sizeof(msgpack::object), "an array");
    return super::start_array(n);
  }

  bool end_array() {
    --depth_;
    return super::end_array();
  }

  bool start_map(uint32_t n) {
    enter(n, sizeof(msgpack::object_kv), "a map");
    return super::start_map(n);
  }

  bool end_map() {
    --depth_;
    return super::end_map();
  }

  void parse_error(size_t, size_t error_offset) {
    throw decode_fault{errc::malformed_frame,
                       "invalid msgpack at offset "
                         + std::to_string(error_offset)};
  }

  void insufficient_bytes(size_t, size_t error_offset) {
    throw decode_fault{errc::truncated_frame,
                       "the frame ends inside a value (offset "
                         + std::to_string(error_offset) + ")"};
  }

private:
  static bool reference_all(msgpack::type::object_type, size_t, void*) {
    return true;
  }

  void enter(uint32_t n, size_t size, const char* what) {
    if (++depth_ > max_depth_)
      throw decode_fault{errc::nesting_too_deep,
                         "nests deeper than limits::max_depth ("
                           + std::to_string(max_depth_) + ")"};
    auto bytes = uint64_t{n} * size;
    if (bytes > budget_)
      throw decode_fault{errc::allocation_limit_exceeded,
                         std::string{what} + " claims " + std::to_string(n)
                           + " elements, more than the allocation budget "
                             "left ("
                           + std::to_string(budget_)
                           + " bytes); the input is hostile or corrupt, or "
                             "raise limits::allocation_factor"};
    budget_ -= bytes;
  }

  uint64_t budget_;
  uint32_t max_depth_;
  uint32_t depth_ = 0;
};

} // namespace

msgpack::object_handle msgpack_unpack_checked(std::span<const std::byte> in,
                                              const limits& lim) {
  auto zone = std::make_unique<msgpack::zone>();
  checked_object_visitor v{lim.budget(in.size()), lim.max_depth};
  v.set_zone(*zone);
  v.set_referenced(false);
  size_t off = 0;
  auto ret = msgpack::v2::detail::parse_imp(
    reinterpret_cast<const char*>(in.data()), in.size(), off, v);
  switch (ret) {
    case msgpack::PARSE_SUCCESS:
      break;
    case msgpack::PARSE_EXTRA_BYTES:
      throw decode_fault{errc::trailing_bytes,
                         std::to_string(in.size() - off)
                           + " bytes follow the value at offset "
                           + std::to_string(off)};
    case msgpack::PARSE_CONTINUE:
      throw decode_fault{errc::truncated_frame,
                         "the frame ends inside a value (offset "
                           + std::to_string(off) + ")"};
    default:
      throw decode_fault{errc::malformed_frame,
                         "invalid msgpack near offset " + std::to_string(off)};
  }
  return msgpack::object_handle{v.data(), std::move(zone)};
}

// -- caf -----------------------------------------------------------------------

// Both classes read and write CAF 0.17's binary format themselves (what
// caf::serializer_impl writes and caf::binary_deserializer reads): sequence
// sizes as 7-bit groups, least significant first, at most 5 bytes; integers in
// network byte order; floating point through CAF's IEEE 754 packing; long
// double as decimal text.

namespace {

template <class T>
T to_big_endian(T x) {
  if constexpr (std::endian::native == std::endian::little) {
    T result = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      result = static_cast<T>((result << 8) | (x & 0xff));
      x = static_cast<T>(x >> 8);
    }
    return result;
  } else {
    return x;
  }
}

template <class Float>
caf::error refuse_subnormal(Float x) {
  if (!std::isfinite(x))
    return make_error(errc::encode_failed,
                      "an infinite or NaN floating-point value cannot be "
                      "sent: CAF 0.17's IEEE 754 packing loops forever on it "
                      "(found by fuzzing); use cereal.binary or msgpack for "
                      "such values");
  if (std::fpclassify(x) == FP_SUBNORMAL)
    return make_error(errc::encode_failed,
                      "a subnormal floating-point value ("
                        + std::to_string(static_cast<double>(x))
                        + ") would arrive corrupted: CAF 0.17's IEEE 754 "
                          "packing mishandles subnormals; use cereal.binary "
                          "or msgpack for such values");
  return {};
}

} // namespace

checked_caf_sink::checked_caf_sink(std::vector<std::byte>& out)
  : caf::serializer(static_cast<caf::execution_unit*>(nullptr)), out_(out) {
  out_.clear();
}

caf::error checked_caf_sink::begin_object(uint16_t& typenr,
                                          std::string& name) {
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
                      "a sequence of " + std::to_string(num)
                        + " elements exceeds CAF 0.17's 32-bit lengths; use "
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
  return apply_raw(sizeof(T), &y);
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
  if (auto err = refuse_subnormal(x))
    return err;
  return put(caf::detail::pack754(x));
}
caf::error checked_caf_sink::apply_impl(double& x) {
  if (auto err = refuse_subnormal(x))
    return err;
  return put(caf::detail::pack754(x));
}
caf::error checked_caf_sink::apply_impl(long double& x) {
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
                      "a byte sequence claims " + std::to_string(n)
                        + " bytes but only "
                        + std::to_string(source.remaining()) + " remain");
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
      return make_error(head.size() < 5 ? errc::truncated_frame
                                        : errc::malformed_frame,
                        describe(info)
                          + " (frame 0): not a complete CAF sequence size");
    if (used != head.size())
      return make_error(errc::trailing_bytes,
                        describe(info) + " (frame 0): "
                          + std::to_string(head.size() - used)
                          + " bytes follow the sequence size of a split "
                            "byte vector");
    frame_index = 1;
    auto bytes = frames[1].bytes();
    if (n != bytes.size())
      return make_error(errc::frame_mismatch,
                        describe(info)
                          + " (frame 1): the sequence size says "
                          + std::to_string(n) + " bytes, the frame holds "
                          + std::to_string(bytes.size()));
    // The bytes are frame 1's: the allocation is bounded by what arrived.
    take_elements(frames[1], adopt, out);
    return {};
  });
}

caf::error checked_caf_source::end_object() {
  return {};
}

caf::error checked_caf_source::begin_sequence(size_t& num) {
  uint32_t x = 0;
  for (int i = 0;; ++i) {
    if (i == 5)
      return make_error(errc::malformed_frame,
                        "a sequence size runs longer than 5 bytes");
    uint8_t low7 = 0;
    if (auto err = apply_raw(1, &low7))
      return err;
    x |= static_cast<uint32_t>(low7 & 0x7f) << (7 * i);
    if ((low7 & 0x80) == 0)
      break;
  }
  num = x;
  if (num / 8 > remaining())
    return make_error(errc::length_out_of_range,
                      "a sequence claims " + std::to_string(num)
                        + " elements but only " + std::to_string(remaining())
                        + " bytes remain");
  if (++depth_ > max_depth_)
    return make_error(errc::nesting_too_deep,
                      "nests deeper than limits::max_depth ("
                        + std::to_string(max_depth_) + ")");
  return {};
}

caf::error checked_caf_source::end_sequence() {
  --depth_;
  return {};
}

caf::error checked_caf_source::apply_raw(size_t num_bytes, void* data) {
  if (num_bytes > remaining())
    return make_error(errc::truncated_frame,
                      "needs " + std::to_string(num_bytes) + " bytes but only "
                        + std::to_string(remaining()) + " remain");
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
  x = caf::detail::unpack754(tmp);
  return {};
}
caf::error checked_caf_source::apply_impl(double& x) {
  uint64_t tmp = 0;
  if (auto err = get(tmp))
    return err;
  x = caf::detail::unpack754(tmp);
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
  } catch (const std::exception&) {
    return make_error(errc::malformed_frame,
                      "a long double is not a number: '" + tmp.substr(0, 64)
                        + "'");
  }
  return {};
}

caf::error checked_caf_source::apply_impl(std::string& x) {
  size_t n = 0;
  if (auto err = begin_sequence(n))
    return err;
  if (n > remaining())
    return make_error(errc::truncated_frame,
                      "a string claims " + std::to_string(n)
                        + " bytes but only " + std::to_string(remaining())
                        + " remain");
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
                      "a u16string claims " + std::to_string(n)
                        + " characters but only "
                        + std::to_string(remaining()) + " bytes remain");
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
                      "a u32string claims " + std::to_string(n)
                        + " characters but only "
                        + std::to_string(remaining()) + " bytes remain");
  x.resize(n);
  for (auto& c : x) {
    uint32_t tmp = 0;
    if (auto err = get(tmp))
      return err;
    c = static_cast<char32_t>(tmp);
  }
  return end_sequence();
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
  if (category != caf::atom("system") && category != caf::atom("parser")
      && category != caf::atom("exit"))
    return err;
  auto code = info.decoding ? errc::decode_failed : errc::encode_failed;
  return make_error(code, describe(info) + where + "CAF reports "
                            + caf::to_string(err)
                            + (info.decoding ? "; the bytes are corrupt or "
                                               "hostile"
                                             : ""));
}

} // namespace ferry::serializers::detail
