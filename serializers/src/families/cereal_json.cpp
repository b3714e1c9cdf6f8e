// ferry's strict reader of cereal's JSON format
// (detail/cereal_json_archive.hpp): parsing a hostile text into a flat tree
// with rapidjson's SAX reader, and the archive's walk over it.
//
// Contract: `parse_json` accepts exactly one JSON value (whitespace around
// it), as rapidjson reads it with cereal's flags (full-precision numbers;
// NaN and the infinities), and charges every value it keeps to the calling
// thread's decode budget before it keeps it. The archive reads the tree in
// document order only: every member where cereal's writer puts it, under the
// name it gives it, and no value twice or not at all; every refusal is a
// `decode_fault` whose text names the offset.
//
// Thread-safety: stateless functions; an archive belongs to one decode call.

#include "ferry/serializers/detail/cereal_json_archive.hpp"

#include "ferry/serializers/detail/exact.hpp"
#include "ferry/serializers/detail/scope.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace ferry::serializers::detail {

namespace {

/// Builds a json_tree from rapidjson's SAX events.
class tree_builder {
public:
  tree_builder(json_tree& out, const rapidjson::MemoryStream& in)
    : out_(out),
      in_(in) {}

  bool Null() {
    add(json_node::null_value);
    return true;
  }

  bool Bool(bool b) {
    add(json_node::bool_value).flag = b;
    return true;
  }

  bool Int(int i) { return Int64(i); }

  bool Uint(unsigned u) { return Uint64(u); }

  bool Int64(int64_t i) {
    if (i >= 0)
      return Uint64(static_cast<uint64_t>(i));
    add(json_node::negative_value).number.i = i;
    return true;
  }

  bool Uint64(uint64_t u) {
    add(json_node::unsigned_value).number.u = u;
    return true;
  }

  bool Double(double d) {
    add(json_node::double_value).number.d = d;
    return true;
  }

  bool RawNumber(const char*, rapidjson::SizeType, bool) {
    return false; // not requested from the reader
  }

  bool String(const char* s, rapidjson::SizeType n, bool) {
    auto pos = out_.pool.size();
    auto& x = add(json_node::string_value);
    charge(n, 1, "a JSON string");
    out_.pool.append(s, n);
    x.text_pos = pos;
    x.text_len = n;
    return true;
  }

  bool Key(const char* s, rapidjson::SizeType n, bool) {
    charge(n, 1, "a JSON member name");
    key_pos_ = out_.pool.size();
    key_len_ = n;
    out_.pool.append(s, n);
    has_key_ = true;
    return true;
  }

  bool StartObject() { return open(json_node::object_value); }

  bool EndObject(rapidjson::SizeType) { return close(); }

  bool StartArray() { return open(json_node::array_value); }

  bool EndArray(rapidjson::SizeType) { return close(); }

private:
  json_node& add(json_node::kind_type kind) {
    auto& nodes = out_.nodes;
    if (nodes.size() >= UINT32_MAX - 1)
      throw decode_fault{errc::length_out_of_range,
                         "a JSON text of more than 2^32 values"};
    charge(1, sizeof(json_node), "a JSON value");
    auto& x = nodes.emplace_back();
    x.kind = kind;
    x.end = static_cast<uint32_t>(nodes.size());
    x.offset = in_.Tell();
    if (has_key_) {
      x.name_pos = key_pos_;
      x.name_len = key_len_;
      has_key_ = false;
    }
    if (!open_.empty())
      ++nodes[open_.back()].children;
    return x;
  }

  uint32_t index(const json_node& x) const {
    return static_cast<uint32_t>(&x - out_.nodes.data());
  }

  bool open(json_node::kind_type kind) {
    open_.push_back(index(add(kind)));
    return true;
  }

  bool close() {
    auto& x = out_.nodes[open_.back()];
    x.end = static_cast<uint32_t>(out_.nodes.size());
    x.offset = in_.Tell();
    open_.pop_back();
    return true;
  }

  json_tree& out_;
  const rapidjson::MemoryStream& in_;
  std::vector<uint32_t> open_;
  uint64_t key_pos_ = 0;
  uint32_t key_len_ = 0;
  bool has_key_ = false;
};

const char* kind_name(const json_node& x) {
  switch (x.kind) {
  case json_node::null_value:
    return "null";
  case json_node::bool_value:
    return "a boolean";
  case json_node::negative_value:
  case json_node::unsigned_value:
    return "an integer";
  case json_node::double_value:
    return "a number with a fraction or exponent";
  case json_node::string_value:
    return "a string";
  case json_node::array_value:
    return "an array";
  case json_node::object_value:
    return "an object";
  }
  return "a value";
}

std::string quoted(std::string_view name) {
  std::string result = "\"";
  for (auto c : name.substr(0, 64))
    result += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
  if (name.size() > 64)
    result += "...";
  return result + "\"";
}

std::string at(const json_node& x) {
  return " (ending at offset " + std::to_string(x.offset) + ")";
}

/// Returns `name` as a JSON pointer's reference token (RFC 6901: `~` as
/// `~0`, `/` as `~1`), control characters as `?`, cut after 64 bytes.
std::string pointer_token(std::string_view name) {
  std::string result;
  for (auto c : name.substr(0, 64)) {
    if (c == '~')
      result += "~0";
    else if (c == '/')
      result += "~1";
    else
      result += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
  }
  if (name.size() > 64)
    result += "...";
  return result;
}

constexpr const char* json_text_fix =
  "send bytes as std::vector<char>, or with cereal.binary";

std::string number_text(double d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  return buf;
}

[[noreturn]] void refuse_kind(const json_node& x, const char* expected) {
  throw decode_fault{errc::decode_failed, std::string{"found "} + kind_name(x) +
                                            at(x) + " where the type reads " +
                                            expected};
}

/// Refuses `x` for an integer member of type `type`: a number out of its
/// range or with a fraction, or another kind of value.
[[noreturn]] void refuse_integer(const json_node& x,
                                 const std::type_info& type) {
  std::string what;
  switch (x.kind) {
  case json_node::negative_value:
    what = std::to_string(x.number.i);
    break;
  case json_node::unsigned_value:
    what = std::to_string(x.number.u);
    break;
  case json_node::double_value:
    what = number_text(x.number.d);
    break;
  default:
    refuse_kind(x, "an integer");
  }
  throw decode_fault{
    errc::inexact_value,
    inexact_text("the JSON number " + what + at(x), demangle(type).c_str())};
}

} // namespace

json_tree parse_json(std::span<const std::byte> text, const limits& lim) {
  // Nesting and numbers first: rapidjson reads some numbers with undefined
  // behaviour (json_depth).
  if (auto depth = json_depth(text); depth > lim.max_depth)
    throw decode_fault{errc::nesting_too_deep,
                       "the JSON text nests " + std::to_string(depth) +
                         " levels, more than limits::max_depth (" +
                         std::to_string(lim.max_depth) + ")"};
  json_tree result;
  rapidjson::MemoryStream in{reinterpret_cast<const char*>(text.data()),
                             text.size()};
  tree_builder builder{result, in};
  rapidjson::Reader reader;
  constexpr unsigned flags = rapidjson::kParseFullPrecisionFlag |
                             rapidjson::kParseNanAndInfFlag |
                             rapidjson::kParseIterativeFlag;
  auto ok = reader.Parse<flags>(in, builder);
  if (!ok) {
    auto code = reader.GetParseErrorCode();
    auto offset = std::to_string(reader.GetErrorOffset());
    switch (code) {
    case rapidjson::kParseErrorDocumentRootNotSingular:
      throw decode_fault{errc::trailing_bytes,
                         "data follows the JSON value at offset " + offset +
                           "; cereal writes one value per frame"};
    case rapidjson::kParseErrorStringUnicodeSurrogateInvalid:
    case rapidjson::kParseErrorStringInvalidEncoding:
      throw decode_fault{errc::invalid_text,
                         std::string{"a JSON string that is not UTF-8 text ("} +
                           rapidjson::GetParseError_En(code) + ") at offset " +
                           offset};
    default:
      throw decode_fault{errc::malformed_frame,
                         std::string{"not JSON: "} +
                           rapidjson::GetParseError_En(code) + " (offset " +
                           offset + ")"};
    }
  }
  return result;
}

checked_json_archive::checked_json_archive(std::span<const std::byte> text,
                                           const limits& lim)
  : cereal::InputArchive<checked_json_archive>(this),
    tree_(parse_json(text, lim)) {
  auto& root = tree_.nodes.front();
  if (root.kind != json_node::object_value)
    throw decode_fault{errc::malformed_frame,
                       std::string{"the JSON text is "} + kind_name(root) +
                         ", cereal writes an object" + at(root)};
  levels_.push_back(level{0, 1});
}

const json_node& checked_json_archive::next_value() {
  auto name = next_name_;
  next_name_ = nullptr;
  auto& top = levels_.back();
  auto& parent = tree_.nodes[top.node];
  bool object = parent.kind == json_node::object_value;
  if (!object && !top.sized)
    wrong_container(name != nullptr ? name : "value0");
  if (top.by_name) {
    // `seek` found the member: read it; nothing else in this object is.
    if (top.next == top.node)
      throw decode_fault{errc::member_mismatch,
                         "a member of the object" + at(parent) +
                           " read without looking it up by name"};
    auto& x = tree_.nodes[top.next];
    top.next = top.node;
    position_ = x.offset;
    return x;
  }
  std::string expected;
  if (object)
    expected = name != nullptr ? name : "value" + std::to_string(top.unnamed++);
  if (top.read == parent.children)
    throw decode_fault{
      errc::member_mismatch,
      std::string{object ? "the object" : "the array"} + at(parent) +
        " ends after " + std::to_string(parent.children) +
        (object ? " members" : " values") + ", the type reads more" +
        (object ? " (next: " + quoted(expected) + ")" : "")};
  auto& x = tree_.nodes[top.next];
  if (object && tree_.name(x) != expected)
    throw decode_fault{errc::member_mismatch,
                       "member #" + std::to_string(top.read) +
                         " of the object" + at(parent) + " is named " +
                         quoted(tree_.name(x)) + ", the type reads " +
                         quoted(expected) +
                         " there; cereal writes every member in order, "
                         "under its name"};
  top.next = x.end;
  ++top.read;
  position_ = x.offset;
  return x;
}

void checked_json_archive::wrong_kind(const json_node& x,
                                      const char* expected) {
  refuse_kind(x, expected);
}

void checked_json_archive::wrong_container(const char* member) {
  auto& top = levels_.back();
  auto& x = tree_.nodes[top.node];
  bool object = x.kind == json_node::object_value;
  std::string text = std::string{"found "} + kind_name(x) + at(x) + " at " +
                     path() + " where the type reads ";
  if (top.type != nullptr)
    text += demangle(*top.type);
  else
    text += object ? "a sequence, set or map" : "members";
  if (object)
    text += ", which cereal writes as an array (a map as an array of "
            "{\"key\", \"value\"} objects)";
  else
    text += ", which cereal writes as an object" +
            (member != nullptr ? " (first member " + quoted(member) + ")"
                               : std::string{});
  throw decode_fault{errc::member_mismatch,
                     text + "; the sender's type differs from the "
                            "receiver's, or its writer writes this type "
                            "otherwise than cereal"};
}

std::string checked_json_archive::path() const {
  std::string result;
  for (size_t i = 1; i < levels_.size(); ++i) {
    auto& parent = levels_[i - 1];
    result += '/';
    if (tree_.nodes[parent.node].kind == json_node::object_value)
      result += pointer_token(tree_.name(tree_.nodes[levels_[i].node]));
    else
      result += std::to_string(parent.read - 1);
  }
  return result.empty() ? "the top level" : result;
}

void checked_json_archive::startNode(const std::type_info& type,
                                     json_container expected) {
  auto& x = next_value();
  if (x.kind != json_node::object_value && x.kind != json_node::array_value)
    wrong_kind(x, "an object or an array");
  auto index = static_cast<uint32_t>(&x - tree_.nodes.data());
  auto& top = levels_.emplace_back(level{index, index + 1});
  top.type = &type;
  bool array = x.kind == json_node::array_value;
  if (expected != json_container::unknown &&
      array != (expected == json_container::array))
    wrong_container(nullptr);
}

void checked_json_archive::read_by_name() {
  auto& top = levels_.back();
  auto& x = tree_.nodes[top.node];
  if (x.kind != json_node::object_value)
    wrong_container(nullptr);
  // Names given twice are refused before anything is read.
  std::vector<std::string_view> names;
  names.reserve(x.children);
  for (auto i = top.node + 1; names.size() < x.children; i = tree_.nodes[i].end)
    names.push_back(tree_.name(tree_.nodes[i]));
  std::sort(names.begin(), names.end());
  if (auto twice = std::adjacent_find(names.begin(), names.end());
      twice != names.end())
    throw decode_fault{errc::duplicate_key, "the object" + at(x) +
                                              " names member " +
                                              quoted(*twice) + " twice"};
  top.by_name = true;
  top.next = top.node;
}

bool checked_json_archive::seek(std::string_view name) {
  auto& top = levels_.back();
  auto& x = tree_.nodes[top.node];
  uint32_t seen = 0;
  for (auto i = top.node + 1; seen < x.children; i = tree_.nodes[i].end) {
    ++seen;
    if (tree_.name(tree_.nodes[i]) == name) {
      top.next = i;
      return true;
    }
  }
  return false;
}

void checked_json_archive::finishNode() {
  auto top = levels_.back();
  auto& x = tree_.nodes[top.node];
  if (x.kind == json_node::array_value && !top.sized)
    wrong_container(nullptr);
  if (!top.by_name && top.read != x.children) {
    auto& first = tree_.nodes[top.next];
    bool object = x.kind == json_node::object_value;
    throw decode_fault{
      errc::member_mismatch,
      std::string{object ? "the object" : "the array"} + at(x) + " holds " +
        std::to_string(x.children) + (object ? " members" : " values") +
        ", the type reads " + std::to_string(top.read) +
        (object ? "; the first it does not read is " + quoted(tree_.name(first))
                : std::string{})};
  }
  position_ = x.offset;
  levels_.pop_back();
}

void checked_json_archive::finish() {
  finishNode();
}

void checked_json_archive::loadSize(cereal::size_type& size) {
  auto& top = levels_.back();
  auto& x = tree_.nodes[top.node];
  if (x.kind != json_node::array_value)
    wrong_container(nullptr);
  top.sized = true;
  size = x.children;
}

void checked_json_archive::loadValue(bool& x) {
  auto& v = next_value();
  if (v.kind != json_node::bool_value)
    wrong_kind(v, "a boolean");
  x = v.flag;
}

void checked_json_archive::loadValue(std::nullptr_t&) {
  auto& v = next_value();
  if (v.kind != json_node::null_value)
    wrong_kind(v, "null");
}

template <class F>
F checked_json_archive::load_float(const char* type) {
  auto& v = next_value();
  std::optional<F> result;
  std::string what;
  switch (v.kind) {
  case json_node::double_value:
    if constexpr (std::is_same_v<F, double>) {
      return v.number.d;
    } else {
      result = exact_narrow(v.number.d);
      what = number_text(v.number.d);
    }
    break;
  case json_node::negative_value:
    result = exact_float_of<F>(v.number.i);
    what = std::to_string(v.number.i);
    break;
  case json_node::unsigned_value:
    result = exact_float_of<F>(v.number.u);
    what = std::to_string(v.number.u);
    break;
  default:
    wrong_kind(v, "a number");
  }
  if (!result)
    throw decode_fault{errc::inexact_value,
                       inexact_text("the JSON number " + what + at(v), type)};
  return *result;
}

void checked_json_archive::loadValue(double& x) {
  x = load_float<double>("double");
}

void checked_json_archive::loadValue(float& x) {
  x = load_float<float>("float");
}

void checked_json_archive::loadValue(long double& x) {
  // cereal writes a long double as the text of its decimal digits.
  std::string text;
  loadValue(text);
  try {
    size_t used = 0;
    x = std::stold(text, &used);
    if (used == text.size())
      return;
  } catch (const std::exception&) {
    // refused below
  }
  throw decode_fault{errc::decode_failed,
                     "a long double is not a number: " + quoted(text) +
                       " (ending at offset " + std::to_string(position_) + ")"};
}

void checked_json_archive::loadValue(std::string& x) {
  auto& v = next_value();
  if (v.kind != json_node::string_value)
    wrong_kind(v, "a string");
  auto text = tree_.text(v);
  check_text(text, false, "cereal.json", json_text_fix,
             [&](size_t i) { return byte_of_string(i) + at(v); });
  x.assign(text.data(), text.size());
}

int64_t checked_json_archive::load_signed(int64_t lo, int64_t hi,
                                          const std::type_info& type) {
  auto& v = next_value();
  if (v.kind == json_node::negative_value && v.number.i >= lo)
    return v.number.i;
  if (v.kind == json_node::unsigned_value &&
      v.number.u <= static_cast<uint64_t>(hi))
    return static_cast<int64_t>(v.number.u);
  refuse_integer(v, type);
}

uint64_t checked_json_archive::load_unsigned(uint64_t hi,
                                             const std::type_info& type) {
  auto& v = next_value();
  if (v.kind == json_node::unsigned_value && v.number.u <= hi)
    return v.number.u;
  refuse_integer(v, type);
}

} // namespace ferry::serializers::detail
