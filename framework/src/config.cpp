// node_config, link_config and the registration of ferry's wire types.
#include "ferry/errc.hpp"
#include "ferry/link_config.hpp"
#include "ferry/node_config.hpp"

#include "detail/wire.hpp"

#include "ferry/serializers/errc.hpp"
#include "ferry/store/errc.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/atom.hpp>
#include <caf/config_option_adder.hpp>
#include <caf/config_value.hpp>
#include <caf/io/middleman.hpp>
#include <caf/settings.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace ferry {

// -- compression --------------------------------------------------------------

std::string to_string(compression x) {
  switch (x) {
    case compression::none: return "none";
    case compression::lz4: return "lz4";
    case compression::zstd: return "zstd";
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
  return caf::make_error(errc::invalid_config,
                         "unknown compression \"" + x
                           + "\": use none, lz4 or zstd");
}

// -- link_config --------------------------------------------------------------

std::vector<std::string> link_config::default_families() {
  return {"raw", "cereal.binary", "caf", "msgpack", "cereal.portable",
          "cereal.json"};
}

namespace {

caf::error bad_value(const std::string& key, const std::string& expected) {
  return caf::make_error(errc::invalid_config,
                         "setting \"" + key + "\" must be " + expected);
}

caf::error read_uint(const caf::config_value& value, const std::string& key,
                     uint64_t& out) {
  auto x = caf::get_if<int64_t>(&value);
  if (x == nullptr || *x < 0)
    return bad_value(key, "a non-negative integer");
  out = static_cast<uint64_t>(*x);
  return caf::none;
}

caf::error read_strings(const caf::config_value& value, const std::string& key,
                        std::vector<std::string>& out) {
  auto xs = caf::get_if<caf::config_value::list>(&value);
  if (xs == nullptr)
    return bad_value(key, "a list of family names, e.g. [\"cereal.binary\"]");
  std::vector<std::string> result;
  for (auto& x : *xs) {
    auto str = caf::get_if<std::string>(&x);
    if (str == nullptr)
      return bad_value(key, "a list of strings");
    result.emplace_back(*str);
  }
  out = std::move(result);
  return caf::none;
}

/// Reads section `ferry.vector-pool` into `out`.
caf::error read_vector_pool(const caf::settings& section,
                            serializers::vector_pool_limits& out) {
  for (auto& [key, value] : section) {
    caf::error err;
    uint64_t tmp = 0;
    if (key == "min-bytes") {
      err = read_uint(value, "ferry.vector-pool.min-bytes", out.min_bytes);
    } else if (key == "max-bytes") {
      err = read_uint(value, "ferry.vector-pool.max-bytes", out.max_bytes);
    } else if (key == "max-idle") {
      if (auto ts = caf::get_if<caf::timespan>(&value))
        out.max_idle
          = std::chrono::duration_cast<std::chrono::milliseconds>(*ts);
      else if (!(err = read_uint(value, "ferry.vector-pool.max-idle", tmp)))
        out.max_idle = std::chrono::milliseconds{tmp};
    } else {
      return caf::make_error(errc::invalid_config,
                             "unknown setting \"ferry.vector-pool." + key
                               + "\": known are min-bytes, max-bytes, "
                                 "max-idle");
    }
    if (err)
      return err;
  }
  if (out.max_idle.count() <= 0)
    return caf::make_error(errc::invalid_config,
                           "ferry.vector-pool.max-idle must be positive (turn "
                           "the pool off with max-bytes = 0)");
  return caf::none;
}

} // namespace

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
      err = read_uint(value, key, base.spill_threshold);
    } else if (key == "compression") {
      auto str = caf::get_if<std::string>(&value);
      if (str == nullptr)
        return bad_value(key, "\"none\", \"lz4\" or \"zstd\"");
      auto c = parse_compression(*str);
      if (!c)
        return std::move(c.error());
      base.compression = *c;
    } else if (key == "compression-threshold") {
      err = read_uint(value, key, base.compression_threshold);
    } else if (key == "max-message-size") {
      err = read_uint(value, key, base.max_message_size);
    } else if (key == "window-bytes") {
      err = read_uint(value, key, base.window_bytes);
    } else if (key == "window-messages") {
      err = read_uint(value, key, base.window_messages);
    } else if (key == "send-timeout") {
      if (auto ts = caf::get_if<caf::timespan>(&value)) {
        base.send_timeout
          = std::chrono::duration_cast<std::chrono::milliseconds>(*ts);
      } else if (!(err = read_uint(value, key, tmp))) {
        base.send_timeout = std::chrono::milliseconds{tmp};
      }
    } else if (key == "pull-threshold") {
      err = read_uint(value, key, base.pull_threshold);
    } else if (key == "chunk-size") {
      err = read_uint(value, key, base.chunk_size);
    } else if (key == "chunks-in-flight") {
      err = read_uint(value, key, tmp);
      base.chunks_in_flight = static_cast<uint32_t>(tmp);
    } else if (key == "batch-messages") {
      err = read_uint(value, key, tmp);
      base.batch_messages
        = static_cast<uint32_t>(std::min<uint64_t>(tmp, 1u << 20));
    } else if (key == "batch-gap") {
      if (auto ts = caf::get_if<caf::timespan>(&value)) {
        base.batch_gap
          = std::chrono::duration_cast<std::chrono::microseconds>(*ts);
      } else if (!(err = read_uint(value, key, tmp))) {
        base.batch_gap = std::chrono::microseconds{tmp};
      }
    } else if (key == "max-proxies") {
      err = read_uint(value, key, base.max_proxies);
    } else if (key == "max-spawned-actors") {
      err = read_uint(value, key, base.max_spawned_actors);
    } else if (key == "max-held-bytes") {
      err = read_uint(value, key, base.max_held_bytes);
    } else if (key == "max-held-messages") {
      err = read_uint(value, key, base.max_held_messages);
    } else {
      return caf::make_error(
        errc::invalid_config,
        "unknown link setting \"" + key
          + "\": known are serializers, deserializers, spill-threshold, "
            "compression, compression-threshold, max-message-size, "
            "window-bytes, window-messages, send-timeout, pull-threshold, "
            "chunk-size, chunks-in-flight, batch-messages, batch-gap, "
            "max-proxies, max-spawned-actors, max-held-bytes, "
            "max-held-messages");
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
  if (base.max_proxies == 0)
    return caf::make_error(errc::invalid_config,
                           "max-proxies must be positive (it bounds the peer's "
                           "actors that may send to this node)");
  if (base.max_held_bytes == 0 || base.max_held_messages == 0)
    return caf::make_error(errc::invalid_config,
                           "max-held-bytes and max-held-messages must be "
                           "positive (they bound what a peer's messages may "
                           "hold on this node before its actors process "
                           "them)");
  return base;
}

// -- wire types ---------------------------------------------------------------

namespace detail {

void register_wire_types(caf::actor_system_config& cfg) {
  // CAF 0.17 writes and reads every message's type as "@<>+" followed by its
  // elements' names, in a std::string: the two types on the data path keep
  // that within the string's 15 inline characters, so neither side allocates
  // for it (an allocation per message on each side with "ferry.message").
  cfg.add_message_type<wire_message>("ferry.msg")
    .add_message_type<wire_batch>("ferry.batch")
    .add_message_type<hello>("ferry.hello")
    .add_message_type<identify>("ferry.identify")
    .add_message_type<lookup>("ferry.lookup")
    .add_message_type<credit>("ferry.credit")
    .add_message_type<credit_probe>("ferry.probe")
    .add_message_type<down_notice>("ferry.down")
    .add_message_type<refusal>("ferry.refusal")
    .add_message_type<exit_request>("ferry.exit")
    .add_message_type<chunk_request>("ferry.chunk_req")
    .add_message_type<transfer_done>("ferry.xfer_done")
    .add_message_type<spawn_request>("ferry.spawn")
    .add_message_type<chunk_reply>("ferry.chunk");
}

} // namespace detail

// -- node_config --------------------------------------------------------------

namespace {

std::string read_first_line(const char* path) {
  std::ifstream in{path};
  std::string line;
  std::getline(in, line);
  return line;
}

std::string default_host_id() {
  auto machine = read_first_line("/etc/machine-id");
  auto boot = read_first_line("/proc/sys/kernel/random/boot_id");
  if (machine.empty()) {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    machine = name;
  }
  return machine + "/" + boot;
}

std::string default_node_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return std::string{name} + ":" + std::to_string(getpid());
}

// Lets `actor_system::render` print ferry's errors as `ferry::render` does.
void add_category(caf::actor_system_config& cfg, caf::atom_value category) {
  cfg.add_error_category(category, [](uint8_t code, caf::atom_value cat,
                                      const caf::message& ctx) {
    return render(caf::error{code, cat, ctx});
  });
}

} // namespace

node_config::node_config()
  : registry_(std::make_shared<serializers::registry>()) {
  load<caf::io::middleman>();
  // CAF leaves heartbeats off, so a link whose connection went silent (host
  // gone, packets dropped) stays up for good and this node refuses a new
  // link to that peer. Every message received counts as a sign of life, and
  // ferry pulls large frames in chunks across hosts, so a slow but live link
  // is not taken down. The config file, flags and set() replace these.
  set("middleman.heartbeat-interval", caf::timespan{std::chrono::seconds{5}});
  set("middleman.connection-timeout", caf::timespan{std::chrono::seconds{30}});
  // CAF hands each incoming message to a BASP worker, which runs on the
  // scheduler; the gateway's work (credit included) would then wait for a
  // scheduler thread. Actors blocked in send() while the window is full can
  // hold every one of those threads, and the credit that would wake them
  // could not be read until send-timeout refused their messages. With no
  // BASP workers the middleman's thread reads every message itself, and the
  // gateway never waits for the scheduler (docs/architecture.md; node.cpp
  // warns when a user sets them again).
  set("middleman.workers", 0);
  // CAF's idle scheduler workers poll 500 times with 50 us sleeps before
  // they wait on a condition variable, so a trickle of messages keeps every
  // worker waking 20,000 times a second: a third of a core at 100 round
  // trips a second on the 2-core guest, where each wake-up preempts the
  // threads doing the work. Without the sleeps, idle workers poll briefly
  // and then wait to be notified (docs/architecture.md).
  set("work-stealing.moderate-sleep-duration", caf::timespan{0});
  detail::register_wire_types(*this);
  add_category(*this, caf::atom("ferry_fw"));
  add_category(*this, caf::atom("ferry_ser"));
  add_category(*this, caf::atom("ferry_sto"));
  // A store handle that cannot be written or read inside a value throws;
  // the registry hands back the store's own error (code and text).
  registry_->register_error_exception<store::ref_serialization_error>();
  opt_group{custom_options_, "ferry"}
    .add(node_name, "node-name", "name of this node in its peers' link tables")
    .add(host_id, "host-id",
         "identity of this host (nodes with equal host ids share the store)")
    .add_neg(tune_malloc, "keep-malloc-defaults",
             "leave glibc malloc's thresholds alone (default: raise them so "
             "large decoded buffers reuse faulted-in memory)");
  opt_group{custom_options_, "ferry.vector-pool"}
    .add(vector_pool.min_bytes, "min-bytes",
         "smallest decoded vector kept for reuse (default 1 MiB)")
    .add(vector_pool.max_bytes, "max-bytes",
         "most bytes of decoded vectors kept for reuse (0: none)")
    .add<caf::timespan>("max-idle",
                        "a kept vector unused this long is freed (default 10s)");
  opt_group{custom_options_, "ferry.store"}
    .add_neg(store_enabled, "disabled",
             "run without the host store (large frames go inline or pulled)")
    .add(store_name, "name", "name of the host store (default ferry-<uid>)")
    .add(store_capacity, "capacity", "bytes of the store when created here")
    .add_neg(store_prefault, "no-prefault",
             "do not fault the store's memory in at attach (faster start, "
             "page faults on first use)")
    .add(store_spill_directory, "spill-directory",
         "directory for spilled objects (empty: no spilling)")
    .add_neg(allow_out_of_band_ref_serialization, "strict-refs",
             "refuse handles serialized outside ferry's message path "
             "(default: pin them with a warning)");
  opt_group{custom_options_, "ferry.link"}
    .add(default_link.serializers, "serializers",
         "families to send with, in preference order")
    .add(default_link.deserializers, "deserializers",
         "families accepted on receipt")
    .add(default_link.spill_threshold, "spill-threshold",
         "frames of at least this many bytes go by store or in chunks")
    .add<std::string>("compression", "none, lz4 or zstd for inline frames")
    .add(default_link.compression_threshold, "compression-threshold",
         "smallest inline frame that gets compressed")
    .add(default_link.max_message_size, "max-message-size",
         "largest message a link carries")
    .add(default_link.window_bytes, "window-bytes",
         "credit window: bytes in flight per link")
    .add(default_link.window_messages, "window-messages",
         "credit window: messages in flight per link")
    .add(default_link.pull_threshold, "pull-threshold",
         "frames at least this large are pulled in chunks across hosts")
    .add(default_link.chunk_size, "chunk-size",
         "chunk size for cross-host transfers of large frames")
    .add<size_t>("chunks-in-flight", "chunks requested at once per frame")
    .add<caf::timespan>("send-timeout",
                        "how long a sender waits for credit (e.g. 30s)")
    .add<size_t>("batch-messages",
                 "most small messages of a burst sent as one (1: no batching)")
    .add<caf::timespan>("batch-gap",
                        "a message this close behind the previous one joins "
                        "a batch (e.g. 20us)")
    .add(default_link.max_proxies, "max-proxies",
         "most proxies of a peer's actors that sent to this node")
    .add(default_link.max_spawned_actors, "max-spawned-actors",
         "most live actors a peer may spawn on this node (0: none)")
    .add(default_link.max_held_bytes, "max-held-bytes",
         "most bytes of a peer's messages held here before actors process "
         "them")
    .add(default_link.max_held_messages, "max-held-messages",
         "most messages of a peer held here before actors process them");
  add_message_type<std::string>("string")
    .add_message_type<bool>("bool")
    .add_message_type<int32_t>("i32")
    .add_message_type<int64_t>("i64")
    .add_message_type<uint32_t>("u32")
    .add_message_type<uint64_t>("u64")
    .add_message_type<float>("f32")
    .add_message_type<double>("f64")
    .add_message_type<caf::atom_value>("atom")
    .add_message_type<std::vector<std::byte>>("bytes")
    .add_message_type<std::vector<char>>("chars");
}

node_config::~node_config() = default;

node_config& node_config::link(std::string peer, link_config cfg) {
  links.insert_or_assign(std::move(peer), std::move(cfg));
  return *this;
}

void node_config::add_type_name(std::type_index type, uint16_t type_nr,
                                std::string name) {
  names_by_type_.insert_or_assign(type, name);
  if (type_nr != 0)
    builtins_.insert_or_assign(type_nr, type);
  type_names_.insert(std::move(name));
}

bool node_config::has_type(const std::string& name) const {
  return type_names_.count(name) != 0;
}

const std::string* node_config::find_name(std::type_index type) const {
  auto i = names_by_type_.find(type);
  return i != names_by_type_.end() ? &i->second : nullptr;
}

const std::type_index* node_config::find_builtin(uint16_t type_nr) const {
  auto i = builtins_.find(type_nr);
  return i != builtins_.end() ? &i->second : nullptr;
}

const link_config& node_config::link_for(const std::string& peer) const {
  auto i = links.find(peer);
  return i != links.end() ? i->second : default_link;
}

caf::error node_config::finalize() {
  // CAF 0.17 keeps values of nested sections ([ferry.store], [ferry.link])
  // from the config file in `content` without storing them into the bound
  // variables (flags it does store); `content` holds the merged result, so
  // read those sections from there.
  if (auto x = caf::get_if<std::string>(&content, "ferry.node-name"))
    node_name = *x;
  if (auto x = caf::get_if<std::string>(&content, "ferry.host-id"))
    host_id = *x;
  if (auto x = caf::get_if<bool>(&content, "ferry.keep-malloc-defaults"))
    tune_malloc = !*x;
  if (auto section = caf::get_if<caf::settings>(&content, "ferry.vector-pool"))
    if (auto err = read_vector_pool(*section, vector_pool))
      return err;
  if (auto x = caf::get_if<bool>(&content, "ferry.store.disabled"))
    store_enabled = !*x;
  if (auto x = caf::get_if<std::string>(&content, "ferry.store.name"))
    store_name = *x;
  if (auto x = caf::get_if<int64_t>(&content, "ferry.store.capacity"))
    store_capacity = static_cast<uint64_t>(*x);
  if (auto x = caf::get_if<std::string>(&content, "ferry.store.spill-directory"))
    store_spill_directory = *x;
  if (auto x = caf::get_if<bool>(&content, "ferry.store.no-prefault"))
    store_prefault = !*x;
  if (auto x = caf::get_if<bool>(&content, "ferry.store.strict-refs"))
    allow_out_of_band_ref_serialization = !*x;
  if (auto section = caf::get_if<caf::settings>(&content, "ferry.link")) {
    auto merged = link_config::from_settings(*section, default_link);
    if (!merged)
      return caf::make_error(errc::invalid_config,
                             "in ferry.link: " + render(merged.error()));
    default_link = std::move(*merged);
  }
  if (node_name.empty())
    node_name = default_node_name();
  if (host_id.empty())
    host_id = default_host_id();
  if (store_name.empty())
    store_name = "ferry-" + std::to_string(getuid());
  auto validated = link_config::from_settings({}, default_link);
  if (!validated)
    return std::move(validated.error());
  if (auto sections = caf::get_if<caf::settings>(&content, "ferry.links")) {
    for (auto& [peer, value] : *sections) {
      auto section = caf::get_if<caf::settings>(&value);
      if (section == nullptr)
        return caf::make_error(errc::invalid_config,
                               "ferry.links." + peer
                                 + " must be a section of link settings");
      if (links.count(peer) != 0)
        continue; // Set in code: takes precedence over the file.
      auto cfg = link_config::from_settings(*section, default_link);
      if (!cfg)
        return caf::make_error(errc::invalid_config,
                               "in ferry.links." + peer + ": "
                                 + render(cfg.error()));
      links.emplace(peer, std::move(*cfg));
    }
  }
  // Links set in code (node_config::link) get the same checks as the file's.
  for (auto& [peer, cfg] : links)
    if (auto checked = link_config::from_settings({}, cfg); !checked)
      return caf::make_error(errc::invalid_config,
                             "in the link config for peer \"" + peer
                               + "\": " + render(checked.error()));
  return caf::none;
}

} // namespace ferry
