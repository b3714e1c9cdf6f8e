// The entity workload's invariants: see entity_checks.hpp. One pass over
// the histories indexes operations, activations and stored states; each
// invariant is then a loop over that index. Violations quote the history
// lines that show them (history.hpp's `quote`).
#include "entity_checks.hpp"

#include "history_checks.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace ferry::chaos {

namespace {

using violations = std::vector<violation>;

/// One activation: its account and the span of its applies.
struct activation {
  std::string key;
  at begun;
  at first;
  at last;
};

/// One account's stored operations, as the checker read them.
struct stored {
  std::vector<std::string> ops;
  at read;
};

struct entity_index {
  /// Operation id -> account and its `eop`.
  std::map<std::string, std::pair<std::string, at>> sent;
  /// Operation id -> its `eack`.
  std::map<std::string, at> acked;
  /// Activation id -> the activation.
  std::map<std::string, activation> activations;
  /// Account -> its stored operations.
  std::map<std::string, stored> states;
};

void add(violation& v, const at& x) {
  if (x.h != nullptr && x.e != nullptr)
    quote(v, *x.h, *x.e);
}

entity_index make_index(const std::vector<history>& histories,
                        violations& out) {
  entity_index index;
  for (auto& h : histories) {
    for (auto& e : h.events) {
      at here{&h, &e};
      if (is(e, "eop", 2)) {
        auto [i, fresh] =
          index.sent.try_emplace(field(e, 0), std::pair{field(e, 1), here});
        if (!fresh) {
          violation v{"history", "operation " + field(e, 0) + " sent twice",
                      {}};
          add(v, i->second.second);
          add(v, here);
          out.push_back(std::move(v));
        }
      } else if (is(e, "eack", 1)) {
        index.acked.try_emplace(field(e, 0), here);
      } else if (is(e, "act", 2)) {
        index.activations[field(e, 1)] = {field(e, 0), here, {}, {}};
      } else if (is(e, "apply", 2)) {
        auto a = index.activations.find(field(e, 0));
        if (a == index.activations.end()) {
          violation v{"history",
                      label(h) + " applied " + field(e, 1)
                        + " in activation " + field(e, 0)
                        + ", which never began",
                      {}};
          add(v, here);
          out.push_back(std::move(v));
          continue;
        }
        if (a->second.first.e == nullptr)
          a->second.first = here;
        a->second.last = here;
      } else if (is(e, "estate", 2)) {
        stored s;
        s.read = here;
        std::istringstream words{e.rest};
        for (std::string op; words >> op;)
          s.ops.push_back(op);
        if (s.ops.size() != number(e, 1)) {
          violation v{"history",
                      "the state of " + field(e, 0) + " says "
                        + field(e, 1) + " operations and lists "
                        + str(s.ops.size()),
                      {}};
          add(v, here);
          out.push_back(std::move(v));
        }
        index.states[field(e, 0)] = std::move(s);
      }
    }
  }
  return index;
}

void check_single_activation(const entity_index& index, violations& out) {
  std::map<std::string, std::vector<const activation*>> by_key;
  for (auto& [aid, a] : index.activations)
    if (a.first.e != nullptr)
      by_key[a.key].push_back(&a);
  for (auto& [key, spans] : by_key) {
    std::sort(spans.begin(), spans.end(), [](auto* x, auto* y) {
      return x->first.e->t_us < y->first.e->t_us;
    });
    // The activation that applied last among those begun before.
    const activation* latest = nullptr;
    for (auto* a : spans) {
      if (latest != nullptr && a->first.e->t_us <= latest->last.e->t_us) {
        violation v{"single-activation",
                    "account " + key + ": activation "
                      + field(*a->begun.e, 1) + " of " + label(*a->first.h)
                      + " applied at " + std::to_string(a->first.e->t_us)
                      + " us while activation " + field(*latest->begun.e, 1)
                      + " of " + label(*latest->first.h)
                      + " applied from "
                      + std::to_string(latest->first.e->t_us) + " to "
                      + std::to_string(latest->last.e->t_us) + " us",
                    {}};
        add(v, latest->begun);
        add(v, latest->first);
        add(v, latest->last);
        add(v, a->begun);
        add(v, a->first);
        out.push_back(std::move(v));
      }
      if (latest == nullptr || a->last.e->t_us > latest->last.e->t_us)
        latest = a;
    }
  }
}

void check_durable(const entity_index& index, violations& out) {
  std::set<std::string> unread;
  for (auto& [op, ack] : index.acked) {
    auto sent = index.sent.find(op);
    if (sent == index.sent.end())
      continue; // its `eop` is the line a kill cut short
    auto& key = sent->second.first;
    auto state = index.states.find(key);
    if (state == index.states.end()) {
      if (unread.insert(key).second) {
        violation v{"acknowledged-saves-durable",
                    "account " + key + " got acknowledged operations (" + op
                      + " the first) but was not read at the end",
                    {}};
        add(v, sent->second.second);
        add(v, ack);
        out.push_back(std::move(v));
      }
      continue;
    }
    auto& ops = state->second.ops;
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) {
      violation v{"acknowledged-saves-durable",
                  "operation " + op + " to account " + key
                    + " was acknowledged but is not stored ("
                    + str(ops.size()) + " operations are)",
                  {}};
      add(v, sent->second.second);
      add(v, ack);
      add(v, state->second.read);
      out.push_back(std::move(v));
    }
  }
}

/// Splits `<inc>/<n>` into the incarnation and n (0 when malformed).
std::pair<std::string, uint64_t> split_op(const std::string& op) {
  auto slash = op.rfind('/');
  if (slash == std::string::npos)
    return {op, 0};
  return {op.substr(0, slash), parse_u64(op.substr(slash + 1)).value_or(0)};
}

void check_stored(const entity_index& index, violations& out) {
  for (auto& [key, state] : index.states) {
    std::set<std::string> seen;
    std::map<std::string, std::string> last_of; // incarnation -> last op
    for (auto& op : state.ops) {
      if (!seen.insert(op).second) {
        violation v{"no-double-apply",
                    "account " + key + " stores operation " + op + " twice",
                    {}};
        add(v, state.read);
        out.push_back(std::move(v));
        continue;
      }
      auto sent = index.sent.find(op);
      if (sent != index.sent.end() && sent->second.first != key) {
        violation v{"no-double-apply",
                    "account " + key + " stores operation " + op
                      + ", which was sent to " + sent->second.first,
                    {}};
        add(v, sent->second.second);
        add(v, state.read);
        out.push_back(std::move(v));
      }
      auto [inc, n] = split_op(op);
      auto& before = last_of[inc];
      if (!before.empty() && split_op(before).second >= n) {
        violation v{"entity-order",
                    "account " + key + " stores " + op + " after " + before
                      + ": " + inc + " sent them the other way round",
                    {}};
        add(v, state.read);
        out.push_back(std::move(v));
      }
      before = op;
    }
  }
}

} // namespace

std::vector<violation> check_entities(const std::vector<history>& histories) {
  violations out;
  auto index = make_index(histories, out);
  check_single_activation(index, out);
  check_durable(index, out);
  check_stored(index, out);
  return out;
}

entity_summary summarize_entities(const std::vector<history>& histories) {
  entity_summary x;
  for (auto& h : histories)
    for (auto& e : h.events) {
      if (e.kind == "eop")
        ++x.ops;
      else if (e.kind == "eack")
        ++x.acked;
      else if (e.kind == "eerr")
        ++x.failed_calls;
      else if (e.kind == "act")
        ++x.activations;
      else if (e.kind == "apply")
        ++x.applies;
      else if (e.kind == "estate") {
        ++x.accounts_read;
        x.stored += number(e, 1);
      }
    }
  return x;
}

std::string render(const entity_summary& x) {
  return str(x.ops) + " operations sent, " + str(x.acked) + " acknowledged, "
         + str(x.failed_calls) + " calls failed and sent again, "
         + str(x.activations) + " activations applied " + str(x.applies)
         + " times, " + str(x.accounts_read) + " accounts read at the end "
         + "holding " + str(x.stored) + " operations";
}

} // namespace ferry::chaos
