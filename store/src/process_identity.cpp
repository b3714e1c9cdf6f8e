// Reading process identities from /proc; see process_identity.hpp.
#include "process_identity.hpp"

#include "fail.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ferry::store::detail {

process_identity process_identity::self() noexcept {
  process_identity result;
  result.pid = static_cast<int32_t>(::getpid());
  result.start_time = process_start_time(result.pid);
  result.pid_namespace = detail::pid_namespace();
  return result;
}

bool read_process_stat(int32_t pid, char& state,
                       uint64_t& start_time) noexcept {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  auto fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[1024];
  auto n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  // The command name (field 2) may contain spaces and parentheses: fields
  // are counted from the last ')'. Field 3 is the state, 22 the start time.
  auto* p = std::strrchr(buf, ')');
  if (p == nullptr || p[1] != ' ')
    return false;
  p += 2;
  state = *p;
  int field = 3;
  while (*p != '\0' && field < 22) {
    if (*p == ' ')
      ++field;
    ++p;
  }
  start_time = std::strtoull(p, nullptr, 10);
  return true;
}

uint64_t process_start_time(int32_t pid) noexcept {
  char state = 0;
  uint64_t start_time = 0;
  return read_process_stat(pid, state, start_time) ? start_time : 0;
}

uint64_t pid_namespace() noexcept {
  struct stat st {};
  if (::stat("/proc/self/ns/pid", &st) != 0)
    return 0;
  return static_cast<uint64_t>(st.st_ino);
}

bool process_alive(int32_t pid, uint64_t start_time) noexcept {
  if (pid <= 0)
    return false;
  char state = 0;
  uint64_t now = 0;
  if (read_process_stat(pid, state, now)) {
    // A zombie (killed, not yet waited for) holds nothing any more.
    return now == start_time && state != 'Z' && state != 'X';
  }
  if (errno == ENOENT)
    return false;
  // /proc not readable: fall back to kill(0).
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

caf::error check_pid_namespace(const std::string& name, uint64_t theirs,
                               uint64_t ours) {
  if (theirs == 0 || ours == 0 || theirs == ours)
    return caf::none;
  return fail(errc::foreign_pid_namespace, "store '", name,
              "' is used from another PID namespace (its segment was "
              "created in pid:[",
              theirs, "], this process runs in pid:[", ours,
              "]), e.g. by a container sharing /dev/shm; a ferry store "
              "needs all its processes in one PID namespace, since it tells "
              "live processes from dead ones by pid; run them in one PID "
              "namespace (e.g. share the pod's process namespace), or give "
              "each PID namespace its own store name (ferry.store.name, "
              "store_config::name)");
}

} // namespace ferry::store::detail
