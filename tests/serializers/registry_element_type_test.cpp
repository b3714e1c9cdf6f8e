// The registry's answer to "which registered type is element i of this
// caf::message": builtins found by CAF's type number, user aggregates by
// their type_info, nothing for unregistered types or positions past the
// end, and registrations made after a snapshot seen at once.

#include "test_types.hpp"

#include <caf/make_message.hpp>
#include <caf/message.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_nr.hpp>

#include <optional>
#include <string>
#include <typeindex>

namespace ferry::serializers::test {
namespace {

/// A user aggregate that can travel in a caf::message (it has `inspect`).
struct reading {
  int32_t sensor = 0;
  double value = 0;
  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, reading& x) {
    return f(caf::meta::type_name("reading"), x.sensor, x.value);
  }
};

using type_opt = std::optional<std::type_index>;

TEST(registry, ElementTypeFindsRegisteredBuiltinByTypeNumber) {
  // Arrange
  registry sut;
  sut.add_type<std::string>("text");
  sut.add_type<std::vector<char>>("chars");
  sut.add_type<int32_t>("i32");
  auto msg = caf::make_message(int32_t{7}, std::string{"hi"},
                               std::vector<char>{'a', 'b'});
  // CAF reports built-in elements by number, without a std::type_info.
  for (size_t pos = 0; pos < msg.size(); ++pos) {
    ASSERT_NE(msg.type(pos).first, 0u) << pos;
    ASSERT_EQ(msg.type(pos).second, nullptr) << pos;
  }
  // Act
  auto first = sut.element_type(msg, 0);
  auto second = sut.element_type(msg, 1);
  auto third = sut.element_type(msg, 2);
  // Assert
  EXPECT_EQ(first, type_opt{typeid(int32_t)});
  EXPECT_EQ(second, type_opt{typeid(std::string)});
  EXPECT_EQ(third, type_opt{typeid(std::vector<char>)});
}

TEST(registry, ElementTypeFindsRegisteredUserAggregateByTypeInfo) {
  // Arrange
  registry sut;
  sut.add_type<reading>("reading");
  auto msg = caf::make_message(reading{3, 0.5});
  ASSERT_EQ(msg.type(0).first, 0u);
  ASSERT_NE(msg.type(0).second, nullptr);
  // Act
  auto type = sut.element_type(msg, 0);
  // Assert
  EXPECT_EQ(type, type_opt{typeid(reading)});
  EXPECT_EQ(sut.type_name(*type), std::optional<std::string>{"reading"});
}

TEST(registry, ElementTypeOfUnregisteredTypeIsEmpty) {
  // Arrange
  registry sut;
  sut.add_type<reading>("reading");
  sut.add_type<std::string>("text");
  auto msg = caf::make_message(account{"m", 3}, uint64_t{9}, std::string{"x"});
  // Act
  auto user = sut.element_type(msg, 0);
  auto builtin = sut.element_type(msg, 1);
  auto registered = sut.element_type(msg, 2);
  // Assert
  EXPECT_EQ(user, std::nullopt);
  EXPECT_EQ(builtin, std::nullopt);
  EXPECT_EQ(registered, type_opt{typeid(std::string)});
}

TEST(registry, ElementTypeOfAPositionPastTheEndIsEmpty) {
  // Arrange
  registry sut;
  sut.add_type<std::string>("text");
  auto msg = caf::make_message(std::string{"x"});
  caf::message empty;
  // Act
  auto past = sut.element_type(msg, 1);
  auto none = sut.element_type(empty, 0);
  // Assert
  EXPECT_EQ(past, std::nullopt);
  EXPECT_EQ(none, std::nullopt);
}

TEST(registry, ElementTypeSeesATypeAddedAfterASnapshotWasTaken) {
  // Arrange
  registry sut;
  sut.add_type<std::string>("text");
  sut.add_type<point>("point");
  auto plan = sut.plan_encode(typeid(point), encode_with("cereal.binary"));
  ASSERT_TRUE(plan);
  auto msg = caf::make_message(std::string{"x"}, int64_t{1}, reading{1, 2});
  auto builtin_before = sut.element_type(msg, 1);
  auto user_before = sut.element_type(msg, 2);
  // Act
  sut.add_type<int64_t>("i64");
  sut.add_type<reading>("reading");
  // Assert
  EXPECT_EQ(builtin_before, std::nullopt);
  EXPECT_EQ(user_before, std::nullopt);
  EXPECT_NE(plan->generation(), sut.generation());
  EXPECT_EQ(sut.element_type(msg, 0), type_opt{typeid(std::string)});
  EXPECT_EQ(sut.element_type(msg, 1), type_opt{typeid(int64_t)});
  EXPECT_EQ(sut.element_type(msg, 2), type_opt{typeid(reading)});
}

TEST(registry, ElementTypeIgnoresARefusedRegistration) {
  // Arrange
  registry sut;
  sut.add_type<point>("point");
  auto msg = caf::make_message(std::string{"x"});
  // Act
  auto err = sut.try_add_type<std::string>("point");
  // Assert
  EXPECT_EQ(err, errc::type_name_taken);
  EXPECT_EQ(sut.element_type(msg, 0), std::nullopt);
}

TEST(registry, ElementTypeKeepsTheFirstTypeOfASharedTypeNumber) {
  // Arrange: CAF gives the integer types of one size one number (long and
  // long long share one where both have 64 bits).
  registry sut;
  sut.add_type<long long>("long long");
  sut.add_type<long>("long");
  auto msg = caf::make_message(long{5});
  // Act
  auto type = sut.element_type(msg, 0);
  // Assert: the first type registered under the shared number answers.
  if constexpr (caf::type_nr<long>::value == caf::type_nr<long long>::value)
    EXPECT_EQ(type, type_opt{typeid(long long)});
  else
    EXPECT_EQ(type, type_opt{typeid(long)});
  EXPECT_TRUE(sut.has_type("long"));
}

} // namespace
} // namespace ferry::serializers::test
