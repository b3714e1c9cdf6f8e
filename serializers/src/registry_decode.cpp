// Decoding routes and decode plans of `registry`: turning a payload back into
// a value, or into a `caf::message` holding one.
//
// Contract: `route_decode` checks a payload header against this registry and
// `decode_options` (the family allowlist, the type name and its compatible
// names, the stand-in, the format version, the family) and returns how such
// payloads decode, or the typed error naming the fix; `run_decode` checks the
// frames against the header and `limits`, then decodes into the caller's
// object (through the stand-in when the sender used one). A plan
// (`plan_decode`) holds a checked route for one header and keeps the snapshot
// it was made from. Exceptions thrown by a family or a stand-in become error
// values here.
//
// Thread-safety: every function reads one snapshot loaded once per call (or
// the plan's), never writes to the registry, and may run on any number of
// threads at once.

#include "registry_state.hpp"

#include "ferry/serializers/writer_shapes.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace ferry::serializers {

using detail::make_error;

caf::expected<registry::decode_route>
registry::route_decode(const state& st, const detail::type_ops& ops,
                       const payload_header& hdr,
                       const decode_options& opts) const {
  if (std::find(opts.deserializers.begin(), opts.deserializers.end(),
                hdr.family) == opts.deserializers.end())
    return make_error(
      errc::family_not_allowed,
      "refusing a payload of type '" + hdr.type_name + "' in family '" +
        hdr.family + "': this link accepts only " +
        detail::list_names(opts.deserializers) + "; add '" + hdr.family +
        "' to the link's deserializers, or make the sender "
        "prefer an allowed family");
  decode_route route;
  route.type_name = st.name_of(ops.type);
  route.payload_type = hdr.type_name;
  bool name_ok = hdr.type_name == route.type_name;
  for (auto& t : ops.compatible)
    name_ok = name_ok || hdr.type_name == st.name_of(t);
  if (!name_ok)
    return make_error(errc::type_mismatch,
                      "the payload holds a '" + hdr.type_name +
                        "', the receiver decodes a '" + route.type_name +
                        "'; both ends must add_type the same type under the "
                        "same name");
  // Resolve the registered stand-in, if the sender used one.
  if (!hdr.stand_in.empty()) {
    auto s = st.stand_ins.find(ops.type);
    if (s == st.stand_ins.end())
      return make_error(errc::stand_in_mismatch,
                        "the sender encoded '" + hdr.type_name +
                          "' through the registered stand-in '" + hdr.stand_in +
                          "', this registry has no serializer for it; call "
                          "register_serializer<T>(to, from) here too");
    route.stand = s->second;
    if (st.name_of(route.stand->ops->type) != hdr.stand_in)
      return make_error(errc::stand_in_mismatch,
                        "the sender's stand-in for '" + hdr.type_name +
                          "' is '" + hdr.stand_in + "', this registry's is '" +
                          st.name_of(route.stand->ops->type) +
                          "'; register the same serializer on both nodes");
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
                        "payload of type '" + hdr.type_name + "' in family " +
                          hdr.family + " has format version " +
                          std::to_string(hdr.version) +
                          ", this build reads version 1; upgrade this node");
    if (!route.dops->can_decode(*b))
      return make_error(errc::type_mismatch,
                        "family " + hdr.family + " cannot decode into " +
                          route.dname + ": " + route.dops->why_not(*b));
    route.builtin = b;
  } else if (auto f = st.families.find(hdr.family); f != st.families.end()) {
    if (hdr.version != f->second->version())
      return make_error(errc::version_mismatch,
                        "payload of type '" + hdr.type_name + "' in family " +
                          hdr.family + " has format version " +
                          std::to_string(hdr.version) +
                          ", the registered family reads version " +
                          std::to_string(f->second->version()));
    if (!f->second->can_encode(route.dops->type))
      return make_error(errc::type_mismatch,
                        "family " + hdr.family + " cannot decode into " +
                          route.dname + ": " +
                          f->second->why_not(route.dops->type));
    route.user = f->second.get();
  } else {
    return make_error(
      errc::unknown_family,
      "payload of type '" + hdr.type_name + "' names the family '" +
        hdr.family + "', unknown here (this registry knows " +
        detail::list_names(families()) + "); register_family it on this node");
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
                      "payload of type '" + tname + "': the header " +
                        "names " + std::to_string(hdr.frame_sizes.size()) +
                        " frames, " + std::to_string(p.frames.size()) +
                        " arrived; the transport lost or added frames");
  if (p.frames.size() > lim.max_frames)
    return make_error(errc::length_out_of_range,
                      "payload of type '" + tname + "' has " +
                        std::to_string(p.frames.size()) +
                        " frames, more than limits::max_frames");
  uint64_t total = 0;
  for (size_t i = 0; i < p.frames.size(); ++i) {
    if (p.frames[i].size() != hdr.frame_sizes[i])
      return make_error(
        errc::frame_mismatch,
        "payload of type '" + tname + "': frame " + std::to_string(i) +
          " has " + std::to_string(p.frames[i].size()) +
          " bytes, the header says " + std::to_string(hdr.frame_sizes[i]));
    total += p.frames[i].size();
  }
  if (total > lim.max_payload_bytes)
    return make_error(errc::payload_too_large,
                      "payload of type '" + tname + "' has " +
                        std::to_string(total) +
                        " bytes, more than limits::max_payload_bytes (" +
                        std::to_string(lim.max_payload_bytes) + ")");
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
    if (opts.writer_shapes != nullptr && !route.stand)
      scope.writer = opts.writer_shapes->find(route.type_name);
    detail::scope_guard guard{scope};
    if (sink != nullptr)
      (*sink)("ferry.serializers trace: decode " + dname + " with " + fam);
    detail::call_info info{fam, dname, true};
    err = dops->decode(*route.builtin, p.frames, adopt, target, lim, info);
  } else {
    try {
      err = route.user->decode(dops->type, p.frames, target, opts.context, lim);
    } catch (...) {
      err = make_error(errc::decode_failed,
                       "decoding " + dname + " with family " + fam +
                         " threw: " + detail::current_exception_text());
    }
  }
  if (err)
    return err;
  if (route.stand) {
    try {
      route.stand->from(target, out);
    } catch (...) {
      return make_error(errc::decode_failed,
                        "decoding " + route.type_name +
                          ": the registered serializer's `from` function "
                          "threw: " +
                          detail::current_exception_text());
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
                      "the payload holds a '" + header.type_name +
                        "', a name not added to this registry; call "
                        "add_type<T>(\"" +
                        header.type_name + "\") on this node");
  auto& entry = st.types.at(i->second);
  if (entry.decode_message == nullptr)
    return make_error(errc::unknown_type,
                      "'" + header.type_name +
                        "' cannot travel in a caf::message: give it an "
                        "inspect function or mark it "
                        "CAF_ALLOW_UNSAFE_MESSAGE_TYPE in this program");
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
  return plan.decode_message_(
    *this, plan, p, p.frames.empty() ? nullptr : &p.frames.back(), opts);
}

} // namespace ferry::serializers
