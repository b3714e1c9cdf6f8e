// postgres_store: the state store in a PostgreSQL database, for members on
// several hosts.
//
// Saves are single statements (a conditional UPDATE, or an INSERT that does
// nothing when a row exists), so a save that returned its version is
// committed; the server's synchronous_commit decides whether it survives
// the server's crash (on by default). A lease is decided in a transaction
// that locks the shard's row (SELECT ... FOR UPDATE after inserting it if
// missing), so owners asking at once are decided one after the other.
// Times come from the server's clock_timestamp().
//
// Calls take a connection of a pool (pg_pool.hpp): at most `pool_size` at
// once, opened lazily, closed after a failure and opened again by a later
// call. A call on a connection whose server went away fails with
// state_store_failed (libpq's message kept) within connect_timeout, or the
// TCP timeouts ferry sets (pg_connection.hpp).
//
// Thread-safety: every call may come from any thread; the pool lends each
// call its own connection.
#pragma once

#include "entities/state_store.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <string>

namespace ferry::detail::entities {

/// Returns libpq's connection string `conninfo` as a store's description:
/// "postgresql:" and its settings without passwords. Fails with
/// `errc::invalid_config` when libpq cannot read it or it names nothing.
caf::expected<std::string> describe_conninfo(const std::string& conninfo);

/// Opens the PostgreSQL store at `conninfo` (libpq's keyword/value or URI
/// form), creating its tables if missing.
/// REQUIRES: `cfg` is checked (check_config).
caf::expected<std::unique_ptr<state_store>>
open_postgres_store(const std::string& conninfo, const state_store_config& cfg);

} // namespace ferry::detail::entities
