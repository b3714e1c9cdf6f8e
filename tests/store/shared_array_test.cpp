// Unit tests of shared_array: typed, read-only, zero-copy views.
#include "ferry/store/shared_array.hpp"

#include "store_test_support.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <type_traits>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

static_assert(
  std::is_same_v<decltype(std::declval<shared_array<double>&>()[0]),
                 const double&>,
  "elements of a shared_array are const");
static_assert(std::is_same_v<decltype(*std::declval<shared_array<int>&>()
                                          .begin()),
                             const int&>);

struct point {
  float x;
  float y;
  float z;
};

class shared_array_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("arr");
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    store = std::move(*attached);
  }

  store_cleanup cleanup;
  object_store store;
};

TEST_F(shared_array_test, HoldsTheElementsInTheStore) {
  std::vector<double> values(1000);
  std::iota(values.begin(), values.end(), 0.5);
  auto sut = make_shared_array(store, values);
  ASSERT_TRUE(sut) << render(sut.error());
  EXPECT_EQ(sut->size(), 1000u);
  EXPECT_EQ((*sut)[999], 999.5);
  EXPECT_EQ(std::accumulate(sut->begin(), sut->end(), 0.0),
            std::accumulate(values.begin(), values.end(), 0.0));
  EXPECT_EQ(sut->ref().size(), 8000u);
  auto again = store.get(sut->ref().id());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->bytes().data(),
            reinterpret_cast<const std::byte*>(sut->data()));
}

TEST_F(shared_array_test, ToVectorCopiesForMutation) {
  std::vector<int> values{1, 2, 3};
  auto sut = make_shared_array(store, values);
  ASSERT_TRUE(sut);
  auto copy = sut->to_vector();
  copy[0] = 100;
  EXPECT_EQ((*sut)[0], 1);
  EXPECT_EQ(copy, (std::vector<int>{100, 2, 3}));
}

TEST_F(shared_array_test, StructElementsWork) {
  std::vector<point> points{{1, 2, 3}, {4, 5, 6}};
  auto sut = make_shared_array(store, points);
  ASSERT_TRUE(sut);
  EXPECT_EQ(sut->size(), 2u);
  EXPECT_EQ((*sut)[1].y, 5.0f);
}

TEST_F(shared_array_test, FromRefRejectsASizeThatIsNoMultiple) {
  auto ref = store.put(pattern(10, 1));
  ASSERT_TRUE(ref);
  auto sut = shared_array<uint32_t>::from_ref(*ref);
  ASSERT_FALSE(sut);
  EXPECT_EQ(code_of(sut.error()), errc::invalid_size);
  auto bytes = shared_array<std::byte>::from_ref(*ref);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->size(), 10u);
}

TEST_F(shared_array_test, EmptyArraysWork) {
  auto sut = make_shared_array(store, std::vector<int>{});
  ASSERT_TRUE(sut) << render(sut.error());
  EXPECT_TRUE(sut->empty());
  EXPECT_EQ(sut->begin(), sut->end());
  shared_array<int> none;
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none.to_vector().empty());
}

TEST_F(shared_array_test, CopyingTheArrayAddsAReference) {
  auto sut = make_shared_array(store, std::vector<int>{1});
  ASSERT_TRUE(sut);
  auto copy = *sut;
  EXPECT_EQ(sut->ref().ref_count(), 2u);
}

} // namespace
