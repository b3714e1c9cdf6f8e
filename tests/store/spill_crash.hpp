// Crashes inside a store's lock, made on purpose: a forked child maps the
// store's segment, takes its robust mutex, edits the tables as a process
// dying at that point would leave them, and exits holding the lock. The next
// process to lock the store gets EOWNERDEAD and recovers the segment. For
// the spilling tests (spill_test.cpp, spill_recovery_test.cpp); each call
// forks, so call it from the test's thread only.
#pragma once

#include "ferry/store/object_id.hpp"

#include "layout.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace ferry::store::test {

/// The tables of a store segment as a process mapping it sees them.
struct segment_tables {
  ferry::store::detail::segment_header& hdr;
  ferry::store::detail::process_entry* procs;
  ferry::store::detail::slot_entry* slots;
  ferry::store::detail::holder_entry* holders;

  /// Returns the slot of object `id`.
  ferry::store::detail::slot_entry& slot_of(object_id id) {
    auto mask = (uint64_t{1} << hdr.slot_bits) - 1;
    return slots[static_cast<uint64_t>(id) & mask];
  }
};

/// Forks a child that maps store `name`, takes its lock, lets `edit` leave
/// the tables as a process crashing at that point would, and exits holding
/// the lock: the next process to lock the store gets EOWNERDEAD from the
/// robust mutex and recovers the segment.
template <class Edit>
void die_holding_the_lock(const std::string& name, Edit edit) {
  auto child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto fd = ::shm_open(("/" + name).c_str(), O_RDWR, 0);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0)
      ::_exit(1);
    auto size = static_cast<size_t>(st.st_size);
    auto* mem = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                       0);
    if (mem == MAP_FAILED)
      ::_exit(2);
    auto* base = static_cast<std::byte*>(mem);
    auto& hdr = *static_cast<ferry::store::detail::segment_header*>(mem);
    if (::pthread_mutex_lock(&hdr.mutex) != 0)
      ::_exit(3);
    segment_tables tables{
      hdr,
      reinterpret_cast<ferry::store::detail::process_entry*>(
        base + hdr.process_offset),
      reinterpret_cast<ferry::store::detail::slot_entry*>(base
                                                          + hdr.slot_offset),
      reinterpret_cast<ferry::store::detail::holder_entry*>(
        base + hdr.holder_offset)};
    edit(tables);
    ::_exit(0); // with the lock held
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

} // namespace ferry::store::test
