// Includes the whole public API of ferry::store.
#pragma once

#include "ferry/store/errc.hpp"
#include "ferry/store/fwd.hpp"
#include "ferry/store/import_scope.hpp"
#include "ferry/store/in_band_scope.hpp"
#include "ferry/store/log.hpp"
#include "ferry/store/memory_summary.hpp"
#include "ferry/store/object_builder.hpp"
#include "ferry/store/object_id.hpp"
#include "ferry/store/object_ref.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/parked_ref.hpp"
#include "ferry/store/shared_array.hpp"
#include "ferry/store/store_config.hpp"
#include "ferry/store/store_totals.hpp"
