#include "ferry/serializers/payload.hpp"

#include "ferry/serializers/detail/error.hpp"
#include "ferry/serializers/detail/little_endian.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <type_traits>

namespace ferry::serializers::detail {

caf::error make_error(errc code, std::string what) {
  return caf::make_error(code, std::move(what));
}

std::string demangle_name(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name{
    abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free};
  if (status == 0 && name)
    return name.get();
  return mangled;
}

std::string demangle(const std::type_info& type) {
  return demangle_name(type.name());
}

std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

} // namespace ferry::serializers::detail

namespace ferry::serializers {

namespace {

/// Writes the header format into memory sized for it.
class header_writer {
public:
  explicit header_writer(std::byte* out) : out_(out) {
    // nop
  }

  void put(uint64_t x, int bytes) {
    out_ = detail::put_le(out_, x, static_cast<size_t>(bytes));
  }

  void put_string(const std::string& x) {
    put(x.size(), 2);
    if (!x.empty())
      std::memcpy(out_, x.data(), x.size());
    out_ += x.size();
  }

private:
  std::byte* out_;
};

// Reads the header format. Every read checks the remaining input first.
class header_reader {
public:
  header_reader(std::span<const std::byte> in, const limits& lim,
                size_t pos = 0)
    : in_(in),
      lim_(lim),
      pos_(pos) {}

  bool read(uint64_t& x, int bytes) {
    if (in_.size() - pos_ < static_cast<size_t>(bytes))
      return fail(errc::truncated_frame, "header ends inside an integer");
    x = detail::get_le(in_.data() + pos_, static_cast<size_t>(bytes));
    pos_ += bytes;
    return true;
  }

  bool read_string(std::string& x, const char* what, bool printable_only) {
    uint64_t n = 0;
    if (!read(n, 2))
      return false;
    if (n > lim_.max_name_bytes)
      return fail(errc::length_out_of_range,
                  std::string{what} + " is " + std::to_string(n) +
                    " bytes, more than limits::max_name_bytes (" +
                    std::to_string(lim_.max_name_bytes) + ")");
    if (in_.size() - pos_ < n)
      return fail(errc::truncated_frame,
                  std::string{what} + " claims " + std::to_string(n) +
                    " bytes but only " + std::to_string(in_.size() - pos_) +
                    " remain");
    auto first = reinterpret_cast<const char*>(in_.data() + pos_);
    auto lowest = printable_only ? 0x21 : 0x20;
    for (size_t i = 0; i < n; ++i) {
      auto u = static_cast<unsigned char>(first[i]);
      if (u < lowest || u > 0x7e)
        return fail(errc::malformed_header,
                    std::string{what} + " holds a byte that is not printable "
                                        "ASCII");
    }
    x.assign(first, n);
    pos_ += n;
    return true;
  }

  bool fail(errc code, std::string what) {
    // A header above this end's limits is well-formed: only a malformed one
    // says anything about the sender.
    auto limit =
      code == errc::payload_too_large || code == errc::length_out_of_range;
    err_ =
      detail::make_error(code, "payload header, offset " +
                                 std::to_string(pos_) + ": " + std::move(what) +
                                 (limit ? ""
                                        : "; the sender is not a "
                                          "compatible ferry node or "
                                          "the bytes are corrupt"));
    return false;
  }

  size_t pos() const noexcept { return pos_; }

  caf::error& err() noexcept { return err_; }

private:
  std::span<const std::byte> in_;
  const limits& lim_;
  size_t pos_;
  caf::error err_;
};

/// Bytes of the key of a header naming `x`'s family, type and stand-in.
size_t key_size(const payload_header& x) {
  return 3 + 2 + x.family.size() + 2 + x.type_name.size() + 2 +
         x.stand_in.size() + 4;
}

void write_key(const payload_header& x, std::byte* out) {
  out[0] = std::byte{'F'};
  out[1] = std::byte{'S'};
  out[2] = std::byte{header_format_version};
  header_writer w{out + 3};
  w.put_string(x.family);
  w.put_string(x.type_name);
  w.put_string(x.stand_in);
  w.put(x.version, 4);
}

/// Writes the frame count and `sizes` at `out`.
template <class Sizes>
void write_sizes(const Sizes& sizes, std::byte* out) {
  header_writer w{out};
  w.put(sizes.size(), 4);
  for (auto& n : sizes) {
    if constexpr (std::is_same_v<std::decay_t<decltype(n)>, frame>)
      w.put(n.size(), 8);
    else
      w.put(n, 8);
  }
}

} // namespace

std::vector<std::byte> encode_header(const payload_header& x) {
  auto key = key_size(x);
  std::vector<std::byte> out(key + 4 + 8 * x.frame_sizes.size());
  write_key(x, out.data());
  write_sizes(x.frame_sizes, out.data() + key);
  return out;
}

std::vector<std::byte> encode_header_key(const payload_header& x) {
  std::vector<std::byte> out(key_size(x));
  write_key(x, out.data());
  return out;
}

void write_header(std::span<const std::byte> key, std::span<const frame> frames,
                  std::byte* out) noexcept {
  if (!key.empty())
    std::memcpy(out, key.data(), key.size());
  write_sizes(frames, out + key.size());
}

std::vector<std::byte> encode_header(std::span<const std::byte> key,
                                     std::span<const frame> frames) {
  std::vector<std::byte> out(header_size(key.size(), frames.size()));
  write_header(key, frames, out.data());
  return out;
}

std::span<const std::byte>
header_key(std::span<const std::byte> bytes) noexcept {
  // Magic, then three strings, each a u16 length and its bytes, then the u32
  // format version.
  size_t pos = 3;
  for (int i = 0; i < 3; ++i) {
    if (bytes.size() < pos + 2)
      return {};
    pos += 2 + detail::get_le(bytes.data() + pos, 2);
  }
  if (bytes.size() < pos + 4)
    return {};
  return bytes.first(pos + 4);
}

caf::error decode_header(std::span<const std::byte> bytes, const limits& lim,
                         payload_header& result) {
  header_reader rd{bytes, lim};
  uint64_t magic = 0;
  if (!rd.read(magic, 3))
    return std::move(rd.err());
  if (magic != (uint64_t{'F'} | (uint64_t{'S'} << 8) |
                (uint64_t{header_format_version} << 16))) {
    rd.fail(errc::malformed_header,
            "bad magic or header version (expected 'F','S',1)");
    return std::move(rd.err());
  }
  if (!rd.read_string(result.family, "family name", true) ||
      !rd.read_string(result.type_name, "type name", false) ||
      !rd.read_string(result.stand_in, "stand-in name", false))
    return std::move(rd.err());
  if (result.family.empty()) {
    rd.fail(errc::malformed_header, "empty family name");
    return std::move(rd.err());
  }
  uint64_t version = 0;
  if (!rd.read(version, 4))
    return std::move(rd.err());
  result.version = static_cast<uint32_t>(version);
  return decode_frame_sizes(bytes, rd.pos(), lim, result.frame_sizes);
}

caf::error decode_frame_sizes(std::span<const std::byte> bytes, size_t key_size,
                              const limits& lim, std::vector<uint64_t>& sizes) {
  if (key_size > bytes.size())
    return detail::make_error(
      errc::truncated_frame,
      "payload header of " + std::to_string(bytes.size()) +
        " bytes ends inside its key of " + std::to_string(key_size) + " bytes");
  header_reader rd{bytes, lim, key_size};
  uint64_t count = 0;
  if (!rd.read(count, 4))
    return std::move(rd.err());
  if (count > lim.max_frames) {
    rd.fail(errc::length_out_of_range,
            "claims " + std::to_string(count) +
              " frames, more than limits::max_frames (" +
              std::to_string(lim.max_frames) + ")");
    return std::move(rd.err());
  }
  if ((bytes.size() - rd.pos()) / 8 < count) {
    rd.fail(errc::truncated_frame, "claims " + std::to_string(count) +
                                     " frames but the sizes are missing");
    return std::move(rd.err());
  }
  sizes.resize(count);
  uint64_t total = 0;
  for (auto& n : sizes) {
    if (!rd.read(n, 8))
      return std::move(rd.err());
    if (n > lim.max_payload_bytes || total + n > lim.max_payload_bytes) {
      rd.fail(errc::payload_too_large,
              "frames sum to more than limits::max_payload_bytes (" +
                std::to_string(lim.max_payload_bytes) +
                "); raise the limit or send large values through the "
                "store");
      return std::move(rd.err());
    }
    total += n;
  }
  if (rd.pos() != bytes.size()) {
    rd.fail(errc::trailing_bytes, std::to_string(bytes.size() - rd.pos()) +
                                    " bytes follow the header");
    return std::move(rd.err());
  }
  return caf::none;
}

caf::expected<payload_header> decode_header(std::span<const std::byte> bytes,
                                            const limits& lim) {
  payload_header result;
  if (auto err = decode_header(bytes, lim, result))
    return err;
  return result;
}

} // namespace ferry::serializers
