// SPDX-License-Identifier: Apache-2.0
// mma_scaled and mma throughput per numerics, in multiply-adds per second. The baseline in the same
// binary is the sequential numerics (an fp32 FMA chain, what naive host references run): report
// exact / sequential as a ratio. One 128 x 128 x 1024 problem per format, random codes over the
// whole finite range and scales near 1, fixed seed.
#include <benchmark/benchmark.h>

#include <random>

#include "blockscale/reference.h"

namespace blockscale::reference {
namespace {

constexpr std::int64_t kM = 128, kN = 128, kK = 1024;

Tensor random_codes(std::mt19937_64& rng, DType t, Shape s, bool scale) {
  std::int64_t n = 1;
  for (const auto e : s) n *= e;
  std::vector<std::uint64_t> c(static_cast<std::size_t>(n));
  const Format f = format_of(t);
  for (auto& v : c) {
    do {
      v = scale ? (t == DType::float8_e8m0fnu ? 120 + rng() % 15 : 40 + rng() % 40) : rng() & code_mask(f);
    } while (classify(f, static_cast<std::uint32_t>(v)) == ValueClass::nan ||
             classify(f, static_cast<std::uint32_t>(v)) == ValueClass::infinite);
  }
  return Tensor(t, std::move(s), std::move(c));
}

void BM_MmaScaled(benchmark::State& state, DType input, DType scale, int block, Numerics numerics) {
  std::mt19937_64 rng(1);
  const Tensor x = random_codes(rng, input, {kM, kK}, false), y = random_codes(rng, input, {kK, kN}, false);
  const Tensor xs = random_codes(rng, scale, {kM, kK / block}, true);
  const Tensor ys = random_codes(rng, scale, {kK / block, kN}, true);
  const Tensor acc = Tensor::zeros(DType::float32, {kM, kN});
  for (auto _ : state) benchmark::DoNotOptimize(mma_scaled(x, xs, y, ys, acc, {numerics}));
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(kM * kN * kK),
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_MmaScaled, mxfp8_sequential, DType::float8_e4m3fn, DType::float8_e8m0fnu, 32, Numerics::sequential())
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MmaScaled, mxfp8_exact, DType::float8_e4m3fn, DType::float8_e8m0fnu, 32, Numerics::exact())
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MmaScaled, mxfp8_e5m2_exact, DType::float8_e5m2, DType::float8_e8m0fnu, 32, Numerics::exact())
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MmaScaled, nvfp4_sequential, DType::float4_e2m1fn, DType::float8_ue4m3, 16, Numerics::sequential())
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MmaScaled, nvfp4_exact, DType::float4_e2m1fn, DType::float8_ue4m3, 16, Numerics::exact())
    ->Unit(benchmark::kMillisecond);

void BM_Mma(benchmark::State& state, DType operand, DType accumulator, Numerics numerics) {
  std::mt19937_64 rng(2);
  const Tensor l = random_codes(rng, operand, {kM, kK}, false), r = random_codes(rng, operand, {kK, kN}, false);
  const Tensor acc = Tensor::zeros(accumulator, {kM, kN});
  for (auto _ : state) benchmark::DoNotOptimize(mma(l, r, acc, numerics));
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(kM * kN * kK),
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_Mma, bf16_sequential, DType::bfloat16, DType::float32, Numerics::sequential())
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Mma, bf16_exact, DType::bfloat16, DType::float32, Numerics::exact())->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace blockscale::reference

BENCHMARK_MAIN();
