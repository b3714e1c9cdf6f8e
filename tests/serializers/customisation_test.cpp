// The four ways to customise a type: its own functions, a serializer
// registered at run time, a per-value wrapper, and plain aggregates.

#include "test_types.hpp"

#include <caf/sec.hpp>

#include <stdexcept>

namespace ferry::serializers::test {
namespace {

struct id_parts {
  std::string ns;
  uint32_t n = 0;
};

id_parts legacy_to_parts(const legacy_id& x) {
  return {x.ns(), x.n()};
}

legacy_id legacy_from_parts(id_parts&& x) {
  return {std::move(x.ns), x.n};
}

std::string legacy_to_text(const legacy_id& x) {
  return x.ns() + ":" + std::to_string(x.n());
}

legacy_id legacy_from_text(std::string&& x) {
  auto colon = x.find(':');
  return {x.substr(0, colon),
          static_cast<uint32_t>(std::stoul(x.substr(colon + 1)))};
}

/// Encodes a point as "x,y" text, for one value only.
struct point_as_text {
  static std::string to(const point& p) {
    return std::to_string(p.x) + "," + std::to_string(p.y) + "," + p.label;
  }
  static point from(std::string s) {
    auto a = s.find(',');
    auto b = s.find(',', a + 1);
    return {std::stoi(s.substr(0, a)), std::stod(s.substr(a + 1, b - a - 1)),
            s.substr(b + 1)};
  }
};

/// An exception carrying an error value, as the store's
/// ref_serialization_error does.
class carried_failure : public std::runtime_error {
public:
  explicit carried_failure(caf::error err)
    : std::runtime_error(render(err)), err_(std::move(err)) {
  }

  const caf::error& error() const noexcept {
    return err_;
  }

private:
  caf::error err_;
};

/// Fails to load as a store handle whose object is gone does: cereal cannot
/// return an error, so `load` throws one.
struct vanished {
  int32_t id = 0;

  template <class Archive>
  void save(Archive& ar) const {
    ar(id);
  }

  template <class Archive>
  void load(Archive& ar) {
    ar(id);
    throw carried_failure{caf::make_error(
      caf::sec::runtime_error, "object " + std::to_string(id) + " is gone")};
  }
};

/// Fails to load as a store handle whose object is gone does through CAF's
/// inspect: the inspector's result is the store's error (its own category).
struct vanished_in_caf {
  int32_t id = 0;
  /// Whether loading fails with an error of CAF's own category instead.
  bool caf_category = false;

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f,
                                                 vanished_in_caf& x) {
    if constexpr (std::is_same_v<typename Inspector::result_type, caf::error>
                  && !Inspector::reads_state) {
      if (auto err = f(x.id, x.caf_category))
        return err;
      if (x.caf_category)
        return caf::make_error(caf::sec::runtime_error, "not a store error");
      return caf::error{static_cast<uint8_t>(x.id), caf::atom("test_sto")};
    } else {
      return f(x.id, x.caf_category);
    }
  }
};

const std::vector<std::string> structured_families{
  "cereal.binary", "cereal.portable", "cereal.json", "msgpack", "caf"};

TEST(customisation, OwnFunctionsAreUsedByEachFamily) {
  registry sut;
  for (auto& family : structured_families) {
    auto p = sut.encode(account{"bob", -5}, encode_with(family));
    ASSERT_TRUE(p) << family << ": " << render(p.error());
    auto x = sut.decode<account>(*p, decode_with(family));
    ASSERT_TRUE(x) << render(x.error());
    EXPECT_EQ(*x, (account{"bob", -5}));
  }
}

TEST(customisation, UnserializableTypeFailsWithHelpfulError) {
  registry sut;
  sut.add_type<legacy_id>("legacy_id");
  auto p = sut.encode(legacy_id{"a", 1}, encode_with("cereal.binary"));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), errc::no_family_can_encode);
  auto text = render(p.error());
  EXPECT_NE(text.find("legacy_id"), std::string::npos);
  EXPECT_NE(text.find("cereal.binary"), std::string::npos);
  EXPECT_NE(text.find("register_serializer"), std::string::npos);
}

TEST(customisation, RegisteredSerializerMakesTypeWorkInEveryFamily) {
  // Arrange
  registry sut;
  sut.add_type<legacy_id>("legacy_id");
  sut.add_type<id_parts>("id_parts");
  // Act
  auto changed = sut.register_serializer<legacy_id>(&legacy_to_parts,
                                                    &legacy_from_parts);
  // Assert
  EXPECT_TRUE(changed);
  for (auto& family : structured_families) {
    auto p = sut.encode(legacy_id{"ns", 7}, encode_with(family));
    ASSERT_TRUE(p) << family << ": " << render(p.error());
    EXPECT_EQ(p->header.type_name, "legacy_id");
    EXPECT_EQ(p->header.stand_in, "id_parts");
    auto x = sut.decode<legacy_id>(*p, decode_with(family));
    ASSERT_TRUE(x) << render(x.error());
    EXPECT_EQ(*x, (legacy_id{"ns", 7}));
  }
  EXPECT_TRUE(sut.can_encode("msgpack", typeid(legacy_id)));
}

TEST(customisation, TypeWithASerializerHasNoEncodePlan) {
  // Arrange: the stand-in runs per value, so encode decides every time.
  registry sut;
  sut.add_type<legacy_id>("legacy_id");
  sut.add_type<id_parts>("id_parts");
  ASSERT_TRUE(sut.register_serializer<legacy_id>(&legacy_to_parts,
                                                 &legacy_from_parts));
  auto p = sut.encode(legacy_id{"ns", 7}, encode_with("msgpack"));
  ASSERT_TRUE(p) << render(p.error());
  // Act
  auto plan = sut.plan_encode(typeid(legacy_id), encode_with("msgpack"));
  auto decode_plan = sut.plan_decode(p->header, decode_with("msgpack"));
  auto general = sut.decode_message(*p, decode_with("msgpack"));
  // Assert: legacy_id has no inspect, so no caf::message holds one; the
  // decode plan refuses it as decode_message does.
  EXPECT_FALSE(plan);
  ASSERT_FALSE(decode_plan);
  ASSERT_FALSE(general);
  EXPECT_EQ(render(decode_plan.error()), render(general.error()));
}

TEST(customisation, RegisteringTheSameSerializerAgainChangesNothing) {
  registry sut;
  ASSERT_TRUE(sut.register_serializer<legacy_id>(&legacy_to_parts,
                                                 &legacy_from_parts));
  auto again = sut.register_serializer<legacy_id>(&legacy_to_parts,
                                                  &legacy_from_parts);
  EXPECT_FALSE(again);
}

TEST(customisation, ReRegisteringReplacesAtOnce) {
  // Arrange
  registry sut;
  sut.add_type<legacy_id>("legacy_id");
  ASSERT_TRUE(sut.register_serializer<legacy_id>(&legacy_to_parts,
                                                 &legacy_from_parts));
  // Act
  auto replaced = sut.register_serializer<legacy_id>(&legacy_to_text,
                                                     &legacy_from_text);
  auto p = sut.encode(legacy_id{"x", 3}, encode_with("msgpack"));
  // Assert
  EXPECT_TRUE(replaced);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->header.stand_in, detail::type_label<std::string>());
  auto x = sut.decode<legacy_id>(*p, decode_with("msgpack"));
  ASSERT_TRUE(x);
  EXPECT_EQ(*x, (legacy_id{"x", 3}));
}

TEST(customisation, DeregisterFailsAgainWithTheHelpfulError) {
  registry sut;
  sut.add_type<legacy_id>("legacy_id");
  ASSERT_TRUE(sut.register_serializer<legacy_id>(&legacy_to_parts,
                                                 &legacy_from_parts));
  ASSERT_TRUE(sut.encode(legacy_id{"a", 1}, encode_with("cereal.binary")));
  // Act
  auto removed = sut.deregister_serializer<legacy_id>();
  auto p = sut.encode(legacy_id{"a", 1}, encode_with("cereal.binary"));
  // Assert
  EXPECT_TRUE(removed);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), errc::no_family_can_encode);
  EXPECT_NE(render(p.error()).find("register_serializer"), std::string::npos);
}

TEST(customisation, DeregisteringAnUnknownTypeChangesNothing) {
  registry sut;
  EXPECT_FALSE(sut.deregister_serializer<legacy_id>());
}

TEST(customisation, RegistrationsBelongToOneRegistry) {
  registry sut;
  registry other;
  ASSERT_TRUE(sut.register_serializer<legacy_id>(&legacy_to_parts,
                                                 &legacy_from_parts));
  auto here = sut.encode(legacy_id{"a", 1}, encode_with("caf"));
  auto there = other.encode(legacy_id{"a", 1}, encode_with("caf"));
  ASSERT_TRUE(here);
  EXPECT_FALSE(there);
  // A receiver without the registration refuses the stand-in.
  auto x = other.decode<legacy_id>(*here, decode_with("caf"));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::stand_in_mismatch);
}

TEST(customisation, RegisteredSerializerOverridesTheTypesOwn) {
  registry sut;
  ASSERT_TRUE(sut.register_serializer<account>(
    [](const account& a) { return a.owner(); },
    [](std::string s) { return account{s, 0}; }));
  auto p = sut.encode(account{"zoe", 99}, encode_with("cereal.binary"));
  ASSERT_TRUE(p);
  auto x = sut.decode<account>(*p, decode_with("cereal.binary"));
  ASSERT_TRUE(x);
  EXPECT_EQ(*x, (account{"zoe", 0}));
}

TEST(customisation, WrapperConvertsOneValueAndLeavesOthersAlone) {
  // Arrange
  registry sut;
  point p{3, 0.5, "w"};
  auto wrapped_value = wrap<point_as_text>(p);
  // Act
  auto pw = sut.encode(wrapped_value, encode_with("msgpack"));
  auto pp = sut.encode(p, encode_with("msgpack"));
  // Assert
  ASSERT_TRUE(pw && pp);
  // The wrapped value is a msgpack string, the plain one an array.
  EXPECT_EQ(static_cast<uint8_t>(pw->frames[0].bytes()[0]) & 0xe0, 0xa0);
  EXPECT_EQ(static_cast<uint8_t>(pp->frames[0].bytes()[0]) & 0xf0, 0x90);
  for (auto& family : structured_families) {
    auto e = sut.encode(wrapped_value, encode_with(family));
    ASSERT_TRUE(e) << family;
    auto x = sut.decode<wrapped<point, point_as_text>>(*e, decode_with(family));
    ASSERT_TRUE(x) << render(x.error());
    EXPECT_EQ(x->value(), p);
  }
}

TEST(customisation, AggregateReflectionCountsAndVisitsFields) {
  static_assert(field_count<point>() == 3);
  static_assert(field_count<shape>() == 3);
  static_assert(field_count<sample>() == 3);
  static_assert(
    std::is_same_v<field_types<point>, std::tuple<int32_t, double, std::string>>);
  point p{1, 2, "three"};
  std::vector<std::string> seen;
  visit_fields(p, [&](auto&... fs) {
    (seen.push_back(detail::type_label<std::remove_cvref_t<decltype(fs)>>()),
     ...);
  });
  visit_fields(p, [](auto& x, auto& y, auto& label) {
    x = 10;
    y = 20;
    label = "changed";
  });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], "int");
  EXPECT_EQ(p, (point{10, 20, "changed"}));
}

struct empty_aggregate {
  friend bool operator==(const empty_aggregate&, const empty_aggregate&)
    = default;
};

struct one_field {
  std::vector<std::string> xs;
  friend bool operator==(const one_field&, const one_field&) = default;
};

struct with_nested {
  one_field inner;
  std::optional<int32_t> maybe;
  std::array<int16_t, 3> arr{};
  friend bool operator==(const with_nested&, const with_nested&) = default;
};

struct many_fields {
  int a0 = 0, a1 = 1, a2 = 2, a3 = 3, a4 = 4, a5 = 5, a6 = 6, a7 = 7, a8 = 8,
      a9 = 9, a10 = 10, a11 = 11, a12 = 12, a13 = 13, a14 = 14, a15 = 15,
      a16 = 16, a17 = 17, a18 = 18, a19 = 19;
  friend bool operator==(const many_fields&, const many_fields&) = default;
};

TEST(customisation, AggregateReflectionHandlesZeroOneNestedAndMany) {
  static_assert(field_count<empty_aggregate>() == 0);
  static_assert(field_count<one_field>() == 1);
  static_assert(field_count<with_nested>() == 3);
  static_assert(field_count<many_fields>() == 20);
  registry sut;
  for (auto& family : {"cereal.binary", "cereal.json", "msgpack"}) {
    auto check = [&](const auto& value) {
      using T = std::remove_cvref_t<decltype(value)>;
      auto p = sut.encode(value, encode_with(family));
      ASSERT_TRUE(p) << family << ": " << render(p.error());
      auto x = sut.decode<T>(*p, decode_with(family));
      ASSERT_TRUE(x) << render(x.error());
      EXPECT_TRUE(*x == value);
    };
    check(empty_aggregate{});
    check(one_field{{"a", "b"}});
    check(with_nested{{{"z"}}, 4, {1, 2, 3}});
    check(many_fields{});
  }
}

TEST(customisation, RegisteredErrorExceptionGivesTheErrorItCarries) {
  // Arrange
  registry sut;
  registry other;
  bool added = sut.register_error_exception<carried_failure>();
  bool again = sut.register_error_exception<carried_failure>();
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json"}) {
    auto p = sut.encode(vanished{42}, encode_with(family));
    ASSERT_TRUE(p) << render(p.error());
    // Act
    auto x = sut.decode<vanished>(*p, decode_with(family));
    auto y = other.decode<vanished>(*p, decode_with(family));
    // Assert: the thrower's error, not decode_failed; registrations belong
    // to one registry.
    ASSERT_FALSE(x) << family;
    EXPECT_EQ(x.error(), caf::sec::runtime_error) << render(x.error());
    EXPECT_NE(render(x.error()).find("object 42 is gone"), std::string::npos)
      << render(x.error());
    ASSERT_FALSE(y) << family;
    EXPECT_EQ(y.error(), errc::decode_failed) << render(y.error());
  }
  EXPECT_TRUE(added);
  EXPECT_FALSE(again);
}

TEST(customisation, CafInspectErrorOfAnotherCategoryKeepsItsCode) {
  // Arrange
  registry sut;
  auto own = sut.encode(vanished_in_caf{42, false}, encode_with("caf"));
  auto cafs = sut.encode(vanished_in_caf{42, true}, encode_with("caf"));
  ASSERT_TRUE(own) << render(own.error());
  ASSERT_TRUE(cafs) << render(cafs.error());
  // Act
  auto x = sut.decode<vanished_in_caf>(*own, decode_with("caf"));
  auto y = sut.decode<vanished_in_caf>(*cafs, decode_with("caf"));
  // Assert: an error of the type's own category (the store's, say) is
  // passed on as it is; CAF's own errors become decode_failed with the text.
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error().category(), caf::atom("test_sto")) << render(x.error());
  EXPECT_EQ(x.error().code(), 42);
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::decode_failed) << render(y.error());
  EXPECT_NE(render(y.error()).find("not a store error"), std::string::npos)
    << render(y.error());
}

} // namespace
} // namespace ferry::serializers::test
