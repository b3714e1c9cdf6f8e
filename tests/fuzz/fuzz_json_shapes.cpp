// libFuzzer target with a structure-aware mutator: hostile shapes of valid
// cereal.json documents. The mutator parses its input as JSON (rapidjson,
// as cereal does) and changes one node of the tree: swaps its kind (array,
// object, string, number, bool, null), drops, repeats, reorders or renames
// a member or an element, nests it past the depth limit, or puts a number
// at an edge; input that is no JSON goes to libFuzzer's byte mutations. The
// target decodes the result as the test types (fuzz_types.hpp): every
// variant is refused with a typed `ferry_ser` error or comes back exactly,
// and one that decodes has the arrays and objects cereal writes for the
// value where cereal writes them (`decode_same_kinds`).
#include "fuzz_types.hpp"
#include "structure_mutator.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

using namespace ferry::serializers::fuzz;

namespace {

using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;
constexpr unsigned parse_flags = rapidjson::kParseNanAndInfFlag
                                 | rapidjson::kParseFullPrecisionFlag;

/// The container kinds of a parsed value and the values inside it.
kind_tree kinds_of(const Value& v) {
  kind_tree result;
  if (v.IsArray()) {
    result.kind = kind_tree::array;
    for (auto& x : v.GetArray())
      result.children.push_back(kinds_of(x));
  } else if (v.IsObject()) {
    result.kind = kind_tree::map;
    for (rapidjson::SizeType i = 0; i < v.MemberCount(); ++i)
      result.children.push_back(kinds_of((v.MemberBegin() + i)->value));
  }
  return result;
}

/// The container kinds of the JSON text `text`, or nothing if it is none.
std::optional<kind_tree> json_kinds(std::span<const std::byte> text) {
  rapidjson::Document doc;
  doc.Parse<parse_flags | rapidjson::kParseIterativeFlag>(
    reinterpret_cast<const char*>(text.data()), text.size());
  if (doc.HasParseError())
    return std::nullopt;
  return kinds_of(doc);
}

void collect(Value& v, std::vector<Value*>& out) {
  out.push_back(&v);
  if (v.IsArray())
    for (auto& x : v.GetArray())
      collect(x, out);
  else if (v.IsObject()) // by index: rapidjson's member iterators compare
                         // ambiguously in C++20
    for (rapidjson::SizeType i = 0; i < v.MemberCount(); ++i)
      collect((v.MemberBegin() + i)->value, out);
}

/// A value of another kind than `v` (keeping `v` inside where it can).
Value other_kind(Value& v, std::mt19937_64& rng, allocator& a) {
  Value copy{v, a};
  switch (rng() % 6) {
    case 0: {
      Value list{rapidjson::kArrayType};
      if (rng() % 2)
        list.PushBack(copy, a);
      return list;
    }
    case 1: {
      Value object{rapidjson::kObjectType};
      if (rng() % 2)
        object.AddMember("value0", copy, a);
      return object;
    }
    case 2: {
      static const char* texts[] = {"", "x", "12", "NaN", "\xc3\xa9",
                                    "value0"};
      auto* t = texts[rng() % std::size(texts)];
      return Value{t, a};
    }
    case 3: {
      switch (rng() % 4) {
        case 0:
          return Value{static_cast<int64_t>(rng())};
        case 1:
          return Value{static_cast<uint64_t>(rng())};
        case 2:
          return Value{0.5};
        default:
          return Value{-1};
      }
    }
    case 4:
      return Value{rng() % 2 == 0};
    default:
      return Value{};
  }
}

Value edge_number(std::mt19937_64& rng) {
  switch (rng() % 9) {
    case 0:
      return Value{UINT64_MAX};
    case 1:
      return Value{INT64_MIN};
    case 2:
      return Value{-0.0};
    case 3:
      return Value{1e308};
    case 4:
      return Value{4.9e-324};
    case 5:
      return Value{3.4028235677973366e38}; // just above FLT_MAX
    case 6:
      return Value{9007199254740993.0};    // 2^53 + 1 as a double
    case 7:
      return Value{128};
    default:
      return Value{-129};
  }
}

/// Changes one node of `doc`; false when nothing fit.
bool mutate(rapidjson::Document& doc, std::mt19937_64& rng) {
  auto& a = doc.GetAllocator();
  std::vector<Value*> nodes;
  collect(doc, nodes);
  auto& v = *nodes[rng() % nodes.size()];
  switch (rng() % 7) {
    case 0: // swap its kind
      v = other_kind(v, rng, a);
      return true;
    case 1: // drop a member or an element
      if (v.IsObject() && v.MemberCount() > 0) {
        v.RemoveMember(v.MemberBegin() + rng() % v.MemberCount());
        return true;
      }
      if (v.IsArray() && !v.Empty()) {
        v.Erase(v.Begin() + rng() % v.Size());
        return true;
      }
      return false;
    case 2: // repeat one (in an object: a name twice)
      if (v.IsObject() && v.MemberCount() > 0) {
        auto m = v.MemberBegin() + rng() % v.MemberCount();
        Value name{m->name, a};
        Value value{m->value, a};
        v.AddMember(name, value, a);
        return true;
      }
      if (v.IsArray() && !v.Empty()) {
        Value x{v[static_cast<rapidjson::SizeType>(rng() % v.Size())], a};
        v.PushBack(x, a);
        return true;
      }
      return false;
    case 3: { // reorder two
      auto n = v.IsObject() ? v.MemberCount() : v.IsArray() ? v.Size() : 0;
      if (n < 2)
        return false;
      auto [i, j] = two_of(rng, n);
      if (v.IsObject()) {
        auto mi = v.MemberBegin() + i;
        auto mj = v.MemberBegin() + j;
        mi->name.Swap(mj->name);
        mi->value.Swap(mj->value);
      } else {
        v[static_cast<rapidjson::SizeType>(i)].Swap(
          v[static_cast<rapidjson::SizeType>(j)]);
      }
      return true;
    }
    case 4: { // nest it past the limits
      auto depth = 60 + rng() % 20;
      Value inner{v, a};
      for (size_t k = 0; k < depth; ++k) {
        Value outer{rng() % 2 ? rapidjson::kArrayType : rapidjson::kObjectType};
        if (outer.IsArray())
          outer.PushBack(inner, a);
        else
          outer.AddMember("value0", inner, a);
        inner = outer;
      }
      v = inner;
      return true;
    }
    case 5: // rename a member
      if (v.IsObject() && v.MemberCount() > 0) {
        static const char* names[] = {"value9", "", "key", "value",
                                      "first", "data", "value0"};
        auto m = v.MemberBegin() + rng() % v.MemberCount();
        m->name.SetString(names[rng() % std::size(names)], a);
        return true;
      }
      return false;
    default: // a number at an edge
      if (!v.IsNumber())
        return false;
      v = edge_number(rng);
      return true;
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned seed) {
  std::mt19937_64 rng{seed};
  rapidjson::Document doc;
  doc.Parse<parse_flags>(reinterpret_cast<const char*>(data), size);
  if (doc.HasParseError() || rng() % 8 == 0)
    return LLVMFuzzerMutate(data, size, max_size);
  return structured_mutation(
    data, size, max_size, [&] { return mutate(doc, rng); },
    [&]() -> std::optional<std::string> {
      rapidjson::StringBuffer out;
      rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>,
                        rapidjson::UTF8<>, rapidjson::CrtAllocator,
                        rapidjson::kWriteNanAndInfFlag>
        writer{out};
      if (!doc.Accept(writer))
        return std::nullopt;
      return std::string{out.GetString(), out.GetSize()};
    });
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = as_bytes(data, size);
  decode_same_kinds<common>("cereal.json", "common", bytes, json_kinds);
  decode_same_kinds<cereal_value>("cereal.json", "cereal_value", bytes,
                                  json_kinds);
  decode_same_kinds<tree>("cereal.json", "tree", bytes, json_kinds);
  return 0;
}
