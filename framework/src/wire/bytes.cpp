// wire_bytes: owned and viewed runs of bytes (see wire/bytes.hpp).
#include "wire/bytes.hpp"

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/vector_pool.hpp"

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

std::vector<std::byte> wire_bytes::unfilled(size_t n) {
  namespace sd = serializers::detail;
  auto result = sd::take_vector_unwritten<std::byte>(n);
  if (result.capacity() < n) {
    result.reserve(n);
    if (n >= sd::huge_page_advice_threshold)
      sd::advise_huge_pages(result.data(), n);
  }
  // A reused vector that held n bytes or more resizes without writing.
  result.resize(n);
  return result;
}

std::vector<std::byte> wire_bytes::take() {
  auto result = std::move(*owned_);
  *this = wire_bytes{};
  return result;
}

} // namespace ferry::detail
