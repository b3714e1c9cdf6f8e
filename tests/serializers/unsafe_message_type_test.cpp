// CAF_ALLOW_UNSAFE_MESSAGE_TYPE as the registry sees it (docs/limits.md,
// "When a message type needs CAF_ALLOW_UNSAFE_MESSAGE_TYPE"): a mark on a
// type that needs none takes only the caf family away, with an error that
// says so; a registered type that CAF can neither serialize nor hold encodes,
// but a payload of it cannot become a caf::message, and the error names the
// fix.
#include "test_types.hpp"

#include <caf/allowed_unsafe_message_type.hpp>

namespace ferry::serializers::test {
namespace {

/// A plain aggregate, which needs no mark, marked anyway.
struct needlessly_marked {
  int32_t id = 0;
  std::string name;
  friend bool operator==(const needlessly_marked&,
                         const needlessly_marked&) = default;
};

/// Not an aggregate, no inspect function, no mark: cereal encodes it, CAF
/// can neither serialize nor hold it.
class unmarked_class {
public:
  unmarked_class() = default;
  explicit unmarked_class(int32_t id) : id_(id) {
  }
  int32_t id() const {
    return id_;
  }
  template <class Archive>
  void serialize(Archive& ar) {
    ar(id_);
  }

private:
  int32_t id_ = 0;
};

} // namespace
} // namespace ferry::serializers::test

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ferry::serializers::test::needlessly_marked)

namespace ferry::serializers::test {
namespace {

TEST(unsafe_message_type, MarkOnAPlainAggregateTakesOnlyTheCafFamilyAway) {
  // Arrange
  registry sut;
  sut.add_type<needlessly_marked>("needlessly_marked");
  needlessly_marked x{7, "seven"};
  // Act
  auto refused = sut.encode(x, encode_with("caf"));
  // Assert: caf refuses it, saying why and that the mark can go.
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::no_family_can_encode);
  auto text = render(refused.error());
  EXPECT_NE(text.find("marked CAF_ALLOW_UNSAFE_MESSAGE_TYPE"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("drop the mark"), std::string::npos) << text;
  // Every other structured family carries it into a caf::message.
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack"}) {
    auto p = sut.encode(x, encode_with(family));
    ASSERT_TRUE(p) << family << ": " << render(p.error());
    auto msg = sut.decode_message(*p, decode_with(family));
    ASSERT_TRUE(msg) << family << ": " << render(msg.error());
    ASSERT_TRUE(msg->match_elements<needlessly_marked>()) << family;
    EXPECT_EQ(msg->get_as<needlessly_marked>(0), x) << family;
  }
}

TEST(unsafe_message_type, TypeCafCannotHoldIsRefusedAsAMessageNamingTheFix) {
  // Arrange: add_type takes it, and cereal encodes and decodes it.
  registry sut;
  sut.add_type<unmarked_class>("unmarked_class");
  auto p = sut.encode(unmarked_class{5}, encode_with("cereal.binary"));
  ASSERT_TRUE(p) << render(p.error());
  auto typed = sut.decode<unmarked_class>(*p, decode_with("cereal.binary"));
  ASSERT_TRUE(typed) << render(typed.error());
  EXPECT_EQ(typed->id(), 5);
  // Act: what a node does with a payload that arrives.
  auto msg = sut.decode_message(*p, decode_with("cereal.binary"));
  // Assert
  ASSERT_FALSE(msg);
  EXPECT_EQ(msg.error(), errc::unknown_type);
  auto text = render(msg.error());
  EXPECT_NE(text.find("'unmarked_class' cannot travel in a caf::message"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("CAF_ALLOW_UNSAFE_MESSAGE_TYPE"), std::string::npos)
    << text;
}

} // namespace
} // namespace ferry::serializers::test
