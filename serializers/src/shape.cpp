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

struct member;

/// One parsed shape: a record (`fields`), a template (`head<args>`), a
/// scalar (`head` alone) or a custom type (`head` holds its quoted name).
struct node {
  std::string_view text;
  std::string_view head;
  uint32_t version = 0;
  bool record = false;
  std::vector<node> args;
  std::vector<member> fields;
};

/// A record's member: its name and shape.
struct member {
  std::string_view name;
  node shape;
};

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '_';
}

class parser {
public:
  explicit parser(std::string_view in) : in_(in) {
    // nop
  }

  /// Parses the whole input; on failure, `error_at()` is where it failed.
  std::optional<node> parse_all() {
    auto result = parse(0);
    if (!result || pos_ != in_.size())
      return std::nullopt;
    return result;
  }

  size_t error_at() const {
    return pos_;
  }

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

  std::optional<node> parse(size_t depth) {
    if (depth > max_shape_depth)
      return std::nullopt;
    node result;
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
      if (eat('<')) {
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

std::string names_of(const node& record) {
  std::string result = "(";
  for (auto& [name, shape] : record.fields)
    result += (result.size() > 1 ? ", " : "") + std::string{name};
  return result + ")";
}

const node* field(const node& record, std::string_view name) {
  for (auto& [member_name, shape] : record.fields)
    if (member_name == name)
      return &shape;
  return nullptr;
}

/// The path of template argument `i` of `parent` below `path`.
std::string arg_path(const node& parent, size_t i, const std::string& path) {
  auto head = parent.head;
  if (head == "map" || head == "multimap")
    return path + (i == 0 ? "[key]" : "[]");
  if (head == "tuple" || head == "variant")
    return path + ".<" + std::to_string(i) + ">";
  if (head == "opt" || head == "ptr" || head == "separate" || head == "enum")
    return path;
  return path + "[]";
}

struct sides {
  std::string here;
  std::string there;
};

std::optional<std::string> compare(const node& a, const node& b,
                                   const std::string& path, const sides& s) {
  if (a.text == b.text)
    return std::nullopt;
  if (a.record && b.record) {
    for (auto& [name, shape] : a.fields)
      if (field(b, name) == nullptr)
        return "member '" + path + "." + std::string{name} + "' ("
               + show(shape.text) + ") exists on " + s.here + " but not on "
               + s.there;
    for (auto& [name, shape] : b.fields)
      if (field(a, name) == nullptr)
        return "member '" + path + "." + std::string{name} + "' ("
               + show(shape.text) + ") exists on " + s.there + " but not on "
               + s.here;
    for (auto& [name, shape] : a.fields)
      if (auto diff = compare(shape, *field(b, name),
                              path + "." + std::string{name}, s))
        return diff;
    if (names_of(a) != names_of(b))
      return "the members of '" + path + "' are in another order: "
             + names_of(a) + " on " + s.here + ", " + names_of(b) + " on "
             + s.there;
    return "'" + path + "' is version " + std::to_string(a.version) + " on "
           + s.here + " and version " + std::to_string(b.version) + " on "
           + s.there;
  }
  if (a.record != b.record || a.head != b.head || a.version != b.version
      || a.args.size() != b.args.size())
    return "'" + path + "' is " + show(a.text) + " on " + s.here + " and "
           + show(b.text) + " on " + s.there;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (auto diff = compare(a.args[i], b.args[i], arg_path(a, i, path), s))
      return diff;
  return std::nullopt;
}

bool is_integer(std::string_view head) {
  return head.size() >= 2 && (head[0] == 'i' || head[0] == 'u')
         && head.substr(1).find_first_not_of("0123456789")
              == std::string_view::npos;
}

bool is_float(std::string_view head) {
  return head == "f32" || head == "f64" || head == "f80";
}

/// See `shapes_bridge_by_name`.
bool bridges(const node& a, const node& b) {
  if (a.text == b.text)
    return true;
  if (a.record || b.record) {
    if (!a.record || !b.record || a.version == 0 || b.version == 0)
      return false;
    for (auto& [name, shape] : a.fields)
      if (auto* other = field(b, name); other != nullptr && !bridges(shape, *other))
        return false;
    return true;
  }
  if (a.args.empty() && b.args.empty())
    return (is_integer(a.head) && is_integer(b.head))
           || (is_float(a.head) && is_float(b.head));
  if (a.head != b.head || a.args.size() != b.args.size() || a.head == "tuple"
      || a.head == "variant" || a.head == "array")
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!bridges(a.args[i], b.args[i]))
      return false;
  return true;
}

} // namespace

bool shapes_bridge_by_name(std::string_view mine, std::string_view theirs) {
  if (mine.size() > max_shape_size || theirs.size() > max_shape_size)
    return false;
  parser mine_parser{mine};
  parser theirs_parser{theirs};
  auto a = mine_parser.parse_all();
  auto b = theirs_parser.parse_all();
  return a && b && a->record && b->record && bridges(*a, *b);
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

std::optional<std::string>
shape_difference(std::string_view type, std::string_view mine,
                 std::string_view theirs, std::string_view here,
                 std::string_view there) {
  if (mine == theirs)
    return std::nullopt;
  sides s{std::string{here}, std::string{there}};
  if (theirs.size() > max_shape_size)
    return s.there + " describes type '" + std::string{type} + "' in "
           + std::to_string(theirs.size()) + " bytes, above the "
           + std::to_string(max_shape_size) + " ferry reads";
  parser theirs_parser{theirs};
  auto b = theirs_parser.parse_all();
  if (!b)
    return s.there + " describes type '" + std::string{type}
           + "' with a malformed shape (at byte "
           + std::to_string(theirs_parser.error_at()) + " of "
           + std::to_string(theirs.size()) + ", or nested deeper than "
           + std::to_string(max_shape_depth) + ")";
  parser mine_parser{mine};
  auto a = mine_parser.parse_all();
  if (!a)
    return "type '" + std::string{type} + "' has a shape on " + s.here
           + " that ferry cannot read back (at byte "
           + std::to_string(mine_parser.error_at()) + ")";
  if (auto diff = compare(*a, *b, std::string{type}, s))
    return diff;
  // Equal trees from unequal texts cannot happen; say so rather than claim
  // the types match.
  return "type '" + std::string{type} + "' is described differently on "
         + s.here + " and " + s.there;
}

} // namespace ferry::serializers
