// What every ferry sender of the bench shares: the message types each ferry
// process registers (the same names on both ends of a link), and the sealed
// store objects a sender sends as `shared_array<std::byte>`.
//
// The ferry rows (ferry_runs.cpp) and the broadcast rows
// (broadcast_runs.cpp) use both. A store object made here lives in the
// sending node's host store until its last handle goes.
#pragma once

#include "ferry/node.hpp"
#include "ferry/store/shared_array.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ferry::bench {

/// Registers the bench's message types (same names in every process).
/// `std::vector<std::byte>` and `uint64_t` are registered by every node.
void register_ferry_types(ferry::node_config& cfg);

/// Returns a sealed object of `size` bytes in `n`'s host store, each 4 KiB
/// page filled with the low byte of its index, as a shared array; nothing
/// when it cannot be made (`err` says why: no store, store full, ...).
std::optional<store::shared_array<std::byte>>
make_filled_array(ferry::node& n, uint64_t size, std::string& err);

} // namespace ferry::bench
