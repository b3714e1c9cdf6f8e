// out_frame: building a frame to send (see wire/out_frame.hpp).
#include "wire/out_frame.hpp"

namespace ferry::detail::wire {

out_frame::out_frame(frame_type type) : type_(type) {
  owned_.reserve(64);
  owned_.resize(header_size);
}

out_frame out_frame::raw(std::span<const std::byte> bytes) {
  out_frame result;
  result.owned_.assign(bytes.begin(), bytes.end());
  return result;
}

void out_frame::append(std::span<const std::byte> bytes,
                       const std::shared_ptr<const void>& keep_alive) {
  if (bytes.size() < copy_below || !keep_alive) {
    owned_.insert(owned_.end(), bytes.begin(), bytes.end());
    return;
  }
  views_.push_back(view{owned_.size(), bytes});
  viewed_ += bytes.size();
  // Runs of one buffer (a payload's frames) share their keep-alive.
  if (keep_.empty() || keep_.back() != keep_alive)
    keep_.push_back(keep_alive);
}

void out_frame::finish() {
  frame_header header;
  header.length = size() - header_size;
  header.type = type_;
  put_header(std::span<std::byte, header_size>{owned_.data(), header_size},
             header);
}

void out_frame::pieces(std::vector<std::span<const std::byte>>& out) const {
  size_t at = 0;
  for (auto& x : views_) {
    if (x.after > at)
      out.emplace_back(owned_.data() + at, x.after - at);
    out.push_back(x.bytes);
    at = x.after;
  }
  if (owned_.size() > at)
    out.emplace_back(owned_.data() + at, owned_.size() - at);
}

std::vector<std::byte> out_frame::flatten() const {
  std::vector<std::span<const std::byte>> parts;
  pieces(parts);
  std::vector<std::byte> result;
  result.reserve(size());
  for (auto& x : parts)
    result.insert(result.end(), x.begin(), x.end());
  return result;
}

} // namespace ferry::detail::wire
