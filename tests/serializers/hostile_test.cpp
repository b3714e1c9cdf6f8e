// Hostile input: lengths are never trusted, every fault is a typed error.

#include "test_types.hpp"

#include <cstring>
#include <deque>
#include <forward_list>
#include <limits>
#include <list>
#include <random>

namespace ferry::serializers::test {
namespace {

/// A recursive type with its own serialization in every family.
struct tree {
  std::vector<tree> kids;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(kids);
  }

  MSGPACK_DEFINE(kids)

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, tree& x) {
    return f(x.kids);
  }
};

/// Shared pointers of two types.
struct two_kinds {
  std::shared_ptr<node> a;
  std::shared_ptr<point> b;
};

/// A collection of members with frames of their own.
struct byte_columns {
  std::vector<separate<std::vector<uint8_t>>> columns;
};

/// An enum without a fixed underlying type: only 0 and 1 are its values.
enum legacy_switch { legacy_off, legacy_on };

struct with_legacy_switch {
  legacy_switch state = legacy_off;
};

/// An enum with a fixed underlying type: every uint8_t is one of its values.
enum class level : uint8_t { low, high };

struct with_level {
  level value = level::low;
};

/// 4 KiB per element, for inputs that claim many elements cheaply.
using big_element = std::array<double, 512>;

/// An aggregate holding a bit vector.
struct flag_row {
  int32_t id = 0;
  std::vector<bool> bits;
  friend bool operator==(const flag_row&, const flag_row&) = default;
};

void append_u64(std::vector<std::byte>& out, uint64_t x) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::byte>((x >> (8 * i)) & 0xff));
}

void append_u32(std::vector<std::byte>& out, uint32_t x) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<std::byte>((x >> (8 * i)) & 0xff));
}

/// Returns the registered name ferry uses for `T` in `sut`.
template <class T>
std::string name_in(const registry& sut) {
  auto p = sut.encode(T{}, encode_with("cereal.binary"));
  return p ? p->header.type_name : std::string{};
}

bool is_typed_decode_error(const caf::error& err) {
  if (err.category() != caf::atom("ferry_ser"))
    return false;
  auto code = static_cast<errc>(err.code());
  return code == errc::truncated_frame || code == errc::malformed_frame
         || code == errc::length_out_of_range
         || code == errc::allocation_limit_exceeded
         || code == errc::decode_failed || code == errc::trailing_bytes
         || code == errc::nesting_too_deep || code == errc::frame_mismatch
         || code == errc::inexact_value || code == errc::invalid_text
         || code == errc::duplicate_key || code == errc::member_mismatch
         || code == errc::unused_frame;
}

class hostile : public ::testing::Test {
protected:
  registry sut;

  template <class T>
  caf::expected<T> decode_bytes(const std::string& family,
                                std::vector<std::byte> bytes,
                                const limits& lim = {}) {
    auto p = make_payload(family, name_in<T>(sut), std::move(bytes));
    auto opts = decode_with(family);
    opts.limits = lim;
    return sut.decode<T>(p, opts);
  }
};

TEST_F(hostile, CerealBinaryClaimOf2To60ElementsIsRefusedWithoutAllocating) {
  std::vector<std::byte> bytes;
  append_u64(bytes, uint64_t{1} << 60);
  auto x = decode_bytes<std::vector<double>>("cereal.binary", bytes);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::length_out_of_range);
  EXPECT_NE(render(x.error()).find("cereal.binary"), std::string::npos);
  EXPECT_NE(render(x.error()).find("offset"), std::string::npos);
}

TEST_F(hostile, CerealPortableClaimOf2To60ElementsIsRefused) {
  std::vector<std::byte> bytes{std::byte{1}};
  append_u64(bytes, uint64_t{1} << 60);
  auto x = decode_bytes<std::string>("cereal.portable", bytes);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::length_out_of_range);
}

TEST_F(hostile, SplitArrayWhoseSizeTagDisagreesWithItsFrameIsRefused) {
  // Arrange: a split payload (size tag, elements) whose tag claims more
  // elements than frame 1 holds, and one with bytes after the tag.
  std::vector<std::byte> tag;
  append_u64(tag, 1000);
  auto p = make_payload("cereal.binary", name_in<std::vector<double>>(sut),
                        tag);
  p.frames.emplace_back(std::vector<std::byte>(999 * sizeof(double)));
  p.header.frame_sizes.push_back(999 * sizeof(double));
  auto trailing = p;
  auto longer = tag;
  longer.push_back(std::byte{0});
  trailing.frames[0] = frame{longer};
  trailing.header.frame_sizes[0] = longer.size();
  // Act
  auto x = sut.decode<std::vector<double>>(p, decode_with("cereal.binary"));
  auto y = sut.decode<std::vector<double>>(trailing,
                                           decode_with("cereal.binary"));
  // Assert
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::frame_mismatch);
  EXPECT_NE(render(x.error()).find("frame 1"), std::string::npos)
    << render(x.error());
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::trailing_bytes);
}

TEST_F(hostile, SplitJsonPayloadWithABadHeadIsRefused) {
  // Arrange: two-frame cereal.json payloads of a std::vector<float> whose
  // JSON head claims more elements than frame 1 holds, another element
  // size, lacks a field, is not JSON, or nests past the depth limit.
  auto make = [&](const std::string& head, size_t body) {
    std::vector<std::byte> text(head.size());
    std::memcpy(text.data(), head.data(), head.size());
    auto p = make_payload("cereal.json", name_in<std::vector<float>>(sut),
                          std::move(text));
    p.frames.emplace_back(std::vector<std::byte>(body));
    p.header.frame_sizes.push_back(body);
    return p;
  };
  auto more = make(R"({"elements": 1000, "element_bytes": 4})", 999 * 4);
  auto wider = make(R"({"elements": 500, "element_bytes": 8})", 4000);
  auto missing = make(R"({"elements": 1000})", 4000);
  auto negative = make(R"({"elements": -1, "element_bytes": 4})", 4000);
  auto garbage = make("\x01\x02 not json", 4000);
  auto deep = make(std::string(200, '[') + std::string(200, ']'), 4000);
  auto good = make(R"({"elements": 1000, "element_bytes": 4})", 4000);
  auto decode = [&](const payload& p) {
    return sut.decode<std::vector<float>>(p, decode_with("cereal.json"));
  };
  // Act
  auto m = decode(more);
  auto w = decode(wider);
  auto d = decode(deep);
  auto g = decode(good);
  // Assert
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error(), errc::frame_mismatch);
  EXPECT_NE(render(m.error()).find("1000"), std::string::npos)
    << render(m.error());
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error(), errc::frame_mismatch);
  EXPECT_NE(render(w.error()).find("8-byte elements"), std::string::npos)
    << render(w.error());
  for (auto* p : {&missing, &negative, &garbage}) {
    auto x = decode(*p);
    ASSERT_FALSE(x);
    EXPECT_TRUE(is_typed_decode_error(x.error())) << render(x.error());
  }
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error(), errc::nesting_too_deep);
  ASSERT_TRUE(g) << render(g.error());
  EXPECT_EQ(g->size(), 1000u);
}

TEST_F(hostile, SplitMsgpackPayloadWithABadHeaderIsRefused) {
  // Arrange: two-frame msgpack payloads whose frame 0 is not a bin or str
  // header, is cut short, or names more bytes than frame 1 holds.
  auto make = [&](std::vector<std::byte> head, size_t body) {
    auto p = make_payload("msgpack", name_in<std::vector<std::byte>>(sut),
                          std::move(head));
    p.frames.emplace_back(std::vector<std::byte>(body));
    p.header.frame_sizes.push_back(body);
    return p;
  };
  auto not_bin = make(bytes_of({0x93, 0x01, 0x02, 0x03}), 16);
  auto cut = make(bytes_of({0xc6, 0x00, 0x01}), 16);
  auto longer = make(bytes_of({0xc6, 0x00, 0x01, 0x00, 0x00}), 16);
  // Act
  auto x = sut.decode<std::vector<std::byte>>(not_bin, decode_with("msgpack"));
  auto y = sut.decode<std::vector<std::byte>>(cut, decode_with("msgpack"));
  auto z = sut.decode<std::vector<std::byte>>(longer, decode_with("msgpack"));
  // Assert
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame);
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error(), errc::truncated_frame);
  ASSERT_FALSE(z);
  EXPECT_EQ(z.error(), errc::frame_mismatch);
  EXPECT_NE(render(z.error()).find("65536"), std::string::npos)
    << render(z.error());
}

TEST_F(hostile, SplitCafByteVectorWithABadSizeIsRefused) {
  auto make = [&](std::vector<std::byte> head, size_t body) {
    auto p = make_payload("caf", name_in<std::vector<std::byte>>(sut),
                          std::move(head));
    p.frames.emplace_back(std::vector<std::byte>(body));
    p.header.frame_sizes.push_back(body);
    return p;
  };
  auto endless = make(bytes_of({0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), 16);
  auto cut = make(bytes_of({0x80, 0x80}), 16);
  auto trailing = make(bytes_of({0x10, 0x00}), 16);
  auto longer = make(bytes_of({0x11}), 16);
  for (auto* p : {&endless, &cut, &trailing, &longer}) {
    auto x = sut.decode<std::vector<std::byte>>(*p, decode_with("caf"));
    ASSERT_FALSE(x);
    EXPECT_TRUE(is_typed_decode_error(x.error())
                || x.error() == errc::trailing_bytes)
      << render(x.error());
  }
  EXPECT_EQ(sut.decode<std::vector<std::byte>>(longer, decode_with("caf"))
              .error(),
            errc::frame_mismatch);
  EXPECT_EQ(sut.decode<std::vector<std::byte>>(cut, decode_with("caf"))
              .error(),
            errc::truncated_frame);
}

TEST_F(hostile, MsgpackClaimOf4GElementsIsRefused) {
  auto bytes = bytes_of({0xdd, 0xff, 0xff, 0xff, 0xff, 0x01});
  auto x = decode_bytes<std::vector<int32_t>>("msgpack", bytes);
  ASSERT_FALSE(x);
  EXPECT_TRUE(is_typed_decode_error(x.error())) << render(x.error());
}

TEST_F(hostile, CafClaimOf4GElementsIsRefused) {
  auto bytes = bytes_of({0xff, 0xff, 0xff, 0xff, 0x0f, 0x41});
  auto strings = decode_bytes<std::string>("caf", bytes);
  auto doubles = decode_bytes<std::vector<double>>("caf", bytes);
  ASSERT_FALSE(strings);
  ASSERT_FALSE(doubles);
  EXPECT_EQ(strings.error(), errc::length_out_of_range);
  EXPECT_EQ(doubles.error(), errc::length_out_of_range);
}

TEST_F(hostile, PreallocationBeyondTheBudgetIsRefused) {
  // 1000 empty optionals of 8 KB each: 1 KB of input asks for 8 MB up front.
  using big = std::optional<std::array<double, 1000>>;
  std::vector<big> xs(1000);
  auto p = sut.encode(xs, encode_with("cereal.binary"));
  ASSERT_TRUE(p);
  // Act
  auto refused = sut.decode<std::vector<big>>(*p, decode_with("cereal.binary"));
  auto opts = decode_with("cereal.binary");
  opts.limits.allocation_factor = 10000;
  auto allowed = sut.decode<std::vector<big>>(*p, opts);
  // Assert
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::allocation_limit_exceeded);
  EXPECT_NE(render(refused.error()).find("allocation_factor"),
            std::string::npos);
  ASSERT_TRUE(allowed) << render(allowed.error());
  EXPECT_EQ(allowed->size(), 1000u);
}

TEST_F(hostile, MsgpackZoneBeyondTheBudgetIsRefused) {
  // 4096 nils: each costs one 24-byte msgpack object for one input byte.
  std::vector<std::byte> bytes = bytes_of({0xdd, 0x00, 0x00, 0x10, 0x00});
  bytes.resize(bytes.size() + 4096, std::byte{0xc0});
  limits lim;
  lim.allocation_factor = 2;
  lim.allocation_slack = 0;
  auto x = decode_bytes<std::vector<std::optional<int32_t>>>("msgpack", bytes,
                                                             lim);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::allocation_limit_exceeded);
}

TEST_F(hostile, SeparateFrameNamedByASecondMemberIsRefused) {
  // Arrange: three separate members that all name frame 1. A hostile
  // sender could name one 1 MiB frame from 131,000 members (1 MiB of
  // indices) and have 128 GiB copied.
  std::vector<std::byte> main;
  append_u64(main, 3);
  for (int i = 0; i < 3; ++i)
    append_u64(main, 1);
  auto p = make_payload("cereal.binary", name_in<byte_columns>(sut), main);
  p.frames.emplace_back(std::vector<std::byte>(4096));
  p.header.frame_sizes.push_back(4096);
  // Act
  auto x = sut.decode<byte_columns>(p, decode_with("cereal.binary"));
  // Assert
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame);
  EXPECT_NE(render(x.error()).find("frame 1 is named by a second separate"),
            std::string::npos)
    << render(x.error());
}

TEST_F(hostile, CerealForwardListClaimIsChargedBeforeResizing) {
  // Arrange: a size tag of 65,536 elements (one byte each would be there)
  // for elements of 4 KiB: 256 MiB ahead of reading any of them.
  std::vector<std::byte> bytes;
  append_u64(bytes, 65536);
  bytes.resize(bytes.size() + 65536);
  // Act
  auto x = decode_bytes<std::forward_list<big_element>>("cereal.binary",
                                                         bytes);
  // Assert
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::allocation_limit_exceeded) << render(x.error());
  EXPECT_NE(render(x.error()).find("a std::forward_list claims 65536"),
            std::string::npos)
    << render(x.error());
}

TEST_F(hostile, MsgpackArrayIsChargedBeforeTheContainerIsSized) {
  // Arrange: an array of 16,384 nils (one byte each) for elements of 4 KiB:
  // msgpack-cxx would size each container to 64 MiB before converting.
  auto bytes = bytes_of({0xdd, 0x00, 0x00, 0x40, 0x00});
  bytes.resize(bytes.size() + 16384, std::byte{0xc0});
  // Act
  auto vec = decode_bytes<std::vector<big_element>>("msgpack", bytes);
  auto deq = decode_bytes<std::deque<big_element>>("msgpack", bytes);
  auto lst = decode_bytes<std::list<big_element>>("msgpack", bytes);
  auto fwd = decode_bytes<std::forward_list<big_element>>("msgpack", bytes);
  // Assert
  ASSERT_FALSE(vec);
  ASSERT_FALSE(deq);
  ASSERT_FALSE(lst);
  ASSERT_FALSE(fwd);
  for (auto* x : {&vec.error(), &deq.error(), &lst.error(), &fwd.error()}) {
    EXPECT_EQ(*x, errc::allocation_limit_exceeded) << render(*x);
    EXPECT_NE(render(*x).find("claims 16384 elements"), std::string::npos)
      << render(*x);
  }
  EXPECT_NE(render(vec.error()).find("a std::vector"), std::string::npos);
}

TEST_F(hostile, MsgpackArraysWithinTheBudgetStillDecode) {
  // Arrange
  std::vector<big_element> xs(3);
  xs[1][511] = 2.5;
  std::list<std::vector<int32_t>> ys{{1, 2}, {}, {3}};
  auto p = sut.encode(xs, encode_with("msgpack"));
  auto q = sut.encode(ys, encode_with("msgpack"));
  ASSERT_TRUE(p && q);
  // Act
  auto x = sut.decode<std::vector<big_element>>(*p, decode_with("msgpack"));
  auto y = sut.decode<std::list<std::vector<int32_t>>>(*q,
                                                        decode_with("msgpack"));
  // Assert
  ASSERT_TRUE(x) << render(x.error());
  EXPECT_EQ(*x, xs);
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, ys);
}

TEST_F(hostile, EnumWithoutAFixedUnderlyingTypeIsRefusedByEveryFamily) {
  // Arrange: decoding 7 into legacy_switch would be undefined behaviour.
  sut.add_type<with_legacy_switch>("legacy");
  auto hostile_bytes = make_payload("cereal.binary", "legacy",
                                    bytes_of({7, 0, 0, 0}));
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf"}) {
    // Act
    auto p = sut.encode(with_legacy_switch{legacy_on}, encode_with(family));
    // Assert
    ASSERT_FALSE(p) << family;
    EXPECT_EQ(p.error(), errc::no_family_can_encode);
    EXPECT_NE(render(p.error()).find("without a fixed underlying type"),
              std::string::npos)
      << render(p.error());
  }
  auto x = sut.decode<with_legacy_switch>(hostile_bytes,
                                          decode_with("cereal.binary"));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::type_mismatch);
}

TEST_F(hostile, EnumWithAFixedUnderlyingTypeTakesAnyValueOfThatType) {
  // Arrange: 200 names no enumerator of level, but is a value of it.
  auto binary = bytes_of({200});
  auto msgpack = bytes_of({0x91, 0xcc, 0xc8});
  // Act
  auto x = decode_bytes<with_level>("cereal.binary", binary);
  auto y = decode_bytes<with_level>("msgpack", msgpack);
  // Assert
  ASSERT_TRUE(x) << render(x.error());
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(static_cast<uint8_t>(x->value), 200);
  EXPECT_EQ(static_cast<uint8_t>(y->value), 200);
}

TEST_F(hostile, RawCopyThatCannotBeMadeIsATypedError) {
  // Arrange: a view frame claiming 2^63 bytes of doubles, more than any
  // std::vector can hold (none of its bytes is read: making the copy fails
  // first, with std::length_error, before any allocator is asked; so the test
  // runs alike under ASan and TSan, whose allocators abort on an impossible
  // request where glibc's throws std::bad_alloc).
  alignas(double) static std::byte storage[8];
  constexpr size_t claimed = size_t{1} << 63;
  payload p;
  p.header.family = "raw";
  p.header.type_name = name_in<std::vector<double>>(sut);
  p.header.frame_sizes = {claimed};
  p.frames.push_back(frame::view(std::span<const std::byte>{storage, claimed}));
  auto opts = decode_with("raw");
  opts.limits.max_payload_bytes = std::numeric_limits<uint64_t>::max();
  // Act
  caf::expected<std::vector<double>> x{std::vector<double>{}};
  EXPECT_NO_THROW(x = sut.decode<std::vector<double>>(p, opts));
  // Assert: the exception became an error naming the family and frame.
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::length_out_of_range) << render(x.error());
  EXPECT_NE(render(x.error()).find("with family raw (frame 0)"),
            std::string::npos)
    << render(x.error());
}

template <class T>
void expect_every_prefix_fails(registry& sut, const T& value,
                               const std::string& family) {
  auto p = sut.encode(value, encode_with(family));
  ASSERT_TRUE(p) << render(p.error());
  auto full = p->frames[0].bytes();
  for (size_t n = 0; n < full.size(); ++n) {
    auto cut = make_payload(family, p->header.type_name,
                            {full.begin(), full.begin() + n});
    auto x = sut.decode<T>(cut, decode_with(family));
    ASSERT_FALSE(x) << family << " accepted a prefix of " << n << " bytes";
    EXPECT_TRUE(is_typed_decode_error(x.error())) << render(x.error());
  }
}

TEST_F(hostile, EveryTruncationIsATypedError) {
  shape s{"tri", {{0, 0, "a"}, {1, 0, "b"}}, {{"color", 3}}};
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf"})
    expect_every_prefix_fails(sut, s, family);
  expect_every_prefix_fails(sut, sample{1, 2, {3, 4, 5, 6}}, "raw");
}

TEST_F(hostile, EmptyFramesAreTypedErrors) {
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf"}) {
    auto x = decode_bytes<shape>(family, {});
    ASSERT_FALSE(x) << family;
    EXPECT_TRUE(is_typed_decode_error(x.error())) << render(x.error());
  }
  auto r = decode_bytes<int64_t>("raw", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), errc::malformed_frame);
}

TEST_F(hostile, PayloadWithoutFramesIsRefused) {
  payload p;
  p.header.family = "cereal.binary";
  p.header.type_name = name_in<shape>(sut);
  auto x = sut.decode<shape>(p, decode_with("cereal.binary"));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::frame_mismatch);
}

TEST_F(hostile, TrailingBytesAreRefused) {
  for (auto family : {"cereal.binary", "cereal.portable", "msgpack", "caf"}) {
    auto p = sut.encode(point{1, 2, "x"}, encode_with(family));
    ASSERT_TRUE(p);
    auto bytes = p->frames[0].release();
    bytes.push_back(std::byte{0});
    auto x = decode_bytes<point>(family, bytes);
    ASSERT_FALSE(x) << family;
    EXPECT_EQ(x.error(), errc::trailing_bytes) << render(x.error());
  }
}

TEST_F(hostile, WrongFamilyTypeVersionAndFramesAreTypedErrors) {
  auto good = sut.encode(point{1, 2, "x"}, encode_with("cereal.binary"));
  ASSERT_TRUE(good);
  auto opts = decode_with("cereal.binary");
  opts.deserializers.push_back("made.up");
  auto unknown = *good;
  unknown.header.family = "made.up";
  auto wrong_type = *good;
  wrong_type.header.type_name = "something_else";
  auto wrong_version = *good;
  wrong_version.header.version = 2;
  auto wrong_size = *good;
  wrong_size.header.frame_sizes[0] += 1;
  auto extra_frame = *good;
  extra_frame.frames.emplace_back(std::vector<std::byte>(3));
  EXPECT_EQ(sut.decode<point>(unknown, opts).error(), errc::unknown_family);
  EXPECT_EQ(sut.decode<point>(wrong_type, opts).error(), errc::type_mismatch);
  EXPECT_EQ(sut.decode<point>(wrong_version, opts).error(),
            errc::version_mismatch);
  EXPECT_EQ(sut.decode<point>(wrong_size, opts).error(), errc::frame_mismatch);
  EXPECT_EQ(sut.decode<point>(extra_frame, opts).error(),
            errc::frame_mismatch);
  EXPECT_EQ(sut.decode<shape>(*good, opts).error(), errc::type_mismatch);
}

TEST_F(hostile, OversizedPayloadIsRefusedBothWays) {
  std::vector<double> xs(100);
  auto eopts = encode_with("cereal.binary");
  eopts.limits.max_payload_bytes = 100;
  auto refused = sut.encode(xs, eopts);
  auto p = sut.encode(xs, encode_with("cereal.binary"));
  ASSERT_TRUE(p);
  auto dopts = decode_with("cereal.binary");
  dopts.limits.max_payload_bytes = 100;
  auto x = sut.decode<std::vector<double>>(*p, dopts);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::payload_too_large);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::payload_too_large);
}

TEST_F(hostile, InvalidBoolByteIsRefused) {
  auto x = decode_bytes<bool>("cereal.binary", bytes_of({2}));
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame);
}

TEST_F(hostile, SharedPointerIdOfAnotherTypeIsRefused) {
  // Arrange: b refers to the object a defined (a node, not a point).
  two_kinds v{std::make_shared<node>(node{1, {2}}), nullptr};
  for (auto family : {"cereal.binary", "cereal.portable"}) {
    auto p = sut.encode(v, encode_with(family));
    ASSERT_TRUE(p);
    auto bytes = p->frames[0].release();
    ASSERT_GE(bytes.size(), 4u);
    bytes.resize(bytes.size() - 4);
    append_u32(bytes, 1);
    // Act
    auto x = decode_bytes<two_kinds>(family, bytes);
    // Assert
    ASSERT_FALSE(x) << family;
    EXPECT_EQ(x.error(), errc::malformed_frame) << render(x.error());
  }
  auto p = sut.encode(v, encode_with("cereal.json"));
  ASSERT_TRUE(p);
  auto bytes = p->frames[0].release();
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto at = text.rfind("\"id\": 0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "\"id\": 1");
  std::vector<std::byte> patched(text.size());
  std::memcpy(patched.data(), text.data(), text.size());
  auto x = decode_bytes<two_kinds>("cereal.json", patched);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame) << render(x.error());
}

TEST_F(hostile, DeepNestingIsRefusedInEveryFamily) {
  constexpr size_t levels = 20000;
  std::vector<std::byte> binary;
  for (size_t i = 0; i < levels; ++i)
    append_u64(binary, 1);
  std::vector<std::byte> msgpack(levels, std::byte{0x91});
  msgpack.push_back(std::byte{0x90});
  std::vector<std::byte> json;
  for (char c : std::string{"{\"value0\": "})
    json.push_back(static_cast<std::byte>(c));
  json.resize(json.size() + levels, std::byte{'['});
  std::vector<std::byte> caf(levels, std::byte{0x01});
  caf.push_back(std::byte{0x00});
  EXPECT_EQ(decode_bytes<tree>("cereal.binary", binary).error(),
            errc::nesting_too_deep);
  EXPECT_EQ(decode_bytes<tree>("msgpack", msgpack).error(),
            errc::nesting_too_deep);
  EXPECT_EQ(decode_bytes<tree>("cereal.json", json).error(),
            errc::nesting_too_deep);
  EXPECT_EQ(decode_bytes<tree>("caf", caf).error(), errc::nesting_too_deep);
}

TEST_F(hostile, CafCountsNoNestingForBitVectorsReadBefore) {
  // Arrange: CAF 0.17 leaves a sequence open for every std::vector<bool>;
  // 200 of them side by side must not read as 200 levels of nesting.
  std::vector<std::vector<bool>> rows(200, std::vector<bool>{true, false});
  rows[7].clear();
  std::vector<flag_row> table;
  for (int32_t i = 0; i < 200; ++i)
    table.push_back(flag_row{i, std::vector<bool>(i % 11, true)});
  std::map<int32_t, std::vector<bool>> by_id{{1, {true}}, {2, {}}};
  auto p = sut.encode(rows, encode_with("caf"));
  auto q = sut.encode(table, encode_with("caf"));
  auto r = sut.encode(by_id, encode_with("caf"));
  ASSERT_TRUE(p && q && r);
  // Act
  auto x = sut.decode<std::vector<std::vector<bool>>>(*p, decode_with("caf"));
  auto y = sut.decode<std::vector<flag_row>>(*q, decode_with("caf"));
  auto z = sut.decode<std::map<int32_t, std::vector<bool>>>(*r,
                                                            decode_with("caf"));
  // Assert
  ASSERT_TRUE(x) << render(x.error());
  EXPECT_EQ(*x, rows);
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, table);
  ASSERT_TRUE(z) << render(z.error());
  EXPECT_EQ(*z, by_id);
}

TEST_F(hostile, JsonBracketsAndDigitsInsideStringsAreText) {
  // Arrange: brackets deeper than any limit, a long run of digits and
  // escaped quotes and backslashes, all inside one string value.
  std::string value = std::string(20000, '[') + "\\\"" + std::string(500, '9')
                      + "\\\\\"{{" + std::string(3, '\\');
  auto p = sut.encode(value, encode_with("cereal.json"));
  ASSERT_TRUE(p) << render(p.error());
  // Act
  auto x = sut.decode<std::string>(*p, decode_with("cereal.json"));
  // Assert
  ASSERT_TRUE(x) << render(x.error());
  EXPECT_EQ(*x, value);
  // The same brackets outside the string still count.
  auto text = std::string{"{\"value0\": \"a\\\"\","} + std::string(20000, '[');
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  EXPECT_EQ(decode_bytes<tree>("cereal.json", bytes).error(),
            errc::nesting_too_deep);
}

TEST_F(hostile, JsonNumbersLongerThanCerealWritesAreRefused) {
  // rapidjson's exact strtod has undefined behaviour on such numbers.
  auto text = std::string{"{\"value0\": 1"} + std::string(400, '0')
              + "e-38609621}";
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  auto x = decode_bytes<double>("cereal.json", bytes);
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), errc::malformed_frame);
  // ~400 leading zeros make rapidjson read outside its power table.
  text = "{\"value0\": 0." + std::string(400, '0') + "1}";
  bytes.resize(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  EXPECT_EQ(decode_bytes<double>("cereal.json", bytes).error(),
            errc::malformed_frame);
  text = "{\"value0\": 0e-300}";
  bytes.resize(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  EXPECT_EQ(decode_bytes<double>("cereal.json", bytes).error(),
            errc::malformed_frame);
  // 21 significant digits starting 18446744073709551615 and a 5 or more:
  // rapidjson's significand rounds up to 2^64, i.e. zero (found by
  // fuzz_cereal_json), whatever the zeros before them.
  for (std::string number :
       {"0.184467440737095516156", "184467440737095516156",
        "18446744073709551615.6", "0.000184467440737095516159e2",
        // a zero that ends at a second '.' (found by fuzz_cereal_json)
        "0.000000000000000000000000000.484"}) {
    text = "{\"value0\": " + number + "}";
    bytes.resize(text.size());
    std::memcpy(bytes.data(), text.data(), text.size());
    EXPECT_EQ(decode_bytes<double>("cereal.json", bytes).error(),
              errc::malformed_frame)
      << number;
  }
  auto largest = sut.encode(std::numeric_limits<uint64_t>::max(),
                            encode_with("cereal.json"));
  ASSERT_TRUE(largest);
  auto back = sut.decode<uint64_t>(*largest, decode_with("cereal.json"));
  ASSERT_TRUE(back) << render(back.error());
  EXPECT_EQ(*back, std::numeric_limits<uint64_t>::max());
  auto zero = sut.encode(0.0, encode_with("cereal.json"));
  ASSERT_TRUE(zero);
  EXPECT_TRUE(sut.decode<double>(*zero, decode_with("cereal.json")));
  auto ok = sut.encode(-1.2345678901234567e-300, encode_with("cereal.json"));
  ASSERT_TRUE(ok);
  auto y = sut.decode<double>(*ok, decode_with("cereal.json"));
  ASSERT_TRUE(y) << render(y.error());
  EXPECT_EQ(*y, -1.2345678901234567e-300);
}

TEST_F(hostile, CafRefusesInfinityAndNanInsteadOfHanging) {
  // CAF 0.17's pack754 never returns for these; ferry refuses them.
  for (double x : {std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()}) {
    auto p = sut.encode(x, encode_with("caf"));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), errc::no_family_can_encode);
    EXPECT_NE(render(p.error()).find("loops forever"), std::string::npos);
  }
  EXPECT_TRUE(sut.encode(std::numeric_limits<double>::infinity(),
                         encode_with("cereal.binary")));
}

TEST_F(hostile, RandomBytesNeverCrashAnyDecoder) {
  std::mt19937_64 rng{42};
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf", "raw"}) {
    for (int i = 0; i < 300; ++i) {
      std::vector<std::byte> bytes(rng() % 200);
      for (auto& b : bytes)
        b = static_cast<std::byte>(rng());
      auto x = decode_bytes<shape>(family, bytes);
      if (!x) {
        EXPECT_EQ(x.error().category(), caf::atom("ferry_ser"));
      }
      auto y = decode_bytes<std::vector<sample>>(family, bytes);
      if (!y) {
        EXPECT_EQ(y.error().category(), caf::atom("ferry_ser"));
      }
    }
  }
}

TEST_F(hostile, BitFlipsInValidFramesNeverCrashAnyDecoder) {
  std::mt19937_64 rng{7};
  auto a = std::make_shared<node>(node{1, {1, 2, 3}});
  graph g{{a, nullptr, a}};
  record r{5, "rec", {1.5f, 2.5f}, {{"a", 1}}};
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf"}) {
    auto p = sut.encode(r, encode_with(family));
    ASSERT_TRUE(p);
    auto base = p->frames[0].release();
    for (int i = 0; i < 400; ++i) {
      auto bytes = base;
      for (int k = 0; k < 3; ++k)
        bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1 << (rng() % 8));
      auto x = decode_bytes<record>(family, bytes);
      if (!x) {
        EXPECT_EQ(x.error().category(), caf::atom("ferry_ser"));
      }
    }
  }
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json"}) {
    auto p = sut.encode(g, encode_with(family));
    ASSERT_TRUE(p);
    auto base = p->frames[0].release();
    for (int i = 0; i < 400; ++i) {
      auto bytes = base;
      bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1 << (rng() % 8));
      auto x = decode_bytes<graph>(family, bytes);
      if (!x) {
        EXPECT_EQ(x.error().category(), caf::atom("ferry_ser"));
      }
    }
  }
}

TEST_F(hostile, RawRefusesFramesOfTheWrongSize) {
  auto x = decode_bytes<std::vector<double>>("raw", std::vector<std::byte>(7));
  auto y = decode_bytes<sample>("raw", std::vector<std::byte>(sizeof(sample) + 1));
  ASSERT_FALSE(x);
  ASSERT_FALSE(y);
  EXPECT_EQ(x.error(), errc::malformed_frame);
  EXPECT_EQ(y.error(), errc::malformed_frame);
}

TEST_F(hostile, RawViewOfMisalignedMemoryIsRefusedButCopyWorks) {
  // Arrange: doubles starting one byte into a buffer.
  std::vector<double> xs{1.5, 2.5, 3.5};
  auto storage = std::make_shared<std::vector<std::byte>>(
    xs.size() * sizeof(double) + 1);
  std::memcpy(storage->data() + 1, xs.data(), xs.size() * sizeof(double));
  payload p;
  p.header.family = "raw";
  p.header.type_name = name_in<std::vector<double>>(sut);
  p.header.frame_sizes = {xs.size() * sizeof(double)};
  p.frames.push_back(frame::view(
    std::span<const std::byte>{storage->data() + 1, xs.size() * sizeof(double)},
    storage));
  // Act
  auto view = sut.decode<std::span<const double>>(p, decode_with("raw"));
  auto copy = sut.decode<std::vector<double>>(p, decode_with("raw"));
  // Assert
  ASSERT_FALSE(view);
  EXPECT_EQ(view.error(), errc::misaligned_frame);
  ASSERT_TRUE(copy);
  EXPECT_EQ(*copy, xs);
}

} // namespace
} // namespace ferry::serializers::test
