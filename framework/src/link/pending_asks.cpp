// pending_asks: matching answers to requests (see link/pending_asks.hpp).
#include "link/pending_asks.hpp"

#include "ferry/errc.hpp"

#include <atomic>
#include <utility>
#include <vector>

namespace ferry::detail {

namespace {

std::atomic<uint64_t> next_request{1};

} // namespace

uint64_t pending_asks::add(kind k, callback cb) {
  return add_entry(entry{k, std::move(cb), nullptr, 0, 0});
}

uint64_t pending_asks::add(callback cb, std::shared_ptr<landing_buffer> target,
                           uint64_t offset, uint64_t length) {
  return add_entry(
    entry{kind::chunk, std::move(cb), std::move(target), offset, length});
}

uint64_t pending_asks::add_entry(entry x) {
  auto id = next_request.fetch_add(1, std::memory_order_relaxed);
  answer refused;
  {
    lock_guard guard{mtx_};
    if (!closed_) {
      asks_.emplace(id, std::move(x));
      return id;
    }
    refused.error = closed_why_;
  }
  // The link is down: the ask fails at once, as those it had failed.
  if (x.cb)
    x.cb(std::move(refused));
  return 0;
}

net::chunk_place pending_asks::place(uint64_t id, uint64_t length) {
  std::shared_ptr<landing_buffer> target;
  uint64_t offset = 0;
  {
    lock_guard guard{mtx_};
    auto i = asks_.find(id);
    if (i == asks_.end() || !i->second.target || i->second.length != length)
      return {};
    target = i->second.target;
    offset = i->second.offset;
  }
  auto bytes = target->place(offset, length);
  if (bytes.size() != length)
    return {};
  return {bytes, std::move(target)};
}

bool pending_asks::complete(uint64_t id, answer x, kind k, bool failed) {
  callback cb;
  kind asked = kind::actor;
  {
    lock_guard guard{mtx_};
    auto i = asks_.find(id);
    if (i == asks_.end())
      return false;
    cb = std::move(i->second.cb);
    asked = i->second.k;
    asks_.erase(i);
  }
  if (!failed && asked != k) {
    auto name = [](kind x) {
      return x == kind::actor ? "an actor id" : "a chunk";
    };
    x = answer{};
    x.error = caf::make_error(errc::decode_failed,
                              std::string{"the peer answered a request for "} +
                                name(asked) + " with " + name(k));
  }
  if (cb)
    cb(std::move(x));
  return true;
}

void pending_asks::forget(uint64_t id) {
  lock_guard guard{mtx_};
  asks_.erase(id);
}

void pending_asks::fail_all(const caf::error& why) {
  std::unordered_map<uint64_t, entry> failed;
  {
    lock_guard guard{mtx_};
    if (!closed_)
      closed_why_ = why;
    closed_ = true;
    failed.swap(asks_);
  }
  for (auto& [id, x] : failed)
    if (x.cb) {
      answer a;
      a.error = why;
      x.cb(std::move(a));
    }
}

size_t pending_asks::size() const {
  lock_guard guard{mtx_};
  return asks_.size();
}

} // namespace ferry::detail
