// plain_stream: a connection's bytes as the socket carries them, no TLS
// (see transport/stream.hpp).
//
// Reads with one `recv` (a short one ends the caller's reading turn:
// stream.hpp), writes with one `sendmsg` of up to `IOV_MAX`
// pieces (scatter-gather: the pieces go from where they are, with no
// staging copy), both non-blocking and without SIGPIPE.
//
// Thread-safety: as transport/stream.hpp says; the kernel orders the one
// reader and the one writer.
#pragma once

#include "transport/stream.hpp"

namespace ferry::detail::net {

class plain_stream final : public stream {
public:
  /// Uses the connected socket `fd` (not owned: the caller closes it).
  explicit plain_stream(int fd) noexcept : fd_(fd) {
    // nop
  }

  io_result handshake() override;

  io_result read(std::span<std::byte> out) override;

  io_result write(std::span<const piece> pieces) override;

  void shutdown() noexcept override;

  const char* kind() const noexcept override { return "plain"; }

private:
  int fd_;
  /// The last read found the socket empty (the reader's alone).
  bool drained_ = false;
};

} // namespace ferry::detail::net
