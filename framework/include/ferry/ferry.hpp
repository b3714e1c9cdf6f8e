// Includes what a program using ferry needs: nodes and their configuration,
// links and their counters, node events, ferry's error codes and `render`,
// the host store's handles, and the serializer registry for registering
// families and serializers. CAF's own headers (actors, behaviors, requests)
// come with it as far as these need them; include <caf/all.hpp> for the
// rest of CAF.
#pragma once

#include "ferry/cluster.hpp"
#include "ferry/errc.hpp"
#include "ferry/fwd.hpp"
#include "ferry/link_config.hpp"
#include "ferry/link_stats.hpp"
#include "ferry/node.hpp"
#include "ferry/node_config.hpp"
#include "ferry/node_events.hpp"

#include "ferry/serializers/errc.hpp"
#include "ferry/serializers/registry.hpp"

#include "ferry/store/errc.hpp"
#include "ferry/store/object_ref.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/parked_ref.hpp"
#include "ferry/store/shared_array.hpp"
