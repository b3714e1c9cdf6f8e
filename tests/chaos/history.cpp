// Reading history files: see history.hpp for the format.
//
// Each line is checked against the layout of its event: the number of fixed
// fields, which of them are numbers or one of a few words, and whether the
// line ends in a free-text reason. Whether a file has its `end` is known
// only once it is read, so the last line is judged last: in a file without
// `end` it may be cut short by the kill, and is dropped when malformed or
// without its newline (history_log writes each line with its newline in one
// write(2), so a line without one did not make it whole).
#include "history.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>

namespace ferry::chaos {

namespace {

/// One fixed field of an event: its name, and what it may hold: `#` an
/// unsigned number, empty any word, otherwise one of the words separated by
/// `|`.
struct field_spec {
  std::string_view name;
  std::string_view allowed;
};

/// The layout of one event.
struct layout {
  std::string_view kind;
  std::vector<field_spec> fields;
  bool rest = false;
};

const std::vector<layout>& layouts() {
  static const std::vector<layout> all{
    {"start", {{"name", ""}, {"inc", ""}}, false},
    {"end", {}, false},
    {"link", {{"peer_name", ""}, {"epoch", ""}}, false},
    {"down", {{"peer_name", ""}}, true},
    {"req",
     {{"id", "#"},
      {"kind", "call|relay|object|local-object"},
      {"peer_name", ""},
      {"epoch", ""},
      {"timeout_ms", "#"},
      {"want", "#"}},
     false},
    // `ans ... ok` and, picked by its second field, `ans ... err`.
    {"ans", {{"id", "#"}, {"outcome", "ok|err"}, {"got", "#"}}, false},
    {"ans", {{"id", "#"}, {"outcome", "err"}}, true},
    {"send", {{"peer_name", ""}, {"epoch", ""}, {"seq", "#"}}, false},
    {"got",
     {{"sender_inc", ""}, {"epoch", ""}, {"seq", "#"}, {"payload", "ok|bad"}},
     false},
    {"serve", {{"from_inc", ""}, {"id", "#"}}, false},
    {"mon", {{"epoch", ""}, {"what", "down|exit"}}, true},
    {"rss", {{"phase", "warm|end"}, {"kb", "#"}}, false},
    {"store", {{"objects", "#"}}, false},
    {"fill", {{"bytes", "#"}}, false},
    {"unfill", {}, false},
    {"note", {}, true},
    // The entity members' events (entity_checks.hpp).
    {"eop", {{"op", ""}, {"key", ""}}, false},
    {"eack", {{"op", ""}}, false},
    {"eerr", {{"op", ""}}, true},
    {"act", {{"key", ""}, {"aid", ""}}, false},
    {"apply", {{"aid", ""}, {"op", ""}}, false},
    {"deact", {{"aid", ""}}, false},
    {"estate", {{"key", ""}, {"count", "#"}}, true},
  };
  return all;
}

bool allows(std::string_view allowed, std::string_view word) {
  if (allowed.empty())
    return true;
  if (allowed == "#")
    return parse_u64(word).has_value();
  while (!allowed.empty()) {
    auto bar = allowed.find('|');
    if (allowed.substr(0, bar) == word)
      return true;
    if (bar == std::string_view::npos)
      break;
    allowed.remove_prefix(bar + 1);
  }
  return false;
}

/// Splits a line into words at single spaces, one word at a time.
class words {
public:
  explicit words(std::string_view line) : line_(line), more_(!line.empty()) {}

  /// Returns whether any text is left (possibly empty, after a space).
  bool more() const { return more_; }

  /// Returns the next word (empty after two spaces); REQUIRES: `more()`.
  std::string_view next() {
    auto space = line_.find(' ', pos_);
    std::string_view word;
    if (space == std::string_view::npos) {
      word = line_.substr(pos_);
      pos_ = line_.size();
      more_ = false;
    } else {
      word = line_.substr(pos_, space - pos_);
      pos_ = space + 1;
    }
    return word;
  }

  /// Returns the text after the last word taken.
  std::string_view rest() const {
    return more_ ? line_.substr(pos_) : std::string_view{};
  }

private:
  std::string_view line_;
  size_t pos_ = 0;
  bool more_;
};

/// Returns the layout of event `kind`, or null for an unknown event. `in`
/// (a copy, at the fields) tells the two layouts of `ans` apart: a layout
/// whose second field allows exactly the second word wins.
const layout* find_layout(std::string_view kind, words in) {
  std::string_view second;
  if (in.more()) {
    in.next();
    if (in.more())
      second = in.next();
  }
  const layout* first = nullptr;
  for (auto& candidate : layouts()) {
    if (candidate.kind != kind)
      continue;
    if (first == nullptr)
      first = &candidate;
    if (candidate.fields.size() > 1 && candidate.fields[1].allowed == second)
      return &candidate;
  }
  return first;
}

/// Reads `line` into `e`; returns what is wrong with it, empty if nothing.
std::string parse_line(std::string_view line, event& e) {
  words in{line};
  if (!in.more())
    return "the line is empty";
  auto time = in.next();
  auto t = parse_u64(time);
  if (!t || *t > uint64_t{std::numeric_limits<int64_t>::max()})
    return "the time `" + std::string{time} + "` is not a number";
  if (!in.more())
    return "the event name is missing";
  auto kind = in.next();
  if (kind.empty())
    return "the event name is empty (two spaces in a row)";
  auto shape = find_layout(kind, in);
  if (shape == nullptr)
    return "unknown event `" + std::string{kind} + "`";
  for (auto& spec : shape->fields) {
    auto name = "the field `" + std::string{spec.name} + "`";
    if (!in.more())
      return name + " is missing";
    auto word = in.next();
    if (word.empty())
      return name + " is empty (two spaces in a row)";
    if (!allows(spec.allowed, word))
      return name + " is `" + std::string{word} + "`, not " +
             (spec.allowed == "#" ? std::string{"a number"}
                                  : "one of " + std::string{spec.allowed});
    e.fields.emplace_back(word);
  }
  if (shape->rest)
    e.rest = std::string{in.rest()};
  else if (in.more())
    return "text follows the last field";
  e.t_us = static_cast<int64_t>(*t);
  e.kind = std::string{kind};
  e.text = std::string{line};
  return {};
}

violation problem_at(const history& x, size_t line_no, const std::string& text,
                     const std::string& what) {
  auto where = "history " + x.file + " line " + std::to_string(line_no);
  violation v{"history",
              (x.inc.empty() ? where : x.inc + "'s " + where) + ": " + what,
              {}};
  v.lines.push_back(x.file + ":" + std::to_string(line_no) + ": " + text);
  return v;
}

} // namespace

std::vector<history> read_histories(const std::string& dir,
                                    const std::string& extension,
                                    std::vector<violation>& problems) {
  std::vector<history> out;
  for (auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != extension)
      continue;
    std::ifstream in{entry.path()};
    out.push_back(
      parse_history(in, entry.path().filename().string(), problems));
  }
  return out;
}

std::optional<uint64_t> parse_u64(std::string_view text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(),
                                   [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  uint64_t result = 0;
  auto [end, ec] =
    std::from_chars(text.data(), text.data() + text.size(), result);
  if (ec != std::errc{} || end != text.data() + text.size())
    return std::nullopt;
  return result;
}

std::string label(const history& x) {
  return x.inc.empty() ? x.file : x.inc;
}

std::string cite(const history& x, const event& e) {
  return x.file + ":" + std::to_string(e.line_no) + ": " + e.text;
}

void quote(violation& v, const history& x, const event& e) {
  if (v.lines.size() >= max_violation_lines)
    return;
  auto line = cite(x, e);
  if (std::find(v.lines.begin(), v.lines.end(), line) == v.lines.end())
    v.lines.push_back(std::move(line));
}

history parse_history(std::istream& in, const std::string& file,
                      std::vector<violation>& problems) {
  history result;
  result.file = file;
  std::vector<std::string> lines;
  bool last_has_newline = true;
  std::string line;
  bool readable = static_cast<bool>(in);
  while (std::getline(in, line)) {
    last_has_newline = !in.eof();
    lines.push_back(std::move(line));
  }
  if (!readable || in.bad())
    problems.push_back(
      {"history", "history " + file + " could not be read to its end", {}});
  bool line_one_broken = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto line_no = i + 1;
    event e;
    e.line_no = line_no;
    auto what = parse_line(lines[i], e);
    bool last = line_no == lines.size();
    if (last && !result.ended &&
        (!what.empty() || (!last_has_newline && e.kind != "end")))
      break; // cut short by the kill
    if (!what.empty()) {
      problems.push_back(
        problem_at(result, line_no, lines[i], "malformed line: " + what));
      line_one_broken = line_one_broken || line_no == 1;
      continue;
    }
    if (result.ended)
      problems.push_back(
        problem_at(result, line_no, lines[i], "a line after the `end` line"));
    if (e.kind == "start") {
      if (result.events.empty()) {
        result.name = e.fields[0];
        result.inc = e.fields[1];
      } else {
        problems.push_back(
          problem_at(result, line_no, lines[i], "a second `start` line"));
      }
    } else if (result.events.empty() && !line_one_broken) {
      problems.push_back(problem_at(result, line_no, lines[i],
                                    "the history does not open with `start`"));
    }
    if (!result.events.empty() && e.t_us < result.events.back().t_us)
      problems.push_back(
        problem_at(result, line_no, lines[i],
                   "the time runs backwards, from " +
                     std::to_string(result.events.back().t_us) + " to " +
                     std::to_string(e.t_us) + " us"));
    if (e.kind == "end")
      result.ended = true;
    result.events.push_back(std::move(e));
  }
  return result;
}

} // namespace ferry::chaos
