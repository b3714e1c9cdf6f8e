// Non-template parts of the cereal families (families/cereal.hpp): the
// pre-scan of a cereal.json text before cereal's JSONInputArchive reads it.
//
// Contract: `json_depth` reads every byte of the text once, skips string
// bodies (a quote preceded by an odd number of backslashes does not close
// one), counts bracket nesting and refuses numbers that rapidjson 1.1 would
// read with undefined behaviour by throwing `decode_fault`; callers run it
// inside `guarded`, which turns the fault into an error value.
//
// Thread-safety: stateless; safe to call from any number of threads.

#include "ferry/serializers/families/cereal.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace ferry::serializers::detail {

void refuse_writer_shape(std::string_view writer, std::string_view reader) {
  throw decode_fault{errc::member_mismatch,
                     "the sender writes it as " + std::string{writer} +
                       ", which cannot be read as " + std::string{reader} +
                       " here; the link refuses types whose versions "
                       "cereal.binary and cereal.portable do not bridge "
                       "(docs/evolution.md), so the bytes or the sender's "
                       "hello are corrupt or hostile"};
}

void refuse_skip(std::string_view writer) {
  throw decode_fault{errc::member_mismatch,
                     "the sender writes a member this build does not have as " +
                       std::string{writer} +
                       ", which cereal.binary and cereal.portable cannot "
                       "skip (docs/evolution.md); the bytes or the "
                       "sender's hello are corrupt or hostile"};
}

// Returns the deepest bracket nesting of a JSON text, ignoring strings. Also
// refuses (throwing decode_fault) numbers with more than 40 mantissa digits,
// more than 20 significant ones (leading and trailing zeros not counted:
// rapidjson trims both before its exact path, and its writer puts numbers
// up to 1e21 in fixed notation, e.g. 11068527370611720000.0), more than 3
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
        auto* q =
          static_cast<const unsigned char*>(std::memchr(s + i, '"', n - i));
        if (q == nullptr) {
          i = n;
          break;
        }
        auto pos = static_cast<size_t>(q - s);
        size_t backslashes = 0;
        while (pos - backslashes > opening + 1 &&
               s[pos - backslashes - 1] == '\\')
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
      size_t zeros = 0; // after the first nonzero digit, not yet counted
      size_t exponent = 0;
      bool nonzero = false;
      bool has_exponent = false;
      // JSON's grammar, as rapidjson reads it: one '.' at most, so that
      // "0.000.5" is the zero "0.000" here too, not one number.
      auto digits = [&] {
        for (; i < n && is_digit(s[i]); ++i) {
          ++mantissa;
          nonzero = nonzero || s[i] != '0';
          if (s[i] != '0') {
            significant += zeros + 1;
            zeros = 0;
          } else if (nonzero) {
            ++zeros;
          }
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
      if (mantissa > 40 || significant > 20 || exponent > 3 ||
          (!nonzero && (has_exponent || mantissa > 17)))
        throw decode_fault{errc::malformed_frame,
                           "the number at offset " + std::to_string(start) +
                             " has more digits than cereal ever writes"};
      break;
    }
    }
  }
  return deepest;
}

} // namespace ferry::serializers::detail
