// clock: the framework's name for the node's clock (ferry/clock.hpp).
#pragma once

#include "ferry/clock.hpp"

namespace ferry::detail {

using ferry::clock;
using ferry::manual_clock;

} // namespace ferry::detail
