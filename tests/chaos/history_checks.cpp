// The invariants checked within one history: see history_checks.hpp.
//
// Each check walks the history once, building its own table (requests by
// id, watchers by epoch, ...) of pointers into the history; the table goes
// with the call and the violations copy what they quote.
#include "history_checks.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace ferry::chaos {

namespace {

using violations = std::vector<violation>;

std::string ms(int64_t us) {
  char buf[48];
  if (us % 1000 == 0)
    std::snprintf(buf, sizeof buf, "%lld ms",
                  static_cast<long long>(us / 1000));
  else
    std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(us) / 1000);
  return buf;
}

std::string trim(const std::string& x) {
  auto first = x.find_first_not_of(" \t");
  if (first == std::string::npos)
    return {};
  return x.substr(first, x.find_last_not_of(" \t") - first + 1);
}

void check_answer(const history& h, const event& req, const event& ans,
                  const check_options& options, violations& out) {
  auto timeout_ms =
    static_cast<int64_t>(std::min<uint64_t>(number(req, 4), 1'000'000'000'000));
  auto waited = ans.t_us - req.t_us;
  if (auto i = options.paused.find(h.inc); i != options.paused.end())
    for (auto [from, to] : i->second)
      waited -= std::max<int64_t>(0, std::min(to, ans.t_us)
                                       - std::max(from, req.t_us));
  if (waited > (timeout_ms + options.timeout_slack_ms) * 1000) {
    violation v{"within-timeout",
                describe(h, req) + " was answered after " + ms(waited) +
                  ", past its timeout of " + ms(timeout_ms * 1000) + " plus " +
                  ms(options.timeout_slack_ms * 1000) + " of slack",
                {}};
    quote(v, h, req);
    quote(v, h, ans);
    out.push_back(std::move(v));
  }
  if (field(ans, 1) == "err") {
    auto reason = trim(ans.rest);
    if (reason.empty() || reason == "none" || reason == "unknown") {
      violation v{"typed-error",
                  describe(h, req) + " failed " +
                    (reason.empty()
                       ? std::string{"without a reason"}
                       : "with reason `" + reason + "`, which names no error"),
                  {}};
      quote(v, h, req);
      quote(v, h, ans);
      out.push_back(std::move(v));
    }
  } else if (parse_u64(field(ans, 2)) != parse_u64(field(req, 5))) {
    violation v{"checksum",
                describe(h, req) + " was answered with checksum " +
                  field(ans, 2) + ", not the " + field(req, 5) + " it wants",
                {}};
    quote(v, h, req);
    quote(v, h, ans);
    out.push_back(std::move(v));
  }
}

} // namespace

const std::string& field(const event& e, size_t i) {
  static const std::string none;
  return i < e.fields.size() ? e.fields[i] : none;
}

uint64_t number(const event& e, size_t i) {
  return parse_u64(field(e, i)).value_or(0);
}

bool is(const event& e, std::string_view kind, size_t fields) {
  return e.kind == kind && e.fields.size() >= fields;
}

std::string str(uint64_t x) {
  return std::to_string(x);
}

std::string describe(const history& h, const event& req) {
  auto text = label(h) + " request " + field(req, 0) + " (" + field(req, 1);
  if (field(req, 1) != "local-object")
    text += " to " + field(req, 2) + " on epoch " + field(req, 3);
  return text + ")";
}

void check_requests(const history& h, const check_options& options,
                    violations& out) {
  struct request {
    const event* req = nullptr;
    std::vector<const event*> answers;
  };
  std::map<uint64_t, request> requests;
  for (auto& e : h.events) {
    if (is(e, "req", 6)) {
      auto& r = requests[number(e, 0)];
      if (r.req == nullptr) {
        r.req = &e;
        continue;
      }
      violation v{"answered-once",
                  label(h) + " sent request " + field(e, 0) + " twice",
                  {}};
      quote(v, h, *r.req);
      quote(v, h, e);
      out.push_back(std::move(v));
    } else if (is(e, "ans", 2)) {
      auto i = requests.find(number(e, 0));
      if (i == requests.end()) {
        violation v{"answered-once",
                    label(h) + " got an answer to request " + field(e, 0) +
                      ", which it never sent",
                    {}};
        quote(v, h, e);
        out.push_back(std::move(v));
        continue;
      }
      i->second.answers.push_back(&e);
      check_answer(h, *i->second.req, e, options, out);
    }
  }
  for (auto& [id, r] : requests) {
    auto n = r.answers.size();
    if (n == 1 || (n == 0 && !h.ended))
      continue;
    violation v{
      "answered-once",
      describe(h, *r.req) +
        (n == 0 ? " was never answered, though " + label(h) + " exited cleanly"
                : " was answered " + str(n) + " times"),
      {}};
    quote(v, h, *r.req);
    for (auto ans : r.answers)
      quote(v, h, *ans);
    if (n == 0)
      quote(v, h, h.events.back());
    out.push_back(std::move(v));
  }
}

void check_payloads(const history& h, violations& out) {
  for (auto& e : h.events) {
    if (!is(e, "got", 4) || field(e, 3) != "bad")
      continue;
    violation v{"checksum",
                label(h) + " received one-way message " + field(e, 2) + " of " +
                  field(e, 0) + " on epoch " + field(e, 1) +
                  " with a payload that does not match its checksum",
                {}};
    quote(v, h, e);
    out.push_back(std::move(v));
  }
}

void check_monitors(const history& h, violations& out) {
  struct watch {
    const event* link = nullptr;
    std::vector<const event*> down;
    std::vector<const event*> exit;
  };
  std::map<std::string, watch> epochs;
  for (auto& e : h.events)
    if (is(e, "link", 2) && epochs[field(e, 1)].link == nullptr)
      epochs[field(e, 1)].link = &e;
  for (auto& e : h.events) {
    if (!is(e, "mon", 2))
      continue;
    auto i = epochs.find(field(e, 0));
    if (i == epochs.end()) {
      auto watcher = field(e, 1) == "down" ? "monitor got a down"
                                           : "linked actor got an exit";
      violation v{"monitors",
                  label(h) + "'s " + watcher + " message for epoch " +
                    field(e, 0) + ", which " + label(h) + " never linked",
                  {}};
      quote(v, h, e);
      out.push_back(std::move(v));
      continue;
    }
    (field(e, 1) == "down" ? i->second.down : i->second.exit).push_back(&e);
  }
  for (auto& [epoch, w] : epochs) {
    auto& peer = field(*w.link, 0);
    const event* down = nullptr;
    for (auto& e : h.events)
      if (e.line_no > w.link->line_no && is(e, "down", 1) &&
          field(e, 0) == peer) {
        down = &e;
        break;
      }
    bool required = h.ended && down != nullptr;
    for (auto& [kind, got] :
         {std::pair{"down", &w.down}, std::pair{"exit", &w.exit}}) {
      std::string watcher =
        std::string{kind} == "down" ? "monitor" : "linked actor";
      std::string what;
      if (got->size() > 1)
        what = label(h) + "'s " + watcher + " of " + peer + " on epoch " +
               epoch + " received " + str(got->size()) + " " + kind +
               " messages";
      else if (got->empty() && required)
        what = label(h) + " exited cleanly after its link to " + peer +
               " on epoch " + epoch + " went down, but its " + watcher +
               " received no " + kind + " message";
      else
        continue;
      violation v{"monitors", what, {}};
      quote(v, h, *w.link);
      if (down != nullptr)
        quote(v, h, *down);
      for (auto e : *got)
        quote(v, h, *e);
      out.push_back(std::move(v));
    }
  }
}

void check_store(const history& h, violations& out) {
  if (!h.ended)
    return;
  std::vector<const event*> stores;
  std::vector<const event*> fills;
  for (auto& e : h.events) {
    if (is(e, "store", 1))
      stores.push_back(&e);
    else if (is(e, "fill", 1) || e.kind == "unfill")
      fills.push_back(&e);
  }
  if (stores.empty() && !h.events.empty()) {
    violation v{"store-drains",
                label(h) + " exited cleanly without logging its store's "
                           "object count",
                {}};
    quote(v, h, h.events.back());
    out.push_back(std::move(v));
  }
  for (auto e : stores) {
    if (number(*e, 0) == 0)
      continue;
    violation v{"store-drains",
                label(h) + "'s store held " + field(*e, 0) +
                  " objects after the workload drained, not 0",
                {}};
    quote(v, h, *e);
    for (auto fill : fills)
      quote(v, h, *fill);
    out.push_back(std::move(v));
  }
}

void check_rss(const history& h, const check_options& options,
               violations& out) {
  const event* warm = nullptr;
  const event* end = nullptr;
  for (auto& e : h.events)
    if (is(e, "rss", 2))
      (field(e, 0) == "warm" ? warm : end) = &e;
  if (warm == nullptr || end == nullptr)
    return;
  auto a = static_cast<double>(number(*warm, 1));
  auto b = static_cast<double>(number(*end, 1));
  if (b <= options.rss_factor * a)
    return;
  char ratio[64];
  std::snprintf(ratio, sizeof ratio, "%.2f times", a > 0 ? b / a : 0.0);
  char allowed[64];
  std::snprintf(allowed, sizeof allowed, "more than the allowed %g times",
                options.rss_factor);
  violation v{"rss",
              label(h) + "'s resident memory grew from " + field(*warm, 1) +
                " KiB after warm-up to " + field(*end, 1) +
                " KiB at the end, " + (a > 0 ? ratio + std::string{", "} : "") +
                allowed,
              {}};
  quote(v, h, *warm);
  quote(v, h, *end);
  out.push_back(std::move(v));
}

} // namespace ferry::chaos
