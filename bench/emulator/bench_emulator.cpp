// SPDX-License-Identifier: Apache-2.0
// GEMM emulation throughput against an Eigen fp32 GEMM of the same shape, in the same binary.
//
//   bench_emulator [--benchmark_filter=...]
//
// Shapes: M = N = 256, K = 1024 (default set) and, with "big" in the name, M = N = K = 1024 and
// M = N = 256, K = 8192 (issue 6). Operands are Gaussian data with per-row magnitudes over
// 2^-8 .. 2^8, quantized with RCEIL (MX) or the TransformerEngine NVFP4 recipe. Counters: MAC/s
// (items_per_second) and "vs_eigen", that rate over the Eigen fp32 GEMM rate of the same shape and
// thread count, measured once per (shape, threads) at first use (best of 5 after a warm-up).
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/quantize.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using namespace blockscale;
using namespace blockscale::emulator;

std::vector<float> gaussian(std::int64_t rows, std::int64_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    const float scale = std::ldexp(1.0f, static_cast<int>(r % 17) - 8);
    for (std::int64_t c = 0; c < cols; ++c) v[static_cast<std::size_t>(r * cols + c)] = normal(gen) * scale;
  }
  return v;
}

int thread_count(int requested) {
#if defined(_OPENMP)
  return requested > 0 ? requested : omp_get_max_threads();
#else
  (void)requested;
  return 1;
#endif
}

// Eigen fp32 GEMM MAC/s for M x K times K x N, best of 5 after one warm-up run.
double eigen_rate(std::int64_t M, std::int64_t N, std::int64_t K, int threads) {
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, int>, double> cache;
  const auto key = std::make_tuple(M, N, K, threads);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Eigen::setNbThreads(threads);
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(M, K), b = Eigen::MatrixXf::Random(K, N);
  Eigen::MatrixXf c(M, N);
  c.noalias() = a * b;  // warm-up: caches, page faults, Eigen's blocking buffers
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    c.noalias() = a * b;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(c.data());
    best = std::max(best, static_cast<double>(M * N * K) / s);
  }
  return cache[key] = best;
}

void report(benchmark::State& state, std::int64_t M, std::int64_t N, std::int64_t K, int threads) {
  const double macs = static_cast<double>(M * N * K);
  state.SetItemsProcessed(static_cast<std::int64_t>(macs) * state.iterations());
  state.counters["threads"] = threads;
  state.counters["vs_eigen"] = benchmark::Counter(macs / eigen_rate(M, N, K, threads),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

// Block-scaled chain (tcgen05 MXFP8 / NVFP4): args M, N, K, threads (0 = all).
void block_scaled_chain(benchmark::State& state, BlockFormat bf) {
  const std::int64_t M = state.range(0), N = state.range(1), K = state.range(2);
  const int threads = thread_count(static_cast<int>(state.range(3)));
  QuantizeOptions o;
  if (bf == block_formats::nvfp4) o = recipes::nvfp4_transformer_engine();
  const BlockScaledTensor a = quantize(gaussian(M, K, 1), {M, K}, KAxis::last, bf, o);
  const BlockScaledTensor b = quantize(gaussian(N, K, 2), {N, K}, KAxis::last, bf, o);
  const KernelSchedule s = block_scaled_schedule(Arch::sm_100a, bf.element, bf.element, bf.scale, bf.block_size);
  for (auto _ : state) benchmark::DoNotOptimize(gemm(s, a, b, {}, {threads}));
  report(state, M, N, K, threads);
}

// Hopper wgmma e4m3 with promotion every 4 instructions (fp32 scales per 128 along K).
void hopper_promotion(benchmark::State& state) {
  const std::int64_t M = state.range(0), N = state.range(1), K = state.range(2);
  const int threads = thread_count(static_cast<int>(state.range(3)));
  const BlockScaledTensor qa = quantize(gaussian(M, K, 3), {M, K}, KAxis::last, block_formats::mxfp8_e4m3, {});
  const BlockScaledTensor qb = quantize(gaussian(N, K, 4), {N, K}, KAxis::last, block_formats::mxfp8_e4m3, {});
  const std::vector<std::uint8_t> ea = qa.element_codes(), eb = qb.element_codes();
  const auto uM = static_cast<std::size_t>(M), uN = static_cast<std::size_t>(N), uK = static_cast<std::size_t>(K);
  const std::size_t nb = (uK + 127) / 128;
  std::vector<std::uint32_t> sa(uM * nb), sb(nb * uN);
  // fp32 block scales per 128 K: the e8m0 scale of the first 32-block of each 128, as a float.
  for (std::size_t i = 0; i < uM; ++i) {
    for (std::size_t t = 0; t < nb; ++t) sa[i * nb + t] = static_cast<std::uint32_t>(qa.scale_code(0, static_cast<std::int64_t>(i), static_cast<std::int64_t>(4 * t))) << 23;
  }
  for (std::size_t j = 0; j < uN; ++j) {
    for (std::size_t t = 0; t < nb; ++t) sb[t * uN + j] = static_cast<std::uint32_t>(qb.scale_code(0, static_cast<std::int64_t>(j), static_cast<std::int64_t>(4 * t))) << 23;
  }
  const GemmOperands ops{CodeMatrix(Format::float8_e4m3fn, uM, uK, ea),
                         CodeMatrix(Format::float8_e4m3fn, uK, uN, eb, Order::col_major),
                         CodeMatrix(Format::float32, uM, nb, sa), CodeMatrix(Format::float32, nb, uN, sb), {}};
  const KernelSchedule s =
      KernelSchedule::hopper_promotion(parse_instruction("sm_90a wgmma.mma_async m64n256k32 f32 e4m3 e4m3"), 4);
  for (auto _ : state) benchmark::DoNotOptimize(gemm(s, ops, {threads}));
  report(state, M, N, K, threads);
}

void eigen_fp32(benchmark::State& state) {
  const std::int64_t M = state.range(0), N = state.range(1), K = state.range(2);
  const int threads = thread_count(static_cast<int>(state.range(3)));
  Eigen::setNbThreads(threads);
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(M, K), b = Eigen::MatrixXf::Random(K, N);
  Eigen::MatrixXf c(M, N);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  report(state, M, N, K, threads);
}

void small(benchmark::internal::Benchmark* b) {
  for (int t : {1, 0}) b->Args({256, 256, 1024, t});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
void big(benchmark::internal::Benchmark* b) {
  for (int t : {1, 0}) {
    b->Args({1024, 1024, 1024, t});
    b->Args({256, 256, 8192, t});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
}

BENCHMARK_CAPTURE(block_scaled_chain, mxfp8, block_formats::mxfp8_e4m3)->Apply(small);
BENCHMARK_CAPTURE(block_scaled_chain, nvfp4, block_formats::nvfp4)->Apply(small);
BENCHMARK(hopper_promotion)->Apply(small);
BENCHMARK(hopper_promotion)->Name("hopper_promotion/big")->Apply(big);
BENCHMARK(eigen_fp32)->Apply(small);
BENCHMARK_CAPTURE(block_scaled_chain, mxfp8_big, block_formats::mxfp8_e4m3)->Apply(big);
BENCHMARK_CAPTURE(block_scaled_chain, nvfp4_big, block_formats::nvfp4)->Apply(big);

}  // namespace

BENCHMARK_MAIN();
