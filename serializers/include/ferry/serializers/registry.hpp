// The serializer registry of one node.
//
// A registry knows every message type (`add_type<T>(name)`), the families
// that can encode it (the built-in ones, detected at compile time, plus
// families registered at run time) and per-type serializers registered at
// run time. It turns values into payloads (`encode`) with the first family of
// a preference list that can encode the value, and payloads back into values
// (`decode`), refusing families outside an allowlist.
//
// Ownership: one registry per node, owned by the node; nothing is global, so
// two registries in one process (two nodes in a test) never see each other's
// registrations.
//
// Thread-safety: every member function may be called concurrently from any
// number of threads. Readers (encode, decode, can_encode, ...) take an
// immutable snapshot of the registrations with one atomic load and never
// block; writers (add_type, register_*, deregister_*) copy the snapshot,
// change the copy and publish it atomically, serialised by a mutex. A call
// that started before a registration finishes with the old snapshot.
//
// Plans: a caller that encodes many values of one type, or decodes many
// payloads with one header, resolves the type, family and header once
// (`plan_encode`, `plan_decode`) and passes the plan with each value; a
// plan is immutable, may be shared by threads and keeps the snapshot it was
// made from. `generation()` says when registrations changed since (a link
// then makes its plans again).
//
// Tracing: with `FERRY_SERIALIZERS_TRACE=1` in the environment when the
// registry is built, `trace(true)`, or `encode_options::trace`, every family
// tried and every aggregate member encoded or decoded is written to the trace
// sink (default: standard error), so the failing member is the last line.
//
//     ferry::serializers::registry reg;
//     reg.add_type<point>("point");
//     encode_options eo;
//     eo.serializers = {"msgpack", "cereal.binary"};
//     auto p = reg.encode(point{1, 2}, eo);                   // expected<payload>
//     decode_options dopts;
//     dopts.deserializers = {"msgpack", "cereal.binary"};
//     auto x = reg.decode<point>(*p, dopts);                  // expected<point>
//     // type-erased, as the framework holds values:
//     point q{3, 4};
//     auto p2 = reg.encode(std::type_index{typeid(point)}, &q, eo);
#pragma once

#include "ferry/serializers/detail/recycling_message.hpp"
#include "ferry/serializers/detail/thread_safety.hpp"
#include "ferry/serializers/detail/type_ops.hpp"
#include "ferry/serializers/family.hpp"
#include "ferry/serializers/payload.hpp"

#include <caf/make_message.hpp>
#include <caf/message.hpp>
#include <caf/type_nr.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

namespace ferry::serializers {

/// The serializer registry of one node. See the file comment.
class registry {
public:
  /// Builds a registry with the built-in families; tracing starts on when the
  /// environment variable `FERRY_SERIALIZERS_TRACE` is `1`, `true` or `on`.
  registry();

  ~registry();

  registry(const registry&) = delete;
  registry& operator=(const registry&) = delete;

  // -- types ------------------------------------------------------------------

  /// Registers the message type `T` under `name` (the name both ends use in
  /// payload headers), and, for a CAF built-in type, its `caf::type_nr` (see
  /// `element_type`). Adding the same pair again changes nothing. If `name`
  /// or `T` is taken by another pair, the first registration stays and the
  /// conflict is reported on standard error; use `try_add_type` to get it as
  /// an error.
  template <class T>
  void add_type(std::string name) {
    if (auto err = try_add_type<T>(std::move(name)))
      report_conflict(err);
  }

  /// Registers `T` under `name`; returns `errc::type_name_taken` naming the
  /// conflict if `T` or `name` is registered already with another partner,
  /// `errc::invalid_type_name` for an empty name or one of over 1024
  /// characters.
  template <class T>
  [[nodiscard]] caf::error try_add_type(std::string name) {
    detail::check_members<T>();
    decode_message_fn fn = nullptr;
    if constexpr (caf::is_serializable_or_whitelisted<T>::value)
      fn = &decode_message_of<T>;
    return add_type_impl(detail::ops_of<T>(), std::move(name),
                         caf::type_nr<T>::value, fn);
  }

  /// Returns the registered name of `type`, if any.
  [[nodiscard]] std::optional<std::string>
  type_name(std::type_index type) const;

  /// Returns whether a type is registered under `name`.
  [[nodiscard]] bool has_type(std::string_view name) const;

  /// A registered type's name and shape (shape.hpp).
  struct type_shape {
    std::string name;
    std::string shape;
  };

  /// Returns the name and shape of every registered type, sorted by name:
  /// what a node tells its peers so that a type whose shape differs between
  /// two builds is never decoded as if it matched.
  [[nodiscard]] std::vector<type_shape> type_shapes() const;

  /// Returns the registered type of element `pos` of `msg`, found by the
  /// element's `std::type_info`, or, for a CAF built-in type (which a
  /// `caf::message` reports by its `caf::type_nr` alone), by the number
  /// recorded when the type was added; none when that type is not
  /// registered or `pos` is not an element of `msg`. CAF gives the integer
  /// types of one size one number (`long` and `long long`): of two such
  /// types added, the first keeps it. Costs one snapshot load and one lookup,
  /// no allocation: it runs for every element sent.
  [[nodiscard]] std::optional<std::type_index>
  element_type(const caf::message& msg, size_t pos) const;

  // -- encoding ---------------------------------------------------------------

  /// Encodes `x` with the first family of `opts.serializers` that can encode
  /// `T`. When none can, returns `errc::no_family_can_encode` naming the type,
  /// each family tried and why, and the fixes. View frames (`raw`, `separate`)
  /// point into `x`: keep `x` alive and unchanged while the payload lives, or
  /// pass `opts.keep_alive`. With a keep-alive, the binary cereal families also
  /// split a large top-level array into a size-tag frame and a view of its
  /// elements (families/cereal.hpp). Frames of 64 KiB or more that a family
  /// writes are views of pooled buffers (their keep-alive returns the buffer to
  /// a process-wide pool, at most 8 buffers / 256 MiB), so that steady-state
  /// sending writes into memory that is already mapped.
  template <class T>
  [[nodiscard]] caf::expected<payload>
  encode(const T& x, const encode_options& opts) const {
    detail::check_members<T>();
    return encode_impl(detail::ops_of<T>(), &x, opts, opts.keep_alive);
  }

  /// Encodes `*value`, whose type is `type`, which must have been added with
  /// `add_type`; returns `errc::unknown_type` otherwise.
  [[nodiscard]] caf::expected<payload> encode(std::type_index type,
                                              const void* value,
                                              const encode_options& opts) const;

  /// As above, with `keep_alive` in place of `opts.keep_alive`: one options
  /// value (family lists, context, limits) serves every message of a link,
  /// and only what keeps each value alive changes per call.
  [[nodiscard]] caf::expected<payload>
  encode(std::type_index type, const void* value, const encode_options& opts,
         const std::shared_ptr<const void>& keep_alive) const;

  // -- decoding ---------------------------------------------------------------

  /// Decodes `p` into a `T`, straight from its frames (no copy first).
  /// Refuses families outside `opts.deserializers`
  /// (`errc::family_not_allowed`), payloads of another type
  /// (`errc::type_mismatch`) and any malformed or oversized input (typed
  /// errors, see errc.hpp).
  template <class T>
  [[nodiscard]] caf::expected<T> decode(const payload& p,
                                        const decode_options& opts) const {
    return decode_typed<T>(p, nullptr, opts);
  }

  /// As above; may adopt the payload's owned bytes instead of copying them
  /// (`raw` into `std::vector<std::byte>` or `array_view<T>`, and a split
  /// `cereal.binary` / `cereal.portable` array into `std::vector<std::byte>`).
  template <class T>
  [[nodiscard]] caf::expected<T> decode(payload&& p,
                                        const decode_options& opts) const {
    frame* adopt = p.frames.empty() ? nullptr : &p.frames.back();
    return decode_typed<T>(p, adopt, opts);
  }

  /// Decodes `p` into a `caf::message` holding a value of the type registered
  /// under `p.header.type_name`; returns `errc::unknown_type` for names not
  /// added with `add_type`, and for types CAF cannot hold in a message
  /// (neither serializable by CAF, with an `inspect` function of their own or
  /// ferry's for plain aggregates, nor marked `CAF_ALLOW_UNSAFE_MESSAGE_TYPE`;
  /// docs/limits.md). A large
  /// `std::vector` of numbers or bytes goes back to the vector pool
  /// (vector_pool.hpp) when the message's last reference drops.
  [[nodiscard]] caf::expected<caf::message>
  decode_message(const payload& p, const decode_options& opts) const;

  /// As above; may adopt the payload's owned bytes instead of copying them
  /// (see `decode(payload&&, ...)`).
  [[nodiscard]] caf::expected<caf::message>
  decode_message(payload&& p, const decode_options& opts) const;

  // -- plans ------------------------------------------------------------------

  class encode_plan;
  class decode_plan;

  /// Returns the plan for encoding values of `type` under `opts.serializers`
  /// (see `encode_plan`); none when `encode` has to decide per value: the
  /// type is not added, it has a registered stand-in, or no family of the
  /// list can encode it at all.
  [[nodiscard]] std::optional<encode_plan>
  plan_encode(std::type_index type, const encode_options& opts) const;

  /// Encodes `*value`, of the plan's type, with the plan's family; the
  /// payload's header is `encode_header(plan.header_key(), frames)`. Any
  /// failure (the family refuses this value, a limit) comes back as it is:
  /// `encode` then gives what it would have given without the plan (the next
  /// family's payload, or the error naming every family tried).
  [[nodiscard]] caf::expected<std::vector<frame>>
  encode(const encode_plan& plan, const void* value, const encode_options& opts,
         const std::shared_ptr<const void>& keep_alive) const;

  /// As above, writing the frames to `out` (cleared first; a caller that
  /// encodes many values reuses its capacity).
  [[nodiscard]] caf::error encode(const encode_plan& plan, const void* value,
                                  const encode_options& opts,
                                  const std::shared_ptr<const void>& keep_alive,
                                  std::vector<frame>& out) const;

  /// Returns the plan for decoding payloads with `header`'s family, type,
  /// stand-in and version under `opts.deserializers` (see `decode_plan`), or
  /// the error `decode_message` would give for that header.
  [[nodiscard]] caf::expected<decode_plan>
  plan_decode(const payload_header& header, const decode_options& opts) const;

  /// Decodes `p` as `decode_message(payload&&, ...)` does, reading only its
  /// frames and `p.header.frame_sizes`: the plan stands for the rest of the
  /// header. REQUIRES: `plan` was made for `opts` (the same deserializers).
  [[nodiscard]] caf::expected<caf::message>
  decode_message(const decode_plan& plan, payload&& p,
                 const decode_options& opts) const;

  /// Returns the number of changes made to this registry's registrations so
  /// far: a plan made at another count may not do what `encode` or
  /// `decode_message` would do now; make it again.
  [[nodiscard]] uint64_t generation() const noexcept;

  // -- families ---------------------------------------------------------------

  /// Returns the names of every family this registry can encode and decode:
  /// the built-in ones, then those registered at run time.
  [[nodiscard]] std::vector<std::string> families() const;

  /// Returns whether `family` can encode values of `type` here (honouring a
  /// serializer registered for `type`). False for unknown families and for
  /// types neither added nor having a registered serializer.
  [[nodiscard]] bool can_encode(std::string_view family,
                                std::type_index type) const;

  /// Adds the family `f` under `name`. Registering the same object under the
  /// same name again changes nothing; another object under a taken name (or
  /// a built-in name) is `errc::family_exists`.
  [[nodiscard]] caf::error register_family(std::string name,
                                           std::shared_ptr<const family> f);

  /// Removes the run-time family `name`; unknown names change nothing.
  /// Returns whether the registry changed.
  bool deregister_family(std::string_view name);

  // -- per-type serializers ---------------------------------------------------

  /// Registers a serializer for `T`, a type one cannot change: `to(const T&)`
  /// returns a serializable stand-in `U`, `from(U&&)` (or `from(U)`) returns
  /// the `T`. Every family then encodes `T` as `U`, ahead of `T`'s own
  /// serialization; the payload header names the stand-in, so a receiver
  /// without the same registration refuses it (`errc::stand_in_mismatch`).
  /// Re-registering replaces at once; registering the same functions again
  /// changes nothing (same function pointers, or same stateless callable
  /// types). Registrations belong to this registry only.
  /// Returns whether the registry changed.
  template <class T, class To, class From>
  bool register_serializer(To to, From from) {
    using U = std::remove_cvref_t<std::invoke_result_t<To, const T&>>;
    static_assert(std::is_default_constructible_v<U>,
                  "ferry: the stand-in type must be default constructible");
    stand_in_spec spec;
    spec.ops = &detail::ops_of<U>();
    spec.to_type = typeid(To);
    spec.from_type = typeid(From);
    if constexpr (std::is_pointer_v<To>)
      spec.to_ptr = reinterpret_cast<const void*>(to);
    if constexpr (std::is_pointer_v<From>)
      spec.from_ptr = reinterpret_cast<const void*>(from);
    spec.stateless = (std::is_empty_v<To> || std::is_pointer_v<To>)&&(
      std::is_empty_v<From> || std::is_pointer_v<From>);
    spec.to = [to](const void* t) -> std::shared_ptr<const void> {
      return std::make_shared<const U>(to(*static_cast<const T*>(t)));
    };
    spec.from = [from](void* u, void* t) {
      *static_cast<T*>(t) = from(std::move(*static_cast<U*>(u)));
    };
    return register_serializer_impl(typeid(T), std::move(spec));
  }

  /// Removes the serializer registered for `T`; unknown types change nothing.
  /// Returns whether the registry changed.
  template <class T>
  bool deregister_serializer() {
    return deregister_serializer_impl(typeid(T));
  }

  // -- exceptions carrying errors ---------------------------------------------

  /// Makes the built-in families return `e.error()` when serialization code
  /// they run (a cereal `save`/`load`, a msgpack adaptor) throws an `E`.
  /// Such code throws because cereal and msgpack cannot return errors;
  /// otherwise the family reports `encode_failed` or `decode_failed` with
  /// `e.what()`, and the thrower's error (its category, code and fix) is
  /// lost. The store's handles throw `ferry::store::ref_serialization_error`;
  /// the serializers library does not know the store, so whoever holds both
  /// registers it. Registrations belong to this registry only.
  /// REQUIRES: `e.error()` is a `caf::error` (or a reference to one).
  /// Returns whether the registry changed.
  template <class E>
  bool register_error_exception() {
    return register_error_exception_impl(
      {typeid(E), [](caf::error& out) -> bool {
         try {
           throw;
         } catch (const E& e) {
           out = e.error();
           return true;
         } catch (...) {
           return false;
         }
       }});
  }

  // -- tracing ----------------------------------------------------------------

  /// Turns tracing on or off.
  void trace(bool on) noexcept;

  /// Returns whether tracing is on.
  [[nodiscard]] bool trace() const noexcept;

  /// Sets where trace lines go (default: standard error).
  void trace_sink(std::function<void(std::string_view)> sink);

  // -- implementation ---------------------------------------------------------

  /// Type-erased stand-in registration. Not API.
  struct stand_in_spec {
    const detail::type_ops* ops = nullptr;
    std::type_index to_type = typeid(void);
    std::type_index from_type = typeid(void);
    const void* to_ptr = nullptr;
    const void* from_ptr = nullptr;
    bool stateless = false;
    std::function<std::shared_ptr<const void>(const void*)> to;
    std::function<void(void*, void*)> from;
  };

  struct state;

private:
  using trace_fn = std::function<void(std::string_view)>;

  /// How one family encodes one type (a built-in family or a registered
  /// one).
  struct encode_route {
    const detail::type_ops* ops = nullptr;
    std::optional<detail::builtin> builtin;
    const family* user = nullptr;
    uint32_t version = 1;
  };

  /// How payloads with one header decode (family, type, stand-in).
  struct decode_route {
    /// This registry's name of the type, and the one the payload gave.
    std::string type_name;
    std::string payload_type;
    /// What the family decodes into: the type or its stand-in.
    const detail::type_ops* dops = nullptr;
    std::string dname;
    std::shared_ptr<const stand_in_spec> stand;
    std::string family;
    std::optional<detail::builtin> builtin;
    const serializers::family* user = nullptr;
  };

  using decode_message_fn = caf::expected<caf::message> (*)(
    const registry&, const decode_plan&, const payload&, frame*,
    const decode_options&);

  template <class T>
  static caf::expected<caf::message>
  decode_message_of(const registry& self, const decode_plan& plan,
                    const payload& p, frame* adopt, const decode_options& opts);

  template <class T>
  caf::expected<T> decode_typed(const payload& p, frame* adopt,
                                const decode_options& opts) const {
    static_assert(std::is_default_constructible_v<T>,
                  "ferry: decode<T> needs a default-constructible T");
    detail::check_members<T>();
    T result{};
    if (auto err = decode_impl(detail::ops_of<T>(), p, adopt, &result, opts))
      return err;
    return result;
  }

  caf::error add_type_impl(const detail::type_ops& ops, std::string name,
                           uint16_t type_nr, decode_message_fn fn);

  static void report_conflict(const caf::error& err);

  caf::expected<payload>
  encode_impl(const detail::type_ops& ops, const void* value,
              const encode_options& opts,
              const std::shared_ptr<const void>& keep_alive) const;

  /// Returns how family `fam` encodes `ops`'s type, or why it cannot.
  std::optional<encode_route> route_encode(const state& st,
                                           const detail::type_ops& ops,
                                           const std::string& fam,
                                           std::string& why) const;

  /// Encodes `value` along `route` into `frames` (errors of the family only).
  caf::error encode_with(const state& st, const encode_route& route,
                         const std::string& fam, const void* value,
                         const std::shared_ptr<const void>& keep,
                         bool views_allowed, const encode_options& opts,
                         const std::string& tname, const trace_fn* sink,
                         std::vector<frame>& frames) const;

  /// Checks encoded `frames` against `opts.limits`; traces them.
  static caf::error check_encoded(const std::string& fam,
                                  const std::vector<frame>& frames,
                                  const encode_options& opts,
                                  const std::string& tname,
                                  const trace_fn* sink);

  /// Checks what `hdr` names against this registry and `opts`; returns how
  /// to decode such payloads into `ops`'s type.
  caf::expected<decode_route> route_decode(const state& st,
                                           const detail::type_ops& ops,
                                           const payload_header& hdr,
                                           const decode_options& opts) const;

  /// Decodes `p` along `route` into `out` (checks of the frames included).
  caf::error run_decode(const state& st, const decode_route& route,
                        const payload& p, frame* adopt, void* out,
                        const decode_options& opts) const;

  caf::expected<caf::message>
  decode_message_impl(const payload& p, frame* adopt,
                      const decode_options& opts) const;

  caf::error decode_impl(const detail::type_ops& ops, const payload& p,
                         frame* adopt, void* out,
                         const decode_options& opts) const;

  bool register_serializer_impl(std::type_index type, stand_in_spec spec);

  bool deregister_serializer_impl(std::type_index type);

  bool register_error_exception_impl(detail::error_exception x);

  std::shared_ptr<const state> snapshot() const noexcept;

  template <class F>
  bool update(F&& f);

  std::atomic<std::shared_ptr<const state>> state_;
  std::atomic<uint64_t> generation_{0};
  /// Serializes writers; readers load `state_` without it.
  detail::mutex write_mutex_;
  std::atomic<bool> trace_{false};
};

/// What `registry::encode` resolves for one type under one preference list,
/// resolved once: the type's registered name, the first family of the list
/// that can encode the type, and the key of the payload header naming both
/// (payload.hpp). A link makes one per type it sends and encodes every
/// message of the type with it: no lookup by type or name and no header
/// strings per message. The plan holds the registrations it was made from.
class registry::encode_plan {
public:
  /// Returns the family the plan encodes with.
  [[nodiscard]] const std::string& family() const noexcept { return family_; }

  /// Returns the key of every payload header the plan makes.
  [[nodiscard]] std::span<const std::byte> header_key() const noexcept {
    return key_;
  }

  /// Returns the registry's `generation()` when the plan was made.
  [[nodiscard]] uint64_t generation() const noexcept { return generation_; }

private:
  friend class registry;
  std::shared_ptr<const state> st_;
  encode_route route_;
  std::string family_;
  std::string type_name_;
  std::vector<std::byte> key_;
  uint64_t generation_ = 0;
};

/// What `registry::decode_message` resolves from a payload header, resolved
/// once: the registered type, its family and stand-in, with every check of
/// the header against the registry and the allowlist done. A link keeps one
/// per header key it has accepted (payload.hpp) and decodes every payload
/// with that key by it. The plan holds the registrations it was made from.
class registry::decode_plan {
public:
  /// Returns the family the plan decodes.
  [[nodiscard]] const std::string& family() const noexcept {
    return route_.family;
  }

  /// Returns the registry's `generation()` when the plan was made.
  [[nodiscard]] uint64_t generation() const noexcept { return generation_; }

private:
  friend class registry;
  std::shared_ptr<const state> st_;
  decode_route route_;
  decode_message_fn decode_message_ = nullptr;
  uint64_t generation_ = 0;
};

template <class T>
caf::expected<caf::message>
registry::decode_message_of(const registry& self, const decode_plan& plan,
                            const payload& p, frame* adopt,
                            const decode_options& opts) {
  T result{};
  if (auto err =
        self.run_decode(*plan.st_, plan.route_, p, adopt, &result, opts))
    return err;
  if constexpr (detail::is_poolable_vector<T>)
    return detail::recycling_message(std::move(result));
  else
    return detail::make_pooled_message(std::move(result));
}

} // namespace ferry::serializers
