// ring: one direction of a same-host lane, a single-producer
// single-consumer byte ring in a named shared-memory object.
//
// Two nodes of one host send each other their link's messages through a
// pair of rings instead of a TCP connection (lane/lane_transport.hpp). A
// ring carries records: an 8-byte little-endian length, then that many
// bytes. The writer appends records, waiting while the ring is full; the
// reader takes them in order, waiting while it is empty. A record longer
// than the ring streams through it in pieces.
//
// Shared state: a header (magic, version, capacity, the two byte counters,
// two wake-up words, a closed flag) and the data. There is no lock in it:
// each counter has one writer, and a side that sleeps does so on a futex
// word of its own with a timeout, so a process that dies anywhere leaves
// nothing held; the other side sees the link go down (its TCP connection)
// and closes its ring. The reader creates the object (mode 0600) and hands
// its name to the writer, which opens it; either unlinks the name (the
// mappings stay), and a node removes at start the rings that dead
// processes left (`remove_orphans`).
//
// Polling before sleeping: a reader with a spin time (`set_spin`) that
// finds the ring empty first polls it that long, yielding its core between
// looks, and sleeps only then: a record that follows within the spin time
// costs no futex wake-up on either side. The reader spins only while
// spinning pays: after two polls in a row that ended with no record, it
// polls once every 16 waits until one finds a record again, so a quiet or
// slow link costs no CPU beyond that.
//
// Hostile bytes: the other process shares the memory, so every counter and
// length read from it is checked (a counter that runs backwards or past
// the capacity, a record longer than the reader's limit); such a ring
// reports `corrupt` and is closed.
//
// Thread-safety: one thread writes and one thread reads at a time (the
// caller serialises each side); `close` may be called from any thread.
#pragma once

#include <caf/expected.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ferry::detail::lane {

struct ring_header;

class ring {
public:
  /// The outcome of a read or a write.
  enum class status {
    /// The record was written or read.
    done,
    /// The ring is closed (by either side) and holds nothing more to read;
    /// writes stop at once, reads take what was written before.
    closed,
    /// The other side broke the ring's invariants; it is now closed.
    corrupt,
    /// A read found no record within its wait.
    empty,
    /// A write that may not wait found too little room.
    full,
  };

  /// Bytes before the data: the header (its layout is this file's and
  /// ring.cpp's; tests reach the writer's counter at `written_offset`).
  static constexpr uint64_t header_size = 256;
  static constexpr uint64_t written_offset = 64;
  static constexpr uint64_t read_offset = 128;

  /// Creates a ring of `capacity` bytes (a power of two, at least 4 KiB)
  /// under a new name, for reading.
  [[nodiscard]] static caf::expected<ring> create(uint64_t capacity);

  /// Opens the ring called `name`, for writing; checks its header.
  [[nodiscard]] static caf::expected<ring> open(const std::string& name);

  /// Removes rings whose creating process is gone (names carry the pid).
  /// Returns how many.
  static size_t remove_orphans();

  ring(ring&&) noexcept;
  ring& operator=(ring&&) noexcept;
  ~ring();

  /// Returns the ring's shared-memory name.
  const std::string& name() const noexcept { return name_; }

  /// Returns the data capacity in bytes.
  uint64_t capacity() const noexcept { return capacity_; }

  /// Removes the name (idempotent); open mappings stay valid.
  void unlink() noexcept;

  /// Appends one record of `pieces` concatenated, waiting while the ring
  /// is full. Returns `done`, `closed` or `corrupt`.
  status write(std::span<const std::span<const std::byte>> pieces);

  /// Appends one record of `pieces` when there is room for all of it now;
  /// returns `full` instead of waiting (always for a record over half the
  /// ring).
  status try_write(std::span<const std::span<const std::byte>> pieces);

  /// Appends the first bytes of `bytes` to the ring's stream, as many as
  /// there is room for now, and sets `put` to how many: `done` when all
  /// went, `full` when some are left. A writer that cannot wait writes a
  /// record this way, its length first (`encode_length`), in as many calls
  /// as room allows; the reader sees it as any other record.
  status put_some(std::span<const std::byte> bytes, uint64_t& put);

  /// Waits until the ring has room for `n` bytes (at most its capacity),
  /// it closed (`closed`), or `wait` passed (`full`). Returns `done` when
  /// the room is there.
  status await_room(uint64_t n, std::chrono::milliseconds wait);

  /// Writes a record's length as the 8 little-endian bytes that begin it.
  static void encode_length(uint64_t total, std::byte (&out)[8]) noexcept;

  /// Takes the next record into `out` (resized to it), waiting at most
  /// `wait` for it to begin; a record that began is read to its end.
  /// Refuses (corrupt) a record longer than `max_record`.
  status read(std::vector<std::byte>& out, uint64_t max_record,
              std::chrono::milliseconds wait);

  /// Makes the reader poll an empty ring for up to `spin` before it sleeps
  /// (0: sleep at once). Reader side only.
  void set_spin(std::chrono::microseconds spin) noexcept { spin_ = spin; }

  /// Polls the reader began (it found the ring empty) and those that found
  /// a record before their time ran out.
  struct spin_counts {
    uint64_t polls = 0;
    uint64_t hits = 0;
  };
  spin_counts spins() const noexcept {
    return {polls_.load(std::memory_order_relaxed),
            hits_.load(std::memory_order_relaxed)};
  }

  /// Closes the ring for both sides and wakes them.
  void close() noexcept;

  /// Returns whether either side closed the ring.
  bool closed() const noexcept;

private:
  struct mapping;

  ring(std::string name, std::unique_ptr<mapping> map);

  /// Copies `n` bytes at stream position `pos` out of (into) the data.
  void copy_out(uint64_t pos, std::byte* dst, uint64_t n) const noexcept;
  void copy_in(uint64_t pos, const std::byte* src, uint64_t n) noexcept;

  /// Waits until at least `n` bytes can be read (written); returns `done`,
  /// `closed`, `corrupt` or, after `wait` (reads only), `empty`.
  status await_data(uint64_t n, std::chrono::milliseconds wait);
  status await_space(uint64_t n);

  /// Polls for `n` readable bytes for up to the spin time, when spinning
  /// has paid lately (see the file's comment).
  void poll_for_data(uint64_t read, uint64_t n) noexcept;

  /// Copies a record that fits in half the ring and publishes it
  /// (requires room for `total` + 8 bytes).
  void put_whole(std::span<const std::span<const std::byte>> pieces,
                 uint64_t total) noexcept;

  /// Wakes the reader (writer) if it sleeps.
  void wake_reader() noexcept;
  void wake_writer() noexcept;

  std::string name_;
  std::unique_ptr<mapping> map_;
  ring_header* head_ = nullptr;
  std::byte* data_ = nullptr;
  uint64_t capacity_ = 0;
  bool unlinked_ = false;
  // Reader side: the spin time, polls in a row that found nothing, waits
  // since the last poll, and the counts (read from any thread).
  std::chrono::microseconds spin_{0};
  uint32_t spin_misses_ = 0;
  uint32_t waits_since_poll_ = 0;
  std::atomic<uint64_t> polls_{0};
  std::atomic<uint64_t> hits_{0};
};

} // namespace ferry::detail::lane
