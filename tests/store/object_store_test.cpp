// Unit tests of object_store: attach, create/seal/put/get, ids, capacity.
#include "ferry/store/object_store.hpp"

#include "layout.hpp"
#include "process_identity.hpp"
#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <future>
#include <set>
#include <sstream>
#include <thread>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

class object_store_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("os");
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    sut = std::move(*attached);
  }

  store_cleanup cleanup;
  object_store sut;
};

TEST(store_errors, RenderOfNoErrorSaysNone) {
  EXPECT_EQ(render(caf::error{}), "none");
  EXPECT_EQ(render(caf::make_error(errc::store_full)), "ferry_sto: store_full");
}

TEST_F(object_store_test, AttachCreatesSegmentWithOwnerOnlyPermissions) {
  struct stat st {};
  ASSERT_EQ(::stat(("/dev/shm/" + cleanup.cfg.name).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, ::getuid());
}

TEST_F(object_store_test, PutThenGetReturnsTheSameBytesInPlace) {
  auto bytes = pattern(5000, 1);
  auto ref = sut.put(bytes);
  ASSERT_TRUE(ref) << render(ref.error());
  auto again = sut.get(ref->id());
  ASSERT_TRUE(again) << render(again.error());
  EXPECT_EQ(again->size(), 5000u);
  EXPECT_EQ(again->bytes().data(), ref->bytes().data()); // no copy
  EXPECT_EQ(checksum(again->bytes()), checksum(bytes));
}

TEST_F(object_store_test, ObjectBytesAreAlignedTo64) {
  for (uint64_t size : {1u, 63u, 64u, 65u, 1000u}) {
    auto ref = sut.put(pattern(size, 2));
    ASSERT_TRUE(ref);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ref->bytes().data()) % 64, 0u);
  }
}

TEST_F(object_store_test, GetOfUnsealedObjectFailsUntilSealed) {
  auto builder = sut.create(100);
  ASSERT_TRUE(builder) << render(builder.error());
  std::memset(builder->bytes().data(), 7, 100);
  auto early = sut.get(builder->id());
  ASSERT_FALSE(early);
  EXPECT_EQ(code_of(early.error()), errc::object_not_sealed);
  auto id = builder->id();
  auto ref = builder->seal();
  ASSERT_TRUE(ref) << render(ref.error());
  EXPECT_FALSE(*builder);
  auto late = sut.get(id);
  ASSERT_TRUE(late);
  EXPECT_EQ(static_cast<int>(late->bytes()[99]), 7);
}

TEST_F(object_store_test, SealingTwiceFailsWithInvalidHandle) {
  auto builder = sut.create(10);
  ASSERT_TRUE(builder);
  auto ref = builder->seal();
  ASSERT_TRUE(ref);
  auto again = builder->seal();
  ASSERT_FALSE(again);
  EXPECT_EQ(code_of(again.error()), errc::invalid_handle);
}

TEST_F(object_store_test, DroppingAnUnsealedBuilderFreesItsMemory) {
  object_id id{};
  {
    auto builder = sut.create(100000);
    ASSERT_TRUE(builder);
    id = builder->id();
    auto during = sut.memory_summary();
    ASSERT_TRUE(during);
    EXPECT_GT(during->bytes_used, 100000u);
  }
  auto after = sut.memory_summary();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->bytes_used, 0u);
  EXPECT_TRUE(after->objects.empty());
  auto gone = sut.get(id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(code_of(gone.error()), errc::object_not_found);
}

TEST_F(object_store_test, IdsGrowAndAreNeverReused) {
  std::vector<object_id> ids;
  for (int i = 0; i < 1000; ++i) {
    auto ref = sut.put(pattern(64, static_cast<uint32_t>(i)));
    ASSERT_TRUE(ref) << render(ref.error());
    ids.push_back(ref->id());
  } // each object is freed at once, so slots and blocks are reused
  std::set<object_id> unique(ids.begin(), ids.end());
  EXPECT_EQ(unique.size(), ids.size());
  for (size_t i = 1; i < ids.size(); ++i)
    EXPECT_LT(ids[i - 1], ids[i]);
  for (auto id : ids) {
    auto gone = sut.get(id);
    ASSERT_FALSE(gone);
    EXPECT_EQ(code_of(gone.error()), errc::object_not_found);
  }
}

TEST_F(object_store_test, GetOfUnknownIdsFailsWithObjectNotFound) {
  for (auto id : {object_id{0}, object_id{1}, object_id{~uint64_t{0}}}) {
    auto result = sut.get(id);
    ASSERT_FALSE(result);
    EXPECT_EQ(code_of(result.error()), errc::object_not_found);
  }
}

TEST_F(object_store_test, ZeroSizedObjectsAreAllowed) {
  auto ref = sut.put({});
  ASSERT_TRUE(ref) << render(ref.error());
  EXPECT_EQ(ref->size(), 0u);
  EXPECT_TRUE(ref->bytes().empty());
  auto again = sut.get(ref->id());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->size(), 0u);
}

TEST_F(object_store_test, ObjectLargerThanCapacityFailsWithStoreFull) {
  auto result = sut.create(sut.capacity() + 1);
  ASSERT_FALSE(result);
  EXPECT_EQ(code_of(result.error()), errc::store_full);
  EXPECT_NE(text_of(result.error()).find("larger than the store"),
            std::string::npos);
}

TEST_F(object_store_test, OneObjectCanFillTheWholeCapacity) {
  auto result = sut.create(sut.capacity() - detail::block_header_size);
  ASSERT_TRUE(result) << render(result.error());
}

TEST(object_store_exhaustion, FailsWithStoreFullFiguresWhenSpillingIsOff) {
  store_cleanup cleanup{small_config("full")};
  cleanup.cfg.spilling = false;
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  std::vector<object_ref> held;
  std::vector<uint64_t> sums;
  caf::error err;
  for (uint32_t i = 0; i < 100; ++i) {
    auto bytes = pattern(100000, i);
    auto ref = sut->put(bytes);
    if (!ref) {
      err = ref.error();
      break;
    }
    sums.push_back(checksum(bytes));
    held.push_back(std::move(*ref));
  }
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), errc::store_full);
  auto text = text_of(err);
  EXPECT_NE(text.find(cleanup.cfg.name), std::string::npos) << text;
  EXPECT_NE(text.find("100000 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("capacity 1048576 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("used "), std::string::npos) << text;
  EXPECT_NE(text.find("pinned "), std::string::npos) << text;
  EXPECT_NE(text.find("largest free block "), std::string::npos) << text;
  EXPECT_NE(text.find("spilling is off"), std::string::npos) << text;
  EXPECT_EQ(held.size(), 10u); // 10 x (100000 + header) fit in 1 MiB
  // No damage to the objects already there.
  for (size_t i = 0; i < held.size(); ++i)
    EXPECT_EQ(checksum(held[i].bytes()), sums[i]);
  // Freeing one makes room again.
  held.pop_back();
  EXPECT_TRUE(sut->put(pattern(100000, 99)));
}

TEST(object_store_exhaustion, FailsWithTableFullWhenObjectsRunOut) {
  store_cleanup cleanup{small_config("table")};
  cleanup.cfg.max_objects = 4;
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  std::vector<object_ref> held;
  for (int i = 0; i < 4; ++i) {
    auto ref = sut->put(pattern(10, 1));
    ASSERT_TRUE(ref);
    held.push_back(std::move(*ref));
  }
  auto fifth = sut->put(pattern(10, 1));
  ASSERT_FALSE(fifth);
  EXPECT_EQ(code_of(fifth.error()), errc::table_full);
}

TEST(object_store_attach, AttachingTwiceInOneProcessSharesTheAttachment) {
  store_cleanup cleanup{small_config("twice")};
  auto first = object_store::attach(cleanup.cfg);
  auto second = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  EXPECT_EQ(first->impl(), second->impl());
  auto ref = first->put(pattern(10, 3));
  ASSERT_TRUE(ref);
  EXPECT_TRUE(second->get(ref->id()));
}

TEST(object_store_attach, OpenOnlyFailsForAMissingStore) {
  auto cfg = small_config("missing");
  cfg.open_only = true;
  auto sut = object_store::attach(cfg);
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::segment_unavailable);
  EXPECT_NE(::access(("/dev/shm/" + cfg.name).c_str(), F_OK), 0);
}

TEST(object_store_attach, InvalidNamesAreRejected) {
  auto cfg = small_config("bad");
  cfg.name = "a/b";
  auto sut = object_store::attach(cfg);
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::invalid_config);
  cfg.name = "";
  sut = object_store::attach(cfg);
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::invalid_config);
}

TEST(object_store_attach, TinyCapacityFailsWithSegmentTooSmall) {
  auto cfg = small_config("tiny");
  cfg.capacity = 64;
  auto sut = object_store::attach(cfg);
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::segment_too_small);
}

TEST(object_store_attach, ForeignSegmentIsRejectedAsIncompatible) {
  store_cleanup cleanup{small_config("foreign")};
  auto fd = ::shm_open(("/" + cleanup.cfg.name).c_str(),
                       O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 65536), 0);
  // A segment that claims to be a store of another layout version.
  uint64_t magic = detail::segment_magic;
  uint32_t version = 99;
  ASSERT_EQ(::pwrite(fd, &magic, sizeof(magic), 0), 8);
  ASSERT_EQ(::pwrite(fd, &version, sizeof(version), 8), 4);
  ::close(fd);
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::incompatible_segment);
  EXPECT_NE(text_of(sut.error()).find("ferry-store remove"), std::string::npos);
}

TEST(object_store_attach, CapacityBeyondTheAllocatorsReachIsInvalidConfig) {
  for (auto capacity : {UINT64_MAX, detail::max_capacity + 1}) {
    // Arrange
    auto cfg = small_config("huge", capacity);
    // Act
    auto sut = object_store::attach(cfg);
    // Assert: refused before any segment exists (UINT64_MAX used to wrap
    // the segment size and write past the mapping).
    ASSERT_FALSE(sut) << capacity;
    EXPECT_EQ(code_of(sut.error()), errc::invalid_config) << capacity;
    auto text = text_of(sut.error());
    EXPECT_NE(text.find("capacity " + std::to_string(capacity)
                        + " bytes is too large"),
              std::string::npos)
      << text;
    EXPECT_NE(text.find(std::to_string(detail::max_capacity)),
              std::string::npos)
      << text;
    EXPECT_NE(::access(("/dev/shm/" + cfg.name).c_str(), F_OK), 0);
  }
}

/// Makes a segment named `name` whose creator (`pid`, started at
/// `start_time`) said who it is but has not published the header yet.
void unpublished_segment(const std::string& name, pid_t pid,
                         uint64_t start_time) {
  auto fd = ::shm_open(("/" + name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  auto size = sizeof(detail::segment_header) + 4096;
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
  auto* mem = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mem, MAP_FAILED);
  ::close(fd);
  auto* hdr = static_cast<detail::segment_header*>(mem);
  hdr->creator_start_time = start_time;
  hdr->creator_pid = pid;
  ::munmap(mem, size);
}

/// Publishes a segment named `name` of `size` bytes whose header is valid
/// except for what `edit` changes.
void publish_segment(const std::string& name, size_t size,
                     void (*edit)(detail::segment_header&, size_t)) {
  auto fd = ::shm_open(("/" + name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
  auto* mem = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mem, MAP_FAILED);
  ::close(fd);
  auto* hdr = static_cast<detail::segment_header*>(mem);
  hdr->version = detail::layout_version;
  hdr->header_size = sizeof(detail::segment_header);
  hdr->entry_sizes = detail::entry_sizes();
  hdr->segment_size = size;
  edit(*hdr, size);
  hdr->magic.store(detail::segment_magic, std::memory_order_release);
  ::munmap(mem, size);
}

TEST(object_store_attach, SegmentWithOtherEntrySizesIsRejectedNamingThem) {
  // Arrange: same layout version and header size, other table entries.
  store_cleanup cleanup{small_config("entries")};
  ASSERT_NO_FATAL_FAILURE(publish_segment(
    cleanup.cfg.name, sizeof(detail::segment_header) + 4096,
    [](detail::segment_header& hdr, size_t) {
      hdr.entry_sizes = detail::entry_sizes() + 8;
    }));
  // Act
  auto sut = object_store::attach(cleanup.cfg);
  // Assert
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::incompatible_segment);
  auto text = text_of(sut.error());
  std::ostringstream sizes;
  sizes << std::hex << "entry sizes 0x" << detail::entry_sizes() + 8
        << ", expected 0x" << detail::entry_sizes();
  EXPECT_NE(text.find(sizes.str()), std::string::npos) << text;
  EXPECT_NE(text.find("ferry-store remove"), std::string::npos) << text;
}

TEST(object_store_attach, SegmentOfAnotherSizeIsRejectedNamingBothSizes) {
  // Arrange: the header claims 4 KiB more than the segment has.
  store_cleanup cleanup{small_config("resized")};
  auto size = sizeof(detail::segment_header) + 4096;
  ASSERT_NO_FATAL_FAILURE(publish_segment(
    cleanup.cfg.name, size, [](detail::segment_header& hdr, size_t actual) {
      hdr.segment_size = actual + 4096;
    }));
  // Act
  auto sut = object_store::attach(cleanup.cfg);
  // Assert
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::incompatible_segment);
  auto text = text_of(sut.error());
  EXPECT_NE(text.find("header says " + std::to_string(size + 4096)
                      + " bytes but the segment has " + std::to_string(size)
                      + " bytes"),
            std::string::npos)
    << text;
  EXPECT_EQ(text.find("expected version"), std::string::npos) << text;
}

TEST(object_store_attach, SegmentOfAnotherPidNamespaceIsRefusedNamingBoth) {
  // Arrange: a published segment whose creator ran in another PID
  // namespace (containers sharing /dev/shm): its pids mean nothing here.
  store_cleanup cleanup{small_config("pidns")};
  auto ours = detail::pid_namespace();
  ASSERT_NE(ours, 0u) << "/proc/self/ns/pid is not readable";
  ASSERT_NO_FATAL_FAILURE(publish_segment(
    cleanup.cfg.name, sizeof(detail::segment_header) + 4096,
    [](detail::segment_header& hdr, size_t) {
      hdr.creator_pid_namespace = detail::pid_namespace() + 1;
    }));
  // Act
  auto sut = object_store::attach(cleanup.cfg);
  // Assert
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::foreign_pid_namespace);
  auto text = text_of(sut.error());
  EXPECT_NE(text.find("pid:[" + std::to_string(ours + 1) + "]"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("pid:[" + std::to_string(ours) + "]"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("ferry.store.name"), std::string::npos) << text;
}

TEST(object_store_attach, SegmentOfADeadCreatorIsReportedWithTheFix) {
  store_cleanup cleanup{small_config("deadcreator")};
  auto child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0)
    ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  // A segment whose creator died after sizing it, before publishing it.
  ASSERT_NO_FATAL_FAILURE(unpublished_segment(cleanup.cfg.name, child, 1));
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::segment_unavailable);
  auto text = text_of(sut.error());
  EXPECT_NE(text.find("died before initializing"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry-store remove " + cleanup.cfg.name),
            std::string::npos)
    << text;
}

/// A forked child that only waits; killed (and waited for) by `stop()` or
/// the destructor, and by SIGALRM after a minute should this process die.
struct idle_child {
  pid_t pid = ::fork();

  idle_child() {
    if (pid == 0) {
      ::alarm(60);
      for (;;)
        ::pause();
    }
  }

  ~idle_child() {
    stop();
  }

  void stop() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      pid = -1;
    }
  }
};

TEST(object_store_attach, SegmentRemovedByItsLiveCreatorIsCreatedAnew) {
  // Arrange: a segment whose creator is alive and has said who it is, but
  // failed (e.g. /dev/shm full): it removes the name ~200 ms after this
  // process opened the segment, and lives on without a store.
  store_cleanup cleanup{small_config("failedcreator")};
  idle_child creator;
  ASSERT_GT(creator.pid, 0);
  auto shm_name = "/" + cleanup.cfg.name;
  ASSERT_NO_FATAL_FAILURE(unpublished_segment(
    cleanup.cfg.name, creator.pid, detail::process_start_time(creator.pid)));
  std::jthread remover{[shm_name] {
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
    ::shm_unlink(shm_name.c_str());
  }};
  // Act: attach in a thread of its own, so that a hang fails this test
  // instead of hanging the suite.
  auto pending = std::async(std::launch::async, [cfg = cleanup.cfg] {
    return object_store::attach(cfg);
  });
  auto status = pending.wait_for(std::chrono::seconds{10});
  // Ending the creator ends a hung attach (its creator is dead now).
  creator.stop();
  remover.join();
  auto sut = pending.get();
  // Assert
  ASSERT_EQ(status, std::future_status::ready)
    << "attach waited on a segment that its live creator had removed";
  ASSERT_TRUE(sut) << render(sut.error());
  auto ref = sut->put(pattern(100, 1));
  ASSERT_TRUE(ref) << render(ref.error());
  EXPECT_EQ(::access(("/dev/shm/" + cleanup.cfg.name).c_str(), F_OK), 0);
}

TEST(object_store_attach, RemoveDeletesTheSegmentOnce) {
  auto cfg = small_config("remove");
  cfg.persistent = true;
  {
    auto sut = object_store::attach(cfg);
    ASSERT_TRUE(sut);
  }
  ASSERT_EQ(::access(("/dev/shm/" + cfg.name).c_str(), F_OK), 0);
  EXPECT_FALSE(object_store::remove(cfg.name));
  EXPECT_NE(::access(("/dev/shm/" + cfg.name).c_str(), F_OK), 0);
  auto again = object_store::remove(cfg.name);
  ASSERT_TRUE(again);
  EXPECT_EQ(code_of(again), errc::segment_unavailable);
}

TEST(object_store_attach, AttachAfterRemoveCreatesANewStore) {
  store_cleanup cleanup{small_config("recreate")};
  auto old_store = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(old_store);
  auto old_ref = old_store->put(pattern(100, 1));
  ASSERT_TRUE(old_ref);
  ASSERT_FALSE(object_store::remove(cleanup.cfg.name));
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut) << render(sut.error());
  EXPECT_NE(sut->token(), old_store->token());
  EXPECT_FALSE(sut->get(old_ref->id()));
  // The old mapping stays valid for the handles that use it.
  EXPECT_EQ(checksum(old_ref->bytes()), checksum(pattern(100, 1)));
  EXPECT_EQ(::access(("/dev/shm/" + cleanup.cfg.name).c_str(), F_OK), 0);
}

TEST(object_store_attach, DetachedHandleFailsWithInvalidHandle) {
  store_cleanup cleanup{small_config("detached")};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  auto moved = std::move(*sut);
  auto result = sut->put(pattern(1, 1));
  ASSERT_FALSE(result);
  EXPECT_EQ(code_of(result.error()), errc::invalid_handle);
  moved.detach();
  EXPECT_FALSE(moved);
  EXPECT_EQ(code_of(moved.get(object_id{1}).error()), errc::invalid_handle);
}

TEST(object_store_attach, ReapWithoutDeadProcessesReapsNothing) {
  store_cleanup cleanup{small_config("reap")};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  auto reaped = sut->reap();
  ASSERT_TRUE(reaped);
  EXPECT_EQ(*reaped, 0u);
}

TEST(object_store_summary, ListsObjectsHoldersAndTotals) {
  store_cleanup cleanup{small_config("summary")};
  auto sut = object_store::attach(cleanup.cfg);
  ASSERT_TRUE(sut);
  auto a = sut->put(pattern(1000, 1));
  auto b = sut->put(pattern(3000, 2));
  ASSERT_TRUE(a && b);
  auto a2 = *a;
  auto builder = sut->create(10);
  ASSERT_TRUE(builder);
  auto summary = sut->memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->name, cleanup.cfg.name);
  EXPECT_EQ(summary->capacity, cleanup.cfg.capacity);
  ASSERT_EQ(summary->objects.size(), 3u);
  auto& first = summary->objects[0];
  EXPECT_EQ(first.id, a->id());
  EXPECT_EQ(first.size, 1000u);
  EXPECT_EQ(first.ref_count, 2u);
  EXPECT_TRUE(first.sealed);
  EXPECT_FALSE(first.pinned);
  EXPECT_FALSE(first.spilled);
  ASSERT_EQ(first.holders.size(), 1u);
  EXPECT_EQ(first.holders[0].pid, ::getpid());
  EXPECT_EQ(first.holders[0].handles, 2u);
  EXPECT_FALSE(summary->objects[2].sealed);
  EXPECT_EQ(summary->bytes_used, summary->bytes_pinned);
  EXPECT_EQ(summary->bytes_used, 1088u + 3072u + 128u);
  EXPECT_EQ(summary->largest_free_block,
            cleanup.cfg.capacity - summary->bytes_used - 64);
  ASSERT_EQ(summary->processes.size(), 1u);
  EXPECT_TRUE(summary->processes[0].alive);
  auto text = to_string(*summary);
  EXPECT_NE(text.find(to_string(a->id())), std::string::npos) << text;
  EXPECT_NE(text.find("creating"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(::getpid()) + ": 2/0/0"),
            std::string::npos)
    << text;
}

} // namespace
