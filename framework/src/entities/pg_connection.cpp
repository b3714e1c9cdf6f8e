// pg_connection: see pg_connection.hpp.
#include "entities/pg_connection.hpp"

#include "entities/store_checks.hpp"

#include <cstdlib>

#include <poll.h>

namespace ferry::detail::entities {

namespace {

/// Returns the name under which statement `id` is prepared.
std::string statement_name(size_t id) {
  return "ferry_entities_" + std::to_string(id);
}

/// Returns what to do about a failed call, by the connection's state and
/// the error's SQLSTATE.
std::string fix_for(PGconn* conn, std::string_view sqlstate) {
  if (PQstatus(conn) != CONNECTION_OK)
    return "the connection broke: is the server running and reachable? The "
           "next call connects again";
  auto cls = sqlstate.substr(0, 2);
  if (cls == "42")
    return "do the tables ferry_entity_states and ferry_shard_leases have "
           "another shape, or may this user not use them?";
  if (cls == "53" || cls == "57" || cls == "08")
    return "the server is short of resources, shutting down or unreachable; "
           "the next call tries again";
  if (cls == "22")
    return "the database refused a value (is its encoding UTF8?)";
  return "see the server's message";
}

} // namespace

// -- pg_params ----------------------------------------------------------------

pg_params& pg_params::text(const std::string& value) {
  values_.push_back(value.data());
  lengths_.push_back(static_cast<int>(value.size()));
  formats_.push_back(1);
  return *this;
}

pg_params& pg_params::int8(int64_t value) {
  // A store's statements take fewer int8 parameters than `max_ints`.
  auto& buf = ints_.at(int_count_++);
  auto u = static_cast<uint64_t>(value);
  for (size_t i = 0; i < 8; ++i)
    buf[i] = static_cast<char>((u >> (8 * (7 - i))) & 0xFF);
  values_.push_back(buf.data());
  lengths_.push_back(8);
  formats_.push_back(1);
  return *this;
}

pg_params& pg_params::bytea(std::span<const std::byte> value) {
  static const char empty = 0; // NULL would bind SQL NULL
  values_.push_back(
    value.empty() ? &empty : reinterpret_cast<const char*>(value.data()));
  lengths_.push_back(static_cast<int>(value.size()));
  formats_.push_back(1);
  return *this;
}

// -- pg_result ----------------------------------------------------------------

uint64_t pg_result::changed() const {
  const char* text = PQcmdTuples(res_.get());
  return text == nullptr ? 0 : std::strtoull(text, nullptr, 10);
}

bool pg_result::is(int row, int col, Oid type) const {
  auto* res = res_.get();
  return row >= 0 && row < PQntuples(res) && col >= 0 && col < PQnfields(res) &&
         PQftype(res, col) == type && PQfformat(res, col) == 1 &&
         PQgetisnull(res, row, col) == 0;
}

std::optional<int64_t> pg_result::int8(int row, int col) const {
  if (!is(row, col, int8_oid) || PQgetlength(res_.get(), row, col) != 8)
    return std::nullopt;
  auto* data = PQgetvalue(res_.get(), row, col);
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i)
    u = (u << 8) | static_cast<unsigned char>(data[i]);
  return static_cast<int64_t>(u);
}

std::optional<std::string> pg_result::text(int row, int col) const {
  if (!is(row, col, text_oid))
    return std::nullopt;
  auto len = PQgetlength(res_.get(), row, col);
  return std::string{PQgetvalue(res_.get(), row, col),
                     static_cast<size_t>(len)};
}

std::optional<std::span<const std::byte>> pg_result::bytea(int row,
                                                           int col) const {
  if (!is(row, col, bytea_oid))
    return std::nullopt;
  auto len = PQgetlength(res_.get(), row, col);
  auto* data =
    reinterpret_cast<const std::byte*>(PQgetvalue(res_.get(), row, col));
  return std::span<const std::byte>{data, static_cast<size_t>(len)};
}

// -- pg_connection ------------------------------------------------------------

caf::expected<std::unique_ptr<pg_connection>>
pg_connection::connect(const std::string& where, const std::string& conninfo,
                       std::chrono::seconds connect_timeout,
                       const std::vector<pg_statement>& statements) {
  auto timeout = std::to_string(connect_timeout.count());
  auto user_timeout = std::to_string(connect_timeout.count() * 2000);
  // ferry's defaults first: settings of `conninfo` (expanded from dbname)
  // override them.
  const char* keys[] = {"connect_timeout",  "keepalives",
                        "keepalives_idle",  "keepalives_interval",
                        "keepalives_count", "tcp_user_timeout",
                        "client_encoding",  "application_name",
                        "dbname",           nullptr};
  const char* values[] = {timeout.c_str(),
                          "1",
                          "5",
                          "2",
                          "3",
                          user_timeout.c_str(),
                          "UTF8",
                          "ferry-entities",
                          conninfo.c_str(),
                          nullptr};
  PGconn* raw = PQconnectdbParams(keys, values, 1);
  if (raw == nullptr)
    return store_failed(where, "cannot connect", "libpq is out of memory",
                        "the process is short of memory");
  std::unique_ptr<pg_connection> conn{new pg_connection(where, raw)};
  // The server's notices ("relation ... already exists, skipping") are
  // not errors; libpq would print them on stderr.
  PQsetNoticeProcessor(
    raw, [](void*, const char*) {}, nullptr);
  if (PQstatus(raw) != CONNECTION_OK)
    return store_failed(where, "cannot connect", one_line(PQerrorMessage(raw)),
                        "check that the server runs and that the location "
                        "names it (connect_timeout " +
                          timeout + " s)");
  for (size_t id = 0; id < statements.size(); ++id) {
    auto& stmt = statements[id];
    auto* res = PQprepare(raw, statement_name(id).c_str(), stmt.sql,
                          static_cast<int>(stmt.param_types.size()),
                          stmt.param_types.data());
    auto prepared = conn->check(res, "cannot prepare a statement");
    if (!prepared)
      return std::move(prepared.error());
  }
  return conn;
}

pg_connection::~pg_connection() {
  PQfinish(conn_);
}

caf::expected<pg_result> pg_connection::exec(size_t id, const pg_params& params,
                                             const std::string& what) {
  auto* res =
    PQexecPrepared(conn_, statement_name(id).c_str(), params.size(),
                   params.values(), params.lengths(), params.formats(), 1);
  return check(res, what);
}

caf::expected<pg_result> pg_connection::exec_text(const char* sql,
                                                  const std::string& what) {
  return check(PQexec(conn_, sql), what);
}

bool pg_connection::broken() const {
  return PQstatus(conn_) != CONNECTION_OK ||
         PQtransactionStatus(conn_) != PQTRANS_IDLE;
}

bool pg_connection::stale() const {
  pollfd fd{PQsocket(conn_), POLLIN, 0};
  if (fd.fd < 0)
    return true;
  return ::poll(&fd, 1, 0) != 0;
}

caf::expected<pg_result> pg_connection::check(PGresult* res,
                                              const std::string& what) {
  pg_result result{res};
  auto status = res == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(res);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
    return result;
  std::string message;
  std::string sqlstate;
  if (res != nullptr) {
    if (auto* primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY))
      message = primary;
    if (auto* state = PQresultErrorField(res, PG_DIAG_SQLSTATE))
      sqlstate = state;
  }
  if (message.empty())
    message = PQerrorMessage(conn_);
  message = one_line(message);
  if (!sqlstate.empty())
    message += " (SQLSTATE " + sqlstate + ")";
  return store_failed(where_, what, message, fix_for(conn_, sqlstate));
}

std::string one_line(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  bool space = false;
  for (char c : message) {
    if (c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) {
      out += ' ';
      space = false;
    }
    out += c;
  }
  return out;
}

} // namespace ferry::detail::entities
