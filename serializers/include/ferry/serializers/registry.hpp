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

#include "ferry/serializers/detail/type_ops.hpp"
#include "ferry/serializers/detail/recycling_message.hpp"
#include "ferry/serializers/family.hpp"
#include "ferry/serializers/payload.hpp"

#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
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
  /// payload headers). Adding the same pair again changes nothing. If `name`
  /// or `T` is taken by another pair, the first registration stays and the
  /// conflict is reported on standard error; use `try_add_type` to get it as
  /// an error.
  template <class T>
  void add_type(std::string name) {
    if (auto err = try_add_type<T>(std::move(name)))
      report_conflict(err);
  }

  /// Registers `T` under `name`; returns `errc::unknown_type` naming the
  /// conflict if `T` or `name` is registered already with another partner.
  template <class T>
  [[nodiscard]] caf::error try_add_type(std::string name) {
    detail::check_members<T>();
    decode_message_fn fn = nullptr;
    if constexpr (caf::is_serializable_or_whitelisted<T>::value)
      fn = &decode_message_of<T>;
    return add_type_impl(detail::ops_of<T>(), std::move(name), fn);
  }

  /// Returns the registered name of `type`, if any.
  [[nodiscard]] std::optional<std::string>
  type_name(std::type_index type) const;

  // -- encoding ---------------------------------------------------------------

  /// Encodes `x` with the first family of `opts.serializers` that can encode
  /// `T`. When none can, returns `errc::no_family_can_encode` naming the
  /// type, each family tried and why, and the fixes. View frames (`raw`,
  /// `separate`) point into `x`: keep `x` alive and unchanged while the
  /// payload lives, or pass `opts.keep_alive`. With a keep-alive, the binary
  /// cereal families also split a large top-level array into a size-tag
  /// frame and a view of its elements (families/cereal.hpp). Frames of 64 KiB or more that
  /// a family writes are views of pooled buffers (their keep-alive returns
  /// the buffer to a process-wide pool, at most 8 buffers / 256 MiB), so that
  /// steady-state sending writes into memory that is already mapped.
  template <class T>
  [[nodiscard]] caf::expected<payload>
  encode(const T& x, const encode_options& opts) const {
    detail::check_members<T>();
    return encode_impl(detail::ops_of<T>(), &x, opts, opts.keep_alive);
  }

  /// Encodes `*value`, whose type is `type`, which must have been added with
  /// `add_type`; returns `errc::unknown_type` otherwise.
  [[nodiscard]] caf::expected<payload>
  encode(std::type_index type, const void* value,
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
  /// added with `add_type`, and for types CAF cannot hold in a message (no
  /// `inspect` and not `CAF_ALLOW_UNSAFE_MESSAGE_TYPE`). A large
  /// `std::vector` of numbers or bytes goes back to the vector pool
  /// (vector_pool.hpp) when the message's last reference drops.
  [[nodiscard]] caf::expected<caf::message>
  decode_message(const payload& p, const decode_options& opts) const;

  /// As above; may adopt the payload's owned bytes instead of copying them
  /// (see `decode(payload&&, ...)`).
  [[nodiscard]] caf::expected<caf::message>
  decode_message(payload&& p, const decode_options& opts) const;

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
    spec.stateless = (std::is_empty_v<To> || std::is_pointer_v<To>)
                     && (std::is_empty_v<From> || std::is_pointer_v<From>);
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
  using decode_message_fn = caf::expected<caf::message> (*)(
    const registry&, const payload&, frame*, const decode_options&);

  template <class T>
  static caf::expected<caf::message>
  decode_message_of(const registry& self, const payload& p, frame* adopt,
                    const decode_options& opts) {
    auto x = self.decode_typed<T>(p, adopt, opts);
    if (!x)
      return std::move(x.error());
    if constexpr (detail::is_poolable_vector<T>)
      return detail::recycling_message(std::move(*x));
    else
      return caf::make_message(std::move(*x));
  }

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
                           decode_message_fn fn);

  static void report_conflict(const caf::error& err);

  caf::expected<payload>
  encode_impl(const detail::type_ops& ops, const void* value,
              const encode_options& opts,
              const std::shared_ptr<const void>& keep_alive) const;

  caf::expected<caf::message> decode_message_impl(const payload& p,
                                                  frame* adopt,
                                                  const decode_options& opts)
    const;

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
  std::mutex write_mutex_;
  std::atomic<bool> trace_{false};
};

} // namespace ferry::serializers
