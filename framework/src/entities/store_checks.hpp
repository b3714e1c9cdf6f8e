// store_checks: what both state stores refuse, and the errors they return.
//
// Both stores check their arguments here before they reach the database,
// and the rows they read after, so that SQLite and PostgreSQL refuse the
// same things with the same words. Names are UTF-8 text without NUL bytes
// (PostgreSQL's text holds no NUL) and short enough for a PostgreSQL index
// entry (at most 2704 bytes for type and key together). Rows come from a
// database that other builds or people may have written: a state larger
// than the limit, a version below 1 or a family that is no name is an
// error, never a crash or an allocation of the row's claimed size.
//
// Every error names the store (`where`: `state_store::describe()`), what
// failed and how to fix it.
//
// Thread-safety: functions only; no state.
#pragma once

#include "entities/state_store.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::detail::entities {

/// Most bytes of an entity type's name.
constexpr size_t max_type_bytes = 255;
/// Most bytes of an entity's key.
constexpr size_t max_key_bytes = 2048;
/// Most bytes of a family's name.
constexpr size_t max_family_bytes = 255;
/// Most bytes of an owner's name (the holder of a lease).
constexpr size_t max_owner_bytes = 255;
/// Largest `max_state_bytes` a store accepts (a PostgreSQL field holds at
/// most 1 GiB, an SQLite value 10^9 bytes).
constexpr uint64_t max_state_limit = uint64_t{512} << 20;
/// Longest lease or hand-off grace.
constexpr std::chrono::milliseconds max_lease_time{24 * 3600 * 1000};
/// Largest version a store keeps (a signed 64-bit column).
constexpr uint64_t max_version = uint64_t{INT64_MAX};

/// Returns whether `text` is UTF-8 without NUL bytes.
bool is_clean_text(std::string_view text);

/// Returns `text` for an error message: in double quotes, control
/// characters and quotes escaped, cut after 64 bytes ("..." and the
/// length then).
std::string in_quotes(std::string_view text);

/// Returns an error of `errc::state_store_failed`: "`where`: `what`:
/// `message`; `fix`" (`message`, the library's, left out when empty).
caf::error store_failed(const std::string& where, const std::string& what,
                        const std::string& message, const std::string& fix);

/// Checks the settings of `cfg` other than its location.
caf::error check_config(const state_store_config& cfg);

/// Checks an entity's name (type not empty; both clean text and within
/// their limits).
caf::error check_entity(const std::string& where, const std::string& type,
                        const std::string& key);

/// Checks the arguments of `save`.
caf::error check_save(const std::string& where, const std::string& type,
                      const std::string& key, uint64_t expected,
                      const std::string& family, size_t size,
                      uint64_t max_state_bytes);

/// Checks an owner's name (`role`: "owner" or "hand_to"; "hand_to" may be
/// empty).
caf::error check_owner(const std::string& where, const std::string& owner,
                       const char* role);

/// Checks a lease's `ttl` (0, 1 day] and a hand-off's `grace` [0, 1 day].
caf::error check_lease_times(const std::string& where,
                             std::chrono::milliseconds ttl,
                             std::chrono::milliseconds grace);

/// Returns the error of a save refused because (type, key) is stored at
/// version `stored`, not `expected`.
caf::error conflict(const std::string& where, const std::string& type,
                    const std::string& key, uint64_t expected, uint64_t stored);

/// Returns the error of a stored row that is not one a store writes
/// (`what` says how).
caf::error odd_row(const std::string& where, const std::string& type,
                   const std::string& key, const std::string& what);

/// Checks a stored row's family, version and state size (`size` as the
/// database counts it, before the state is read).
caf::error check_row(const std::string& where, const std::string& type,
                     const std::string& key, std::string_view family,
                     int64_t version, int64_t size, uint64_t max_state_bytes);

/// Returns a copy of a loaded state's `bytes`; fails with
/// `errc::state_store_failed` when the process has no memory for it.
caf::expected<std::vector<std::byte>>
copy_state(const std::string& where, const std::string& type,
           const std::string& key, std::span<const std::byte> bytes);

} // namespace ferry::detail::entities
