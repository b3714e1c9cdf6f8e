// sqlite_store: see sqlite_store.hpp.
//
// Invariant: every statement runs through a `step` scope, which resets it
// and clears its bindings when the scope ends, so a statement never holds
// a read transaction or a pointer to a caller's bytes between calls.
#include "entities/sqlite_store.hpp"

#include "entities/lease_rules.hpp"
#include "entities/store_checks.hpp"
#include "thread_safety.hpp"

#include "ferry/clock.hpp"
#include "ferry/errc.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace ferry::detail::entities {

namespace {

/// The database's clock: milliseconds since 1970.
#define FERRY_SQLITE_NOW                                                       \
  "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

constexpr const char* create_tables =
  "CREATE TABLE IF NOT EXISTS ferry_entity_states ("
  " type TEXT NOT NULL, key TEXT NOT NULL, family TEXT NOT NULL,"
  " version INTEGER NOT NULL, state BLOB NOT NULL,"
  " PRIMARY KEY (type, key));"
  "CREATE TABLE IF NOT EXISTS ferry_shard_leases ("
  " shard INTEGER PRIMARY KEY, holder TEXT NOT NULL DEFAULT '',"
  " epoch INTEGER NOT NULL DEFAULT 0,"
  " expires_ms INTEGER NOT NULL DEFAULT 0,"
  " hand_to TEXT NOT NULL DEFAULT '',"
  " released_ms INTEGER NOT NULL DEFAULT 0);";

/// The statements a connection prepares, in the order of `sql`.
enum stmt_id : size_t {
  load_stmt,
  insert_first_stmt,
  update_stmt,
  version_stmt,
  begin_stmt,
  commit_stmt,
  rollback_stmt,
  lease_ensure_stmt,
  lease_select_stmt,
  lease_write_stmt,
  renew_stmt,
  release_stmt,
  leases_stmt,
  stmt_count,
};

constexpr const char* sql[stmt_count] = {
  // load: the state only when it is within ?3 bytes.
  "SELECT family, version, length(state),"
  " CASE WHEN length(state) <= ?3 THEN state END, typeof(state)"
  " FROM ferry_entity_states WHERE type = ?1 AND key = ?2",
  "INSERT INTO ferry_entity_states (type, key, family, version, state)"
  " VALUES (?1, ?2, ?3, 1, ?4) ON CONFLICT DO NOTHING",
  "UPDATE ferry_entity_states SET family = ?3, state = ?4,"
  " version = version + 1"
  " WHERE type = ?1 AND key = ?2 AND version = ?5",
  "SELECT version FROM ferry_entity_states WHERE type = ?1 AND key = ?2",
  "BEGIN IMMEDIATE",
  "COMMIT",
  "ROLLBACK",
  "INSERT INTO ferry_shard_leases (shard) VALUES (?1) ON CONFLICT DO NOTHING",
  "SELECT holder, epoch, expires_ms, hand_to, released_ms, " FERRY_SQLITE_NOW
  " FROM ferry_shard_leases WHERE shard = ?1",
  "UPDATE ferry_shard_leases SET holder = ?2, epoch = ?3, expires_ms = ?4,"
  " hand_to = ?5, released_ms = ?6 WHERE shard = ?1",
  "UPDATE ferry_shard_leases SET expires_ms = " FERRY_SQLITE_NOW " + ?2"
  " WHERE holder = ?1 AND expires_ms > " FERRY_SQLITE_NOW " RETURNING shard",
  "UPDATE ferry_shard_leases SET expires_ms = " FERRY_SQLITE_NOW ","
  " released_ms = " FERRY_SQLITE_NOW ", hand_to = ?3"
  " WHERE shard = ?1 AND holder = ?2 AND expires_ms > " FERRY_SQLITE_NOW,
  "SELECT shard, holder, epoch, expires_ms, hand_to, "
  "released_ms, " FERRY_SQLITE_NOW " FROM ferry_shard_leases ORDER BY shard",
};

#undef FERRY_SQLITE_NOW

struct db_closer {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};

struct stmt_finalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};

using db_ptr = std::unique_ptr<sqlite3, db_closer>;
using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

/// Returns SQLite's message for the last call on `db` and its code.
std::string message_of(sqlite3* db) {
  return std::string{sqlite3_errmsg(db)} + " (SQLite code " +
         std::to_string(sqlite3_extended_errcode(db)) + ")";
}

/// Returns what to do about the SQLite error `code`.
std::string fix_for(int code, const std::string& path) {
  switch (code & 0xFF) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return "another process held the database's write lock longer than "
           "busy_timeout; raise it or find the process";
  case SQLITE_CANTOPEN:
  case SQLITE_READONLY:
  case SQLITE_PERM:
  case SQLITE_AUTH:
    return "check that " + path +
           " is a file (or missing) in a directory that exists and that "
           "this process may write (SQLite adds -wal and -shm files "
           "beside it)";
  case SQLITE_FULL:
  case SQLITE_IOERR:
    return "check the disk that holds " + path + " (space, errors)";
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB:
    return path + " is not a sound SQLite database; restore it or move it "
                  "away";
  default:
    return "check " + path + " and the message";
  }
}

/// One use of a prepared statement: bindings, steps, and a reset at the
/// end of the scope.
class step {
public:
  explicit step(sqlite3_stmt* stmt) : stmt_(stmt) {
    // nop
  }

  step(const step&) = delete;
  step& operator=(const step&) = delete;

  ~step() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  /// Binds `text` (which must outlive the scope) to parameter `i`.
  step& text(int i, const std::string& text) {
    bind_rc(sqlite3_bind_text64(stmt_, i, text.data(), text.size(),
                                SQLITE_STATIC, SQLITE_UTF8));
    return *this;
  }

  step& blob(int i, std::span<const std::byte> bytes) {
    if (bytes.empty()) // a NULL pointer would bind NULL, not X''
      bind_rc(sqlite3_bind_zeroblob(stmt_, i, 0));
    else
      bind_rc(sqlite3_bind_blob64(stmt_, i, bytes.data(), bytes.size(),
                                  SQLITE_STATIC));
    return *this;
  }

  step& integer(int i, int64_t value) {
    bind_rc(sqlite3_bind_int64(stmt_, i, value));
    return *this;
  }

  /// Steps once; returns SQLITE_ROW, SQLITE_DONE or the error's code (a
  /// failed binding's first).
  int next() {
    if (bind_failure_ != SQLITE_OK)
      return bind_failure_;
    return sqlite3_step(stmt_);
  }

  sqlite3_stmt* get() const { return stmt_; }

private:
  void bind_rc(int rc) {
    if (rc != SQLITE_OK && bind_failure_ == SQLITE_OK)
      bind_failure_ = rc;
  }

  sqlite3_stmt* stmt_;
  int bind_failure_ = SQLITE_OK;
};

/// Returns column `col` of the current row as text, or nothing when it is
/// not TEXT.
std::optional<std::string> text_column(sqlite3_stmt* stmt, int col) {
  if (sqlite3_column_type(stmt, col) != SQLITE_TEXT)
    return std::nullopt;
  auto* data = sqlite3_column_text(stmt, col);
  auto size = sqlite3_column_bytes(stmt, col);
  return std::string{reinterpret_cast<const char*>(data),
                     static_cast<size_t>(size)};
}

/// Returns column `col` as an integer, or nothing when it is not INTEGER.
std::optional<int64_t> int_column(sqlite3_stmt* stmt, int col) {
  if (sqlite3_column_type(stmt, col) != SQLITE_INTEGER)
    return std::nullopt;
  return sqlite3_column_int64(stmt, col);
}

class sqlite_store final : public state_store {
public:
  sqlite_store(std::string path, const state_store_config& cfg)
    : path_(std::move(path)),
      where_("sqlite:" + path_),
      cfg_(cfg) {
    // nop
  }

  std::string describe() const override { return where_; }

  /// Opens the file, sets its modes, creates the tables and prepares the
  /// statements.
  caf::error open() {
    lock_guard guard{mtx_};
    sqlite3* raw = nullptr;
    auto flags =
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    auto rc = sqlite3_open_v2(path_.c_str(), &raw, flags, nullptr);
    db_.reset(raw); // closes a handle that failed to open, too
    if (rc != SQLITE_OK)
      return failure("cannot open the database", rc);
    sqlite3_extended_result_codes(db_.get(), 1);
    sqlite3_busy_timeout(db_.get(),
                         static_cast<int>(cfg_.busy_timeout.count()));
    if (auto err = set_wal())
      return err;
    if (auto err = exec("PRAGMA synchronous=NORMAL", "cannot set synchronous"))
      return err;
    if (auto err = exec(create_tables, "cannot create the tables"))
      return err;
    for (size_t i = 0; i < stmt_count; ++i) {
      sqlite3_stmt* stmt = nullptr;
      rc = sqlite3_prepare_v3(db_.get(), sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                              &stmt, nullptr);
      stmts_[i].reset(stmt);
      if (rc != SQLITE_OK)
        return failure("cannot prepare a statement (does a table have "
                       "another shape?)",
                       rc);
    }
    return {};
  }

  caf::expected<stored_state> load(const std::string& type,
                                   const std::string& key) override {
    if (auto err = check_entity(where_, type, key))
      return err;
    lock_guard guard{mtx_};
    step s{stmts_[load_stmt].get()};
    s.text(1, type).text(2, key).integer(3, limit());
    auto rc = s.next();
    if (rc == SQLITE_DONE)
      return stored_state{};
    if (rc != SQLITE_ROW)
      return failure("cannot load the state of " + in_quotes(type) + "/" +
                       in_quotes(key),
                     rc);
    auto* stmt = s.get();
    auto family = text_column(stmt, 0);
    auto version = int_column(stmt, 1);
    auto size = int_column(stmt, 2);
    auto kind = text_column(stmt, 4);
    if (!version)
      return odd_row(where_, type, key, "has a version that is no integer");
    if (!family)
      return odd_row(where_, type, key, "has a family that is no text");
    if (!kind || *kind != "blob" || !size)
      return odd_row(where_, type, key, "holds no BLOB state");
    if (auto err = check_row(where_, type, key, *family, *version, *size,
                             cfg_.max_state_bytes))
      return err;
    if (sqlite3_column_type(stmt, 3) != SQLITE_BLOB ||
        sqlite3_column_bytes(stmt, 3) != *size)
      return odd_row(where_, type, key, "changed its size while read");
    auto* data = static_cast<const std::byte*>(sqlite3_column_blob(stmt, 3));
    auto copy =
      copy_state(where_, type, key, {data, static_cast<size_t>(*size)});
    if (!copy)
      return std::move(copy.error());
    return stored_state{std::move(*family), std::move(*copy),
                        static_cast<uint64_t>(*version)};
  }

  caf::expected<uint64_t> save(const std::string& type, const std::string& key,
                               uint64_t expected, const std::string& family,
                               std::span<const std::byte> bytes) override {
    if (auto err = check_save(where_, type, key, expected, family, bytes.size(),
                              cfg_.max_state_bytes))
      return err;
    lock_guard guard{mtx_};
    int rc;
    if (expected == 0) {
      step s{stmts_[insert_first_stmt].get()};
      s.text(1, type).text(2, key).text(3, family).blob(4, bytes);
      rc = s.next();
    } else {
      step s{stmts_[update_stmt].get()};
      s.text(1, type).text(2, key).text(3, family).blob(4, bytes);
      s.integer(5, static_cast<int64_t>(expected));
      rc = s.next();
    }
    if (rc != SQLITE_DONE)
      return failure("cannot save the state of " + in_quotes(type) + "/" +
                       in_quotes(key),
                     rc);
    if (sqlite3_changes(db_.get()) == 1)
      return expected + 1;
    step s{stmts_[version_stmt].get()};
    s.text(1, type).text(2, key);
    rc = s.next();
    uint64_t stored = 0;
    if (rc == SQLITE_ROW) {
      auto v = int_column(s.get(), 0);
      if (!v || *v < 1)
        return odd_row(where_, type, key, "has a version below 1 or none");
      stored = static_cast<uint64_t>(*v);
    } else if (rc != SQLITE_DONE) {
      return failure("cannot read the stored version of " + in_quotes(type) +
                       "/" + in_quotes(key),
                     rc);
    }
    return conflict(where_, type, key, expected, stored);
  }

  caf::expected<lease_grant> acquire(uint32_t shard, const std::string& owner,
                                     std::chrono::milliseconds ttl,
                                     std::chrono::milliseconds grace) override {
    if (auto err = check_owner(where_, owner, "owner"))
      return err;
    if (auto err = check_lease_times(where_, ttl, grace))
      return err;
    lock_guard guard{mtx_};
    auto what = "cannot take the lease of shard " + std::to_string(shard);
    if (auto err = run(begin_stmt, what))
      return err;
    auto result = acquire_locked(shard, owner, ttl, grace, what);
    if (!result) {
      rollback_locked();
      return result;
    }
    if (auto err = run(commit_stmt, what)) {
      rollback_locked();
      return err;
    }
    return result;
  }

  caf::expected<std::vector<uint32_t>>
  renew(const std::string& owner, std::chrono::milliseconds ttl) override {
    if (auto err = check_owner(where_, owner, "owner"))
      return err;
    if (auto err = check_lease_times(where_, ttl, {}))
      return err;
    lock_guard guard{mtx_};
    std::vector<uint32_t> out;
    step s{stmts_[renew_stmt].get()};
    s.text(1, owner).integer(2, ttl.count());
    int rc;
    while ((rc = s.next()) == SQLITE_ROW) {
      auto shard = int_column(s.get(), 0);
      if (!shard || *shard < 0 || *shard > int64_t{UINT32_MAX})
        return store_failed(where_, "a lease row has an odd shard", {},
                            "remove the row");
      out.push_back(static_cast<uint32_t>(*shard));
    }
    if (rc != SQLITE_DONE)
      return failure("cannot renew the leases of " + in_quotes(owner), rc);
    std::sort(out.begin(), out.end());
    return out;
  }

  caf::error release(uint32_t shard, const std::string& owner,
                     const std::string& hand_to) override {
    if (auto err = check_owner(where_, owner, "owner"))
      return err;
    if (auto err = check_owner(where_, hand_to, "hand_to"))
      return err;
    lock_guard guard{mtx_};
    step s{stmts_[release_stmt].get()};
    s.integer(1, shard).text(2, owner).text(3, hand_to);
    auto rc = s.next();
    if (rc != SQLITE_DONE)
      return failure("cannot release shard " + std::to_string(shard), rc);
    return {};
  }

  caf::expected<std::vector<shard_lease>> leases() override {
    lock_guard guard{mtx_};
    std::vector<shard_lease> out;
    step s{stmts_[leases_stmt].get()};
    int rc;
    while ((rc = s.next()) == SQLITE_ROW) {
      auto* stmt = s.get();
      auto shard = int_column(stmt, 0);
      auto row = lease_row_of(stmt, 1);
      if (!shard || *shard < 0 || *shard > int64_t{UINT32_MAX} || !row)
        return store_failed(where_, "a lease row has odd columns", {},
                            "remove the row");
      auto now = *int_column(stmt, 6);
      shard_lease x;
      x.shard = static_cast<uint32_t>(*shard);
      x.holder = row->holder;
      x.epoch = row->epoch;
      x.left =
        std::chrono::milliseconds{std::max<int64_t>(0, row->expires_ms - now)};
      x.hand_to = row->hand_to;
      out.push_back(std::move(x));
    }
    if (rc != SQLITE_DONE)
      return failure("cannot read the leases", rc);
    return out;
  }

private:
  /// Returns max_state_bytes as SQLite's integer.
  int64_t limit() const { return static_cast<int64_t>(cfg_.max_state_bytes); }

  caf::error failure(const std::string& what, int rc) FERRY_REQUIRES(mtx_) {
    auto message =
      db_ ? message_of(db_.get()) : std::string{sqlite3_errstr(rc)};
    return store_failed(where_, what, message, fix_for(rc, path_));
  }

  caf::error exec(const char* text, const std::string& what)
    FERRY_REQUIRES(mtx_) {
    auto rc = sqlite3_exec(db_.get(), text, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
      return failure(what, rc);
    return {};
  }

  /// Sets WAL mode. Another process that opens a new file at once may hold
  /// the lock this needs; SQLite's busy handler does not cover that, so
  /// this retries until busy_timeout passes.
  caf::error set_wal() FERRY_REQUIRES(mtx_) {
    using namespace std::chrono;
    const auto& steady = ferry::clock::steady();
    auto deadline = steady.now() + cfg_.busy_timeout;
    for (;;) {
      sqlite3_stmt* raw = nullptr;
      auto rc = sqlite3_prepare_v2(db_.get(), "PRAGMA journal_mode=WAL", -1,
                                   &raw, nullptr);
      stmt_ptr stmt{raw};
      if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt.get());
      if (rc == SQLITE_ROW) {
        auto mode = text_column(stmt.get(), 0);
        if (mode && *mode == "wal")
          return {};
        return store_failed(where_, "cannot use WAL mode",
                            "the journal mode stays " + mode.value_or("?"),
                            "keep the file on a local file system");
      }
      if ((rc & 0xFF) != SQLITE_BUSY || steady.now() >= deadline)
        return failure("cannot set WAL mode", rc);
      std::this_thread::sleep_for(milliseconds{10});
    }
  }

  /// Runs a statement without parameters or rows.
  caf::error run(stmt_id id, const std::string& what) FERRY_REQUIRES(mtx_) {
    step s{stmts_[id].get()};
    auto rc = s.next();
    if (rc != SQLITE_DONE)
      return failure(what, rc);
    return {};
  }

  void rollback_locked() FERRY_REQUIRES(mtx_) {
    if (sqlite3_get_autocommit(db_.get()) == 0) {
      step s{stmts_[rollback_stmt].get()};
      s.next();
    }
  }

  /// Reads columns `first` to `first + 4` (holder, epoch, expires_ms,
  /// hand_to, released_ms) and `first + 5` (now); nothing when odd.
  static std::optional<lease_row> lease_row_of(sqlite3_stmt* stmt, int first) {
    auto holder = text_column(stmt, first);
    auto epoch = int_column(stmt, first + 1);
    auto expires = int_column(stmt, first + 2);
    auto hand_to = text_column(stmt, first + 3);
    auto released = int_column(stmt, first + 4);
    auto now = int_column(stmt, first + 5);
    if (!holder || !epoch || *epoch < 0 || !expires || !hand_to || !released ||
        !now)
      return std::nullopt;
    return lease_row{std::move(*holder), static_cast<uint64_t>(*epoch),
                     *expires, std::move(*hand_to), *released};
  }

  caf::expected<lease_grant>
  acquire_locked(uint32_t shard, const std::string& owner,
                 std::chrono::milliseconds ttl, std::chrono::milliseconds grace,
                 const std::string& what) FERRY_REQUIRES(mtx_) {
    {
      step s{stmts_[lease_ensure_stmt].get()};
      s.integer(1, shard);
      if (auto rc = s.next(); rc != SQLITE_DONE)
        return failure(what, rc);
    }
    lease_decision decision;
    {
      step s{stmts_[lease_select_stmt].get()};
      s.integer(1, shard);
      auto rc = s.next();
      if (rc != SQLITE_ROW)
        return failure(what, rc == SQLITE_DONE ? SQLITE_INTERNAL : rc);
      auto row = lease_row_of(s.get(), 0);
      if (!row)
        return store_failed(where_,
                            "the lease row of shard " + std::to_string(shard) +
                              " has odd columns",
                            {}, "remove the row");
      auto now = *int_column(s.get(), 5);
      decision = decide_acquire(*row, now, owner, ttl, grace);
    }
    if (decision.write) {
      auto& w = *decision.write;
      step s{stmts_[lease_write_stmt].get()};
      s.integer(1, shard).text(2, w.holder);
      s.integer(3, static_cast<int64_t>(w.epoch)).integer(4, w.expires_ms);
      s.text(5, w.hand_to).integer(6, w.released_ms);
      if (auto rc = s.next(); rc != SQLITE_DONE)
        return failure(what, rc);
    }
    return std::move(decision.grant);
  }

  // -- constant after construction --------------------------------------------

  const std::string path_;
  const std::string where_;
  const state_store_config cfg_;

  // -- protected by mtx_ --------------------------------------------------------

  mutex mtx_;
  db_ptr db_ FERRY_GUARDED_BY(mtx_);
  stmt_ptr stmts_[stmt_count] FERRY_GUARDED_BY(mtx_);
};

} // namespace

caf::expected<std::unique_ptr<state_store>>
open_sqlite_store(const std::string& path, const state_store_config& cfg) {
  auto store = std::make_unique<sqlite_store>(path, cfg);
  if (auto err = store->open())
    return err;
  return std::unique_ptr<state_store>{std::move(store)};
}

} // namespace ferry::detail::entities
