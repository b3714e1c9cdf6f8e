// Registration of ferry's wire types with CAF.
//
// Both ends of a link must register the same types under the same names:
// CAF writes each message's type names on the wire and drops what it cannot
// name. `node_config` registers them when it is built; a plain CAF system
// that speaks ferry's wire format (a test of hostile peers, a fuzzer) calls
// `register_wire_types` itself.
#pragma once

#include <caf/actor_system_config.hpp>

namespace ferry::detail {

/// Registers every wire type with CAF under its "ferry.*" name.
void register_wire_types(caf::actor_system_config& cfg);

} // namespace ferry::detail
