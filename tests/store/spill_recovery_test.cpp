// Spilling cut short: a process that dies inside the store lock while it
// spills or restores an object (simulated by a forked child that edits the
// segment as the dying process would and exits holding the lock) leaves
// nothing behind once the next process recovers the segment: the object is
// rolled back to where it was, and no spill file outlives it.
#include "ferry/store/log.hpp"
#include "ferry/store/object_store.hpp"

#include "allocator.hpp"
#include "layout.hpp"
#include "spill_crash.hpp"
#include "spill_fixture.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

/// Leaves the spilled object `id` as a process that was restoring it would,
/// had it died after clearing `io_process` but before the state change: it
/// is registered, holds the handle it took for the I/O, and the slot is
/// `restoring` into a block at offset 0 with no `io_process`.
void leave_restore_without_io_process(segment_tables& t, object_id id) {
  using namespace ferry::store::detail;
  uint32_t process = 0;
  while (t.procs[process].pid != 0)
    ++process;
  t.procs[process].start_time = 1;
  t.procs[process].pid = static_cast<int32_t>(::getpid());
  auto& s = t.slot_of(id);
  uint32_t holder = 0;
  while (t.holders[holder].slot != npos32)
    ++holder;
  auto& h = t.holders[holder];
  h.process = process;
  h.handles = 1;
  h.tickets = 0;
  h.pins = 0;
  h.parked = 0;
  h.slot = static_cast<uint32_t>(&s - t.slots);
  s.block = 0;
  s.block_size = allocator::block_size_for(s.size);
  s.state = slot_state::restoring;
  s.io_process = npos32;
}

TEST_F(spill_test, RestoreCutShortBeforeItsStateChangeIsRolledBackOnRecovery) {
  // Arrange: a is spilled and referenced by a ticket only; a process
  // restoring it dies holding the lock with the slot `restoring` and no
  // `io_process` (what clearing it before the state change could leave).
  auto a = put_in_transit(1);
  {
    auto b = sut.put(pattern(big, 2)); // spills a
    ASSERT_TRUE(b) << render(b.error());
  }
  ASSERT_TRUE(summary().objects[0].spilled);
  ASSERT_NO_FATAL_FAILURE(
    die_holding_the_lock(cleanup.cfg.name, [&](segment_tables& t) {
      leave_restore_without_io_process(t, a.object);
    }));
  // Act: the next call finds the lock abandoned and recovers.
  auto previous = set_log_hook([](std::string_view) {});
  auto s = summary();
  set_log_hook(std::move(previous));
  // Assert: a is back in its file, the half-restored block is free.
  EXPECT_EQ(s.recoveries, 1u);
  ASSERT_EQ(s.objects.size(), 1u);
  EXPECT_TRUE(s.objects[0].spilled);
  EXPECT_EQ(s.objects[0].ref_count, 1u); // the ticket
  EXPECT_EQ(s.bytes_spilled, big);
  // (Otherwise the object stays `restoring` and redeem waits forever.)
  ASSERT_EQ(s.bytes_used, 0u);
  auto ra = sut.redeem(a);
  ASSERT_TRUE(ra) << render(ra.error());
  EXPECT_EQ(checksum(ra->bytes()), checksum(pattern(big, 1)));
  EXPECT_EQ(summary().bytes_spilled, 0u);
  EXPECT_EQ(spill_files(), 0u);
}

TEST_F(spill_test, ObjectFreedAfterACutShortRestoreLeavesNoSpillFileBehind) {
  // Arrange: as above, a restore of a cut short with no `io_process`.
  auto a = put_in_transit(1);
  {
    auto b = sut.put(pattern(big, 2)); // spills a
    ASSERT_TRUE(b) << render(b.error());
  }
  ASSERT_NO_FATAL_FAILURE(
    die_holding_the_lock(cleanup.cfg.name, [&](segment_tables& t) {
      leave_restore_without_io_process(t, a.object);
    }));
  // Act: cancelling the ticket recovers the segment and frees a.
  auto previous = set_log_hook([](std::string_view) {});
  auto cancelled = sut.cancel(a);
  set_log_hook(std::move(previous));
  // Assert
  EXPECT_FALSE(cancelled) << render(cancelled);
  auto s = summary();
  EXPECT_EQ(s.recoveries, 1u);
  EXPECT_TRUE(s.objects.empty());
  EXPECT_EQ(s.bytes_used, 0u);
  EXPECT_EQ(s.bytes_spilled, 0u);
  EXPECT_EQ(spill_files(), 0u);
}

TEST_F(spill_test, SpillCutShortWithoutItsProcessIsRolledBackOnRecovery) {
  // Arrange: a is resident and referenced by a ticket only; a process
  // spilling it died holding the lock with the slot `spilling`, no
  // `io_process`, and a partial temporary file.
  auto a = put_in_transit(1);
  std::filesystem::create_directories(cleanup.cfg.spill_directory);
  std::filesystem::permissions(cleanup.cfg.spill_directory,
                               std::filesystem::perms::owner_all);
  std::ofstream{cleanup.cfg.spill_directory + "/" + cleanup.cfg.name + "."
                + to_string(a.object) + ".spill.tmp"}
    << "partial";
  ASSERT_NO_FATAL_FAILURE(
    die_holding_the_lock(cleanup.cfg.name, [&](segment_tables& t) {
      auto& s = t.slot_of(a.object);
      s.state = ferry::store::detail::slot_state::spilling;
      s.io_process = ferry::store::detail::npos32;
    }));
  // Act: recovery, then an object that needs a's memory.
  auto previous = set_log_hook([](std::string_view) {});
  auto b = sut.put(pattern(big, 2));
  set_log_hook(std::move(previous));
  // Assert: a was sealed again, so it could be spilled for b.
  ASSERT_TRUE(b) << render(b.error());
  auto s = summary();
  EXPECT_EQ(s.recoveries, 1u);
  ASSERT_EQ(s.objects.size(), 2u);
  EXPECT_TRUE(s.objects[0].spilled);
  EXPECT_EQ(spill_files(), 1u); // a's spill file; the partial one is gone
  b->reset();
  auto ra = sut.redeem(a);
  ASSERT_TRUE(ra) << render(ra.error());
  EXPECT_EQ(checksum(ra->bytes()), checksum(pattern(big, 1)));
}

} // namespace
