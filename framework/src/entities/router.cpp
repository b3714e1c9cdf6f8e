// router: this node's way to each shard (see entities/router.hpp).
#include "entities/router.hpp"

#include "entities/protocol.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_cast.hpp>
#include <caf/make_message.hpp>

namespace ferry::detail::entities {

caf::actor routes::way_of(uint32_t shard) const {
  auto uid = shard < owner.size() ? owner[shard] : uint64_t{0};
  if (uid != 0)
    if (auto i = hosts.find(uid); i != hosts.end() && i->second)
      return i->second;
  return self_host;
}

void refuse_call(caf::mailbox_element& what, caf::error err,
                 caf::execution_unit* ctx) {
  if (!what.mid.is_request() || !what.sender)
    return;
  what.sender->enqueue(caf::make_mailbox_element(
                         nullptr, what.mid.response_id(), {}, std::move(err)),
                       ctx);
}

router::router(uint32_t shards, uint64_t max_buffered, const clock& time,
               clock::duration flush_timeout)
  : max_buffered_(max_buffered),
    time_(time),
    flush_timeout_(flush_timeout),
    lanes_(std::make_unique<lane[]>(shards)),
    shards_(shards) {
  // nop
}

router::~router() = default;

void router::set_routes(std::shared_ptr<const routes> x) {
  routes_.store(std::move(x));
}

std::shared_ptr<const routes> router::current() const {
  return routes_.load();
}

void router::route(uint32_t shard, caf::mailbox_element_ptr what,
                   caf::execution_unit* ctx) {
  if (shard >= shards_) {
    refuse_call(*what,
                caf::make_error(errc::entity_unavailable,
                                "no shard " + std::to_string(shard)),
                ctx);
    return;
  }
  auto& l = lanes_[shard];
  // The routes are read under the lane's lock: once `barrier` returned, no
  // message goes the way older routes said.
  lock_guard guard{l.mtx};
  auto r = routes_.load();
  if (!r) {
    refuse_call(*what,
                caf::make_error(errc::entity_unavailable,
                                "this node's entities have stopped"),
                ctx);
    return;
  }
  auto next = r->way_of(shard);
  if (l.flushing) {
    if (l.waiting.size() >= max_buffered_) {
      refuse_call(
        *what,
        caf::make_error(errc::entity_unavailable,
                        "shard " + std::to_string(shard) + " is moving and " +
                          std::to_string(max_buffered_) +
                          " messages for it wait here already "
                          "(ferry.entities.max-buffered); try again later"),
        ctx);
      return;
    }
    l.waiting.push_back(std::move(what));
    held_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!l.via || l.via == next) {
    l.via = next;
    next->enqueue(std::move(what), ctx);
    return;
  }
  // The way changes: what went the old way is delivered first.
  l.flushing = true;
  l.token = next_token_.fetch_add(1, std::memory_order_relaxed) + 1;
  l.since = time_.now();
  // From this node's host, which hears `ready`.
  l.via->enqueue(caf::make_mailbox_element(
                   caf::actor_cast<caf::strong_actor_ptr>(r->self_host),
                   caf::make_message_id(), {}, flush_atom::value, shard,
                   r->self, l.token),
                 ctx);
  l.waiting.push_back(std::move(what));
  held_.fetch_add(1, std::memory_order_relaxed);
}

void router::finish_flush(uint32_t shard, lane& l, caf::execution_unit* ctx) {
  auto r = routes_.load();
  l.flushing = false;
  l.via = r ? r->way_of(shard) : caf::actor{};
  auto waiting = std::move(l.waiting);
  l.waiting.clear();
  held_.fetch_sub(waiting.size(), std::memory_order_relaxed);
  for (auto& x : waiting) {
    if (l.via)
      l.via->enqueue(std::move(x), ctx);
    else
      refuse_call(*x,
                  caf::make_error(errc::entity_unavailable,
                                  "this node's entities have stopped"),
                  ctx);
  }
}

void router::ready(uint32_t shard, uint64_t token, caf::execution_unit* ctx) {
  if (shard >= shards_)
    return;
  auto& l = lanes_[shard];
  lock_guard guard{l.mtx};
  if (l.flushing && l.token == token)
    finish_flush(shard, l, ctx);
}

void router::expire(caf::execution_unit* ctx) {
  auto now = time_.now();
  for (uint32_t shard = 0; shard < shards_; ++shard) {
    auto& l = lanes_[shard];
    lock_guard guard{l.mtx};
    if (l.flushing && now - l.since >= flush_timeout_)
      finish_flush(shard, l, ctx);
  }
}

void router::gone(const caf::actor& way, caf::execution_unit* ctx) {
  for (uint32_t shard = 0; shard < shards_; ++shard) {
    auto& l = lanes_[shard];
    lock_guard guard{l.mtx};
    if (l.via != way)
      continue;
    if (l.flushing)
      finish_flush(shard, l, ctx);
    else
      l.via = nullptr; // nothing to flush: the next message goes the new way
  }
}

void router::barrier() {
  for (uint32_t shard = 0; shard < shards_; ++shard) {
    auto& l = lanes_[shard];
    lock_guard guard{l.mtx};
  }
}

uint64_t router::held() const {
  return held_.load(std::memory_order_relaxed);
}

} // namespace ferry::detail::entities
