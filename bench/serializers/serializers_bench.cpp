// ferry::serializers against the libraries called directly, and memcpy.
//
// Rows:
//   BM_roundtrip/<family>/<dataset>   encode + decode through a ferry registry
//   BM_direct/<family>/<dataset>      the same work with the library alone
//   BM_memcpy/<dataset>               copying the same bytes into a fresh buffer
//   BM_roundtrip_view/raw/doubles_64MiB  raw encode + decode into a span
// Datasets: doubles_1MiB, doubles_64MiB (std::vector<double>), records_100k
// (100k records {int64 id; string name; vector<float> values(256);
// map<string,int> tags(8)}). For records_100k, BM_memcpy copies as many bytes
// as cereal.binary makes of them. raw cannot encode records (strings, maps),
// so BM_roundtrip/raw/records_100k does not exist.
//
// The record type has hand-written serialization for every library so that
// ferry and the direct rows do exactly the same work, with no ferry code in
// the direct rows. Every iteration starts, untimed, with the heap's free
// memory handed back to the system (fresh_heap), so buffers get fresh pages
// in every row whatever ran before. Compare ratios within one run only
// (noisy machines), and let repetitions interleave so that no row always
// runs in the state the row before it left (the order alone moved single
// ratios by 0.3 here):
//
//   ferry_serializers_bench --benchmark_repetitions=5
//     --benchmark_enable_random_interleaving=true
//     --benchmark_report_aggregates_only=true --benchmark_format=json
//
// (one command line)
// and compare the medians.

#include "ferry/serializers/all.hpp"

#include <benchmark/benchmark.h>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/meta/type_name.hpp>

#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <msgpack.hpp>

#include <malloc.h>

#include <cstring>
#include <sstream>

namespace {

using namespace ferry::serializers;

struct bench_record {
  int64_t id = 0;
  std::string name;
  std::vector<float> values;
  std::map<std::string, int32_t> tags;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, name, values, tags);
  }

  MSGPACK_DEFINE(id, name, values, tags)

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f,
                                                 bench_record& x) {
    return f(caf::meta::type_name("bench_record"), x.id, x.name, x.values,
             x.tags);
  }
};

using records = std::vector<bench_record>;
using doubles = std::vector<double>;

doubles make_doubles(size_t bytes) {
  doubles xs(bytes / sizeof(double));
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<double>(i) * 0.25;
  return xs;
}

const doubles& doubles_1mib() {
  static const auto xs = make_doubles(size_t{1} << 20);
  return xs;
}

const doubles& doubles_64mib() {
  static const auto xs = make_doubles(size_t{64} << 20);
  return xs;
}

const records& records_100k() {
  static const auto xs = [] {
    records result(100000);
    for (size_t i = 0; i < result.size(); ++i) {
      auto& r = result[i];
      r.id = static_cast<int64_t>(i);
      r.name = "record-" + std::to_string(i);
      r.values.resize(256);
      for (size_t j = 0; j < r.values.size(); ++j)
        r.values[j] = static_cast<float>(i + j) * 0.5f;
      for (int t = 0; t < 8; ++t)
        r.tags["tag" + std::to_string(t)] = static_cast<int32_t>(i) + t;
    }
    return result;
  }();
  return xs;
}

registry& bench_registry() {
  static registry* reg = [] {
    auto r = new registry;
    r->add_type<doubles>("doubles");
    r->add_type<records>("records");
    return r;
  }();
  return *reg;
}

template <class T>
int64_t byte_count(const T& x) {
  if constexpr (std::is_same_v<T, doubles>)
    return static_cast<int64_t>(x.size() * sizeof(double));
  else
    return static_cast<int64_t>(x.size() * (sizeof(bench_record) + 256 * 4));
}

/// Starts an iteration, untimed, with the heap's free memory handed back to
/// the system: every buffer a row allocates then gets fresh pages, as in a
/// fresh process, whatever rows ran before. Without it, rows after
/// records_100k (whose 100k records leave large free chunks in the middle of
/// the heap) got their 64 MiB buffers from such a chunk, already faulted in:
/// BM_memcpy/doubles_64MiB read 3.5 ms instead of 35 ms in some runs and not
/// in others, and every ratio against it moved tenfold. BM_memcpy is meant
/// to pay the same page faults a decode into a new vector pays.
void fresh_heap(benchmark::State& state) {
  state.PauseTiming();
  malloc_trim(0);
  state.ResumeTiming();
}

// -- ferry -----------------------------------------------------------------------

template <class T>
void roundtrip(benchmark::State& state, const std::string& family,
               const T& (*data)()) {
  auto& x = data();
  auto& reg = bench_registry();
  encode_options eo;
  eo.serializers = {family};
  decode_options dopts;
  dopts.deserializers = {family};
  dopts.limits.max_payload_bytes = uint64_t{8} << 30;
  eo.limits.max_payload_bytes = uint64_t{8} << 30;
  for (auto _ : state) {
    fresh_heap(state);
    auto p = reg.encode(x, eo);
    if (!p) {
      state.SkipWithError(render(p.error()).c_str());
      return;
    }
    auto y = reg.decode<T>(*p, dopts);
    if (!y) {
      state.SkipWithError(render(y.error()).c_str());
      return;
    }
    benchmark::DoNotOptimize(y->data());
  }
  state.SetBytesProcessed(state.iterations() * byte_count(x));
}

void roundtrip_view(benchmark::State& state) {
  auto& x = doubles_64mib();
  auto& reg = bench_registry();
  encode_options eo;
  eo.serializers = {"raw"};
  decode_options dopts;
  dopts.deserializers = {"raw"};
  for (auto _ : state) {
    fresh_heap(state);
    auto p = reg.encode(x, eo);
    auto y = reg.decode<std::span<const double>>(*p, dopts);
    benchmark::DoNotOptimize(y->data());
  }
  state.SetBytesProcessed(state.iterations() * byte_count(x));
}

// -- the libraries alone --------------------------------------------------------

template <class Out, class In, class T>
void direct_cereal(benchmark::State& state, const T& (*data)()) {
  auto& x = data();
  for (auto _ : state) {
    fresh_heap(state);
    std::stringstream ss;
    {
      Out ar{ss};
      ar(x);
    }
    T y;
    {
      In ar{ss};
      ar(y);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * byte_count(x));
}

template <class T>
void direct_msgpack(benchmark::State& state, const T& (*data)()) {
  auto& x = data();
  for (auto _ : state) {
    fresh_heap(state);
    msgpack::sbuffer buf;
    msgpack::pack(buf, x);
    auto handle = msgpack::unpack(buf.data(), buf.size());
    T y;
    handle.get().convert(y);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * byte_count(x));
}

template <class T>
void direct_caf(benchmark::State& state, const T& (*data)()) {
  auto& x = data();
  for (auto _ : state) {
    fresh_heap(state);
    std::vector<char> buf;
    caf::binary_serializer sink{nullptr, buf};
    if (auto err = sink(const_cast<T&>(x))) {
      state.SkipWithError("caf serializer failed");
      return;
    }
    T y;
    caf::binary_deserializer source{nullptr, buf};
    if (auto err = source(y)) {
      state.SkipWithError("caf deserializer failed");
      return;
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * byte_count(x));
}

void direct_raw(benchmark::State& state, const doubles& (*data)()) {
  auto& x = data();
  for (auto _ : state) {
    fresh_heap(state);
    // "Encode": the bytes of the vector; decode: a new vector filled by memcpy.
    auto bytes = std::as_bytes(std::span<const double>{x});
    doubles y(bytes.size() / sizeof(double));
    std::memcpy(y.data(), bytes.data(), bytes.size());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * byte_count(x));
}

void memcpy_fresh(benchmark::State& state, const void* src, size_t n) {
  for (auto _ : state) {
    fresh_heap(state);
    std::unique_ptr<std::byte[]> dst{new std::byte[n]};
    std::memcpy(dst.get(), src, n);
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(n));
}

// -- registration ---------------------------------------------------------------


template <class T>
void add_dataset(const std::string& dataset, const T& (*data)(), bool raw) {
  auto unit = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMillisecond)->UseRealTime();
  };
  for (auto family : {"cereal.binary", "cereal.portable", "cereal.json",
                      "msgpack", "caf", "raw"}) {
    std::string fam{family};
    if (fam == "raw" && !raw)
      continue;
    unit(benchmark::RegisterBenchmark(
      ("BM_roundtrip/" + fam + "/" + dataset).c_str(),
      [fam, data](benchmark::State& s) { roundtrip(s, fam, data); }));
  }
  using namespace cereal;
  unit(benchmark::RegisterBenchmark(
    ("BM_direct/cereal.binary/" + dataset).c_str(), [data](benchmark::State& s) {
      direct_cereal<BinaryOutputArchive, BinaryInputArchive>(s, data);
    }));
  unit(benchmark::RegisterBenchmark(
    ("BM_direct/cereal.portable/" + dataset).c_str(),
    [data](benchmark::State& s) {
      direct_cereal<PortableBinaryOutputArchive, PortableBinaryInputArchive>(
        s, data);
    }));
  unit(benchmark::RegisterBenchmark(
    ("BM_direct/cereal.json/" + dataset).c_str(), [data](benchmark::State& s) {
      direct_cereal<JSONOutputArchive, JSONInputArchive>(s, data);
    }));
  unit(benchmark::RegisterBenchmark(
    ("BM_direct/msgpack/" + dataset).c_str(),
    [data](benchmark::State& s) { direct_msgpack(s, data); }));
  unit(benchmark::RegisterBenchmark(
    ("BM_direct/caf/" + dataset).c_str(),
    [data](benchmark::State& s) { direct_caf(s, data); }));
  if constexpr (std::is_same_v<T, doubles>) {
    unit(benchmark::RegisterBenchmark(
      ("BM_direct/raw/" + dataset).c_str(),
      [data](benchmark::State& s) { direct_raw(s, data); }));
  }
  unit(benchmark::RegisterBenchmark(
    ("BM_memcpy/" + dataset).c_str(), [data](benchmark::State& s) {
      auto& x = data();
      if constexpr (std::is_same_v<T, doubles>) {
        memcpy_fresh(s, x.data(), x.size() * sizeof(double));
      } else {
        static const auto encoded = [&] {
          encode_options eo;
          eo.serializers = {"cereal.binary"};
          return bench_registry().encode(x, eo)->frames[0].release();
        }();
        memcpy_fresh(s, encoded.data(), encoded.size());
      }
    }));
}

} // namespace

int main(int argc, char** argv) {
  // glibc's default mmap threshold (128 KiB), fixed: a fixed value turns off
  // glibc's dynamic threshold, so every row allocates as a fresh process
  // does, whatever ran before it (see also fresh_heap).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  add_dataset<doubles>("doubles_1MiB", &doubles_1mib, true);
  add_dataset<doubles>("doubles_64MiB", &doubles_64mib, true);
  add_dataset<records>("records_100k", &records_100k, false);
  benchmark::RegisterBenchmark("BM_roundtrip_view/raw/doubles_64MiB",
                               roundtrip_view)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
