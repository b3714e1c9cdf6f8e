// Checking a chaos run's histories: see invariants.hpp for the invariants.
//
// `check` indexes the run (histories by incarnation id, `link` lines by
// epoch), runs the checks of each history (history_checks.hpp), then the
// checks across histories here. The indexes point into the histories given
// and live only during `check`; the violations copy what they quote. Times
// compare across files: every process of the run reads the same
// CLOCK_MONOTONIC.
#include "invariants.hpp"

#include "history_checks.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace ferry::chaos {

namespace {

using violations = std::vector<violation>;

/// What the checks across histories look up.
struct run_index {
  /// Histories by incarnation id (the first, if an id repeats).
  std::map<std::string, const history*> by_inc;
  /// `link` lines by epoch.
  std::map<std::string, std::vector<at>> links;

  /// Returns the history of incarnation `inc`, or null.
  const history* find(const std::string& inc) const {
    auto i = by_inc.find(inc);
    return i == by_inc.end() ? nullptr : i->second;
  }
};

/// Returns the first `kind` event of `h` whose leading fields are `fields`.
const event* find_event(const history* h, std::string_view kind,
                        const std::vector<std::string>& fields) {
  if (h == nullptr)
    return nullptr;
  for (auto& e : h->events)
    if (is(e, kind, fields.size()) &&
        std::equal(fields.begin(), fields.end(), e.fields.begin()))
      return &e;
  return nullptr;
}

void quote(violation& v, const at& x) {
  quote(v, *x.h, *x.e);
}

/// Returns the index of the run; reports an incarnation id in two files.
run_index make_index(const std::vector<history>& histories, violations& out) {
  run_index result;
  for (auto& h : histories) {
    for (auto& e : h.events)
      if (is(e, "link", 2))
        result.links[field(e, 1)].push_back({&h, &e});
    if (h.inc.empty())
      continue;
    auto [i, added] = result.by_inc.emplace(h.inc, &h);
    if (added)
      continue;
    violation v{"history",
                "incarnation " + h.inc + " has two histories, " +
                  i->second->file + " and " + h.file,
                {}};
    for (auto x : {i->second, &h})
      if (!x->events.empty())
        quote(v, *x, x->events.front());
    out.push_back(std::move(v));
  }
  return result;
}

/// Reports an epoch logged by other than its two ends, once each.
void check_epochs(const run_index& index, violations& out) {
  for (auto& [epoch, ends] : index.links) {
    std::string what;
    if (ends.size() > 2 || (ends.size() == 2 && ends[0].h == ends[1].h))
      what = "epoch " + epoch + " has " + str(ends.size()) +
             " link lines; only its two ends log it, once each";
    else if (ends.size() == 2 && (field(*ends[0].e, 0) != ends[1].h->name ||
                                  field(*ends[1].e, 0) != ends[0].h->name))
      what = "the ends of epoch " + epoch +
             " do not name each other: " + label(*ends[0].h) + " links to " +
             field(*ends[0].e, 0) + ", " + label(*ends[1].h) + " to " +
             field(*ends[1].e, 0);
    else
      continue;
    violation v{"history", what, {}};
    for (auto& end : ends)
      quote(v, end);
    out.push_back(std::move(v));
  }
}

/// Checks `no-duplicates`.
void check_duplicates(const std::vector<history>& histories,
                      const run_index& index, violations& out) {
  std::map<std::pair<std::string, uint64_t>, std::vector<at>> serves;
  std::map<std::tuple<std::string, std::string, uint64_t>, std::vector<at>>
    arrivals;
  for (auto& h : histories)
    for (auto& e : h.events)
      if (is(e, "serve", 2))
        serves[{field(e, 0), number(e, 1)}].push_back({&h, &e});
      else if (is(e, "got", 4))
        arrivals[{field(e, 0), field(e, 1), number(e, 2)}].push_back({&h, &e});
  for (auto& [key, list] : serves) {
    if (list.size() < 2)
      continue;
    auto from = index.find(key.first);
    auto req = find_event(from, "req", {str(key.second)});
    violation v{"no-duplicates",
                (req != nullptr
                   ? describe(*from, *req)
                   : "request " + str(key.second) + " of " + key.first) +
                  " was served " + str(list.size()) + " times",
                {}};
    if (req != nullptr)
      quote(v, *from, *req);
    for (auto& x : list)
      quote(v, x);
    out.push_back(std::move(v));
  }
  for (auto& [key, list] : arrivals) {
    if (list.size() < 2)
      continue;
    auto& [sender, epoch, seq] = key;
    auto from = index.find(sender);
    violation v{"no-duplicates",
                "one-way message " + str(seq) + " of " + sender + " on epoch " +
                  epoch + " arrived " + str(list.size()) + " times",
                {}};
    if (from != nullptr)
      for (auto& e : from->events)
        if (is(e, "send", 3) && field(e, 1) == epoch && number(e, 2) == seq)
          quote(v, *from, e);
    for (auto& x : list)
      quote(v, x);
    out.push_back(std::move(v));
  }
}

/// The one-way messages of one sender incarnation on one epoch.
struct stream {
  std::vector<const event*> sends;
  std::vector<at> arrivals;
};

/// Checks one stream's arrivals against its sends; see `per-pair-order` in
/// invariants.hpp. Lives for one stream, pointing into the run.
class stream_check {
public:
  stream_check(const std::string& sender, const std::string& epoch,
               const stream& s, const history& from, const run_index& index,
               violations& out)
    : sender_(sender),
      epoch_(epoch),
      s_(s),
      from_(from),
      out_(out) {
    if (auto i = index.links.find(epoch); i != index.links.end())
      links_ = &i->second;
  }

  void run() {
    take_sends();
    take_arrivals();
    check_missing();
  }

private:
  void report(std::string what, std::initializer_list<at> lines) {
    violation v{"per-pair-order", std::move(what), {}};
    for (auto& x : lines)
      if (x.e != nullptr)
        quote(v, x);
    out_.push_back(std::move(v));
  }

  at sent_at(uint64_t seq) const {
    auto i = sent_.find(seq);
    return {&from_, i == sent_.end() ? nullptr : i->second};
  }

  /// Returns the first `link` line of the epoch in `h`, or in another
  /// history than `from_` when `h` is null.
  at link_of(const history* h) const {
    if (links_ != nullptr)
      for (auto& x : *links_)
        if (h != nullptr ? x.h == h : x.h != &from_)
          return x;
    return {};
  }

  std::string message(uint64_t seq) const {
    return "one-way message " + str(seq) + " of " + sender_ + " on epoch " +
           epoch_;
  }

  void take_sends() {
    bool misnumbered = false;
    for (auto e : s_.sends) {
      auto seq = number(*e, 2);
      if (seq <= last_sent_ && !misnumbered) {
        misnumbered = true;
        report(sender_ + " numbered " + message(seq) + " after message " +
                 str(last_sent_),
               {sent_at(last_sent_), {&from_, e}});
      }
      sent_.emplace(seq, e);
      last_sent_ = std::max(last_sent_, seq);
    }
  }

  void take_arrivals() {
    std::set<const history*> receivers;
    for (auto& x : s_.arrivals) {
      if (receivers.insert(x.h).second && receivers.size() == 2)
        report("one-way messages of " + sender_ + " on epoch " + epoch_ +
                 " arrived at two incarnations, " + label(*s_.arrivals[0].h) +
                 " and " + label(*x.h),
               {s_.arrivals[0], x});
      auto seq = number(*x.e, 2);
      if (!received_.emplace(seq, x).second)
        continue; // a repeat: no-duplicates reports it
      if (sent_.count(seq) == 0 && (from_.ended || seq <= last_sent_))
        report(label(*x.h) + " received " + message(seq) + ", which " +
                 sender_ + " never sent",
               {x});
      if (highest_.e != nullptr && seq < number(*highest_.e, 2))
        report(label(*x.h) + " received " + message(seq) + " after message " +
                 field(*highest_.e, 2),
               {highest_, x, sent_at(number(*highest_.e, 2)), sent_at(seq)});
      else
        highest_ = x;
    }
  }

  /// Reports each run of consecutive sends that never arrived, unless it
  /// is the tail of an epoch that ended.
  void check_missing() {
    std::vector<std::vector<uint64_t>> runs{{}};
    for (auto& [seq, e] : sent_)
      if (received_.count(seq) == 0)
        runs.back().push_back(seq);
      else if (!runs.back().empty())
        runs.emplace_back();
    auto top = highest_.e != nullptr ? number(*highest_.e, 2) : 0;
    auto receiver_link = link_of(nullptr);
    bool receiver_dead = receiver_link.h == nullptr || !receiver_link.h->ended;
    for (auto& x : s_.arrivals)
      receiver_dead = receiver_dead || !x.h->ended;
    for (auto& run : runs) {
      if (run.empty())
        continue;
      auto first = run.front();
      auto last = run.back();
      auto& peer = field(*sent_[first], 0);
      auto which = run.size() == 1 ? "message " + str(first)
                                   : "messages " + str(first) + " to " +
                                       str(last) + " (" + str(run.size()) + ")";
      auto to = receiver_link.h != nullptr ? label(*receiver_link.h) : peer;
      auto lost = "one-way " + which + " of " + sender_ + " to " + peer +
                  " on epoch " + epoch_ + " never arrived at " + to;
      auto after = received_.lower_bound(first);
      auto previous =
        after == received_.begin() ? at{} : std::prev(after)->second;
      if (last < top) {
        auto next = received_.upper_bound(last)->second;
        report(lost + ", though the later message " + field(*next.e, 2) +
                 " did",
               {previous, sent_at(first), sent_at(last), next});
      } else if (from_.ended && !receiver_dead && !ended_on_sender(peer)) {
        report(lost + ", though the epoch did not end: both ends exited " +
                 "cleanly and " + sender_ + " logged no `down " + peer +
                 "` after the epoch began",
               {link_of(&from_), previous, sent_at(first), sent_at(last),
                receiver_link});
      }
    }
  }

  /// Returns whether the sender logged `down <peer>` after the epoch began
  /// (its `link` line, or its first send when it logged no link).
  bool ended_on_sender(const std::string& peer) const {
    auto link = link_of(&from_);
    auto began =
      link.e != nullptr ? link.e->line_no : s_.sends.front()->line_no;
    for (auto& e : from_.events)
      if (e.line_no > began && is(e, "down", 1) && field(e, 0) == peer)
        return true;
    return false;
  }

  const std::string& sender_;
  const std::string& epoch_;
  const stream& s_;
  const history& from_;
  const std::vector<at>* links_ = nullptr;
  violations& out_;
  std::map<uint64_t, const event*> sent_;
  uint64_t last_sent_ = 0;
  std::map<uint64_t, at> received_;
  at highest_;
};

/// Checks `per-pair-order` of every stream; reports arrivals from an
/// incarnation without a history.
void check_streams(const std::vector<history>& histories,
                   const run_index& index, violations& out) {
  std::map<std::pair<std::string, std::string>, stream> streams;
  for (auto& h : histories)
    for (auto& e : h.events)
      if (is(e, "send", 3))
        streams[{h.inc, field(e, 1)}].sends.push_back(&e);
      else if (is(e, "got", 4))
        streams[{field(e, 0), field(e, 1)}].arrivals.push_back({&h, &e});
  for (auto& [key, s] : streams) {
    auto& [sender, epoch] = key;
    if (auto from = index.find(sender); from != nullptr) {
      stream_check{sender, epoch, s, *from, index, out}.run();
    } else if (!s.arrivals.empty()) {
      violation v{"history",
                  label(*s.arrivals[0].h) + " received one-way messages of " +
                    sender + " on epoch " + epoch + ", which has no history",
                  {}};
      quote(v, s.arrivals[0]);
      out.push_back(std::move(v));
    }
  }
}

} // namespace

std::vector<violation> check(const std::vector<history>& histories,
                             const check_options& options) {
  violations out;
  auto index = make_index(histories, out);
  check_epochs(index, out);
  for (auto& h : histories) {
    check_requests(h, options, out);
    check_payloads(h, out);
    check_monitors(h, out);
    check_store(h, out);
    check_rss(h, options, out);
  }
  check_duplicates(histories, index, out);
  check_streams(histories, index, out);
  return out;
}

std::string render(const violation& x) {
  auto result = "[" + x.invariant + "] " + x.what;
  for (auto& line : x.lines)
    result += "\n    " + line;
  return result;
}

namespace {

/// Returns `reason` up to its second colon ("ferry_fw: link_down"), or up to
/// its first space when it has fewer colons.
std::string error_name(const std::string& reason) {
  auto first = reason.find(':');
  auto second = first == std::string::npos ? first : reason.find(':', first + 1);
  if (second != std::string::npos)
    return reason.substr(0, second);
  return reason.substr(0, reason.find(' '));
}

/// Returns `x` with two decimals.
std::string ratio(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

} // namespace

summary summarize(const std::vector<history>& histories) {
  summary result;
  std::set<std::string> epochs;
  for (auto& h : histories) {
    ++result.incarnations;
    result.killed += h.ended ? 0 : 1;
    uint64_t warm = 0;
    uint64_t end = 0;
    for (auto& e : h.events) {
      if (e.kind == "req") {
        ++result.requests;
        auto& kind = field(e, 1);
        result.objects += kind == "object" || kind == "local-object" ? 1 : 0;
      } else if (e.kind == "ans") {
        ++(field(e, 1) == "ok" ? result.answers_ok : result.answers_err);
        if (field(e, 1) == "err")
          ++result.errors[error_name(e.rest)];
      } else if (e.kind == "rss") {
        (field(e, 0) == "warm" ? warm : end) = number(e, 1);
      } else if (e.kind == "down") {
        ++result.link_ends;
      } else if (e.kind == "mon") {
        ++result.watch_messages;
      } else if (e.kind == "send") {
        ++result.one_way_sent;
      } else if (e.kind == "got") {
        ++result.one_way_got;
      } else if (e.kind == "link") {
        epochs.insert(field(e, 1));
      }
    }
    if (warm > 0 && end > 0)
      result.rss_ratio = std::max(result.rss_ratio,
                                  static_cast<double>(end) / warm);
  }
  result.epochs = epochs.size();
  return result;
}

std::string render(const summary& x) {
  return str(x.incarnations) + " incarnations (" + str(x.killed) +
         " killed), " + str(x.epochs) + " link epochs, " + str(x.requests) +
         " requests (" + str(x.answers_ok) + " answered ok, " +
         str(x.answers_err) + " with an error; objects: " + str(x.objects) +
         "), " + str(x.one_way_sent) + " one-way messages sent, " +
         str(x.one_way_got) + " received, " + str(x.link_ends) +
         " link ends seen, " + str(x.watch_messages) +
         " down and exit messages of watched actors, resident memory at the "
         "end at most " + ratio(x.rss_ratio) + " times its size after warm-up";
}

std::string render_errors(const summary& x) {
  std::string out;
  for (auto& [name, n] : x.errors)
    out += (out.empty() ? "" : ", ") + name + " " + str(n);
  return out.empty() ? "none" : out;
}

} // namespace ferry::chaos
