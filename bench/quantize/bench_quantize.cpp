// SPDX-License-Identifier: Apache-2.0
// Quantization throughput against memcpy in the same binary.
//
//   bench_quantize [--benchmark_filter=...] [--benchmark_repetitions=N]
//
// Every benchmark moves a 8192 x 8192 fp32 tensor (256 MiB). "bytes/s" counts the bytes a kernel
// must move at least: input read plus output written (memcpy: 2 x 256 MiB; MXFP8: 256 MiB in,
// 64 MiB codes + 2 MiB scales out; NVFP4: 256 MiB in, 32 MiB codes + 4 MiB scales out). Each
// quantize iteration is paired with a memcpy of the same input on as many threads (OpenMP), timed
// separately: "memcpy_bytes/s" is their rate and "ratio" = bytes/s / memcpy_bytes/s, so load from
// other processes hits both sides alike. "traffic_ratio" counts the input once per pass over it
// that the quantization needs: NVFP4 with the global amax from the data reads the input twice (the
// amax must be known before the first block scale), so it is the two-pass rows' bandwidth against
// memcpy's; for one-pass rows it equals "ratio". The reported time is the quantizer's alone. Output
// buffers are allocated and touched before timing. The *Generic rows run the staged pipeline
// (QuantizePath::generic) that the fused AVX-512 kernels replace where the CPU has AVX-512; they
// give the same bytes (tests/quantize/fused_test.cpp).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "blockscale/quantize.h"
#include "blockscale/quantize/detail/paths.h"

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

void BM_Memcpy(benchmark::State& state) {
  const std::vector<float>& x = input();
  std::vector<float> y(kCount, 1.0f);
  for (auto _ : state) {
    parallel_copy(x.data(), y.data(), kCount);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["bytes/s"] = benchmark::Counter(2.0 * static_cast<double>(kCount * sizeof(float)),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1024);
}

void run_quantize(benchmark::State& state, const BlockFormat& f, const QuantizeOptions& o,
                  quantize_detail::QuantizePath path = quantize_detail::QuantizePath::automatic) {
  const int input_passes = has_tensor_scale(f) && o.tensor_scale == TensorScaleSource::from_data ? 2 : 1;
  using clock = std::chrono::steady_clock;
  quantize_detail::set_quantize_path(path);
  const std::vector<float>& x = input();
  const BlockScaledDesc d{f, {kN, kN}, KAxis::last, dense_packing(f.element), ScaleLayout::of(ScaleLayoutKind::tiled_128x4)};
  std::vector<std::uint8_t> elements(d.element_bytes(), 0);
  std::vector<std::uint8_t> scales(d.scale_bytes(), 0);
  std::vector<float> y(kCount, 1.0f);
  double quantize_s = 0, memcpy_s = 0;
  for (auto _ : state) {
    const auto t0 = clock::now();
    parallel_copy(x.data(), y.data(), kCount);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
    const auto t1 = clock::now();
    const TensorScale ts = quantize_into(x, d, o, elements, scales);
    benchmark::DoNotOptimize(ts);
    benchmark::DoNotOptimize(elements.data());
    benchmark::ClobberMemory();
    const auto t2 = clock::now();
    memcpy_s += std::chrono::duration<double>(t1 - t0).count();
    const double q = std::chrono::duration<double>(t2 - t1).count();
    quantize_s += q;
    state.SetIterationTime(q);
  }
  const double n = static_cast<double>(state.iterations());
  const double bytes = static_cast<double>(kCount * sizeof(float) + elements.size() + scales.size());
  const double rate = bytes * n / quantize_s;
  const double memcpy_rate = 2.0 * static_cast<double>(kCount * sizeof(float)) * n / memcpy_s;
  state.counters["bytes/s"] = benchmark::Counter(rate, benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
  state.counters["memcpy_bytes/s"] =
      benchmark::Counter(memcpy_rate, benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
  state.counters["ratio"] = rate / memcpy_rate;
  const double traffic = bytes + static_cast<double>((input_passes - 1) * kCount * sizeof(float));
  state.counters["traffic_ratio"] = traffic * n / quantize_s / memcpy_rate;
  quantize_detail::set_quantize_path(quantize_detail::QuantizePath::automatic);
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

void BM_QuantizeMxfp8E4m3RceilGeneric(benchmark::State& state) {
  run_quantize(state, block_formats::mxfp8_e4m3, recipes::transformer_engine_mxfp8(Format::float8_e4m3fn),
               quantize_detail::QuantizePath::generic);
}

void BM_QuantizeNvfp4TransformerEngineGeneric(benchmark::State& state) {
  run_quantize(state, block_formats::nvfp4, recipes::nvfp4_transformer_engine(), quantize_detail::QuantizePath::generic);
}

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_QuantizeMxfp8E4m3Rceil)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(4.0);
BENCHMARK(BM_QuantizeNvfp4TransformerEngine)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(4.0);
BENCHMARK(BM_QuantizeNvfp4TransformerEngineGivenAmax)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(4.0);
BENCHMARK(BM_QuantizeMxfp8E4m3RceilGeneric)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(4.0);
BENCHMARK(BM_QuantizeNvfp4TransformerEngineGeneric)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(4.0);

}  // namespace

BENCHMARK_MAIN();
