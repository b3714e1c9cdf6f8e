// Writes the seed corpus of every fuzz target: valid encodings of the fuzzed
// types. Usage: ferry_fuzz_make_seeds <tests/fuzz/corpus>

#include "fuzz_types.hpp"

#include "wire/control.hpp"
#include "wire/message.hpp"
#include "wire/frame.hpp"
#include "wire/out_frame.hpp"

#include "ferry/errc.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>

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

/// Writes a two-frame split array for the fuzz targets' `decode_split`: the
/// byte choosing where frame 0 ends, frame 0 (`head`, the family's part
/// before the elements) and four doubles. Decoders read a split array of
/// any size; only encoders wait for `cereal_split_bytes`.
void seed_split(const std::filesystem::path& root, const std::string& target,
                std::span<const std::byte> head) {
  std::vector<double> xs{1.5, -2.0, 3.25, 0.0};
  auto elements = std::as_bytes(std::span{xs});
  std::vector<std::byte> out{static_cast<std::byte>(head.size())};
  out.insert(out.end(), head.begin(), head.end());
  out.insert(out.end(), elements.begin(), elements.end());
  write(root / target, "split", out);
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

/// A wire message of `elements` elements with two frames each: every frame
/// kind the reader knows a length for, small inline data.
ferry::detail::wire_message sample_wire(size_t elements) {
  using namespace ferry::detail;
  wire_message msg;
  msg.target = 7;
  msg.sender = 9;
  msg.mid = 11;
  for (size_t e = 0; e < elements; ++e) {
    wire_element el;
    el.header = wire_bytes{std::vector<std::byte>(12 + e, std::byte{0x46})};
    for (size_t f = 0; f < 2; ++f) {
      wire_frame frame;
      frame.kind = static_cast<uint8_t>(f == 0 ? frame_kind::inline_plain
                                               : frame_kind::store_object);
      frame.size = f == 0 ? 8 + e : 4096;
      frame.object_id = f;
      frame.ticket = 3 + f;
      if (f == 0)
        frame.data = wire_bytes{std::vector<std::byte>(8 + e, std::byte{7})};
      el.frames.push_back(std::move(frame));
    }
    msg.elements.push_back(std::move(el));
  }
  return msg;
}

/// A wire message from another host whose element holds a store handle:
/// the payload's frame, then an `inline_handle` frame with the object's
/// bytes (what a receiving node lands in its store while reading).
ferry::detail::wire_message handle_wire() {
  using namespace ferry::detail;
  auto msg = sample_wire(0);
  wire_element el;
  el.header = wire_bytes{std::vector<std::byte>(12, std::byte{0x46})};
  wire_frame payload;
  payload.kind = static_cast<uint8_t>(frame_kind::inline_plain);
  payload.size = 16;
  payload.data = wire_bytes{std::vector<std::byte>(16, std::byte{1})};
  el.frames.push_back(std::move(payload));
  wire_frame handle;
  handle.kind = static_cast<uint8_t>(frame_kind::inline_handle);
  handle.size = 64;
  handle.object_id = 262144;
  handle.data = wire_bytes{std::vector<std::byte>(64, std::byte{5})};
  el.frames.push_back(std::move(handle));
  msg.elements.push_back(std::move(el));
  return msg;
}

/// A hello of a build whose `fuzz.order` is another version (a member
/// added, one widened), whose `fuzz.text` is the same, and which names a
/// type this build lacks (fuzz_wire.cpp's types).
ferry::detail::hello sample_hello() {
  ferry::detail::hello x;
  x.serializers = {"msgpack"};
  x.deserializers = {"msgpack", "caf"};
  x.decodable = {"msgpack", "caf", "raw"};
  x.type_names = {"fuzz.order", "fuzz.text", "fuzz.other"};
  x.type_shapes = {"@3{id:u64,lines:list<@1{item:str,qty:i64}>,"
                   "discount:opt<f64>,note:str}",
                   "str", "@1{a:i32}"};
  return x;
}

/// Writes a connection's bytes, as the fuzz target reads them: `selector`
/// (how the bytes are cut into reads), the preface, then `frames`.
void seed_wire(const std::filesystem::path& root, const std::string& name,
               uint8_t selector,
               const std::vector<ferry::detail::wire::out_frame>& frames) {
  std::vector<std::byte> buf{static_cast<std::byte>(selector)};
  auto& preface = ferry::detail::wire::preface;
  buf.insert(buf.end(), preface.begin(), preface.end());
  for (auto& x : frames) {
    auto bytes = x.flatten();
    buf.insert(buf.end(), bytes.begin(), bytes.end());
  }
  write(root / "wire", name, buf);
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
  uint64_t count = 4; // little-endian machines only, like the split itself
  auto tag = std::as_bytes(std::span{&count, 1});
  seed_split(root, "cereal_binary", tag);
  std::vector<std::byte> portable{std::byte{1}};
  portable.insert(portable.end(), tag.begin(), tag.end());
  seed_split(root, "cereal_portable", portable);
  std::string json_head = R"({"elements": 4, "element_bytes": 8})";
  seed_split(root, "cereal_json", std::as_bytes(std::span{json_head}));
  seed(root, "msgpack", "msgpack", "value", mv);
  seed(root, "msgpack", "msgpack", "empty", msgpack_value{});
  seed(root, "msgpack", "msgpack", "tree", t);
  // The structure-aware targets start from valid documents of each type.
  seed(root, "json_shapes", "cereal.json", "common", make_common());
  seed(root, "json_shapes", "cereal.json", "value", cv);
  seed(root, "json_shapes", "cereal.json", "tree", t);
  seed(root, "msgpack_shapes", "msgpack", "value", mv);
  seed(root, "msgpack_shapes", "msgpack", "tree", t);
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
  using namespace ferry::detail;
  std::vector<wire::out_frame> handshake;
  intro who;
  who.node_id = 42;
  who.node_name = "peer";
  who.host_id = "host";
  handshake.push_back(wire::make_frame(who));
  handshake.push_back(wire::make_frame(sample_hello()));
  handshake.push_back(wire::make_frame(welcome{}));
  seed_wire(root, "handshake", 3, handshake);
  std::vector<wire::out_frame> refused;
  refused.push_back(wire::make_frame(who));
  refused.push_back(wire::make_frame(
    refuse{caf::make_error(ferry::errc::handshake_failed, "no")}));
  seed_wire(root, "refused", 0, refused);
  std::vector<wire::out_frame> messages;
  messages.push_back(message_frame(sample_wire(2)));
  messages.push_back(message_frame(handle_wire()));
  auto failed = sample_wire(0);
  failed.error = caf::make_error(ferry::errc::no_such_actor, "gone");
  messages.push_back(message_frame(failed));
  seed_wire(root, "message", 2, messages);
  std::vector<wire_message> small{sample_wire(1), sample_wire(3)};
  std::vector<wire::out_frame> batch;
  batch.push_back(batch_frame(small));
  seed_wire(root, "batch", 1, batch);
  std::vector<wire::out_frame> control;
  control.push_back(wire::make_frame(credit{3, 4096, 3}));
  control.push_back(wire::make_frame(down_notice{7, caf::exit_reason::normal}));
  control.push_back(wire::make_frame(link_request{1, 2, true}));
  control.push_back(wire::make_frame(lookup{5, "name"}));
  control.push_back(wire::make_frame(chunk_request{6, 1, 0, 64}));
  control.push_back(wire::make_frame(actor_id_answer{5, 9}));
  control.push_back(chunk_frame(1, std::vector<std::byte>(64, std::byte{9}),
                                nullptr));
  control.push_back(chunk_frame(7, std::vector<std::byte>(40, std::byte{8}),
                                nullptr));
  seed_wire(root, "control", 0, control);
  return 0;
}
