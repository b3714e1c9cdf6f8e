// Actor handles inside messages: the per-thread hook that turns a handle into
// a small token and back.
//
// The serializers library knows no actor system, registry or link; it cannot
// tell what an actor handle (`caf::actor`, `caf::actor_addr`,
// `caf::strong_actor_ptr`, `caf::typed_actor<...>`) means on the other end.
// The code that sends over a link (ferry's framework) does: while it encodes
// or decodes on a thread, it installs a `handle_hook` there with a
// `handle_scope`, and every built-in family hands each non-null handle it
// meets to that hook (`save`) and each token it reads back (`load`).
//
// Wire form of a token, per family: cereal.binary and cereal.portable write
// a u8 `kind` then a u64 `id`; cereal.json an object `{"kind": n, "id": n}`;
// msgpack an array `[kind, id]`; caf a u8 then a u64 in CAF's binary format
// (for top-level handles, aggregate members and the standard containers ferry
// walks; see families/caf.hpp for what the caf family cannot carry). raw
// refuses every type holding a handle.
//
// Rules every family follows:
// - A null handle is the token {0, 0}, written without the hook.
// - A non-null handle with no hook installed fails the encode with
//   `errc::actor_handle_without_link`: actor handles travel only over ferry
//   links (`node::remote_actor`), whose hook gives them meaning.
// - Reading {0, 0} gives a null handle; kind 0 with another id is refused as
//   corrupt (`errc::malformed_frame`); any other kind goes to the hook, and
//   with no hook installed fails with `errc::actor_handle_without_link`.
// - An error from the hook fails the encode or decode with that error
//   (its code and text kept); the registry then tries no other family, as
//   every family would ask the same hook.
// - Typed handles are not checked against their signatures on decode (CAF's
//   own deserializer does not check either): the hook vouches for the actor.
//
// Thread-safety: a hook is installed for the calling thread only; scopes
// nest (the innermost wins) and restore the previous hook when destroyed.
// A hook is called only from the thread that installed it, so it needs no
// locking of its own unless it shares state with other threads.
//
//     struct my_hook : ferry::serializers::handle_hook { ... };
//     my_hook hook;
//     ferry::serializers::handle_scope scope{hook};
//     auto p = reg.encode(caf::actor{worker}, opts); // calls hook.save
#pragma once

#include <caf/actor_control_block.hpp>
#include <caf/expected.hpp>

#include <cstdint>

namespace ferry::serializers {

/// What an actor handle becomes on the wire.
struct handle_token {
  /// 0: no actor (a null/invalid handle); others are the hook's to define
  /// (the framework uses 1 = an actor of the sending node, 2 = an actor of
  /// the receiving node).
  uint8_t kind = 0;
  /// The actor's id, as the hook defines it (0 when kind is 0).
  uint64_t id = 0;

  friend bool operator==(const handle_token&, const handle_token&) = default;
};

/// Translates handles while a family encodes or decodes on this thread.
class handle_hook {
public:
  virtual ~handle_hook();

  /// Encoding: the token for the non-null handle `x`, or an error (which
  /// fails the encode, its text kept).
  virtual caf::expected<handle_token> save(const caf::strong_actor_ptr& x) = 0;

  /// Decoding: the handle for `x` (kind != 0); null is allowed (the actor
  /// is gone); an error fails the decode.
  virtual caf::expected<caf::strong_actor_ptr> load(const handle_token& x) = 0;
};

/// Installs `hook` as the calling thread's handle hook until destroyed (nests,
/// restores the previous).
class handle_scope {
public:
  explicit handle_scope(handle_hook& hook) noexcept;

  ~handle_scope();

  handle_scope(const handle_scope&) = delete;
  handle_scope& operator=(const handle_scope&) = delete;

  /// Returns the calling thread's innermost hook, or null.
  static handle_hook* current() noexcept;

private:
  handle_hook* prev_;
};

} // namespace ferry::serializers
