// The atoms of a link's helper actors.
#pragma once

#include <caf/atom.hpp>

namespace ferry::detail {

/// Tells a link's flusher to send the batch its outbox holds.
using flush_atom = caf::atom_constant<caf::atom("ferry_fls")>;

/// Tells a puller that messages are queued.
using pull_atom = caf::atom_constant<caf::atom("ferry_pull")>;

} // namespace ferry::detail
