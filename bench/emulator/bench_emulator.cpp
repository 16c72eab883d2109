// SPDX-License-Identifier: Apache-2.0
// GEMM emulation throughput against an Eigen fp32 GEMM of the same shape, in the same binary
// (issue 6).
//
//   bench_emulator [--benchmark_filter=...]
//
// Benchmarks (args M, N, K, threads; threads 0 = all):
//   mxfp8/<data>    tcgen05 kind::mxf8f6f4.block32 e4m3 x e4m3 ue8m0, plain chain (MXFP8 GEMM);
//   nvfp4/<data>    tcgen05 kind::mxf4nvf4.block16 e2m1 x e2m1 ue4m3, plain chain, with the NVFP4
//                   per-tensor scales applied in the epilogue (NVFP4 GEMM);
//   hopper/<data>   sm_90a wgmma e4m3 x e4m3, promotion every 4 instructions (fp32 scales per 128);
//   bf16/<data>     sm_90a wgmma bf16 x bf16 -> f32, plain chain (a bf16 GEMM; gaussian and heavy
//                   values rounded to bf16);
//   f16acc/<fp8|f16>/<data>  sm_90a wgmma e4m3 x e4m3 or f16 x f16 with an f16 accumulator (RNE-FP16
//                   after every step), plain chain; values of unit scale (gaussian rows 2^-2 .. 2^2);
//   mmasync-fp8/<data>  sm_90a mma.sync m16n8k32 e4m3 x e4m3 -> f32, which the compiler emulates
//                   with two f16 HMMAs and an FADD (numerics.md b.9); the same data;
//   exact/<format>/<data>  mma_scaled's `exact` numerics (emulator::exact_gemm: the proved double
//                   GEMM) on MXFP8 or NVFP4 operands; exact_share there is the share of outputs
//                   proved (the rest: NaN / Inf settled, or the reference engine);
//   sparse/<f16|bf16|tf32|e4m3>/<data>  torch._cslt_sparse_mm's model (cuSPARSELt 0.8 on sm_90a:
//                   wgmma.sp chains, one slice) on A pruned 2:4 by magnitude (tf32: 1:2), D in the
//                   input type (e4m3: f32); MAC/s of the dense shape's M N K;
//   exact-mma/<f16|bf16|f32|e4m3>/<data>  ct::mma's `exact` numerics of the same sparse operands
//                   (emulator::exact_mma, the `exact` of blockscale gemm --sparse; f32 unrounded);
//                   exact_share / certified_share: the outputs proved exact / certified;
//   eigen           Eigen fp32 GEMM (this binary is compiled for the build machine's ISA, so Eigen
//                   uses its widest SIMD: AVX-512 FMA on the reference machine; built with
//                   -DBLOCKSCALE_BENCH_MARCH=x86-64-v3, AVX2 FMA, the baseline for the AVX2 path);
//   reference/...   the reference engine (GemmPath::reference) on a smaller shape (for exact/:
//                   reference::mma_scaled, which exact_gemm computes as a whole with that path).
// Data: gaussian (per-row magnitudes 2^-8 .. 2^8) and heavy (Student-t, 2 degrees of freedom)
// quantized with RCEIL (MX) or the TransformerEngine NVFP4 recipe through blockscale::quantize;
// bits: uniformly random codes for elements and scales (NaN codes included: they are the NaN
// handling's share of the work; most tiles turn all-NaN within a few steps and then skip the rest,
// fast_kernels.h: all_nan, so these rows measure mostly that).
// Shapes: M = N = K = 1024 and M = N = 256, K = 8192; the reference engine at 128 x 128 x 1024.
// Counters: items_per_second = MAC/s; vs_eigen = that rate over the Eigen rate of the same shape
// and thread count (Eigen measured right before each benchmark run's timed loop: best of 5 after
// a warm-up); threads.
#include <benchmark/benchmark.h>

// Compiled with -march=native, Eigen's AVX-512 code makes GCC 12 warn that _mm512_undefined_*()
// inside its own intrinsic headers "may be used uninitialized" (GCC bug 105593): the headers are
// included first with that warning off (x86 only: other targets have no <immintrin.h>).
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif
#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "blockscale/quantize.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using namespace blockscale;
using namespace blockscale::emulator;

enum class Data { gaussian, heavy, bits };

std::vector<float> values(std::int64_t rows, std::int64_t cols, unsigned seed, Data data) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::chi_squared_distribution<float> chi2(2.0f);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    const float scale = std::ldexp(1.0f, static_cast<int>(r % 17) - 8);
    for (std::int64_t c = 0; c < cols; ++c) {
      // One draw per statement: the order of two draws in one expression is up to the compiler.
      const float z = normal(gen);
      v[static_cast<std::size_t>(r * cols + c)] = data == Data::heavy ? z / std::sqrt(chi2(gen) / 2.0f) : z * scale;
    }
  }
  return v;
}

std::vector<std::uint8_t> random_codes(std::size_t n, std::uint32_t mask, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) x = static_cast<std::uint8_t>(gen() & mask);
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

// Eigen fp32 GEMM MAC/s for M x K times K x N, best of 5 after one warm-up run. Measured afresh for
// every benchmark run, right before its timed loop: on the shared device hosts Eigen's own rate
// drifted by up to 60% within one process (a baseline cached at a shape's first use once made
// every later ratio of that shape 1.6 times too high).
double eigen_rate(std::int64_t M, std::int64_t N, std::int64_t K, int threads) {
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
  return best;
}

// Times `run` per iteration (wall clock) and reports MAC/s and the ratio to Eigen.
// `stats` (when given) is what the last run's gemm() reported: the share of fused steps that the
// exact tier took is a counter too (the rest took the truncating tier), and so is the share the
// AVX512-FP16 form took. Every row has the same counters (0 where a share does not apply: the
// Eigen rows, CPUs without AVX512-FP16), because the CSV reporter aborts on a counter that the
// first row lacked.
template <class Run>
void measure(benchmark::State& state, std::int64_t M, std::int64_t N, std::int64_t K, int threads, Run run,
             const GemmPathStats* stats = nullptr) {
  const double eigen = eigen_rate(M, N, K, threads);  // before the timed loop
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double macs = static_cast<double>(M * N * K);
  state.SetItemsProcessed(static_cast<std::int64_t>(macs) * state.iterations());
  state.counters["threads"] = threads;
  state.counters["vs_eigen"] = macs * static_cast<double>(state.iterations()) / seconds / eigen;
  // The baseline's own MAC/s: Eigen's rate moves by a third between hosts of one kind and within a
  // run (docs/performance.md), so each ratio carries the rate it was taken against.
  state.counters["eigen_macs"] = eigen;
  double exact_share = 0, fp16_share = 0;
  if (stats != nullptr) {
    const double steps = static_cast<double>(stats->exact + stats->truncating);  // special overlaps both
    if (steps > 0) {
      exact_share = static_cast<double>(stats->exact) / steps;
      fp16_share = static_cast<double>(stats->fp16) / steps;
    }
  }
  state.counters["exact_share"] = exact_share;
  state.counters["fp16_share"] = fp16_share;
}

struct Shape {
  std::int64_t M, N, K;
  int threads;
};
Shape shape(const benchmark::State& state) {
  return {state.range(0), state.range(1), state.range(2), thread_count(static_cast<int>(state.range(3)))};
}

// Block-scaled chain (tcgen05 MXFP8 / NVFP4).
void block_scaled(benchmark::State& state, BlockFormat bf, Data data, GemmPath path) {
  const Shape s = shape(state);
  const KernelSchedule schedule = block_scaled_schedule(Arch::sm_100a, bf.element, bf.element, bf.scale, bf.block_size);
  GemmPathStats stats;
  const GemmOptions options{s.threads, path, &stats};
  if (data == Data::bits) {
    const auto M = static_cast<std::size_t>(s.M), N = static_cast<std::size_t>(s.N), K = static_cast<std::size_t>(s.K);
    const std::size_t blocks = K / static_cast<std::size_t>(bf.block_size);
    const std::uint32_t mask = code_mask(bf.element);
    const auto a = random_codes(M * K, mask, 1), b = random_codes(K * N, mask, 2);
    const auto sa = random_codes(M * blocks, 0xFF, 3), sb = random_codes(blocks * N, 0xFF, 4);
    const GemmOperands ops{CodeMatrix(bf.element, M, K, a), CodeMatrix(bf.element, K, N, b, Order::col_major),
                           CodeMatrix(bf.scale, M, blocks, sa), CodeMatrix(bf.scale, blocks, N, sb, Order::col_major), {}};
    measure(state, s.M, s.N, s.K, s.threads, [&] { benchmark::DoNotOptimize(gemm(schedule, ops, options)); }, &stats);
    return;
  }
  QuantizeOptions o;
  if (bf == block_formats::nvfp4) o = recipes::nvfp4_transformer_engine();
  const BlockScaledTensor a = quantize(values(s.M, s.K, 1, data), {s.M, s.K}, KAxis::last, bf, o);
  const BlockScaledTensor b = quantize(values(s.N, s.K, 2, data), {s.N, s.K}, KAxis::last, bf, o);
  measure(state, s.M, s.N, s.K, s.threads, [&] { benchmark::DoNotOptimize(gemm(schedule, a, b, {}, options)); }, &stats);
}

// mma_scaled's exact numerics (emulator::exact_gemm).
void exact(benchmark::State& state, BlockFormat bf, Data data, GemmPath path) {
  const Shape s = shape(state);
  QuantizeOptions o;
  if (bf == block_formats::nvfp4) o = recipes::nvfp4_transformer_engine();
  const BlockScaledTensor a = quantize(values(s.M, s.K, 1, data), {s.M, s.K}, KAxis::last, bf, o);
  const BlockScaledTensor b = quantize(values(s.N, s.K, 2, data), {s.N, s.K}, KAxis::last, bf, o);
  GemmPathStats stats;
  const GemmOptions options{s.threads, path, &stats};
  measure(state, s.M, s.N, s.K, s.threads, [&] { benchmark::DoNotOptimize(exact_gemm(a, b, {}, options)); });
  // exact_gemm counts outputs: proved ones as `exact`, the others as the complement.
  const double outputs = static_cast<double>(stats.exact + stats.special + stats.reference_outputs);
  state.counters["exact_share"] = outputs > 0 ? static_cast<double>(stats.exact) / outputs : 0;
}

// Hopper wgmma e4m3 with promotion every 4 instructions (fp32 scales per 128 along K).
void hopper(benchmark::State& state, Data data, GemmPath path) {
  const Shape s = shape(state);
  const auto M = static_cast<std::size_t>(s.M), N = static_cast<std::size_t>(s.N), K = static_cast<std::size_t>(s.K);
  const std::size_t nb = (K + 127) / 128;
  std::vector<std::uint8_t> ea, eb;
  std::vector<std::uint32_t> sa(M * nb), sb(nb * N);
  if (data == Data::bits) {
    ea = random_codes(M * K, 0xFF, 5);
    eb = random_codes(K * N, 0xFF, 6);
    std::mt19937 gen(7);
    for (auto& x : sa) x = static_cast<std::uint32_t>(gen());
    for (auto& x : sb) x = static_cast<std::uint32_t>(gen());
  } else {
    const BlockScaledTensor qa = quantize(values(s.M, s.K, 3, data), {s.M, s.K}, KAxis::last, block_formats::mxfp8_e4m3, {});
    const BlockScaledTensor qb = quantize(values(s.N, s.K, 4, data), {s.N, s.K}, KAxis::last, block_formats::mxfp8_e4m3, {});
    ea = qa.element_codes();
    eb = qb.element_codes();
    // fp32 block scales per 128 K: the e8m0 scale of the first 32-block of each 128, as a float.
    for (std::size_t i = 0; i < M; ++i) {
      for (std::size_t t = 0; t < nb; ++t) {
        sa[i * nb + t] = static_cast<std::uint32_t>(qa.scale_code(0, static_cast<std::int64_t>(i), static_cast<std::int64_t>(4 * t))) << 23;
      }
    }
    for (std::size_t j = 0; j < N; ++j) {
      for (std::size_t t = 0; t < nb; ++t) {
        sb[t * N + j] = static_cast<std::uint32_t>(qb.scale_code(0, static_cast<std::int64_t>(j), static_cast<std::int64_t>(4 * t))) << 23;
      }
    }
  }
  const GemmOperands ops{CodeMatrix(Format::float8_e4m3fn, M, K, ea), CodeMatrix(Format::float8_e4m3fn, K, N, eb, Order::col_major),
                         CodeMatrix(Format::float32, M, nb, sa), CodeMatrix(Format::float32, nb, N, sb), {}};
  const KernelSchedule schedule =
      KernelSchedule::hopper_promotion(parse_instruction("sm_90a wgmma.mma_async m64n256k32 f32 e4m3 e4m3"), 4);
  GemmPathStats stats;
  const GemmOptions options{s.threads, path, &stats};
  measure(state, s.M, s.N, s.K, s.threads, [&] { benchmark::DoNotOptimize(gemm(schedule, ops, options)); }, &stats);
}

// Hopper wgmma bf16 x bf16 -> f32, plain chain: a bf16 GEMM (T-FDPA with 16-bit operands, F = 25,
// L = 16), the values rounded to bf16 (RNE).
void bf16_chain(benchmark::State& state, Data data, GemmPath path) {
  const Shape s = shape(state);
  const auto to_bf16 = [](const std::vector<float>& v) {
    std::vector<std::uint16_t> codes(v.size());
    convert(v, Format::bfloat16, codes);
    return codes;
  };
  const auto a = to_bf16(values(s.M, s.K, 8, data)), b = to_bf16(values(s.N, s.K, 9, data));  // B^T, N x K
  const auto M = static_cast<std::size_t>(s.M), N = static_cast<std::size_t>(s.N), K = static_cast<std::size_t>(s.K);
  const GemmOperands ops{CodeMatrix(Format::bfloat16, M, K, a), CodeMatrix(Format::bfloat16, K, N, b, Order::col_major), {}, {}, {}};
  const KernelSchedule schedule = KernelSchedule::chain(parse_instruction("sm_90a wgmma.mma_async m64n256k16 f32 bf16 bf16"));
  GemmPathStats stats;
  const GemmOptions options{s.threads, path, &stats};
  measure(state, s.M, s.N, s.K, s.threads, [&] { benchmark::DoNotOptimize(gemm(schedule, ops, options)); }, &stats);
}

// A plain chain of `instruction` (e4m3 or f16 operands) on data of unit scale, so that the sums
// stay within fp16's range as a user of f16 accumulation keeps them: gaussian rows of magnitudes
// 2^-2 .. 2^2 and heavy (Student-t) values, rounded to the operand format (RNE, fp8 saturating).
// For f16 accumulators (RNE-FP16 after every step, numerics.md b.6) and b.9's emulated fp8
// mma.sync.
void unit_scale_chain(benchmark::State& state, const char* instruction, Data data, GemmPath path) {
  const Shape s = shape(state);
  const auto unit_scale = [&](std::int64_t rows, unsigned seed) {
    std::vector<float> v = values(rows, s.K, seed, data);
    if (data == Data::gaussian) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const float rescale = std::ldexp(1.0f, 8 - static_cast<int>(r % 17) + static_cast<int>(r % 5) - 2);
        for (std::int64_t c = 0; c < s.K; ++c) v[static_cast<std::size_t>(r * s.K + c)] *= rescale;
      }
    }
    return v;
  };
  const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(instruction));
  const Format operand = *format_of(schedule.instruction.a);
  const auto M = static_cast<std::size_t>(s.M), N = static_cast<std::size_t>(s.N), K = static_cast<std::size_t>(s.K);
  const std::vector<float> va = unit_scale(s.M, 10), vb = unit_scale(s.N, 11);  // B^T, N x K
  std::vector<std::uint8_t> a8, b8;
  std::vector<std::uint16_t> a16, b16;
  GemmOperands ops;
  if (operand == Format::float16) {
    a16.resize(va.size());
    b16.resize(vb.size());
    convert(va, operand, a16);
    convert(vb, operand, b16);
    ops = {CodeMatrix(operand, M, K, a16), CodeMatrix(operand, K, N, b16, Order::col_major), {}, {}, {}};
  } else {
    a8.resize(va.size());
    b8.resize(vb.size());
    ConvertOptions saturating;
    saturating.overflow = Overflow::saturate;
    convert(va, operand, a8, saturating);
    convert(vb, operand, b8, saturating);
    ops = {CodeMatrix(operand, M, K, a8), CodeMatrix(operand, K, N, b8, Order::col_major), {}, {}, {}};
  }
  GemmPathStats stats;
  const GemmOptions options{s.threads, path, &stats};
  measure(state, s.M, s.N, s.K, s.threads, [&] { benchmark::DoNotOptimize(gemm(schedule, ops, options)); }, &stats);
}

// The operands of the sparse rows: A (M x K) pruned 2:4 by magnitude (tf32: 1:2) and B^T (N x K),
// rounded to `input` (RNE; e4m3 saturating), one word per code.
struct SparseCodes {
  std::vector<std::uint32_t> a, bt;
};
SparseCodes sparse_codes(const Shape& s, Format input, Data data) {
  std::vector<float> a = values(s.M, s.K, 12, data);
  const std::vector<float> bt = values(s.N, s.K, 13, data);
  const std::size_t group = input == Format::float32 ? 2 : 4;
  for (std::size_t g = 0; g < a.size(); g += group) {  // keep the group / 2 largest magnitudes
    std::vector<std::size_t> order(group);
    for (std::size_t q = 0; q < group; ++q) order[q] = g + q;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return std::fabs(a[x]) > std::fabs(a[y]); });
    for (std::size_t q = group / 2; q < group; ++q) a[order[q]] = 0.0f;
  }
  SparseCodes c{std::vector<std::uint32_t>(a.size()), std::vector<std::uint32_t>(bt.size())};
  if (input == Format::float32) {
    for (std::size_t i = 0; i < a.size(); ++i) c.a[i] = std::bit_cast<std::uint32_t>(a[i]);
    for (std::size_t i = 0; i < bt.size(); ++i) c.bt[i] = std::bit_cast<std::uint32_t>(bt[i]);
  } else {  // the bulk conversions write words of the format's width
    ConvertOptions o;
    o.overflow = Overflow::saturate;
    const auto widen = [&](const std::vector<float>& v, std::vector<std::uint32_t>& out) {
      if (info(input).storage_bits == 16) {
        std::vector<std::uint16_t> w(v.size());
        convert(v, input, w, o);
        std::copy(w.begin(), w.end(), out.begin());
      } else {
        std::vector<std::uint8_t> w(v.size());
        convert(v, input, w, o);
        std::copy(w.begin(), w.end(), out.begin());
      }
    };
    widen(a, c.a);
    widen(bt, c.bt);
  }
  return c;
}

// torch._cslt_sparse_mm's model (emulator::cusparselt_sparse_mm, one slice) on those operands, D in
// `output`. The MAC count is the dense shape's M N K, so vs_eigen is Eigen's time for the dense
// fp32 GEMM over the emulator's for the sparse one.
void sparse(benchmark::State& state, Format input, Format output, Data data, GemmPath path) {
  const Shape s = shape(state);
  const auto M = static_cast<std::size_t>(s.M), N = static_cast<std::size_t>(s.N), K = static_cast<std::size_t>(s.K);
  const SparseCodes c = sparse_codes(s, input, data);
  const CodeMatrix am(input, M, K, c.a), bm(input, K, N, c.bt, Order::col_major);
  GemmPathStats stats;
  const GemmOptions options{s.threads, path, &stats};
  measure(state, s.M, s.N, s.K, s.threads, [&] { benchmark::DoNotOptimize(cusparselt_sparse_mm(output, am, bm, 1, options)); },
          &stats);
}

// ct::mma's exact numerics of the same operands (emulator::exact_mma: what `blockscale gemm
// --sparse` reports as `exact`), B decoded in the timed call. Counters: the shares of outputs
// proved exact and certified by an error bound (the rest: NaN, or the reference).
void exact_mma_sparse(benchmark::State& state, Format input, Data data, GemmPath path) {
  const Shape s = shape(state);
  const auto M = static_cast<std::size_t>(s.M), N = static_cast<std::size_t>(s.N), K = static_cast<std::size_t>(s.K);
  const SparseCodes c = sparse_codes(s, input, data);
  const CodeMatrix am(input, M, K, c.a), bm(input, K, N, c.bt, Order::col_major);
  GemmPathStats stats;
  const GemmOptions options{s.threads, path, &stats};
  measure(state, s.M, s.N, s.K, s.threads, [&] { benchmark::DoNotOptimize(exact_mma(am, bm, {}, options)); });
  const auto outputs = static_cast<double>(M * N);
  state.counters["exact_share"] = static_cast<double>(stats.exact) / outputs;
  state.counters["certified_share"] = static_cast<double>(stats.certified) / outputs;
}

void eigen_fp32(benchmark::State& state) {
  const Shape s = shape(state);
  Eigen::setNbThreads(s.threads);
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(s.M, s.K), b = Eigen::MatrixXf::Random(s.K, s.N);
  Eigen::MatrixXf c(s.M, s.N);
  measure(state, s.M, s.N, s.K, s.threads, [&] {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  });
}

void big(benchmark::internal::Benchmark* b) {
  for (int t : {1, 0}) {
    b->Args({1024, 1024, 1024, t});
    b->Args({256, 256, 8192, t});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
}
void small(benchmark::internal::Benchmark* b) {
  b->Args({128, 128, 1024, 1})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
}

constexpr const char* kWgmmaFp8F16 = "sm_90a wgmma.mma_async m64n256k32 f16 e4m3 e4m3";
constexpr const char* kWgmmaF16F16 = "sm_90a wgmma.mma_async m64n256k16 f16 f16 f16";
constexpr const char* kMmaSyncFp8 = "sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3";  // b.9

void register_all() {
  const std::pair<const char*, Data> data[] = {{"gaussian", Data::gaussian}, {"heavy", Data::heavy}, {"bits", Data::bits}};
  for (const auto& [name, d] : data) {
    const std::string n(name);
    benchmark::RegisterBenchmark(("mxfp8/" + n).c_str(), block_scaled, block_formats::mxfp8_e4m3, d, GemmPath::automatic)->Apply(big);
    benchmark::RegisterBenchmark(("nvfp4/" + n).c_str(), block_scaled, block_formats::nvfp4, d, GemmPath::automatic)->Apply(big);
    benchmark::RegisterBenchmark(("hopper/" + n).c_str(), hopper, d, GemmPath::automatic)->Apply(big);
  }
  for (const auto& [name, d] : data) {
    if (d == Data::bits) continue;
    const std::string n(name);
    benchmark::RegisterBenchmark(("bf16/" + n).c_str(), bf16_chain, d, GemmPath::automatic)->Apply(big);
    benchmark::RegisterBenchmark(("f16acc/fp8/" + n).c_str(), unit_scale_chain, kWgmmaFp8F16, d, GemmPath::automatic)->Apply(big);
    benchmark::RegisterBenchmark(("f16acc/f16/" + n).c_str(), unit_scale_chain, kWgmmaF16F16, d, GemmPath::automatic)->Apply(big);
    benchmark::RegisterBenchmark(("mmasync-fp8/" + n).c_str(), unit_scale_chain, kMmaSyncFp8, d, GemmPath::automatic)->Apply(big);
    benchmark::RegisterBenchmark(("exact/mxfp8/" + n).c_str(), exact, block_formats::mxfp8_e4m3, d, GemmPath::automatic)->Apply(big);
    benchmark::RegisterBenchmark(("exact/nvfp4/" + n).c_str(), exact, block_formats::nvfp4, d, GemmPath::automatic)->Apply(big);
  }
  const std::tuple<const char*, Format, Format> sparse_kernels[] = {{"f16", Format::float16, Format::float16},
                                                                   {"bf16", Format::bfloat16, Format::bfloat16},
                                                                   {"tf32", Format::float32, Format::float32},
                                                                   {"e4m3", Format::float8_e4m3fn, Format::float32}};
  for (const auto& [kernel, input, output] : sparse_kernels) {
    for (const auto& [name, d] : data) {
      if (d == Data::bits) continue;
      benchmark::RegisterBenchmark(("sparse/" + std::string(kernel) + "/" + name).c_str(), sparse, input, output, d,
                                   GemmPath::automatic)
          ->Apply(big);
      benchmark::RegisterBenchmark(("exact-mma/" + std::string(kernel == std::string("tf32") ? "f32" : kernel) + "/" + name).c_str(),
                                   exact_mma_sparse, input, d, GemmPath::automatic)
          ->Apply(big);
    }
  }
  benchmark::RegisterBenchmark("eigen", eigen_fp32)->Apply(big);
  benchmark::RegisterBenchmark("reference/mxfp8/gaussian", block_scaled, block_formats::mxfp8_e4m3, Data::gaussian, GemmPath::reference)
      ->Apply(small);
  benchmark::RegisterBenchmark("reference/nvfp4/gaussian", block_scaled, block_formats::nvfp4, Data::gaussian, GemmPath::reference)
      ->Apply(small);
  benchmark::RegisterBenchmark("reference/hopper/gaussian", hopper, Data::gaussian, GemmPath::reference)->Apply(small);
  benchmark::RegisterBenchmark("reference/bf16/gaussian", bf16_chain, Data::gaussian, GemmPath::reference)->Apply(small);
  benchmark::RegisterBenchmark("reference/f16acc/fp8/gaussian", unit_scale_chain, kWgmmaFp8F16, Data::gaussian, GemmPath::reference)
      ->Apply(small);
  benchmark::RegisterBenchmark("reference/f16acc/f16/gaussian", unit_scale_chain, kWgmmaF16F16, Data::gaussian, GemmPath::reference)
      ->Apply(small);
  benchmark::RegisterBenchmark("reference/mmasync-fp8/gaussian", unit_scale_chain, kMmaSyncFp8, Data::gaussian, GemmPath::reference)
      ->Apply(small);
  benchmark::RegisterBenchmark("reference/exact/mxfp8/gaussian", exact, block_formats::mxfp8_e4m3, Data::gaussian, GemmPath::reference)
      ->Apply(small);
  benchmark::RegisterBenchmark("reference/sparse/f16/gaussian", sparse, Format::float16, Format::float16, Data::gaussian,
                               GemmPath::reference)
      ->Apply(small);
  benchmark::RegisterBenchmark("eigen", eigen_fp32)->Apply(small);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
