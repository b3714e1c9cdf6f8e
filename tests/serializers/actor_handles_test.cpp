// Actor handles inside messages (actor_handles.hpp): one suite over every
// family that carries them, with a real actor system and a test hook that
// maps ids to actors; the wire form of a token per family; the errors
// without a hook and from the hook; raw's refusal; hostile tokens.

#include "actor_handles_test.hpp"

namespace ferry::serializers::test {
namespace {

template <class Family>
class actor_handles : public handle_fixture {
protected:
  /// Encodes `x` with the family under the hook, sends it over the wire,
  /// decodes it under the hook and returns the value.
  template <class T>
  T roundtrip(const T& x) {
    handle_scope scope{hook};
    auto p = sut.encode(x, encode_with(Family::name));
    EXPECT_TRUE(p) << (p ? "" : render(p.error()));
    if (!p)
      return T{};
    EXPECT_EQ(p->header.family, Family::name);
    auto wire = over_the_wire(*p);
    EXPECT_TRUE(wire);
    auto y = sut.decode<T>(*wire, decode_with(Family::name));
    EXPECT_TRUE(y) << (y ? "" : render(y.error()));
    return y ? std::move(*y) : T{};
  }

  /// Decodes the frame `bytes` as a caf::actor of this family under the hook.
  caf::expected<caf::actor> decode_token_bytes(std::vector<std::byte> bytes) {
    handle_scope scope{hook};
    auto p = make_payload(Family::name, "caf::actor", std::move(bytes));
    return sut.decode<caf::actor>(p, decode_with(Family::name));
  }
};

TYPED_TEST_SUITE(actor_handles, handle_families);

TYPED_TEST(actor_handles, TopLevelHandlesComeBackAsTheSameActor) {
  EXPECT_EQ(this->roundtrip(this->first), this->first);
  EXPECT_EQ(this->roundtrip(caf::actor_cast<caf::actor_addr>(this->second)),
            caf::actor_cast<caf::actor_addr>(this->second));
  EXPECT_EQ(
    this->roundtrip(caf::actor_cast<caf::strong_actor_ptr>(this->first)),
    caf::actor_cast<caf::strong_actor_ptr>(this->first));
  EXPECT_EQ(this->roundtrip(this->typed), this->typed);
  EXPECT_EQ(this->hook.saves, 4u);
  EXPECT_EQ(this->hook.loads, 4u);
}

TYPED_TEST(actor_handles, TheTokenHasTheFamilysWireForm) {
  handle_scope scope{this->hook};
  auto p = this->sut.encode(this->second, encode_with(TypeParam::name));
  ASSERT_TRUE(p) << render(p.error());
  ASSERT_EQ(p->frames.size(), 1u);
  auto bytes = p->frames[0].bytes();
  std::vector<std::byte> got(bytes.begin(), bytes.end());
  if constexpr (TypeParam::text) {
    std::string text(reinterpret_cast<const char*>(got.data()), got.size());
    EXPECT_NE(text.find("\"kind\": 1"), std::string::npos) << text;
    EXPECT_NE(text.find("\"id\": 202"), std::string::npos) << text;
  } else {
    EXPECT_EQ(got, TypeParam::token(1, second_id));
  }
}

TYPED_TEST(actor_handles, HandlesInAggregatesAndContainersComeBack) {
  auto h = holder{"h",
                  this->first,
                  caf::actor_cast<caf::actor_addr>(this->second),
                  7,
                  {this->second, caf::actor{}, this->first}};
  auto got = this->roundtrip(h);
  EXPECT_EQ(got, h);
  EXPECT_EQ(got.workers[1], caf::actor{});
  std::vector<caf::actor> xs{this->second, this->first, this->second};
  EXPECT_EQ(this->roundtrip(xs), xs);
  std::map<std::string, caf::actor> named{{"a", this->first},
                                          {"b", this->second}};
  EXPECT_EQ(this->roundtrip(named), named);
  std::vector<holder> many{h, holder{"e", {}, {}, 0, {}}};
  EXPECT_EQ(this->roundtrip(many), many);
}

TYPED_TEST(actor_handles, OptionalHandlesComeBackWhereExpressible) {
  std::optional<caf::actor> some{this->second};
  if constexpr (TypeParam::optionals) {
    EXPECT_EQ(this->roundtrip(some), some);
    EXPECT_EQ(this->roundtrip(std::optional<caf::actor>{}),
              std::optional<caf::actor>{});
  } else {
    handle_scope scope{this->hook};
    auto p = this->sut.encode(some, encode_with(TypeParam::name));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::no_family_can_encode);
  }
}

TYPED_TEST(actor_handles, NullHandlesTravelWithoutAHook) {
  holder h;
  h.workers.resize(2);
  auto p = this->sut.encode(h, encode_with(TypeParam::name));
  ASSERT_TRUE(p) << render(p.error());
  auto y = this->sut.template decode<holder>(*p, decode_with(TypeParam::name));
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, h);
  EXPECT_EQ(this->hook.saves + this->hook.loads, 0u);
  if constexpr (!TypeParam::text) {
    auto q = this->sut.encode(caf::actor{}, encode_with(TypeParam::name));
    ASSERT_TRUE(q);
    auto bytes = q->frames[0].bytes();
    EXPECT_EQ(std::vector<std::byte>(bytes.begin(), bytes.end()),
              TypeParam::token(0, 0));
  }
}

TYPED_TEST(actor_handles, EncodingAHandleWithoutAHookIsRefused) {
  auto p = this->sut.encode(holder{"h", this->first, {}, 1, {}},
                            encode_with(TypeParam::name));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), errc::actor_handle_without_link);
  auto text = render(p.error());
  EXPECT_NE(text.find("node::remote_actor"), std::string::npos) << text;
  EXPECT_NE(text.find("caf::actor"), std::string::npos) << text;
  EXPECT_NE(text.find(TypeParam::name), std::string::npos) << text;
}

TYPED_TEST(actor_handles, DecodingAHandleWithoutAHookIsRefused) {
  caf::expected<payload> p = caf::error{};
  {
    handle_scope scope{this->hook};
    p = this->sut.encode(this->first, encode_with(TypeParam::name));
  }
  ASSERT_TRUE(p) << render(p.error());
  auto y =
    this->sut.template decode<caf::actor>(*p, decode_with(TypeParam::name));
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::actor_handle_without_link);
  EXPECT_NE(render(y.error()).find("node::remote_actor"), std::string::npos);
}

TYPED_TEST(actor_handles, TheHooksErrorsFailTheCallWithTheirText) {
  handle_scope scope{this->hook};
  auto stranger = this->spawn_plain();
  auto p = this->sut.encode(std::vector<caf::actor>{this->first, stranger},
                            encode_with(TypeParam::name));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), hook_errc::unknown_actor);
  EXPECT_NE(caf::to_string(p.error()).find("not in the test map"),
            std::string::npos);
  // Kinds are the hook's business: the family hands kind 9 to it.
  auto y = this->decode_token_bytes(TypeParam::token(9, second_id));
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), hook_errc::unknown_kind);
  EXPECT_EQ(this->hook.last_loaded, (handle_token{9, second_id}));
  caf::anon_send_exit(stranger, caf::exit_reason::kill);
}

TYPED_TEST(actor_handles, AGoneActorArrivesAsANullHandle) {
  auto y = this->decode_token_bytes(TypeParam::token(1, gone_id));
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, caf::actor{});
}

TYPED_TEST(actor_handles, KindZeroWithAnIdIsRefusedAsCorrupt) {
  auto y = this->decode_token_bytes(TypeParam::token(0, 5));
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::malformed_frame);
  EXPECT_EQ(this->hook.loads, 0u);
}

TYPED_TEST(actor_handles, TruncatedTokensAreRefused) {
  auto whole = TypeParam::token(1, second_id);
  for (size_t n = 0; n < whole.size(); ++n) {
    auto y = this->decode_token_bytes({whole.begin(), whole.begin() + n});
    EXPECT_FALSE(y) << n << " bytes";
  }
  auto y = this->decode_token_bytes(whole);
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, this->second);
}

class actor_handles_by_family : public handle_fixture {};

TEST_F(actor_handles_by_family,
       CerealAndMsgpackCarryHandlesInTypesWithOwnCode) {
  handle_scope scope{hook};
  worker_ref x{second, 3};
  for (auto fam :
       {"cereal.binary", "cereal.portable", "cereal.json", "msgpack"}) {
    auto p = sut.encode(x, encode_with(fam));
    ASSERT_TRUE(p) << fam << ": " << render(p.error());
    auto y = sut.decode<worker_ref>(*p, decode_with(fam));
    ASSERT_TRUE(y) << fam << ": " << render(y.error());
    EXPECT_EQ(*y, x) << fam;
  }
}

TEST_F(actor_handles_by_family, CafRefusesHandlesInTypesWithOwnInspect) {
  handle_scope scope{hook};
  auto p = sut.encode(worker_ref{second, 3}, encode_with("caf"));
  ASSERT_FALSE(p);
  // The only family of the list refused: its reason is in the text.
  EXPECT_EQ(p.error(), errc::no_family_can_encode);
  auto text = render(p.error());
  EXPECT_NE(text.find("actor_handle_unsupported: encoding "
                      "ferry::serializers::test::worker_ref with family caf"),
            std::string::npos)
    << text;
  EXPECT_NE(text.find("Send this type with cereal.binary, cereal.portable, "
                      "cereal.json or msgpack"),
            std::string::npos)
    << text;
  EXPECT_EQ(hook.saves, 0u);
}

TEST_F(actor_handles_by_family, CafFallsBackToTheNextFamilyForOwnInspect) {
  handle_scope scope{hook};
  encode_options eo;
  eo.serializers = {"caf", "msgpack"};
  worker_ref x{first, 9};
  auto p = sut.encode(x, eo);
  ASSERT_TRUE(p) << render(p.error());
  EXPECT_EQ(p->header.family, "msgpack");
  auto y = sut.decode<worker_ref>(*p, decode_with("msgpack"));
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, x);
}

TEST_F(actor_handles_by_family, CafDecodingHandlesInOwnInspectIsRefused) {
  // CAF's own form of a handle inside a type with its own inspect: the
  // actor id, the node id (none: the atom ""), then the type's int.
  sut.add_type<worker_ref>("worker_ref");
  std::vector<std::byte> bytes;
  append(bytes, first_id, true);
  append(bytes, static_cast<uint64_t>(caf::atom("")), true);
  for (auto b : {0, 0, 0, 3})
    bytes.push_back(static_cast<std::byte>(b));
  handle_scope scope{hook};
  auto y = sut.decode<worker_ref>(make_payload("caf", "worker_ref", bytes),
                                  decode_with("caf"));
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::actor_handle_unsupported) << render(y.error());
  EXPECT_EQ(hook.loads, 0u);
}

TEST_F(actor_handles_by_family, RawRefusesHandlesNamingTheType) {
  handle_scope scope{hook};
  auto p = sut.encode(first, encode_with("raw"));
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), errc::no_family_can_encode);
  auto text = render(p.error());
  EXPECT_NE(text.find("caf::actor holds an actor handle"), std::string::npos)
    << text;
  EXPECT_NE(text.find("raw cannot carry"), std::string::npos) << text;
  auto q = sut.encode(holder{}, encode_with("raw"));
  ASSERT_FALSE(q);
  EXPECT_NE(render(q.error()).find("holder holds an actor handle"),
            std::string::npos)
    << render(q.error());
  EXPECT_EQ(hook.saves, 0u);
}

TEST_F(actor_handles_by_family, AMissingHookIsNotRetriedWithTheNextFamily) {
  encode_options eo;
  eo.serializers = {"caf", "msgpack", "cereal.binary"};
  auto p = sut.encode(std::vector<caf::actor>{first}, eo);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), errc::actor_handle_without_link);
  EXPECT_NE(render(p.error()).find("family caf"), std::string::npos);
}

TEST_F(actor_handles_by_family, ScopesNestAndRestoreThePreviousHook) {
  EXPECT_EQ(handle_scope::current(), nullptr);
  map_hook inner;
  {
    handle_scope outer_scope{hook};
    EXPECT_EQ(handle_scope::current(), &hook);
    {
      handle_scope inner_scope{inner};
      EXPECT_EQ(handle_scope::current(), &inner);
    }
    EXPECT_EQ(handle_scope::current(), &hook);
  }
  EXPECT_EQ(handle_scope::current(), nullptr);
}

TEST_F(actor_handles_by_family, JsonKindsBeyondAByteAreRefused) {
  handle_scope scope{hook};
  std::string text = "{\"value0\": {\"kind\": 257, \"id\": 202}}";
  auto p = reinterpret_cast<const std::byte*>(text.data());
  auto y = sut.decode<caf::actor>(
    make_payload("cereal.json", "caf::actor", {p, p + text.size()}),
    decode_with("cereal.json"));
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::malformed_frame);
  EXPECT_EQ(hook.loads, 0u);
}

TEST_F(actor_handles_by_family, MsgpackTokensOfAnotherShapeAreRefused) {
  handle_scope scope{hook};
  for (auto bytes : {bytes_of({0x91, 0x01}), bytes_of({0x92, 0xff, 0x01}),
                     bytes_of({0x92, 0x01, 0xa1, 0x41}),
                     bytes_of({0x92, 0xcd, 0x01, 0x00, 0x01})}) {
    auto y = sut.decode<caf::actor>(
      make_payload("msgpack", "caf::actor", bytes), decode_with("msgpack"));
    ASSERT_FALSE(y);
    EXPECT_EQ(y.error(), errc::malformed_frame) << render(y.error());
  }
  EXPECT_EQ(hook.loads, 0u);
}

} // namespace
} // namespace ferry::serializers::test
