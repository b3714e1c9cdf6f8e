// wire_bytes: reading and writing a run of bytes (see wire/bytes.hpp).
#include "wire/bytes.hpp"

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/vector_pool.hpp"

#include <string>

namespace ferry::detail {

wire_bytes::wire_bytes(std::vector<std::byte> bytes)
  : owned_(serializers::detail::shared_pooled(std::move(bytes))) {
  view_ = {owned_->data(), owned_->size()};
  keep_alive_ = owned_;
}

wire_bytes wire_bytes::take_from(caf::binary_deserializer& source, size_t n) {
  std::vector<std::byte> buf;
  serializers::detail::assign_fresh(buf, next_bytes(source, n).data(), n);
  source.skip(n);
  return wire_bytes{std::move(buf)};
}

std::vector<std::byte> wire_bytes::take() {
  auto result = std::move(*owned_);
  *this = wire_bytes{};
  return result;
}

caf::error wire_bytes::save(caf::serializer& sink) const {
  uint64_t n = view_.size();
  if (auto err = sink(n))
    return err;
  if (n == 0)
    return caf::none;
  return sink.apply_raw(n, const_cast<std::byte*>(view_.data()));
}

caf::error wire_bytes::load(caf::deserializer& source) {
  uint64_t n = 0;
  if (auto err = source(n))
    return err;
  return load_body(source, n);
}

caf::error wire_bytes::load_body(caf::deserializer& source, uint64_t n) {
  auto bin = dynamic_cast<caf::binary_deserializer*>(&source);
  if (bin != nullptr && n > bin->remaining())
    return caf::make_error(caf::sec::end_of_stream,
                           "ferry wire_bytes claims " + std::to_string(n)
                             + " bytes but the message holds only "
                             + std::to_string(bin->remaining()));
  if (bin != nullptr) {
    *this = take_from(*bin, n);
    return caf::none;
  }
  std::vector<std::byte> buf(n);
  if (n > 0)
    if (auto err = source.apply_raw(n, buf.data()))
      return err;
  *this = wire_bytes{std::move(buf)};
  return caf::none;
}

} // namespace ferry::detail
