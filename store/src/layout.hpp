// Layout of a ferry store segment (private).
//
// One POSIX shared-memory segment holds, in this order: the header (with the
// robust mutex and the allocator's bins), the process table, the object
// (slot) table, the holder table, the ticket table, and the data region,
// which starts on a page boundary. Every reference inside the segment is an
// index into a table or a byte offset into the data region; the segment holds
// no pointers, so every process may map it at any address.
//
// Primary and derived state. Only these entries are primary: a slot with a
// non-zero `id` (its state, size, block), a holder with `slot != npos32`
// (its handle and pin counts), a ticket with a non-zero `id`, and a process
// with a non-zero `pid`. Each entry's marker field is written last when it
// comes into being and cleared first when it goes. Everything else (per-slot
// totals, holder lists, free lists, holder ticket counts, allocator bins and
// block headers, byte totals) is derived and can be rebuilt from the primary
// entries: that is what a process does when it finds the lock abandoned by a
// dead owner (see `recover_locked` in recovery.hpp).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ferry::store::detail {

inline constexpr uint64_t segment_magic = 0x3176732d79727266; // "frry-sv1"
inline constexpr uint32_t layout_version = 3;
inline constexpr uint32_t npos32 = 0xFFFFFFFFu;
inline constexpr uint64_t npos64 = ~uint64_t{0};

/// Keeps the compiler from moving stores across a marker write (see above).
/// Stores to shared memory by a process that dies stay visible (same
/// physical pages), so ordering them for the compiler is enough.
inline void commit() noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

// -- allocator ----------------------------------------------------------------

/// Blocks are multiples of 64 bytes and start on 64-byte boundaries; the
/// first 64 bytes of each block are its header, the payload follows.
inline constexpr uint64_t align_shift = 6;
inline constexpr uint64_t block_align = uint64_t{1} << align_shift;
inline constexpr uint64_t block_header_size = 64;
/// Smallest block a split leaves behind.
inline constexpr uint64_t min_block_size = 128;
/// Second-level bins per power of two (TLSF-style segregated fit).
inline constexpr uint32_t sl_bits = 4;
inline constexpr uint32_t sl_count = 1u << sl_bits;
/// Sizes below this use linear bins of 64 bytes.
inline constexpr uint64_t small_block = uint64_t{sl_count} << align_shift;
inline constexpr uint32_t fl_count = 48;
/// Largest data region the bins can index: first level `fl_count - 1` holds
/// blocks below 2^57 bytes (128 PiB).
inline constexpr uint64_t max_capacity =
  (uint64_t{1} << (fl_count + sl_bits + align_shift - 1)) - block_align;

/// Header at the start of every block in the data region.
struct block_header {
  /// Block size including this header.
  uint64_t size;
  /// Size of the block just before this one; 0 for the first block.
  uint64_t prev_size;
  /// Next free block in the same bin (offset), or npos64.
  uint64_t next_free;
  /// Previous free block in the same bin (offset), or npos64.
  uint64_t prev_free;
  /// 1 if free.
  uint32_t free;
  uint32_t reserved0;
  uint64_t reserved[3];
};
static_assert(sizeof(block_header) == block_header_size);

/// Bins of free blocks; derived state.
struct allocator_state {
  /// Size of the data region.
  uint64_t capacity;
  /// Bytes in used blocks (headers included).
  uint64_t used;
  /// Bit f set if some bin of first level f is non-empty.
  uint64_t fl_bitmap;
  /// Bit s of entry f set if bin (f, s) is non-empty.
  uint32_t sl_bitmap[fl_count];
  /// First free block of each bin (offset), or npos64.
  uint64_t heads[fl_count][sl_count];
};

// -- tables -------------------------------------------------------------------

enum class slot_state : uint32_t {
  /// Unused (id == 0).
  free = 0,
  /// A builder writes the object.
  creating = 1,
  /// Sealed and in memory.
  sealed = 2,
  /// Sealed and in a spill file.
  spilled = 3,
  /// Sealed and in memory; process `io_process` writes its spill file
  /// without holding the lock (it holds a handle meanwhile).
  spilling = 4,
  /// Sealed; process `io_process` reads its spill file into `block` without
  /// holding the lock (it holds a handle meanwhile). The file still exists.
  restoring = 5,
};

/// One object. States and transitions: free -> creating (create) ->
/// sealed (seal) -> spilling -> spilled (spill I/O) -> restoring -> sealed
/// (restore I/O); spilling falls back to sealed if a handle appears while
/// the file is written; any state -> free when the last reference drops.
struct slot_entry {
  /// Object id; marker: 0 means the slot is free. Primary.
  uint64_t id;
  /// Payload size. Primary.
  uint64_t size;
  /// Block offset in the data region while resident, else npos64. Primary.
  uint64_t block;
  /// Block size while resident. Primary.
  uint64_t block_size;
  /// LRU tick of the last get/seal/restore.
  uint64_t last_use;
  /// Primary.
  slot_state state;
  /// Derived: handles + tickets + pins + parked over all holders.
  uint32_t ref_count;
  /// Derived: handles over all holders.
  uint32_t handles;
  /// Derived: pins over all holders.
  uint32_t pins;
  /// Derived: first holder of this object, or npos32.
  uint32_t holders;
  /// Derived: next free slot, or npos32.
  uint32_t next_free;
  /// Process doing spill I/O while `spilling` or `restoring`. Primary.
  uint32_t io_process;
  uint32_t reserved;
};

/// One process's references to one object.
struct holder_entry {
  /// Object slot; marker: npos32 means the entry is free. Primary.
  uint32_t slot;
  /// Process table index. Primary.
  uint32_t process;
  /// Live handles and builders of the process. Primary.
  uint32_t handles;
  /// Derived: tickets the process exported for this object.
  uint32_t tickets;
  /// 1 if the process pinned the object (out of band). Primary.
  uint32_t pins;
  /// Derived: next holder of the same object, or (free) next free entry.
  uint32_t next;
  /// Live `parked_ref`s of the process: references that let the store spill
  /// the object. Primary.
  uint32_t parked;
  uint32_t reserved;
};

/// One reference in transit.
struct ticket_entry {
  /// Ticket id; marker: 0 means free. Primary.
  uint64_t id;
  /// Object id it refers to. Primary.
  uint64_t object;
  /// Object slot. Primary.
  uint32_t slot;
  /// Exporting process (table index). Primary.
  uint32_t process;
  /// Derived: next free ticket entry, or npos32.
  uint32_t next_free;
  uint32_t reserved;
};

/// One attached process.
struct process_entry {
  /// Start time (clock ticks since boot, /proc/<pid>/stat field 22). Primary.
  uint64_t start_time;
  /// Pid; marker: 0 means free. Primary.
  int32_t pid;
  uint32_t reserved;
};

// -- header -------------------------------------------------------------------

inline constexpr size_t max_name = 256;
inline constexpr size_t max_path = 1024;

struct segment_header {
  /// Written last by the creator (release); openers wait for it.
  std::atomic<uint64_t> magic;
  uint32_t version;
  uint32_t header_size;
  /// Sizes of the table entries (see `entry_sizes()`): a segment made by a
  /// build with another layout is refused even if `version` matches.
  uint64_t entry_sizes;
  /// Random token naming this store incarnation.
  uint64_t token;
  uint64_t segment_size;
  /// Written by the creator right after sizing the segment, before the
  /// slow part (allocating pages), so openers can tell a slow creator from a
  /// dead one.
  int32_t creator_pid;
  /// 1 once the last process left a store that is not `persistent` and
  /// removed its name (written under `mutex`). A process that opens the
  /// segment and finds it retired starts over with a new one.
  uint32_t retired;
  uint64_t creator_start_time;
  /// PID namespace of the creator (inode of /proc/self/ns/pid; 0 if that
  /// was unreadable), written with `creator_start_time`. Pids and start
  /// times mean something only within one PID namespace, so processes of
  /// another one are refused (version 3).
  uint64_t creator_pid_namespace;
  // table geometry
  uint64_t process_offset;
  uint64_t slot_offset;
  uint64_t holder_offset;
  uint64_t ticket_offset;
  uint64_t data_offset;
  uint32_t max_processes;
  uint32_t max_objects;
  uint32_t max_holders;
  uint32_t max_tickets;
  uint32_t slot_bits;
  uint32_t ticket_bits;
  // spilling
  uint64_t spill_limit;
  uint32_t spilling;
  /// 1 if the store stays after its last process leaves (set by the
  /// creator from `store_config::persistent`).
  uint32_t persistent;
  char name[max_name];
  char spill_directory[max_path];
  // guarded by mutex
  pthread_mutex_t mutex;
  uint64_t next_sequence;
  uint64_t next_ticket_sequence;
  uint64_t tick;
  uint64_t bytes_spilled;
  uint64_t recoveries;
  uint32_t free_slot;
  uint32_t free_holder;
  uint32_t free_ticket;
  uint32_t reserved2;
  allocator_state alloc;
};

/// Returns the sizes of the table entries and block header packed in one
/// word, to tell segments of a different build apart.
constexpr uint64_t entry_sizes() noexcept {
  return uint64_t{sizeof(slot_entry)} | uint64_t{sizeof(holder_entry)} << 16 |
         uint64_t{sizeof(ticket_entry)} << 32 |
         uint64_t{sizeof(process_entry)} << 48 |
         uint64_t{sizeof(block_header)} << 56;
}

} // namespace ferry::store::detail
