// Segregated-fit allocator over the data region (private).
//
// Free blocks sit in bins indexed by two levels (power of two, then 16
// linear steps), found through bitmaps in O(1): TLSF's scheme (a request is
// rounded up to the next bin, so any block found there fits; only when that
// fails is the request's own bin scanned for a block that fits exactly,
// e.g. one object filling the whole store). Freed blocks
// coalesce with free neighbours (boundary tags: each header knows the size
// of the block before it), so the memory of a freed object is reused by the
// next one that fits, and it stays faulted in. All state lives in the segment
// (`allocator_state` and the block headers) as offsets. Not synchronized:
// the caller holds the store's lock.
#pragma once

#include "layout.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ferry::store::detail {

class allocator {
public:
  allocator(allocator_state& state, std::byte* data) noexcept
    : state_(state),
      data_(data) {
    // nop
  }

  /// Formats the data region as one free block.
  /// REQUIRES: capacity is a multiple of 64, at least `min_block_size` and
  /// at most `max_capacity`.
  void init(uint64_t capacity) noexcept;

  /// Returns the block size needed for a payload of `size` bytes. Saturates
  /// at the largest multiple of 64 (more than any store holds) instead of
  /// wrapping around for payloads near 2^64.
  static uint64_t block_size_for(uint64_t payload) noexcept;

  /// Allocates a block for `payload` bytes; returns {offset, block size} or
  /// {npos64, 0} if nothing fits.
  std::pair<uint64_t, uint64_t> allocate(uint64_t payload) noexcept;

  /// Frees the block at `offset`.
  void deallocate(uint64_t offset) noexcept;

  /// Returns the largest payload that fits in one free block.
  uint64_t largest_free_payload() const noexcept;

  /// Rebuilds bins and headers from the used blocks, given as
  /// {offset, size} pairs in any order.
  void rebuild(std::vector<std::pair<uint64_t, uint64_t>> used) noexcept;

  /// Returns a pointer to the payload of the block at `offset`.
  std::byte* payload(uint64_t offset) const noexcept {
    return data_ + offset + block_header_size;
  }

private:
  block_header& at(uint64_t offset) const noexcept {
    return *reinterpret_cast<block_header*>(data_ + offset);
  }

  static void mapping(uint64_t size, uint32_t& fl, uint32_t& sl) noexcept;

  /// Empties every bin and sets `used` to 0 (the block headers are left).
  void clear() noexcept;

  void insert(uint64_t offset) noexcept;

  void remove(uint64_t offset) noexcept;

  allocator_state& state_;
  std::byte* data_;
};

} // namespace ferry::store::detail
