// Tests that need network namespaces (see ferry/test/namespaces.hpp).
#include "ferry/test/namespaces.hpp"

#include "ferry/test/child_process.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <iostream>

#include <sys/mount.h>
#include <unistd.h>

namespace ferry::test {

namespace {

using namespace std::chrono_literals;

/// Set in the environment of the run inside the user namespace.
constexpr const char* inner_run_variable = "FERRY_TEST_NAMESPACE_INNER_RUN";

std::string find_tool(std::initializer_list<const char*> paths) {
  for (auto path : paths)
    if (std::filesystem::exists(path))
      return path;
  return {};
}

/// Runs `program args...` with stdin closed; returns true on exit code 0.
bool succeeds(const std::string& program, std::vector<std::string> args) {
  child_process proc{program, std::move(args)};
  proc.close_stdin();
  while (proc.read_line(10s)) {
    // Drain the output so the program never blocks on a full pipe.
  }
  return proc.wait(10s).ok();
}

/// Prepares the inner run: root of a user namespace owns its network stack
/// but not the host's /run, where `ip netns` keeps its files. Returns the
/// reason when that fails.
std::string prepare_inner_run() {
  if (::mount("none", "/run", "tmpfs", 0, nullptr) != 0)
    return "cannot mount a tmpfs on /run in the user namespace";
  if (!ip({"link", "set", "lo", "up"}))
    return "cannot bring up lo in the user namespace (with " + ip_tool() + ")";
  return {};
}

/// Runs the test `test_name` again inside a user namespace and reports how
/// it went there.
namespace_verdict run_inside(const std::string& unshare,
                             const std::string& test_name) {
  auto self = std::filesystem::read_symlink("/proc/self/exe").string();
  setenv(inner_run_variable, "1", 1);
  child_process inner{unshare,
                      {"--user", "--map-root-user", "--mount", "--net", self,
                       "--gtest_filter=" + test_name}};
  unsetenv(inner_run_variable);
  inner.close_stdin();
  std::string output;
  while (auto line = inner.read_line(600s)) {
    std::cout << "    " << *line << std::endl;
    output += *line + "\n";
  }
  auto status = inner.wait(10s);
  if (!status.ok())
    return {namespace_access::failed_inside,
            "the run ended with " + to_string(status)
              + " (its output is above, indented)"};
  if (auto at = output.find("[  SKIPPED ]"); at != std::string::npos) {
    // The skip message: the lines after gtest's "...: Skipped" line.
    auto from = output.find(": Skipped\n");
    from = from < at ? from + 10 : 0;
    return {namespace_access::skipped_inside, output.substr(from, at - from)};
  }
  if (output.find("[  PASSED  ] 1 test.") == std::string::npos)
    return {namespace_access::failed_inside,
            "the run did not pass exactly this test (its output is above, "
            "indented)"};
  return {namespace_access::passed_inside, {}};
}

} // namespace

bool privileged_tests_required() {
  const char* value = std::getenv("FERRY_REQUIRE_PRIVILEGED_TESTS");
  return value != nullptr && std::string{value} == "1";
}

std::string ip_tool() {
  if (const char* path = std::getenv("FERRY_TEST_IP_TOOL"))
    return std::filesystem::exists(path) ? path : "";
  return find_tool({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
}

bool ip(const std::vector<std::string>& args) {
  auto tool = ip_tool();
  return !tool.empty() && succeeds(tool, args);
}

namespace_verdict network_namespaces(const std::string& test_name) {
  if (ip_tool().empty())
    return {namespace_access::unavailable,
            "the ip tool (iproute2) is not installed"};
  if (geteuid() == 0) {
    if (std::getenv(inner_run_variable) != nullptr)
      if (auto reason = prepare_inner_run(); !reason.empty())
        return {namespace_access::unavailable, reason};
    return {namespace_access::here, {}};
  }
  auto unshare = find_tool({"/usr/bin/unshare", "/bin/unshare"});
  if (unshare.empty())
    return {namespace_access::unavailable,
            "not root, and unshare (util-linux) is not installed"};
  if (!succeeds(unshare, {"--user", "--map-root-user", "--mount", "--net",
                          "true"}))
    return {namespace_access::unavailable,
            "not root, and unshare --user --map-root-user --mount --net "
            "fails (its message is on stderr): this machine allows this user "
            "no user namespaces (allow them with sysctl "
            "kernel.unprivileged_userns_clone=1 and user.max_user_namespaces "
            "above 0, or run as root)"};
  return run_inside(unshare, test_name);
}

} // namespace ferry::test
