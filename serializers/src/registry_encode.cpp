// Encoding routes and encode plans of `registry`: turning a value into a
// payload with the first family of a preference list that can encode it.
//
// Contract: `route_encode` decides, for one type and one family name, whether
// and how that family encodes the type (a built-in family or a registered
// one); `encode_impl` tries the families of `encode_options::serializers` in
// order, applies a registered stand-in first, and either returns the first
// payload within `limits` or an `errc::no_family_can_encode` naming every
// family tried and why; an actor handle that fails to translate
// (actor_handles.hpp) ends the search with its own error. A plan
// (`plan_encode`) fixes the route and the header key for one type and list,
// and keeps the snapshot it was made from.
// Exceptions thrown by a family or a stand-in become error values here.
//
// Thread-safety: every function reads one snapshot loaded once per call (or
// the plan's), never writes to the registry, and may run on any number of
// threads at once.

#include "registry_state.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ferry::serializers {

using detail::make_error;

caf::expected<payload> registry::encode(std::type_index type, const void* value,
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
                      "cannot encode " + detail::demangle_name(type.name()) +
                        ": the type was not added to this registry; call "
                        "add_type<T>(name) on every node before sending it");
  return encode_impl(*i->second.ops, value, opts, keep_alive);
}

caf::error registry::encode_with(const state& st, const encode_route& route,
                                 const std::string& fam, const void* value,
                                 const std::shared_ptr<const void>& keep,
                                 bool views_allowed, const encode_options& opts,
                                 const std::string& tname, const trace_fn* sink,
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
                      "encoding " + tname + " with family " + fam + " made " +
                        std::to_string(total) +
                        " bytes, more than limits::max_payload_bytes (" +
                        std::to_string(opts.limits.max_payload_bytes) +
                        "); send large values through the store or raise "
                        "the limit");
  if (frames.size() > opts.limits.max_frames)
    return make_error(errc::length_out_of_range,
                      "encoding " + tname + " with family " + fam + " made " +
                        std::to_string(frames.size()) +
                        " frames, more than limits::max_frames");
  if (sink != nullptr)
    (*sink)("ferry.serializers trace: encode " + tname + ": encoded with " +
            fam + " into " + std::to_string(frames.size()) + " frame(s), " +
            std::to_string(total) + " bytes");
  return caf::none;
}

caf::expected<payload>
registry::encode_impl(const detail::type_ops& ops, const void* value,
                      const encode_options& opts,
                      const std::shared_ptr<const void>& keep_alive) const {
  auto st = snapshot();
  auto tname = st->name_of(ops.type);
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
  auto s =
    st->stand_ins.empty() ? st->stand_ins.end() : st->stand_ins.find(ops.type);
  if (s != st->stand_ins.end()) {
    try {
      keep = s->second->to(value);
    } catch (...) {
      return make_error(errc::encode_failed,
                        "encoding " + tname +
                          ": the registered serializer's `to` function "
                          "threw: " +
                          detail::current_exception_text());
    }
    evalue = keep.get();
    eops = s->second->ops;
    stand_name = st->name_of(eops->type);
    trace([&] { return "using the registered stand-in " + stand_name; });
  }
  if (opts.serializers.empty())
    return make_error(errc::no_family_can_encode,
                      "cannot encode " + tname +
                        ": the preference list (serializers) is empty; name "
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
    auto handle_failures = detail::handle_failures();
    try {
      err = encode_with(*st, *route, fam, evalue, keep, keep_alive != nullptr,
                        opts, tname, sink, result.frames);
    } catch (...) {
      refuse(fam, "threw: " + detail::current_exception_text());
      continue;
    }
    if (err) {
      // An actor handle that failed to translate (no hook, or the hook's
      // error) fails the same way in every family: no fallback.
      if (detail::handle_failures() != handle_failures)
        return err;
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
    "cannot encode " + tname + " with any family of the preference list " +
      detail::list_names(opts.serializers) + ":" + reasons +
      "\nFixes: put a family that can encode the type in the link's "
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
  why = "unknown family (this registry knows " +
        detail::list_names(families()) + ")";
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
  std::vector<frame> frames;
  if (auto err = encode(plan, value, opts, keep_alive, frames))
    return err;
  return frames;
}

caf::error registry::encode(const encode_plan& plan, const void* value,
                            const encode_options& opts,
                            const std::shared_ptr<const void>& keep_alive,
                            std::vector<frame>& frames) const {
  const trace_fn* sink = nullptr;
  if (trace_.load(std::memory_order_relaxed) || opts.trace)
    sink = plan.st_->sink.get();
  frames.clear();
  try {
    if (auto err = encode_with(*plan.st_, plan.route_, plan.family_, value,
                               keep_alive, keep_alive != nullptr, opts,
                               plan.type_name_, sink, frames))
      return err;
  } catch (...) {
    return make_error(errc::encode_failed,
                      "encoding " + plan.type_name_ + " with family " +
                        plan.family_ +
                        " threw: " + detail::current_exception_text());
  }
  return check_encoded(plan.family_, frames, opts, plan.type_name_, sink);
}

} // namespace ferry::serializers
