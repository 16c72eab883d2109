// SPDX-License-Identifier: Apache-2.0
// Bulk conversion throughput as a ratio of memcpy bandwidth measured in the same binary (issue 2:
// goal >= 50%). Both count bytes moved: memcpy reads and writes n * 4 bytes; f32 -> 8-bit codes
// reads 4 and writes 1 byte per element. Counter `memcpy_ratio` = conversion bytes/s over memcpy
// bytes/s, with memcpy timed on the same buffer size right before.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "blockscale/formats.h"
#include "blockscale/formats/detail/bulk_paths.h"

namespace {

using namespace blockscale;

constexpr std::size_t kElements = std::size_t{1} << 25;  // 128 MiB of floats: well past the caches

const std::vector<float>& input() {
  static const std::vector<float> v = [] {
    std::vector<float> x(kElements);
    std::mt19937 g(7);
    std::normal_distribution<float> d(0.0f, 64.0f);
    for (float& f : x) f = d(g);
    return x;
  }();
  return v;
}

// memcpy bandwidth (bytes read + written per second), best of 5, on buffers of the benchmark size.
double memcpy_bytes_per_second() {
  static const double bw = [] {
    std::vector<float> dst(kElements);
    double best = 0;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(dst.data(), input().data(), kElements * sizeof(float));
      benchmark::DoNotOptimize(dst.data());
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, 2.0 * kElements * sizeof(float) / s);
    }
    return best;
  }();
  return bw;
}

void BM_Memcpy(benchmark::State& state) {
  const std::vector<float>& src = input();  // generated before the timed loop
  std::vector<float> dst(kElements);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kElements * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 2 * kElements * sizeof(float));
}

void convert_benchmark(benchmark::State& state, Format f, detail::BulkPath path) {
  const ConvertOptions o = presets::cuda(f);
  if (path == detail::BulkPath::avx512 && !detail::avx512_available()) {
    state.SkipWithError("no AVX-512 on this CPU");
    return;
  }
  std::vector<std::uint8_t> out(kElements);
  const double memcpy_bw = memcpy_bytes_per_second();
  for (auto _ : state) {
    detail::convert_f32(path, input(), f, out, o);
    benchmark::DoNotOptimize(out.data());
  }
  const double bytes = static_cast<double>(state.iterations()) * kElements * (sizeof(float) + 1);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kElements);
  // kIsRate divides by the elapsed time: (bytes / memcpy_bw) / time = achieved bandwidth over
  // memcpy bandwidth.
  state.counters["memcpy_ratio"] = benchmark::Counter(bytes / memcpy_bw, benchmark::Counter::kIsRate);
}

void BM_F32ToE4M3(benchmark::State& s) { convert_benchmark(s, Format::float8_e4m3fn, detail::BulkPath::automatic); }
void BM_F32ToE2M1(benchmark::State& s) { convert_benchmark(s, Format::float4_e2m1fn, detail::BulkPath::automatic); }
void BM_F32ToE4M3_Portable(benchmark::State& s) { convert_benchmark(s, Format::float8_e4m3fn, detail::BulkPath::portable); }
void BM_F32ToE2M1_Portable(benchmark::State& s) { convert_benchmark(s, Format::float4_e2m1fn, detail::BulkPath::portable); }

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_F32ToE4M3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_F32ToE2M1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_F32ToE4M3_Portable)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_F32ToE2M1_Portable)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
