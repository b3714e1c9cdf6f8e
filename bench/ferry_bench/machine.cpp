// Machine facts, the memcpy floor and peak RSS (see machine.hpp).
#include "machine.hpp"

#include <caf/config.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include <sys/utsname.h>

namespace ferry::bench {

namespace {

std::string trim(std::string x) {
  auto first = x.find_first_not_of(" \t");
  auto last = x.find_last_not_of(" \t\r\n");
  if (first == std::string::npos)
    return {};
  return x.substr(first, last - first + 1);
}

/// `x` as one word of a POSIX shell: as it is when every character is safe,
/// else in single quotes.
std::string shell_word(const std::string& x) {
  auto safe = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0
           || std::strchr("_-./=,:+@%", ch) != nullptr;
  };
  if (!x.empty() && std::all_of(x.begin(), x.end(), safe))
    return x;
  std::string out = "'";
  for (char ch : x)
    out += ch == '\'' ? std::string{"'\\''"} : std::string(1, ch);
  return out + "'";
}

} // namespace

std::string command_line(int argc, char** argv) {
  // Inside a user namespace the run is /proc/self/exe: name the file.
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  auto name = !ec ? exe.filename().string()
              : argc > 0 ? std::filesystem::path{argv[0]}.filename().string()
                         : std::string{"ferry-bench"};
  auto out = shell_word(name);
  for (int i = 1; i < argc; ++i)
    out += ' ' + shell_word(argv[i]);
  return out;
}

machine_info read_machine() {
  machine_info m;
  {
    std::ifstream in{"/proc/cpuinfo"};
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("model name", 0) == 0 && m.cpu.empty())
        m.cpu = trim(line.substr(line.find(':') + 1));
  }
  m.cores = std::thread::hardware_concurrency();
  {
    std::ifstream in{"/proc/meminfo"};
    std::string key;
    uint64_t kib = 0;
    if (in >> key >> kib)
      m.memory_gib = static_cast<double>(kib) / (1024.0 * 1024.0);
  }
  utsname u{};
  if (uname(&u) == 0)
    m.kernel = std::string{u.sysname} + " " + u.release + " " + u.machine;
#if defined(__clang__)
  m.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  m.compiler = "g++ " __VERSION__;
#endif
  m.caf_version = std::to_string(CAF_MAJOR_VERSION) + "."
                  + std::to_string(CAF_MINOR_VERSION) + "."
                  + std::to_string(CAF_PATCH_VERSION);
  auto now = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  m.date = buf;
  return m;
}

double memcpy_us(uint64_t bytes) {
  auto n = static_cast<size_t>(bytes);
  std::unique_ptr<char[]> src{new char[n]};
  std::unique_ptr<char[]> dst{new char[n]};
  std::memset(src.get(), 0x5a, n);
  std::memset(dst.get(), 0, n);
  int runs = bytes >= (uint64_t{256} << 20) ? 3 : (bytes >= (1u << 20) ? 7 : 101);
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    // Small sizes: time a batch so the clock's resolution does not dominate.
    int inner = bytes < 65536 ? 1000 : 1;
    auto t0 = std::chrono::steady_clock::now();
    for (int j = 0; j < inner; ++j) {
      std::memcpy(dst.get(), src.get(), n);
      asm volatile("" : : "r"(dst.get()) : "memory");
    }
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count()
                    / inner);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

bool reset_peak_rss() {
  std::ofstream out{"/proc/self/clear_refs"};
  if (!out)
    return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

uint64_t proc_status_kib(const char* key) {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  auto len = std::strlen(key);
  while (std::getline(in, line))
    if (line.compare(0, len, key) == 0)
      return std::stoull(line.substr(len));
  return 0;
}

uint64_t process_cpu_ns(int pid) {
  uint64_t total = 0;
  std::error_code ec;
  auto dir = "/proc/" + std::to_string(pid) + "/task";
  for (auto& task : std::filesystem::directory_iterator{dir, ec}) {
    std::ifstream in{task.path() / "schedstat"};
    uint64_t ns = 0;
    if (in >> ns)
      total += ns;
  }
  return total;
}

double peak_private_rss_mb() {
  auto hwm = proc_status_kib("VmHWM:");
  auto shmem = proc_status_kib("RssShmem:");
  auto kib = hwm > shmem ? hwm - shmem : 0;
  return static_cast<double>(kib) / 1024.0;
}

} // namespace ferry::bench
