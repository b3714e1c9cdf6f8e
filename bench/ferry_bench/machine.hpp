// Facts about this machine and this process: the JSON's machine block, the
// memcpy floor, and the receiving process's peak resident memory.
#pragma once

#include <cstdint>
#include <string>

namespace ferry::bench {

/// The machine block of the JSON.
struct machine_info {
  std::string cpu;
  unsigned cores = 0;
  double memory_gib = 0;
  std::string kernel;
  std::string compiler;
  std::string caf_version;
  std::string date;
};

/// Reads /proc/cpuinfo, /proc/meminfo, uname and the build's versions.
machine_info read_machine();

/// Returns the command line that started this run: the program's file name
/// (`ferry-bench`, also when it runs itself again inside a user namespace)
/// and its arguments, each quoted for a POSIX shell where it needs it.
std::string command_line(int argc, char** argv);

/// Returns the median time of one warm memcpy of `bytes` (µs): source and
/// destination are faulted in before timing.
double memcpy_us(uint64_t bytes);

/// Resets this process's peak resident memory (VmHWM) to its current RSS
/// (writes "5" to /proc/self/clear_refs). Returns false if not permitted.
bool reset_peak_rss();

/// Returns this process's peak resident memory (VmHWM) minus the pages of
/// shared memory it has resident (RssShmem, the host store it maps), in MiB.
double peak_private_rss_mb();

/// Returns the value of a "Key:  value kB" line of /proc/self/status in KiB.
uint64_t proc_status_kib(const char* key);

/// Returns the CPU time the live threads of process `pid` have run so far
/// (ns, from /proc/<pid>/task/*/schedstat; threads that have ended are not
/// counted); 0 when unreadable.
uint64_t process_cpu_ns(int pid);

} // namespace ferry::bench
