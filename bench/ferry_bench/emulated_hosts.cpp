// Hosts of their own on one machine (see emulated_hosts.hpp).
#include "emulated_hosts.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ferry::bench {

namespace {

/// Set in the environment of the run inside the user namespace.
constexpr const char* inner_run_variable = "FERRY_BENCH_NETNS_INNER_RUN";

std::string find_tool(const std::string& name) {
  for (auto dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"})
    if (std::filesystem::exists(dir + name))
      return dir + name;
  return {};
}

/// Runs `program args...` with stdin on /dev/null; returns its exit code
/// (-1 when it could not start or died of a signal) and its output.
int run_tool(const std::string& program, const std::vector<std::string>& args,
             std::string& output) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    output = std::string{"pipe2: "} + strerror(errno);
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
  std::vector<std::string> copy{program};
  copy.insert(copy.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : copy)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  auto rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    output = "cannot start " + program + ": " + strerror(rc);
    return -1;
  }
  char buf[512];
  for (;;) {
    auto n = read(out[0], buf, sizeof(buf));
    if (n > 0)
      output.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Numbers the emulated networks of this process, so a new one never meets
/// the namespaces of one just gone.
int next_number() {
  static int n = 0;
  return n++;
}

std::string prepare_inner_run() {
  if (::mount("none", "/run", "tmpfs", 0, nullptr) != 0)
    return std::string{"cannot mount a tmpfs on /run in the user namespace: "}
           + strerror(errno);
  auto ip = find_tool("ip");
  std::string out;
  if (ip.empty() || run_tool(ip, {"link", "set", "lo", "up"}, out) != 0)
    return "cannot bring up lo in the user namespace: " + out;
  return {};
}

} // namespace

std::string enter_root_of_network_stack(int argc, char** argv) {
  if (find_tool("ip").empty() || find_tool("tc").empty())
    return "iproute2 (ip, tc) is not installed";
  if (geteuid() == 0)
    return std::getenv(inner_run_variable) != nullptr ? prepare_inner_run()
                                                      : std::string{};
  auto unshare = find_tool("unshare");
  if (unshare.empty())
    return "not root, and unshare (util-linux) is not installed";
  std::vector<std::string> probe{"--user", "--map-root-user", "--mount",
                                 "--net", "true"};
  std::string out;
  if (run_tool(unshare, probe, out) != 0)
    return "not root, and `unshare --user --map-root-user --mount --net` "
           "fails here (" + out.substr(0, out.find('\n'))
           + "): allow user namespaces (sysctl "
             "kernel.unprivileged_userns_clone=1, user.max_user_namespaces "
             "above 0) or run as root";
  std::vector<std::string> args{unshare, "--user", "--map-root-user",
                                "--mount", "--net", "/proc/self/exe"};
  for (int i = 1; i < argc; ++i)
    args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (auto& arg : args)
    cargs.push_back(arg.data());
  cargs.push_back(nullptr);
  setenv(inner_run_variable, "1", 1);
  execv(unshare.c_str(), cargs.data());
  auto why = std::string{"cannot run "} + unshare + ": " + strerror(errno);
  unsetenv(inner_run_variable);
  return why;
}

std::string enter_network_namespace(const std::string& path) {
  auto fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "cannot open " + path + ": " + strerror(errno);
  auto rc = setns(fd, CLONE_NEWNET);
  auto err = errno;
  close(fd);
  if (rc != 0)
    return "cannot enter the network namespace " + path + ": "
           + strerror(err);
  return {};
}

scoped_network_namespace::scoped_network_namespace(const std::string& path) {
  home_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home_ < 0)
    throw std::runtime_error(
      std::string{"cannot open this thread's network namespace: "}
      + strerror(errno));
  if (auto why = enter_network_namespace(path); !why.empty()) {
    close(home_);
    throw std::runtime_error(why);
  }
}

scoped_network_namespace::~scoped_network_namespace() {
  // Returning cannot fail for a namespace this thread came from.
  static_cast<void>(setns(home_, CLONE_NEWNET));
  close(home_);
}

emulated_hosts::emulated_hosts(int count, uint64_t mbit)
  : prefix_("ferry-bench-" + std::to_string(getpid()) + "-"
            + std::to_string(next_number()) + "-"),
    mbit_(mbit) {
  if (count < 1 || count > 200)
    throw std::runtime_error("emulated hosts: between 1 and 200 hosts");
  if (mbit == 0)
    throw std::runtime_error("emulated hosts: the link rate must be positive");
  try {
    auto hub = prefix_ + "switch";
    run("ip", {"netns", "add", hub});
    made_.push_back(hub);
    run("ip", {"-n", hub, "link", "add", "br0", "type", "bridge"});
    run("ip", {"-n", hub, "link", "set", "br0", "up"});
    // tbf lets a burst through at once: at least what the kernel's timer
    // (4 ms at HZ=250) would let the rate send, and at least 256 KiB (a few
    // GSO segments of 64 KiB).
    auto bytes_per_second = mbit * 1000 * 1000 / 8;
    auto burst = std::max<uint64_t>(256 * 1024, bytes_per_second / 250);
    std::vector<std::string> shape{"root", "tbf", "rate",
                                   std::to_string(mbit) + "mbit", "burst",
                                   std::to_string(burst), "latency", "20ms"};
    auto shape_dev = [&](const std::string& ns, const std::string& dev) {
      std::vector<std::string> args{"-n", ns, "qdisc", "add", "dev", dev};
      args.insert(args.end(), shape.begin(), shape.end());
      run("tc", args);
    };
    for (int i = 0; i < count; ++i) {
      auto host = prefix_ + "h" + std::to_string(i);
      std::string port = "p"; // (not "p" + ...: GCC 12's -Wrestrict misfires)
      port += std::to_string(i);
      run("ip", {"netns", "add", host});
      made_.push_back(host);
      run("ip", {"link", "add", "eth0", "netns", host, "type", "veth", "peer",
                 "name", port, "netns", hub});
      run("ip", {"-n", hub, "link", "set", port, "master", "br0"});
      run("ip", {"-n", hub, "link", "set", port, "up"});
      run("ip", {"-n", host, "addr", "add", address(i) + "/24", "dev",
                 "eth0"});
      run("ip", {"-n", host, "link", "set", "eth0", "up"});
      run("ip", {"-n", host, "link", "set", "lo", "up"});
      shape_dev(host, "eth0"); // upload
      shape_dev(hub, port);    // download
    }
  } catch (...) {
    for (auto& ns : made_) {
      std::string out;
      static_cast<void>(run_tool(find_tool("ip"), {"netns", "del", ns}, out));
    }
    throw;
  }
}

emulated_hosts::~emulated_hosts() {
  auto ip = find_tool("ip");
  for (auto i = made_.rbegin(); i != made_.rend(); ++i) {
    std::string out;
    static_cast<void>(run_tool(ip, {"netns", "del", *i}, out));
  }
}

std::string emulated_hosts::namespace_path(int i) const {
  return "/run/netns/" + prefix_ + "h" + std::to_string(i);
}

std::string emulated_hosts::address(int i) const {
  return "10.77.0." + std::to_string(i + 1);
}

void emulated_hosts::run(const std::string& tool,
                         const std::vector<std::string>& args) {
  auto program = find_tool(tool);
  std::string out;
  if (program.empty() || run_tool(program, args, out) != 0) {
    std::string line = tool;
    for (auto& arg : args)
      line += " " + arg;
    while (!out.empty() && out.back() == '\n')
      out.pop_back();
    throw std::runtime_error("cannot set up the emulated hosts: `" + line
                             + "` failed: "
                             + (program.empty() ? tool + " not found" : out));
  }
}

} // namespace ferry::bench
