// Writes the seed corpus of every fuzz target: valid encodings of the fuzzed
// types. Usage: ferry_fuzz_make_seeds <tests/fuzz/corpus>

#include "fuzz_types.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

using namespace ferry::serializers;
using namespace ferry::serializers::fuzz;

namespace {

void write(const std::filesystem::path& dir, const std::string& name,
           std::span<const std::byte> bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream out{dir / name, std::ios::binary};
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

template <class T>
void seed(const std::filesystem::path& root, const std::string& target,
          const char* family, const std::string& name, const T& value) {
  encode_options opts;
  opts.serializers = {family};
  auto p = fuzz_registry().encode(value, opts);
  if (!p) {
    std::cerr << target << "/" << name << ": " << render(p.error()) << '\n';
    std::exit(1);
  }
  write(root / target, name, p->frames[0].bytes());
}

common make_common() {
  common c;
  c.id = -7;
  c.score = 2.5;
  c.name = "seed";
  c.values = {1.5f, -2.0f};
  c.tags = {{"a", 1}, {"bb", -2}};
  c.nested = {{1, 2}, {}, {3}};
  c.flags = {true, false, true};
  return c;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ferry_fuzz_make_seeds <corpus-dir>\n";
    return 2;
  }
  std::filesystem::path root{argv[1]};
  cereal_value cv;
  cv.base = make_common();
  cv.maybe = "m";
  cv.choice = std::vector<double>{1, 2};
  auto shared = std::make_shared<leaf>(leaf{4, {1, 2, 3}});
  cv.shared = {shared, nullptr, shared};
  cv.owned = std::make_unique<leaf>(leaf{5, {}});
  tree t{{tree{}, tree{{tree{}}}}};
  msgpack_value mv{1, 0.5, "m", {1.0f}, {{"k", 3}}, {{7}}, {false}, "o"};
  for (auto [target, family] :
       {std::pair{"cereal_binary", "cereal.binary"},
        std::pair{"cereal_portable", "cereal.portable"},
        std::pair{"cereal_json", "cereal.json"}}) {
    seed(root, target, family, "value", cv);
    seed(root, target, family, "empty", cereal_value{});
    seed(root, target, family, "tree", t);
  }
  seed(root, "msgpack", "msgpack", "value", mv);
  seed(root, "msgpack", "msgpack", "empty", msgpack_value{});
  seed(root, "msgpack", "msgpack", "tree", t);
  seed(root, "caf", "caf", "value", make_common());
  seed(root, "caf", "caf", "empty", common{});
  seed(root, "caf", "caf", "tree", t);
  seed(root, "raw", "raw", "samples",
       std::vector<sample>{{1, 2, {3, 4, 5, 6}}, {7, 8, {}}});
  seed(root, "raw", "raw", "sample", sample{9, 1.25, {1, 1, 1, 1}});
  payload_header h;
  h.family = "cereal.binary";
  h.type_name = "cereal_value";
  h.frame_sizes = {12, 4096};
  h.stand_in = "proxy";
  write(root / "header", "two_frames", encode_header(h));
  write(root / "header", "empty_names", encode_header(payload_header{"x", "", 1, {}, ""}));
  return 0;
}
