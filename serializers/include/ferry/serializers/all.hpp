// Everything of ferry::serializers: include this one header.
//
// See registry.hpp for the overview and an example.
#pragma once

#include "ferry/serializers/actor_handles.hpp"
#include "ferry/serializers/array_view.hpp"
#include "ferry/serializers/diagnostics.hpp"
#include "ferry/serializers/errc.hpp"
#include "ferry/serializers/family.hpp"
#include "ferry/serializers/frame.hpp"
#include "ferry/serializers/member_names.hpp"
#include "ferry/serializers/options.hpp"
#include "ferry/serializers/payload.hpp"
#include "ferry/serializers/reflect.hpp"
#include "ferry/serializers/registry.hpp"
#include "ferry/serializers/separate.hpp"
#include "ferry/serializers/shape.hpp"
#include "ferry/serializers/wrap.hpp"
