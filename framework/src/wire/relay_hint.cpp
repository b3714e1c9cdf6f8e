// relay_hint: encoding (see wire/relay_hint.hpp).
#include "wire/relay_hint.hpp"

namespace ferry::detail {

std::vector<std::byte> encode_relay_hint(const relay_hint& x) {
  std::vector<std::byte> out;
  out.reserve(8 + x.from.size());
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::byte>((x.key >> (8 * i)) & 0xff));
  for (char c : x.from)
    out.push_back(static_cast<std::byte>(c));
  return out;
}

std::optional<relay_hint> decode_relay_hint(std::span<const std::byte> data) {
  if (data.size() < 8 || data.size() > 8 + max_relay_name)
    return std::nullopt;
  relay_hint result;
  for (int i = 0; i < 8; ++i)
    result.key |= static_cast<uint64_t>(data[i]) << (8 * i);
  if (result.key == 0)
    return std::nullopt;
  result.from.assign(reinterpret_cast<const char*>(data.data()) + 8,
                     data.size() - 8);
  return result;
}

} // namespace ferry::detail
