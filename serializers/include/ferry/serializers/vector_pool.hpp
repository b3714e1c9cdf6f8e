// The vector pool: large decoded arrays go back for reuse instead of to the
// kernel.
//
// A decoded `std::vector` of tens of megabytes lives in memory the process has
// never touched: glibc maps every block above its mmap threshold (32 MiB at
// most) anew and unmaps it on free, and the kernel zero-fills each new page on
// first write. On the machines ferry is measured on that costs about three
// times the copy that fills the vector (ipc, 64 MiB: 50 % of the receiver's
// CPU in clearing pages, 17 % in the copy). Smaller blocks stay in glibc's
// heap, but each thread that decodes allocates from an arena of its own, and
// an arena's heap that empties goes back to the kernel: a stream of 1 MiB
// messages, decoded on whichever CAF worker runs, kept meeting fresh pages
// (ipc 1 MiB: about a tenth of the bytes received). So when the last
// reference to a message ferry decoded goes, a top-level `std::vector<E>` of
// at least `min_bytes` (E a number type or `std::byte`) is kept here, and the
// next vector of at least `min_bytes` of the same element type that a decoder
// fills, or that a pulled frame lands in, reuses it: the memory is already
// faulted in.
//
// What is kept, and for how long, is bounded: at most `max_bytes` in all (the
// least recently kept go first), and an array not reused for `max_idle` is
// freed (a node checks every `max_idle / 2`; the pool itself checks whenever
// it is used). A reused vector keeps its earlier content until it is
// overwritten; ferry hands one out only to code that writes every element
// before anyone reads it.
//
// Process-wide: every node and registry of the process shares one pool, and
// `vector_pool_config(limits)` applies to all of them (a node sets it from its
// `ferry.vector-pool.*` options when it starts).
//
// Thread-safety: every function here may be called from any thread.
//
//     auto limits = serializers::vector_pool_config();
//     limits.max_bytes = uint64_t{256} << 20;  // keep at most 256 MiB
//     serializers::vector_pool_config(limits);
//     auto reused = serializers::vector_pool_stats().reused;
#pragma once

#include <chrono>
#include <cstdint>

namespace ferry::serializers {

/// Limits of the vector pool.
struct vector_pool_limits {
  /// Vectors of fewer bytes are neither kept nor taken (glibc's heap reuses
  /// them when a node has raised malloc's thresholds; see
  /// `ferry.keep-malloc-defaults`).
  uint64_t min_bytes = uint64_t{1} << 20;
  /// Most bytes kept in all; 0 turns the pool off.
  uint64_t max_bytes = uint64_t{1} << 30;
  /// A kept vector not reused for this long is freed (10 s, as jemalloc's
  /// default decay of unused dirty pages).
  std::chrono::milliseconds max_idle{10000};

  friend bool operator==(const vector_pool_limits&,
                         const vector_pool_limits&) = default;
};

/// What the pool holds and did since the process started.
struct vector_pool_counters {
  /// Vectors kept now.
  uint64_t kept = 0;
  /// Bytes (capacities) kept now.
  uint64_t kept_bytes = 0;
  /// Large vectors that reused a kept one.
  uint64_t reused = 0;
  /// Large vectors that found none to reuse (fresh memory).
  uint64_t missed = 0;
  /// Kept vectors freed (idle, over `max_bytes`, or by `trim_vector_pool`).
  uint64_t freed = 0;
};

/// Returns the limits in force.
vector_pool_limits vector_pool_config();

/// Sets the limits; what no longer fits is freed at once.
void vector_pool_config(const vector_pool_limits& limits);

/// Returns the pool's counters.
vector_pool_counters vector_pool_stats();

/// Frees the vectors idle for longer than `max_idle`, or every kept vector
/// when `all`.
void trim_vector_pool(bool all = false);

} // namespace ferry::serializers
