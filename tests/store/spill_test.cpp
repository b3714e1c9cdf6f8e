// Unit tests of capacity and spilling: objects referenced only by parked
// references, tickets or pins go to disk when memory runs out and come back
// on get/redeem; the spill directory's bound, permissions and sharing with
// another store (whose files a recovery keeps). A spill or restore cut short
// by a crash: spill_recovery_test.cpp.
#include "ferry/store/log.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/parked_ref.hpp"

#include "spill_crash.hpp"
#include "spill_fixture.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

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
