// The registry: choosing a family, the allowlist, type-erased calls, type
// names, families added at run time, encode and decode plans, concurrency.
// The types of caf::message elements: registry_element_type_test.cpp.

#include "test_types.hpp"

#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <typeindex>

namespace ferry::serializers::test {
namespace {

TEST(registry, FirstFamilyThatCanEncodeIsUsed) {
  registry sut;
  encode_options opts;
  opts.serializers = {"raw", "msgpack", "cereal.binary"};
  auto structured = sut.encode(point{1, 2, "p"}, opts);
  auto plain = sut.encode(sample{1, 2, {}}, opts);
  auto variant = sut.encode(std::variant<int32_t, std::string>{"v"}, opts);
  ASSERT_TRUE(structured && plain && variant);
  EXPECT_EQ(structured->header.family, "msgpack");
  EXPECT_EQ(plain->header.family, "raw");
  EXPECT_EQ(variant->header.family, "cereal.binary");
}

TEST(registry, NoFamilyErrorNamesTypeEachFamilyAndFixes) {
  registry sut;
  sut.add_type<std::variant<int32_t, std::string>>("choice");
  encode_options opts;
  opts.serializers = {"msgpack", "caf", "made.up"};
  auto p = sut.encode(std::variant<int32_t, std::string>{1}, opts);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), errc::no_family_can_encode);
  auto text = render(p.error());
  for (auto word : {"choice", "msgpack: ", "caf: ", "made.up: unknown family",
                    "std::variant", "Fixes", "inspect_serializability"})
    EXPECT_NE(text.find(word), std::string::npos) << word << " in " << text;
}

TEST(registry, EmptyPreferenceListIsAnError) {
  registry sut;
  encode_options opts;
  opts.serializers.clear();
  auto p = sut.encode(1, opts);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), errc::no_family_can_encode);
}

TEST(registry, FamilyOutsideTheAllowlistIsRefusedWithTheFix) {
  registry sut;
  sut.add_type<point>("point");
  auto p = sut.encode(point{}, encode_with("cereal.json"));
  ASSERT_TRUE(p);
  decode_options opts;
  opts.deserializers = {"msgpack", "cereal.binary"};
  auto x = sut.decode<point>(*p, opts);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::family_not_allowed);
  auto text = render(x.error());
  for (auto word : {"cereal.json", "[msgpack, cereal.binary]", "point",
                    "deserializers"})
    EXPECT_NE(text.find(word), std::string::npos) << word << " in " << text;
}

TEST(registry, TypeErasedEncodeMatchesTypedEncode) {
  registry sut;
  sut.add_type<shape>("shape");
  shape s{"sq", {{1, 1, "a"}}, {{"k", 1}}};
  auto typed = sut.encode(s, encode_with("cereal.binary"));
  auto erased = sut.encode(std::type_index{typeid(shape)}, &s,
                           encode_with("cereal.binary"));
  ASSERT_TRUE(typed && erased);
  EXPECT_EQ(typed->header, erased->header);
  auto a = typed->frames[0].bytes();
  auto b = erased->frames[0].bytes();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  EXPECT_EQ(erased->header.type_name, "shape");
}

TEST(registry, TypeErasedEncodeOfAnUnaddedTypeIsUnknownType) {
  registry sut;
  point p;
  auto x = sut.encode(std::type_index{typeid(point)}, &p,
                      encode_with("cereal.binary"));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::unknown_type);
  EXPECT_NE(render(x.error()).find("add_type"), std::string::npos);
}

TEST(registry, DecodeMessageBuildsTheRegisteredType) {
  registry sut;
  sut.add_type<account>("account");
  auto p = sut.encode(account{"m", 3}, encode_with("caf"));
  ASSERT_TRUE(p);
  auto msg = sut.decode_message(*p, decode_with("caf"));
  ASSERT_TRUE(msg) << render(msg.error());
  ASSERT_TRUE(msg->match_elements<account>());
  EXPECT_EQ(msg->get_as<account>(0), (account{"m", 3}));
  auto unknown = make_payload("caf", "nobody", {});
  auto y = sut.decode_message(unknown, decode_with("caf"));
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::unknown_type);
}

TEST(registry, AddTypeKeepsTheFirstNameAndReportsConflicts) {
  registry sut;
  EXPECT_FALSE(sut.try_add_type<point>("point"));
  EXPECT_FALSE(sut.try_add_type<point>("point"));
  EXPECT_EQ(sut.try_add_type<point>("other"), errc::type_name_taken);
  EXPECT_EQ(sut.try_add_type<shape>("point"), errc::type_name_taken);
  EXPECT_EQ(sut.type_name(typeid(point)), std::optional<std::string>{"point"});
  EXPECT_EQ(sut.type_name(typeid(shape)), std::nullopt);
}

TEST(registry, HasTypeAnswersByRegisteredNameOnly) {
  // Arrange
  registry sut;
  sut.add_type<point>("point");
  // Act
  auto refused = sut.try_add_type<shape>("point");
  auto renamed = sut.try_add_type<point>("other");
  // Assert
  EXPECT_EQ(refused, errc::type_name_taken);
  EXPECT_EQ(renamed, errc::type_name_taken);
  EXPECT_TRUE(sut.has_type("point"));
  EXPECT_FALSE(sut.has_type("other"));
  EXPECT_FALSE(sut.has_type("Point"));
  EXPECT_FALSE(sut.has_type("poin"));
  EXPECT_FALSE(sut.has_type(""));
}

TEST(registry, CanEncodeAnswersPerFamilyAndType) {
  registry sut;
  sut.add_type<point>("point");
  sut.add_type<sample>("sample");
  EXPECT_TRUE(sut.can_encode("msgpack", typeid(point)));
  EXPECT_FALSE(sut.can_encode("raw", typeid(point)));
  EXPECT_TRUE(sut.can_encode("raw", typeid(sample)));
  EXPECT_FALSE(sut.can_encode("made.up", typeid(point)));
  EXPECT_FALSE(sut.can_encode("msgpack", typeid(shape)));
}

TEST(registry, FamiliesListsBuiltinsThenRegistered) {
  registry sut;
  auto before = sut.families();
  ASSERT_FALSE(sut.register_family("custom.v1",
                                   std::make_shared<function_family>()));
  auto after = sut.families();
  EXPECT_EQ(before, (std::vector<std::string>{"cereal.binary",
                                              "cereal.portable", "cereal.json",
                                              "msgpack", "caf", "raw"}));
  ASSERT_EQ(after.size(), 7u);
  EXPECT_EQ(after.back(), "custom.v1");
}

/// A family that writes a point as text and records the context it saw;
/// `picky` makes it refuse points with a negative x.
std::shared_ptr<function_family> make_text_family(std::shared_ptr<context> seen,
                                                  bool picky = false) {
  auto f = std::make_shared<function_family>();
  f->add<point>(
    [seen, picky](const point& p, const context& ctx)
      -> caf::expected<std::vector<frame>> {
      *seen = ctx;
      if (picky && p.x < 0)
        return caf::make_error(errc::encode_failed, "negative x");
      auto text = std::to_string(p.x) + ";" + p.label;
      std::vector<std::byte> bytes(text.size());
      std::memcpy(bytes.data(), text.data(), text.size());
      std::vector<frame> frames;
      frames.emplace_back(std::move(bytes));
      return frames;
    },
    [seen](std::span<const frame> frames, const context& ctx,
           const limits&) -> caf::expected<point> {
      *seen = ctx;
      if (frames.size() != 1)
        return caf::make_error(errc::malformed_frame, "one frame expected");
      auto b = frames[0].bytes();
      std::string text(reinterpret_cast<const char*>(b.data()), b.size());
      auto semi = text.find(';');
      if (semi == std::string::npos)
        return caf::make_error(errc::malformed_frame, "no ';'");
      return point{std::stoi(text.substr(0, semi)), 0, text.substr(semi + 1)};
    });
  return f;
}

TEST(registry, RegisteredFamilyEncodesAndDecodesWithContext) {
  // Arrange
  registry sut;
  auto seen = std::make_shared<context>();
  ASSERT_FALSE(sut.register_family("text.v1", make_text_family(seen)));
  auto eopts = encode_with("text.v1");
  eopts.context = {"alice", "bob", "main", true};
  auto dopts = decode_with("text.v1");
  dopts.context = {"alice", "bob", "back", false};
  // Act
  auto p = sut.encode(point{5, 0, "five"}, eopts);
  ASSERT_TRUE(p) << render(p.error());
  auto sent = *seen;
  auto x = sut.decode<point>(*p, dopts);
  // Assert
  ASSERT_TRUE(x) << render(x.error());
  EXPECT_EQ(*x, (point{5, 0, "five"}));
  EXPECT_EQ(p->header.family, "text.v1");
  EXPECT_EQ(sent.link, "main");
  EXPECT_TRUE(sent.same_host);
  EXPECT_EQ(seen->link, "back");
  EXPECT_EQ(seen->recipient, "bob");
  EXPECT_TRUE(sut.can_encode("text.v1", typeid(point)) == false);
  sut.add_type<point>("point");
  EXPECT_TRUE(sut.can_encode("text.v1", typeid(point)));
}

TEST(registry, FamilyThrowingAnythingGivesAnErrorNamingTheFamily) {
  // Arrange: a family whose functions throw something that is not a
  // std::exception (user code may).
  registry sut;
  sut.add_type<point>("point");
  auto f = std::make_shared<function_family>();
  f->add<point>(
    [](const point&, const context&) -> caf::expected<std::vector<frame>> {
      throw 42;
    },
    [](std::span<const frame>, const context&,
       const limits&) -> caf::expected<point> { throw 43; });
  ASSERT_FALSE(sut.register_family("throws.v1", f));
  ASSERT_FALSE(sut.register_family("text.v1",
                                   make_text_family(std::make_shared<context>())));
  auto sent = sut.encode(point{1, 0, "one"}, encode_with("text.v1"));
  ASSERT_TRUE(sent);
  sent->header.family = "throws.v1";
  // Act
  auto enc = sut.encode(point{1, 0, "one"}, encode_with("throws.v1"));
  auto dec = sut.decode<point>(*sent, decode_with("throws.v1"));
  // Assert
  ASSERT_FALSE(enc);
  EXPECT_EQ(enc.error(), errc::no_family_can_encode);
  EXPECT_NE(render(enc.error()).find("throws.v1: threw: an exception that is "
                                     "not a std::exception"),
            std::string::npos)
    << render(enc.error());
  ASSERT_FALSE(dec);
  EXPECT_EQ(dec.error(), errc::decode_failed);
  EXPECT_NE(render(dec.error()).find("with family throws.v1 threw"),
            std::string::npos)
    << render(dec.error());
}

// -- plans ---------------------------------------------------------------------

/// A family that encodes points with x >= 0 only.
std::shared_ptr<function_family> make_picky_family() {
  return make_text_family(std::make_shared<context>(), true);
}

/// The payload a plan makes of `x`: its frames under the plan's header.
payload planned_payload(const registry& sut, const registry::encode_plan& plan,
                        const point& x, const encode_options& opts) {
  auto frames = sut.encode(plan, &x, opts, nullptr);
  EXPECT_TRUE(frames) << render(frames.error());
  payload result;
  auto header = decode_header(encode_header(plan.header_key(), *frames),
                              limits{});
  EXPECT_TRUE(header) << render(header.error());
  result.header = *header;
  result.frames = std::move(*frames);
  return result;
}

TEST(registry, EncodePlanMakesWhatEncodeMakes) {
  // Arrange
  registry sut;
  sut.add_type<point>("point");
  auto opts = encode_with("made.up");
  opts.serializers.push_back("cereal.binary");
  point x{3, 1.5, "three"};
  // Act
  auto plan = sut.plan_encode(typeid(point), opts);
  ASSERT_TRUE(plan);
  auto sut_payload = planned_payload(sut, *plan, x, opts);
  auto general = sut.encode(x, opts);
  // Assert
  ASSERT_TRUE(general) << render(general.error());
  EXPECT_EQ(plan->family(), "cereal.binary");
  EXPECT_EQ(sut_payload.header, general->header);
  ASSERT_EQ(sut_payload.frames.size(), general->frames.size());
  for (size_t i = 0; i < general->frames.size(); ++i) {
    auto a = sut_payload.frames[i].bytes();
    auto b = general->frames[i].bytes();
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << i;
  }
}

TEST(registry, DecodePlanDecodesPayloadsByTheirFrameSizesAlone) {
  // Arrange
  registry sut;
  sut.add_type<point>("point");
  auto p = sut.encode(point{4, 2.5, "four"}, encode_with("msgpack"));
  ASSERT_TRUE(p) << render(p.error());
  auto opts = decode_with("msgpack");
  auto plan = sut.plan_decode(p->header, opts);
  ASSERT_TRUE(plan) << render(plan.error());
  // The plan stands for the names: a payload without them decodes alike.
  payload bare;
  bare.header.frame_sizes = p->header.frame_sizes;
  bare.frames = p->frames;
  // Act
  auto msg = sut.decode_message(*plan, std::move(bare), opts);
  // Assert
  ASSERT_TRUE(msg) << render(msg.error());
  EXPECT_EQ(plan->family(), "msgpack");
  ASSERT_TRUE(msg->match_elements<point>());
  EXPECT_EQ(msg->get_as<point>(0), (point{4, 2.5, "four"}));
}

TEST(registry, DecodePlanOfAFaultyPayloadStillChecksItsFrames) {
  registry sut;
  sut.add_type<point>("point");
  auto p = sut.encode(point{4, 2.5, "four"}, encode_with("msgpack"));
  ASSERT_TRUE(p);
  auto opts = decode_with("msgpack");
  auto plan = sut.plan_decode(p->header, opts);
  ASSERT_TRUE(plan);
  payload missing;
  missing.header.frame_sizes = p->header.frame_sizes;
  EXPECT_EQ(sut.decode_message(*plan, std::move(missing), opts).error(),
            errc::frame_mismatch);
  payload garbage;
  garbage.header.frame_sizes = {3};
  garbage.frames.emplace_back(std::vector<std::byte>(3, std::byte{0xc1}));
  EXPECT_FALSE(sut.decode_message(*plan, std::move(garbage), opts));
}

TEST(registry, DecodePlanRefusesWhatDecodeMessageRefuses) {
  registry sut;
  sut.add_type<point>("point");
  auto p = sut.encode(point{}, encode_with("cereal.json"));
  ASSERT_TRUE(p);
  EXPECT_EQ(sut.plan_decode(p->header, decode_with("msgpack")).error(),
            errc::family_not_allowed);
  auto unknown_type = p->header;
  unknown_type.type_name = "nobody";
  EXPECT_EQ(sut.plan_decode(unknown_type, decode_with("cereal.json")).error(),
            errc::unknown_type);
  auto unknown_family = p->header;
  unknown_family.family = "made.up";
  EXPECT_EQ(sut.plan_decode(unknown_family, decode_with("made.up")).error(),
            errc::unknown_family);
  auto other_version = p->header;
  other_version.version = 2;
  EXPECT_EQ(sut.plan_decode(other_version, decode_with("cereal.json")).error(),
            errc::version_mismatch);
}

TEST(registry, NoEncodePlanWhereEncodeDecidesPerValue) {
  // (A type with a registered stand-in: customisation_test.)
  registry sut;
  sut.add_type<std::variant<int32_t, std::string>>("choice");
  EXPECT_FALSE(sut.plan_encode(typeid(shape), encode_with("msgpack")))
    << "a type never added";
  EXPECT_FALSE(sut.plan_encode(typeid(std::variant<int32_t, std::string>),
                               encode_with("msgpack")))
    << "no family of the list can encode the type";
}

TEST(registry, PlannedEncodeLeavesAValueItsFamilyRefusesToEncode) {
  // Arrange: the first family refuses negative x, the second takes any.
  registry sut;
  sut.add_type<point>("point");
  ASSERT_FALSE(sut.register_family("picky.v1", make_picky_family()));
  auto opts = encode_with("picky.v1");
  opts.serializers.push_back("cereal.binary");
  auto plan = sut.plan_encode(typeid(point), opts);
  ASSERT_TRUE(plan);
  point negative{-1, 0, "minus"};
  // Act
  auto planned = sut.encode(*plan, &negative, opts, nullptr);
  auto general = sut.encode(negative, opts);
  // Assert
  EXPECT_EQ(plan->family(), "picky.v1");
  ASSERT_FALSE(planned);
  EXPECT_EQ(planned.error(), errc::encode_failed);
  ASSERT_TRUE(general) << render(general.error());
  EXPECT_EQ(general->header.family, "cereal.binary");
}

TEST(registry, GenerationCountsEveryChangeAndNothingElse) {
  registry sut;
  auto start = sut.generation();
  sut.add_type<point>("point");
  auto added = sut.generation();
  sut.add_type<point>("point");
  auto again = sut.generation();
  ASSERT_FALSE(sut.register_family("picky.v1", make_picky_family()));
  auto registered = sut.generation();
  EXPECT_GT(added, start);
  EXPECT_EQ(again, added);
  EXPECT_GT(registered, again);
  auto plan = sut.plan_encode(typeid(point), encode_with("picky.v1"));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->generation(), registered);
  EXPECT_TRUE(sut.deregister_family("picky.v1"));
  EXPECT_NE(sut.generation(), plan->generation());
}

TEST(registry, RegisterFamilyRulesAreIdempotentAndExclusive) {
  registry sut;
  auto f = std::make_shared<function_family>();
  auto g = std::make_shared<function_family>();
  EXPECT_FALSE(sut.register_family("f", f));
  EXPECT_FALSE(sut.register_family("f", f));
  EXPECT_EQ(sut.register_family("f", g), errc::family_exists);
  EXPECT_EQ(sut.register_family("msgpack", g), errc::family_exists);
  EXPECT_EQ(sut.register_family("has space", g), errc::family_exists);
  EXPECT_TRUE(sut.deregister_family("f"));
  EXPECT_FALSE(sut.deregister_family("f"));
  EXPECT_FALSE(sut.register_family("f", g));
}

TEST(registry, ConcurrentEncodeDecodeDuringRegistrations) {
  // Arrange
  registry sut;
  sut.add_type<point>("point");
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<int> rounds{0};
  auto worker = [&] {
    while (!stop) {
      auto p = sut.encode(point{1, 2, "c"}, encode_with("cereal.binary"));
      if (!p) {
        ++failures;
        continue;
      }
      auto x = sut.decode<point>(*p, decode_with("cereal.binary"));
      if (!x || *x != point{1, 2, "c"})
        ++failures;
      ++rounds;
    }
  };
  // Act
  std::thread a{worker};
  std::thread b{worker};
  for (int i = 0; i < 200; ++i) {
    std::string name = "f";
    name += std::to_string(i);
    (void) sut.register_family(name, std::make_shared<function_family>());
    sut.register_serializer<legacy_id>(
      [](const legacy_id& x) { return x.ns(); },
      [](std::string s) { return legacy_id{s, 0}; });
    sut.deregister_serializer<legacy_id>();
    sut.deregister_family(name);
  }
  while (rounds < 100)
    std::this_thread::yield();
  stop = true;
  a.join();
  b.join();
  // Assert
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(sut.families().size(), 6u);
}

} // namespace
} // namespace ferry::serializers::test
