// lane_transport: writing a link's frames into a ring (see
// lane/lane_transport.hpp).
#include "lane/lane_transport.hpp"

namespace ferry::detail {

lane_transport::lane_transport(std::shared_ptr<lane::ring> out,
                               std::shared_ptr<transport> beside)
  : out_(std::move(out)), beside_(std::move(beside)) {
  // nop
}

void lane_transport::send(wire::out_frame&& frame) {
  auto wait = may_wait();
  std::lock_guard<std::mutex> guard{mtx_};
  if (!backlog_.empty())
    drain_locked(wait);
  if (!backlog_.empty()) {
    backlog_.push_back(frame.flatten());
    return;
  }
  pieces_.clear();
  frame.pieces(pieces_);
  auto st = wait ? out_->write(pieces_) : out_->try_write(pieces_);
  if (st == lane::ring::status::full) {
    backlog_.push_back(frame.flatten());
    backlog_pending_->store(true);
  }
  // Closed or broken: the link is going down, and what comes after is
  // dropped as a closed connection drops it.
}

void lane_transport::drain_locked(bool wait) {
  while (!backlog_.empty()) {
    std::span<const std::byte> piece{backlog_.front()};
    auto st = wait ? out_->write({&piece, 1}) : out_->try_write({&piece, 1});
    if (st == lane::ring::status::full)
      break;
    if (st == lane::ring::status::done)
      backlog_.pop_front();
    else
      backlog_.clear();
  }
  backlog_pending_->store(!backlog_.empty());
}

void lane_transport::drain_backlog() {
  std::lock_guard<std::mutex> guard{mtx_};
  drain_locked(false);
}

void lane_transport::close(bool drain) {
  // First, so a sender waiting for room in the ring (holding the lock)
  // wakes; the peer's reader still takes what was written.
  out_->close();
  beside_->close(drain);
}

} // namespace ferry::detail
