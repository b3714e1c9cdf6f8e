// Comparing type shapes (see ferry/serializers/shape.hpp).
//
// A shape from a peer is parsed into a tree before it is compared: at most
// `max_shape_size` bytes and `max_shape_depth` levels, every byte checked
// against the grammar. The comparison walks both trees in step and stops at
// the first difference: a member on one side only, a member whose shape
// differs (recursing into it), members in another order, or another version.
#include "ferry/serializers/shape.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace ferry::serializers {

namespace {

using detail::shape_node;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

class parser {
public:
  explicit parser(std::string_view in) : in_(in) {
    // nop
  }

  /// Parses the whole input; on failure, `error_at()` is where it failed.
  std::optional<shape_node> parse_all() {
    auto result = parse(0);
    if (!result || pos_ != in_.size())
      return std::nullopt;
    return result;
  }

  size_t error_at() const { return pos_; }

private:
  bool eat(char c) {
    if (pos_ < in_.size() && in_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  std::string_view name() {
    auto first = pos_;
    while (pos_ < in_.size() && is_name_char(in_[pos_]))
      ++pos_;
    return in_.substr(first, pos_ - first);
  }

  bool version(uint32_t& out) {
    if (!eat('@'))
      return true;
    auto digits = name();
    if (digits.empty() || digits.size() > 9)
      return false;
    out = 0;
    for (auto c : digits) {
      if (c < '0' || c > '9')
        return false;
      out = out * 10 + static_cast<uint32_t>(c - '0');
    }
    return true;
  }

  std::optional<shape_node> parse(size_t depth) {
    if (depth > max_shape_depth)
      return std::nullopt;
    shape_node result;
    auto first = pos_;
    if (in_.substr(pos_).starts_with("custom\"")) {
      auto close = in_.find('"', pos_ + 7);
      if (close == std::string_view::npos)
        return std::nullopt;
      pos_ = close + 1;
      result.head = in_.substr(first, pos_ - first);
      if (!version(result.version))
        return std::nullopt;
    } else if (pos_ < in_.size() && (in_[pos_] == '@' || in_[pos_] == '{')) {
      result.record = true;
      if (!version(result.version) || !eat('{'))
        return std::nullopt;
      if (!eat('}')) {
        do {
          auto member_name = name();
          if (member_name.empty() || !eat(':'))
            return std::nullopt;
          auto shape = parse(depth + 1);
          if (!shape)
            return std::nullopt;
          result.fields.push_back({member_name, std::move(*shape)});
        } while (eat(','));
        if (!eat('}'))
          return std::nullopt;
      }
    } else {
      result.head = name();
      if (result.head.empty())
        return std::nullopt;
      // `tuple<>` (an empty tuple) is the one template without arguments.
      if (eat('<') && !(result.head == "tuple" && eat('>'))) {
        do {
          auto arg = parse(depth + 1);
          if (!arg)
            return std::nullopt;
          result.args.push_back(std::move(*arg));
        } while (eat(','));
        if (!eat('>'))
          return std::nullopt;
      }
    }
    result.text = in_.substr(first, pos_ - first);
    return result;
  }

  std::string_view in_;
  size_t pos_ = 0;
};

/// A shape as shown in a message: long ones are cut.
std::string show(std::string_view text) {
  constexpr size_t max_shown = 120;
  if (text.size() <= max_shown)
    return std::string{text};
  return std::string{text.substr(0, max_shown)} + "...";
}

std::string names_of(const shape_node& record) {
  std::string result = "(";
  for (auto& [name, shape] : record.fields)
    result += (result.size() > 1 ? ", " : "") + std::string{name};
  return result + ")";
}

/// The path of template argument `i` of `parent` below `path`.
std::string arg_path(const shape_node& parent, size_t i,
                     const std::string& path) {
  auto head = parent.head;
  if (head == "map" || head == "multimap")
    return path + (i == 0 ? "[key]" : "[]");
  if (head == "tuple" || head == "pair" || head == "variant")
    return path + ".<" + std::to_string(i) + ">";
  if (head == "opt" || head == "ptr" || head == "separate" || head == "enum")
    return path;
  return path + "[]";
}

struct sides {
  std::string here;
  std::string there;
};

std::optional<std::string> compare(const shape_node& a, const shape_node& b,
                                   const std::string& path, const sides& s) {
  if (a.text == b.text)
    return std::nullopt;
  if (a.record && b.record) {
    for (auto& [name, shape] : a.fields)
      if (detail::field_of(b, name) == nullptr)
        return "member '" + path + "." + std::string{name} + "' (" +
               show(shape.text) + ") exists on " + s.here + " but not on " +
               s.there;
    for (auto& [name, shape] : b.fields)
      if (detail::field_of(a, name) == nullptr)
        return "member '" + path + "." + std::string{name} + "' (" +
               show(shape.text) + ") exists on " + s.there + " but not on " +
               s.here;
    for (auto& [name, shape] : a.fields)
      if (auto diff = compare(shape, *detail::field_of(b, name),
                              path + "." + std::string{name}, s))
        return diff;
    if (names_of(a) != names_of(b))
      return "the members of '" + path +
             "' are in another order: " + names_of(a) + " on " + s.here + ", " +
             names_of(b) + " on " + s.there;
    return "'" + path + "' is version " + std::to_string(a.version) + " on " +
           s.here + " and version " + std::to_string(b.version) + " on " +
           s.there;
  }
  if (a.record != b.record || a.head != b.head || a.version != b.version ||
      a.args.size() != b.args.size())
    return "'" + path + "' is " + show(a.text) + " on " + s.here + " and " +
           show(b.text) + " on " + s.there;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (auto diff = compare(a.args[i], b.args[i], arg_path(a, i, path), s))
      return diff;
  return std::nullopt;
}

/// Whether integers or floating-point numbers of one kind bridge (a value
/// that does not fit the reader's width is refused on decode).
bool numbers_bridge(const shape_node& a, const shape_node& b) {
  using detail::is_float_shape;
  using detail::is_integer_shape;
  return a.args.empty() && b.args.empty() &&
         ((is_integer_shape(a.head) && is_integer_shape(b.head)) ||
          (is_float_shape(a.head) && is_float_shape(b.head)));
}

/// See `shapes_bridge`, by member name (msgpack, cereal.json).
bool bridges_by_name(const shape_node& a, const shape_node& b) {
  if (a.text == b.text)
    return true;
  if (a.record || b.record) {
    if (!a.record || !b.record || a.version == 0 || b.version == 0)
      return false;
    for (auto& [name, shape] : a.fields)
      if (auto* other = detail::field_of(b, name);
          other != nullptr && !bridges_by_name(shape, *other))
        return false;
    return true;
  }
  if (a.args.empty() && b.args.empty())
    return numbers_bridge(a, b);
  if (a.head != b.head || a.args.size() != b.args.size() || a.head == "tuple" ||
      a.head == "pair" || a.head == "variant" || a.head == "array")
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!bridges_by_name(a.args[i], b.args[i]))
      return false;
  return true;
}

/// Whether ferry's binary reader skips a value of shape `x` it has no member
/// for (detail/cereal_resolve.hpp): every value whose bytes its shape alone
/// delimits. A custom type, a pointer (shared ones refer to each other), a
/// member in a frame of its own (`separate`, views) and `long double` (its
/// size is the platform's) are not.
bool skippable(const shape_node& x) {
  if (x.record) {
    for (auto& [name, shape] : x.fields)
      if (!skippable(shape))
        return false;
    return true;
  }
  if (x.args.empty())
    return x.head == "tuple" || detail::binary_scalar_size(x.head) != 0 ||
           detail::binary_string_width(x.head) != 0;
  auto head = x.head;
  if (head == "array")
    return x.args.size() == 2 && skippable(x.args[0]);
  if (head != "list" && head != "set" && head != "multiset" && head != "map" &&
      head != "multimap" && head != "tuple" && head != "pair" &&
      head != "opt" && head != "variant" && head != "enum")
    return false;
  for (auto& arg : x.args)
    if (!skippable(arg))
      return false;
  return true;
}

/// See `shapes_bridge`, by the writer's shape (cereal.binary,
/// cereal.portable): as by name, and every member on one side only can be
/// skipped by the other.
bool bridges_by_shape(const shape_node& a, const shape_node& b) {
  if (a.text == b.text)
    return true;
  if (a.record || b.record) {
    if (!a.record || !b.record || a.version == 0 || b.version == 0)
      return false;
    for (auto& [name, shape] : a.fields) {
      auto* other = detail::field_of(b, name);
      if (other == nullptr ? !skippable(shape)
                           : !bridges_by_shape(shape, *other))
        return false;
    }
    for (auto& [name, shape] : b.fields)
      if (detail::field_of(a, name) == nullptr && !skippable(shape))
        return false;
    return true;
  }
  if (a.args.empty() && b.args.empty())
    return numbers_bridge(a, b) && a.head != "f80" && b.head != "f80";
  auto head = a.head;
  if (head != b.head || a.args.size() != b.args.size() ||
      (head != "list" && head != "set" && head != "map" && head != "opt" &&
       head != "enum"))
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!bridges_by_shape(a.args[i], b.args[i]))
      return false;
  return true;
}

} // namespace

namespace detail {

std::optional<shape_node> parse_shape(std::string_view text, size_t* error_at) {
  if (text.size() > max_shape_size) {
    if (error_at != nullptr)
      *error_at = max_shape_size;
    return std::nullopt;
  }
  parser p{text};
  auto result = p.parse_all();
  if (!result && error_at != nullptr)
    *error_at = p.error_at();
  return result;
}

bool is_integer_shape(std::string_view head) noexcept {
  return binary_scalar_size(head) != 0 && (head[0] == 'i' || head[0] == 'u');
}

bool is_float_shape(std::string_view head) noexcept {
  return head == "f32" || head == "f64" || head == "f80";
}

const shape_node* field_of(const shape_node& record,
                           std::string_view name) noexcept {
  for (auto& [member_name, shape] : record.fields)
    if (member_name == name)
      return &shape;
  return nullptr;
}

size_t binary_scalar_size(std::string_view head) noexcept {
  constexpr std::pair<std::string_view, size_t> sizes[] = {
    {"bool", 1},   {"char", 1},   {"byte", 1}, {"char8", 1},
    {"char16", 2}, {"char32", 4}, {"i8", 1},   {"u8", 1},
    {"i16", 2},    {"u16", 2},    {"i32", 4},  {"u32", 4},
    {"i64", 8},    {"u64", 8},    {"f32", 4},  {"f64", 8}};
  for (auto [name, size] : sizes)
    if (name == head)
      return size;
  return 0;
}

size_t binary_string_width(std::string_view head) noexcept {
  if (head == "str" || head == "str8")
    return 1;
  if (head == "str16")
    return 2;
  if (head == "str32")
    return 4;
  return 0;
}

} // namespace detail

bool shapes_bridge(std::string_view family, std::string_view mine,
                   std::string_view theirs) {
  auto a = detail::parse_shape(mine);
  auto b = detail::parse_shape(theirs);
  if (!a || !b || !a->record || !b->record)
    return false;
  if (family == "msgpack" || family == "cereal.json")
    return bridges_by_name(*a, *b);
  if (family == "cereal.binary" || family == "cereal.portable")
    return bridges_by_shape(*a, *b);
  return false;
}

uint64_t shape_fingerprint(std::string_view shape) noexcept {
  uint64_t hash = 14695981039346656037ull;
  for (auto c : shape) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string shape_fingerprint_text(std::string_view shape) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(shape_fingerprint(shape)));
  return buf;
}

std::optional<std::string> shape_difference(std::string_view type,
                                            std::string_view mine,
                                            std::string_view theirs,
                                            std::string_view here,
                                            std::string_view there) {
  if (mine == theirs)
    return std::nullopt;
  sides s{std::string{here}, std::string{there}};
  if (theirs.size() > max_shape_size)
    return s.there + " describes type '" + std::string{type} + "' in " +
           std::to_string(theirs.size()) + " bytes, above the " +
           std::to_string(max_shape_size) + " ferry reads";
  size_t theirs_error = 0;
  auto b = detail::parse_shape(theirs, &theirs_error);
  if (!b)
    return s.there + " describes type '" + std::string{type} +
           "' with a malformed shape (at byte " + std::to_string(theirs_error) +
           " of " + std::to_string(theirs.size()) + ", or nested deeper than " +
           std::to_string(max_shape_depth) + ")";
  size_t mine_error = 0;
  auto a = detail::parse_shape(mine, &mine_error);
  if (!a)
    return "type '" + std::string{type} + "' has a shape on " + s.here +
           " that ferry cannot read back (at byte " +
           std::to_string(mine_error) + ")";
  if (auto diff = compare(*a, *b, std::string{type}, s))
    return diff;
  // Equal trees from unequal texts cannot happen; say so rather than claim
  // the types match.
  return "type '" + std::string{type} + "' is described differently on " +
         s.here + " and " + s.there;
}

} // namespace ferry::serializers
