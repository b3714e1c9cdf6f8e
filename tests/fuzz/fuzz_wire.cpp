// libFuzzer target: ferry's wire format, the bytes a peer node sends a
// gateway (framework/src/wire/). The first input byte picks the type, the
// rest is what CAF's binary deserializer hands ferry's reader (by the
// first byte modulo 4):
//   0: one `wire_message` (a user message, read flat by hand);
//   1: a `wire_batch` (several of them in one CAF message);
//   2: a `chunk_reply` (a chunk of a pulled frame; no landing is registered
//      here, so its bytes must be read aside);
//   3: a `hello`, whose type names and shapes (the peer build's versions
//      and fingerprints) are compared with this build's types as a link
//      does (`type_check`): a type that differs is never sent or received
//      in `caf`, which bridges no versions.
// The system reading has an import landing, as a node's has: `inline_handle`
// frames land in it (within its budget for objects not yet delivered), and
// every object must be gone once the message is.
// The reader is the one parser in ferry that takes bytes straight from the
// network; it must refuse anything malformed with an error, allocate no more
// than the input holds, and what it accepts must survive writing it back.
#include "link/type_check.hpp"
#include "node/landings.hpp"
#include "wire/control.hpp"
#include "wire/message.hpp"
#include "wire/read_context.hpp"
#include "wire/registration.hpp"

#include "ferry/store/memory_summary.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/store_config.hpp"

#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace ferry::detail;

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

/// A plain CAF config with ferry's wire types and a slot for a read
/// context, as a node's config has: the error a wire message may carry
/// holds a caf::message, which CAF reads against the system's type table,
/// as a gateway's would be. (Not a `node_config`: its options make clang's
/// copies of CAF's option tables clash with those of Debian's gcc-built
/// CAF.)
struct fuzz_config_type : caf::actor_system_config, read_context_slot {
  fuzz_config_type() {
    register_wire_types(*this);
  }
};

fuzz_config_type& fuzz_config() {
  static auto* cfg = new fuzz_config_type;
  return *cfg;
}

caf::actor_system& fuzz_system() {
  static auto* sys = new caf::actor_system(fuzz_config());
  return *sys;
}

/// The import store of `fuzz_system()`: 1 MiB, no spilling, and its name
/// removed at once (the mapping stays), so nothing is left in /dev/shm
/// whatever way the fuzzer ends.
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
    auto* result = new ferry::store::object_store(std::move(*attached));
    // Never destroyed, like the system reading through them.
    static auto* places = new landings;
    places->import_into(*result);
    [[maybe_unused]] static auto* binding
      = new read_context_binding(fuzz_config(), places);
    return result;
  }();
  return *st;
}

void check(bool ok) {
  if (!ok)
    std::abort();
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
  type_check types{fuzz_types(), peer, "fuzz"};
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
  check(x.target == y.target && x.sender == y.sender && x.mid == y.mid
        && x.token == y.token);
  check(x.error == y.error);
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

/// Reads `T` from `bytes` as a BASP worker of `sys` would; returns whether
/// it was accepted.
template <class T>
bool read(caf::actor_system& sys, const char* bytes, size_t size, T& out) {
  caf::binary_deserializer source{sys.dummy_execution_unit(), bytes, size};
  return !source(out);
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

/// No store object outlives the messages that landed it.
void check_store_empty() {
  auto summary = fuzz_store().memory_summary();
  check(summary && summary->objects.empty());
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

/// Writes `x` back and reads it again: the same value must come out.
template <class T, class Compare>
void round_trip(caf::actor_system& sys, const T& x, Compare same) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  check(!sink(const_cast<T&>(x)));
  T again;
  check(read(sys, buf.data(), buf.size(), again));
  same(x, again);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  auto& sys = fuzz_system();
  fuzz_store();
  auto* bytes = reinterpret_cast<const char*>(data) + 1;
  auto n = size - 1;
  if (data[0] % 4 == 3) {
    hello peer;
    if (read(sys, bytes, n, peer)) {
      check_types(peer);
      round_trip(sys, peer, [](const hello& x, const hello& y) {
        check(x.node_name == y.node_name && x.type_names == y.type_names
              && x.type_shapes == y.type_shapes);
      });
    }
  } else if (data[0] % 4 == 2) {
    chunk_reply reply;
    if (read(sys, bytes, n, reply)) {
      check(!reply.landed && reply.data.size() <= n);
      round_trip(sys, reply, [](const chunk_reply& x, const chunk_reply& y) {
        check(x.landing == y.landing && !y.landed);
        same_bytes(x.data, y.data);
      });
    }
  } else if (data[0] % 4 == 0) {
    wire_message msg;
    if (read(sys, bytes, n, msg)) {
      check_fits(msg, n);
      check_imports(msg);
      round_trip(sys, msg, same_message);
    }
  } else {
    wire_batch batch;
    if (read(sys, bytes, n, batch)) {
      for (auto& msg : batch.messages) {
        check_fits(msg, n);
        check_imports(msg);
      }
      round_trip(sys, batch, [](const wire_batch& x, const wire_batch& y) {
        check(x.messages.size() == y.messages.size());
        for (size_t i = 0; i < x.messages.size(); ++i)
          same_message(x.messages[i], y.messages[i]);
      });
    }
  }
  check_store_empty();
  return 0;
}
