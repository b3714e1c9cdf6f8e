// A throwaway PostgreSQL server: see ferry/test/postgres_server.hpp.
#include "ferry/test/postgres_server.hpp"

#include "ferry/test/ports.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ferry::test {

namespace {

using namespace std::chrono_literals;

constexpr const char* bin_dir = "/usr/lib/postgresql/15/bin";

std::string bin(const char* name) {
  return std::string{bin_dir} + "/" + name;
}

/// Returns the last `n` lines of `path`, indented, for an error message.
std::string tail(const std::string& path, size_t n = 15) {
  std::ifstream in{path};
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (lines.size() > n)
      lines.pop_front();
  }
  std::string out;
  for (auto& line : lines)
    out += "\n    " + line;
  return out.empty() ? std::string{" (empty)"} : out;
}

/// Runs `argv` with stdin from /dev/null and stdout and stderr appended to
/// `log`; returns why it failed (spawn, exit code, timeout) or "".
std::string run(const std::vector<std::string>& argv, const std::string& log,
                std::chrono::milliseconds timeout) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (auto& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  auto rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return "cannot start " + argv[0] + ": " + std::strerror(rc);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    auto got = waitpid(pid, &status, WNOHANG);
    if (got == pid)
      break;
    if (got < 0 && errno != EINTR)
      return "cannot wait for " + argv[0] + ": " + std::strerror(errno);
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return argv[0] + " did not finish within " +
             std::to_string(timeout.count()) + " ms";
    }
    std::this_thread::sleep_for(5ms);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return {};
  std::string command;
  for (auto& arg : argv)
    command += (command.empty() ? "" : " ") + arg;
  return command + " failed (" +
         (WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                            : "signal " + std::to_string(WTERMSIG(status))) +
         "); its output, in " + log + ":" + tail(log);
}

/// Returns `argv` to run as the server's user: through runuser as
/// `postgres` when this process is root, as it stands otherwise.
std::vector<std::string> as_server_user(std::vector<std::string> argv) {
  if (geteuid() != 0)
    return argv;
  std::vector<std::string> out{"/usr/sbin/runuser", "-u", "postgres", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

/// Stops and removes the servers of test processes that are gone (each
/// server's directory names its test's pid in owner.pid).
void reap_orphans() {
  std::error_code ec;
  for (auto& entry : std::filesystem::directory_iterator{"/tmp", ec}) {
    auto name = entry.path().filename().string();
    if (!name.starts_with("ferry-pg-"))
      continue;
    std::ifstream owner{entry.path() / "owner.pid"};
    pid_t pid = 0;
    if (!(owner >> pid) || pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH)
      continue;
    auto dir = entry.path().string();
    run(as_server_user({bin("pg_ctl"), "-D", dir + "/data", "-m", "immediate",
                        "-w", "-t", "30", "stop"}),
        "/dev/null", 60s);
    std::filesystem::remove_all(entry.path(), ec);
  }
}

} // namespace

postgres_start postgres_server::start(postgres_server_options options) {
  reap_orphans();
  std::unique_ptr<postgres_server> server{
    new postgres_server(std::move(options))};
  auto error = server->init();
  if (!error.empty()) {
    if (!server->dir_.empty()) {
      server->keep_dir_ = true;
      error += " (the server's files are kept in " + server->dir_ + ")";
    }
    return {nullptr, error};
  }
  return {std::move(server), {}};
}

postgres_server::~postgres_server() {
  if (running_ && !stop().empty()) {
    // pg_ctl failed: end the server by its pid.
    std::ifstream pid_file{dir_ + "/data/postmaster.pid"};
    pid_t pid = 0;
    if (pid_file >> pid && pid > 0)
      ::kill(pid, SIGKILL);
  }
  if (!dir_.empty() && !keep_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string postgres_server::conninfo(const std::string& database) const {
  return "host=" + dir_ + " port=" + std::to_string(options_.port) +
         " dbname=" + (database.empty() ? options_.database : database) +
         " user=postgres";
}

std::string postgres_server::create_database(const std::string& name) {
  return run({bin("createdb"), "-h", dir_, "-p", std::to_string(options_.port),
              "-U", "postgres", name},
             dir_ + "/setup.log", 60s);
}

std::string postgres_server::run_sql(const std::string& database,
                                     const std::string& sql) {
  return query(database, sql).error;
}

postgres_server::query_result
postgres_server::query(const std::string& database, const std::string& sql) {
  static std::atomic<int> count{0};
  auto out_file = dir_ + "/query-" + std::to_string(++count) + ".out";
  query_result result;
  result.error =
    run({bin("psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h",
         dir_, "-p", std::to_string(options_.port), "-U", "postgres", "-d",
         database, "-o", out_file, "-c", sql},
        dir_ + "/setup.log", 60s);
  std::ifstream in{out_file};
  result.output.assign(std::istreambuf_iterator<char>{in}, {});
  in.close();
  std::error_code ec;
  std::filesystem::remove(out_file, ec);
  return result;
}

std::string postgres_server::psql() {
  return bin("psql");
}

std::string postgres_server::tcp_conninfo() const {
  if (options_.listen_address.empty())
    return {};
  return "host=" + options_.listen_address +
         " port=" + std::to_string(options_.port) +
         " dbname=" + options_.database + " user=postgres";
}

std::string postgres_server::init() {
  for (auto tool : {"initdb", "pg_ctl", "postgres", "pg_isready", "createdb"})
    if (!std::filesystem::exists(bin(tool)))
      return "PostgreSQL 15 is not installed here (" + bin(tool) +
             " is missing): install the Debian packages postgresql-15 and "
             "postgresql-client-15 (bash dev.sh deps does)";
  const passwd* user = nullptr;
  if (geteuid() == 0) {
    user = getpwnam("postgres");
    if (user == nullptr)
      return "this test runs as root, and initdb refuses root, but there is "
             "no user postgres to run it as (the package postgresql-15 makes "
             "it; or run the test as another user)";
    if (!std::filesystem::exists("/usr/sbin/runuser"))
      return "this test runs as root and needs /usr/sbin/runuser (util-linux) "
             "to run PostgreSQL as the user postgres";
  }
  std::string templ = "/tmp/ferry-pg-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr)
    return "cannot make a temporary directory in /tmp: " +
           std::string{std::strerror(errno)};
  dir_ = templ;
  std::ofstream{dir_ + "/owner.pid"} << getpid() << '\n';
  if (user != nullptr && chown(dir_.c_str(), user->pw_uid, user->pw_gid) != 0)
    return "cannot give " + dir_ +
           " to the user postgres: " + std::strerror(errno);
  if (options_.port == 0)
    options_.port = free_port();
  auto setup_log = dir_ + "/setup.log";
  if (auto err = run(as_server_user({bin("initdb"), "-D", dir_ + "/data",
                                     "--auth=trust", "-U", "postgres", "-E",
                                     "UTF8", "--locale=C", "--no-sync"}),
                     setup_log, 120s);
      !err.empty())
    return err;
  if (!options_.listen_address.empty()) {
    // initdb's rules let TCP in from loopback only; the test's hosts may be
    // network namespaces on a bridge.
    std::ofstream hba{dir_ + "/data/pg_hba.conf", std::ios::app};
    hba << "host all all 0.0.0.0/0 trust\nhost all all ::/0 trust\n";
    if (!hba)
      return "cannot add TCP rules to " + dir_ + "/data/pg_hba.conf";
  }
  if (auto err = start_server(); !err.empty())
    return err;
  return run({bin("createdb"), "-h", dir_, "-p", std::to_string(options_.port),
              "-U", "postgres", options_.database},
             setup_log, 60s);
}

std::string postgres_server::start_server() {
  auto port = std::to_string(options_.port);
  auto opts = "-k " + dir_ + " -p " + port + " -c listen_addresses='" +
              options_.listen_address +
              "' -c fsync=off -c dynamic_shared_memory_type=mmap";
  auto setup_log = dir_ + "/setup.log";
  if (auto err = run(as_server_user({bin("pg_ctl"), "-D", dir_ + "/data", "-l",
                                     log_file(), "-W", "-o", opts, "start"}),
                     setup_log, 60s);
      !err.empty())
    return err;
  running_ = true;
  auto began = std::chrono::steady_clock::now();
  auto deadline = began + options_.start_timeout;
  auto pid_file = dir_ + "/data/postmaster.pid";
  for (;;) {
    if (run({bin("pg_isready"), "-q", "-h", dir_, "-p", port, "-t", "2"},
            setup_log, 10s)
          .empty())
      return {};
    auto now = std::chrono::steady_clock::now();
    // The server writes its pid file at once and removes it when it ends.
    bool ended = now - began > 3s && !std::filesystem::exists(pid_file);
    if (ended || now >= deadline) {
      running_ = !ended;
      return std::string{"the PostgreSQL server in "} + dir_ +
             (ended ? " ended while starting"
                    : " did not accept connections within " +
                        std::to_string(options_.start_timeout.count()) +
                        " s (pg_isready)") +
             "; its log, " + log_file() + ":" + tail(log_file());
    }
    std::this_thread::sleep_for(50ms);
  }
}

std::string postgres_server::stop() {
  if (!running_)
    return {};
  auto err = run(as_server_user({bin("pg_ctl"), "-D", dir_ + "/data", "-m",
                                 "fast", "-w", "-t", "30", "stop"}),
                 dir_ + "/setup.log", 60s);
  if (err.empty())
    running_ = false;
  return err;
}

std::string postgres_server::restart() {
  if (running_)
    return {};
  return start_server();
}

} // namespace ferry::test
