// Zero copy: raw encodes views of the value, decodes into views of the frame;
// separate<> members get frames of their own.

#include "test_types.hpp"

#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/string.hpp>
#include <msgpack.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <sstream>

namespace ferry::serializers::test {
namespace {

TEST(views, RawEncodeMakesNoCopy) {
  registry sut;
  std::vector<double> xs(1000, 1.5);
  auto p = sut.encode(xs, encode_with("raw"));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->frames.size(), 1u);
  EXPECT_FALSE(p->frames[0].owned());
  EXPECT_EQ(p->frames[0].bytes().data(),
            reinterpret_cast<const std::byte*>(xs.data()));
  EXPECT_EQ(p->frames[0].size(), xs.size() * sizeof(double));
}

TEST(views, RawDecodeIntoSpanMakesNoCopy) {
  registry sut;
  std::vector<double> xs{1, 2, 3};
  auto p = sut.encode(xs, encode_with("raw"));
  ASSERT_TRUE(p);
  auto view = sut.decode<std::span<const double>>(*p, decode_with("raw"));
  ASSERT_TRUE(view) << render(view.error());
  EXPECT_EQ(view->data(), xs.data());
  EXPECT_EQ(view->size(), 3u);
}

TEST(views, ArrayViewKeepsSharedMemoryAlive) {
  // Arrange: a frame viewing memory owned by a shared_ptr ("shared memory").
  registry sut;
  auto memory = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  payload p = *sut.encode(*memory, encode_with("raw"));
  p.frames[0] = frame::view(p.frames[0].bytes(), memory);
  std::weak_ptr<std::vector<float>> watch = memory;
  // Act
  auto view = sut.decode<array_view<float>>(p, decode_with("raw"));
  p = payload{};
  memory.reset();
  // Assert
  ASSERT_TRUE(view);
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(view->to_vector(), (std::vector<float>{1, 2, 3, 4}));
  *view = array_view<float>{};
  EXPECT_TRUE(watch.expired());
}

TEST(views, ArrayViewAdoptsOwnedBytesOfAnRvaluePayload) {
  registry sut;
  std::vector<int32_t> xs{5, 6, 7};
  auto wire = over_the_wire(*sut.encode(xs, encode_with("raw")));
  ASSERT_TRUE(wire);
  auto bytes_at = wire->frames[0].bytes().data();
  auto view = sut.decode<array_view<int32_t>>(std::move(*wire),
                                              decode_with("raw"));
  ASSERT_TRUE(view);
  EXPECT_EQ(reinterpret_cast<const std::byte*>(view->data()), bytes_at);
  EXPECT_NE(view->keep_alive(), nullptr);
  EXPECT_EQ(view->to_vector(), xs);
}

TEST(views, RawByteVectorIsAdoptedNotCopied) {
  registry sut;
  std::vector<std::byte> xs(4096, std::byte{7});
  auto wire = over_the_wire(*sut.encode(xs, encode_with("raw")));
  ASSERT_TRUE(wire);
  auto bytes_at = wire->frames[0].bytes().data();
  auto out = sut.decode<std::vector<std::byte>>(std::move(*wire),
                                                decode_with("raw"));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->data(), bytes_at);
  EXPECT_EQ(*out, xs);
}

TEST(views, SpanPayloadDecodesIntoVector) {
  registry sut;
  std::vector<double> xs{9, 8};
  std::span<const double> view{xs};
  auto p = sut.encode(view, encode_with("raw"));
  ASSERT_TRUE(p);
  auto out = sut.decode<std::vector<double>>(*p, decode_with("raw"));
  ASSERT_TRUE(out) << render(out.error());
  EXPECT_EQ(*out, xs);
}

TEST(views, RawRefusesBoolEnumsAndPointers) {
  enum class color : uint8_t { red };
  struct has_bool {
    int32_t x;
    bool flag;
  };
  registry sut;
  EXPECT_FALSE(sut.encode(true, encode_with("raw")));
  EXPECT_FALSE(sut.encode(color::red, encode_with("raw")));
  EXPECT_FALSE(sut.encode(has_bool{1, true}, encode_with("raw")));
  EXPECT_FALSE(sut.encode(std::vector<bool>{true}, encode_with("raw")));
}

/// Options for `family` with a keep-alive, as a link encodes.
encode_options encode_kept(const std::string& family) {
  auto opts = encode_with(family);
  opts.keep_alive = std::make_shared<int>(0);
  return opts;
}

/// Returns the bytes of `p`'s frames, one after another.
std::string concatenated(const payload& p) {
  std::string result;
  for (auto& f : p.frames)
    result.append(reinterpret_cast<const char*>(f.bytes().data()), f.size());
  return result;
}

TEST(views, LargeArrayUnderCerealSplitsIntoSizeTagAndAViewOfItsElements) {
  registry sut;
  std::vector<float> xs(100'000);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>(i) * 0.5f;
  for (std::string family : {"cereal.binary", "cereal.portable"}) {
    // Act
    auto p = sut.encode(xs, encode_kept(family));
    // Assert: frame 0 is cereal's prefix, frame 1 the vector's own memory,
    // and together they are what plain cereal writes.
    ASSERT_TRUE(p) << render(p.error());
    ASSERT_EQ(p->frames.size(), 2u) << family;
    EXPECT_EQ(p->frames[0].size(), family == "cereal.binary" ? 8u : 9u);
    EXPECT_FALSE(p->frames[1].owned());
    EXPECT_EQ(p->frames[1].bytes().data(),
              reinterpret_cast<const std::byte*>(xs.data()));
    std::ostringstream os;
    if (family == "cereal.binary") {
      cereal::BinaryOutputArchive ar{os};
      ar(xs);
    } else {
      cereal::PortableBinaryOutputArchive ar{os};
      ar(xs);
    }
    EXPECT_EQ(concatenated(*p), os.str()) << family;
    auto wire = over_the_wire(*p);
    ASSERT_TRUE(wire);
    auto out = sut.decode<std::vector<float>>(*wire, decode_with(family));
    ASSERT_TRUE(out) << render(out.error());
    EXPECT_EQ(*out, xs) << family;
  }
}

TEST(views, SplitStringAndByteVectorRoundTrip) {
  registry sut;
  std::string text(70'000, 'x');
  text[12345] = '\0';
  auto bytes = byte_ramp(200'000);
  for (std::string family : {"cereal.binary", "cereal.portable"}) {
    auto pt = sut.encode(text, encode_kept(family));
    auto pb = sut.encode(bytes, encode_kept(family));
    ASSERT_TRUE(pt && pb);
    EXPECT_EQ(pt->frames.size(), 2u);
    EXPECT_EQ(pb->frames.size(), 2u);
    auto t = sut.decode<std::string>(*pt, decode_with(family));
    auto b = sut.decode<std::vector<std::byte>>(*pb, decode_with(family));
    ASSERT_TRUE(t) << render(t.error());
    ASSERT_TRUE(b) << render(b.error());
    EXPECT_EQ(*t, text);
    EXPECT_EQ(*b, bytes);
  }
}

TEST(views, SplitByteVectorOfAnRvaluePayloadIsAdoptedNotCopied) {
  registry sut;
  auto xs = byte_ramp(100'000);
  auto wire = over_the_wire(*sut.encode(xs, encode_kept("cereal.binary")));
  ASSERT_TRUE(wire);
  ASSERT_EQ(wire->frames.size(), 2u);
  auto bytes_at = wire->frames[1].bytes().data();
  auto out = sut.decode<std::vector<std::byte>>(std::move(*wire),
                                                decode_with("cereal.binary"));
  ASSERT_TRUE(out) << render(out.error());
  EXPECT_EQ(out->data(), bytes_at);
  EXPECT_EQ(*out, xs);
}

TEST(views, LargeByteArrayAndStringUnderMsgpackSplitIntoHeaderAndBytes) {
  registry sut;
  auto bytes = byte_ramp(100'000);
  std::string text(70'000, 'y');
  auto pb = sut.encode(bytes, encode_kept("msgpack"));
  auto pt = sut.encode(text, encode_kept("msgpack"));
  ASSERT_TRUE(pb && pt);
  ASSERT_EQ(pb->frames.size(), 2u);
  ASSERT_EQ(pt->frames.size(), 2u);
  EXPECT_EQ(pb->frames[0].size(), 5u); // bin 32
  EXPECT_EQ(pb->frames[1].bytes().data(), bytes.data());
  EXPECT_EQ(pt->frames[1].bytes().data(),
            reinterpret_cast<const std::byte*>(text.data()));
  // Together the frames are what plain msgpack writes.
  msgpack::sbuffer plain;
  msgpack::pack(plain, bytes);
  EXPECT_EQ(concatenated(*pb), std::string(plain.data(), plain.size()));
  auto wire = over_the_wire(*pb);
  ASSERT_TRUE(wire);
  auto bytes_at = wire->frames[1].bytes().data();
  auto b = sut.decode<std::vector<std::byte>>(std::move(*wire),
                                              decode_with("msgpack"));
  auto t = sut.decode<std::string>(*pt, decode_with("msgpack"));
  ASSERT_TRUE(b) << render(b.error());
  ASSERT_TRUE(t) << render(t.error());
  EXPECT_EQ(*b, bytes);
  EXPECT_EQ(b->data(), bytes_at); // adopted
  EXPECT_EQ(*t, text);
}

TEST(views, LargeByteVectorUnderCafSplitsIntoSizeAndBytes) {
  registry sut;
  auto bytes = byte_ramp(300'000);
  auto p = sut.encode(bytes, encode_kept("caf"));
  ASSERT_TRUE(p) << render(p.error());
  ASSERT_EQ(p->frames.size(), 2u);
  EXPECT_EQ(p->frames[0].size(), 3u); // 300'000 takes three 7-bit groups
  EXPECT_EQ(p->frames[1].bytes().data(), bytes.data());
  auto whole = sut.encode(bytes, encode_with("caf"));
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->frames.size(), 1u);
  EXPECT_EQ(concatenated(*p), concatenated(*whole));
  auto wire = over_the_wire(*p);
  ASSERT_TRUE(wire);
  auto bytes_at = wire->frames[1].bytes().data();
  auto out = sut.decode<std::vector<std::byte>>(std::move(*wire),
                                                decode_with("caf"));
  ASSERT_TRUE(out) << render(out.error());
  EXPECT_EQ(*out, bytes);
  EXPECT_EQ(out->data(), bytes_at);
}

TEST(views, SplitStringsAndByteVectorsConcatenateToPlainLibraryBytes) {
  registry sut;
  std::string text(70'000, 'x');
  auto bytes = byte_ramp(200'000);
  for (std::string family : {"cereal.binary", "cereal.portable"}) {
    auto pt = sut.encode(text, encode_kept(family));
    auto pb = sut.encode(bytes, encode_kept(family));
    ASSERT_TRUE(pt && pb);
    ASSERT_EQ(pt->frames.size(), 2u);
    ASSERT_EQ(pb->frames.size(), 2u);
    std::ostringstream ot;
    std::ostringstream ob;
    if (family == "cereal.binary") {
      cereal::BinaryOutputArchive at{ot};
      cereal::BinaryOutputArchive ab{ob};
      at(text);
      ab(bytes);
    } else {
      cereal::PortableBinaryOutputArchive at{ot};
      cereal::PortableBinaryOutputArchive ab{ob};
      at(text);
      ab(bytes);
    }
    EXPECT_EQ(concatenated(*pt), ot.str()) << family;
    EXPECT_EQ(concatenated(*pb), ob.str()) << family;
  }
  auto pm = sut.encode(text, encode_kept("msgpack"));
  ASSERT_TRUE(pm);
  ASSERT_EQ(pm->frames.size(), 2u);
  msgpack::sbuffer plain;
  msgpack::pack(plain, text);
  EXPECT_EQ(concatenated(*pm), std::string(plain.data(), plain.size()));
}

/// Reads a split JSON head with plain cereal: {elements, element_bytes}.
std::pair<uint64_t, uint64_t> plain_json_head(const frame& head) {
  std::istringstream is{std::string(
    reinterpret_cast<const char*>(head.bytes().data()), head.size())};
  cereal::JSONInputArchive ar{is};
  uint64_t elements = 0;
  uint64_t element_bytes = 0;
  ar(cereal::make_nvp("elements", elements),
     cereal::make_nvp("element_bytes", element_bytes));
  return {elements, element_bytes};
}

TEST(views, LargeArrayUnderCerealJsonTravelsAsAJsonHeadAndItsElements) {
  registry sut;
  std::vector<float> xs(100'000);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>(i) * 0.25f;
  // Act
  auto p = sut.encode(xs, encode_kept("cereal.json"));
  // Assert: frame 0 is JSON that plain cereal reads, frame 1 the vector's
  // own memory.
  ASSERT_TRUE(p) << render(p.error());
  ASSERT_EQ(p->frames.size(), 2u);
  EXPECT_EQ(plain_json_head(p->frames[0]),
            (std::pair<uint64_t, uint64_t>{xs.size(), sizeof(float)}));
  EXPECT_FALSE(p->frames[1].owned());
  EXPECT_EQ(p->frames[1].bytes().data(),
            reinterpret_cast<const std::byte*>(xs.data()));
  auto wire = over_the_wire(*p);
  ASSERT_TRUE(wire);
  auto out = sut.decode<std::vector<float>>(*wire, decode_with("cereal.json"));
  ASSERT_TRUE(out) << render(out.error());
  EXPECT_EQ(*out, xs);
}

TEST(views, SplitJsonStringAndByteVectorRoundTripAndTheBytesAreAdopted) {
  registry sut;
  std::string text(70'000, 'x');
  text[123] = '"';
  auto bytes = byte_ramp(200'000);
  auto pt = sut.encode(text, encode_kept("cereal.json"));
  auto pb = sut.encode(bytes, encode_kept("cereal.json"));
  ASSERT_TRUE(pt && pb);
  ASSERT_EQ(pt->frames.size(), 2u);
  ASSERT_EQ(pb->frames.size(), 2u);
  EXPECT_EQ(plain_json_head(pb->frames[0]),
            (std::pair<uint64_t, uint64_t>{bytes.size(), 1}));
  auto wire = over_the_wire(*pb);
  ASSERT_TRUE(wire);
  auto bytes_at = wire->frames[1].bytes().data();
  // Act
  auto t = sut.decode<std::string>(*pt, decode_with("cereal.json"));
  auto b = sut.decode<std::vector<std::byte>>(std::move(*wire),
                                              decode_with("cereal.json"));
  // Assert
  ASSERT_TRUE(t) << render(t.error());
  ASSERT_TRUE(b) << render(b.error());
  EXPECT_EQ(*t, text);
  EXPECT_EQ(*b, bytes);
  EXPECT_EQ(b->data(), bytes_at);
}

TEST(views, CerealJsonRefusesANulInAStringOfAnySize) {
  registry sut;
  std::string small(100, 'x');
  std::string large(70'000, 'x');
  small[50] = '\0';
  large[60'000] = '\0';
  // Act
  auto s = sut.encode(small, encode_kept("cereal.json"));
  auto l = sut.encode(large, encode_kept("cereal.json"));
  // Assert
  ASSERT_FALSE(s);
  ASSERT_FALSE(l);
  EXPECT_NE(render(s.error()).find("NUL"), std::string::npos)
    << render(s.error());
  EXPECT_NE(render(l.error()).find("NUL"), std::string::npos)
    << render(l.error());
}

TEST(views, CerealJsonCarriesNulBytesInACharVectorOfAnySize) {
  // A std::vector<char> is an array of numbers in cereal's JSON, not a
  // string: a 0 in it is a number like any other, split or not.
  registry sut;
  std::vector<char> small(100, 'x');
  std::vector<char> large(70'000, 'x');
  small[50] = '\0';
  large[60'000] = '\0';
  auto s = sut.encode(small, encode_kept("cereal.json"));
  auto l = sut.encode(large, encode_kept("cereal.json"));
  ASSERT_TRUE(s) << render(s.error());
  ASSERT_TRUE(l) << render(l.error());
  ASSERT_EQ(l->frames.size(), 2u);
  // Act
  auto s2 = sut.decode<std::vector<char>>(*s, decode_with("cereal.json"));
  auto l2 = sut.decode<std::vector<char>>(*l, decode_with("cereal.json"));
  // Assert
  ASSERT_TRUE(s2) << render(s2.error());
  ASSERT_TRUE(l2) << render(l2.error());
  EXPECT_EQ(*s2, small);
  EXPECT_EQ(*l2, large);
}

TEST(views, PortableSplitFromABigEndianSenderIsByteSwapped) {
  // Arrange: what a big-endian machine writes for a split vector<double>:
  // frame 0 = endianness byte 0 and the size tag big-endian, frame 1 = the
  // elements big-endian.
  registry sut;
  std::vector<double> xs(10'000);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<double>(i) * 1.25 - 7.0;
  auto p = sut.encode(xs, encode_kept("cereal.portable"));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->frames.size(), 2u);
  auto big_endian = [](const void* data, size_t n, size_t width) {
    std::vector<std::byte> out(n);
    std::memcpy(out.data(), data, n);
    if (std::endian::native == std::endian::little)
      for (size_t i = 0; i + width <= n; i += width)
        std::reverse(out.begin() + static_cast<ptrdiff_t>(i),
                     out.begin() + static_cast<ptrdiff_t>(i + width));
    return out;
  };
  uint64_t count = xs.size();
  auto head = big_endian(&count, sizeof(count), sizeof(count));
  head.insert(head.begin(), std::byte{0});
  payload sut_input;
  sut_input.header = p->header;
  sut_input.frames.emplace_back(std::move(head));
  sut_input.frames.emplace_back(
    big_endian(xs.data(), xs.size() * sizeof(double), sizeof(double)));
  // Act
  auto out = sut.decode<std::vector<double>>(sut_input,
                                             decode_with("cereal.portable"));
  // Assert
  ASSERT_TRUE(out) << render(out.error());
  EXPECT_EQ(*out, xs);
}

/// A type registered with a stand-in that is a large top-level array.
struct samples {
  std::vector<float> values;
};

std::vector<float> samples_to_values(const samples& x) {
  return x.values;
}

samples samples_from_values(std::vector<float>&& x) {
  return samples{std::move(x)};
}

TEST(views, StandInSplitsOnlyWhenTheCallerKeepsTheValueAlive) {
  registry sut;
  sut.add_type<samples>("samples");
  ASSERT_TRUE(sut.register_serializer<samples>(&samples_to_values,
                                               &samples_from_values));
  samples x{std::vector<float>(50'000, 0.5f)};
  // Act
  auto without = sut.encode(x, encode_with("cereal.binary"));
  auto with = sut.encode(x, encode_kept("cereal.binary"));
  // Assert: without a keep-alive the payload holds its own bytes (not a
  // view of the stand-in) in one frame, which plain cereal reads.
  ASSERT_TRUE(without && with);
  ASSERT_EQ(without->frames.size(), 1u);
  EXPECT_EQ(without->frames[0].size(), 8 + x.values.size() * sizeof(float));
  std::ostringstream os;
  {
    cereal::BinaryOutputArchive ar{os};
    ar(x.values);
  }
  EXPECT_EQ(concatenated(*without), os.str());
  EXPECT_EQ(with->frames.size(), 2u);
  auto out = sut.decode<samples>(*without, decode_with("cereal.binary"));
  ASSERT_TRUE(out) << render(out.error());
  EXPECT_EQ(out->values, x.values);
}

TEST(views, CerealKeepsOneFrameWithoutKeepAliveOrBelowTheSplitSize) {
  registry sut;
  std::vector<double> large(20'000, 2.0);
  std::vector<double> small(100, 2.0);
  auto without = sut.encode(large, encode_with("cereal.binary"));
  auto below = sut.encode(small, encode_kept("cereal.binary"));
  auto json = sut.encode(large, encode_with("cereal.json"));
  auto json_below = sut.encode(small, encode_kept("cereal.json"));
  ASSERT_TRUE(without && below && json && json_below);
  // Without a keep-alive the payload holds its own copy of the elements.
  ASSERT_EQ(without->frames.size(), 1u);
  EXPECT_EQ(without->frames[0].size(), 8 + large.size() * sizeof(double));
  EXPECT_EQ(below->frames.size(), 1u);
  EXPECT_EQ(json->frames.size(), 1u);
  EXPECT_EQ(json_below->frames.size(), 1u);
  auto out = sut.decode<std::vector<double>>(*without,
                                             decode_with("cereal.binary"));
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, large);
}

struct image {
  std::string name;
  separate<std::vector<float>> pixels;
  friend bool operator==(const image&, const image&) = default;
};

struct batch {
  std::vector<separate<std::vector<double>>> columns;
  friend bool operator==(const batch&, const batch&) = default;
};

TEST(views, SeparateMemberGetsAFrameOfItsOwn) {
  registry sut;
  image img{"cat", separate<std::vector<float>>{std::vector<float>(1000, 0.5f)}};
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf"}) {
    auto p = sut.encode(img, encode_with(family));
    ASSERT_TRUE(p) << family << ": " << render(p.error());
    ASSERT_EQ(p->frames.size(), 2u) << family;
    EXPECT_FALSE(p->frames[1].owned());
    EXPECT_EQ(p->frames[1].bytes().data(),
              reinterpret_cast<const std::byte*>(img.pixels.value().data()));
    EXPECT_LT(p->frames[0].size(), 200u);
    auto wire = over_the_wire(*p);
    ASSERT_TRUE(wire);
    auto out = sut.decode<image>(*wire, decode_with(family));
    ASSERT_TRUE(out) << render(out.error());
    EXPECT_EQ(*out, img);
  }
}

TEST(views, CollectionOfLargeValuesGetsOneFrameEach) {
  registry sut;
  batch b;
  for (int i = 0; i < 4; ++i)
    b.columns.emplace_back(std::vector<double>(100, i));
  auto p = sut.encode(b, encode_with("cereal.binary"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->frames.size(), 5u);
  auto out = sut.decode<batch>(*over_the_wire(*p), decode_with("cereal.binary"));
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, b);
}

TEST(views, SeparateFrameIndexOutOfRangeIsRefused) {
  registry sut;
  image img{"x", separate<std::vector<float>>{std::vector<float>{1}}};
  auto p = sut.encode(img, encode_with("cereal.binary"));
  ASSERT_TRUE(p);
  p->frames.pop_back();
  p->header.frame_sizes.pop_back();
  auto out = sut.decode<image>(*p, decode_with("cereal.binary"));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error(), errc::malformed_frame);
}

TEST(views, SeparateIsInlineOutsideARegistry) {
  image img{"dog", separate<std::vector<float>>{std::vector<float>{1, 2}}};
  std::ostringstream os;
  {
    cereal::BinaryOutputArchive ar{os};
    ar(img);
  }
  std::istringstream is{os.str()};
  image out;
  {
    cereal::BinaryInputArchive ar{is};
    ar(out);
  }
  EXPECT_EQ(out, img);
}

} // namespace
} // namespace ferry::serializers::test
