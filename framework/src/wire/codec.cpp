// codec: writing and reading the wire's fields (see wire/codec.hpp).
#include "wire/codec.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/little_endian.hpp"

#include <caf/atom.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include <cstring>

namespace ferry::detail::wire {

using serializers::detail::get_le;
using serializers::detail::put_le;

namespace {

/// The text an error carries on the wire: its context when that is one
/// string (every ferry error), else CAF's rendering of the context.
std::string context_text(const caf::error& x) {
  auto& ctx = x.context();
  if (ctx.empty())
    return {};
  if (ctx.match_elements<std::string>())
    return ctx.get_as<std::string>(0);
  return caf::to_string(ctx);
}

} // namespace

// -- writer -------------------------------------------------------------------

void writer::put(uint64_t x, size_t n) {
  auto at = out_.size();
  out_.resize(at + n);
  put_le(out_.data() + at, x, n);
}

void writer::str(std::string_view x) {
  le32(static_cast<uint32_t>(x.size()));
  bytes({reinterpret_cast<const std::byte*>(x.data()), x.size()});
}

void writer::strs(const std::vector<std::string>& x) {
  le32(static_cast<uint32_t>(x.size()));
  for (auto& s : x)
    str(s);
}

void writer::bytes(std::span<const std::byte> x) {
  out_.insert(out_.end(), x.begin(), x.end());
}

void writer::error(const caf::error& x) {
  if (!x) {
    u8(0);
    le64(0);
    le32(0);
    return;
  }
  u8(x.code());
  le64(static_cast<uint64_t>(x.category()));
  str(context_text(x));
}

// -- reader -------------------------------------------------------------------

void reader::fail(std::string why) {
  if (failure_.empty())
    failure_ = std::move(why);
  pos_ = in_.size();
}

uint64_t reader::get(size_t n) {
  if (!ok())
    return 0;
  if (remaining() < n) {
    fail("it ends inside a field (" + std::to_string(n) + " bytes wanted, " +
         std::to_string(remaining()) + " left)");
    return 0;
  }
  auto x = get_le(in_.data() + pos_, n);
  pos_ += n;
  return x;
}

bool reader::boolean() {
  auto x = u8();
  if (x > 1)
    fail("a flag reads " + std::to_string(x) + " (0 or 1 allowed)");
  return x == 1;
}

std::span<const std::byte> reader::bytes(uint64_t n) {
  if (!ok())
    return {};
  if (n > remaining()) {
    fail("a field claims " + std::to_string(n) + " bytes, " +
         std::to_string(remaining()) + " are left");
    return {};
  }
  auto result = in_.subspan(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return result;
}

std::span<const std::byte> reader::rest() {
  return bytes(remaining());
}

std::string reader::str() {
  auto n = le32();
  if (n > max_str) {
    fail("a string claims " + std::to_string(n) + " bytes (at most " +
         std::to_string(max_str) + ")");
    return {};
  }
  auto x = bytes(n);
  return {reinterpret_cast<const char*>(x.data()), x.size()};
}

std::vector<std::string> reader::strs() {
  auto n = le32();
  // Each string takes at least its length field.
  if (n > max_strs || n > remaining() / 4) {
    fail("a list claims " + std::to_string(n) + " strings in " +
         std::to_string(remaining()) + " bytes");
    return {};
  }
  std::vector<std::string> result;
  result.reserve(n);
  for (uint32_t i = 0; i < n && ok(); ++i)
    result.push_back(str());
  return result;
}

caf::error reader::error() {
  auto code = u8();
  auto category = le64();
  auto text = str();
  if (!ok() || code == 0)
    return caf::error{};
  if (text.empty())
    return caf::error{code, static_cast<caf::atom_value>(category)};
  return caf::error{code, static_cast<caf::atom_value>(category),
                    caf::make_message(std::move(text))};
}

caf::error reader::failure() const {
  if (ok())
    return caf::none;
  return caf::make_error(errc::decode_failed, std::string{"malformed "} +
                                                what_ +
                                                " from the peer: " + failure_);
}

caf::error reader::finish() const {
  if (!ok())
    return failure();
  if (remaining() != 0)
    return caf::make_error(errc::decode_failed,
                           std::string{"malformed "} + what_ +
                             " from the peer: " + std::to_string(remaining()) +
                             " bytes after its last field");
  return caf::none;
}

} // namespace ferry::detail::wire
