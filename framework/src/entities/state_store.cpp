// state_store: the location's scheme picks the store (see state_store.hpp).
#include "entities/state_store.hpp"

#include "entities/postgres_store.hpp"
#include "entities/sqlite_store.hpp"
#include "entities/store_checks.hpp"

#include "ferry/errc.hpp"

#include <string_view>

namespace ferry::detail::entities {

namespace {

constexpr std::string_view sqlite_scheme = "sqlite:";
constexpr std::string_view postgres_scheme = "postgresql:";

/// The forms a location takes, for errors.
constexpr const char* location_forms =
  "give sqlite:PATH (one file, for the processes of one host) or "
  "postgresql:CONNINFO (libpq's keyword/value form, e.g. "
  "postgresql:host=db1 dbname=ferry user=ferry, or a URI "
  "postgresql://ferry@db1/ferry)";

caf::error invalid_location(const std::string& location, const char* why) {
  return caf::make_error(errc::invalid_config,
                         "entities' state store: the location " +
                           in_quotes(location) + " " + why + "; " +
                           location_forms);
}

} // namespace

state_store::~state_store() {
  // nop
}

caf::expected<std::unique_ptr<state_store>>
open_state_store(const state_store_config& cfg) {
  if (auto err = check_config(cfg))
    return err;
  std::string_view location = cfg.location;
  if (location.starts_with(sqlite_scheme)) {
    auto path = location.substr(sqlite_scheme.size());
    if (path.empty())
      return invalid_location(cfg.location, "names no file");
    return open_sqlite_store(std::string{path}, cfg);
  }
  // A URI (postgresql://... or postgres://...) is a conninfo as it stands.
  if (location.starts_with("postgresql://") ||
      location.starts_with("postgres://"))
    return open_postgres_store(std::string{location}, cfg);
  if (location.starts_with(postgres_scheme)) {
    auto conninfo = location.substr(postgres_scheme.size());
    if (conninfo.find_first_not_of(" \t") == std::string_view::npos)
      return invalid_location(cfg.location, "names no server or database");
    return open_postgres_store(std::string{conninfo}, cfg);
  }
  return invalid_location(cfg.location, "has no scheme a store knows");
}

} // namespace ferry::detail::entities
