// Forward declarations of ferry::serializers.
#pragma once

#include <cstdint>

namespace ferry::serializers {

enum class errc : uint8_t;

class frame;
class family;
class function_family;
class registry;

struct context;
struct limits;
struct payload_header;
struct payload;
struct encode_options;
struct decode_options;
struct serializability_report;

template <class T>
class array_view;

template <class T>
class separate;

template <class T, class Codec>
class wrapped;

} // namespace ferry::serializers
