// rate_history (see metrics/rate_history.hpp).

#include "metrics/rate_history.hpp"

namespace ferry::detail {

namespace {

/// `now - before` for a counter that only grows while its link lives: a
/// counter that went backwards started again from zero.
uint64_t grown(uint64_t now, uint64_t before) {
  return now >= before ? now - before : now;
}

template <class Map>
typename Map::mapped_type find_or(const Map& xs, const std::string& key) {
  auto i = xs.find(key);
  return i == xs.end() ? typename Map::mapped_type{} : i->second;
}

} // namespace

rate_history::link_counts rate_history::counts_of(const link_stats& x) {
  link_counts result;
  result.messages_sent = x.messages_sent;
  result.messages_received = x.messages_received;
  result.bytes_sent =
    x.bytes_inline_sent + x.bytes_spilled_sent + x.bytes_pulled_by_peer;
  result.bytes_received =
    x.bytes_inline_received + x.bytes_spilled_received + x.bytes_pulled;
  result.sent_by_family = x.sent_by_family;
  result.received_by_family = x.received_by_family;
  for (auto& [family, h] : x.encode_seconds)
    result.encode[family] = {h.count, h.sum};
  for (auto& [family, h] : x.decode_seconds)
    result.decode[family] = {h.count, h.sum};
  return result;
}

void rate_history::sample(const node_figures& x, int64_t now_ms) {
  std::map<std::string, link_counts> now;
  for (auto& link : x.links)
    now[link.peer] = counts_of(link);
  if (last_ms_ == 0 || now_ms <= last_ms_) {
    // The first sample (or a clock that went back): a base to count from.
    last_ = std::move(now);
    last_ms_ = now_ms;
    return;
  }
  auto seconds = static_cast<double>(now_ms - last_ms_) / 1000.0;
  auto rate = [seconds](uint64_t n) {
    return static_cast<double>(n) / seconds;
  };
  rate_sample out;
  out.unix_ms = now_ms;
  // Per family: sums over links of the counts' growth.
  std::map<std::string, std::pair<uint64_t, double>> encoded;
  std::map<std::string, std::pair<uint64_t, double>> decoded;
  links_.clear();
  for (auto& [peer, c] : now) {
    auto before = find_or(last_, peer);
    auto& r = links_[peer];
    r.messages_sent = rate(grown(c.messages_sent, before.messages_sent));
    r.messages_received =
      rate(grown(c.messages_received, before.messages_received));
    r.bytes_sent = rate(grown(c.bytes_sent, before.bytes_sent));
    r.bytes_received = rate(grown(c.bytes_received, before.bytes_received));
    for (auto& [family, n] : c.sent_by_family)
      out.families[family].sent +=
        rate(grown(n, find_or(before.sent_by_family, family)));
    for (auto& [family, n] : c.received_by_family)
      out.families[family].received +=
        rate(grown(n, find_or(before.received_by_family, family)));
    auto add = [](auto& into, const auto& now_xs, const auto& before_xs) {
      for (auto& [family, cs] : now_xs) {
        auto b = find_or(before_xs, family);
        auto n = grown(cs.first, b.first);
        if (n == 0)
          continue;
        auto sum = cs.first >= b.first ? cs.second - b.second : cs.second;
        into[family].first += n;
        into[family].second += sum > 0 ? sum : 0;
      }
    };
    add(encoded, c.encode, before.encode);
    add(decoded, c.decode, before.decode);
  }
  for (auto& [family, cs] : encoded)
    out.families[family].encode_seconds =
      cs.second / static_cast<double>(cs.first);
  for (auto& [family, cs] : decoded)
    out.families[family].decode_seconds =
      cs.second / static_cast<double>(cs.first);
  if (x.store) {
    store_fill fill;
    fill.capacity = x.store->capacity;
    fill.used = x.store->bytes_used;
    fill.pinned = x.store->bytes_pinned;
    fill.spilled = x.store->bytes_spilled;
    fill.objects = x.store->objects;
    out.store = fill;
  }
  samples_.push_back(std::move(out));
  while (samples_.size() > capacity_)
    samples_.pop_front();
  last_ = std::move(now);
  last_ms_ = now_ms;
}

} // namespace ferry::detail
