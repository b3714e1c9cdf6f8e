// lease_rules: see lease_rules.hpp.
#include "entities/lease_rules.hpp"

namespace ferry::detail::entities {

lease_decision decide_acquire(const lease_row& row, int64_t now_ms,
                              const std::string& owner,
                              std::chrono::milliseconds ttl,
                              std::chrono::milliseconds hand_off_grace) {
  lease_decision out;
  auto& grant = out.grant;
  grant.epoch = row.epoch;
  bool someone_holds = now_ms < row.expires_ms;
  if (someone_holds && row.holder != owner) {
    grant.holder = row.holder;
    grant.holder_left = std::chrono::milliseconds{row.expires_ms - now_ms};
    return out;
  }
  auto expires = now_ms + ttl.count();
  if (someone_holds) { // the owner's own lease: extended
    grant.held = true;
    auto write = row;
    write.expires_ms = expires;
    out.write = std::move(write);
    return out;
  }
  auto reserved_until = row.released_ms + hand_off_grace.count();
  if (!row.hand_to.empty() && row.hand_to != owner && now_ms < reserved_until) {
    grant.reserved_for = row.hand_to;
    grant.reserved_left = std::chrono::milliseconds{reserved_until - now_ms};
    return out;
  }
  grant.held = true;
  grant.taken = true;
  grant.previous = row.holder;
  grant.handed_off = !row.hand_to.empty() && row.hand_to == owner;
  if (row.holder != owner)
    grant.epoch = row.epoch + 1;
  out.write = lease_row{owner, grant.epoch, expires, {}, 0};
  return out;
}

} // namespace ferry::detail::entities
