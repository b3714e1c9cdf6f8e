// thread_role: what the calling thread may do, said in one place.
//
// A node's threads play three roles (docs/architecture.md, "Threads and who
// owns what"):
// - Frame readers (a connection's I/O thread, a lane's reader: marked with
//   `reads_frames`) take what peers send and deliver it. They never wait
//   for a peer, which may be waiting for them to read: not for credit, not
//   for room in a same-host ring.
// - A thread inside a `delivering` scope hands messages that arrived on a
//   link to their actors (a frame reader, the puller delivering what it
//   pulled, the end of a delivery batch). A message it sends on meanwhile
//   (delivered to a proxy of another link: an actor forwarded from a third
//   node) does not wait for credit, which this thread may itself have to
//   read; it may wait for room in a ring unless it reads frames.
// - Every other thread (CAF's workers, any thread calling `send`) may wait
//   for credit and for room in a ring.
//
// Thread-safety: each thread's role is its own (thread-local).
#pragma once

namespace ferry::detail::thread_role {

/// Marks the calling thread as a frame reader for the rest of its life.
void reads_frames() noexcept;

/// Returns whether the calling thread may wait for room in a transport (a
/// same-host ring): not on a frame reader.
bool may_wait_for_room() noexcept;

/// Returns whether the calling thread may wait for credit: not on a frame
/// reader, and not while it delivers.
bool may_wait_for_credit() noexcept;

/// The calling thread delivers messages while a `delivering` lives (scopes
/// nest).
class delivering {
public:
  delivering() noexcept;
  ~delivering();

  delivering(const delivering&) = delete;
  delivering& operator=(const delivering&) = delete;

private:
  bool outer_;
};

} // namespace ferry::detail::thread_role
