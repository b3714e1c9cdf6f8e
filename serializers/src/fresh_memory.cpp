#include "ferry/serializers/detail/fresh_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace ferry::serializers::detail {

void advise_huge_pages(void* p, size_t n) noexcept {
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  auto end = (reinterpret_cast<uintptr_t>(p) + n) & ~(page - 1);
  if (end > begin)
    static_cast<void>(
      madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE));
}

} // namespace ferry::serializers::detail
