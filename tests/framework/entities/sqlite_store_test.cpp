// The SQLite store's own cases (entities/sqlite_store): processes racing
// through one file, a writer waiting for another's write up to
// busy_timeout, WAL mode, files that cannot be opened; and locations
// open_state_store refuses.
#include "store_backends.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ferry::entities_test;
using namespace std::chrono_literals;
using ferry::errc;
using ferry::render;
using ferry::detail::entities::open_state_store;
using ferry::detail::entities::state_store_config;

namespace {

/// What a forked child wrote to its pipe, and how it ended.
struct child_result {
  int exit_code = -1;
  std::string output;
};

/// Runs `fn` in a forked child; what it returns goes back through a pipe.
/// The child ends with _exit, so nothing of the test runs twice.
template <class Fn>
pid_t fork_child(int& read_fd, Fn fn) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  auto pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto out = fn();
    size_t done = 0;
    while (done < out.size()) {
      auto n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0)
        _exit(3);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  read_fd = fds[0];
  return pid;
}

child_result finish_child(pid_t pid, int read_fd) {
  child_result result;
  char buf[4096];
  for (ssize_t n; (n = read(read_fd, buf, sizeof(buf))) > 0;)
    result.output.append(buf, static_cast<size_t>(n));
  close(read_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return result;
}

class sqlite_store_test : public store_fixture<sqlite_backend> {};

} // namespace

TEST_F(sqlite_store_test, TwoProcessesRacingLetExactlyOneSaveWinPerVersion) {
  // Arrange: two processes, each of two threads' worth of rounds, saving
  // one key with the version each loaded. Each reports its wins as lines
  // "W <version> <text>", its conflicts as "C", anything else as "E ...".
  // Both start when the test closes the pipe `go`.
  constexpr int rounds = 40;
  auto location = backend.location();
  ASSERT_NE(open_sut(), nullptr); // the file and its tables exist
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  auto racer = [&](int id) {
    return [location, id, go] {
      close(go[1]);
      state_store_config cfg;
      cfg.location = location;
      auto store = open_state_store(cfg);
      char c;
      while (read(go[0], &c, 1) > 0) {
        // until the test closes its end
      }
      if (!store)
        return "E " + render(store.error()) + "\n";
      std::string out;
      for (int r = 0; r < rounds; ++r) {
        auto loaded = (*store)->load("counter", "contended");
        if (!loaded) {
          out += "E " + render(loaded.error()) + "\n";
          continue;
        }
        std::this_thread::sleep_for(500us); // the activation works
        auto text = "p" + std::to_string(id) + "r" + std::to_string(r);
        auto saved = (*store)->save("counter", "contended", loaded->version,
                                    "raw", bytes_of(text));
        if (saved)
          out += "W " + std::to_string(*saved) + " " + text + "\n";
        else if (has_code(saved.error(), errc::state_conflict))
          out += "C\n";
        else
          out += "E " + render(saved.error()) + "\n";
      }
      return out;
    };
  };
  // Act
  int fd_a = -1;
  int fd_b = -1;
  auto a = fork_child(fd_a, racer(1));
  auto b = fork_child(fd_b, racer(2));
  close(go[0]);
  close(go[1]);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  auto result_a = finish_child(a, fd_a);
  auto result_b = finish_child(b, fd_b);
  // Assert
  EXPECT_EQ(result_a.exit_code, 0);
  EXPECT_EQ(result_b.exit_code, 0);
  std::map<uint64_t, std::string> winners;
  size_t conflicts = 0;
  for (auto* output : {&result_a.output, &result_b.output}) {
    size_t pos = 0;
    while (pos < output->size()) {
      auto end = output->find('\n', pos);
      auto line = output->substr(pos, end - pos);
      pos = end + 1;
      if (line == "C") {
        ++conflicts;
        continue;
      }
      ASSERT_EQ(line.substr(0, 2), "W ") << line;
      auto space = line.find(' ', 2);
      auto version = std::stoull(line.substr(2, space - 2));
      EXPECT_TRUE(winners.emplace(version, line.substr(space + 1)).second)
        << "version " << version << " won twice";
    }
  }
  ASSERT_FALSE(winners.empty());
  EXPECT_EQ(winners.size() + conflicts, size_t{2 * rounds});
  EXPECT_EQ(winners.rbegin()->first, winners.size()); // 1..N, none missing
  auto sut = open_sut();
  ASSERT_NE(sut, nullptr);
  auto final_state = sut->load("counter", "contended");
  ASSERT_TRUE(final_state) << render(final_state.error());
  EXPECT_EQ(final_state->version, winners.size());
  EXPECT_EQ(final_state->bytes, bytes_of(winners.rbegin()->second));
}

TEST_F(sqlite_store_test,
       WriterWaitsForAnothersWriteThenFailsAfterBusyTimeout) {
  // Arrange: another connection holds the write lock.
  state_store_config cfg;
  cfg.busy_timeout = 100ms;
  auto sut = open_sut(cfg);
  ASSERT_NE(sut, nullptr);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(backend.path().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  // Act
  auto began = std::chrono::steady_clock::now();
  auto blocked = sut->save("counter", "k", 0, "raw", bytes_of("x"));
  auto waited = std::chrono::steady_clock::now() - began;
  sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  auto after = sut->save("counter", "k", 0, "raw", bytes_of("x"));
  // Assert
  ASSERT_FALSE(blocked);
  EXPECT_TRUE(has_code(blocked.error(), errc::state_store_failed));
  auto text = render(blocked.error());
  EXPECT_NE(text.find("database is locked"), std::string::npos) << text;
  EXPECT_NE(text.find("busy_timeout"), std::string::npos) << text;
  EXPECT_GE(waited, 90ms);
  EXPECT_TRUE(after) << render(after.error());
}

TEST_F(sqlite_store_test, DatabaseFileIsInWalMode) {
  // Arrange
  ASSERT_NE(open_sut(), nullptr);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(backend.path().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr),
            SQLITE_OK);
  // Act
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  std::string mode =
    reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  // Assert
  EXPECT_EQ(mode, "wal");
}

TEST_F(sqlite_store_test, OpenFailsInADirectoryThatIsNotWritable) {
  // Arrange: a directory others may enter but not write; root may write
  // anywhere, so the store is opened by a child that is user nobody then.
  auto dir = backend.dir() + "/read-only";
  ASSERT_EQ(chmod(backend.dir().c_str(), 0755), 0);
  ASSERT_EQ(mkdir(dir.c_str(), 0555), 0);
  auto location = "sqlite:" + dir + "/entities.db";
  // Act
  int fd = -1;
  auto pid = fork_child(fd, [location] {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
      return std::string{"E cannot become nobody"};
    state_store_config cfg;
    cfg.location = location;
    auto store = open_state_store(cfg);
    if (store)
      return std::string{"opened"};
    return std::string{
             has_code(store.error(), errc::state_store_failed) ? "F " : "X "} +
           render(store.error());
  });
  ASSERT_GT(pid, 0);
  auto result = finish_child(pid, fd);
  // Assert
  EXPECT_EQ(result.exit_code, 0);
  ASSERT_EQ(result.output.substr(0, 2), "F ") << result.output;
  EXPECT_NE(result.output.find(location), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("writ"), std::string::npos) << result.output;
}

TEST_F(sqlite_store_test,
       OpenFailsWhenThePathIsADirectoryOrItsDirectoryIsMissing) {
  for (auto path : {backend.dir(), backend.dir() + "/missing/entities.db"}) {
    // Arrange
    state_store_config cfg;
    cfg.location = "sqlite:" + path;
    // Act
    auto store = open_state_store(cfg);
    // Assert
    ASSERT_FALSE(store) << path;
    EXPECT_TRUE(has_code(store.error(), errc::state_store_failed));
    auto text = render(store.error());
    EXPECT_NE(text.find(cfg.location), std::string::npos) << text;
    EXPECT_NE(text.find("unable to open database file"), std::string::npos)
      << text;
  }
}

TEST(open_state_store, LocationsOfOtherSchemesOrWithoutAPlaceAreInvalidConfig) {
  for (auto location :
       {"mysql://db1/ferry", "sqlite:", "postgresql:", "postgresql:  ", "",
        "/var/lib/ferry/entities.db", "SQLite:/tmp/x.db"}) {
    // Arrange
    state_store_config cfg;
    cfg.location = location;
    // Act
    auto store = open_state_store(cfg);
    // Assert
    ASSERT_FALSE(store) << location;
    EXPECT_TRUE(has_code(store.error(), errc::invalid_config)) << location;
    auto text = render(store.error());
    EXPECT_NE(text.find("sqlite:PATH"), std::string::npos) << text;
    EXPECT_NE(text.find("postgresql:"), std::string::npos) << text;
  }
}

TEST(open_state_store, SettingsOutsideTheirRangeAreInvalidConfig) {
  // Arrange
  state_store_config no_pool;
  no_pool.location = "sqlite:/tmp/never-made.db";
  no_pool.pool_size = 0;
  auto huge = no_pool;
  huge.pool_size = 4;
  huge.max_state_bytes = uint64_t{1} << 40;
  // Act
  auto a = open_state_store(no_pool);
  auto b = open_state_store(huge);
  // Assert
  ASSERT_FALSE(a);
  EXPECT_TRUE(has_code(a.error(), errc::invalid_config));
  EXPECT_NE(render(a.error()).find("pool_size"), std::string::npos);
  ASSERT_FALSE(b);
  EXPECT_TRUE(has_code(b.error(), errc::invalid_config));
  EXPECT_NE(render(b.error()).find("max_state_bytes"), std::string::npos);
}
