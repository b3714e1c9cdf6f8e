// A throwaway PostgreSQL 15 server for a test binary.
//
// `postgres_server::start` makes a fresh temporary directory, runs initdb
// there (trust authentication, UTF8, fsync off: nothing in it is meant to
// outlive the test), starts the server with a Unix socket directory of its
// own and, when asked, TCP on one address, waits with pg_isready (bounded),
// and creates a database. Its conninfo is what libpq and ferry's state
// store take. The destructor stops the server (pg_ctl stop -m fast) and
// removes the directory; `stop` and `start` take it down and bring it back
// within a test (its conninfo stays the same).
//
// initdb and postgres refuse to run as root: a test that runs as root runs
// them as the user `postgres` (Debian's package makes it) through
// `runuser -u postgres --`, in a directory that user owns; a test that runs
// as another user runs them as itself. The binaries are PostgreSQL 15's,
// in /usr/lib/postgresql/15/bin (packages postgresql-15 and
// postgresql-client-15). When they are missing or the server does not come
// up, `start` returns why (naming the package, or the log and its last
// lines), and the test is to fail with it: never skip.
//
// A test binary that dies without its destructors (a crash, a timeout's
// SIGKILL) leaves its server running: the next `start` of any test stops
// and removes the servers whose test process is gone.
//
// Thread-safety: a server belongs to one test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace ferry::test {

struct postgres_server_options {
  /// An address to listen on for TCP as well (e.g. a bridge's address);
  /// empty: the Unix socket only (listen_addresses='').
  std::string listen_address;
  /// The port (of the socket, and of TCP when listening); 0: a free one.
  uint16_t port = 0;
  /// The database made for the test.
  std::string database = "ferry_test";
  /// How long the server may take to come up.
  std::chrono::seconds start_timeout{30};
};

class postgres_server;

/// What `postgres_server::start` did: a running server, or why not.
struct postgres_start {
  std::unique_ptr<postgres_server> server;
  std::string error;
};

class postgres_server {
public:
  /// Makes a cluster in a new temporary directory and starts its server.
  static postgres_start start(postgres_server_options options = {});

  postgres_server(const postgres_server&) = delete;
  postgres_server& operator=(const postgres_server&) = delete;

  /// Stops the server and removes its directory.
  ~postgres_server();

  /// Returns the conninfo of `database` (the options' by default) through
  /// the Unix socket: "host=DIR port=P dbname=D user=postgres".
  std::string conninfo(const std::string& database = {}) const;

  /// Creates another database (createdb). Returns why it failed, or "".
  std::string create_database(const std::string& name);

  /// Runs `sql` in `database` with psql as the superuser. Returns why it
  /// failed (psql's output), or "".
  std::string run_sql(const std::string& database, const std::string& sql);

  /// What `query` got.
  struct query_result {
    /// Why psql failed, or "".
    std::string error;
    /// The last statement's rows, unaligned ("a|b" lines), without header.
    std::string output;
  };

  /// Runs `sql` in `database` as `run_sql` does and returns its rows.
  query_result query(const std::string& database, const std::string& sql);

  /// Returns the path of psql, for tests that keep a session open.
  static std::string psql();

  /// Returns the conninfo through TCP at the listen address (empty when
  /// the server listens on its Unix socket only).
  std::string tcp_conninfo() const;

  /// Returns the port.
  uint16_t port() const { return options_.port; }

  /// Returns the server's log file.
  std::string log_file() const { return dir_ + "/server.log"; }

  /// Stops the server (pg_ctl stop -m fast): its connections end, new ones
  /// are refused. Returns why it failed, or an empty string.
  std::string stop();

  /// Starts the stopped server again and waits until it accepts
  /// connections. Returns why it failed, or an empty string.
  std::string restart();

  /// Returns true while the server runs.
  bool running() const { return running_; }

private:
  explicit postgres_server(postgres_server_options options)
    : options_(std::move(options)) {
    // nop
  }

  /// initdb, the TCP rule, start, createdb.
  std::string init();

  /// pg_ctl start, then pg_isready until it answers.
  std::string start_server();

  postgres_server_options options_;
  std::string dir_;
  bool running_ = false;
  bool keep_dir_ = false;
};

} // namespace ferry::test
