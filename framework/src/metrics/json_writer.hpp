// json_writer: JSON text written in one pass, for the node's HTTP API.
//
// Calls nest as the document does: `begin_object`, then `key` and a value
// (or a nested object or array) per member, then `end_object`; commas are
// the writer's business. Strings are escaped for JSON and also for being
// read inside an HTML page: quotes, backslashes, control characters, and
// `<`, `>`, `&` as \u escapes, so a node name holding `</script>` stays
// text wherever the JSON goes. A double that is not finite is written as
// `null` (JSON has no NaN). Bytes that are not UTF-8 pass as they are;
// readers replace them.
//
// Thread-safety: one writer per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::detail {

class json_writer {
public:
  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();

  /// The next member's name (inside an object only).
  json_writer& key(std::string_view name);

  json_writer& value(std::string_view x);
  json_writer& value(const char* x) { return value(std::string_view{x}); }
  json_writer& value(const std::string& x) {
    return value(std::string_view{x});
  }
  json_writer& value(bool x);
  json_writer& value(uint64_t x);
  json_writer& value(int64_t x);
  json_writer& value(int x) { return value(static_cast<int64_t>(x)); }
  json_writer& value(double x);
  json_writer& null();

  /// `key(name)` then `value(x)`.
  template <class T>
  json_writer& field(std::string_view name, const T& x) {
    key(name);
    return value(x);
  }

  /// Returns the text written so far and empties the writer.
  std::string take();

private:
  /// Writes the comma a value needs before it.
  void separate();

  std::string out_;
  /// Per open object or array: whether it has no element yet.
  std::vector<bool> empty_;
  bool after_key_ = false;
};

/// Appends `x` to `out` as a JSON string (quotes included), escaped as the
/// writer escapes.
void append_json_string(std::string& out, std::string_view x);

} // namespace ferry::detail
