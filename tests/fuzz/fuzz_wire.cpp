// libFuzzer target: ferry's wire as a connection's reader takes it from a
// peer (framework/src/transport/frame_reader.hpp, framework/src/wire/).
// The first input byte picks how the rest is cut into reads (one byte at a
// time, 7 bytes, 4 KiB, or all at once, as a socket may hand them over);
// the rest is what the peer sent: the preface, then frames. Every frame
// goes to a sink that reads it as the node would: the handshake's intro
// and hello (whose type names and shapes are compared with this build's
// types, as a link does), refusals, every control frame, requests and
// answers, message and batch frames (with an import landing, as a node
// has: `inline_handle` frames land in it within its budget, and every
// object must be gone once the message is), and chunk frames (request 1
// lands in a place of 64 bytes, others are read aside).
// The reader is where ferry takes bytes straight from the network: it must
// refuse anything malformed with an error, keep no more than the input
// holds, and what it accepts must survive writing it back.
#include "link/type_check.hpp"
#include "node/landings.hpp"
#include "transport/frame_reader.hpp"
#include "wire/control.hpp"
#include "wire/message.hpp"

#include "ferry/store/memory_summary.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/store_config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace ferry::detail;
using wire::frame_type;

// Message types of this build (outside the unnamed namespace: clang wants
// the member conversions ferry's reflection declares to have linkage).
namespace fuzz_wire_types {

struct fuzz_line {
  static constexpr uint32_t ferry_version = 1;
  std::string item;
  int32_t qty = 0;
};

struct fuzz_order {
  static constexpr uint32_t ferry_version = 2;
  uint64_t id = 0;
  std::vector<fuzz_line> lines;
  std::optional<double> discount;
};

} // namespace fuzz_wire_types

namespace {

void check(bool ok) {
  if (!ok)
    std::abort();
}

/// The import store: 1 MiB, no spilling, its name removed at once (the
/// mapping stays), so nothing is left in /dev/shm whatever way the fuzzer
/// ends.
ferry::store::object_store& fuzz_store() {
  static auto* st = [] {
    ferry::store::store_config sc;
    sc.name = "ferry-fuzz-wire-" + std::to_string(::getpid());
    sc.capacity = uint64_t{1} << 20;
    sc.spill_limit = 0;
    sc.reaper_interval = std::chrono::milliseconds{0};
    auto attached = ferry::store::object_store::attach(sc);
    if (!attached)
      std::abort();
    static_cast<void>(ferry::store::object_store::remove(sc.name));
    return new ferry::store::object_store(std::move(*attached));
  }();
  return *st;
}

/// The import landing into `fuzz_store()`, as a node has.
landings& fuzz_landing() {
  static auto* places = [] {
    auto* result = new landings;
    result->import_into(fuzz_store());
    return result;
  }();
  return *places;
}

/// The message types of this build, as a node registers them.
const ferry::serializers::registry& fuzz_types() {
  static auto* reg = [] {
    auto* result = new ferry::serializers::registry;
    result->add_type<fuzz_wire_types::fuzz_order>("fuzz.order");
    result->add_type<std::string>("fuzz.text");
    return result;
  }();
  return *reg;
}

/// Compares the types `peer` names with this build's, as a link does.
void check_types(const hello& peer) {
  type_check types{fuzz_types(), peer, "peer", "fuzz"};
  std::vector<std::string> prefs{"cereal.binary", "msgpack", "caf"};
  for (auto& line : types.report(prefs))
    check(!line.empty());
  for (auto name : {"fuzz.order", "fuzz.text"}) {
    if (!types.differs(name)) {
      check(!types.refusal(name, "caf"));
      continue;
    }
    check(types.refusal(name, "caf") != caf::none);
    if (auto sent = types.send_families(name, prefs))
      check(std::find(sent->begin(), sent->end(), "caf") == sent->end());
  }
  if (auto shapes = types.writer_shapes())
    check(!shapes->empty());
}

void same_bytes(const wire_bytes& x, const wire_bytes& y) {
  check(x.size() == y.size());
  check(x.size() == 0
        || std::memcmp(x.bytes().data(), y.bytes().data(), x.size()) == 0);
}

void same_message(const wire_message& x, const wire_message& y) {
  check(x.target == y.target && x.sender == y.sender && x.mid == y.mid);
  check(static_cast<bool>(x.error) == static_cast<bool>(y.error));
  check(!x.error
        || (x.error.code() == y.error.code()
            && x.error.category() == y.error.category()));
  check(x.elements.size() == y.elements.size());
  for (size_t e = 0; e < x.elements.size(); ++e) {
    auto& a = x.elements[e];
    auto& b = y.elements[e];
    same_bytes(a.header, b.header);
    check(a.frames.size() == b.frames.size());
    for (size_t f = 0; f < a.frames.size(); ++f) {
      auto& fa = a.frames[f];
      auto& fb = b.frames[f];
      check(fa.kind == fb.kind && fa.size == fb.size
            && fa.object_id == fb.object_id && fa.ticket == fb.ticket);
      same_bytes(fa.data, fb.data);
    }
  }
}

/// What landed is what the frames name: one import per landed
/// `inline_handle` frame, holding the frame's bytes.
void check_imports(const wire_message& msg) {
  size_t landed = 0;
  for (auto& element : msg.elements)
    for (auto& frame : element.frames)
      for (auto& [id, ref] : msg.imports)
        if (frame.data.size() > 0
            && ref.bytes().data() == frame.data.bytes().data()) {
          check(id == frame.object_id && ref.size() == frame.data.size()
                && frame.size == ref.size()
                && static_cast<frame_kind>(frame.kind)
                     == frame_kind::inline_handle);
          ++landed;
        }
  check(landed == msg.imports.size());
}

/// What was accepted fits the input: its pieces hold no more bytes than
/// the input did.
void check_fits(const wire_message& msg, size_t size) {
  size_t total = 0;
  for (auto& element : msg.elements) {
    total += element.header.size();
    for (auto& frame : element.frames)
      total += frame.data.size();
  }
  check(total <= size);
}

/// Writes `msg` back as a frame and reads it again: the same message must
/// come out.
void round_trip(const wire_message& msg) {
  auto bytes = message_frame(msg).flatten();
  wire::reader in{std::span{bytes}.subspan(wire::header_size), "again"};
  wire_message again;
  check(!read_message(in, again, nullptr));
  check(!in.finish());
  same_message(msg, again);
}

/// Reads control frame `T`; what it accepts must read again from what it
/// writes, and write the same bytes then.
template <class T>
void control(std::span<const std::byte> body) {
  wire::reader in{body, "fuzz"};
  T x;
  if (x.read(in))
    return;
  check(in.remaining() == 0);
  auto once = wire::make_frame(x).flatten();
  std::span<const std::byte> again_body{once};
  wire::reader again_in{again_body.subspan(wire::header_size), "again"};
  T again;
  check(!again.read(again_in));
  auto twice = wire::make_frame(again).flatten();
  check(once == twice);
}

/// The node's side of one connection, as far as reading goes.
class fuzz_sink final : public net::frame_sink {
public:
  explicit fuzz_sink(size_t input) : input_(input) {
    // nop
  }

  uint64_t max_body(frame_type type) const override {
    switch (type) {
      case frame_type::message:
      case frame_type::spawn:
        return uint64_t{16} << 20;
      case frame_type::chunk:
        return uint64_t{4} << 20;
      case frame_type::heartbeat:
      case frame_type::goodbye:
      case frame_type::welcome:
      case frame_type::probe:
        return 0;
      default:
        return uint64_t{2} << 20;
    }
  }

  caf::error on_frame(frame_type type,
                      std::span<const std::byte> body) override {
    check(body.size() <= input_);
    switch (type) {
      case frame_type::intro: {
        wire::reader in{body, "intro"};
        intro x;
        if (!x.read(in) && x.protocol == wire_protocol_version)
          control<intro>(body);
        return caf::none;
      }
      case frame_type::hello: {
        wire::reader in{body, "hello"};
        hello x;
        if (!x.read(in))
          check_types(x);
        control<hello>(body);
        return caf::none;
      }
      case frame_type::refuse: control<refuse>(body); return caf::none;
      case frame_type::credit: control<credit>(body); return caf::none;
      case frame_type::down: control<down_notice>(body); return caf::none;
      case frame_type::exit: control<exit_request>(body); return caf::none;
      case frame_type::link: control<link_request>(body); return caf::none;
      case frame_type::refusal: control<refusal>(body); return caf::none;
      case frame_type::transfer_done:
        control<transfer_done>(body);
        return caf::none;
      case frame_type::lookup: control<lookup>(body); return caf::none;
      case frame_type::chunk_request:
        control<chunk_request>(body);
        return caf::none;
      case frame_type::relay_request:
        control<relay_request>(body);
        return caf::none;
      case frame_type::actor_id:
        control<actor_id_answer>(body);
        return caf::none;
      case frame_type::failed: control<failed_answer>(body); return caf::none;
      case frame_type::spawn: {
        wire::reader in{body, "spawn"};
        spawn_request x;
        if (!x.read(in)) {
          check_fits(x.args, input_);
          round_trip(x.args);
        }
        return caf::none;
      }
      case frame_type::batch: {
        wire::reader in{body, "batch"};
        wire_batch batch;
        if (auto err = read_batch(in, batch, &fuzz_landing()))
          return err;
        for (auto& msg : batch.messages) {
          check_fits(msg, input_);
          check_imports(msg);
          round_trip(msg);
        }
        return caf::none;
      }
      default:
        return caf::none;
    }
  }

  caf::error on_message(wire_message&& msg) override {
    check_fits(msg, input_);
    check_imports(msg);
    round_trip(msg);
    return caf::none;
  }

  net::chunk_place chunk_landing(uint64_t request, uint64_t length) override {
    if (request != 1 || length != place_.size())
      return {};
    return {place_, std::shared_ptr<void>{&place_, [](void*) {}}};
  }

  caf::error on_chunk(uint64_t, wire_bytes data, bool landed) override {
    check(!landed || data.size() == 0);
    check(data.size() <= input_);
    return caf::none;
  }

  import_landing* imports() override { return &fuzz_landing(); }

private:
  size_t input_;
  std::vector<std::byte> place_ = std::vector<std::byte>(64);
};

/// No store object outlives the messages that landed it.
void check_store_empty() {
  auto summary = fuzz_store().memory_summary();
  check(summary && summary->objects.empty());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  static const size_t steps[] = {1, 7, 4096, size_t{1} << 30};
  auto step = steps[data[0] % 4];
  std::span<const std::byte> rest{reinterpret_cast<const std::byte*>(data) + 1,
                                  size - 1};
  {
    fuzz_sink sink{rest.size()};
    net::frame_reader reader{true};
    while (!rest.empty()) {
      auto into = reader.buffer();
      check(!into.empty());
      auto n = std::min({into.size(), step, rest.size()});
      std::memcpy(into.data(), rest.data(), n);
      rest = rest.subspan(n);
      if (reader.consume(n, sink))
        break;
    }
  }
  // The connection is gone (a frame cut short by the end of the input
  // holds what it landed until then).
  check_store_empty();
  return 0;
}
