// Unit tests of object_ref: counting on copy, drop, move and assignment.
#include "ferry/store/object_ref.hpp"

#include "ferry/store/errc.hpp"
#include "ferry/store/import_scope.hpp"

#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <type_traits>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

static_assert(std::is_nothrow_move_constructible_v<object_ref>);
static_assert(std::is_nothrow_move_assignable_v<object_ref>);
static_assert(std::is_nothrow_move_constructible_v<object_builder>);
static_assert(!std::is_copy_constructible_v<object_builder>);

class object_ref_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("ref");
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    store = std::move(*attached);
    auto ref = store.put(pattern(1000, 5));
    ASSERT_TRUE(ref);
    sut = std::move(*ref);
  }

  uint64_t used() {
    auto summary = store.memory_summary();
    return summary ? summary->bytes_used : ~uint64_t{0};
  }

  store_cleanup cleanup;
  object_store store;
  object_ref sut;
};

TEST_F(object_ref_test, FreshHandleHoldsOneReference) {
  EXPECT_EQ(sut.ref_count(), 1u);
  EXPECT_TRUE(sut);
  EXPECT_EQ(sut.size(), 1000u);
}

TEST_F(object_ref_test, CopyingHandleIncrementsRefCount) {
  auto copy = sut;
  EXPECT_EQ(sut.ref_count(), 2u);
  EXPECT_EQ(copy.id(), sut.id());
  EXPECT_EQ(copy.bytes().data(), sut.bytes().data());
}

TEST_F(object_ref_test, DestroyingCopyDecrementsRefCount) {
  {
    auto copy = sut;
    auto another = copy;
    EXPECT_EQ(sut.ref_count(), 3u);
  }
  EXPECT_EQ(sut.ref_count(), 1u);
}

TEST_F(object_ref_test, MovingHandleKeepsRefCountAndEmptiesSource) {
  auto moved = std::move(sut);
  EXPECT_EQ(moved.ref_count(), 1u);
  EXPECT_FALSE(sut); // NOLINT(bugprone-use-after-move): checks moved-from
  EXPECT_EQ(sut.ref_count(), 0u);
  EXPECT_TRUE(sut.bytes().empty());
  EXPECT_EQ(sut.id(), object_id{});
}

TEST_F(object_ref_test, LastDropFreesTheObject) {
  auto id = sut.id();
  EXPECT_GT(used(), 0u);
  sut.reset();
  EXPECT_EQ(used(), 0u);
  auto gone = store.get(id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(code_of(gone.error()), errc::object_not_found);
}

TEST_F(object_ref_test, CopyAssignmentReleasesTheOldObject) {
  auto other = store.put(pattern(10, 1));
  ASSERT_TRUE(other);
  auto old_id = sut.id();
  sut = *other;
  EXPECT_EQ(sut.id(), other->id());
  EXPECT_EQ(other->ref_count(), 2u);
  EXPECT_FALSE(store.get(old_id));
}

TEST_F(object_ref_test, MoveAssignmentReleasesTheOldObject) {
  auto other = store.put(pattern(10, 1));
  ASSERT_TRUE(other);
  auto old_id = sut.id();
  sut = std::move(*other);
  EXPECT_EQ(sut.ref_count(), 1u);
  EXPECT_FALSE(store.get(old_id));
}

TEST_F(object_ref_test, SelfAssignmentKeepsTheCount) {
  auto& alias = sut;
  sut = alias;
  EXPECT_EQ(sut.ref_count(), 1u);
  sut = std::move(alias);
  EXPECT_EQ(sut.ref_count(), 1u);
  EXPECT_TRUE(sut);
}

TEST_F(object_ref_test, EmptyHandleHasNothing) {
  object_ref empty;
  EXPECT_FALSE(empty);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.ref_count(), 0u);
  auto copy = empty;
  EXPECT_FALSE(copy);
  auto ticket = empty.export_in_band();
  ASSERT_FALSE(ticket);
  EXPECT_EQ(code_of(ticket.error()), errc::invalid_handle);
}

TEST_F(object_ref_test, GetAddsOneReferencePerHandle) {
  auto a = store.get(sut.id());
  auto b = store.get(sut.id());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(sut.ref_count(), 3u);
}

TEST_F(object_ref_test, HandleKeepsTheAttachmentAliveAfterDetach) {
  auto sum = checksum(sut.bytes());
  store.detach();
  EXPECT_EQ(checksum(sut.bytes()), sum);
  auto copy = sut;
  EXPECT_EQ(copy.ref_count(), 2u);
}

TEST_F(object_ref_test, ToStringNamesIdAndSize) {
  auto text = to_string(sut);
  EXPECT_NE(text.find(to_string(sut.id())), std::string::npos);
  EXPECT_NE(text.find("1000 bytes"), std::string::npos);
}

// -- import_scope: handles of another host's store ----------------------------

// A token no attached store has (tokens are random 64-bit values).
constexpr uint64_t foreign_token = 0x0123456789abcdefu;

TEST_F(object_ref_test, ForeignHandleWithoutImportScopeIsNotAttached) {
  auto ref = from_wire(ref_wire{foreign_token, 7, 3});
  ASSERT_FALSE(ref);
  EXPECT_EQ(code_of(ref.error()), errc::store_not_attached);
}

TEST_F(object_ref_test, ImportScopeResolvesForeignHandlesToLocalCopies) {
  import_scope scope{foreign_token};
  scope.add(object_id{7}, sut);
  EXPECT_EQ(sut.ref_count(), 2u);
  auto a = from_wire(ref_wire{foreign_token, 7, 3});
  auto b = from_wire(ref_wire{foreign_token, 7, 4});
  ASSERT_TRUE(a && b) << render(a ? b.error() : a.error());
  EXPECT_EQ(a->id(), sut.id());
  EXPECT_EQ(a->bytes().data(), sut.bytes().data());
  EXPECT_EQ(b->bytes().data(), sut.bytes().data());
  EXPECT_EQ(sut.ref_count(), 4u);
}

TEST_F(object_ref_test, ImportScopeRefusesObjectsTheMessageDidNotCarry) {
  import_scope scope{foreign_token};
  scope.add(object_id{7}, sut);
  auto ref = from_wire(ref_wire{foreign_token, 8, 3});
  ASSERT_FALSE(ref);
  EXPECT_EQ(code_of(ref.error()), errc::object_not_found);
  auto text = render(ref.error());
  EXPECT_NE(text.find("object 8"), std::string::npos) << text;
  EXPECT_NE(text.find("another host"), std::string::npos) << text;
}

TEST_F(object_ref_test, ImportScopeLeavesHandlesOfAttachedStoresAlone) {
  import_scope scope{foreign_token};
  auto wire = ref_wire{store.token(), static_cast<uint64_t>(sut.id()), 0};
  auto ref = from_wire(wire);
  ASSERT_TRUE(ref) << render(ref.error());
  EXPECT_EQ(ref->id(), sut.id());
  EXPECT_EQ(sut.ref_count(), 2u);
}

TEST_F(object_ref_test, ExclusiveImportScopeRefusesHandlesOfThisHostsStore) {
  // Arrange: a message from another host names an object of this host's
  // store (ids are small numbers, easy to guess), and one it carried.
  import_scope scope{foreign_token, import_scope::others::refuse};
  scope.add(object_id{7}, sut);
  auto local = ref_wire{store.token(), static_cast<uint64_t>(sut.id()), 0};
  // Act
  auto guessed = from_wire(local);
  auto carried = from_wire(ref_wire{foreign_token, 7, 0});
  // Assert: only what the message carried resolves; the count is unchanged
  // by the refusal.
  ASSERT_FALSE(guessed);
  EXPECT_EQ(code_of(guessed.error()), errc::foreign_handle);
  auto text = render(guessed.error());
  EXPECT_NE(text.find("object " + std::to_string(local.object)),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("another host"), std::string::npos) << text;
  ASSERT_TRUE(carried) << render(carried.error());
  EXPECT_EQ(carried->id(), sut.id());
  EXPECT_EQ(sut.ref_count(), 3u);
}

TEST_F(object_ref_test, ScopeInsideAnExclusiveOneCannotReachPastIt) {
  // Arrange: an exclusive scope inside an ordinary scope of another token.
  import_scope outer{foreign_token + 1};
  outer.add(object_id{1}, sut);
  import_scope inner{foreign_token, import_scope::others::refuse};
  // Act
  auto past = from_wire(ref_wire{foreign_token + 1, 1, 0});
  // Assert
  ASSERT_FALSE(past);
  EXPECT_EQ(code_of(past.error()), errc::foreign_handle);
}

TEST_F(object_ref_test, ClosingTheImportScopeDropsItsReferences) {
  {
    import_scope outer{foreign_token};
    {
      import_scope inner{foreign_token + 1};
      inner.add(object_id{1}, sut);
      outer.add(object_id{2}, sut);
      EXPECT_EQ(sut.ref_count(), 3u);
      // The innermost scope with a matching token answers.
      EXPECT_TRUE(from_wire(ref_wire{foreign_token, 2, 0}));
      EXPECT_TRUE(from_wire(ref_wire{foreign_token + 1, 1, 0}));
      EXPECT_FALSE(from_wire(ref_wire{foreign_token, 1, 0}));
    }
    EXPECT_EQ(sut.ref_count(), 2u);
    EXPECT_FALSE(from_wire(ref_wire{foreign_token + 1, 1, 0}));
  }
  EXPECT_EQ(sut.ref_count(), 1u);
  EXPECT_EQ(code_of(from_wire(ref_wire{foreign_token, 2, 0}).error()), errc::store_not_attached);
}

} // namespace
