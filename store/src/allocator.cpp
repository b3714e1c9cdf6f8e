// The segregated-fit allocator; see allocator.hpp.
#include "allocator.hpp"

#include <algorithm>
#include <bit>

namespace ferry::store::detail {

namespace {

uint32_t floor_log2(uint64_t x) noexcept {
  return 63u - static_cast<uint32_t>(std::countl_zero(x));
}

} // namespace

void allocator::clear() noexcept {
  state_.used = 0;
  state_.fl_bitmap = 0;
  for (uint32_t f = 0; f < fl_count; ++f) {
    state_.sl_bitmap[f] = 0;
    for (uint32_t s = 0; s < sl_count; ++s)
      state_.heads[f][s] = npos64;
  }
}

void allocator::init(uint64_t capacity) noexcept {
  state_.capacity = capacity;
  clear();
  auto& first = at(0);
  first = block_header{};
  first.size = capacity;
  first.prev_size = 0;
  first.free = 1;
  insert(0);
}

uint64_t allocator::block_size_for(uint64_t payload) noexcept {
  constexpr auto largest = ~(block_align - 1);
  if (payload > largest - block_header_size)
    return largest;
  auto size =
    (payload + block_header_size + block_align - 1) & ~(block_align - 1);
  return std::max(size, min_block_size);
}

void allocator::mapping(uint64_t size, uint32_t& fl, uint32_t& sl) noexcept {
  if (size < small_block) {
    fl = 0;
    sl = static_cast<uint32_t>(size >> align_shift);
    return;
  }
  auto t = floor_log2(size);
  sl = static_cast<uint32_t>(size >> (t - sl_bits)) - sl_count;
  fl = t - (sl_bits + static_cast<uint32_t>(align_shift)) + 1;
}

void allocator::insert(uint64_t offset) noexcept {
  auto& b = at(offset);
  uint32_t fl = 0;
  uint32_t sl = 0;
  mapping(b.size, fl, sl);
  auto& head = state_.heads[fl][sl];
  b.prev_free = npos64;
  b.next_free = head;
  if (head != npos64)
    at(head).prev_free = offset;
  head = offset;
  state_.fl_bitmap |= uint64_t{1} << fl;
  state_.sl_bitmap[fl] |= 1u << sl;
}

void allocator::remove(uint64_t offset) noexcept {
  auto& b = at(offset);
  if (b.prev_free != npos64) {
    at(b.prev_free).next_free = b.next_free;
  } else {
    uint32_t fl = 0;
    uint32_t sl = 0;
    mapping(b.size, fl, sl);
    state_.heads[fl][sl] = b.next_free;
    if (b.next_free == npos64) {
      state_.sl_bitmap[fl] &= ~(1u << sl);
      if (state_.sl_bitmap[fl] == 0)
        state_.fl_bitmap &= ~(uint64_t{1} << fl);
    }
  }
  if (b.next_free != npos64)
    at(b.next_free).prev_free = b.prev_free;
  b.next_free = npos64;
  b.prev_free = npos64;
}

std::pair<uint64_t, uint64_t> allocator::allocate(uint64_t payload) noexcept {
  if (payload > state_.capacity)
    return {npos64, 0};
  auto need = block_size_for(payload);
  if (need > state_.capacity)
    return {npos64, 0};
  // Round up to the next bin boundary: every block in the bin found then
  // fits, so taking the bin's first block is O(1).
  auto rounded = need;
  if (need >= small_block)
    rounded += (uint64_t{1} << (floor_log2(need) - sl_bits)) - 1;
  uint32_t fl = 0;
  uint32_t sl = 0;
  mapping(rounded, fl, sl);
  uint64_t found = npos64;
  if (fl < fl_count) {
    auto sl_map = state_.sl_bitmap[fl] & (~0u << sl);
    if (sl_map == 0 && fl + 1 < fl_count) {
      auto fl_map = state_.fl_bitmap & (~uint64_t{0} << (fl + 1));
      if (fl_map != 0) {
        fl = static_cast<uint32_t>(std::countr_zero(fl_map));
        sl_map = state_.sl_bitmap[fl];
      }
    }
    if (sl_map != 0) {
      sl = static_cast<uint32_t>(std::countr_zero(sl_map));
      found = state_.heads[fl][sl];
    }
  }
  if (found == npos64) {
    // The bin of `need` itself may still hold a block that fits exactly
    // (e.g. one large object in a store sized for it): scan it.
    mapping(need, fl, sl);
    if (fl < fl_count) {
      for (auto i = state_.heads[fl][sl]; i != npos64; i = at(i).next_free) {
        if (at(i).size >= need) {
          found = i;
          break;
        }
      }
    }
  }
  if (found == npos64)
    return {npos64, 0};
  remove(found);
  auto& b = at(found);
  b.free = 0;
  if (b.size - need >= min_block_size) {
    auto rest = found + need;
    auto& r = at(rest);
    r = block_header{};
    r.size = b.size - need;
    r.prev_size = need;
    r.free = 1;
    auto after = rest + r.size;
    if (after < state_.capacity)
      at(after).prev_size = r.size;
    b.size = need;
    insert(rest);
  }
  state_.used += b.size;
  return {found, b.size};
}

void allocator::deallocate(uint64_t offset) noexcept {
  auto* b = &at(offset);
  state_.used -= b->size;
  b->free = 1;
  // Merge with the next block.
  auto next = offset + b->size;
  if (next < state_.capacity && at(next).free) {
    remove(next);
    b->size += at(next).size;
  }
  // Merge with the previous block.
  if (b->prev_size != 0) {
    auto prev = offset - b->prev_size;
    if (at(prev).free) {
      remove(prev);
      at(prev).size += b->size;
      offset = prev;
      b = &at(prev);
    }
  }
  auto after = offset + b->size;
  if (after < state_.capacity)
    at(after).prev_size = b->size;
  insert(offset);
}

uint64_t allocator::largest_free_payload() const noexcept {
  if (state_.fl_bitmap == 0)
    return 0;
  auto fl = floor_log2(state_.fl_bitmap);
  auto sl = 31u - static_cast<uint32_t>(std::countl_zero(state_.sl_bitmap[fl]));
  uint64_t best = 0;
  for (auto i = state_.heads[fl][sl]; i != npos64; i = at(i).next_free)
    best = std::max(best, at(i).size);
  return best > block_header_size ? best - block_header_size : 0;
}

void allocator::rebuild(
  std::vector<std::pair<uint64_t, uint64_t>> used) noexcept {
  std::sort(used.begin(), used.end());
  clear();
  uint64_t cursor = 0;
  uint64_t prev_size = 0;
  auto add_free = [&](uint64_t from, uint64_t to) {
    auto& f = at(from);
    f = block_header{};
    f.size = to - from;
    f.prev_size = prev_size;
    f.free = 1;
    insert(from);
    prev_size = f.size;
  };
  for (auto [offset, size] : used) {
    if (offset < cursor)
      continue; // overlapping entries cannot happen; never trust it blindly
    if (offset > cursor)
      add_free(cursor, offset);
    auto& b = at(offset);
    b = block_header{};
    b.size = size;
    b.prev_size = prev_size;
    b.free = 0;
    b.next_free = npos64;
    b.prev_free = npos64;
    state_.used += size;
    prev_size = size;
    cursor = offset + size;
  }
  if (cursor < state_.capacity)
    add_free(cursor, state_.capacity);
}

} // namespace ferry::store::detail
