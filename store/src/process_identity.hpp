// How the store names processes and tells live ones from dead ones (private).
//
// A process is named by its pid and its start time (field 22 of
// /proc/<pid>/stat), so a pid reused by a new process does not inherit the
// entries of a dead one. Both mean something only within one PID namespace:
// the creator of a segment records its namespace (the inode of
// /proc/self/ns/pid) and processes of another namespace are refused, since
// every process there would look dead from here. These functions own no
// state: they read /proc (which can be slow, so callers drop the store lock
// first where they can) and may be called from any thread.
#pragma once

#include <caf/error.hpp>

#include <cstdint>
#include <string>

namespace ferry::store::detail {

/// Names one process for the store's tables.
struct process_identity {
  /// Process id; 0 names no process.
  int32_t pid = 0;
  /// Start time in clock ticks since boot; 0 if unknown.
  uint64_t start_time = 0;
  /// Inode of the process's PID namespace; 0 if unknown.
  uint64_t pid_namespace = 0;

  /// Returns the identity of the calling process.
  static process_identity self() noexcept;
};

/// Returns the start time of `pid` (clock ticks since boot), or 0 if the
/// process does not exist.
uint64_t process_start_time(int32_t pid) noexcept;

/// Reads the state (field 3) and start time (field 22) of `pid` from
/// /proc/<pid>/stat; returns false (with errno set) if that fails.
bool read_process_stat(int32_t pid, char& state, uint64_t& start_time) noexcept;

/// Returns the PID namespace of this process (the inode of
/// /proc/self/ns/pid), or 0 if it cannot be read.
uint64_t pid_namespace() noexcept;

/// Returns true if process `pid` runs and started at `start_time`. A zombie
/// counts as dead; if /proc cannot be read, falls back to `kill(pid, 0)`.
bool process_alive(int32_t pid, uint64_t start_time) noexcept;

/// Returns an error if the creator of segment `name` ran in PID namespace
/// `theirs` and this process runs in another one, `ours` (0: unknown).
[[nodiscard]] caf::error check_pid_namespace(const std::string& name,
                                             uint64_t theirs, uint64_t ours);

} // namespace ferry::store::detail
