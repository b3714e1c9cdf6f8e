// wire_bytes: owned and viewed runs of bytes (see wire/bytes.hpp).
#include "wire/bytes.hpp"

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/vector_pool.hpp"

#include <algorithm>

namespace ferry::detail {

wire_bytes::wire_bytes(std::vector<std::byte> bytes)
  : owned_(serializers::detail::shared_pooled(std::move(bytes))) {
  view_ = {owned_->data(), owned_->size()};
  keep_alive_ = owned_;
}

wire_bytes wire_bytes::copy_of(std::span<const std::byte> bytes) {
  std::vector<std::byte> buf;
  serializers::detail::assign_fresh(buf, bytes.data(), bytes.size());
  return wire_bytes{std::move(buf)};
}

std::vector<std::byte> wire_bytes::take() {
  auto result = std::move(*owned_);
  *this = wire_bytes{};
  return result;
}

filling_buffer::filling_buffer(size_t n) : n_(n) {
  namespace sd = serializers::detail;
  buf_ = sd::take_vector_unwritten<std::byte>(n);
  if (buf_.capacity() >= n) {
    // Faulted in as far as it was written before: that part is writable
    // at once (shrinking writes nothing).
    if (buf_.size() > n)
      buf_.resize(n);
    return;
  }
  buf_.clear();
  buf_.reserve(n);
  if (n >= sd::huge_page_advice_threshold)
    sd::advise_huge_pages(buf_.data(), n);
}

std::span<std::byte> filling_buffer::room() {
  if (done_ == n_)
    return {};
  if (buf_.size() < n_ && buf_.size() < done_ + step)
    buf_.resize(std::min(n_, done_ + step));
  return std::span<std::byte>{buf_}.subspan(done_);
}

} // namespace ferry::detail
