// json_writer (see metrics/json_writer.hpp).

#include "metrics/json_writer.hpp"

#include <charconv>
#include <cmath>

namespace ferry::detail {

void append_json_string(std::string& out, std::string_view x) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (char c : x) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '<':
    case '>':
    case '&':
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 0xf];
      break;
    default:
      if (u < 0x20 || u == 0x7f) {
        out += "\\u00";
        out += hex[u >> 4];
        out += hex[u & 0xf];
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

void json_writer::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!empty_.empty()) {
    if (!empty_.back())
      out_ += ',';
    empty_.back() = false;
  }
}

json_writer& json_writer::begin_object() {
  separate();
  out_ += '{';
  empty_.push_back(true);
  return *this;
}

json_writer& json_writer::end_object() {
  out_ += '}';
  empty_.pop_back();
  return *this;
}

json_writer& json_writer::begin_array() {
  separate();
  out_ += '[';
  empty_.push_back(true);
  return *this;
}

json_writer& json_writer::end_array() {
  out_ += ']';
  empty_.pop_back();
  return *this;
}

json_writer& json_writer::key(std::string_view name) {
  separate();
  append_json_string(out_, name);
  out_ += ':';
  after_key_ = true;
  return *this;
}

json_writer& json_writer::value(std::string_view x) {
  separate();
  append_json_string(out_, x);
  return *this;
}

json_writer& json_writer::value(bool x) {
  separate();
  out_ += x ? "true" : "false";
  return *this;
}

json_writer& json_writer::value(uint64_t x) {
  separate();
  out_ += std::to_string(x);
  return *this;
}

json_writer& json_writer::value(int64_t x) {
  separate();
  out_ += std::to_string(x);
  return *this;
}

json_writer& json_writer::value(double x) {
  if (!std::isfinite(x))
    return null();
  separate();
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x);
  out_.append(buf, ec == std::errc{} ? end : buf);
  return *this;
}

json_writer& json_writer::null() {
  separate();
  out_ += "null";
  return *this;
}

std::string json_writer::take() {
  empty_.clear();
  after_key_ = false;
  return std::exchange(out_, {});
}

} // namespace ferry::detail
