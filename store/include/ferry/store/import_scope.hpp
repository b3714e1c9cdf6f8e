// Resolves handles of another host's store while a message from there is read.
//
// A serialized `object_ref` names its store by token. A process on another
// host has not attached that store (it cannot: the store is another host's
// shared memory), so the framework copies each such object into the local
// store before decoding the message and opens an `import_scope` that maps
// the foreign object ids to the local copies. While the scope is open on a
// thread, deserializing a handle of the foreign store (cereal `load`, CAF
// `inspect`, `from_wire`) yields a new reference to the local copy; a
// handle whose object was not imported fails with `errc::object_not_found`
// naming the object and store.
//
// Usage (framework side, receiving a message from another host):
//
//     ferry::store::import_scope scope{peer_store_token};
//     scope.add(foreign_id, std::move(local_copy));   // one per object
//     auto value = decode(message);   // handles now point at local copies
//
// An *exclusive* scope also closes every other store while it is open: a
// message from another host may name only the objects it carried, so a
// handle naming this host's store (or any store but the scope's) fails with
// `errc::foreign_handle` instead of resolving to a local object the sender
// was never given (object ids are small sequential numbers; a peer could
// guess them).
//
// Thread-safety: scopes are per thread (thread-local) and nest; the innermost
// one whose token matches is used, and no scope outside an exclusive one is
// looked at. A scope must be destroyed on the thread that created it, in
// reverse order of creation.
#pragma once

#include "ferry/store/object_id.hpp"
#include "ferry/store/object_ref.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace ferry::store {

/// RAII map from a foreign store's objects to local copies. See the header
/// comment.
class import_scope {
public:
  /// Whether handles of other stores still resolve while the scope is open.
  enum class others {
    /// Handles of other stores resolve as without the scope.
    resolve,
    /// Handles of every other store fail with `errc::foreign_handle`.
    refuse,
  };

  /// Opens a scope for handles of the store with token `foreign_token` on the
  /// calling thread.
  explicit import_scope(uint64_t foreign_token,
                        others other_stores = others::resolve);

  import_scope(const import_scope&) = delete;
  import_scope& operator=(const import_scope&) = delete;

  /// Closes the scope and drops its references to the local copies (handles
  /// deserialized meanwhile keep their own).
  ~import_scope();

  /// Maps object `foreign` of the foreign store to `local` (replacing an
  /// earlier mapping of the same id).
  void add(object_id foreign, object_ref local);

  /// Returns the token of the foreign store.
  uint64_t token() const noexcept { return token_; }

  /// Returns the innermost open scope for `token` on the calling thread, or
  /// null; scopes outside an exclusive one are not looked at.
  static const import_scope* find(uint64_t token) noexcept;

  /// Returns the innermost exclusive scope open on the calling thread, or
  /// null.
  static const import_scope* exclusive() noexcept;

  /// Returns a new reference to the local copy of object `foreign`, or
  /// `errc::object_not_found`.
  [[nodiscard]] caf::expected<object_ref> resolve(object_id foreign) const;

private:
  uint64_t token_;
  others others_;
  std::vector<std::pair<object_id, object_ref>> objects_;
  import_scope* previous_;
};

} // namespace ferry::store
