// Micro-benchmarks of ferry::store against a memcpy baseline in the same run.
//
//   BM_put/<bytes>                  put (create + copy + seal) and release
//   BM_get/<bytes>                  get of a sealed object and release
//   BM_create_seal_release/<bytes>  create + seal + release, no copy
//   BM_memcpy/<bytes>               memcpy into a reused, already-faulted buffer
//
// Targets: put of 64 MiB and more within 1.25x of memcpy; get under
// 20 us at every size; create+seal+release of 1 KiB at 500k/s or more.
// Compare ratios from one run only (the machines are noisy). Run with
// --benchmark_out=store.json --benchmark_out_format=json for the JSON.
#include "ferry/store/errc.hpp"
#include "ferry/store/object_store.hpp"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace ferry::store;

constexpr int64_t min_size = int64_t{1} << 10;
constexpr int64_t max_size = int64_t{1} << 30;

object_store* store = nullptr;

/// Returns a warm source buffer of at least `size` bytes.
std::vector<std::byte>& source() {
  static std::vector<std::byte> buf(static_cast<size_t>(max_size),
                                    std::byte{0x5a});
  return buf;
}

/// Returns a warm destination buffer for the memcpy baseline.
std::vector<std::byte>& destination() {
  static std::vector<std::byte> buf(static_cast<size_t>(max_size),
                                    std::byte{0xa5});
  return buf;
}

void BM_memcpy(benchmark::State& state) {
  auto size = static_cast<size_t>(state.range(0));
  auto& src = source();
  auto& dst = destination();
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), size);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void BM_put(benchmark::State& state) {
  auto size = static_cast<size_t>(state.range(0));
  std::span<const std::byte> bytes{source().data(), size};
  for (auto _ : state) {
    auto ref = store->put(bytes);
    if (!ref) {
      state.SkipWithError(render(ref.error()).c_str());
      break;
    }
    benchmark::DoNotOptimize(ref->bytes().data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

void BM_get(benchmark::State& state) {
  auto size = static_cast<size_t>(state.range(0));
  auto obj = store->put({source().data(), size});
  if (!obj) {
    state.SkipWithError(render(obj.error()).c_str());
    return;
  }
  auto id = obj->id();
  for (auto _ : state) {
    auto ref = store->get(id);
    if (!ref) {
      state.SkipWithError(render(ref.error()).c_str());
      break;
    }
    benchmark::DoNotOptimize(ref->bytes().data());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_create_seal_release(benchmark::State& state) {
  auto size = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    auto builder = store->create(size);
    if (!builder) {
      state.SkipWithError(render(builder.error()).c_str());
      break;
    }
    auto ref = builder->seal();
    benchmark::DoNotOptimize(ref->bytes().data());
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_memcpy)->RangeMultiplier(4)->Range(min_size, max_size);
BENCHMARK(BM_put)->RangeMultiplier(4)->Range(min_size, max_size);
BENCHMARK(BM_get)->RangeMultiplier(4)->Range(min_size, max_size);
BENCHMARK(BM_create_seal_release)->Arg(64)->Arg(1024)->Arg(4096);

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  store_config cfg;
  cfg.name = "ferry-bench-" + std::to_string(::getpid());
  cfg.capacity = static_cast<uint64_t>(max_size) + (uint64_t{16} << 20);
  cfg.spilling = false;
  cfg.prefault = true; // measure a warm store
  cfg.reaper_interval = std::chrono::milliseconds{0};
  auto attached = object_store::attach(cfg);
  if (!attached) {
    std::fprintf(stderr, "ferry_store_bench: %s\n",
                 render(attached.error()).c_str());
    return 1;
  }
  store = &*attached;
  source();
  destination();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  attached->detach();
  if (auto err = object_store::remove(cfg.name))
    std::fprintf(stderr, "ferry_store_bench: %s\n", render(err).c_str());
  return 0;
}
