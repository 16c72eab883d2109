// SPDX-License-Identifier: Apache-2.0
// `blockscale demo`: the main job of scripts/run.sh. A short end-to-end story on built-in data:
//   1. the definition: the cuda.tile mma_scaled worked examples, recomputed;
//   2. two random matrices quantized to MXFP8 and NVFP4 (blockscale::quantize);
//   3. mma_scaled on them in the `exact` numerics (the reference: one rounding of the exact sum),
//      `sequential_f32` (an fp32 FMA chain in k order, as naive host references do) and, where the
//      emulator is built, `hardware(sm_100a)` / `hardware(sm_120a)` (the bit-exact tensor-core
//      GEMM models of blockscale::emulator);
//   4. how many outputs differ from the reference and by how many ulps, as a histogram.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "blockscale/layout/scale_layout.h"
#include "blockscale/quantize.h"
#include "blockscale/reference.h"
#include "cli.h"
#include "blockscale/emulator/reference_models.h"

namespace blockscale::cli {
namespace {

using reference::DType;
using reference::Numerics;
using reference::Tensor;

// ---- Data: deterministic on every platform (mt19937_64 is fully specified; the Irwin-Hall sum
// of four uniforms needs no libm), with per-row / per-column magnitudes over 2^-4..2^4 and 1%
// outliers 32x larger, so that blocks see realistic dynamic range.
std::vector<float> random_matrix(std::mt19937_64& rng, std::int64_t rows, std::int64_t cols, bool row_scaled) {
  auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1p-53; };
  std::vector<double> line_scale(static_cast<std::size_t>(row_scaled ? rows : cols));
  for (double& s : line_scale) s = std::ldexp(1.0, static_cast<int>(rng() % 9) - 4);
  std::vector<float> m(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      double v = uniform() + uniform() + uniform() + uniform() - 2.0;  // mean 0, sd 0.577
      if (rng() % 100 == 0) v *= 32.0;
      v *= line_scale[static_cast<std::size_t>(row_scaled ? r : c)];
      m[static_cast<std::size_t>(r * cols + c)] = static_cast<float>(v);
    }
  return m;
}

struct Comparison : UlpComparison {
  std::string mode;
  double millis = 0;
};

Comparison compare(const std::string& mode, double millis, const Tensor& result, const Tensor& exact) {
  Comparison c;
  c.mode = mode;
  c.millis = millis;
  for (std::int64_t i = 0; i < exact.size(); ++i)
    c.add(static_cast<std::uint32_t>(result.code(i)), static_cast<std::uint32_t>(exact.code(i)));
  return c;
}

struct FormatStory {
  std::string name, description;
  double quantize_millis = 0;
  float tensor_scale_product = 1.0f;
  double quantization_error = 0;  // median relative error of the exact result vs fp64 of the unquantized data
  std::vector<Comparison> comparisons;
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

FormatStory run_format(const std::string& name, const std::string& description, const BlockFormat& f,
                       const QuantizeOptions& o, const std::vector<float>& A, const std::vector<float>& B,
                       std::int64_t M, std::int64_t N, std::int64_t K, const std::vector<std::string>& models) {
  FormatStory s;
  s.name = name;
  s.description = description;
  double t0 = now_ms();
  const BlockScaledTensor qa = quantize(A, {M, K}, KAxis::last, f, o);
  const BlockScaledTensor qb = quantize(B, {K, N}, KAxis::first, f, o);
  s.quantize_millis = now_ms() - t0;
  const reference::ScaledOperand x = reference::scaled_operand(qa, reference::Side::x);
  const reference::ScaledOperand y = reference::scaled_operand(qb, reference::Side::y);
  s.tensor_scale_product = x.tensor_scale * y.tensor_scale;
  const Tensor acc = Tensor::zeros(DType::float32, {M, N});
  auto run = [&](const Numerics& n, double& millis) {
    const double t = now_ms();
    Tensor r = reference::mma_scaled(x.values, x.scales, y.values, y.scales, acc, {n});
    millis = now_ms() - t;
    return r;
  };
  double exact_ms = 0;
  const Tensor exact = run(Numerics::exact(), exact_ms);
  s.comparisons.push_back(compare("exact", exact_ms, exact, exact));
  double ms = 0;
  const Tensor seq = run(Numerics::sequential(), ms);
  s.comparisons.push_back(compare("sequential_f32", ms, seq, exact));
  for (const std::string& m : models) {
    const Tensor hw = run(Numerics::hardware(m), ms);
    s.comparisons.push_back(compare("hardware(" + m + ")", ms, hw, exact));
  }
  // Context: how far quantization moved the product (per-tensor scales applied as alpha).
  std::vector<double> rel, bt(static_cast<std::size_t>(K * N));
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t j = 0; j < N; ++j) bt[static_cast<std::size_t>(j * K + k)] = B[static_cast<std::size_t>(k * N + j)];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (std::int64_t k = 0; k < K; ++k)
        ref += static_cast<double>(A[static_cast<std::size_t>(i * K + k)]) * bt[static_cast<std::size_t>(j * K + k)];
      const double q = exact.value(i * N + j) * s.tensor_scale_product;
      if (ref != 0) rel.push_back(std::fabs(q - ref) / std::fabs(ref));
    }
  std::nth_element(rel.begin(), rel.begin() + static_cast<std::ptrdiff_t>(rel.size() / 2), rel.end());
  s.quantization_error = rel.empty() ? 0 : rel[rel.size() / 2];
  return s;
}

// The seed examples, recomputed (cuda.tile.mma_scaled "Basic usage" and the sm_100 swizzle sample).
struct SeedCheck {
  std::string what, expect, got;
};
std::vector<SeedCheck> seed_checks() {
  std::vector<SeedCheck> out;
  {
    const Tensor tx = Tensor::full(DType::float8_e4m3fn, {2, 64}, 1.0);
    const Tensor sx = Tensor::full(DType::float8_e8m0fnu, {2, 2}, 2.0);
    const Tensor ty = Tensor::full(DType::float8_e4m3fn, {64, 2}, 1.0);
    const Tensor sy = Tensor::full(DType::float8_e8m0fnu, {2, 2}, 2.0);
    const Tensor r = reference::mma_scaled(tx, sx, ty, sy, Tensor::zeros(DType::float32, {2, 2}));
    out.push_back({"2x64 e4m3 ones, e8m0 scales 2.0, by 64x2", "[[256, 256], [256, 256]]", r.to_string()});
  }
  {
    const std::int64_t n = 128, ks = 4;
    const ScaleLayout sw = ScaleLayout::of(ScaleLayoutKind::cutile_swizzle_32_4_4);
    const std::vector<std::uint8_t> logical(static_cast<std::size_t>(n * ks), 128);  // e8m0 2.0
    std::vector<std::uint8_t> stored(static_cast<std::size_t>(storage_size(sw, n, ks)));
    to_layout(sw, 1, n, ks, logical, stored);
    const Tensor xs = reference::scales_from_layout(DType::float8_e8m0fnu, sw, reference::Side::x, 0, n, ks, stored);
    const Tensor ys = reference::scales_from_layout(DType::float8_e8m0fnu, sw, reference::Side::y, 0, n, ks, stored);
    const Tensor ones = Tensor::full(DType::float8_e4m3fn, {n, n}, 1.0);
    const Tensor r = reference::mma_scaled(ones, xs, ones, ys, Tensor::zeros(DType::float32, {n, n}));
    std::vector<double> v = r.values();
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::string got = "[";
    for (std::size_t i = 0; i < v.size(); ++i) got += (i ? ", " : "") + std::to_string(static_cast<long long>(v[i]));
    out.push_back({"128^3 e4m3 ones, scales 2.0 via swizzle_32_4_4 (unique values)", "[512]", got + "]"});
  }
  return out;
}

void print_text(const std::vector<SeedCheck>& seeds, const std::vector<FormatStory>& stories, std::int64_t M,
                std::int64_t N, std::int64_t K, std::uint64_t seed, const std::vector<std::string>& models) {
  std::printf("blockscale demo: mma_scaled as cuda.tile defines it, and what accumulation does to it\n\n");
  std::printf("1. The definition  result[i,j] = sum_k x[i,k]*x_scale[i,k/B]*y[k,j]*y_scale[k/B,j] + acc[i,j]\n");
  for (const SeedCheck& s : seeds)
    std::printf("   %-62s -> %s  %s\n", s.what.c_str(), s.got.c_str(), s.got == s.expect ? "(as documented)" : "(MISMATCH)");
  std::printf("\n2. Data: A %lldx%lld times B %lldx%lld, fp32, row/column magnitudes 2^-4..2^4, 1%% outliers x32, seed %llu\n",
              static_cast<long long>(M), static_cast<long long>(K), static_cast<long long>(K), static_cast<long long>(N),
              static_cast<unsigned long long>(seed));
  std::printf("   Numerics: exact = the reference (exact sum, ONE rounding to f32, nearest-even)\n");
  std::printf("             sequential_f32 = fmaf(x*x_scale, y*y_scale, d) in k order (naive host reference)\n");
  for (const std::string& m : models)
    std::printf("             hardware(%s) = blockscale::emulator's %s block-scaled GEMM, bit-exact model\n", m.c_str(),
                m.c_str());
  int section = 3;
  for (const FormatStory& s : stories) {
    std::printf("\n%d. %s: %s\n", section++, s.name.c_str(), s.description.c_str());
    std::printf("   quantized in %.0f ms; quantization alone moves A*B by %.2g (median relative error vs fp64)\n",
                s.quantize_millis, s.quantization_error);
    if (s.tensor_scale_product != 1.0f)
      std::printf("   per-tensor scales (outside mma_scaled, applied as alpha): %.6g\n", static_cast<double>(s.tensor_scale_product));
    std::printf("   %-18s %7s %15s %9s   ulps from exact:", "mode", "time", "outputs differ", "max ulp");
    for (const UlpBucket& b : kUlpBuckets) std::printf(" %6s", b.label);
    std::printf("\n");
    for (const Comparison& c : s.comparisons) {
      char differ[48];
      std::snprintf(differ, sizeof differ, "%lld (%.1f%%)", static_cast<long long>(c.differ),
                    100.0 * static_cast<double>(c.differ) / static_cast<double>(c.outputs));
      std::printf("   %-18s %5.0fms %15s %9llu   %16s", c.mode.c_str(), c.millis, differ,
                  static_cast<unsigned long long>(c.max_ulp), "");
      for (const std::int64_t h : c.histogram) std::printf(" %6lld", static_cast<long long>(h));
      print_bit_differences(c);
      std::printf("\n");
    }
  }
  std::printf("\nThe quantized operands are identical in every row above: the differences are accumulation alone.\n"
              "Machine-readable: blockscale demo --json\n");
}

void print_json(const std::vector<SeedCheck>& seeds, const std::vector<FormatStory>& stories, std::int64_t M,
                std::int64_t N, std::int64_t K, std::uint64_t seed) {
  std::printf("{\n  \"m\": %lld, \"n\": %lld, \"k\": %lld, \"seed\": %llu,\n  \"seed_examples\": [",
              static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K),
              static_cast<unsigned long long>(seed));
  for (std::size_t i = 0; i < seeds.size(); ++i)
    std::printf("%s\n    {\"what\": \"%s\", \"expect\": \"%s\", \"got\": \"%s\", \"ok\": %s}", i ? "," : "",
                json_escape(seeds[i].what).c_str(), json_escape(seeds[i].expect).c_str(),
                json_escape(seeds[i].got).c_str(), seeds[i].got == seeds[i].expect ? "true" : "false");
  std::printf("\n  ],\n  \"formats\": [");
  for (std::size_t f = 0; f < stories.size(); ++f) {
    const FormatStory& s = stories[f];
    std::printf("%s\n    {\"name\": \"%s\", \"description\": \"%s\", \"quantize_ms\": %.3f, \"tensor_scale_product\": %.9g, "
                "\"quantization_median_relative_error\": %.6g,\n     \"modes\": [",
                f ? "," : "", json_escape(s.name).c_str(), json_escape(s.description).c_str(), s.quantize_millis,
                static_cast<double>(s.tensor_scale_product), s.quantization_error);
    for (std::size_t m = 0; m < s.comparisons.size(); ++m) {
      const Comparison& c = s.comparisons[m];
      std::printf("%s\n       {\"mode\": \"%s\", \"ms\": %.3f, \"outputs\": %lld, \"differ_from_exact\": %lld, "
                  "\"nan_mismatches\": %lld, \"zero_sign_mismatches\": %lld, \"nan_payload_differences\": %lld, "
                  "\"max_ulp\": %llu, \"ulp_histogram\": {",
                  m ? "," : "", json_escape(c.mode).c_str(), c.millis, static_cast<long long>(c.outputs),
                  static_cast<long long>(c.differ), static_cast<long long>(c.nan_mismatch),
                  static_cast<long long>(c.zero_sign), static_cast<long long>(c.nan_payload),
                  static_cast<unsigned long long>(c.max_ulp));
      for (int b = 0; b < kUlpBucketCount; ++b)
        std::printf("%s\"%s\": %lld", b ? ", " : "", kUlpBuckets[b].label, static_cast<long long>(c.histogram[b]));
      std::printf("}}");
    }
    std::printf("\n     ]}");
  }
  std::printf("\n  ]\n}\n");
}

int run_demo(const std::vector<std::string>& argv) {
  Args args(argv, {"m", "n", "k", "seed"}, {"json"});
  args.no_positional();
  const std::int64_t M = args.get_int("m", 128, 1, 4096);
  const std::int64_t N = args.get_int("n", 128, 1, 4096);
  const std::int64_t K = args.get_int("k", 1024, 32, 1 << 16);
  if (K % 32 != 0) throw UsageError("--k must be a multiple of 32 (the MXFP8 block), got " + std::to_string(K));
  const std::uint64_t seed = args.get_u64("seed", 2025);

  // hardware(sm_100a): the emulator's block-scaled instruction chain along K (emulator/gemm.h).
  emulator::register_reference_models();
  const std::vector<std::string> models = {"sm_100a"};
  std::mt19937_64 rng(seed);
  const std::vector<float> A = random_matrix(rng, M, K, true);
  const std::vector<float> B = random_matrix(rng, K, N, false);

  const std::vector<SeedCheck> seeds = seed_checks();
  std::vector<FormatStory> stories;
  stories.push_back(run_format("MXFP8", "e4m3 elements, one e8m0 scale per 32 (TransformerEngine/cuBLAS RCEIL)",
                               block_formats::mxfp8_e4m3, recipes::transformer_engine_mxfp8(Format::float8_e4m3fn), A,
                               B, M, N, K, models));
  stories.push_back(run_format("NVFP4", "e2m1 elements, one ue4m3 scale per 16, fp32 per-tensor scale (TransformerEngine)",
                               block_formats::nvfp4, recipes::nvfp4_transformer_engine(), A, B, M, N, K, models));
  if (args.flag("json")) {
    print_json(seeds, stories, M, N, K, seed);
  } else {
    print_text(seeds, stories, M, N, K, seed, models);
  }
  for (const SeedCheck& s : seeds)
    if (s.got != s.expect) return kExitMismatch;
  return kExitOk;
}

const Registrar demo_cmd({"demo", "the main job: mma_scaled on MXFP8 / NVFP4 data, exact vs fp32 chain vs hardware model",
                          "blockscale demo [--m 128] [--n 128] [--k 1024] [--seed 2025] [--json]\n"
                          "  Recomputes the cuda.tile mma_scaled examples, quantizes two random matrices (built-in,\n"
                          "  deterministic from --seed) to MXFP8 and NVFP4, computes mma_scaled with the exact\n"
                          "  reference numerics, the sequential fp32 FMA chain and the emulator's hardware models, and\n"
                          "  shows how many outputs differ from the reference in their bits and by how many ulps.\n"
                          "  Exit status 1 if a documented example does not reproduce.",
                          run_demo});

}  // namespace
}  // namespace blockscale::cli
