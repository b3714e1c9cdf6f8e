// Edge values both ways between ferry and the families' own libraries: plain
// cereal (binary, portable, JSON) and Python's msgpack read ferry's frames
// and get the same bits; ferry reads theirs and gets the same bits. Python
// writes what it writes for its own floats and ints (float64, integers).

#include "exact_values.hpp"
#include "python_runner.hpp"

#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace ferry::serializers::test {
namespace {

/// A type as a cereal user writes it, holding edge values.
struct edge_record {
  std::vector<double> doubles;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  uint64_t largest = 0;
  std::vector<std::string> texts;
  std::map<std::string, double> named;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(doubles, floats, ints, largest, texts, named);
  }
};

/// What a family carries of the edge values.
struct edge_rules {
  bool nan_payloads = true;   // every NaN, else the default quiet NaN only
  bool signalling_f32 = true; // float signalling NaNs (Python has none)
  bool nul = true;            // NUL inside strings
  bool bytes = true;          // strings that are not UTF-8
};

edge_record make_edge_record(const edge_rules& rules) {
  edge_record x;
  for (uint64_t b :
       {0x8000000000000000ull, 0x0ull, 0x1ull, 0x000fffffffffffffull,
        0x0010000000000000ull, 0x7fefffffffffffffull, 0xffefffffffffffffull,
        0x7ff0000000000000ull, 0xfff0000000000000ull,
        0x4340000000000000ull,  // 2^53
        0x4340000000000001ull,  // 2^53 + 2
        0x401c000000000000ull,  // 7.0
        0x3fb999999999999aull,  // 0.1
        0x7ff8000000000000ull}) // the default quiet NaN
    x.doubles.push_back(std::bit_cast<double>(b));
  if (rules.nan_payloads)
    for (uint64_t b : {0x7ff0000000000001ull, 0xfff8000000000abcull})
      x.doubles.push_back(std::bit_cast<double>(b));
  for (uint32_t b : {0x80000000u, 0x00000001u, 0x007fffffu, 0x00800000u,
                     0x7f7fffffu, 0x7f800000u, 0xff800000u,
                     0x4b800000u, // 2^24
                     0x40e00000u, // 7.0
                     0x7fc00000u})
    x.floats.push_back(std::bit_cast<float>(b));
  if (rules.nan_payloads)
    for (uint32_t b : {0x7fc00123u, 0xffc00001u})
      x.floats.push_back(std::bit_cast<float>(b));
  if (rules.nan_payloads && rules.signalling_f32)
    x.floats.push_back(std::bit_cast<float>(0x7f800001u));
  x.ints = {INT64_MIN, INT64_MAX, 0, -1, 1};
  x.largest = UINT64_MAX;
  x.texts = {"", "\xef\xbb\xbf", "\xf4\x8f\xbf\xbf", "e\xcc\x81",
             "\xef\xbf\xbf", "q\"\\\n\t\x01/", std::string(70000, 'y')};
  if (rules.nul)
    x.texts.emplace_back("a\0b", 3);
  if (rules.bytes) {
    x.texts.emplace_back("\xff\xfe");
    x.texts.emplace_back("\xed\xa0\x80");
  }
  x.named = {{"", -0.0}, {"\xc3\xa9", 5e-324}, {"z", 0x1p53}};
  return x;
}

std::string as_string(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::vector<std::byte> as_bytes(const std::string& text) {
  std::vector<std::byte> result(text.size());
  std::memcpy(result.data(), text.data(), text.size());
  return result;
}

edge_rules rules_of(const std::string& family) {
  edge_rules rules;
  if (family == "cereal.json") {
    rules.nan_payloads = false;
    rules.nul = false;
    rules.bytes = false;
  }
  return rules;
}

template <class Archive>
edge_record read_with_plain_cereal(const std::string& text) {
  std::istringstream is{text};
  Archive ar{is};
  edge_record out;
  ar(out);
  return out;
}

template <class Archive>
std::string write_with_plain_cereal(const edge_record& x) {
  std::ostringstream os;
  {
    Archive ar{os};
    ar(x);
  }
  return os.str();
}

class interop_exact : public ::testing::TestWithParam<std::string> {
protected:
  registry sut;

  edge_record read_plain(const std::string& family, const std::string& text) {
    if (family == "cereal.binary")
      return read_with_plain_cereal<cereal::BinaryInputArchive>(text);
    if (family == "cereal.portable")
      return read_with_plain_cereal<cereal::PortableBinaryInputArchive>(text);
    return read_with_plain_cereal<cereal::JSONInputArchive>(text);
  }

  std::string write_plain(const std::string& family, const edge_record& x) {
    if (family == "cereal.binary")
      return write_with_plain_cereal<cereal::BinaryOutputArchive>(x);
    if (family == "cereal.portable")
      return write_with_plain_cereal<cereal::PortableBinaryOutputArchive>(x);
    return write_with_plain_cereal<cereal::JSONOutputArchive>(x);
  }
};

TEST_P(interop_exact, PlainCerealReadsFerrysEdgeValuesBitForBit) {
  // Arrange
  auto family = GetParam();
  auto in = make_edge_record(rules_of(family));
  auto p = sut.encode(in, encode_with(family));
  ASSERT_TRUE(p) << render(p.error());
  ASSERT_EQ(p->frames.size(), 1u);
  // Act: plain cereal, no ferry.
  auto out = read_plain(family, as_string(p->frames[0].bytes()));
  // Assert
  std::string where;
  EXPECT_TRUE(same(in, out, &where)) << family << ": " << where;
}

TEST_P(interop_exact, FerryReadsPlainCerealsEdgeValuesBitForBit) {
  // Arrange
  auto family = GetParam();
  auto in = make_edge_record(rules_of(family));
  auto text = write_plain(family, in);
  auto name = sut.encode(in, encode_with(family))->header.type_name;
  // Act
  auto out = sut.decode<edge_record>(make_payload(family, name, as_bytes(text)),
                                     decode_with(family));
  // Assert
  ASSERT_TRUE(out) << render(out.error());
  std::string where;
  EXPECT_TRUE(same(in, *out, &where)) << family << ": " << where;
}

INSTANTIATE_TEST_SUITE_P(cereal, interop_exact,
                         ::testing::Values("cereal.binary", "cereal.portable",
                                           "cereal.json"),
                         [](const auto& info) {
                           auto name = info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

// -- Python's msgpack ----------------------------------------------------------

/// What Python prints for `x` (see `print_script`): each float's type and
/// big-endian bits, the integers, each text's UTF-8 bytes, the map.
std::string python_view(const edge_record& x) {
  std::ostringstream os;
  os << std::hex << std::setfill('0');
  auto line = [&](auto&& items) {
    bool first = true;
    for (auto& item : items) {
      os << (first ? "" : " ") << item;
      first = false;
    }
    os << "\n";
  };
  auto hex = [](uint64_t bits, int width) {
    std::ostringstream h;
    h << std::hex << std::setw(width) << std::setfill('0') << bits;
    return h.str();
  };
  auto text_hex = [&](const std::string& s) {
    std::string result;
    for (unsigned char c : s)
      result += hex(c, 2);
    return result;
  };
  std::vector<std::string> items;
  for (auto d : x.doubles)
    items.push_back("float:" + hex(std::bit_cast<uint64_t>(d), 16));
  line(items);
  items.clear();
  for (auto f : x.floats)
    items.push_back("float:" + hex(std::bit_cast<uint32_t>(f), 8));
  line(items);
  items.clear();
  for (auto i : x.ints)
    items.push_back(std::to_string(i));
  items.push_back(std::to_string(x.largest));
  line(items);
  items.clear();
  for (auto& s : x.texts)
    items.push_back(text_hex(s));
  line(items);
  items.clear();
  for (auto& [k, v] : x.named)
    items.push_back(text_hex(k) + "=" + hex(std::bit_cast<uint64_t>(v), 16));
  line(items);
  auto result = os.str();
  result.pop_back();
  return result;
}

/// Prints an edge_record's msgpack frame as `python_view` does.
constexpr const char* print_script = R"(import msgpack, struct, sys
v = msgpack.unpackb(open(sys.argv[1], 'rb').read(), raw=False)
doubles, floats, ints, largest, texts, named = v
print(' '.join(type(x).__name__ + ':' + struct.pack('>d', x).hex() for x in doubles))
print(' '.join(type(x).__name__ + ':' + struct.pack('>f', x).hex() for x in floats))
print(' '.join(str(x) for x in ints + [largest]))
print(' '.join(x.encode('utf-8').hex() for x in texts))
print(' '.join(k.encode('utf-8').hex() + '=' + struct.pack('>d', d).hex()
               for k, d in sorted(named.items(), key=lambda kv: kv[0].encode('utf-8'))))
)";

/// Reads python_view's lines and writes the record as Python's msgpack
/// does: doubles and the map's values as float64, floats as float32.
constexpr const char* write_script = R"(import msgpack, struct, sys
lines = open(sys.argv[1]).read().split('\n')
def floats(line, fmt):
    return [struct.unpack(fmt, bytes.fromhex(x.split(':')[1]))[0]
            for x in line.split()]
doubles = floats(lines[0], '>d')
singles = floats(lines[1], '>f')
numbers = [int(x) for x in lines[2].split()]
texts = [bytes.fromhex(x).decode('utf-8') for x in lines[3].split(' ')]
named = {}
for item in lines[4].split():
    k, d = item.split('=')
    named[bytes.fromhex(k).decode('utf-8')] = struct.unpack('>d', bytes.fromhex(d))[0]
out = (bytes([0x96]) + msgpack.packb(doubles)
       + msgpack.packb(singles, use_single_float=True)
       + msgpack.packb(numbers[:-1]) + msgpack.packb(numbers[-1])
       + msgpack.packb(texts) + msgpack.packb(named))
print(out.hex())
)";

/// Python reads no float32 signalling NaN back as such (its floats are
/// doubles, and the conversion quiets it).
edge_rules python_rules() {
  edge_rules rules;
  rules.signalling_f32 = false;
  rules.bytes = false;
  return rules;
}

std::vector<std::byte> from_hex(const std::string& text) {
  std::vector<std::byte> result;
  for (size_t i = 0; i + 1 < text.size(); i += 2)
    result.push_back(
      static_cast<std::byte>(std::stoi(text.substr(i, 2), nullptr, 16)));
  return result;
}

TEST(interop_python, PythonMsgpackReadsFerrysEdgeValuesBitForBit) {
  // Arrange
  registry sut;
  auto in = make_edge_record(python_rules());
  auto p = sut.encode(in, encode_with("msgpack"));
  ASSERT_TRUE(p) << render(p.error());
  // Act
  auto out = run_python(print_script, p->frames[0].bytes());
  // Assert: every double and float arrives as a Python float (7.0 and -0.0
  // too), bit for bit.
  EXPECT_EQ(out, python_view(in));
}

TEST(interop_python, FerryReadsPythonMsgpacksEdgeValuesBitForBit) {
  // Arrange: Python writes the record from python_view's text.
  registry sut;
  auto in = make_edge_record(python_rules());
  auto view = python_view(in);
  auto hex = run_python(write_script, std::as_bytes(std::span{view}));
  auto name = sut.encode(in, encode_with("msgpack"))->header.type_name;
  // Act
  auto out = sut.decode<edge_record>(
    make_payload("msgpack", name, from_hex(hex)), decode_with("msgpack"));
  // Assert
  ASSERT_TRUE(out) << render(out.error()) << "\n" << hex;
  std::string where;
  EXPECT_TRUE(same(in, *out, &where)) << where;
}

TEST(interop_python, PythonIntegersReadIntoDoublesOnlyWhenExact) {
  // Python writes ints as msgpack integers; a double member takes one when
  // it holds it exactly.
  registry sut;
  auto pack = [&](const char* list) {
    return from_hex(run_python(std::string{"import msgpack\nprint(msgpack.packb("}
                                 + list + ").hex())\n",
                               {}));
  };
  auto name = sut.encode(std::vector<double>{}, encode_with("msgpack"))
                ->header.type_name;
  auto exact = sut.decode<std::vector<double>>(
    make_payload("msgpack", name, pack("[7, -3, 2**53, -2**63]")),
    decode_with("msgpack"));
  auto rounded = sut.decode<std::vector<double>>(
    make_payload("msgpack", name, pack("[1.5, 2**53 + 1]")),
    decode_with("msgpack"));
  ASSERT_TRUE(exact) << render(exact.error());
  EXPECT_EQ(*exact, (std::vector<double>{7, -3, 0x1p53, -0x1p63}));
  ASSERT_FALSE(rounded);
  EXPECT_EQ(rounded.error(), errc::inexact_value) << render(rounded.error());
}

} // namespace
} // namespace ferry::serializers::test
