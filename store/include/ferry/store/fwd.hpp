// Forward declarations of ferry::store.
//
// Include this header where a declaration is enough; it pulls in no CAF or
// Boost header.
#pragma once

#include <cstdint>

namespace ferry::store {

enum class errc : uint8_t;
enum class object_id : uint64_t;

struct store_config;
struct transfer_ticket;
struct ref_wire;
struct holder_info;
struct object_info;
struct process_info;
struct memory_summary;
struct store_totals;

class object_store;
class object_ref;
class parked_ref;
class object_builder;
class in_band_scope;
class ref_serialization_error;

template <class T>
class shared_array;

namespace detail {

class store_impl;

} // namespace detail

} // namespace ferry::store
