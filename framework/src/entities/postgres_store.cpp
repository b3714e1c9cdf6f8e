// postgres_store: see postgres_store.hpp.
#include "entities/postgres_store.hpp"

#include "entities/lease_rules.hpp"
#include "entities/pg_pool.hpp"
#include "entities/store_checks.hpp"

#include "ferry/errc.hpp"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace ferry::detail::entities {

namespace {

/// The server's clock: milliseconds since 1970.
#define FERRY_PG_NOW "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

/// Creates the tables; the advisory lock makes processes that open the
/// store at once take turns (concurrent CREATE TABLE IF NOT EXISTS of one
/// name may fail in PostgreSQL).
constexpr const char* create_tables =
  "BEGIN;"
  "SELECT pg_advisory_xact_lock(7378415378237517156);"
  "CREATE TABLE IF NOT EXISTS ferry_entity_states ("
  " type text NOT NULL, key text NOT NULL, family text NOT NULL,"
  " version bigint NOT NULL, state bytea NOT NULL,"
  " PRIMARY KEY (type, key));"
  "CREATE TABLE IF NOT EXISTS ferry_shard_leases ("
  " shard bigint PRIMARY KEY, holder text NOT NULL DEFAULT '',"
  " epoch bigint NOT NULL DEFAULT 0, expires_ms bigint NOT NULL DEFAULT 0,"
  " hand_to text NOT NULL DEFAULT '',"
  " released_ms bigint NOT NULL DEFAULT 0);"
  "COMMIT;";

/// The statements every connection prepares, in the order of `statements`.
enum stmt_id : size_t {
  load_stmt,
  insert_first_stmt,
  update_stmt,
  version_stmt,
  begin_stmt,
  commit_stmt,
  lease_ensure_stmt,
  lease_select_stmt,
  lease_write_stmt,
  renew_stmt,
  release_stmt,
  leases_stmt,
};

std::vector<pg_statement> statements() {
  auto t = text_oid;
  auto i = int8_oid;
  auto b = bytea_oid;
  return {
    // load: the state only when it is within $3 bytes.
    {"SELECT family, version, octet_length(state)::bigint,"
     " CASE WHEN octet_length(state) <= $3 THEN state END"
     " FROM ferry_entity_states WHERE type = $1 AND key = $2",
     {t, t, i}},
    {"INSERT INTO ferry_entity_states (type, key, family, version, state)"
     " VALUES ($1, $2, $3, 1, $4) ON CONFLICT DO NOTHING",
     {t, t, t, b}},
    {"UPDATE ferry_entity_states SET family = $3, state = $4,"
     " version = version + 1 WHERE type = $1 AND key = $2 AND version = $5",
     {t, t, t, b, i}},
    {"SELECT version FROM ferry_entity_states WHERE type = $1 AND key = $2",
     {t, t}},
    {"BEGIN", {}},
    {"COMMIT", {}},
    {"INSERT INTO ferry_shard_leases (shard) VALUES ($1)"
     " ON CONFLICT DO NOTHING",
     {i}},
    {"SELECT holder, epoch, expires_ms, hand_to, released_ms, " FERRY_PG_NOW
     " FROM ferry_shard_leases WHERE shard = $1 FOR UPDATE",
     {i}},
    {"UPDATE ferry_shard_leases SET holder = $2, epoch = $3,"
     " expires_ms = $4, hand_to = $5, released_ms = $6 WHERE shard = $1",
     {i, t, i, i, t, i}},
    {"WITH t AS (SELECT " FERRY_PG_NOW " AS now_ms)"
     " UPDATE ferry_shard_leases SET expires_ms = t.now_ms + $2 FROM t"
     " WHERE holder = $1 AND expires_ms > t.now_ms RETURNING shard",
     {t, i}},
    {"WITH t AS (SELECT " FERRY_PG_NOW " AS now_ms)"
     " UPDATE ferry_shard_leases SET expires_ms = t.now_ms,"
     " released_ms = t.now_ms, hand_to = $3 FROM t"
     " WHERE shard = $1 AND holder = $2 AND expires_ms > t.now_ms",
     {i, t, t}},
    {"SELECT shard, holder, epoch, expires_ms, hand_to, "
     "released_ms, " FERRY_PG_NOW " FROM ferry_shard_leases ORDER BY shard",
     {}},
  };
}

#undef FERRY_PG_NOW

/// Reads columns `first` to `first + 5` (holder, epoch, expires_ms,
/// hand_to, released_ms, now) of row `row`; nothing when odd.
std::optional<std::pair<lease_row, int64_t>> lease_row_of(const pg_result& res,
                                                          int row, int first) {
  auto holder = res.text(row, first);
  auto epoch = res.int8(row, first + 1);
  auto expires = res.int8(row, first + 2);
  auto hand_to = res.text(row, first + 3);
  auto released = res.int8(row, first + 4);
  auto now = res.int8(row, first + 5);
  if (!holder || !epoch || *epoch < 0 || !expires || !hand_to || !released ||
      !now)
    return std::nullopt;
  return std::pair{lease_row{std::move(*holder), static_cast<uint64_t>(*epoch),
                             *expires, std::move(*hand_to), *released},
                   *now};
}

/// Returns column `col` of row `row` as a shard, or nothing when odd.
std::optional<uint32_t> shard_of(const pg_result& res, int row, int col) {
  auto shard = res.int8(row, col);
  if (!shard || *shard < 0 || *shard > int64_t{UINT32_MAX})
    return std::nullopt;
  return static_cast<uint32_t>(*shard);
}

class postgres_store final : public state_store {
public:
  postgres_store(std::string where, const std::string& conninfo,
                 const state_store_config& cfg)
    : where_(std::move(where)),
      conninfo_(conninfo),
      cfg_(cfg),
      pool_(where_, conninfo, cfg.pool_size, cfg.connect_timeout,
            statements()) {
    // nop
  }

  std::string describe() const override { return where_; }

  /// Creates the tables on a connection of its own, then opens the pool's
  /// first connection (which prepares the statements on them).
  caf::error open() {
    auto setup =
      pg_connection::connect(where_, conninfo_, cfg_.connect_timeout, {});
    if (!setup)
      return std::move(setup.error());
    auto created =
      (*setup)->exec_text(create_tables, "cannot create the tables");
    if (!created)
      return std::move(created.error());
    auto first = pool_.take();
    if (!first)
      return std::move(first.error());
    return {};
  }

  caf::expected<stored_state> load(const std::string& type,
                                   const std::string& key) override {
    if (auto err = check_entity(where_, type, key))
      return err;
    auto conn = pool_.take();
    if (!conn)
      return std::move(conn.error());
    pg_params params;
    params.text(type).text(key).int8(limit());
    auto res = (*conn)->exec(load_stmt, params,
                             "cannot load the state of " + in_quotes(type) +
                               "/" + in_quotes(key));
    if (!res)
      return std::move(res.error());
    if (res->rows() == 0)
      return stored_state{};
    auto family = res->text(0, 0);
    auto version = res->int8(0, 1);
    auto size = res->int8(0, 2);
    if (!version)
      return odd_row(where_, type, key, "has a version that is no bigint");
    if (!family)
      return odd_row(where_, type, key, "has a family that is no text");
    if (!size)
      return odd_row(where_, type, key, "holds no bytea state");
    if (auto err = check_row(where_, type, key, *family, *version, *size,
                             cfg_.max_state_bytes))
      return err;
    auto bytes = res->bytea(0, 3);
    if (!bytes || static_cast<int64_t>(bytes->size()) != *size)
      return odd_row(where_, type, key, "holds no bytea state of its size");
    auto copy = copy_state(where_, type, key, *bytes);
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
    auto conn = pool_.take();
    if (!conn)
      return std::move(conn.error());
    auto what =
      "cannot save the state of " + in_quotes(type) + "/" + in_quotes(key);
    pg_params params;
    params.text(type).text(key).text(family).bytea(bytes);
    if (expected != 0)
      params.int8(static_cast<int64_t>(expected));
    auto res = (*conn)->exec(expected == 0 ? insert_first_stmt : update_stmt,
                             params, what);
    if (!res)
      return std::move(res.error());
    if (res->changed() == 1)
      return expected + 1;
    pg_params key_params;
    key_params.text(type).text(key);
    auto stored = (*conn)->exec(version_stmt, key_params,
                                "cannot read the stored version of " +
                                  in_quotes(type) + "/" + in_quotes(key));
    if (!stored)
      return std::move(stored.error());
    uint64_t version = 0;
    if (stored->rows() > 0) {
      auto v = stored->int8(0, 0);
      if (!v || *v < 1)
        return odd_row(where_, type, key, "has a version below 1 or none");
      version = static_cast<uint64_t>(*v);
    }
    return conflict(where_, type, key, expected, version);
  }

  caf::expected<lease_grant> acquire(uint32_t shard, const std::string& owner,
                                     std::chrono::milliseconds ttl,
                                     std::chrono::milliseconds grace) override {
    if (auto err = check_owner(where_, owner, "owner"))
      return err;
    if (auto err = check_lease_times(where_, ttl, grace))
      return err;
    auto conn = pool_.take();
    if (!conn)
      return std::move(conn.error());
    // A failure inside the transaction leaves the connection in it: the
    // pool closes such a connection, which ends the transaction.
    auto what = "cannot take the lease of shard " + std::to_string(shard);
    pg_params none;
    pg_params shard_only;
    shard_only.int8(shard);
    if (auto res = (*conn)->exec(begin_stmt, none, what); !res)
      return std::move(res.error());
    if (auto res = (*conn)->exec(lease_ensure_stmt, shard_only, what); !res)
      return std::move(res.error());
    auto res = (*conn)->exec(lease_select_stmt, shard_only, what);
    if (!res)
      return std::move(res.error());
    auto row = res->rows() == 1 ? lease_row_of(*res, 0, 0) : std::nullopt;
    if (!row)
      return store_failed(where_,
                          "the lease row of shard " + std::to_string(shard) +
                            " has odd columns",
                          {}, "remove the row");
    auto decision = decide_acquire(row->first, row->second, owner, ttl, grace);
    if (decision.write) {
      auto& w = *decision.write;
      pg_params params;
      params.int8(shard).text(w.holder).int8(static_cast<int64_t>(w.epoch));
      params.int8(w.expires_ms).text(w.hand_to).int8(w.released_ms);
      if (auto written = (*conn)->exec(lease_write_stmt, params, what);
          !written)
        return std::move(written.error());
    }
    if (auto done = (*conn)->exec(commit_stmt, none, what); !done)
      return std::move(done.error());
    return std::move(decision.grant);
  }

  caf::expected<std::vector<uint32_t>>
  renew(const std::string& owner, std::chrono::milliseconds ttl) override {
    if (auto err = check_owner(where_, owner, "owner"))
      return err;
    if (auto err = check_lease_times(where_, ttl, {}))
      return err;
    auto conn = pool_.take();
    if (!conn)
      return std::move(conn.error());
    pg_params params;
    params.text(owner).int8(ttl.count());
    auto res = (*conn)->exec(renew_stmt, params,
                             "cannot renew the leases of " + in_quotes(owner));
    if (!res)
      return std::move(res.error());
    std::vector<uint32_t> out;
    for (int row = 0; row < res->rows(); ++row) {
      auto shard = shard_of(*res, row, 0);
      if (!shard)
        return store_failed(where_, "a lease row has an odd shard", {},
                            "remove the row");
      out.push_back(*shard);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  caf::error release(uint32_t shard, const std::string& owner,
                     const std::string& hand_to) override {
    if (auto err = check_owner(where_, owner, "owner"))
      return err;
    if (auto err = check_owner(where_, hand_to, "hand_to"))
      return err;
    auto conn = pool_.take();
    if (!conn)
      return std::move(conn.error());
    pg_params params;
    params.int8(shard).text(owner).text(hand_to);
    auto res = (*conn)->exec(release_stmt, params,
                             "cannot release shard " + std::to_string(shard));
    if (!res)
      return std::move(res.error());
    return {};
  }

  caf::expected<std::vector<shard_lease>> leases() override {
    auto conn = pool_.take();
    if (!conn)
      return std::move(conn.error());
    auto res =
      (*conn)->exec(leases_stmt, pg_params{}, "cannot read the leases");
    if (!res)
      return std::move(res.error());
    std::vector<shard_lease> out;
    for (int i = 0; i < res->rows(); ++i) {
      auto shard = shard_of(*res, i, 0);
      auto row = lease_row_of(*res, i, 1);
      if (!shard || !row)
        return store_failed(where_, "a lease row has odd columns", {},
                            "remove the row");
      auto& [lease, now] = *row;
      shard_lease x;
      x.shard = *shard;
      x.holder = lease.holder;
      x.epoch = lease.epoch;
      x.left =
        std::chrono::milliseconds{std::max<int64_t>(0, lease.expires_ms - now)};
      x.hand_to = lease.hand_to;
      out.push_back(std::move(x));
    }
    return out;
  }

private:
  int64_t limit() const { return static_cast<int64_t>(cfg_.max_state_bytes); }

  const std::string where_;
  const std::string conninfo_;
  const state_store_config cfg_;
  pg_pool pool_;
};

} // namespace

caf::expected<std::string> describe_conninfo(const std::string& conninfo) {
  auto invalid = [](std::string why) {
    return caf::make_error(
      errc::invalid_config,
      "entities' state store: " + std::move(why) +
        "; give postgresql:host=HOST port=PORT dbname=DB user=USER (libpq's "
        "keyword/value form) or postgresql://USER@HOST:PORT/DB");
  };
  char* message = nullptr;
  auto* options = PQconninfoParse(conninfo.c_str(), &message);
  if (options == nullptr) {
    std::string why =
      "libpq cannot read the location postgresql:" + in_quotes(conninfo);
    if (message != nullptr) {
      why += ": " + one_line(message);
      PQfreemem(message);
    }
    return invalid(std::move(why));
  }
  // Where first (host, port, database, user), then the other settings in
  // libpq's order; passwords never.
  constexpr std::string_view first[] = {"host", "hostaddr", "port", "dbname",
                                        "user"};
  auto rank = [&](std::string_view key) {
    auto i = std::find(std::begin(first), std::end(first), key);
    return static_cast<size_t>(i - std::begin(first));
  };
  std::vector<std::pair<std::string_view, std::string_view>> settings;
  for (auto* opt = options; opt->keyword != nullptr; ++opt) {
    std::string_view key{opt->keyword};
    if (opt->val == nullptr || *opt->val == '\0' || key == "password" ||
        key == "sslpassword")
      continue;
    settings.emplace_back(key, opt->val);
  }
  std::stable_sort(settings.begin(), settings.end(), [&](auto& x, auto& y) {
    return rank(x.first) < rank(y.first);
  });
  std::string out = "postgresql:";
  for (auto& [key, value] : settings) {
    out += out.size() > 11 ? " " : "";
    out += key;
    out += '=';
    if (value.find_first_of(" '\\") == std::string_view::npos) {
      out += value;
    } else {
      out += '\'';
      for (char c : value) {
        if (c == '\'' || c == '\\')
          out += '\\';
        out += c;
      }
      out += '\'';
    }
  }
  bool any = !settings.empty();
  PQconninfoFree(options);
  if (!any)
    return invalid("the location postgresql:" + in_quotes(conninfo) +
                   " names no server or database");
  return out;
}

caf::expected<std::unique_ptr<state_store>>
open_postgres_store(const std::string& conninfo,
                    const state_store_config& cfg) {
  auto where = describe_conninfo(conninfo);
  if (!where)
    return std::move(where.error());
  auto store =
    std::make_unique<postgres_store>(std::move(*where), conninfo, cfg);
  if (auto err = store->open())
    return err;
  return std::unique_ptr<state_store>{std::move(store)};
}

} // namespace ferry::detail::entities
