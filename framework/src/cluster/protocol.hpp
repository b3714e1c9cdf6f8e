// The messages cluster daemons exchange, on ordinary ferry links.
//
// Each node's daemon is exposed under `daemon_name`; a node reaches another
// node's daemon with `node::remote_actor(host, port, daemon_name)`. The
// messages are made of the types every node registers (atoms, strings,
// 64-bit integers, bytes, actor handles), so any family carries them; a
// view travels as the bytes of `cluster::encode` (cluster/gossip.hpp):
//
//   join_atom, cluster, protocol, address, name, uid, daemon
//       -> welcome_atom, view            (or an error: errc::cluster_refused)
//   gossip_atom, cluster, view, daemon   (one way; the receiver sends its own
//                                         view back when the sender's was
//                                         older)
//   heartbeat_atom, uid, daemon          (one way, to a watched member)
//   heartbeat_ack_atom, uid              (one way, the watched member's
//                                         answer)
//   reg_update_atom, from, id, key, actor  (one way: member `from` has its
//                                         entry number `id`, `actor` under
//                                         `key`; to every member, and all
//                                         entries to a member newly reached)
//   reg_remove_atom, from, id            (one way: that entry is gone)
//   leave_atom, register_atom, find_atom, subscribe_atom
//                                        (from the node's own API; a
//                                         member asked to leave by another
//                                         gets a bare leave_atom too)
//   leave_atom, address -> bool          (from the node's HTTP endpoint:
//                                         asks the member at `address` to
//                                         leave, this node or another)
//   down_atom, address -> bool           (from the node's API or the
//                                         `ferry-cluster` tool: downs the
//                                         member at `address`)
//   view_atom -> view                    (the `ferry-cluster` tool: this
//                                         node's view, encoded)
//   figures_atom -> string               (from another member: this node's
//                                         figures as the dashboard's JSON
//                                         snapshot)
//   figures_atom, address -> string      (from the node's HTTP endpoint:
//                                         the snapshot of the member at
//                                         `address`, asked of its daemon;
//                                         empty: no member there)
//
// Thread-safety: constants.
#pragma once

#include <caf/atom.hpp>

#include <cstdint>

namespace ferry::detail::cluster {

/// The name under which every node exposes its cluster daemon.
inline constexpr const char* daemon_name = "ferry.cluster";

/// The version of these messages; a node of another version is refused.
inline constexpr uint64_t protocol_version = 1;

using join_atom = caf::atom_constant<caf::atom("fc_join")>;
using welcome_atom = caf::atom_constant<caf::atom("fc_welcome")>;
using gossip_atom = caf::atom_constant<caf::atom("fc_gossip")>;
using heartbeat_atom = caf::atom_constant<caf::atom("fc_hb")>;
using heartbeat_ack_atom = caf::atom_constant<caf::atom("fc_hb_ack")>;
using leave_atom = caf::atom_constant<caf::atom("fc_leave")>;
using down_atom = caf::atom_constant<caf::atom("fc_down")>;
using tick_atom = caf::atom_constant<caf::atom("fc_tick")>;
using dial_atom = caf::atom_constant<caf::atom("fc_dial")>;
using dialed_atom = caf::atom_constant<caf::atom("fc_dialed")>;
using register_atom = caf::atom_constant<caf::atom("fc_reg")>;
using find_atom = caf::atom_constant<caf::atom("fc_find")>;
using subscribe_atom = caf::atom_constant<caf::atom("fc_sub")>;
using reg_update_atom = caf::atom_constant<caf::atom("fc_regupd")>;
using reg_remove_atom = caf::atom_constant<caf::atom("fc_regrem")>;
using view_atom = caf::atom_constant<caf::atom("fc_view")>;
using figures_atom = caf::atom_constant<caf::atom("fc_figs")>;

} // namespace ferry::detail::cluster
