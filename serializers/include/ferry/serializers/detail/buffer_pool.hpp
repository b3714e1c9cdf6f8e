// A process-wide pool of large encode buffers. Not API.
//
// Frames that ferry's encoders write are returned here when the payload is
// destroyed, so that the next large encode writes into memory that is
// already mapped instead of paying a page fault per 4 KiB (about 7x slower on
// fresh pages on the machines ferry targets). Only buffers of at least
// 64 KiB are pooled; the pool keeps at most 8 buffers and 256 MiB. Thread-safe
// (one mutex, taken once per large frame). A caller that copied a small
// frame's bytes elsewhere (a link, into the block it sends) recycles its
// buffer for the thread's next encode, which then needs no allocation.
#pragma once

#include "ferry/serializers/frame.hpp"

#include <cstddef>
#include <vector>

namespace ferry::serializers::detail {

/// Returns an empty buffer, with capacity left from an earlier frame when
/// the calling thread recycled one (`recycle_buffer`) or the pool has one.
std::vector<std::byte> take_buffer();

/// Gives `bytes`, whose contents its owner copied elsewhere, back for the
/// calling thread's next `take_buffer`: a small buffer is kept by the thread
/// (one at a time, up to 64 KiB: a small encode then allocates nothing), a
/// large one goes to the pool.
void recycle_buffer(std::vector<std::byte>&& bytes);

/// Returns a frame holding `bytes`; a large buffer goes back to the pool when
/// the last copy of the frame is destroyed.
frame pooled_frame(std::vector<std::byte> bytes);

} // namespace ferry::serializers::detail
