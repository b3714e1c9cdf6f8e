// The messages of the socket limit rows (`socket`, `tls-socket`), over any
// byte stream (byte_stream.hpp): the sender's channel and the receiver's
// loop.
//
// Each message is a 16-byte header (payload size, kind: 0 one-way,
// 1 request) and the payload. The sender (`make_frame_channel`) is a
// channel of the stream trial (stream_trial.hpp), so the row runs the same
// window, acknowledgement batches and rounds as the actor rows: one-way
// messages that fit gather in a 64 KiB buffer written when full and before
// waiting for an acknowledgement (as CAF's middleman writes what a turn of
// its loop gathered); larger ones go out as header and payload in one
// `write_all`, and a request goes out at once. The receiver
// (`serve_frames`) reads through a 64 KiB buffer (many small messages per
// read; a larger payload goes on into one buffer kept for the
// connection's life), reads the first and last byte like the actors'
// sink, answers a request with its CLOCK_MONOTONIC time and acknowledges
// every k-th one-way message with the count (8 bytes each).
//
// Each side runs on one thread of its process.
#pragma once

#include "byte_stream.hpp"
#include "stream_trial.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ferry::bench {

/// Bytes a side gathers at most into one write, and reads at most with one
/// read, when messages are small.
inline constexpr size_t gather_bytes = 64 * 1024;

/// Returns the sending end of a limit row over `out` (which must outlive
/// it), sending `payload` again and again.
std::unique_ptr<channel>
make_frame_channel(byte_stream& out,
                   std::shared_ptr<const std::vector<char>> payload);

/// Receives messages from `in` until the stream ends: `count` counts the
/// one-way messages, and every `ack_every`-th is acknowledged (both are
/// reset by the peer's command thread between rounds, when nothing is in
/// flight).
void serve_frames(byte_stream& in, std::atomic<uint64_t>& count,
                  std::atomic<uint64_t>& ack_every);

} // namespace ferry::bench
