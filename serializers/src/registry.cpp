#include "ferry/serializers/registry.hpp"

#include <cstdlib>
#include <iostream>
#include <map>
#include <unordered_map>

namespace ferry::serializers {

// The registrations, immutable once published. Writers copy, change and
// publish a new state; readers keep whatever state they loaded.
struct registry::state {
  struct type_entry {
    std::string name;
    const detail::type_ops* ops = nullptr;
    decode_message_fn decode_message = nullptr;
  };

  std::unordered_map<std::type_index, type_entry> types;
  std::unordered_map<std::string, std::type_index> names;
  std::map<std::string, std::shared_ptr<const family>, std::less<>> families;
  std::unordered_map<std::type_index, std::shared_ptr<const stand_in_spec>>
    stand_ins;
  std::shared_ptr<const std::function<void(std::string_view)>> sink;
  std::vector<detail::error_exception> error_exceptions;
};

namespace {

using detail::builtin;
using detail::make_error;

std::string name_of(const registry::state& st, std::type_index type) {
  if (auto i = st.types.find(type); i != st.types.end())
    return i->second.name;
  return detail::demangle_name(type.name());
}

std::string list(const std::vector<std::string>& xs) {
  std::string result = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      result += ", ";
    result += xs[i];
  }
  result += ']';
  return result;
}

bool env_trace() {
  auto value = std::getenv("FERRY_SERIALIZERS_TRACE");
  if (value == nullptr)
    return false;
  std::string_view v{value};
  return v == "1" || v == "true" || v == "on" || v == "yes";
}

bool valid_family_name(std::string_view name) {
  if (name.empty() || name.size() > 255)
    return false;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u > 0x7e)
      return false;
  }
  return true;
}

} // namespace

registry::registry() {
  auto st = std::make_shared<state>();
  st->sink = std::make_shared<const std::function<void(std::string_view)>>(
    [](std::string_view line) { std::clog << line << '\n'; });
  state_.store(std::move(st));
  trace_ = env_trace();
}

registry::~registry() = default;

std::shared_ptr<const registry::state> registry::snapshot() const noexcept {
  return state_.load(std::memory_order_acquire);
}

template <class F>
bool registry::update(F&& f) {
  std::lock_guard<std::mutex> guard{write_mutex_};
  auto next = std::make_shared<state>(*state_.load());
  if (!f(*next))
    return false;
  state_.store(std::move(next), std::memory_order_release);
  // After the store: a plan takes the count before its state, so a plan
  // that sees this state either sees the new count or is made again.
  generation_.fetch_add(1, std::memory_order_release);
  return true;
}

// -- types ---------------------------------------------------------------------

caf::error registry::add_type_impl(const detail::type_ops& ops,
                                   std::string name, decode_message_fn fn) {
  caf::error err;
  if (name.empty() || name.size() > 1024)
    return make_error(errc::unknown_type,
                      "add_type: the name of "
                        + detail::demangle_name(ops.type.name())
                        + " must have 1 to 1024 characters");
  update([&](state& st) {
    auto i = st.types.find(ops.type);
    auto j = st.names.find(name);
    if (i != st.types.end() && i->second.name == name)
      return false;
    if (i != st.types.end()) {
      err = make_error(errc::unknown_type,
                       "add_type: " + detail::demangle_name(ops.type.name())
                         + " is registered as '" + i->second.name
                         + "' already, not adding it as '" + name
                         + "'; use one name per type on every node");
      return false;
    }
    if (j != st.names.end()) {
      err = make_error(errc::unknown_type,
                       "add_type: the name '" + name + "' belongs to "
                         + detail::demangle_name(j->second.name())
                         + " already, not giving it to "
                         + detail::demangle_name(ops.type.name())
                         + "; choose another name");
      return false;
    }
    st.types.emplace(ops.type, state::type_entry{name, &ops, fn});
    st.names.emplace(name, ops.type);
    return true;
  });
  return err;
}

void registry::report_conflict(const caf::error& err) {
  std::cerr << "ferry.serializers: " << render(err) << '\n';
}

std::optional<std::string> registry::type_name(std::type_index type) const {
  auto st = snapshot();
  if (auto i = st->types.find(type); i != st->types.end())
    return i->second.name;
  return std::nullopt;
}

// -- encoding ------------------------------------------------------------------

caf::expected<payload> registry::encode(std::type_index type,
                                        const void* value,
                                        const encode_options& opts) const {
  return encode(type, value, opts, opts.keep_alive);
}

caf::expected<payload>
registry::encode(std::type_index type, const void* value,
                 const encode_options& opts,
                 const std::shared_ptr<const void>& keep_alive) const {
  auto st = snapshot();
  auto i = st->types.find(type);
  if (i == st->types.end())
    return make_error(errc::unknown_type,
                      "cannot encode " + detail::demangle_name(type.name())
                        + ": the type was not added to this registry; call "
                          "add_type<T>(name) on every node before sending it");
  return encode_impl(*i->second.ops, value, opts, keep_alive);
}

caf::error registry::encode_with(const state& st, const encode_route& route,
                                 const std::string& fam, const void* value,
                                 const std::shared_ptr<const void>& keep,
                                 bool views_allowed, const encode_options& opts,
                                 const std::string& tname,
                                 const trace_fn* sink,
                                 std::vector<frame>& frames) const {
  if (route.builtin) {
    detail::codec_scope scope;
    scope.out_frames = &frames;
    scope.keep_alive = keep;
    scope.error_exceptions = st.error_exceptions;
    scope.trace = sink;
    scope.op = "encode";
    scope.family = fam;
    detail::scope_guard guard{scope};
    detail::call_info info{fam, tname, false, views_allowed};
    if (auto err = route.ops->encode(*route.builtin, value, frames, keep, info))
      return err;
  } else {
    // A registered family may throw; callers catch.
    auto made = route.user->encode(route.ops->type, value, opts.context);
    if (!made)
      return std::move(made.error());
    frames = std::move(*made);
  }
  return caf::none;
}

caf::error registry::check_encoded(const std::string& fam,
                                   const std::vector<frame>& frames,
                                   const encode_options& opts,
                                   const std::string& tname,
                                   const trace_fn* sink) {
  uint64_t total = 0;
  for (auto& fr : frames)
    total += fr.size();
  if (total > opts.limits.max_payload_bytes)
    return make_error(errc::payload_too_large,
                      "encoding " + tname + " with family " + fam + " made "
                        + std::to_string(total)
                        + " bytes, more than limits::max_payload_bytes ("
                        + std::to_string(opts.limits.max_payload_bytes)
                        + "); send large values through the store or raise "
                          "the limit");
  if (frames.size() > opts.limits.max_frames)
    return make_error(errc::length_out_of_range,
                      "encoding " + tname + " with family " + fam + " made "
                        + std::to_string(frames.size())
                        + " frames, more than limits::max_frames");
  if (sink != nullptr)
    (*sink)("ferry.serializers trace: encode " + tname + ": encoded with "
            + fam + " into " + std::to_string(frames.size()) + " frame(s), "
            + std::to_string(total) + " bytes");
  return caf::none;
}

caf::expected<payload>
registry::encode_impl(const detail::type_ops& ops, const void* value,
                      const encode_options& opts,
                      const std::shared_ptr<const void>& keep_alive) const {
  auto st = snapshot();
  auto tname = name_of(*st, ops.type);
  const trace_fn* sink = nullptr;
  if (trace_.load(std::memory_order_relaxed) || opts.trace)
    sink = st->sink.get();
  // Takes a function making the line: with tracing off (the common case)
  // no string is built.
  auto trace = [&](auto&& line) {
    if (sink != nullptr)
      (*sink)("ferry.serializers trace: encode " + tname + ": " + line());
  };
  // A registered serializer replaces the value by its stand-in.
  const detail::type_ops* eops = &ops;
  const void* evalue = value;
  std::shared_ptr<const void> keep = keep_alive;
  std::string stand_name;
  // (Most registries have no stand-ins: skip hashing the type then.)
  auto s = st->stand_ins.empty() ? st->stand_ins.end()
                                 : st->stand_ins.find(ops.type);
  if (s != st->stand_ins.end()) {
    try {
      keep = s->second->to(value);
    } catch (...) {
      return make_error(errc::encode_failed,
                        "encoding " + tname
                          + ": the registered serializer's `to` function "
                            "threw: "
                          + detail::current_exception_text());
    }
    evalue = keep.get();
    eops = s->second->ops;
    stand_name = name_of(*st, eops->type);
    trace([&] { return "using the registered stand-in " + stand_name; });
  }
  if (opts.serializers.empty())
    return make_error(errc::no_family_can_encode,
                      "cannot encode " + tname
                        + ": the preference list (serializers) is empty; name "
                          "at least one family, e.g. cereal.binary");
  std::string reasons;
  auto refuse = [&](const std::string& fam, const std::string& why) {
    reasons += "\n  - " + fam + ": " + why;
    trace([&] { return fam + " refused: " + why; });
  };
  for (auto& fam : opts.serializers) {
    trace([&] { return "trying family " + fam; });
    std::string why;
    auto route = route_encode(*st, *eops, fam, why);
    if (!route) {
      refuse(fam, why);
      continue;
    }
    payload result;
    // Split arrays view the value: only when the caller keeps it alive (a
    // stand-in's keep-alive is ferry's own, not the caller's promise).
    caf::error err;
    try {
      err = encode_with(*st, *route, fam, evalue, keep, keep_alive != nullptr,
                        opts, tname, sink, result.frames);
    } catch (...) {
      refuse(fam, "threw: " + detail::current_exception_text());
      continue;
    }
    if (err) {
      refuse(fam, render(err));
      continue;
    }
    if (auto err = check_encoded(fam, result.frames, opts, tname, sink))
      return err;
    result.header.family = fam;
    result.header.type_name = tname;
    result.header.version = route->version;
    result.header.stand_in = stand_name;
    result.header.frame_sizes.reserve(result.frames.size());
    for (auto& fr : result.frames)
      result.header.frame_sizes.push_back(fr.size());
    return result;
  }
  return make_error(
    errc::no_family_can_encode,
    "cannot encode " + tname + " with any family of the preference list "
      + list(opts.serializers) + ":" + reasons
      + "\nFixes: put a family that can encode the type in the link's "
        "serializers list; give the type serialization functions (member "
        "serialize/save/load for cereal, inspect for caf, MSGPACK_DEFINE for "
        "msgpack) or make it a plain aggregate; or register_serializer<T>(to, "
        "from) with a stand-in those families can encode. "
        "inspect_serializability<T>() reports member by member.");
}

std::optional<registry::encode_route>
registry::route_encode(const state& st, const detail::type_ops& ops,
                       const std::string& fam, std::string& why) const {
  encode_route route;
  route.ops = &ops;
  if (auto b = detail::builtin_from_name(fam)) {
    if (!ops.can_encode(*b)) {
      why = ops.why_not(*b);
      return std::nullopt;
    }
    route.builtin = b;
    return route;
  }
  if (auto f = st.families.find(fam); f != st.families.end()) {
    if (!f->second->can_encode(ops.type)) {
      why = f->second->why_not(ops.type);
      return std::nullopt;
    }
    route.user = f->second.get();
    route.version = f->second->version();
    return route;
  }
  why = "unknown family (this registry knows " + list(families()) + ")";
  return std::nullopt;
}

std::optional<registry::encode_plan>
registry::plan_encode(std::type_index type, const encode_options& opts) const {
  encode_plan plan;
  plan.generation_ = generation();
  plan.st_ = snapshot();
  auto& st = *plan.st_;
  auto i = st.types.find(type);
  // A stand-in runs per value (and may throw): such types take encode.
  if (i == st.types.end() || st.stand_ins.count(type) != 0)
    return std::nullopt;
  for (auto& fam : opts.serializers) {
    std::string why;
    if (auto route = route_encode(st, *i->second.ops, fam, why)) {
      plan.route_ = *route;
      plan.family_ = fam;
      plan.type_name_ = i->second.name;
      payload_header header;
      header.family = fam;
      header.type_name = i->second.name;
      header.version = route->version;
      plan.key_ = encode_header_key(header);
      return plan;
    }
  }
  return std::nullopt;
}

caf::expected<std::vector<frame>>
registry::encode(const encode_plan& plan, const void* value,
                 const encode_options& opts,
                 const std::shared_ptr<const void>& keep_alive) const {
  const trace_fn* sink = nullptr;
  if (trace_.load(std::memory_order_relaxed) || opts.trace)
    sink = plan.st_->sink.get();
  std::vector<frame> frames;
  try {
    if (auto err = encode_with(*plan.st_, plan.route_, plan.family_, value,
                               keep_alive, keep_alive != nullptr, opts,
                               plan.type_name_, sink, frames))
      return err;
  } catch (...) {
    return make_error(errc::encode_failed,
                      "encoding " + plan.type_name_ + " with family "
                        + plan.family_
                        + " threw: " + detail::current_exception_text());
  }
  if (auto err = check_encoded(plan.family_, frames, opts, plan.type_name_,
                               sink))
    return err;
  return frames;
}

uint64_t registry::generation() const noexcept {
  return generation_.load(std::memory_order_acquire);
}

// -- decoding ------------------------------------------------------------------

caf::expected<registry::decode_route>
registry::route_decode(const state& st, const detail::type_ops& ops,
                       const payload_header& hdr,
                       const decode_options& opts) const {
  if (std::find(opts.deserializers.begin(), opts.deserializers.end(),
                hdr.family)
      == opts.deserializers.end())
    return make_error(errc::family_not_allowed,
                      "refusing a payload of type '" + hdr.type_name
                        + "' in family '" + hdr.family
                        + "': this link accepts only "
                        + list(opts.deserializers) + "; add '" + hdr.family
                        + "' to the link's deserializers, or make the sender "
                          "prefer an allowed family");
  decode_route route;
  route.type_name = name_of(st, ops.type);
  route.payload_type = hdr.type_name;
  bool name_ok = hdr.type_name == route.type_name;
  for (auto& t : ops.compatible)
    name_ok = name_ok || hdr.type_name == name_of(st, t);
  if (!name_ok)
    return make_error(errc::type_mismatch,
                      "the payload holds a '" + hdr.type_name
                        + "', the receiver decodes a '" + route.type_name
                        + "'; both ends must add_type the same type under the "
                          "same name");
  // Resolve the registered stand-in, if the sender used one.
  if (!hdr.stand_in.empty()) {
    auto s = st.stand_ins.find(ops.type);
    if (s == st.stand_ins.end())
      return make_error(errc::stand_in_mismatch,
                        "the sender encoded '" + hdr.type_name
                          + "' through the registered stand-in '"
                          + hdr.stand_in
                          + "', this registry has no serializer for it; call "
                            "register_serializer<T>(to, from) here too");
    route.stand = s->second;
    if (name_of(st, route.stand->ops->type) != hdr.stand_in)
      return make_error(errc::stand_in_mismatch,
                        "the sender's stand-in for '" + hdr.type_name + "' is '"
                          + hdr.stand_in + "', this registry's is '"
                          + name_of(st, route.stand->ops->type)
                          + "'; register the same serializer on both nodes");
    route.dops = route.stand->ops;
    route.dname = hdr.stand_in;
  } else {
    route.dops = &ops;
    route.dname = route.type_name;
  }
  route.family = hdr.family;
  if (auto b = detail::builtin_from_name(hdr.family)) {
    if (hdr.version != 1)
      return make_error(errc::version_mismatch,
                        "payload of type '" + hdr.type_name + "' in family "
                          + hdr.family + " has format version "
                          + std::to_string(hdr.version)
                          + ", this build reads version 1; upgrade this node");
    if (!route.dops->can_decode(*b))
      return make_error(errc::type_mismatch,
                        "family " + hdr.family + " cannot decode into "
                          + route.dname + ": " + route.dops->why_not(*b));
    route.builtin = b;
  } else if (auto f = st.families.find(hdr.family); f != st.families.end()) {
    if (hdr.version != f->second->version())
      return make_error(errc::version_mismatch,
                        "payload of type '" + hdr.type_name + "' in family "
                          + hdr.family + " has format version "
                          + std::to_string(hdr.version)
                          + ", the registered family reads version "
                          + std::to_string(f->second->version()));
    if (!f->second->can_encode(route.dops->type))
      return make_error(errc::type_mismatch,
                        "family " + hdr.family + " cannot decode into "
                          + route.dname + ": "
                          + f->second->why_not(route.dops->type));
    route.user = f->second.get();
  } else {
    return make_error(errc::unknown_family,
                      "payload of type '" + hdr.type_name
                        + "' names the family '" + hdr.family
                        + "', unknown here (this registry knows "
                        + list(families())
                        + "); register_family it on this node");
  }
  return route;
}

caf::error registry::run_decode(const state& st, const decode_route& route,
                                const payload& p, frame* adopt, void* out,
                                const decode_options& opts) const {
  auto& hdr = p.header;
  auto& lim = opts.limits;
  auto& tname = route.payload_type;
  if (p.frames.size() != hdr.frame_sizes.size())
    return make_error(errc::frame_mismatch,
                      "payload of type '" + tname + "': the header "
                        + "names " + std::to_string(hdr.frame_sizes.size())
                        + " frames, " + std::to_string(p.frames.size())
                        + " arrived; the transport lost or added frames");
  if (p.frames.size() > lim.max_frames)
    return make_error(errc::length_out_of_range,
                      "payload of type '" + tname + "' has "
                        + std::to_string(p.frames.size())
                        + " frames, more than limits::max_frames");
  uint64_t total = 0;
  for (size_t i = 0; i < p.frames.size(); ++i) {
    if (p.frames[i].size() != hdr.frame_sizes[i])
      return make_error(errc::frame_mismatch,
                        "payload of type '" + tname + "': frame "
                          + std::to_string(i) + " has "
                          + std::to_string(p.frames[i].size())
                          + " bytes, the header says "
                          + std::to_string(hdr.frame_sizes[i]));
    total += p.frames[i].size();
  }
  if (total > lim.max_payload_bytes)
    return make_error(errc::payload_too_large,
                      "payload of type '" + tname + "' has "
                        + std::to_string(total)
                        + " bytes, more than limits::max_payload_bytes ("
                        + std::to_string(lim.max_payload_bytes) + ")");
  const trace_fn* sink = nullptr;
  if (trace_.load(std::memory_order_relaxed) || opts.trace)
    sink = st.sink.get();
  const detail::type_ops* dops = route.dops;
  void* target = out;
  if (route.stand) {
    target = dops->make();
    adopt = nullptr;
  }
  struct stand_in_holder {
    const detail::type_ops* ops;
    void* ptr;
    ~stand_in_holder() {
      if (ptr != nullptr)
        ops->destroy(ptr);
    }
  } holder{dops, route.stand ? target : nullptr};
  auto& dname = route.dname;
  auto& fam = route.family;
  caf::error err;
  if (route.builtin) {
    detail::codec_scope scope;
    scope.in_frames = p.frames;
    scope.budget = lim.budget(total);
    scope.error_exceptions = st.error_exceptions;
    scope.trace = sink;
    scope.op = "decode";
    scope.family = fam;
    detail::scope_guard guard{scope};
    if (sink != nullptr)
      (*sink)("ferry.serializers trace: decode " + dname + " with " + fam);
    detail::call_info info{fam, dname, true};
    err = dops->decode(*route.builtin, p.frames, adopt, target, lim, info);
  } else {
    try {
      err = route.user->decode(dops->type, p.frames, target, opts.context,
                               lim);
    } catch (...) {
      err = make_error(errc::decode_failed,
                       "decoding " + dname + " with family " + fam
                         + " threw: " + detail::current_exception_text());
    }
  }
  if (err)
    return err;
  if (route.stand) {
    try {
      route.stand->from(target, out);
    } catch (...) {
      return make_error(errc::decode_failed,
                        "decoding " + route.type_name
                          + ": the registered serializer's `from` function "
                            "threw: "
                          + detail::current_exception_text());
    }
  }
  return {};
}

caf::error registry::decode_impl(const detail::type_ops& ops, const payload& p,
                                 frame* adopt, void* out,
                                 const decode_options& opts) const {
  auto st = snapshot();
  auto route = route_decode(*st, ops, p.header, opts);
  if (!route)
    return std::move(route.error());
  return run_decode(*st, *route, p, adopt, out, opts);
}

caf::expected<caf::message>
registry::decode_message(const payload& p, const decode_options& opts) const {
  return decode_message_impl(p, nullptr, opts);
}

caf::expected<caf::message>
registry::decode_message(payload&& p, const decode_options& opts) const {
  return decode_message_impl(p, p.frames.empty() ? nullptr : &p.frames.back(),
                             opts);
}

caf::expected<caf::message>
registry::decode_message_impl(const payload& p, frame* adopt,
                              const decode_options& opts) const {
  auto plan = plan_decode(p.header, opts);
  if (!plan)
    return std::move(plan.error());
  return plan->decode_message_(*this, *plan, p, adopt, opts);
}

caf::expected<registry::decode_plan>
registry::plan_decode(const payload_header& header,
                      const decode_options& opts) const {
  decode_plan plan;
  plan.generation_ = generation();
  plan.st_ = snapshot();
  auto& st = *plan.st_;
  auto i = st.names.find(header.type_name);
  if (i == st.names.end())
    return make_error(errc::unknown_type,
                      "the payload holds a '" + header.type_name
                        + "', a name not added to this registry; call "
                          "add_type<T>(\""
                        + header.type_name + "\") on this node");
  auto& entry = st.types.at(i->second);
  if (entry.decode_message == nullptr)
    return make_error(errc::unknown_type,
                      "'" + header.type_name
                        + "' cannot travel in a caf::message: give it an "
                          "inspect function or CAF_ALLOW_UNSAFE_MESSAGE_TYPE");
  auto route = route_decode(st, *entry.ops, header, opts);
  if (!route)
    return std::move(route.error());
  plan.route_ = std::move(*route);
  plan.decode_message_ = entry.decode_message;
  return plan;
}

caf::expected<caf::message>
registry::decode_message(const decode_plan& plan, payload&& p,
                         const decode_options& opts) const {
  return plan.decode_message_(*this, plan, p,
                              p.frames.empty() ? nullptr : &p.frames.back(),
                              opts);
}

// -- families ------------------------------------------------------------------

std::vector<std::string> registry::families() const {
  std::vector<std::string> result;
  for (auto name : detail::builtin_names)
    result.emplace_back(name);
  auto st = snapshot();
  for (auto& [name, f] : st->families)
    result.push_back(name);
  return result;
}

bool registry::can_encode(std::string_view fam, std::type_index type) const {
  auto st = snapshot();
  const detail::type_ops* ops = nullptr;
  if (auto s = st->stand_ins.find(type); s != st->stand_ins.end())
    ops = s->second->ops;
  else if (auto i = st->types.find(type); i != st->types.end())
    ops = i->second.ops;
  if (ops == nullptr)
    return false;
  if (auto b = detail::builtin_from_name(fam))
    return ops->can_encode(*b);
  if (auto f = st->families.find(fam); f != st->families.end())
    return f->second->can_encode(ops->type);
  return false;
}

caf::error registry::register_family(std::string name,
                                     std::shared_ptr<const family> f) {
  if (!valid_family_name(name) || f == nullptr)
    return make_error(errc::family_exists,
                      "register_family: '" + name
                        + "' is not a valid family (1 to 255 printable "
                          "characters, no spaces, and a non-null family)");
  if (detail::builtin_from_name(name))
    return make_error(errc::family_exists,
                      "register_family: '" + name
                        + "' is a built-in family; choose another name");
  caf::error err;
  update([&](state& st) {
    auto i = st.families.find(name);
    if (i != st.families.end()) {
      if (i->second != f)
        err = make_error(errc::family_exists,
                         "register_family: '" + name
                           + "' is registered already with another family; "
                             "deregister_family it first");
      return false;
    }
    st.families.emplace(name, std::move(f));
    return true;
  });
  return err;
}

bool registry::deregister_family(std::string_view name) {
  return update([&](state& st) {
    auto i = st.families.find(name);
    if (i == st.families.end())
      return false;
    st.families.erase(i);
    return true;
  });
}

// -- per-type serializers ------------------------------------------------------

bool registry::register_serializer_impl(std::type_index type,
                                        stand_in_spec spec) {
  auto ptr = std::make_shared<const stand_in_spec>(std::move(spec));
  return update([&](state& st) {
    auto i = st.stand_ins.find(type);
    if (i != st.stand_ins.end()) {
      auto& old = *i->second;
      bool same = old.ops == ptr->ops && old.to_type == ptr->to_type
                  && old.from_type == ptr->from_type
                  && old.to_ptr == ptr->to_ptr && old.from_ptr == ptr->from_ptr
                  && old.stateless && ptr->stateless;
      if (same)
        return false;
      i->second = ptr;
      return true;
    }
    st.stand_ins.emplace(type, ptr);
    return true;
  });
}

bool registry::deregister_serializer_impl(std::type_index type) {
  return update([&](state& st) { return st.stand_ins.erase(type) > 0; });
}

// -- exceptions carrying errors ------------------------------------------------

bool registry::register_error_exception_impl(detail::error_exception x) {
  return update([&](state& st) {
    for (auto& y : st.error_exceptions)
      if (y.type == x.type)
        return false;
    st.error_exceptions.push_back(x);
    return true;
  });
}

// -- tracing -------------------------------------------------------------------

void registry::trace(bool on) noexcept {
  trace_ = on;
}

bool registry::trace() const noexcept {
  return trace_;
}

void registry::trace_sink(std::function<void(std::string_view)> sink) {
  auto ptr = std::make_shared<const std::function<void(std::string_view)>>(
    std::move(sink));
  update([&](state& st) {
    st.sink = ptr;
    return true;
  });
}

} // namespace ferry::serializers
