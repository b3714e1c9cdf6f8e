// lane_transport: writing a link's frames into a ring (see
// lane/lane_transport.hpp).
#include "lane/lane_transport.hpp"

#include "thread_role.hpp"

#include "clock.hpp"

#include "ferry/errc.hpp"

#include <algorithm>
#include <cstring>

namespace ferry::detail {

namespace {

using lane::ring;

/// How long a waiting sender sleeps at most before it looks again.
constexpr std::chrono::milliseconds room_poll{100};

} // namespace

lane_transport::lane_transport(std::shared_ptr<ring> out,
                               std::shared_ptr<transport> beside)
  : out_(std::move(out)),
    beside_(std::move(beside)) {
  // nop
}

void lane_transport::send(wire::out_frame&& frame) {
  lock_guard guard{mtx_};
  if (broken_ || !pump_locked()) {
    if (!broken_)
      keep_locked(frame);
    return;
  }
  pieces_.clear();
  frame.pieces(pieces_);
  switch (out_->try_write(pieces_)) {
  case ring::status::done:
    return;
  case ring::status::full: {
    // Longer than the room (or than half the ring): as much as fits now,
    // the length first; the rest waits in the backlog.
    uint64_t total = 0;
    for (auto& piece : pieces_)
      total += piece.size();
    std::byte length[8];
    ring::encode_length(total, length);
    pieces_.insert(pieces_.begin(), std::span<const std::byte>{length});
    stream_locked(pieces_);
    return;
  }
  case ring::status::closed:
    broken_locked();
    return;
  default:
    broken_locked(ring::status::corrupt);
  }
}

void lane_transport::stream_locked(
  std::span<const std::span<const std::byte>> parts) {
  for (size_t i = 0; i < parts.size(); ++i) {
    uint64_t put = 0;
    auto st = out_->put_some(parts[i], put);
    if (st == ring::status::done)
      continue;
    if (st != ring::status::full) {
      broken_locked(st);
      return;
    }
    pending rest;
    for (size_t j = i; j < parts.size(); ++j) {
      auto from = parts[j].subspan(j == i ? static_cast<size_t>(put) : 0);
      rest.bytes.insert(rest.bytes.end(), from.begin(), from.end());
    }
    backlog_.push_back(std::move(rest));
    backlog_pending_->store(true);
    return;
  }
}

void lane_transport::keep_locked(const wire::out_frame& frame) {
  // The record as the ring carries it: its length, then the frame.
  pending whole;
  whole.bytes.resize(8 + frame.size());
  std::byte length[8];
  ring::encode_length(frame.size(), length);
  std::memcpy(whole.bytes.data(), length, sizeof(length));
  pieces_.clear();
  frame.pieces(pieces_);
  auto* at = whole.bytes.data() + sizeof(length);
  for (auto& piece : pieces_) {
    if (!piece.empty())
      std::memcpy(at, piece.data(), piece.size());
    at += piece.size();
  }
  backlog_.push_back(std::move(whole));
  backlog_pending_->store(true);
}

bool lane_transport::pump_locked() {
  while (!backlog_.empty()) {
    auto& front = backlog_.front();
    uint64_t put = 0;
    auto st = out_->put_some(
      std::span<const std::byte>{front.bytes}.subspan(front.done), put);
    front.done += static_cast<size_t>(put);
    if (st == ring::status::done) {
      backlog_.pop_front();
    } else if (st == ring::status::full) {
      break;
    } else {
      broken_locked(st);
      return false;
    }
  }
  backlog_pending_->store(!backlog_.empty());
  return backlog_.empty();
}

void lane_transport::broken_locked(ring::status st) {
  auto first = !broken_;
  broken_ = true;
  backlog_.clear();
  backlog_pending_->store(false);
  // Counters out of range: the peer broke the ring; without this the link
  // would stay up, its frames dropped.
  if (first && st == ring::status::corrupt)
    beside_->fail(caf::make_error(
      errc::lane_failed, "the peer broke same-host lane " + out_->name() +
                           " (its read counter out of range); the link "
                           "goes down"));
}

void lane_transport::fail(caf::error why) {
  out_->close();
  {
    lock_guard guard{mtx_};
    broken_locked();
  }
  beside_->fail(std::move(why));
}

void lane_transport::await_room(uint64_t bytes) {
  auto want = std::min(bytes, out_->capacity() / 2);
  for (;;) {
    auto need = want;
    if (backlog_pending_->load()) {
      lock_guard guard{mtx_};
      if (broken_)
        return;
      if (!pump_locked()) {
        auto& front = backlog_.front();
        need = std::min<uint64_t>(want + front.bytes.size() - front.done,
                                  out_->capacity() / 2);
      }
    }
    auto st = out_->await_room(need, room_poll);
    if (st == ring::status::full)
      continue;
    if (st != ring::status::done || !backlog_pending_->load())
      return;
  }
}

void lane_transport::drain_backlog() {
  lock_guard guard{mtx_};
  if (!broken_)
    pump_locked();
}

void lane_transport::close(bool drain) {
  // An orderly end writes what the backlog holds first (for at most
  // `linger`; a thread that may not wait writes what fits now).
  if (drain) {
    auto deadline = clock::steady().now() + linger;
    for (;;) {
      {
        lock_guard guard{mtx_};
        if (broken_ || pump_locked())
          break;
      }
      if (!thread_role::may_wait_for_room() ||
          clock::steady().now() >= deadline)
        break;
      static_cast<void>(out_->await_room(1, std::chrono::milliseconds{10}));
    }
  }
  // The peer's reader still takes what was written; a sender waiting for
  // room wakes.
  out_->close();
  {
    lock_guard guard{mtx_};
    broken_locked();
  }
  beside_->close(drain);
}

} // namespace ferry::detail
