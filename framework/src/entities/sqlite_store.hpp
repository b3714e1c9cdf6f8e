// sqlite_store: the state store in one SQLite file, for the processes of
// one host.
//
// The file is in WAL mode with synchronous=NORMAL: readers and one writer
// work at once across processes, and a committed save survives the crash of
// any process (not a power loss: that needs synchronous=FULL). A writer
// waits up to `busy_timeout` for another process's write, then fails with
// state_store_failed. Saves are single statements (a conditional UPDATE,
// or an INSERT that does nothing when a row exists); leases are read and
// written in BEGIN IMMEDIATE transactions, which take the write lock before
// they read, so two processes' acquires are decided one after the other.
// Times come from the system clock through SQLite's julianday('now').
//
// Thread-safety: a store has one connection, and one mutex serializes its
// calls: threads of one process take turns, other processes' calls run
// beside them. Every statement is prepared once (sqlite3_prepare_v3,
// persistent) and kept with the connection; parameters are always bound.
#pragma once

#include "entities/state_store.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <string>

namespace ferry::detail::entities {

/// Opens the SQLite store at `path` (creating the file and its tables if
/// missing).
/// REQUIRES: `path` is not empty; `cfg` is checked (check_config).
caf::expected<std::unique_ptr<state_store>>
open_sqlite_store(const std::string& path, const state_store_config& cfg);

} // namespace ferry::detail::entities
