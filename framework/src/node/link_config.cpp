// link_config: per-link settings from the config file (see
// ferry/link_config.hpp).
#include "ferry/link_config.hpp"

#include "node/settings_reader.hpp"

#include "ferry/errc.hpp"

#include <caf/config_value.hpp>
#include <caf/settings.hpp>

#include <algorithm>
#include <chrono>

namespace ferry {

using detail::bad_value;
using detail::read_duration;
using detail::read_size;
using detail::read_strings;
using detail::read_uint;

// -- compression --------------------------------------------------------------

std::string to_string(compression x) {
  switch (x) {
  case compression::none:
    return "none";
  case compression::lz4:
    return "lz4";
  case compression::zstd:
    return "zstd";
  }
  return "none";
}

caf::expected<compression> parse_compression(const std::string& x) {
  if (x == "none")
    return compression::none;
  if (x == "lz4")
    return compression::lz4;
  if (x == "zstd")
    return compression::zstd;
  return caf::make_error(errc::invalid_config, "unknown compression \"" + x +
                                                 "\": use none, lz4 or zstd");
}

// -- link_config --------------------------------------------------------------

std::vector<std::string> link_config::default_families() {
  return {"raw",     "cereal.binary",   "caf",
          "msgpack", "cereal.portable", "cereal.json"};
}

caf::expected<link_config>
link_config::from_settings(const caf::settings& section, link_config base) {
  for (auto& [key, value] : section) {
    caf::error err;
    uint64_t tmp = 0;
    if (key == "serializers") {
      err = read_strings(value, key, base.serializers);
    } else if (key == "deserializers") {
      err = read_strings(value, key, base.deserializers);
    } else if (key == "spill-threshold") {
      err = read_size(value, key, base.spill_threshold);
    } else if (key == "compression") {
      auto str = caf::get_if<std::string>(&value);
      if (str == nullptr)
        return bad_value(key, "\"none\", \"lz4\" or \"zstd\"");
      auto c = parse_compression(*str);
      if (!c)
        return std::move(c.error());
      base.compression = *c;
    } else if (key == "compression-threshold") {
      err = read_size(value, key, base.compression_threshold);
    } else if (key == "max-message-size") {
      err = read_size(value, key, base.max_message_size);
    } else if (key == "window-bytes") {
      err = read_size(value, key, base.window_bytes);
    } else if (key == "window-messages") {
      err = read_uint(value, key, base.window_messages);
    } else if (key == "send-timeout") {
      err = read_duration(value, key, base.send_timeout);
    } else if (key == "pull-threshold") {
      err = read_size(value, key, base.pull_threshold);
    } else if (key == "chunk-size") {
      err = read_size(value, key, base.chunk_size);
    } else if (key == "chunks-in-flight") {
      err = read_uint(value, key, tmp);
      base.chunks_in_flight = static_cast<uint32_t>(tmp);
    } else if (key == "batch-messages") {
      err = read_uint(value, key, tmp);
      base.batch_messages =
        static_cast<uint32_t>(std::min<uint64_t>(tmp, 1u << 20));
    } else if (key == "batch-gap") {
      err = read_duration(value, key, base.batch_gap);
    } else if (key == "lane") {
      if (auto flag = caf::get_if<bool>(&value))
        base.lane = *flag;
      else
        return bad_value(key, "true or false");
    } else if (key == "no-lane") {
      // The command line's form (a flag cannot take false).
      if (auto flag = caf::get_if<bool>(&value))
        base.lane = !*flag;
      else
        return bad_value(key, "true or false");
    } else if (key == "lane-bytes") {
      err = read_size(value, key, base.lane_bytes);
    } else if (key == "lane-spin") {
      err = read_duration(value, key, base.lane_spin);
    } else if (key == "max-proxies") {
      err = read_uint(value, key, base.max_proxies);
    } else if (key == "max-pending-requests") {
      err = read_uint(value, key, base.max_pending_requests);
    } else if (key == "max-spawned-actors") {
      err = read_uint(value, key, base.max_spawned_actors);
    } else if (key == "max-held-bytes") {
      err = read_size(value, key, base.max_held_bytes);
    } else if (key == "max-held-messages") {
      err = read_uint(value, key, base.max_held_messages);
    } else if (key == "heartbeat-interval") {
      err = read_duration(value, key, base.heartbeat_interval);
    } else if (key == "connection-timeout") {
      err = read_duration(value, key, base.connection_timeout);
    } else if (key == "plain") {
      if (auto flag = caf::get_if<bool>(&value))
        base.plain = *flag;
      else
        return bad_value(key, "true or false");
    } else {
      return caf::make_error(
        errc::invalid_config,
        "unknown link setting \"" + key +
          "\": known are serializers, deserializers, spill-threshold, "
          "compression, compression-threshold, max-message-size, "
          "window-bytes, window-messages, send-timeout, pull-threshold, "
          "chunk-size, chunks-in-flight, batch-messages, batch-gap, lane, "
          "no-lane, lane-bytes, lane-spin, max-proxies, "
          "max-pending-requests, max-spawned-actors, max-held-bytes, "
          "max-held-messages, heartbeat-interval, "
          "connection-timeout, plain");
    }
    if (err)
      return err;
  }
  if (base.chunk_size == 0 || base.chunks_in_flight == 0)
    return caf::make_error(errc::invalid_config,
                           "chunk-size and chunks-in-flight must be positive");
  if (base.batch_messages == 0)
    return caf::make_error(errc::invalid_config,
                           "batch-messages must be positive (1: no batching)");
  if (base.window_messages == 0 || base.window_bytes == 0)
    return caf::make_error(errc::invalid_config,
                           "window-bytes and window-messages must be positive");
  if (base.lane_bytes < (uint64_t{64} << 10) ||
      base.lane_bytes > (uint64_t{1} << 30) ||
      (base.lane_bytes & (base.lane_bytes - 1)) != 0)
    return caf::make_error(errc::invalid_config,
                           "lane-bytes is " + std::to_string(base.lane_bytes) +
                             ": use a power of two from 64KiB to 1GiB");
  if (base.lane_spin.count() < 0 ||
      base.lane_spin > std::chrono::milliseconds{10})
    return caf::make_error(errc::invalid_config,
                           "lane-spin is " +
                             std::to_string(base.lane_spin.count()) +
                             "us: use 0 (no polling) to 10ms");
  if (base.heartbeat_interval.count() <= 0 ||
      base.connection_timeout <= base.heartbeat_interval)
    return caf::make_error(errc::invalid_config,
                           "heartbeat-interval is " +
                             std::to_string(base.heartbeat_interval.count()) +
                             "ms and connection-timeout " +
                             std::to_string(base.connection_timeout.count()) +
                             "ms: use a positive heartbeat-interval and a "
                             "connection-timeout above it (a link sends a "
                             "heartbeat each interval it is quiet)");
  if (base.max_proxies == 0)
    return caf::make_error(errc::invalid_config,
                           "max-proxies must be positive (it bounds the peer's "
                           "actors that may send to this node)");
  if (base.max_pending_requests == 0)
    return caf::make_error(errc::invalid_config,
                           "max-pending-requests must be positive (it bounds "
                           "the requests a link remembers while they wait "
                           "for their answers)");
  if (base.max_held_bytes == 0 || base.max_held_messages == 0)
    return caf::make_error(errc::invalid_config,
                           "max-held-bytes and max-held-messages must be "
                           "positive (they bound what a peer's messages may "
                           "hold on this node before its actors process "
                           "them)");
  return base;
}

} // namespace ferry
