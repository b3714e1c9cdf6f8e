// store_checks: see store_checks.hpp.
#include "entities/store_checks.hpp"

#include "ferry/errc.hpp"

#include <cstdio>
#include <new>

namespace ferry::detail::entities {

namespace {

/// Returns the length of the UTF-8 sequence that starts at `text[i]`, or 0
/// when none valid starts there (overlong forms, surrogates and code
/// points above U+10FFFF are invalid).
size_t utf8_sequence(std::string_view text, size_t i) {
  auto byte = [&](size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  auto lead = byte(i);
  size_t len;
  uint32_t min;
  uint32_t cp;
  if (lead < 0x80)
    return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
    min = 0x80;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    min = 0x800;
    cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    min = 0x10000;
    cp = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() - i < len)
    return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

caf::error name_error(const std::string& where, const char* role,
                      std::string_view value, size_t limit, bool may_be_empty) {
  if (value.empty() && !may_be_empty)
    return store_failed(where, std::string{"the "} + role + " is empty", {},
                        std::string{"give every "} + role + " a name");
  if (value.size() > limit)
    return store_failed(where,
                        std::string{"the "} + role + " " + in_quotes(value) +
                          " has " + std::to_string(value.size()) + " bytes",
                        {},
                        "a store keeps at most " + std::to_string(limit) +
                          " bytes of " + role);
  if (!is_clean_text(value))
    return store_failed(where,
                        std::string{"the "} + role + " " + in_quotes(value) +
                          " is not UTF-8 text without NUL bytes",
                        {}, "name it with UTF-8 text");
  return {};
}

std::string entity_name(const std::string& type, const std::string& key) {
  return "entity (type " + in_quotes(type) + ", key " + in_quotes(key) + ")";
}

} // namespace

bool is_clean_text(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\0')
      return false;
    auto len = utf8_sequence(text, i);
    if (len == 0)
      return false;
    i += len;
  }
  return true;
}

std::string in_quotes(std::string_view text) {
  constexpr size_t shown = 64;
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < shown; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (text.size() > shown)
    out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

caf::error store_failed(const std::string& where, const std::string& what,
                        const std::string& message, const std::string& fix) {
  auto text = where + ": " + what;
  if (!message.empty())
    text += ": " + message;
  if (!fix.empty())
    text += "; " + fix;
  return caf::make_error(errc::state_store_failed, std::move(text));
}

caf::error check_config(const state_store_config& cfg) {
  auto invalid = [](std::string text) {
    return caf::make_error(errc::invalid_config,
                           "entities' state store: " + std::move(text));
  };
  if (cfg.pool_size == 0 || cfg.pool_size > 1024)
    return invalid("pool_size is " + std::to_string(cfg.pool_size) +
                   "; give 1 to 1024 connections");
  if (cfg.connect_timeout < std::chrono::seconds{2} ||
      cfg.connect_timeout > std::chrono::seconds{3600})
    return invalid("connect_timeout is " +
                   std::to_string(cfg.connect_timeout.count()) +
                   " s; give 2 s to 1 h (libpq waits at least 2 s)");
  if (cfg.busy_timeout < std::chrono::milliseconds{0} ||
      cfg.busy_timeout > std::chrono::milliseconds{INT32_MAX})
    return invalid("busy_timeout is " +
                   std::to_string(cfg.busy_timeout.count()) +
                   " ms; give 0 to 2^31-1 ms");
  if (cfg.max_state_bytes > max_state_limit)
    return invalid("max_state_bytes is " + std::to_string(cfg.max_state_bytes) +
                   "; a store keeps at most " +
                   std::to_string(max_state_limit) + " bytes per state");
  return {};
}

caf::error check_entity(const std::string& where, const std::string& type,
                        const std::string& key) {
  if (auto err = name_error(where, "entity type", type, max_type_bytes, false))
    return err;
  return name_error(where, "entity key", key, max_key_bytes, true);
}

caf::error check_save(const std::string& where, const std::string& type,
                      const std::string& key, uint64_t expected,
                      const std::string& family, size_t size,
                      uint64_t max_state_bytes) {
  if (auto err = check_entity(where, type, key))
    return err;
  if (auto err = name_error(where, "family", family, max_family_bytes, false))
    return err;
  if (expected >= max_version)
    return store_failed(where,
                        "cannot save " + entity_name(type, key) +
                          " after version " + std::to_string(expected),
                        {}, "versions end at " + std::to_string(max_version));
  if (size > max_state_bytes)
    return store_failed(where,
                        "the state of " + entity_name(type, key) + " has " +
                          std::to_string(size) + " bytes",
                        {},
                        "max_state_bytes allows " +
                          std::to_string(max_state_bytes) +
                          "; raise it, or keep less in one entity");
  return {};
}

caf::error check_owner(const std::string& where, const std::string& owner,
                       const char* role) {
  bool may_be_empty = std::string_view{role} == "hand_to";
  return name_error(where, role, owner, max_owner_bytes, may_be_empty);
}

caf::error check_lease_times(const std::string& where,
                             std::chrono::milliseconds ttl,
                             std::chrono::milliseconds grace) {
  if (ttl <= std::chrono::milliseconds{0} || ttl > max_lease_time)
    return caf::make_error(errc::invalid_config,
                           where + ": a lease's ttl is " +
                             std::to_string(ttl.count()) +
                             " ms; give more than 0 and at most 1 day");
  if (grace < std::chrono::milliseconds{0} || grace > max_lease_time)
    return caf::make_error(errc::invalid_config,
                           where + ": a hand-off's grace is " +
                             std::to_string(grace.count()) +
                             " ms; give 0 to 1 day");
  return {};
}

caf::error conflict(const std::string& where, const std::string& type,
                    const std::string& key, uint64_t expected,
                    uint64_t stored) {
  auto text = where + ": " + entity_name(type, key) + " is stored at version " +
              std::to_string(stored) + ", this activation loaded version " +
              std::to_string(expected) +
              ": another activation saved since; this one must stop (the "
              "next activation loads version " +
              std::to_string(stored) + ")";
  return caf::make_error(errc::state_conflict, std::move(text));
}

caf::error odd_row(const std::string& where, const std::string& type,
                   const std::string& key, const std::string& what) {
  return store_failed(
    where, "the stored row of " + entity_name(type, key) + " " + what, {},
    "it was not written by this build's store: remove the "
    "row or open a store of the format it has");
}

caf::error check_row(const std::string& where, const std::string& type,
                     const std::string& key, std::string_view family,
                     int64_t version, int64_t size, uint64_t max_state_bytes) {
  if (version < 1)
    return odd_row(where, type, key,
                   "has version " + std::to_string(version) +
                     " (a stored state has 1 or more)");
  if (family.empty() || family.size() > max_family_bytes ||
      !is_clean_text(family))
    return odd_row(where, type, key,
                   "names no family (" + in_quotes(family) + ")");
  if (size < 0)
    return odd_row(where, type, key, "holds no state");
  if (static_cast<uint64_t>(size) > max_state_bytes)
    return store_failed(where,
                        "the stored state of " + entity_name(type, key) +
                          " has " + std::to_string(size) + " bytes",
                        {},
                        "max_state_bytes allows " +
                          std::to_string(max_state_bytes) +
                          "; raise it to load this state");
  return {};
}

caf::expected<std::vector<std::byte>>
copy_state(const std::string& where, const std::string& type,
           const std::string& key, std::span<const std::byte> bytes) {
  try {
    return std::vector<std::byte>(bytes.begin(), bytes.end());
  } catch (const std::bad_alloc&) {
    return store_failed(where,
                        "cannot hold the state of " + entity_name(type, key) +
                          " (" + std::to_string(bytes.size()) + " bytes)",
                        "out of memory",
                        "give the process more memory or lower "
                        "max_state_bytes");
  }
}

} // namespace ferry::detail::entities
