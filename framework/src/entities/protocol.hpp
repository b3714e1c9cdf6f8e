// The messages of sharded entities (docs/entities.md, "How a message finds
// its entity").
//
// Between members, on ordinary ferry links, made of the types every node
// registers (atoms, strings, integers, actor handles), so any family carries
// them:
//
//   call_atom, type, key, hops, <the user's elements...>
//       A message for entity (type, key), with the user's sender and message
//       id: a request's answer goes from the entity to the requester. `hops`
//       counts the members that passed it on.
//   flush_atom, shard, origin, token
//       Sent by member `origin`'s host (the message's sender) along the way
//       its router sent the shard's messages so far, when it starts sending
//       them elsewhere; the member that holds the shard answers
//       `ready_atom, shard, token` to that sender once everything before it
//       was delivered (also when it has not met that host).
//   handoff_atom, shard, epoch  ...  handed_atom, shard, epoch
//       From the member that held the shard to the one it hands it to,
//       around every message it held for it: the taker holds them, takes
//       the shard's lease (released to it), and delivers them first.
//   hello_atom, uid, hosting, shards  ->  hello_atom, uid, hosting, shards
//       Hosts introduce themselves (they find each other in the cluster
//       registry under `registry_key`), saying whether they host entities
//       and how many shards keys map to; hosts whose counts differ do not
//       meet (each logs why).
//   bye_atom, uid  ->  bye_ack_atom, uid
//       A host that stops (its node ends): the others stop sending it
//       calls at once, rather than when the cluster notices, and answer
//       once they have (their earlier calls arrived before the answer); it
//       passes on what reached it meanwhile before it ends.
//
// Within a node: the host and its entities (stop_atom, idle_atom), the
// store workers (load_atom, save_atom, acquire_atom, renew_atom,
// release_atom), and the host's own timer (tick_atom).
//
// Thread-safety: constants.
#pragma once

#include <caf/atom.hpp>

#include <cstddef>

namespace ferry::detail::entities {

/// Where every member's entity host is registered in the cluster registry.
inline constexpr const char* registry_key = "ferry.entities";

/// Members a message may pass through before it is refused (a routing loop
/// while views disagree).
inline constexpr uint32_t max_hops = 8;

/// Elements before the user's in a call: call_atom, type, key, hops.
inline constexpr size_t call_prefix = 4;

using call_atom = caf::atom_constant<caf::atom("fe_call")>;
using flush_atom = caf::atom_constant<caf::atom("fe_flush")>;
using ready_atom = caf::atom_constant<caf::atom("fe_ready")>;
using handoff_atom = caf::atom_constant<caf::atom("fe_handoff")>;
using handed_atom = caf::atom_constant<caf::atom("fe_handed")>;
using hello_atom = caf::atom_constant<caf::atom("fe_hello")>;
using bye_atom = caf::atom_constant<caf::atom("fe_bye")>;
using bye_ack_atom = caf::atom_constant<caf::atom("fe_bye_ack")>;
using stop_atom = caf::atom_constant<caf::atom("fe_stop")>;
using idle_atom = caf::atom_constant<caf::atom("fe_idle")>;
using load_atom = caf::atom_constant<caf::atom("fe_load")>;
using save_atom = caf::atom_constant<caf::atom("fe_save")>;
using acquire_atom = caf::atom_constant<caf::atom("fe_acquire")>;
using renew_atom = caf::atom_constant<caf::atom("fe_renew")>;
using release_atom = caf::atom_constant<caf::atom("fe_release")>;
using tick_atom = caf::atom_constant<caf::atom("fe_tick")>;
using shutdown_atom = caf::atom_constant<caf::atom("fe_shutdn")>;
using stats_atom = caf::atom_constant<caf::atom("fe_stats")>;

} // namespace ferry::detail::entities
