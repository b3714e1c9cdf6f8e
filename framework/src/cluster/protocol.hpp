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
//   leave_atom                           (from the node's own API)
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
using watch_atom = caf::atom_constant<caf::atom("fc_watch")>;

} // namespace ferry::detail::cluster
