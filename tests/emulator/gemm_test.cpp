// SPDX-License-Identifier: Apache-2.0
// GEMM-level kernel models against their definitions written out here with the instruction-level
// dot() and the host FPU: the plain chain, Hopper promotion (each FFMA order), split-K (each
// reduction order), C in the epilogue, K padding, thread-count independence, block-scaled tensors
// in several layouts (NVFP4 per-tensor scales included), and the reference's hardware(model) hook.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "blockscale/quantize.h"
#include "blockscale/reference.h"

namespace blockscale::emulator {
namespace {

using Rng = std::mt19937_64;

std::vector<std::uint32_t> random_codes(Rng& rng, Format f, std::size_t n, bool finite = true) {
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) {
    do {
      x = static_cast<std::uint32_t>(rng()) & code_mask(f);
    } while (finite && (classify(f, x) == ValueClass::nan || classify(f, x) == ValueClass::infinite));
  }
  return v;
}

std::vector<std::uint32_t> random_floats(Rng& rng, std::size_t n, float scale) {
  std::normal_distribution<float> g(0.0f, scale);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = std::bit_cast<std::uint32_t>(g(rng));
  return v;
}

// Element (i, k) of a row-major M x K array, or 0 beyond K (padding).
std::vector<std::uint32_t> row_slice(const std::vector<std::uint32_t>& m, std::size_t cols, std::size_t i,
                                     std::size_t k0, std::size_t n) {
  std::vector<std::uint32_t> out(n, 0);
  for (std::size_t k = 0; k < n && k0 + k < cols; ++k) out[k] = m[i * cols + k0 + k];
  return out;
}
std::vector<std::uint32_t> col_slice(const std::vector<std::uint32_t>& m, std::size_t rows, std::size_t cols,
                                     std::size_t j, std::size_t k0, std::size_t n) {
  std::vector<std::uint32_t> out(n, 0);
  for (std::size_t k = 0; k < n && k0 + k < rows; ++k) out[k] = m[(k0 + k) * cols + j];
  return out;
}

float f(std::uint32_t bits) { return std::bit_cast<float>(bits); }
std::uint32_t u(float x) { return std::isnan(x) ? 0x7FFFFFFFu : std::bit_cast<std::uint32_t>(x); }

TEST(EmulatorGemm, ChainIsOneInstructionPerKStepWithPaddingAndAnyThreadCount) {
  Rng rng(7);
  const Instruction ins =
      parse_instruction("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale m128n256k32 f32 e4m3 e5m2 ue8m0");
  const std::size_t M = 37, N = 23, K = 150;  // K pads to 160 (5 instructions), 5 scale blocks
  const std::size_t kb = (K + 31) / 32;
  const auto a = random_codes(rng, Format::float8_e4m3fn, M * K), b = random_codes(rng, Format::float8_e5m2, K * N);
  std::vector<std::uint32_t> sa(M * kb), sb(kb * N), c = random_floats(rng, M * N, 100.0f);
  for (auto& s : sa) s = 120 + static_cast<std::uint32_t>(rng() % 14);
  for (auto& s : sb) s = 120 + static_cast<std::uint32_t>(rng() % 14);
  const GemmOperands ops{CodeMatrix(Format::float8_e4m3fn, M, K, a), CodeMatrix(Format::float8_e5m2, K, N, b),
                         CodeMatrix(Format::float8_e8m0fnu, M, kb, sa), CodeMatrix(Format::float8_e8m0fnu, kb, N, sb),
                         CodeMatrix(Format::float32, M, N, c)};
  const KernelSchedule s = KernelSchedule::chain(ins);
  const std::vector<std::uint32_t> d = gemm(s, ops, {1});
  EXPECT_EQ(gemm(s, ops, {2}), d);
  EXPECT_EQ(gemm(s, ops, {3}), d);
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      std::uint32_t acc = c[i * N + j];
      for (std::size_t t = 0; t < kb; ++t) {
        acc = dot(ins, row_slice(a, K, i, t * 32, 32), col_slice(b, K, N, j, t * 32, 32), acc, std::span(&sa[i * kb + t], 1),
                  std::span(&sb[t * N + j], 1));
      }
      ASSERT_EQ(d[i * N + j], acc) << i << "," << j;
    }
  }
  // C in the epilogue: the chain from +0, then one fp32 RNE add (host float addition here).
  const std::vector<std::uint32_t> e = gemm(KernelSchedule::chain(ins, CPlacement::epilogue), ops);
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      std::uint32_t acc = 0;
      for (std::size_t t = 0; t < kb; ++t) {
        acc = dot(ins, row_slice(a, K, i, t * 32, 32), col_slice(b, K, N, j, t * 32, 32), acc, std::span(&sa[i * kb + t], 1),
                  std::span(&sb[t * N + j], 1));
      }
      ASSERT_EQ(e[i * N + j], u(f(acc) + f(c[i * N + j])));
    }
  }
}

TEST(EmulatorGemm, HopperPromotionEveryFfmaOrder) {
  Rng rng(11);
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  const std::size_t M = 9, N = 11, K = 300;  // 10 instructions: promotions of 4, 4 and 2 (padded)
  const std::size_t P = 4, blk = P * 32, nb = (K + blk - 1) / blk;
  const auto a = random_codes(rng, Format::float8_e4m3fn, M * K), b = random_codes(rng, Format::float8_e4m3fn, K * N);
  const auto sa = random_floats(rng, M * nb, 0.01f), sb = random_floats(rng, nb * N, 0.01f);
  const auto c = random_floats(rng, M * N, 10.0f);
  const GemmOperands ops{CodeMatrix(Format::float8_e4m3fn, M, K, a), CodeMatrix(Format::float8_e4m3fn, K, N, b),
                         CodeMatrix(Format::float32, M, nb, sa), CodeMatrix(Format::float32, nb, N, sb),
                         CodeMatrix(Format::float32, M, N, c)};
  for (const PromotionFma order : {PromotionFma::scale_product, PromotionFma::scale_b_first, PromotionFma::mul_then_add}) {
    const std::vector<std::uint32_t> d = gemm(KernelSchedule::hopper_promotion(ins, static_cast<int>(P), order), ops, {2});
    for (std::size_t i = 0; i < M; ++i) {
      for (std::size_t j = 0; j < N; ++j) {
        float acc = f(c[i * N + j]);
        for (std::size_t u0 = 0; u0 < nb; ++u0) {
          std::uint32_t part = 0;  // a fresh accumulator per promotion interval
          for (std::size_t s = u0 * P; s < std::min((u0 + 1) * P, (K + 31) / 32); ++s) {
            part = dot(ins, row_slice(a, K, i, s * 32, 32), col_slice(b, K, N, j, s * 32, 32), part);
          }
          const float x = f(sa[i * nb + u0]), y = f(sb[u0 * N + j]), p = f(part);
          switch (order) {
            case PromotionFma::scale_product: acc = std::fma(x * y, p, acc); break;
            case PromotionFma::scale_b_first: acc = std::fma(x, y * p, acc); break;
            case PromotionFma::mul_then_add: acc = acc + (x * y) * p; break;
          }
        }
        ASSERT_EQ(d[i * N + j], u(acc)) << int(order) << " " << i << "," << j;
      }
    }
  }
}

TEST(EmulatorGemm, SplitKInBothReductionOrders) {
  Rng rng(13);
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async m64n64k16 f32 bf16 bf16");
  const std::size_t M = 8, N = 8, K = 16 * 7;  // 7 instructions in 3 slices of 3, 3, 1
  const auto a = random_codes(rng, Format::bfloat16, M * K), b = random_codes(rng, Format::bfloat16, K * N);
  const auto c = random_floats(rng, M * N, 1.0f);
  const GemmOperands ops{CodeMatrix(Format::bfloat16, M, K, a), CodeMatrix(Format::bfloat16, K, N, b), {}, {},
                         CodeMatrix(Format::float32, M, N, c)};
  const auto seq = gemm(KernelSchedule::chain(ins).with_split_k(3, SplitKReduction::sequential), ops);
  const auto tree = gemm(KernelSchedule::chain(ins).with_split_k(3, SplitKReduction::pairwise), ops);
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      std::vector<float> part;
      for (std::size_t s0 : {0u, 3u, 6u}) {
        std::uint32_t p = 0;
        for (std::size_t s = s0; s < std::min<std::size_t>(s0 + 3, 7); ++s) {
          p = dot(ins, row_slice(a, K, i, s * 16, 16), col_slice(b, K, N, j, s * 16, 16), p);
        }
        part.push_back(f(p));
      }
      const float cv = f(c[i * N + j]);
      EXPECT_EQ(seq[i * N + j], u(((cv + part[0]) + part[1]) + part[2]));
      EXPECT_EQ(tree[i * N + j], u(cv + ((part[0] + part[1]) + part[2])));
    }
  }
}

TEST(EmulatorGemm, SplitKCutsOnlyAtMultiplesOfTheGranule) {
  // 13 instructions in 3 slices cut at multiples of 4 instructions (a 64-element granule): ceil(13 /
  // 12) = 1 granule each would leave a remainder, so each slice takes 2 granules, 8 + 5 + 0
  // instructions; the empty third slice adds +0. Without the granule the cut is 5 + 5 + 3.
  Rng rng(29);
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async m64n64k16 f32 bf16 bf16");
  const std::size_t M = 6, N = 5, K = 16 * 13;
  const auto a = random_codes(rng, Format::bfloat16, M * K), b = random_codes(rng, Format::bfloat16, K * N);
  const GemmOperands ops{CodeMatrix(Format::bfloat16, M, K, a), CodeMatrix(Format::bfloat16, K, N, b), {}, {}, {}};
  const KernelSchedule tiled = KernelSchedule::chain(ins).with_split_k(3, SplitKReduction::sequential, 64);
  EXPECT_EQ(tiled.slice_units(13), 8u);
  const auto d = gemm(tiled, ops);
  const auto plain = gemm(KernelSchedule::chain(ins).with_split_k(3, SplitKReduction::sequential), ops);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      auto slice = [&](std::size_t s0, std::size_t s1) {
        std::uint32_t p = 0;
        for (std::size_t s = s0; s < s1; ++s) p = dot(ins, row_slice(a, K, i, s * 16, 16), col_slice(b, K, N, j, s * 16, 16), p);
        return f(p);
      };
      EXPECT_EQ(d[i * N + j], u(((0.0f + slice(0, 8)) + slice(8, 13)) + 0.0f));
      EXPECT_EQ(plain[i * N + j], u(((0.0f + slice(0, 5)) + slice(5, 10)) + slice(10, 13)));
      differ += d[i * N + j] != plain[i * N + j];
    }
  }
  EXPECT_GT(differ, 0u) << "the data cannot tell the two cuts apart";
}

TEST(EmulatorGemm, InstructionLevelMmaIsTheDotOfEveryOutput) {
  Rng rng(17);
  for (const char* name : {"sm_89 mma.sync.aligned m16n8k32 f16 e5m2 e4m3", "sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e5m2",
                           "sm_120a mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X m16n8k64 f32 e2m1 e2m1 ue4m3",
                           "sm_80 mma.sync.aligned m16n8k8 f32 tf32 tf32"}) {
    const Instruction ins = parse_instruction(name);
    const std::size_t M = ins.m, N = ins.n, K = ins.k;
    const Format fa = *format_of(ins.a), fb = *format_of(ins.b), acc = accumulator_format(ins.params().rounding);
    std::vector<std::uint32_t> a = random_codes(rng, fa, M * K), b = random_codes(rng, fb, K * N);
    if (fa == Format::tfloat32) {
      for (auto& x : a) x = to_storage(fa, x) | static_cast<std::uint32_t>(rng() & 0x1FFF);
      for (auto& x : b) x = to_storage(fb, x);
    }
    const std::vector<std::uint32_t> c = random_codes(rng, acc, M * N);
    std::vector<std::uint32_t> sa, sb;
    CodeMatrix sam, sbm;
    if (ins.block_scaled()) {
      const std::size_t kb = K / static_cast<std::size_t>(ins.block());
      sa = random_codes(rng, Format::float8_ue4m3, M * kb);
      sb = random_codes(rng, Format::float8_ue4m3, kb * N);
      sam = CodeMatrix(Format::float8_ue4m3, M, kb, sa);
      sbm = CodeMatrix(Format::float8_ue4m3, kb, N, sb);
    }
    const auto d = mma(ins, CodeMatrix(fa, M, K, a), CodeMatrix(fb, K, N, b), CodeMatrix(acc, M, N, c), sam, sbm);
    for (std::size_t i = 0; i < M; ++i) {
      for (std::size_t j = 0; j < N; ++j) {
        std::vector<std::uint32_t> ssa, ssb;
        for (std::size_t t = 0; t < sa.size() / M; ++t) {
          ssa.push_back(sa[i * (sa.size() / M) + t]);
          ssb.push_back(sb[t * N + j]);
        }
        EXPECT_EQ(d[i * N + j], dot(ins, row_slice(a, K, i, 0, K), col_slice(b, K, N, j, 0, K), c[i * N + j], ssa, ssb))
            << name;
      }
    }
  }
}

// Quantized operands in two scale layouts and both B orientations give the bits of the plain-array
// GEMM on the same codes; NVFP4's per-tensor scales go through the FFMA epilogue.
TEST(EmulatorGemm, BlockScaledTensorsInAnyLayout) {
  Rng rng(19);
  const std::int64_t M = 40, N = 24, K = 96;
  std::normal_distribution<float> g(0.0f, 3.0f);
  std::vector<float> x(static_cast<std::size_t>(M * K)), y(static_cast<std::size_t>(K * N)), yt(y.size());
  for (auto& v : x) v = g(rng);
  for (auto& v : y) v = g(rng);
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) yt[static_cast<std::size_t>(n * K + k)] = y[static_cast<std::size_t>(k * N + n)];
  }
  for (const BlockFormat& bf : {block_formats::mxfp8_e4m3, block_formats::nvfp4, block_formats::mxfp4}) {
    const KernelSchedule s = block_scaled_schedule(Arch::sm_100a, bf.element, bf.element, bf.scale, bf.block_size);
    QuantizeOptions o;
    if (bf == block_formats::nvfp4) o.rule = ScaleRule::nvfp4_transformer_engine;
    const BlockScaledTensor qa = quantize(x, {M, K}, KAxis::last, bf, o, std::nullopt,
                                          ScaleLayout::of(ScaleLayoutKind::tiled_128x4));
    const BlockScaledTensor qb = quantize(y, {K, N}, KAxis::first, bf, o);
    const BlockScaledTensor qbt = quantize(yt, {N, K}, KAxis::last, bf, o, std::nullopt,
                                           ScaleLayout::of(ScaleLayoutKind::tiled_128x4));
    const std::vector<float> cv(static_cast<std::size_t>(M * N), 0.25f);
    std::vector<std::uint32_t> cw(cv.size());
    for (std::size_t i = 0; i < cv.size(); ++i) cw[i] = std::bit_cast<std::uint32_t>(cv[i]);
    const CodeMatrix c(Format::float32, static_cast<std::size_t>(M), static_cast<std::size_t>(N), std::span<const std::uint32_t>(cw));
    const std::vector<std::uint32_t> d = gemm(s, qa, qb, c);
    EXPECT_EQ(gemm(s, qa, qbt, c), d) << to_string(bf);

    // The same codes as plain arrays.
    const std::size_t kb = static_cast<std::size_t>(qa.desc().k_blocks());
    const auto uM = static_cast<std::size_t>(M), uN = static_cast<std::size_t>(N), uK = static_cast<std::size_t>(K);
    std::vector<std::uint32_t> a, b(uK * uN), sa, sb(kb * uN);
    for (std::int64_t i = 0; i < M; ++i) {
      for (std::int64_t k = 0; k < K; ++k) a.push_back(qa.element_code(0, i, k));
      for (std::size_t t = 0; t < kb; ++t) sa.push_back(qa.scale_code(0, i, static_cast<std::int64_t>(t)));
    }
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t k = 0; k < K; ++k) b[static_cast<std::size_t>(k * N + n)] = qb.element_code(0, n, k);
      for (std::size_t t = 0; t < kb; ++t) sb[t * uN + static_cast<std::size_t>(n)] = qb.scale_code(0, n, static_cast<std::int64_t>(t));
    }
    const GemmOperands plain{CodeMatrix(bf.element, uM, uK, a), CodeMatrix(bf.element, uK, uN, b),
                             CodeMatrix(bf.scale, uM, kb, sa), CodeMatrix(bf.scale, kb, uN, sb), {}};
    const float alpha = qa.tensor_scale().decode * qb.tensor_scale().decode;
    if (alpha == 1.0f) {
      // alpha = 1 (MX formats): C is the first instruction's accumulator.
      EXPECT_EQ(d, gemm(s, GemmOperands{plain.a, plain.b, plain.scale_a, plain.scale_b, c})) << to_string(bf);
    } else {
      // NVFP4: the chain from +0, then D = fma(alpha, acc, C).
      const std::vector<std::uint32_t> raw = gemm(s, plain);
      for (std::size_t i = 0; i < raw.size(); ++i) {
        ASSERT_EQ(d[i], u(std::fma(alpha, f(raw[i]), 0.25f))) << to_string(bf) << " " << i;
      }
    }
  }
}

// A batch of tensors gives, batch by batch, the bits of each batch quantized and multiplied alone:
// for one code per byte (MXFP8, whose operands view the tensor's storage) and packed fp4 (MXFP4,
// NVFP4 with its per-tensor scales: unpacked first).
TEST(EmulatorGemm, BatchedBlockScaledTensorsMatchEachBatchAlone) {
  Rng rng(23);
  const std::int64_t batch = 3, M = 12, N = 40, K = 96;
  std::normal_distribution<float> g(0.0f, 3.0f);
  std::vector<float> x(static_cast<std::size_t>(batch * M * K)), y(static_cast<std::size_t>(batch * N * K));
  for (auto& v : x) v = g(rng);
  for (auto& v : y) v = g(rng);
  for (const BlockFormat& bf : {block_formats::mxfp8_e4m3, block_formats::mxfp4, block_formats::nvfp4}) {
    const KernelSchedule s = block_scaled_schedule(Arch::sm_100a, bf.element, bf.element, bf.scale, bf.block_size);
    QuantizeOptions o;
    if (bf == block_formats::nvfp4) o.rule = ScaleRule::nvfp4_transformer_engine;
    const BlockScaledTensor qa = quantize(x, {batch, M, K}, KAxis::last, bf, o);
    const BlockScaledTensor qb = quantize(y, {batch, N, K}, KAxis::last, bf, o);
    const std::vector<std::uint32_t> d = gemm(s, qa, qb);
    ASSERT_EQ(d.size(), static_cast<std::size_t>(batch * M * N)) << to_string(bf);
    for (std::int64_t i = 0; i < batch; ++i) {
      const auto xs = std::span(x).subspan(static_cast<std::size_t>(i * M * K), static_cast<std::size_t>(M * K));
      const auto ys = std::span(y).subspan(static_cast<std::size_t>(i * N * K), static_cast<std::size_t>(N * K));
      // NVFP4's per-tensor scale comes from the whole tensor's amax: each batch alone is given it.
      QuantizeOptions oa = o, ob = o;
      if (bf == block_formats::nvfp4) {
        oa.tensor_scale = ob.tensor_scale = TensorScaleSource::given_amax;
        oa.tensor_amax = qa.tensor_scale().amax;
        ob.tensor_amax = qb.tensor_scale().amax;
      }
      const BlockScaledTensor ai = quantize(xs, {M, K}, KAxis::last, bf, oa);
      const BlockScaledTensor bi = quantize(ys, {N, K}, KAxis::last, bf, ob);
      const std::vector<std::uint32_t> di = gemm(s, ai, bi);
      ASSERT_TRUE(std::equal(di.begin(), di.end(), d.begin() + i * M * N)) << to_string(bf) << " batch " << i;
    }
  }
}

// mma_scaled(..., hardware("sm_100a")) and mma(..., hardware("sm_90a.wgmma")) through the registry.
TEST(EmulatorGemm, ReferenceHardwareModels) {
  register_reference_models();
  using reference::DType;
  using reference::Numerics;
  using reference::Tensor;
  // The cuda.tile seed example: 2x64 e4m3 ones, e8m0 scales 2.0, a 64x2 operand of ones -> 256.
  const Tensor x = Tensor::full(DType::float8_e4m3fn, {2, 64}, 1.0), xs = Tensor::full(DType::float8_e8m0fnu, {2, 2}, 2.0);
  const Tensor y = Tensor::full(DType::float8_e4m3fn, {64, 2}, 1.0), ys = Tensor::full(DType::float8_e8m0fnu, {2, 2}, 2.0);
  const Tensor acc = Tensor::zeros(DType::float32, {2, 2});
  for (const char* model : {"sm_100a", "sm_120a"}) {
    const Tensor r = reference::mma_scaled(x, xs, y, ys, acc, {Numerics::hardware(model)});
    EXPECT_EQ(r.to_string(), "[[256, 256], [256, 256]]") << model;
  }
  // cuda.tile's NVFP4 scales (f8e4m3fn): the instruction reads each byte as ue4m3, its sign bit
  // ignored (numerics.md b.5), where the exact reference multiplies by the signed value.
  {
    const Tensor x4 = Tensor::full(DType::float4_e2m1fn, {2, 32}, 1.0), y4 = Tensor::full(DType::float4_e2m1fn, {32, 2}, 1.5);
    const Tensor xs4 = Tensor::from_values(DType::float8_e4m3fn, {2, 2}, std::vector<double>{2.0, 2.0, -0.5, 0.25});
    const Tensor ys4 = Tensor::from_values(DType::float8_e4m3fn, {2, 2}, std::vector<double>{1.0, -1.0, 1.0, 0.125});
    const Tensor acc4 = Tensor::zeros(DType::float32, {2, 2});
    EXPECT_EQ(reference::mma_scaled(x4, xs4, y4, ys4, acc4).to_string(), "[[96, -42], [-6, 12.75]]");
    EXPECT_EQ(reference::mma_scaled(x4, xs4, y4, ys4, acc4, {Numerics::hardware("sm_100a")}).to_string(),
              "[[96, 54], [18, 12.75]]");
  }
  // Random MXFP8 through the registry equals gemm() directly.
  Rng rng(23);
  const std::size_t M = 5, K = 64, N = 3;
  const auto ac = random_codes(rng, Format::float8_e4m3fn, M * K), bc = random_codes(rng, Format::float8_e4m3fn, K * N);
  std::vector<std::uint32_t> sac(M * 2), sbc(2 * N);
  for (auto& s : sac) s = 110 + static_cast<std::uint32_t>(rng() % 30);
  for (auto& s : sbc) s = 110 + static_cast<std::uint32_t>(rng() % 30);
  const auto w64 = [](const std::vector<std::uint32_t>& v) { return std::vector<std::uint64_t>(v.begin(), v.end()); };
  const auto sM = static_cast<std::int64_t>(M), sK = static_cast<std::int64_t>(K), sN = static_cast<std::int64_t>(N);
  const Tensor tx(DType::float8_e4m3fn, {sM, sK}, w64(ac)), ty(DType::float8_e4m3fn, {sK, sN}, w64(bc));
  const Tensor txs(DType::float8_e8m0fnu, {sM, 2}, w64(sac)), tys(DType::float8_e8m0fnu, {2, sN}, w64(sbc));
  const Tensor r =
      reference::mma_scaled(tx, txs, ty, tys, Tensor::zeros(DType::float32, {sM, sN}), {Numerics::hardware("sm_100a")});
  const auto d = gemm(block_scaled_schedule(Arch::sm_100a, Format::float8_e4m3fn, Format::float8_e4m3fn,
                                            Format::float8_e8m0fnu, 32),
                      GemmOperands{CodeMatrix(Format::float8_e4m3fn, M, K, ac), CodeMatrix(Format::float8_e4m3fn, K, N, bc),
                                   CodeMatrix(Format::float8_e8m0fnu, M, 2, sac),
                                   CodeMatrix(Format::float8_e8m0fnu, 2, N, sbc), {}});
  for (std::size_t i = 0; i < M * N; ++i) EXPECT_EQ(r.code(static_cast<std::int64_t>(i)), d[i]);
  // Plain mma: the wgmma fp8 chain keeps 13 fraction bits (e8m13), an exact reference does not.
  const Tensor l = Tensor::full(DType::float8_e4m3fn, {1, 32}, 1.0), rr = Tensor::full(DType::float8_e4m3fn, {32, 1}, 1.0);
  const Tensor c1 = Tensor::full(DType::float32, {1, 1}, 1.0 + std::ldexp(1.0, -12));
  EXPECT_EQ(reference::mma(l, rr, c1, Numerics::hardware("sm_90a.wgmma")).to_string(), "[[33]]");
  EXPECT_EQ(reference::mma(l, rr, c1, Numerics::exact()).value(0), 33.0 + std::ldexp(1.0, -12));
  // tf32 codes cross the registry magnitude-aligned.
  const Tensor lt = Tensor::full(DType::tfloat32, {1, 8}, 1.5), rt = Tensor::full(DType::tfloat32, {8, 1}, 2.0);
  EXPECT_EQ(reference::mma(lt, rt, Tensor::zeros(DType::float32, {1, 1}), Numerics::hardware("sm_90a")).to_string(), "[[24]]");
  // f64 DMMA: an fma chain.
  const Tensor ld = Tensor::full(DType::float64, {1, 4}, 0.1), rd = Tensor::full(DType::float64, {4, 1}, 3.0);
  const double expected = std::fma(0.1, 3.0, std::fma(0.1, 3.0, std::fma(0.1, 3.0, std::fma(0.1, 3.0, 0.0))));
  EXPECT_EQ(reference::mma(ld, rd, Tensor::zeros(DType::float64, {1, 1}), Numerics::hardware("sm_90a")).value(0), expected);
  // ... with DMMA's NaN results as measured on an H200 (B's NaN before C's before A's, quieted;
  // Inf x 0 the negative default NaN), not the host fma's choice (until 2026-11-30 the reference
  // took std::fma: A's payload where A and B were NaN).
  constexpr std::uint64_t nan_a = 0x7FF0000000000A11ull, nan_b = 0x7FF8000000000B22ull, nan_c = 0xFFF8000000000C33ull;
  constexpr std::uint64_t one = 0x3FF0000000000000ull, inf = 0x7FF0000000000000ull;
  struct NanCase {
    std::uint64_t a, b, c, d;
  };
  for (const NanCase& t : {NanCase{nan_a, nan_b, 0, nan_b}, NanCase{nan_a, one, nan_c, nan_c},
                           NanCase{one, nan_b, nan_c, nan_b}, NanCase{nan_a, one, 0, nan_a | (1ull << 51)},
                           NanCase{inf, 0, one, 0xFFF8000000000000ull}}) {
    const Tensor a(DType::float64, {1, 4}, {t.a, 0, 0, 0}), b(DType::float64, {4, 1}, {t.b, 0, 0, 0});
    const Tensor c(DType::float64, {1, 1}, {t.c});
    EXPECT_EQ(reference::mma(a, b, c, Numerics::hardware("sm_90a")).code(0), t.d) << std::hex << t.a << " " << t.b << " " << t.c;
    const Instruction dmma = parse_instruction("sm_90a mma.sync.aligned m8n8k4 f64 f64 f64");
    const std::vector<double> av = {std::bit_cast<double>(t.a), 0, 0, 0}, bv = {std::bit_cast<double>(t.b), 0, 0, 0};
    EXPECT_EQ(std::bit_cast<std::uint64_t>(dot_f64(dmma, av, bv, std::bit_cast<double>(t.c))), t.d);
  }
}

}  // namespace
}  // namespace blockscale::emulator
