// Unit tests of capacity and spilling: objects referenced only by parked
// references, tickets or pins go to disk when memory runs out and come back
// on get/redeem. Crashes inside the store lock are simulated by a forked
// child that edits the segment as a dying process would and exits holding
// the lock.
#include "ferry/store/log.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/parked_ref.hpp"

#include "allocator.hpp"
#include "layout.hpp"
#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

constexpr size_t big = 600 * 1024;

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

class spill_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("spill");
    configure(cleanup.cfg);
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    sut = std::move(*attached);
  }

  virtual void configure(store_config&) {
    // defaults
  }

  /// Puts an object and returns a ticket as its only reference.
  transfer_ticket put_in_transit(uint32_t seed) {
    auto ref = sut.put(pattern(big, seed));
    EXPECT_TRUE(ref) << render(ref.error());
    if (!ref)
      return {};
    auto ticket = ref->export_in_band();
    EXPECT_TRUE(ticket);
    return ticket ? *ticket : transfer_ticket{};
  }

  size_t spill_files() {
    size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator{
           cleanup.cfg.spill_directory, ec};
         !ec && it != std::filesystem::directory_iterator{};
         it.increment(ec))
      ++n;
    return n;
  }

  ferry::store::memory_summary summary() {
    auto result = sut.memory_summary();
    EXPECT_TRUE(result);
    return result ? *result : ferry::store::memory_summary{};
  }

  store_cleanup cleanup;
  object_store sut;
};

TEST_F(spill_test, InTransitObjectIsSpilledWhenMemoryRunsOut) {
  auto a = put_in_transit(1);
  auto b = sut.put(pattern(big, 2));
  ASSERT_TRUE(b) << render(b.error());
  auto s = summary();
  ASSERT_EQ(s.objects.size(), 2u);
  EXPECT_TRUE(s.objects[0].spilled);
  EXPECT_FALSE(s.objects[1].spilled);
  EXPECT_EQ(s.bytes_spilled, big);
  EXPECT_EQ(spill_files(), 1u);
  auto file = cleanup.cfg.spill_directory + "/" + cleanup.cfg.name + "."
              + to_string(a.object) + ".spill";
  EXPECT_EQ(std::filesystem::file_size(file), big);
}

TEST_F(spill_test, SpilledObjectIsRestoredTransparently) {
  auto a = put_in_transit(1);
  auto b = put_in_transit(2); // spills a
  ASSERT_TRUE(summary().objects[0].spilled);
  auto restored = sut.redeem(a); // spills b, restores a
  ASSERT_TRUE(restored) << render(restored.error());
  EXPECT_EQ(checksum(restored->bytes()), checksum(pattern(big, 1)));
  auto s = summary();
  EXPECT_FALSE(s.objects[0].spilled);
  EXPECT_TRUE(s.objects[1].spilled);
  auto got = sut.get(b.object); // needs a's memory, but a is viewed
  ASSERT_FALSE(got);
  EXPECT_EQ(code_of(got.error()), errc::store_full);
  restored->reset(); // a is freed
  got = sut.get(b.object);
  ASSERT_TRUE(got) << render(got.error());
  EXPECT_EQ(checksum(got->bytes()), checksum(pattern(big, 2)));
  EXPECT_EQ(spill_files(), 0u); // restored objects leave no file behind
}

TEST_F(spill_test, SpillFileIsDeletedWhenTheObjectIsFreed) {
  auto a = put_in_transit(1);
  auto b = sut.put(pattern(big, 2));
  ASSERT_TRUE(b);
  ASSERT_EQ(spill_files(), 1u);
  EXPECT_FALSE(sut.cancel(a));
  EXPECT_EQ(spill_files(), 0u);
  EXPECT_EQ(summary().bytes_spilled, 0u);
}

TEST_F(spill_test, LiveHandlesAreNeverSpilled) {
  auto a = sut.put(pattern(big, 1));
  ASSERT_TRUE(a);
  auto b = sut.put(pattern(big, 2));
  ASSERT_FALSE(b);
  EXPECT_EQ(code_of(b.error()), errc::store_full);
  EXPECT_NE(text_of(b.error()).find("no object can be spilled"),
            std::string::npos)
    << text_of(b.error());
  EXPECT_EQ(checksum(a->bytes()), checksum(pattern(big, 1)));
  EXPECT_EQ(spill_files(), 0u);
}

TEST_F(spill_test, PinnedObjectsAreSpillableAndComeBackOnGet) {
  auto a = sut.put(pattern(big, 1));
  ASSERT_TRUE(a);
  auto id = a->id();
  auto previous = set_log_hook([](std::string_view) {});
  auto wire = to_wire(*a); // out of band: pins
  set_log_hook(std::move(previous));
  ASSERT_TRUE(wire);
  a->reset();
  auto b = sut.put(pattern(big, 2));
  ASSERT_TRUE(b) << render(b.error());
  EXPECT_TRUE(summary().objects[0].spilled);
  b->reset();
  auto again = sut.get(id);
  ASSERT_TRUE(again) << render(again.error());
  EXPECT_EQ(checksum(again->bytes()), checksum(pattern(big, 1)));
  EXPECT_FALSE(sut.unpin(id));
}

TEST_F(spill_test, ParkedObjectIsSpilledAndComesBackOnGet) {
  // Arrange: a referenced object nobody reads right now.
  auto a = sut.put(pattern(big, 1));
  ASSERT_TRUE(a);
  auto parked = park(*a);
  ASSERT_TRUE(parked) << render(parked.error());
  a->reset();
  // Act: the next object needs its memory.
  auto b = sut.put(pattern(big, 2));
  // Assert
  ASSERT_TRUE(b) << render(b.error());
  auto s = summary();
  ASSERT_EQ(s.objects.size(), 2u);
  EXPECT_TRUE(s.objects[0].spilled);
  EXPECT_EQ(s.objects[0].ref_count, 1u);
  EXPECT_EQ(spill_files(), 1u);
  // While b is viewed there is no room to restore a.
  auto again = parked->get();
  ASSERT_FALSE(again);
  EXPECT_EQ(code_of(again.error()), errc::store_full);
  b->reset();
  again = parked->get();
  ASSERT_TRUE(again) << render(again.error());
  EXPECT_EQ(checksum(again->bytes()), checksum(pattern(big, 1)));
  EXPECT_EQ(again->ref_count(), 2u); // the handle and the parked reference
  EXPECT_EQ(spill_files(), 0u);
}

TEST_F(spill_test, LastParkedReferenceFreesTheObjectAndItsSpillFile) {
  // Arrange
  auto a = sut.put(pattern(big, 1));
  ASSERT_TRUE(a);
  auto parked = park(*a);
  ASSERT_TRUE(parked);
  auto copy = *parked;
  EXPECT_EQ(a->ref_count(), 3u);
  a->reset();
  auto b = sut.put(pattern(big, 2)); // spills a
  ASSERT_TRUE(b) << render(b.error());
  ASSERT_EQ(spill_files(), 1u);
  // Act
  parked->reset();
  auto still = summary().objects.size();
  copy.reset();
  // Assert
  EXPECT_EQ(still, 2u);
  EXPECT_EQ(summary().objects.size(), 1u);
  EXPECT_EQ(spill_files(), 0u);
  EXPECT_EQ(summary().bytes_spilled, 0u);
}

TEST_F(spill_test, ParkingAnEmptyHandleFails) {
  auto parked = park(object_ref{});
  ASSERT_FALSE(parked);
  EXPECT_EQ(code_of(parked.error()), errc::invalid_handle);
  parked_ref empty;
  auto got = empty.get();
  ASSERT_FALSE(got);
  EXPECT_EQ(code_of(got.error()), errc::invalid_handle);
}

TEST_F(spill_test, LeastRecentlyUsedObjectIsSpilledFirst) {
  std::vector<transfer_ticket> tickets;
  for (uint32_t i = 0; i < 4; ++i) {
    auto ref = sut.put(pattern(200 * 1024, i));
    ASSERT_TRUE(ref);
    auto ticket = ref->export_in_band();
    ASSERT_TRUE(ticket);
    tickets.push_back(*ticket);
  }
  // Touch object 0, so object 1 is now the least recently used.
  auto touched = sut.redeem(tickets[0]);
  ASSERT_TRUE(touched);
  auto ticket0 = touched->export_in_band();
  ASSERT_TRUE(ticket0);
  touched->reset();
  auto more = sut.put(pattern(300 * 1024, 9));
  ASSERT_TRUE(more) << render(more.error());
  auto s = summary();
  ASSERT_EQ(s.objects.size(), 5u);
  EXPECT_FALSE(s.objects[0].spilled);
  EXPECT_TRUE(s.objects[1].spilled);
}

TEST_F(spill_test, ObjectNearTwoToThe64FailsWithStoreFullAndSpillsNothing) {
  // Arrange: a spillable object, and a size that used to wrap around when
  // rounded up to a block (so every spillable object went to disk first).
  auto a = put_in_transit(1);
  uint64_t huge = UINT64_MAX - 10;
  // Act
  auto result = sut.create(huge);
  // Assert
  ASSERT_FALSE(result);
  EXPECT_EQ(code_of(result.error()), errc::store_full);
  auto text = text_of(result.error());
  EXPECT_NE(text.find("object of " + std::to_string(huge)
                      + " bytes: the object is larger than the store"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("capacity " + std::to_string(sut.capacity())),
            std::string::npos)
    << text;
  auto s = summary();
  EXPECT_EQ(s.bytes_spilled, 0u);
  EXPECT_FALSE(s.objects[0].spilled);
  EXPECT_EQ(spill_files(), 0u);
  EXPECT_FALSE(sut.cancel(a));
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

/// A second store named after the first (`<name>.b`), spilling into the
/// same directory, with one object spilled.
class spill_shared_directory_test : public spill_test {
protected:
  void SetUp() override {
    spill_test::SetUp();
    if (HasFatalFailure())
      return;
    other_cleanup.cfg = cleanup.cfg;
    other_cleanup.cfg.name = cleanup.cfg.name + ".b";
    auto attached = object_store::attach(other_cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    other = std::move(*attached);
    auto ref = other.put(pattern(big, 7));
    ASSERT_TRUE(ref) << render(ref.error());
    auto ticket = ref->export_in_band();
    ASSERT_TRUE(ticket);
    other_ticket = *ticket;
    ref->reset();
    auto spills = other.put(pattern(big, 8));
    ASSERT_TRUE(spills) << render(spills.error());
    other_file = cleanup.cfg.spill_directory + "/" + other_cleanup.cfg.name
                 + "." + to_string(other_ticket.object) + ".spill";
    ASSERT_TRUE(std::filesystem::exists(other_file));
  }

  store_cleanup other_cleanup;
  object_store other;
  transfer_ticket other_ticket;
  std::string other_file;
};

TEST_F(spill_shared_directory_test,
       RemovingAStoreKeepsTheFilesOfAStoreNamedAfterIt) {
  // Arrange: this store has a spill file too.
  auto a = put_in_transit(1);
  auto b = sut.put(pattern(big, 2)); // spills a
  ASSERT_TRUE(b) << render(b.error());
  auto own_file = cleanup.cfg.spill_directory + "/" + cleanup.cfg.name + "."
                  + to_string(a.object) + ".spill";
  ASSERT_TRUE(std::filesystem::exists(own_file));
  // Act
  auto removed = object_store::remove(cleanup.cfg.name);
  // Assert: only this store's files went.
  EXPECT_FALSE(removed) << render(removed);
  EXPECT_FALSE(std::filesystem::exists(own_file));
  EXPECT_TRUE(std::filesystem::exists(other_file));
  auto restored = other.redeem(other_ticket);
  ASSERT_TRUE(restored) << render(restored.error());
  EXPECT_EQ(checksum(restored->bytes()), checksum(pattern(big, 7)));
}

TEST_F(spill_shared_directory_test, RecoveryKeepsTheFilesOfAStoreNamedAfterIt) {
  // Arrange: a file of this store that no object owns, and a process that
  // died holding this store's lock.
  auto stray = cleanup.cfg.spill_directory + "/" + cleanup.cfg.name
               + ".12345.spill";
  std::ofstream{stray} << "stray";
  ASSERT_NO_FATAL_FAILURE(
    die_holding_the_lock(cleanup.cfg.name, [](segment_tables&) {}));
  // Act: recovery cleans this store's spill files.
  auto previous = set_log_hook([](std::string_view) {});
  auto s = summary();
  set_log_hook(std::move(previous));
  // Assert: the stray file went, the other store's file stayed.
  EXPECT_EQ(s.recoveries, 1u);
  EXPECT_FALSE(std::filesystem::exists(stray));
  EXPECT_TRUE(std::filesystem::exists(other_file));
  auto restored = other.redeem(other_ticket);
  ASSERT_TRUE(restored) << render(restored.error());
  EXPECT_EQ(checksum(restored->bytes()), checksum(pattern(big, 7)));
}

class spill_off_test : public spill_test {
  void configure(store_config& cfg) override {
    cfg.spilling = false;
  }
};

TEST_F(spill_off_test, NothingIsSpilledWhenSpillingIsOff) {
  auto a = put_in_transit(1);
  auto b = sut.put(pattern(big, 2));
  ASSERT_FALSE(b);
  EXPECT_EQ(code_of(b.error()), errc::store_full);
  EXPECT_NE(text_of(b.error()).find("spilling is off"), std::string::npos);
  EXPECT_EQ(spill_files(), 0u);
  EXPECT_FALSE(sut.cancel(a));
}

class spill_bound_test : public spill_test {
  void configure(store_config& cfg) override {
    cfg.spill_limit = 700 * 1024;
  }
};

TEST_F(spill_bound_test, FullSpillDirectoryFailsWithStoreFull) {
  auto a = put_in_transit(1);
  auto b = put_in_transit(2); // spills a: 600 KiB of 700 KiB
  auto c = sut.put(pattern(big, 3));
  ASSERT_FALSE(c);
  EXPECT_EQ(code_of(c.error()), errc::store_full);
  auto text = text_of(c.error());
  EXPECT_NE(text.find("bound is reached"), std::string::npos) << text;
  EXPECT_NE(text.find("spilled 614400 of 716800 bytes"), std::string::npos)
    << text;
  // Nothing was damaged: both objects come back intact.
  auto rb = sut.redeem(b);
  ASSERT_TRUE(rb);
  EXPECT_EQ(checksum(rb->bytes()), checksum(pattern(big, 2)));
  rb->reset();
  auto ra = sut.redeem(a);
  ASSERT_TRUE(ra) << render(ra.error());
  EXPECT_EQ(checksum(ra->bytes()), checksum(pattern(big, 1)));
}

TEST_F(spill_bound_test, ParkedObjectCannotComeBackWhileTheSpillBoundIsReached) {
  // Arrange: a is spilled (600 KiB of 700 KiB); b, in transit, fills memory.
  auto a = sut.put(pattern(big, 1));
  ASSERT_TRUE(a);
  auto parked = park(*a);
  ASSERT_TRUE(parked) << render(parked.error());
  a->reset();
  auto b = put_in_transit(2);
  ASSERT_TRUE(summary().objects[0].spilled);
  // Act: restoring a needs b's memory, but b does not fit under the bound
  // (a's file counts until a is back).
  auto again = parked->get();
  // Assert
  ASSERT_FALSE(again);
  EXPECT_EQ(code_of(again.error()), errc::store_full);
  auto text = text_of(again.error());
  EXPECT_NE(text.find("bound is reached"), std::string::npos) << text;
  // Once b is gone there is room: a comes back intact.
  ASSERT_FALSE(sut.cancel(b));
  again = parked->get();
  ASSERT_TRUE(again) << render(again.error());
  EXPECT_EQ(checksum(again->bytes()), checksum(pattern(big, 1)));
}

class spill_unwritable_test : public spill_test {
  void configure(store_config& cfg) override {
    cfg.spill_directory = "/proc/ferry-cannot-write-here";
  }
};

TEST_F(spill_unwritable_test, UnwritableSpillDirectoryFailsWithSpillFailed) {
  auto a = put_in_transit(1);
  auto b = sut.put(pattern(big, 2));
  ASSERT_FALSE(b);
  EXPECT_EQ(code_of(b.error()), errc::spill_failed);
  auto ra = sut.redeem(a);
  ASSERT_TRUE(ra);
  EXPECT_EQ(checksum(ra->bytes()), checksum(pattern(big, 1)));
}

class spill_open_directory_test : public spill_test {
  void configure(store_config& cfg) override {
    std::filesystem::create_directories(cfg.spill_directory);
    std::filesystem::permissions(cfg.spill_directory,
                                 std::filesystem::perms::all);
  }
};

TEST_F(spill_open_directory_test, DirectoryWritableByOthersIsRefused) {
  auto a = put_in_transit(1);
  auto b = sut.put(pattern(big, 2));
  ASSERT_FALSE(b);
  EXPECT_EQ(code_of(b.error()), errc::spill_failed);
  EXPECT_NE(text_of(b.error()).find("closed to others"), std::string::npos)
    << text_of(b.error());
  EXPECT_EQ(spill_files(), 0u);
  auto ra = sut.redeem(a);
  ASSERT_TRUE(ra);
  EXPECT_EQ(checksum(ra->bytes()), checksum(pattern(big, 1)));
}

} // namespace
