// Non-template parts of the msgpack family (families/msgpack.hpp): unpacking
// a frame with msgpack-cxx's object builder under depth and budget checks,
// the exact conversions into float, double and std::string and the refusal
// of a container of the other kind (declared in
// detail/msgpack_checked_convert.hpp), and the reading of an actor handle's
// token (`msgpack_token`).
//
// Contract: `msgpack_unpack_checked` charges every array and map (one
// msgpack::object or msgpack::object_kv per element) to the allocation budget
// of `limits` before msgpack-cxx allocates it, refuses nesting deeper than
// `limits::max_depth`, refuses a str that is not well-formed UTF-8, and turns
// malformed, truncated and trailing bytes into a thrown `decode_fault` with
// the offset; callers run it inside `guarded`. A float32 becomes an object
// whose double holds the float's bits (NaN payloads kept, which a hardware
// conversion would quiet). Strings and binaries in the returned objects
// reference the input, which must outlive the handle. The conversions keep
// a number bit for bit or throw `decode_fault{inexact_value}`.
//
// Thread-safety: each call builds its own visitor and zone; safe to call
// from any number of threads.

#include "ferry/serializers/families/msgpack.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>

namespace ferry::serializers::detail {

namespace {

// msgpack-cxx's object builder, with depth and budget checks ahead of every
// container allocation. parse_imp calls these members statically, so hiding
// the base's members is enough.
class checked_object_visitor
  : public msgpack::v2::detail::create_object_visitor {
public:
  using super = msgpack::v2::detail::create_object_visitor;

  checked_object_visitor(const char* base, uint64_t budget, uint32_t max_depth)
    : super(reference_all, nullptr, msgpack::unpack_limit{}),
      base_(base),
      budget_(budget),
      max_depth_(max_depth) {}

  bool visit_str(const char* v, uint32_t size) {
    // Strings reference the input: `v` points into it.
    auto start = static_cast<size_t>(v - base_);
    check_text(
      {v, size}, true, "msgpack",
      "the sender wrote bytes as str; msgpack carries them as bin",
      [&](size_t i) { return "at offset " + std::to_string(start + i); });
    return super::visit_str(v, size);
  }

  bool visit_float32(float v) {
    auto ok = super::visit_float32(v);
    m_stack.back()->via.f64 = exact_widen(v);
    return ok;
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
    throw decode_fault{errc::malformed_frame, "invalid msgpack at offset " +
                                                std::to_string(error_offset)};
  }

  void insufficient_bytes(size_t, size_t error_offset) {
    throw decode_fault{errc::truncated_frame,
                       "the frame ends inside a value (offset " +
                         std::to_string(error_offset) + ")"};
  }

private:
  static bool reference_all(msgpack::type::object_type, size_t, void*) {
    return true;
  }

  void enter(uint32_t n, size_t size, const char* what) {
    if (++depth_ > max_depth_)
      throw decode_fault{errc::nesting_too_deep,
                         "nests deeper than limits::max_depth (" +
                           std::to_string(max_depth_) + ")"};
    auto bytes = uint64_t{n} * size;
    if (bytes > budget_)
      throw decode_fault{errc::allocation_limit_exceeded,
                         std::string{what} + " claims " + std::to_string(n) +
                           " elements, more than the allocation budget "
                           "left (" +
                           std::to_string(budget_) +
                           " bytes); the input is hostile or corrupt, or "
                           "raise limits::allocation_factor"};
    budget_ -= bytes;
  }

  const char* base_;
  uint64_t budget_;
  uint32_t max_depth_;
  uint32_t depth_ = 0;
};

[[noreturn]] void refuse_inexact(const std::string& what, const char* type) {
  throw decode_fault{errc::inexact_value, inexact_text(what, type)};
}

std::string describe_integer(const msgpack::object& o) {
  return "the msgpack integer " + (o.type == msgpack::type::POSITIVE_INTEGER
                                     ? std::to_string(o.via.u64)
                                     : std::to_string(o.via.i64));
}

/// The integer `o` as an F, exactly.
template <class F>
F exact_from_integer(const msgpack::object& o, const char* type) {
  auto f = o.type == msgpack::type::POSITIVE_INTEGER
             ? exact_float_of<F>(o.via.u64)
             : exact_float_of<F>(o.via.i64);
  if (!f)
    refuse_inexact(describe_integer(o), type);
  return *f;
}

/// Returns what kind of msgpack value `type` is, for messages.
const char* kind_name(msgpack::type::object_type type) {
  switch (type) {
  case msgpack::type::ARRAY:
    return "an array";
  case msgpack::type::MAP:
    return "a map";
  case msgpack::type::BIN:
    return "a bin";
  default:
    return "a value";
  }
}

} // namespace

void refuse_container(const msgpack::object& o, msgpack::type::object_type want,
                      const std::string& type) {
  bool map = o.type == msgpack::type::MAP;
  auto n = map ? o.via.map.size : o.via.array.size;
  throw decode_fault{
    errc::member_mismatch,
    std::string{"found a msgpack "} + (map ? "map" : "array") + " of " +
      std::to_string(n) + (map ? " entries" : " elements") +
      " where the type reads " + type + ", which ferry writes as " +
      kind_name(want) +
      "; the sender's type differs from the receiver's, or its writer "
      "writes this type otherwise than ferry (docs/wire-format.md, section "
      "7)"};
}

handle_token msgpack_token(const msgpack::object& o) {
  auto bad = [](const char* what) {
    return decode_fault{errc::malformed_frame,
                        std::string{"an actor handle must be an array [kind, "
                                    "id] of two non-negative integers, "} +
                          what};
  };
  if (o.type != msgpack::type::ARRAY || o.via.array.size != 2)
    throw bad("this is not an array of two");
  auto& kind = o.via.array.ptr[0];
  auto& id = o.via.array.ptr[1];
  if (kind.type != msgpack::type::POSITIVE_INTEGER ||
      id.type != msgpack::type::POSITIVE_INTEGER)
    throw bad("this one holds something else");
  if (kind.via.u64 > UINT8_MAX)
    throw bad("its kind is more than a byte holds");
  return handle_token{static_cast<uint8_t>(kind.via.u64), id.via.u64};
}

msgpack::object_handle msgpack_unpack_checked(std::span<const std::byte> in,
                                              const limits& lim) {
  auto zone = std::make_unique<msgpack::zone>();
  auto base = reinterpret_cast<const char*>(in.data());
  checked_object_visitor v{base, lim.budget(in.size()), lim.max_depth};
  v.set_zone(*zone);
  v.set_referenced(false);
  size_t off = 0;
  auto ret = msgpack::v2::detail::parse_imp(base, in.size(), off, v);
  switch (ret) {
  case msgpack::PARSE_SUCCESS:
    break;
  case msgpack::PARSE_EXTRA_BYTES:
    throw decode_fault{errc::trailing_bytes,
                       std::to_string(in.size() - off) +
                         " bytes follow the value at offset " +
                         std::to_string(off)};
  case msgpack::PARSE_CONTINUE:
    throw decode_fault{errc::truncated_frame,
                       "the frame ends inside a value (offset " +
                         std::to_string(off) + ")"};
  default:
    throw decode_fault{errc::malformed_frame,
                       "invalid msgpack near offset " + std::to_string(off)};
  }
  return msgpack::object_handle{v.data(), std::move(zone)};
}

} // namespace ferry::serializers::detail

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  using ferry::serializers::detail::decode_fault;

  const msgpack::object& convert<double>::operator()(const msgpack::object& o,
                                                     double& v) const {
    switch (o.type) {
    case msgpack::type::FLOAT32: // holds the float's bits (exact_widen)
    case msgpack::type::FLOAT64:
      v = o.via.f64;
      return o;
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER:
      v = ferry::serializers::detail::exact_from_integer<double>(o, "double");
      return o;
    default:
      throw msgpack::type_error();
    }
  }

  const msgpack::object& convert<float>::operator()(const msgpack::object& o,
                                                    float& v) const {
    switch (o.type) {
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: {
      auto f = ferry::serializers::detail::exact_narrow(o.via.f64);
      if (!f) {
        char text[64];
        std::snprintf(text, sizeof(text), "the msgpack float64 %.17g",
                      o.via.f64);
        ferry::serializers::detail::refuse_inexact(text, "float");
      }
      v = *f;
      return o;
    }
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER:
      v = ferry::serializers::detail::exact_from_integer<float>(o, "float");
      return o;
    default:
      throw msgpack::type_error();
    }
  }

  const msgpack::object&
  convert<std::string>::operator()(const msgpack::object& o,
                                   std::string& v) const {
    // Every str was checked for UTF-8 when it was read.
    if (o.type == msgpack::type::BIN)
      throw decode_fault{
        ferry::serializers::errc::decode_failed,
        "a msgpack bin where the member is a std::string, "
        "which msgpack carries as str (UTF-8 text); read bytes "
        "into std::vector<char> or std::vector<std::byte>"};
    if (o.type != msgpack::type::STR)
      throw msgpack::type_error();
    v.assign(o.via.str.ptr, o.via.str.size);
    return o;
  }

  } // namespace adaptor
} // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
} // namespace msgpack
