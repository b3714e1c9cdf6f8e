// libFuzzer target with a structure-aware mutator: hostile shapes of valid
// msgpack documents. The mutator unpacks its input with msgpack-cxx and
// changes one object of the tree: swaps its kind (nil, bool, integers,
// float32 and float64, str, bin, array, map), drops, repeats or reorders an
// element or an entry (a repeated map entry names its key twice), nests it
// past the depth limit, or puts a number at an edge; input that is no
// msgpack goes to libFuzzer's byte mutations. The target decodes the result
// as the test types (fuzz_types.hpp): every variant is refused with a typed
// `ferry_ser` error or comes back exactly, and one that decodes has the
// arrays and maps ferry writes for the value where ferry writes them
// (`decode_same_kinds`).
#include "fuzz_types.hpp"
#include "structure_mutator.hpp"

#include <msgpack.hpp>

#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <vector>

using namespace ferry::serializers::fuzz;

namespace {

using msgpack::object;

/// Unpacks `size` bytes at `data` that hold one msgpack value and nothing
/// after it; nothing otherwise. msgpack-cxx allocates what a count claims:
/// the claims are bounded by the input (this is the fuzzer's reading, not
/// the decoder's under test).
std::optional<msgpack::object_handle> unpack_whole(const void* data,
                                                   size_t size) {
  try {
    msgpack::unpack_limit limit{size, size, size, size, size, 256};
    std::size_t offset = 0;
    auto handle = msgpack::unpack(static_cast<const char*>(data), size,
                                  offset, nullptr, nullptr, limit);
    if (offset != size)
      return std::nullopt;
    return handle;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// The container kinds of a parsed value and the values inside it.
kind_tree kinds_of(const object& o) {
  kind_tree result;
  if (o.type == msgpack::type::ARRAY) {
    result.kind = kind_tree::array;
    for (uint32_t i = 0; i < o.via.array.size; ++i)
      result.children.push_back(kinds_of(o.via.array.ptr[i]));
  } else if (o.type == msgpack::type::MAP) {
    result.kind = kind_tree::map;
    for (uint32_t i = 0; i < o.via.map.size; ++i) {
      result.children.push_back(kinds_of(o.via.map.ptr[i].key));
      result.children.push_back(kinds_of(o.via.map.ptr[i].val));
    }
  }
  return result;
}

/// The container kinds of the msgpack value `bytes`, or nothing if they
/// are not one.
std::optional<kind_tree> msgpack_kinds(std::span<const std::byte> bytes) {
  auto handle = unpack_whole(bytes.data(), bytes.size());
  if (!handle)
    return std::nullopt;
  return kinds_of(handle->get());
}

void collect(object& o, std::vector<object*>& out) {
  out.push_back(&o);
  if (o.type == msgpack::type::ARRAY)
    for (uint32_t i = 0; i < o.via.array.size; ++i)
      collect(o.via.array.ptr[i], out);
  else if (o.type == msgpack::type::MAP)
    for (uint32_t i = 0; i < o.via.map.size; ++i)
      collect(o.via.map.ptr[i].val, out);
}

/// An array of `n` objects in `zone`, the first `copy` of them from `from`.
object* elements(msgpack::zone& zone, uint32_t n, const object* from,
                 uint32_t copy) {
  auto* p = static_cast<object*>(
    zone.allocate_align(sizeof(object) * std::max<uint32_t>(n, 1)));
  for (uint32_t i = 0; i < n; ++i)
    p[i] = i < copy ? from[i] : object{};
  return p;
}

object text(msgpack::zone& zone, const char* s, bool bin) {
  object o;
  auto n = static_cast<uint32_t>(std::strlen(s));
  auto* p = static_cast<char*>(zone.allocate_align(std::max<uint32_t>(n, 1)));
  std::memcpy(p, s, n);
  o.type = bin ? msgpack::type::BIN : msgpack::type::STR;
  if (bin) {
    o.via.bin.size = n;
    o.via.bin.ptr = p;
  } else {
    o.via.str.size = n;
    o.via.str.ptr = p;
  }
  return o;
}

/// An object of another kind than `o` (keeping `o` inside where it can).
object other_kind(const object& o, std::mt19937_64& rng,
                  msgpack::zone& zone) {
  object r;
  switch (rng() % 9) {
    case 0:
      return object{};
    case 1:
      return object{rng() % 2 == 0};
    case 2:
      return object{static_cast<int64_t>(rng())};
    case 3:
      return object{static_cast<uint64_t>(rng())};
    case 4:
      r.type = msgpack::type::FLOAT32;
      r.via.f64 = 0.5;
      return r;
    case 5:
      return object{1.0 / 3};
    case 6: {
      static const char* texts[] = {"", "x", "\xff\xfe", "\xed\xa0\x80",
                                    "12"};
      return text(zone, texts[rng() % std::size(texts)], rng() % 3 == 0);
    }
    case 7:
      r.type = msgpack::type::ARRAY;
      r.via.array.size = rng() % 2;
      r.via.array.ptr = elements(zone, r.via.array.size, &o, 1);
      return r;
    default: {
      r.type = msgpack::type::MAP;
      r.via.map.size = rng() % 2;
      auto* kv = static_cast<msgpack::object_kv*>(
        zone.allocate_align(sizeof(msgpack::object_kv)));
      kv->key = text(zone, "k", false);
      kv->val = o;
      r.via.map.ptr = kv;
      return r;
    }
  }
}

object edge_number(std::mt19937_64& rng) {
  object r;
  switch (rng() % 8) {
    case 0:
      return object{std::numeric_limits<uint64_t>::max()};
    case 1:
      return object{std::numeric_limits<int64_t>::min()};
    case 2:
      return object{-0.0};
    case 3:
      return object{9007199254740993.0};
    case 4:
      r.type = msgpack::type::FLOAT32;
      r.via.f64 = 0.1; // not a float: packed as the float nearest
      return r;
    case 5:
      return object{uint64_t{1} << 31};
    case 6:
      return object{int64_t{-32769}};
    default:
      return object{std::numeric_limits<double>::quiet_NaN()};
  }
}

/// Changes one object of the tree at `root`; false when nothing fit.
bool mutate(object& root, std::mt19937_64& rng, msgpack::zone& zone) {
  std::vector<object*> nodes;
  collect(root, nodes);
  auto& o = *nodes[rng() % nodes.size()];
  bool array = o.type == msgpack::type::ARRAY;
  bool map = o.type == msgpack::type::MAP;
  uint32_t n = array ? o.via.array.size : map ? o.via.map.size : 0;
  switch (rng() % 6) {
    case 0: // swap its kind
      o = other_kind(o, rng, zone);
      return true;
    case 1: { // drop an element or an entry
      if (n == 0)
        return false;
      auto i = rng() % n;
      if (array) {
        std::memmove(o.via.array.ptr + i, o.via.array.ptr + i + 1,
                     sizeof(object) * (n - i - 1));
        --o.via.array.size;
      } else {
        std::memmove(o.via.map.ptr + i, o.via.map.ptr + i + 1,
                     sizeof(msgpack::object_kv) * (n - i - 1));
        --o.via.map.size;
      }
      return true;
    }
    case 2: { // repeat one (in a map: a key twice)
      if (n == 0)
        return false;
      auto i = rng() % n;
      if (array) {
        auto* p = elements(zone, n + 1, o.via.array.ptr, n);
        p[n] = o.via.array.ptr[i];
        o.via.array.ptr = p;
        ++o.via.array.size;
      } else {
        auto* p = static_cast<msgpack::object_kv*>(
          zone.allocate_align(sizeof(msgpack::object_kv) * (n + 1)));
        std::memcpy(p, o.via.map.ptr, sizeof(msgpack::object_kv) * n);
        p[n] = o.via.map.ptr[i];
        o.via.map.ptr = p;
        ++o.via.map.size;
      }
      return true;
    }
    case 3: { // reorder two
      if (n < 2)
        return false;
      auto [i, j] = two_of(rng, n);
      if (array)
        std::swap(o.via.array.ptr[i], o.via.array.ptr[j]);
      else
        std::swap(o.via.map.ptr[i], o.via.map.ptr[j]);
      return true;
    }
    case 4: { // nest it past the limits
      auto depth = 60 + rng() % 20;
      object inner = o;
      for (size_t k = 0; k < depth; ++k) {
        object outer;
        outer.type = msgpack::type::ARRAY;
        outer.via.array.size = 1;
        outer.via.array.ptr = elements(zone, 1, &inner, 1);
        inner = outer;
      }
      o = inner;
      return true;
    }
    default: // a number at an edge
      if (o.type != msgpack::type::POSITIVE_INTEGER
          && o.type != msgpack::type::NEGATIVE_INTEGER
          && o.type != msgpack::type::FLOAT32
          && o.type != msgpack::type::FLOAT64)
        return false;
      o = edge_number(rng);
      return true;
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned seed) {
  std::mt19937_64 rng{seed};
  if (rng() % 8 == 0)
    return LLVMFuzzerMutate(data, size, max_size);
  auto handle = unpack_whole(data, size);
  if (!handle)
    return LLVMFuzzerMutate(data, size, max_size);
  auto& zone = *handle->zone();
  object root = handle->get();
  return structured_mutation(
    data, size, max_size, [&] { return mutate(root, rng, zone); },
    [&]() -> std::optional<std::string> {
      msgpack::sbuffer out;
      msgpack::pack(out, root);
      return std::string{out.data(), out.size()};
    });
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = as_bytes(data, size);
  decode_same_kinds<msgpack_value>("msgpack", "msgpack_value", bytes,
                                   msgpack_kinds);
  decode_same_kinds<tree>("msgpack", "tree", bytes, msgpack_kinds);
  return 0;
}
