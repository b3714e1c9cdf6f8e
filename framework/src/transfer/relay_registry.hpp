// relay_registry: the two faces of relaying a store object to several
// hosts, as a link sees them.
//
// A node that sent a store object to several hosts lets each receiver pull
// it from the one before it (docs/architecture.md, "Moving large frames"): the owner
// offers each transfer a hint naming the node to pull from
// (`relay_offer`, transfer/relay_directory.hpp), and a node that pulls the
// object serves the nodes after it from the bytes it landed
// (`relay_registry`, implemented by transfer/relay_sources.hpp). A link
// reaches both through its host (link/link_host.hpp).
//
// Thread-safety: implementations may be called from any thread.
#pragma once

#include "transfer/landing_buffer.hpp"
#include "transfer/relay_source.hpp"
#include "wire/control.hpp"
#include "wire/relay_hint.hpp"

#include <caf/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace ferry::detail {

/// The owner's side of relaying one transfer of a store object.
struct relay_offer {
  /// The transfer's lease on the object's entry: held while the transfer
  /// is held.
  std::shared_ptr<const void> lease;
  /// The hint for the frame: the object's key, and the node to pull from
  /// (empty for the first receiver and for the receiver it went to last).
  relay_hint hint;
};

/// The objects a node relays, as a puller sees them (transfer/relay_sources.hpp).
class relay_registry {
public:
  virtual ~relay_registry() = default;

  /// Opens the source of the object `bytes` pulled from node `owner` under
  /// relay `key`, landing in `buffer` (chunks served at most `max_chunk`
  /// bytes); null when another pull of this node serves the key already.
  virtual std::shared_ptr<relay_source>
  open(uint64_t key, std::span<const std::byte> bytes,
       std::shared_ptr<landing_buffer> buffer, const std::string& owner,
       uint64_t max_chunk) = 0;

  /// Gives up relaying `source` (its pull failed): requests for `key` get
  /// `why`.
  virtual void close(uint64_t key, const std::shared_ptr<relay_source>& source,
                     const caf::error& why) = 0;

  /// Answers node `requester`'s `req` through `reply`, now or once the
  /// bytes it asks for arrive here.
  virtual void serve(const relay_request& req, const std::string& requester,
                     relay_source::reply_fn reply) = 0;
};

} // namespace ferry::detail
