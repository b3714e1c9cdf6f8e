// Non-template parts of detail/exact.hpp: the UTF-8 check every family that
// carries text runs over its strings, and the texts of the refusals.
//
// Contract: `utf8_error` accepts exactly the well-formed UTF-8 of RFC 3629
// (Unicode's table 3-7): no overlong forms, no surrogates (U+D800..U+DFFF),
// nothing above U+10FFFF, no truncated sequence; noncharacters such as
// U+FFFE and private-use code points are text and pass.
//
// Thread-safety: pure functions.

#include "ferry/serializers/detail/exact.hpp"

#include <cstring>

namespace ferry::serializers::detail {

size_t utf8_error(std::string_view text) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // ASCII runs, eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ull) != 0)
        break;
      i += 8;
    }
    if (i == n)
      break;
    auto c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The lead byte fixes the length and the range of the second byte.
    size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0)
        lo = 0xa0; // overlong below U+0800
      else if (c == 0xed)
        hi = 0x9f; // surrogates U+D800..U+DFFF
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0)
        lo = 0x90; // overlong below U+10000
      else if (c == 0xf4)
        hi = 0x8f; // above U+10FFFF
    } else {
      return i; // a continuation byte, an overlong lead or beyond U+10FFFF
    }
    if (i + len > n)
      return i;
    if (s[i + 1] < lo || s[i + 1] > hi)
      return i;
    for (size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xbf)
        return i;
    i += len;
  }
  return std::string_view::npos;
}

void refuse_text(std::string_view text, size_t bad, bool nul,
                 const std::string& where, const char* family,
                 std::string_view fix) {
  if (nul)
    throw decode_fault{errc::invalid_text,
                       "a string holding a NUL character (" + where + "); " +
                         family + " cannot carry NUL inside a string; " +
                         std::string{fix}};
  auto byte = static_cast<unsigned>(static_cast<unsigned char>(text[bad]));
  throw decode_fault{errc::invalid_text,
                     "a string that is not well-formed UTF-8 (byte " +
                       std::to_string(byte) + " " + where + "); " + family +
                       " carries strings as UTF-8 text, without surrogates "
                       "or overlong forms; " +
                       std::string{fix}};
}

std::string inexact_text(const std::string& what, const char* type) {
  return what + " does not fit the member's type (" + type +
         ") exactly; the sender's type differs from the receiver's, or the "
         "input is corrupt or hostile";
}

void note_member(std::string& text, const std::type_info& owner, size_t index,
                 const std::type_info& member) {
  text += text.find("; in member #") == std::string::npos ? "; in member #"
                                                          : ", in member #";
  text += std::to_string(index);
  text += " (";
  text += demangle(member);
  text += ") of ";
  text += demangle(owner);
}

} // namespace ferry::serializers::detail
