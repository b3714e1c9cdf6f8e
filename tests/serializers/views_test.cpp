// Zero copy: raw encodes views of the value, decodes into views of the frame;
// separate<> members get frames of their own.

#include "test_types.hpp"

#include <cereal/archives/binary.hpp>

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
