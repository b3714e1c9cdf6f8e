// pg_connection: one libpq connection with its prepared statements, the
// parameters a call binds and the columns it reads.
//
// A connection is made with ferry's defaults for libpq (a bounded
// connect_timeout, TCP keepalives and a TCP user timeout, so that neither
// connecting nor a query on a connection whose server went away waits
// without end; UTF8 client encoding), which the location's own settings
// override. Right after connecting it prepares every statement of its
// store once (PQprepare); calls run them with PQexecPrepared, every
// parameter bound in binary form and every result read in binary form,
// each column's type, length and nullness checked before it is read.
//
// A connection that failed (its status is bad, or a call failed inside a
// transaction) is `broken`: its pool drops it, and a later call opens a new
// one. An idle connection whose socket has something to read has been
// ended by its server (PostgreSQL says why before it closes): `stale`.
//
// Thread-safety: a connection belongs to one thread at a time (its pool
// lends it to one call).
#pragma once

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <libpq-fe.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::detail::entities {

/// PostgreSQL's type ids (pg_type.oid) of the parameters and columns used.
constexpr Oid bytea_oid = 17;
constexpr Oid int8_oid = 20;
constexpr Oid text_oid = 25;

/// A statement a store prepares on each connection.
struct pg_statement {
  const char* sql;
  /// The types of its parameters, in order.
  std::vector<Oid> param_types;
};

/// The parameters of one call, all in binary form. Holds copies of the
/// integers and views of the text and bytes, which must outlive the call.
class pg_params {
public:
  pg_params& text(const std::string& value);
  pg_params& int8(int64_t value);
  pg_params& bytea(std::span<const std::byte> value);

  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

private:
  static constexpr size_t max_ints = 8;
  std::array<std::array<char, 8>, max_ints> ints_{};
  size_t int_count_ = 0;
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

struct pg_result_clear {
  void operator()(PGresult* res) const { PQclear(res); }
};

/// A call's result: rows read with the checked accessors below.
class pg_result {
public:
  explicit pg_result(PGresult* res) : res_(res) {
    // nop
  }

  int rows() const { return PQntuples(res_.get()); }

  /// Returns how many rows the command changed (INSERT, UPDATE).
  uint64_t changed() const;

  /// Returns column `col` of row `row` as an int8, or nothing when it is
  /// NULL or no int8.
  std::optional<int64_t> int8(int row, int col) const;

  /// Returns column `col` as text, or nothing when it is NULL or no text.
  std::optional<std::string> text(int row, int col) const;

  /// Returns column `col` as bytes, or nothing when it is NULL or no bytea.
  std::optional<std::span<const std::byte>> bytea(int row, int col) const;

private:
  bool is(int row, int col, Oid type) const;

  std::unique_ptr<PGresult, pg_result_clear> res_;
};

class pg_connection {
public:
  /// Connects with ferry's defaults and then `conninfo` (whose settings
  /// win), waiting at most `connect_timeout`, and prepares `statements`.
  /// Fails with `errc::state_store_failed` naming `where` (the store),
  /// libpq's message and the fix.
  static caf::expected<std::unique_ptr<pg_connection>>
  connect(const std::string& where, const std::string& conninfo,
          std::chrono::seconds connect_timeout,
          const std::vector<pg_statement>& statements);

  pg_connection(const pg_connection&) = delete;
  pg_connection& operator=(const pg_connection&) = delete;

  ~pg_connection();

  /// Runs the prepared statement `id` with `params`. Fails with
  /// `errc::state_store_failed`: "`where`: `what`: the server's or libpq's
  /// message (SQLSTATE); the fix".
  caf::expected<pg_result> exec(size_t id, const pg_params& params,
                                const std::string& what);

  /// Runs `sql` (no parameters; for setting up tables).
  caf::expected<pg_result> exec_text(const char* sql, const std::string& what);

  /// Returns true when the connection cannot be used again: its status is
  /// bad, or it is inside a transaction (a call failed before its end).
  bool broken() const;

  /// Returns true when the idle connection has something to read or was
  /// hung up: its server ended it.
  bool stale() const;

private:
  pg_connection(std::string where, PGconn* conn)
    : where_(std::move(where)),
      conn_(conn) {
    // nop
  }

  caf::expected<pg_result> check(PGresult* res, const std::string& what);

  std::string where_;
  PGconn* conn_;
};

/// Returns a libpq or server message on one line (newlines and tabs made
/// spaces, the end trimmed).
std::string one_line(std::string_view message);

} // namespace ferry::detail::entities
