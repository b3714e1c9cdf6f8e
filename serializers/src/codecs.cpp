// Non-template parts of the built-in family codecs.

#include "ferry/serializers/detail/type_ops.hpp"

#include <cmath>

namespace ferry::serializers::detail {

std::string describe(const call_info& info) {
  std::string result = info.decoding ? "decoding " : "encoding ";
  result += info.type_name;
  result += " with family ";
  result += info.family;
  return result;
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

size_t json_depth(std::span<const std::byte> text) {
  size_t depth = 0;
  size_t deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (auto b : text) {
    auto c = static_cast<char>(b);
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        deepest = std::max(deepest, ++depth);
        break;
      case ']':
      case '}':
        if (depth > 0)
          --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

// -- msgpack -------------------------------------------------------------------

caf::error msgpack_prescan(std::span<const std::byte> in, const limits& lim,
                           const call_info& info) {
  msgpack_scan scan;
  scan.max_depth = lim.max_depth;
  scan.budget = lim.budget(in.size());
  size_t off = 0;
  bool ok = false;
  try {
    ok = msgpack::parse(reinterpret_cast<const char*>(in.data()), in.size(),
                        off, scan);
  } catch (const std::exception& e) {
    return make_error(errc::malformed_frame,
                      describe(info) + " (frame 0): " + e.what());
  }
  if (!ok) {
    if (scan.fault == errc::none)
      scan.fail(errc::malformed_frame, "invalid msgpack");
    return make_error(scan.fault, describe(info) + " (frame 0, offset "
                                    + std::to_string(off) + "): " + scan.what
                                    + "; the bytes are corrupt or hostile");
  }
  if (off != in.size())
    return make_error(errc::trailing_bytes,
                      describe(info) + " (frame 0, offset "
                        + std::to_string(off)
                        + "): " + std::to_string(in.size() - off)
                        + " bytes follow the value");
  return {};
}

// -- caf -----------------------------------------------------------------------

checked_caf_source::checked_caf_source(std::span<const std::byte> in,
                                       uint32_t max_depth)
  : caf::deserializer(static_cast<caf::execution_unit*>(nullptr)),
    inner_(static_cast<caf::execution_unit*>(nullptr),
           reinterpret_cast<const char*>(in.data()), in.size()),
    size_(in.size()),
    max_depth_(max_depth) {
}

caf::error checked_caf_source::begin_object(uint16_t& typenr,
                                            std::string& name) {
  if (auto err = inner_(typenr))
    return err;
  if (typenr == 0)
    return apply_impl(name);
  return {};
}

caf::error checked_caf_source::end_object() {
  return {};
}

caf::error checked_caf_source::begin_sequence(size_t& num) {
  if (auto err = inner_.begin_sequence(num))
    return err;
  if (num / 8 > inner_.remaining())
    return make_error(errc::length_out_of_range,
                      "a sequence claims " + std::to_string(num)
                        + " elements but only "
                        + std::to_string(inner_.remaining())
                        + " bytes remain");
  if (++depth_ > max_depth_)
    return make_error(errc::nesting_too_deep,
                      "nests deeper than limits::max_depth ("
                        + std::to_string(max_depth_) + ")");
  return {};
}

caf::error checked_caf_source::end_sequence() {
  --depth_;
  return inner_.end_sequence();
}

caf::error checked_caf_source::apply_raw(size_t num_bytes, void* data) {
  if (num_bytes > inner_.remaining())
    return make_error(errc::truncated_frame,
                      "needs " + std::to_string(num_bytes)
                        + " bytes but only "
                        + std::to_string(inner_.remaining()) + " remain");
  return inner_.apply_raw(num_bytes, data);
}

caf::error checked_caf_source::apply_impl(int8_t& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(uint8_t& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(int16_t& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(uint16_t& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(int32_t& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(uint32_t& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(int64_t& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(uint64_t& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(float& x) {
  return inner_(x);
}
caf::error checked_caf_source::apply_impl(double& x) {
  return inner_(x);
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
  if (n > inner_.remaining())
    return make_error(errc::truncated_frame,
                      "a string claims " + std::to_string(n)
                        + " bytes but only "
                        + std::to_string(inner_.remaining()) + " remain");
  x.resize(n);
  if (n > 0)
    if (auto err = inner_.apply_raw(n, x.data()))
      return err;
  return end_sequence();
}

caf::error checked_caf_source::apply_impl(std::u16string& x) {
  size_t n = 0;
  if (auto err = begin_sequence(n))
    return err;
  if (n > inner_.remaining() / 2)
    return make_error(errc::truncated_frame,
                      "a u16string claims " + std::to_string(n)
                        + " characters but only "
                        + std::to_string(inner_.remaining()) + " bytes remain");
  x.resize(n);
  for (auto& c : x) {
    uint16_t tmp = 0;
    if (auto err = inner_(tmp))
      return err;
    c = static_cast<char16_t>(tmp);
  }
  return end_sequence();
}

caf::error checked_caf_source::apply_impl(std::u32string& x) {
  size_t n = 0;
  if (auto err = begin_sequence(n))
    return err;
  if (n > inner_.remaining() / 4)
    return make_error(errc::truncated_frame,
                      "a u32string claims " + std::to_string(n)
                        + " characters but only "
                        + std::to_string(inner_.remaining()) + " bytes remain");
  x.resize(n);
  for (auto& c : x) {
    uint32_t tmp = 0;
    if (auto err = inner_(tmp))
      return err;
    c = static_cast<char32_t>(tmp);
  }
  return end_sequence();
}

checked_caf_sink::checked_caf_sink(std::vector<std::byte>& out)
  : caf::serializer(static_cast<caf::execution_unit*>(nullptr)),
    inner_(static_cast<caf::execution_unit*>(nullptr), out) {
}

caf::error checked_caf_sink::begin_object(uint16_t& typenr,
                                          std::string& name) {
  return inner_.begin_object(typenr, name);
}
caf::error checked_caf_sink::end_object() {
  return inner_.end_object();
}
caf::error checked_caf_sink::begin_sequence(size_t& num) {
  if (num > UINT32_MAX)
    return make_error(errc::length_out_of_range,
                      "a sequence of " + std::to_string(num)
                        + " elements exceeds CAF 0.17's 32-bit lengths; use "
                          "another family or split the value");
  return inner_.begin_sequence(num);
}
caf::error checked_caf_sink::end_sequence() {
  return inner_.end_sequence();
}
caf::error checked_caf_sink::apply_raw(size_t num_bytes, void* data) {
  return inner_.apply_raw(num_bytes, data);
}
caf::error checked_caf_sink::apply_impl(int8_t& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(uint8_t& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(int16_t& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(uint16_t& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(int32_t& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(uint32_t& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(int64_t& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(uint64_t& x) {
  return inner_(x);
}

namespace {

template <class Float>
caf::error refuse_subnormal(Float x) {
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

caf::error checked_caf_sink::apply_impl(float& x) {
  if (auto err = refuse_subnormal(x))
    return err;
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(double& x) {
  if (auto err = refuse_subnormal(x))
    return err;
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(long double& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(std::string& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(std::u16string& x) {
  return inner_(x);
}
caf::error checked_caf_sink::apply_impl(std::u32string& x) {
  return inner_(x);
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
  auto code = info.decoding ? errc::decode_failed : errc::encode_failed;
  return make_error(code, describe(info) + where + "CAF reports "
                            + caf::to_string(err)
                            + (info.decoding ? "; the bytes are corrupt or "
                                               "hostile"
                                             : ""));
}

} // namespace ferry::serializers::detail
