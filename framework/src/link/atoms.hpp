// The atoms of a link's helper actors.
#pragma once

#include <caf/atom.hpp>

namespace ferry::detail {

/// Tells a link's flusher to send the batch its outbox holds.
using flush_atom = caf::atom_constant<caf::atom("ferry_fls")>;

/// Tells a puller that messages are queued.
using pull_atom = caf::atom_constant<caf::atom("ferry_pull")>;

/// Brings a puller the answer to one of its chunk requests.
using chunk_atom = caf::atom_constant<caf::atom("ferry_chnk")>;

/// Tells a puller that one of its chunk requests timed out.
using chunk_timeout_atom = caf::atom_constant<caf::atom("ferry_cexp")>;

} // namespace ferry::detail
