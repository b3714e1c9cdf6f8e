// transfer_table: frames held for the peer to pull (see
// transfer/transfer_table.hpp).
#include "transfer/transfer_table.hpp"

#include "ferry/errc.hpp"

namespace ferry::detail {

transfer_table::transfer_table(uint64_t chunk_size, std::string node_name,
                               std::string peer_name)
  : chunk_size_(chunk_size),
    node_name_(std::move(node_name)),
    peer_name_(std::move(peer_name)) {
  // nop
}

uint64_t transfer_table::add(std::shared_ptr<serializers::frame> frame) {
  lock_guard guard{mtx_};
  auto id = next_id_++;
  transfers_.emplace(id, held_transfer{std::move(frame)});
  return id;
}

void transfer_table::record(uint64_t seq, const std::vector<uint64_t>& ids) {
  if (ids.empty())
    return;
  lock_guard guard{mtx_};
  for (auto id : ids)
    by_message_.emplace_back(seq, id);
}

caf::expected<chunk_reply> transfer_table::serve(const chunk_request& req) {
  unique_lock guard{mtx_};
  auto i = transfers_.find(req.transfer);
  if (i == transfers_.end())
    return caf::make_error(errc::transfer_failed,
                           "node " + node_name_ + " holds no transfer " +
                             std::to_string(req.transfer) + " for node " +
                             peer_name_ + " (finished or link restarted)");
  auto frame = i->second.frame;
  auto bytes = frame->bytes();
  if (req.offset > bytes.size() || req.length > bytes.size() - req.offset)
    return caf::make_error(errc::transfer_failed,
                           "node " + peer_name_ + " asked for bytes " +
                             std::to_string(req.offset) + " to " +
                             std::to_string(req.offset + req.length) +
                             " of transfer " + std::to_string(req.transfer) +
                             ", which holds " + std::to_string(bytes.size()));
  if (req.length > chunk_size_ * 4)
    return caf::make_error(
      errc::transfer_failed,
      "node " + peer_name_ + " asked for a chunk of " +
        std::to_string(req.length) + " bytes, more than 4 times chunk-size (" +
        std::to_string(chunk_size_) + ") on node " + node_name_ +
        "; set the same chunk-size on both nodes");
  if (req.length > bytes.size() - i->second.served)
    return caf::make_error(
      errc::transfer_failed,
      "node " + peer_name_ + " asked for " + std::to_string(req.length) +
        " more bytes of transfer " + std::to_string(req.transfer) +
        ", of which " + std::to_string(i->second.served) + " of " +
        std::to_string(bytes.size()) +
        " bytes were served already; a node pulls "
        "each chunk once");
  i->second.served += req.length;
  guard.unlock();
  return chunk_reply{req.request,
                     wire_bytes{bytes.subspan(req.offset, req.length), frame}};
}

std::shared_ptr<serializers::frame> transfer_table::take_locked(uint64_t id) {
  auto i = transfers_.find(id);
  if (i == transfers_.end())
    return nullptr;
  auto frame = std::move(i->second.frame);
  transfers_.erase(i);
  return frame;
}

void transfer_table::finish(uint64_t id) {
  std::shared_ptr<serializers::frame> released; // dropped after the lock
  lock_guard guard{mtx_};
  released = take_locked(id);
}

void transfer_table::taken(uint64_t delivered) {
  // Normally released by transfer_done already.
  std::vector<std::shared_ptr<serializers::frame>> released; // after the lock
  lock_guard guard{mtx_};
  while (!by_message_.empty() && by_message_.front().first < delivered) {
    if (auto frame = take_locked(by_message_.front().second))
      released.push_back(std::move(frame));
    by_message_.pop_front();
  }
}

void transfer_table::clear() {
  decltype(transfers_) released; // dropped after the lock
  lock_guard guard{mtx_};
  released.swap(transfers_);
  by_message_.clear();
}

size_t transfer_table::size() const {
  lock_guard guard{mtx_};
  return transfers_.size();
}

} // namespace ferry::detail
