// SPDX-License-Identifier: Apache-2.0
// Quantization throughput against memcpy in the same binary.
//
//   bench_quantize [--benchmark_filter=...]
//
// Every benchmark moves a 8192 x 8192 fp32 tensor (256 MiB). "bytes/s" counts the bytes a kernel
// must move at least: input read plus output written (memcpy: 2 x 256 MiB; MXFP8: 256 MiB in,
// 64 MiB codes + 2 MiB scales out; NVFP4: 256 MiB in, 32 MiB codes + 4 MiB scales out). "ratio" is
// that rate over the memcpy rate, with memcpy run on as many threads as the quantizer (OpenMP),
// best of 5, measured once at start-up. Output buffers are allocated and touched before timing.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "blockscale/quantize.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using namespace blockscale;

constexpr std::int64_t kN = 8192;
constexpr std::size_t kCount = static_cast<std::size_t>(kN * kN);

// Normal values with a per-row magnitude spread over 2^-8 .. 2^8, so block scales vary.
const std::vector<float>& input() {
  static const std::vector<float> x = [] {
    std::vector<float> v(kCount);
    std::mt19937 gen(12345);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (std::int64_t r = 0; r < kN; ++r) {
      const float row_scale = std::ldexp(1.0f, static_cast<int>(r % 17) - 8);
      for (std::int64_t k = 0; k < kN; ++k) v[static_cast<std::size_t>(r * kN + k)] = normal(gen) * row_scale;
    }
    return v;
  }();
  return x;
}

void parallel_copy(const float* src, float* dst, std::size_t n) {
#if defined(_OPENMP)
#pragma omp parallel
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto nt = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t lo = n * t / nt, hi = n * (t + 1) / nt;
    std::memcpy(dst + lo, src + lo, (hi - lo) * sizeof(float));
  }
#else
  std::memcpy(dst, src, n * sizeof(float));
#endif
}

// Bytes per second of parallel_copy over the input (read + write), best of 5.
double memcpy_rate() {
  static const double rate = [] {
    const std::vector<float>& x = input();
    std::vector<float> y(kCount, 1.0f);
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      parallel_copy(x.data(), y.data(), kCount);
      benchmark::ClobberMemory();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
    }
    return 2.0 * static_cast<double>(kCount * sizeof(float)) / best;
  }();
  return rate;
}

void set_counters(benchmark::State& state, double bytes_per_iteration) {
  state.counters["bytes/s"] = benchmark::Counter(bytes_per_iteration, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1024);
  state.counters["ratio"] =
      benchmark::Counter(bytes_per_iteration / memcpy_rate(), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Memcpy(benchmark::State& state) {
  const std::vector<float>& x = input();
  std::vector<float> y(kCount, 1.0f);
  for (auto _ : state) {
    parallel_copy(x.data(), y.data(), kCount);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 2.0 * static_cast<double>(kCount * sizeof(float)));
}

void run_quantize(benchmark::State& state, const BlockFormat& f, const QuantizeOptions& o) {
  const std::vector<float>& x = input();
  const BlockScaledDesc d{f, {kN, kN}, KAxis::last, dense_packing(f.element), ScaleLayout::of(ScaleLayoutKind::tiled_128x4)};
  std::vector<std::uint8_t> elements(d.element_bytes(), 0);
  std::vector<std::uint8_t> scales(d.scale_bytes(), 0);
  for (auto _ : state) {
    const TensorScale ts = quantize_into(x, d, o, elements, scales);
    benchmark::DoNotOptimize(ts);
    benchmark::DoNotOptimize(elements.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<double>(kCount * sizeof(float) + elements.size() + scales.size()));
}

void BM_QuantizeMxfp8E4m3Rceil(benchmark::State& state) {
  run_quantize(state, block_formats::mxfp8_e4m3, recipes::transformer_engine_mxfp8(Format::float8_e4m3fn));
}

void BM_QuantizeNvfp4TransformerEngine(benchmark::State& state) {
  run_quantize(state, block_formats::nvfp4, recipes::nvfp4_transformer_engine());
}

// The same with the global amax given (delayed scaling / calibration): one pass over the input.
void BM_QuantizeNvfp4TransformerEngineGivenAmax(benchmark::State& state) {
  QuantizeOptions o = recipes::nvfp4_transformer_engine();
  o.tensor_scale = TensorScaleSource::given_amax;
  o.tensor_amax = 1024.0f;
  run_quantize(state, block_formats::nvfp4, o);
}

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_QuantizeMxfp8E4m3Rceil)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_QuantizeNvfp4TransformerEngine)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_QuantizeNvfp4TransformerEngineGivenAmax)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
