// Hostile input, size claims: a length, count or size tag is never
// trusted; what it would allocate is charged against the budget first, and
// every refusal is a typed error.

#include "hostile_support.hpp"

#include <cstring>
#include <deque>
#include <forward_list>
#include <limits>
#include <list>

namespace ferry::serializers::test {
namespace {

using namespace hostile_inputs;

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

} // namespace
} // namespace ferry::serializers::test
