// The databases the state store tests run against, real ones: an SQLite
// file in a temporary directory of its own, or a database of its own on a
// PostgreSQL server that the test binary starts at first use
// (ferry/test/postgres_server.hpp) and stops when it exits. Each backend
// also runs SQL beside the store (to write rows the store would not), and
// the tests share a few helpers: bytes, and an error's code and text.
//
// Thread-safety: a backend belongs to its test's thread.
#pragma once

#include "entities/state_store.hpp"

#include "ferry/errc.hpp"
#include "ferry/test/postgres_server.hpp"

#include <caf/atom.hpp>
#include <caf/error.hpp>

#include <sqlite3.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::entities_test {

/// Returns whether `err` is ferry's `code`.
inline bool has_code(const caf::error& err, errc code) {
  return err.category() == caf::atom("ferry_fw") &&
         err.code() == static_cast<uint8_t>(code);
}

/// Returns the bytes of `text`.
inline std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> out(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    out[i] = static_cast<std::byte>(text[i]);
  return out;
}

/// Returns `n` bytes that differ from place to place and by `seed`.
inline std::vector<std::byte> pattern(size_t n, uint32_t seed = 1) {
  std::vector<std::byte> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::byte>(x);
  }
  return out;
}

/// An SQLite file in a fresh temporary directory, removed with it.
class sqlite_backend {
public:
  static constexpr const char* name = "sqlite";

  sqlite_backend() {
    std::string templ = "/tmp/ferry-sqlite-XXXXXX";
    if (mkdtemp(templ.data()) != nullptr)
      dir_ = templ;
    else
      error_ = "cannot make a temporary directory in /tmp";
  }

  sqlite_backend(const sqlite_backend&) = delete;
  sqlite_backend& operator=(const sqlite_backend&) = delete;

  ~sqlite_backend() {
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  /// Returns why the backend is not ready, or "".
  const std::string& error() const { return error_; }

  std::string location() const { return "sqlite:" + path(); }

  std::string path() const { return dir_ + "/entities.db"; }

  const std::string& dir() const { return dir_; }

  /// Runs `sql` on a connection of its own; returns SQLite's message or "".
  std::string run_sql(const std::string& sql) const {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open(path().c_str(), &db) != SQLITE_OK) {
      out = sqlite3_errmsg(db);
    } else {
      sqlite3_busy_timeout(db, 5000);
      char* message = nullptr;
      if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) !=
          SQLITE_OK) {
        out = message != nullptr ? message : "failed";
        sqlite3_free(message);
      }
    }
    sqlite3_close(db);
    return out;
  }

private:
  std::string dir_;
  std::string error_;
};

/// A fresh database on the test binary's PostgreSQL server.
class postgres_backend {
public:
  static constexpr const char* name = "postgres";

  postgres_backend() {
    auto& shared = server();
    if (!shared.server) {
      error_ = shared.error;
      return;
    }
    static std::atomic<int> count{0};
    database_ = "test_" + std::to_string(++count);
    error_ = shared.server->create_database(database_);
  }

  postgres_backend(const postgres_backend&) = delete;
  postgres_backend& operator=(const postgres_backend&) = delete;

  /// Returns why the backend is not ready, or "".
  const std::string& error() const { return error_; }

  std::string location() const {
    return "postgresql:" + server().server->conninfo(database_);
  }

  /// Runs `sql` with psql; returns its failure or "".
  std::string run_sql(const std::string& sql) const {
    return server().server->run_sql(database_, sql);
  }

  /// Returns the binary's server, started at the first call (or why it
  /// could not start); it stops when the binary exits.
  static test::postgres_start& server() {
    static test::postgres_start shared = test::postgres_server::start();
    return shared;
  }

private:
  std::string database_;
  std::string error_;
};

/// A test over a backend: opens stores at its location.
template <class Backend>
class store_fixture : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(backend.error(), "")
      << "the " << Backend::name << " database for this test is not there";
  }

  /// Opens a store at the backend's location with `cfg`'s other settings.
  caf::expected<std::unique_ptr<detail::entities::state_store>>
  open(detail::entities::state_store_config cfg = {}) {
    cfg.location = backend.location();
    return detail::entities::open_state_store(cfg);
  }

  /// Opens a store as `open` does, failing the test when it cannot.
  std::unique_ptr<detail::entities::state_store>
  open_sut(detail::entities::state_store_config cfg = {}) {
    auto store = open(std::move(cfg));
    EXPECT_TRUE(store) << render(store.error());
    return store ? std::move(*store) : nullptr;
  }

  Backend backend;
};

/// Both stores.
using backends = testing::Types<sqlite_backend, postgres_backend>;

/// Names the typed tests' instances after their backend.
struct backend_names {
  template <class Backend>
  static std::string GetName(int) {
    return Backend::name;
  }
};

} // namespace ferry::entities_test
