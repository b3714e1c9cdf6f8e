// landing_buffer: writing pulled chunks into their frame (see
// transfer/landing_buffer.hpp).
#include "transfer/landing_buffer.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/vector_pool.hpp"

#include <cstring>

namespace ferry::detail {

landing_buffer::landing_buffer(uint64_t size) {
  buf_ = serializers::detail::take_vector_unwritten<std::byte>(size);
  if (buf_.capacity() >= size) {
    // Already faulted in as far as it was written: that part counts as
    // prepared (shrinking writes nothing).
    if (buf_.size() > size)
      buf_.resize(size);
    return;
  }
  buf_.reserve(size);
  serializers::detail::advise_huge_pages(buf_.data(), size);
}

landing_buffer::landing_buffer(store::object_builder object)
  : object_(std::move(object)) {
  // nop
}

void landing_buffer::prepare(uint64_t end) {
  lock_guard guard{mtx_};
  // Zero-filled ahead of the chunk (the puller prepares a chunk as it asks
  // for it): the fault happens here, not in the reading thread's copy, and
  // never for bytes no chunk was asked for. Within the reserved capacity, so
  // the bytes never move under a landing chunk.
  if (!object_ && end > buf_.size() && end <= buf_.capacity())
    buf_.resize(end);
}

bool landing_buffer::land(uint64_t offset, std::span<const std::byte> bytes) {
  lock_guard guard{mtx_};
  auto frame = target();
  if (offset > frame.size() || bytes.size() > frame.size() - offset)
    return false;
  if (!bytes.empty())
    std::memcpy(frame.data() + offset, bytes.data(), bytes.size());
  return true;
}

std::span<std::byte> landing_buffer::place(uint64_t offset, uint64_t length) {
  lock_guard guard{mtx_};
  auto frame = target();
  if (offset > frame.size() || length > frame.size() - offset)
    return {};
  return frame.subspan(static_cast<size_t>(offset),
                       static_cast<size_t>(length));
}

std::vector<std::byte> landing_buffer::take() {
  lock_guard guard{mtx_};
  auto out = std::move(buf_);
  buf_ = {};
  return out;
}

std::span<const std::byte> landing_buffer::object_bytes() {
  lock_guard guard{mtx_};
  if (!object_)
    return {};
  return object_.bytes();
}

caf::expected<store::object_ref> landing_buffer::seal() {
  lock_guard guard{mtx_};
  if (!object_)
    return caf::make_error(errc::transfer_failed,
                           "a pulled store handle landed in memory, not in "
                           "a store object");
  return object_.seal();
}

} // namespace ferry::detail
