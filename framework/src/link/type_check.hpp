// type_check: the message types whose shape differs between this node's
// build and the peer's, found once when a link is made, and what the link
// does with each.
//
// Each hello carries the names and shapes of the sender's registered types
// (ferry/serializers/shape.hpp). A type both nodes registered under one name
// with different shapes (a member added, removed, renamed, reordered or of
// another type, or another declared version) is never encoded or decoded as
// if the two matched:
// - when both versions are evolving records whose differences some of the
//   built-in families bridge (`shapes_bridge`: msgpack and cereal.json by
//   member name, cereal.binary and cereal.portable by the peer's shape,
//   which `writer_shapes()` holds for the link's decoder), the link sends
//   the type only with those of its families, in its preference order, and
//   decodes it only from them;
// - otherwise, and when the link's serializers hold no bridging family, both
//   directions refuse it with `errc::type_mismatch`, whose text names the
//   type, both fingerprints, the first member that differs and the fix.
// Types only one side registered are not this part's business (the decoder
// reports them unregistered).
//
// Thread-safety: immutable after construction; any thread may read it.
#pragma once

#include "wire/control.hpp"

#include "ferry/serializers/registry.hpp"
#include "ferry/serializers/writer_shapes.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::detail {

class type_check {
public:
  /// Compares this node's types (`reg`) with those of `peer`'s hello (the
  /// node `peer_name`).
  type_check(const serializers::registry& reg, const hello& peer,
             const std::string& peer_name, const std::string& node_name);

  /// Whether every type both nodes registered has one shape.
  bool empty() const noexcept { return types_.empty(); }

  /// Whether the type registered as `name` has another shape on the peer.
  bool differs(std::string_view name) const;

  /// The families of `prefs` (in order) to send a message of the changed
  /// type `name` with, or its refusal when none bridges the two versions.
  /// @pre `differs(name)`
  caf::expected<std::vector<std::string>>
  send_families(std::string_view name,
                const std::vector<std::string>& prefs) const;

  /// The refusal of a message of type `name` arriving in `family`; none when
  /// its shape matches the peer's, or `family` bridges the two versions.
  caf::error refusal(std::string_view name, std::string_view family) const;

  /// The peer's shapes of the changed types cereal.binary and
  /// cereal.portable bridge, for the link's decode options; null when there
  /// are none.
  std::shared_ptr<const serializers::writer_shapes> writer_shapes() const {
    return writer_shapes_;
  }

  /// One line per changed type, for the node's log when the link is made
  /// (`prefs`: the families the link sends with).
  std::vector<std::string> report(const std::vector<std::string>& prefs) const;

private:
  struct changed {
    /// The first difference and the fingerprints, in words.
    std::string text;
    /// The built-in families that bridge the two versions.
    std::vector<std::string> bridging;

    bool bridges(std::string_view family) const;

    /// The families of `prefs`, in order, that bridge the two versions.
    std::vector<std::string>
    bridging_in(const std::vector<std::string>& prefs) const;
  };

  caf::error refuse(const std::string& name, const changed& x,
                    const std::string& why) const;

  std::map<std::string, changed, std::less<>> types_;
  std::shared_ptr<const serializers::writer_shapes> writer_shapes_;
};

} // namespace ferry::detail
