// SPDX-License-Identifier: Apache-2.0
// emulator/library_fp8.h: the library GEMMs of fp8 with fp32 scales, and their exact numerics.
//   * Each table row's GEMM is given to the conformance harness's schedule fitter
//     (harness::fit_schedules, a separate implementation that builds its own operands and
//     epilogues) as if it were the library's output: the candidate the row names must fit it bit
//     for bit, and the others must not (so the data tell the schedules apart).
//   * exact_fp8_scaled_gemm against one reference::ExactSum per output fed with every product as
//     (element significand x scale significand) x (the same for B), term by term, which shares
//     none of the block sums; zero signs, overflow and subnormal scales included; on every path
//     this CPU runs, the certified double sums included, and outputs they must not certify.
// PyTorch on an H200 is the oracle of scripts/fp8_scaled_vs_torch.py (docs/verification.md).
#include "blockscale/emulator/library_fp8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/presets.h"
#include "blockscale/harness/external.h"
#include "blockscale/reference/exact_sum.h"
#include "expect_throw.h"

namespace blockscale::emulator {
namespace {

using blockscale::test::invalid_argument_message;

using G = Fp8Granularity;

std::vector<float> data(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> exponent(-8, 8);
  std::vector<float> x(static_cast<std::size_t>(count));
  for (float& v : x) v = std::ldexp(normal(rng), exponent(rng));
  return x;
}

Fp8ScaledMatrix quantized(std::int64_t rows, std::int64_t k, G g, std::uint64_t seed,
                          Format element = Format::float8_e4m3fn) {
  const Fp8ScaleRecipe recipe =
      g == G::tensor || g == G::row ? Fp8ScaleRecipe::torchao : Fp8ScaleRecipe::deepgemm;
  return quantize_fp8_scaled(data(rows * k, seed), rows, k, KAxis::last, element, g, recipe);
}

// What the harness's fitter calls each table row's schedule (docs/conformance.md).
std::string fitter_name(const LibraryFp8Schedule& s) {
  const std::string accumulation = s.promotion_interval == 0 ? "one wgmma chain over all of K (no promotion)"
                                                             : "promotion every 128 (P=4, FADD)";
  switch (s.scales) {
    case Fp8ScaleStage::epilogue_scale_product: return accumulation + ", epilogue (sa*sb)*acc";
    case Fp8ScaleStage::epilogue_b_first: return accumulation + ", epilogue sa*(sb*acc)";
    case Fp8ScaleStage::epilogue_a_first: return accumulation + ", epilogue sb*(sa*acc)";
    case Fp8ScaleStage::promotion_fma: break;
  }
  if (s.operands_exchanged) {
    return "promotion every 128 (P=4), operands swapped: acc = fma(sa, sb*p, acc) with sa and sb exchanged";
  }
  return s.promotion_fma == PromotionFma::scale_product
             ? "promotion every 128 (P=4), acc = fma(sa*sb, p, acc)"
             : "promotion every 128 (P=4), acc = fma(sa, sb*p, acc)";
}

harness::ExternalScaling scaling_of(const LibraryFp8Schedule& s) {
  if (s.a == G::tensor) return harness::ExternalScaling::tensor;
  if (s.a == G::row) return harness::ExternalScaling::rowwise;
  return s.b == G::block_128x128 ? harness::ExternalScaling::block_128x128
                                 : harness::ExternalScaling::block_1x128;
}

// The harness's view of the library call of row `s` on a and b that gave d (f32 bits), as the
// library it names would report it.
harness::ExternalRun run_of(const LibraryFp8Schedule& s, const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b,
                            std::vector<std::uint32_t> d) {
  harness::ExternalRun run;
  run.library =
      s.library == Fp8Library::cublaslt ? "cuBLASLt (blockscale test)" : "torch (blockscale test) _scaled_mm";
  run.split_k = s.library == Fp8Library::cublaslt ? 1 : 0;  // cuBLASLt reports its split count, torch does not
  run.scaling = scaling_of(s);
  run.fast_accum = s.fast_accum;
  run.m = static_cast<int>(a.rows), run.n = static_cast<int>(b.rows), run.k = static_cast<int>(a.k);
  run.a = a.codes;
  run.b = b.codes;
  const std::int64_t kb = a.k_blocks();
  auto logical = [&](const Fp8ScaledMatrix& x, std::vector<float>& out) {
    if (x.granularity == G::tensor) {
      out = {x.scales[0]};
    } else if (x.granularity == G::row) {
      out = x.scales;
    } else {
      for (std::int64_t r = 0; r < x.rows; ++r)
        for (std::int64_t q = 0; q < kb; ++q) out.push_back(x.scale(r, q));
    }
  };
  logical(a, run.sa);
  logical(b, run.sb);
  run.d = std::move(d);
  return run;
}

TEST(LibraryFp8, EveryRowIsTheScheduleTheHarnessFitsToIt) {
  // B's 128 x 128 blocks: two row blocks, one partial. K above 1024: a promotion every 32 wgmma
  // (one of the fitter's candidates) is then no longer the same as one chain.
  const std::int64_t m = 48, n = 160, k = 1152;
  const auto& rows = library_fp8_schedules();
  ASSERT_EQ(rows.size(), 11u);
  for (const LibraryFp8Schedule& s : rows) {
    SCOPED_TRACE(s.name());
    const Fp8ScaledMatrix a = quantized(m, k, s.a, 11), b = quantized(n, k, s.b, 12);
    const std::vector<std::uint32_t> d = library_fp8_gemm(s, a, b, 0, m);
    ASSERT_EQ(d.size(), static_cast<std::size_t>(m * n));
    const harness::ExternalStudy study = harness::fit_schedules(run_of(s, a, b, d));
    bool found = false;
    for (const harness::ScheduleFit& f : study.fits) {
      if (f.schedule == fitter_name(s)) {
        found = true;
        EXPECT_EQ(f.matches, f.outputs) << f.schedule;
      } else {
        EXPECT_LT(f.matches, f.outputs)
            << f.schedule << " fits too: the data do not tell the schedules apart";
      }
    }
    EXPECT_TRUE(found) << "the fitter tried no '" << fitter_name(s) << "'";
    EXPECT_EQ(study.table.row, s.name()) << study.table.why_not;
    EXPECT_TRUE(study.table.bit_exact());
    EXPECT_EQ(study.table.split_k, 1);
  }
}

TEST(LibraryFp8, TheTableCheckTakesABf16DAsTheF32DRounded) {
  // A bf16 D (torch._scaled_mm's out_dtype=bfloat16) is checked as the row's f32 D rounded to
  // nearest even; here rounded by the formats library, not by the harness's own narrowing. One
  // flipped bf16 bit is seen (a small call: a fit that is not exact tries every split).
  const std::int64_t m = 16, n = 136, k = 640;
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    SCOPED_TRACE(s.name());
    const Fp8ScaledMatrix a = quantized(m, k, s.a, 13), b = quantized(n, k, s.b, 14);
    harness::ExternalRun run = run_of(s, a, b, library_fp8_gemm(s, a, b, 0, m));
    run.bf16_output = true;
    std::size_t rounded = 0;
    for (std::uint32_t& x : run.d) {
      const std::uint32_t y = convert_code(Format::bfloat16, Format::float32, x, presets::ieee(Rounding::nearest_even));
      rounded += (x & 0xFFFFu) != 0;
      x = y;
    }
    ASSERT_GT(rounded, run.d.size() / 2) << "the f32 outputs are bf16 already";
    harness::ExternalStudy study = harness::fit_schedules(run);
    EXPECT_EQ(study.table.row, s.name()) << study.table.why_not;
    EXPECT_TRUE(study.table.bit_exact()) << study.table.matches << " of " << study.table.outputs;
    if (&s != &library_fp8_schedules().front()) continue;
    run.d[7] ^= 1u;
    study = harness::fit_schedules(run);
    EXPECT_EQ(study.table.matches + 1, study.table.outputs);
  }
}

// Columns [k0, k1) of x (multiples of 128), with their scales; unit scales with `unit_scales`.
Fp8ScaledMatrix k_slice(const Fp8ScaledMatrix& x, std::int64_t k0, std::int64_t k1, bool unit_scales) {
  Fp8ScaledMatrix y = x;
  y.k = k1 - k0;
  y.codes.clear();
  for (std::int64_t r = 0; r < x.rows; ++r)
    y.codes.insert(y.codes.end(), x.codes.begin() + r * x.k + k0, x.codes.begin() + r * x.k + k1);
  if (x.granularity == G::block_1x128 || x.granularity == G::block_128x128) {
    const std::int64_t rows = x.granularity == G::block_1x128 ? x.rows : x.row_blocks();
    y.scales.clear();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t q = k0 / 128; q < k1 / 128; ++q)
        y.scales.push_back(x.scales[static_cast<std::size_t>(r * x.k_blocks() + q)]);
  }
  if (unit_scales) std::fill(y.scales.begin(), y.scales.end(), 1.0f);
  return y;
}

TEST(LibraryFp8, SplitKAddsTheSlicesInOrderCutAtTheRowsKTile) {
  // K = 17 blocks of 128 in 3 slices: at 128-element tiles 6 + 6 + 5 blocks, at 512-element tiles
  // 8 + 8 + 1, so the two K tiles cut differently. Each slice is the row's GEMM of that part of K
  // alone (the epilogue's tensor scales set to 1, so that the slices' accumulators show), and the
  // split GEMM must be their fp32 sum in order, from +0.
  const std::int64_t m = 24, n = 136, k = 17 * 128;
  int splitting = 0;
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    if (s.split_granule_k == 0) continue;
    SCOPED_TRACE(s.name());
    ++splitting;
    // The K tiles the H200 probes measured (docs/conformance.md, "Split-K").
    EXPECT_EQ(s.split_granule_k, s.b == G::block_128x128 ? 512 : 128);
    const bool epilogue = s.scales != Fp8ScaleStage::promotion_fma;
    const Fp8ScaledMatrix a = k_slice(quantized(m, k, s.a, 21), 0, k, epilogue),
                          b = k_slice(quantized(n, k, s.b, 22), 0, k, epilogue);
    const std::int64_t per = s.split_granule_k == 128 ? 6 * 128 : 8 * 128;
    std::vector<std::uint32_t> want(static_cast<std::size_t>(m * n), 0u);
    for (std::int64_t k0 = 0; k0 < k; k0 += per) {
      const std::int64_t k1 = std::min(k, k0 + per);
      const std::vector<std::uint32_t> part =
          library_fp8_gemm(s, k_slice(a, k0, k1, epilogue), k_slice(b, k0, k1, epilogue), 0, m);
      for (std::size_t x = 0; x < want.size(); ++x)  // the host's fp32 add (RNE), no NaN in these data
        want[x] = std::bit_cast<std::uint32_t>(std::bit_cast<float>(want[x]) + std::bit_cast<float>(part[x]));
    }
    const std::vector<std::uint32_t> d = library_fp8_gemm(s, a, b, 0, m, 3);
    EXPECT_EQ(d, want);
    EXPECT_NE(d, library_fp8_gemm(s, a, b, 0, m)) << "the data cannot tell the split from none";
    // The harness finds the row with the library's reported count, and a split schedule that fits.
    harness::ExternalRun run = run_of(s, a, b, d);
    run.split_k = 3;
    const harness::ExternalStudy study = harness::fit_schedules(run);
    EXPECT_TRUE(study.table.bit_exact());
    EXPECT_EQ(study.table.split_k, 3);
    ASSERT_TRUE(study.bit_exact());
    EXPECT_NE(study.fits.front().schedule.find("split-K 3"), std::string::npos)
        << study.fits.front().schedule;
  }
  EXPECT_EQ(splitting, 8);  // every row but torch's row-wise
}

TEST(LibraryFp8, TheSplitKProbeSeesExactlyTheSlices) {
  // scripts/probe_split_k.py's block probe, on the emulator: output (i, j) tests whether K block
  // t = 2i + j starts a slice, with the products s = 2^-18 in block t-1, L = 256 in block t and -L
  // in block t+1. One accumulator absorbs s into L (the output is then 0); a new slice at t keeps s
  // apart (the output is s). So the outputs must be s exactly at the slice starts the row's K tile
  // gives (40 blocks in 3 slices: at 14 and 28 with 128-element tiles, at 16 and 32 with 512), and
  // 0 elsewhere, unsplit too.
  const std::int64_t kb = 40, k = kb * 128, m = 20;
  const std::uint8_t s9 = 0x01, one = 0x38, l = 0x78, minus_l = 0xF8;  // e4m3: 2^-9, 1, 256, -256
  Fp8ScaledMatrix a, b;
  a.rows = m, b.rows = 2, a.k = b.k = k;
  a.codes.assign(static_cast<std::size_t>(m * k), 0);
  b.codes.assign(static_cast<std::size_t>(2 * k), 0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t g = 0; g < 2; ++g) {
      const std::int64_t t = 2 * i + g;
      if (t < 1 || t > kb - 2) continue;
      a.codes[static_cast<std::size_t>(i * k + 128 * (t - 1) + 2)] = s9;
      a.codes[static_cast<std::size_t>(i * k + 128 * t)] = l;
      a.codes[static_cast<std::size_t>(i * k + 128 * (t + 1) + 1)] = minus_l;
    }
  for (std::int64_t g = 0; g < 2; ++g)
    for (std::int64_t t = g; t < kb; t += 2) {  // column g passes the positions of candidates t = g mod 2
      b.codes[static_cast<std::size_t>(g * k + 128 * t)] = one;
      if (t + 1 < kb) b.codes[static_cast<std::size_t>(g * k + 128 * (t + 1) + 1)] = one;
      if (t >= 1) b.codes[static_cast<std::size_t>(g * k + 128 * (t - 1) + 2)] = s9;
    }
  for (const LibraryFp8Schedule& row : library_fp8_schedules()) {
    SCOPED_TRACE(row.name());
    a.granularity = row.a, b.granularity = row.b;
    a.scales.assign(row.a == G::tensor ? 1 : row.a == G::row ? m : static_cast<std::size_t>(m * kb), 1.0f);
    b.scales.assign(row.b == G::tensor ? 1
                    : row.b == G::row  ? 2
                                       : static_cast<std::size_t>((row.b == G::block_1x128 ? 2 : 1) * kb),
                    1.0f);
    for (int split : {1, 3}) {
      if (split > 1 && row.split_granule_k == 0) continue;
      const std::int64_t per = split == 1 ? kb : row.split_granule_k == 128 ? 14 : 16;
      const std::vector<std::uint32_t> d = library_fp8_gemm(row, a, b, 0, m, split);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t g = 0; g < 2; ++g) {
          const std::int64_t t = 2 * i + g;
          const std::uint32_t x = d[static_cast<std::size_t>(i * 2 + g)];
          if (t >= 1 && t <= kb - 2 && t % per == 0) {
            EXPECT_EQ(x, 0x36800000u) << "split " << split << ": block " << t << " starts a slice";  // 2^-18
          } else {
            EXPECT_EQ(x & 0x7FFFFFFFu, 0u) << "split " << split << ": block " << t;
          }
        }
    }
  }
}

TEST(LibraryFp8, RowRangesAndThreadsDoNotChangeABit) {
  const LibraryFp8Schedule& s =
      library_fp8_schedule(Fp8Library::torch_scaled_mm, false, G::block_1x128, G::block_1x128);
  const Fp8ScaledMatrix a = quantized(37, 300, G::block_1x128, 3), b = quantized(21, 300, G::block_1x128, 4);
  GemmOptions one, three;
  one.threads = 1;
  three.threads = 3;
  const std::vector<std::uint32_t> whole = library_fp8_gemm(s, a, b, 0, 37, 1, one);
  EXPECT_EQ(library_fp8_gemm(s, a, b, 0, 37, 1, three), whole);
  const std::vector<std::uint32_t> part = library_fp8_gemm(s, a, b, 5, 19, 1, three);
  EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + 5 * 21));
  const std::vector<std::uint32_t> exact = exact_fp8_scaled_gemm(a, b, 0, 37, one);
  EXPECT_EQ(exact_fp8_scaled_gemm(a, b, 0, 37, three), exact);
  const std::vector<std::uint32_t> exact_part = exact_fp8_scaled_gemm(a, b, 5, 19, three);
  EXPECT_TRUE(std::equal(exact_part.begin(), exact_part.end(), exact.begin() + 5 * 21));
}

// The oracle: every product term by term in one ExactSum. An element is s * 2^e with s an
// integer of at most 4 bits, a positive fp32 scale t * 2^f with t of at most 24.
void significand(double v, std::uint64_t& s, int& e) {
  if (v == 0.0) {
    s = 0, e = 0;
    return;
  }
  e = std::ilogb(v) - 30;
  s = static_cast<std::uint64_t>(std::ldexp(std::fabs(v), -e));
  EXPECT_EQ(std::ldexp(static_cast<double>(s), e), std::fabs(v));
}

std::uint32_t oracle(const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b, std::int64_t i, std::int64_t j) {
  reference::ExactSum sum;
  for (std::int64_t k = 0; k < a.k; ++k) {
    const double x = to_double(a.element, a.codes[static_cast<std::size_t>(i * a.k + k)]);
    const double y = to_double(b.element, b.codes[static_cast<std::size_t>(j * b.k + k)]);
    std::uint64_t sx, sy, tx, ty;
    int ex, ey, fx, fy;
    significand(x, sx, ex);
    significand(y, sy, ey);
    significand(a.scale(i, k / 128), tx, fx);
    significand(b.scale(j, k / 128), ty, fy);
    sum.add_product(std::signbit(x) != std::signbit(y), sx * tx, sy * ty, ex + ey + fx + fy);
  }
  return static_cast<std::uint32_t>(sum.round_to(reference::DType::float32));
}

// The GEMM paths this CPU runs: reference (every output summed exactly), portable (the certified
// double sums one output at a time) and, where present, avx2 and avx512 (8 outputs per vector).
std::vector<GemmPath> paths() {
  std::vector<GemmPath> p;
  for (GemmPath x : {GemmPath::reference, GemmPath::portable, GemmPath::avx2, GemmPath::avx512})
    if (gemm_path_available(x)) p.push_back(x);
  return p;
}

// Checks every output against the oracle on `path`; returns where the outputs were summed:
// certified = the double-length sum with its error bound, exact = the 256-bit fixed point (or no
// nonzero block sum), reference_outputs = ExactSum.
GemmPathStats expect_exact(const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b, GemmPath path = GemmPath::automatic) {
  SCOPED_TRACE(std::string("path ") + std::string(to_string(path)));
  GemmPathStats stats;
  GemmOptions o;
  o.stats = &stats;
  o.path = path;
  const std::vector<std::uint32_t> d = exact_fp8_scaled_gemm(a, b, 0, a.rows, o);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < b.rows; ++j)
      EXPECT_EQ(d[static_cast<std::size_t>(i * b.rows + j)], oracle(a, b, i, j))
          << "output (" << i << ", " << j << ")";
  EXPECT_EQ(stats.certified + stats.exact + stats.reference_outputs, static_cast<std::uint64_t>(a.rows * b.rows));
  EXPECT_EQ(stats.truncating, 0u) << "an exact sum truncates nothing";
  EXPECT_EQ(stats.special, 0u);
  EXPECT_EQ(stats.fp16, 0u) << "no fp16 form in an exact sum";
  if (path == GemmPath::reference) {
    EXPECT_EQ(stats.certified, 0u) << "the reference path sums every output exactly";
  }
  return stats;
}

// Random finite codes (NaN and Inf codes redrawn) and random positive scales.
Fp8ScaledMatrix random_codes(std::int64_t rows, std::int64_t k, G g, Format f, std::uint64_t seed) {
  Fp8ScaledMatrix m = quantized(rows, k, g, seed);
  m.element = f;
  std::mt19937_64 rng(seed * 7 + 1);
  for (std::uint8_t& c : m.codes) {
    do c = static_cast<std::uint8_t>(rng());
    while (!std::isfinite(to_double(f, c)));
  }
  std::uniform_int_distribution<int> exponent(-40, 40);
  std::uniform_real_distribution<float> unit(1.0f, 2.0f);
  for (float& s : m.scales) s = std::ldexp(unit(rng), exponent(rng));
  return m;
}

TEST(LibraryFp8, ExactEqualsATermByTermExactSum) {
  const Format e4m3 = Format::float8_e4m3fn, e5m2 = Format::float8_e5m2;
  // e4m3 x e4m3 sums blocks in double, a mix in int64, e5m2 x e5m2 in 128 bits.
  for (const auto& [fa, fb] :
       {std::pair{e4m3, e4m3}, std::pair{e4m3, e5m2}, std::pair{e5m2, e4m3}, std::pair{e5m2, e5m2}}) {
    SCOPED_TRACE(std::to_string(static_cast<int>(fa)) + " x " + std::to_string(static_cast<int>(fb)));
    // Scales 2^-40..2^41 per block: terms up to 2^160 apart, beyond the fixed point's 2^64.
    const Fp8ScaledMatrix spread_a = random_codes(9, 700, G::block_1x128, fa, 5),
                          spread_b = random_codes(20, 700, G::block_128x128, fb, 6);
    const Fp8ScaledMatrix one_a = random_codes(5, 130, G::row, fa, 7), one_b = random_codes(17, 130, G::tensor, fb, 8);
    for (GemmPath path : paths()) {
      const GemmPathStats spread = expect_exact(spread_a, spread_b, path);
      const GemmPathStats one_scale = expect_exact(one_a, one_b, path);
      if (fa == e5m2 && fb == e5m2) {  // block sums up to 2^71: always ExactSum
        EXPECT_EQ(spread.exact + one_scale.exact + spread.certified + one_scale.certified, 0u);
      } else if (path != GemmPath::reference) {  // block sums below 2^53 here
        EXPECT_EQ(spread.certified, 180u) << "every output's rounding proved in double";
        EXPECT_EQ(one_scale.certified, 85u);
      } else {
        EXPECT_GT(spread.reference_outputs, 0u);
        EXPECT_GT(spread.exact, 0u);
        EXPECT_EQ(one_scale.reference_outputs, 0u)
            << "one scale pair per output: every term shares its exponent";
      }
    }
  }
  // Quantized data (cancellation near zero) and the largest codes (block sums near their bounds).
  const Fp8ScaledMatrix qa = quantized(6, 1000, G::block_1x128, 9), qb = quantized(33, 1000, G::block_128x128, 10);
  for (GemmPath path : paths()) EXPECT_EQ(expect_exact(qa, qb, path).reference_outputs, 0u);
  Fp8ScaledMatrix big_a = random_codes(3, 256, G::block_1x128, e5m2, 11),
                  big_b = random_codes(4, 256, G::tensor, e5m2, 12);
  std::fill(big_a.codes.begin(), big_a.codes.end(), 0x7B);  // 57344
  std::fill(big_b.codes.begin(), big_b.codes.begin() + 256, 0x7B);
  std::fill(big_b.codes.begin() + 256, big_b.codes.begin() + 512, 0xFB);
  expect_exact(big_a, big_b);
  // e4m3 x e5m2 block sums from 2^53 are not all exact doubles: those outputs keep the exact route
  // on every path. Row 0 (448 everywhere) meets columns 0 and 1 (+-57344) in block sums of
  // 49 * 2^51 units of 2^-25; the random columns 2 and 3 and row 1 (1s) certify.
  Fp8ScaledMatrix wide_a = random_codes(2, 256, G::row, e4m3, 13);
  std::fill(wide_a.codes.begin(), wide_a.codes.begin() + 256, 0x7E);  // 448
  std::fill(wide_a.codes.begin() + 256, wide_a.codes.end(), 0x38);    // 1
  for (GemmPath path : paths()) {
    const GemmPathStats stats = expect_exact(wide_a, big_b, path);
    EXPECT_EQ(stats.certified, path == GemmPath::reference ? 0u : 6u) << to_string(path);
  }
  // One such sum that a double cannot hold: 127 x (448 x 57344) + 2^-9 x 2^-16 = 6223 * 2^44 + 1
  // units of 2^-25 in block 0, and 1 x 128 = 2^32 units in block 1: 6223 * 2^19 + 2^7 + 2^-25,
  // just above the midpoint of two f32 (their spacing is 2^8 here), so up; the block sum as a
  // double (the + 1 gone) would make it the midpoint itself, and round it to even, down.
  Fp8ScaledMatrix one_a = random_codes(1, 256, G::row, e4m3, 14), one_b = random_codes(1, 256, G::row, e5m2, 15);
  std::fill(one_a.codes.begin(), one_a.codes.end(), 0x00);
  std::fill(one_b.codes.begin(), one_b.codes.end(), 0x00);
  one_a.scales = {1.0f};
  one_b.scales = {1.0f};
  std::fill_n(one_a.codes.begin(), 127, 0x7E);       // 448
  std::fill_n(one_b.codes.begin(), 127, 0x7B);       // 57344
  one_a.codes[127] = 0x01, one_b.codes[127] = 0x01;  // 2^-9 x 2^-16
  one_a.codes[128] = 0x38, one_b.codes[128] = 0x58;  // 1 x 128
  // And one whose blocks cancel: block 1 is minus block 0's large part, so the output is the lost
  // unit, 2^-25, where the block sums as doubles would give a proved +0.
  Fp8ScaledMatrix two_a = one_a, two_b = one_b;
  std::fill_n(two_a.codes.begin() + 128, 127, 0x7E);
  std::fill_n(two_b.codes.begin() + 128, 127, 0xFB);  // -57344
  const float up = std::ldexp(6223.0f, 19) + 256.0f, lost_unit = std::ldexp(1.0f, -25);
  for (GemmPath path : paths()) {
    GemmOptions o;
    o.path = path;
    EXPECT_EQ(exact_fp8_scaled_gemm(one_a, one_b, 0, 1, o), std::vector<std::uint32_t>{std::bit_cast<std::uint32_t>(up)})
        << to_string(path);
    EXPECT_EQ(exact_fp8_scaled_gemm(two_a, two_b, 0, 1, o),
              std::vector<std::uint32_t>{std::bit_cast<std::uint32_t>(lost_unit)})
        << to_string(path);
    EXPECT_EQ(expect_exact(one_a, one_b, path).certified, 0u) << to_string(path);
    EXPECT_EQ(expect_exact(two_a, two_b, path).certified, 0u) << to_string(path);
  }
}

TEST(LibraryFp8, ExactZeroSignsOverflowAndSubnormalScales) {
  Fp8ScaledMatrix a = random_codes(4, 256, G::row, Format::float8_e4m3fn, 13);
  Fp8ScaledMatrix b = random_codes(3, 256, G::row, Format::float8_e4m3fn, 14);
  std::fill(a.codes.begin(), a.codes.begin() + 256, 0x80);        // row 0: every element -0
  std::fill(b.codes.begin(), b.codes.begin() + 256, 0x38);        // column 0: every element +1
  std::fill(b.codes.begin() + 256, b.codes.begin() + 512, 0x00);  // column 1: +0
  for (std::int64_t k = 0; k < 256; ++k) {                        // row 1: +2 and -2 alternate
    a.codes[static_cast<std::size_t>(256 + k)] = k % 2 ? 0xC0 : 0x40;
  }
  std::fill(a.codes.begin() + 512, a.codes.begin() + 768, 0x48);  // row 2: every element 4, scale 3e38
  a.scales[2] = 3e38f;
  b.scales[0] = 1.0f;
  b.scales[2] = 1e-40f;  // column 2's scale is an fp32 subnormal
  const std::vector<std::uint32_t> d = exact_fp8_scaled_gemm(a, b, 0, 4);
  EXPECT_EQ(d[0 * 3 + 0], 0x80000000u) << "-0 x +1 every k: every product -0";
  EXPECT_EQ(d[0 * 3 + 1], 0x80000000u) << "-0 x +0: every product -0";
  EXPECT_EQ(d[1 * 3 + 0], 0x00000000u) << "+2 - 2 + 2 ...: an exact zero of nonzero terms is +0";
  EXPECT_EQ(d[1 * 3 + 1], 0x00000000u) << "+-2 x +0: mixed zero signs";
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(d[static_cast<std::size_t>(i * 3 + j)], oracle(a, b, i, j)) << i << ", " << j;
  EXPECT_EQ(d[2 * 3 + 0] & 0x7FFFFFFFu, 0x7F800000u) << "row 2 x column 0 overflows to Inf";
}

// Rows (or columns) of e4m3 codes, the rest of K = 128 zeros, one tensor scale.
Fp8ScaledMatrix crafted(const std::vector<std::vector<std::uint8_t>>& rows, float scale) {
  Fp8ScaledMatrix m;
  m.granularity = G::tensor;
  m.rows = static_cast<std::int64_t>(rows.size());
  m.k = 128;
  m.codes.assign(static_cast<std::size_t>(m.rows * m.k), 0);
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy(rows[r].begin(), rows[r].end(), m.codes.begin() + static_cast<std::ptrdiff_t>(r * 128));
  m.scales = {scale};
  return m;
}

TEST(LibraryFp8, ExactRoundsTiesSubnormalsAndOverflowInTheFixedPoint) {
  // One scale pair per output, so every output takes the 256-bit fixed point; e4m3 codes: 0x58 = 16,
  // 0x50 = 8,
  // 0x38 = 1, 0x30 = 0.5, 0x34 = 0.75, 0x01 = 2^-9, 0x02 = 2^-8, 0x03 = 3 * 2^-9, 0x7E = 448, sign bit 0x80.
  struct Case {
    const char* what;
    std::vector<std::vector<std::uint8_t>> a, b;
    float sa, sb;
    std::vector<std::uint32_t> want;  // row-major
  };
  const Case cases[] = {
      {"ties: 64 + 2^-18 (half an ulp) down to even, 64 + 3 * 2^-18 (1.5 ulps) up to even, negated",
       {{0x50, 0x01}},
       {{0x50, 0x01}, {0x50, 0x03}, {0xD0, 0x81}},
       1.0f,
       1.0f,
       {0x42800000u, 0x42800002u, 0xC2800000u}},
      {"128 - 2^-18, half an ulp below 128: the carry into an odd biased exponent (133)",
       {{0x58, 0x01}},
       {{0x58, 0x82}},
       1.0f,
       0.5f,
       {0x43000000u}},
      {"64 - 2^-19, half an ulp below 64: up to even, into the next binade",
       {{0x58, 0x01}},
       {{0x58, 0x82}},
       0.5f,
       0.5f,
       {0x42800000u}},
      {"subnormal outputs: 2^-149, half of it to +0, -0.75 of it to -2^-149, -half to -0",
       {{0x01}},
       {{0x38}, {0x30}, {0xB4}, {0xB0}},
       std::ldexp(1.0f, -100),
       std::ldexp(1.0f, -40),
       {0x00000001u, 0x00000000u, 0x80000001u, 0x80000000u}},
      {"a subnormal scale 2^-149 times 2^48: 2^-119, a sum whose 24 bits are all on the f32 grid (no rounding "
       "step), its negation, and 3 * 2^-119 (25 bits)",
       {{0x01}},
       {{0x01}, {0x81}, {0x03}},
       std::ldexp(1.0f, -149),
       std::ldexp(1.0f, 48),
       {0x04000000u, 0x84000000u, 0x04C00000u}},
      {"overflow: 448^2 * 2^130 and its negation",
       {{0x7E}},
       {{0x7E}, {0xFE}},
       std::ldexp(1.0f, 100),
       std::ldexp(1.0f, 30),
       {0x7F800000u, 0xFF800000u}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Fp8ScaledMatrix a = crafted(c.a, c.sa), b = crafted(c.b, c.sb);
    const GemmPathStats stats = expect_exact(a, b, GemmPath::reference);
    EXPECT_EQ(stats.reference_outputs, 0u) << "every output in the fixed point";
    for (GemmPath path : paths()) {
      GemmOptions o;
      o.path = path;
      EXPECT_EQ(exact_fp8_scaled_gemm(a, b, 0, a.rows, o), c.want) << to_string(path);
    }
  }
}

// The fixed point's rounding reads sticky bits up to 142 places below the rounding point, past the
// low 128-bit word. A (e4m3) meets B (e5m2) in two 128-element blocks; block 0 is the same in every
// output: 126 x (448 x 57344) + 1 x 128 = 6174 * 2^44 + 2^32 units of 2^-25, so 6174 * 2^19 + 2^7,
// the midpoint of two f32 2^8 apart. Block 1's scale (row 0: 2^-64, row 1: 2^-50) sets the fixed
// point's anchor 64 or 50 places below block 0, so that the rounding point is bit 142 or bit 128 of
// the 256. Each column adds one tie-breaker: 2^-5 x (+-1) in block 0 (2^20 units: bit 130 of row 0,
// with nothing in the low word, and bit 116 of row 1), or 2^-9 x (+-2^-16) in block 1 (1 unit,
// times 2^-64 or 2^-50: bit 46), or none (the tie goes to even: 6174 * 2^11 is even, so down).
TEST(LibraryFp8, ExactFixedPointSeesStickyBitsFarBelowTheRoundingPoint) {
  struct Column {
    const char* what;
    std::uint8_t b_in_block0, b_in_block1;  // e5m2 codes of B at k = 127 and k = 128
    bool up;
  };
  const Column columns[] = {
      {"+1 unit in block 1, far below: up", 0x00, 0x01, true},
      {"-1 unit in block 1: down", 0x00, 0x81, false},
      {"+2^20 units in block 0: up", 0x3C, 0x00, true},
      {"-2^20 units in block 0: down", 0xBC, 0x00, false},
      {"no tie-breaker: the midpoint itself, to even (down)", 0x00, 0x00, false},
  };
  Fp8ScaledMatrix a;
  a.granularity = G::block_1x128;
  a.rows = 2;
  a.k = 256;
  a.codes.assign(512, 0);
  a.scales = {1.0f, std::ldexp(1.0f, -64), 1.0f, std::ldexp(1.0f, -50)};
  for (std::size_t r = 0; r < 2; ++r) {
    std::fill_n(a.codes.begin() + static_cast<std::ptrdiff_t>(r * 256), 126, 0x7E);  // 448
    a.codes[r * 256 + 126] = 0x38;                                                   // 1
    a.codes[r * 256 + 127] = 0x10;                                                   // 2^-5
    a.codes[r * 256 + 128] = 0x01;                                                   // 2^-9
  }
  Fp8ScaledMatrix b;
  b.granularity = G::block_1x128;
  b.element = Format::float8_e5m2;
  b.rows = static_cast<std::int64_t>(std::size(columns));
  b.k = 256;
  b.codes.assign(static_cast<std::size_t>(b.rows * 256), 0);
  b.scales.assign(static_cast<std::size_t>(b.rows * 2), 1.0f);
  for (std::size_t j = 0; j < std::size(columns); ++j) {
    std::fill_n(b.codes.begin() + static_cast<std::ptrdiff_t>(j * 256), 126, 0x7B);  // 57344
    b.codes[j * 256 + 126] = 0x58;                                                   // 128
    b.codes[j * 256 + 127] = columns[j].b_in_block0;
    b.codes[j * 256 + 128] = columns[j].b_in_block1;
  }
  const float down = std::ldexp(6174.0f, 19), up = down + 256.0f;
  for (GemmPath path : paths()) {
    SCOPED_TRACE(to_string(path));
    const GemmPathStats stats = expect_exact(a, b, path);
    EXPECT_EQ(stats.reference_outputs, 0u) << "every output's terms lie within 64 places: the fixed point";
    GemmOptions o;
    o.path = path;
    const std::vector<std::uint32_t> d = exact_fp8_scaled_gemm(a, b, 0, 2, o);
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t j = 0; j < std::size(columns); ++j)
        EXPECT_EQ(d[r * std::size(columns) + j], std::bit_cast<std::uint32_t>(columns[j].up ? up : down))
            << "row " << r << ": " << columns[j].what;
  }
}

// The certified double sums keep an output only where their error bound proves its rounding. Each
// column of B meets A's one row in three 128-element blocks, 1 x 1 per block, so that the output is
// sa_0 sb_0 + sa_1 sb_1 + sa_2 sb_2 (1x128 scales on both sides); e4m3 0x38 = 1.
TEST(LibraryFp8, CertifiedSumsLeaveWhatTheyCannotProveToTheExactRoute) {
  struct Column {
    const char* what;
    float sb[3];
    std::uint32_t want;
    bool certified;  // on the paths that certify
  };
  const float t24 = std::ldexp(1.0f, -24), t100 = std::ldexp(1.0f, -100);
  const Column columns[] = {
      {"1 + 2^-24 + 2^-100: just above a midpoint, which the double-length sum (1 + 2^-24) cannot see",
       {1.0f, t24, t100}, 0x3F800001u, false},
      {"1 + 2^-24 - 2^-100: just below it", {1.0f, t24, -t100}, 0x3F800000u, false},
      {"1 + 2^-24 exactly, a tie (to even)", {1.0f, t24, 0.0f}, 0x3F800000u, false},
      {"1 + 2^-23 + 2^-100: far from any midpoint", {1.0f, 2 * t24, t100}, 0x3F800001u, true},
      {"1 - 1 + 2^-100: cancellation, 2^-100 left", {1.0f, -1.0f, t100}, 0x0D800000u, true},
      {"1 - 1: an exact zero of nonzero terms is +0 (every transform exact: E = 0 proves it)", {1.0f, -1.0f, 0.0f},
       0x00000000u, true},
      {"0 + 0 + 0: no nonzero term, whose zero's sign the exact route decides", {0.0f, 0.0f, 0.0f}, 0x00000000u,
       false},
      {"every element of the column -0, so every product -0: -0 (IEEE 754 section 6.3)", {-0.0f, -0.0f, -0.0f},
       0x80000000u, false},
  };
  Fp8ScaledMatrix a;
  a.granularity = G::block_1x128;
  a.rows = 1;
  a.k = 384;
  a.codes.assign(384, 0);
  a.scales = {1.0f, 1.0f, 1.0f};
  Fp8ScaledMatrix b = a;
  b.rows = static_cast<std::int64_t>(std::size(columns));
  b.codes.assign(static_cast<std::size_t>(b.rows * 384), 0);
  b.scales.assign(static_cast<std::size_t>(b.rows * 3), 1.0f);
  for (std::size_t q = 0; q < 3; ++q) a.codes[q * 128] = 0x38;
  for (std::size_t j = 0; j < std::size(columns); ++j) {
    if (std::signbit(columns[j].sb[0])) std::fill_n(b.codes.begin() + static_cast<std::ptrdiff_t>(j * 384), 384, 0x80);
    for (std::size_t q = 0; q < 3; ++q) {
      // A negative or zero factor goes into the element (the scales are positive).
      const float f = columns[j].sb[q];
      b.codes[j * 384 + q * 128] = f == 0.0f ? (std::signbit(f) ? 0x80 : 0x00) : (f < 0 ? 0xB8 : 0x38);
      b.scales[j * 3 + q] = f == 0.0f ? 1.0f : std::fabs(f);
    }
  }
  for (GemmPath path : paths()) {
    SCOPED_TRACE(to_string(path));
    GemmPathStats stats;
    GemmOptions o;
    o.path = path;
    o.stats = &stats;
    const std::vector<std::uint32_t> d = exact_fp8_scaled_gemm(a, b, 0, 1, o);
    std::uint64_t certified = 0;
    for (std::size_t j = 0; j < std::size(columns); ++j) {
      EXPECT_EQ(d[j], columns[j].want) << columns[j].what;
      EXPECT_EQ(d[j], oracle(a, b, 0, static_cast<std::int64_t>(j))) << columns[j].what;
      certified += columns[j].certified && path != GemmPath::reference;
    }
    EXPECT_EQ(stats.certified, certified);
  }
}

TEST(LibraryFp8, BadCallsNameTheRule) {
  EXPECT_NE(invalid_argument_message([] {
              library_fp8_schedule(Fp8Library::torch_scaled_mm, true, G::row, G::row);
            }).find("measured: tensor x tensor"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] {
              library_fp8_schedule(Fp8Library::cublaslt, true, G::block_1x128, G::block_1x128);
            }).find("was not measured"),
            std::string::npos);
  const LibraryFp8Schedule& tensor = library_fp8_schedule(Fp8Library::cublaslt, false, G::tensor, G::tensor);
  const Fp8ScaledMatrix t = quantized(8, 256, G::tensor, 1), rb = quantized(8, 256, G::block_1x128, 2);
  EXPECT_NE(
      invalid_argument_message([&] { library_fp8_gemm(tensor, t, rb, 0, 8); }).find("takes A scaled tensor and B tensor"),
      std::string::npos);
  const Fp8ScaledMatrix short_k = quantized(8, 128, G::tensor, 3);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, t, short_k, 0, 8); }).find("K = 128"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, t, t, 3, 3); }).find("nonempty range"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, t, t, 0, 9); }).find("nonempty range"), std::string::npos);
  Fp8ScaledMatrix e5 = quantize_fp8_scaled(data(8 * 256, 4), 8, 256, KAxis::last, Format::float8_e5m2,
                                           G::tensor, Fp8ScaleRecipe::torchao);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, e5, e5, 0, 8); }).find("e5m2 x e5m2"), std::string::npos);
  Fp8ScaledMatrix bad = t;
  bad.scales[0] = -1.0f;
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, bad, t, 0, 8); }).find("positive finite"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, t, t, 0, 8, 0); }).find("split_k must be >= 1, got 0"),
            std::string::npos);
  const LibraryFp8Schedule& rowwise =
      library_fp8_schedule(Fp8Library::torch_scaled_mm, false, G::row, G::row);
  const Fp8ScaledMatrix r = quantized(8, 256, G::row, 5);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(rowwise, r, r, 0, 8, 2); }).find("never seen splitting K"),
            std::string::npos);
  bad.scales.push_back(1.0f);
  EXPECT_NE(invalid_argument_message([&] { exact_fp8_scaled_gemm(bad, t, 0, 8); }).find("needs 1 scales, has 2"),
            std::string::npos);
  Fp8ScaledMatrix nan = t;
  nan.codes[17] = 0x7F;
  EXPECT_NE(invalid_argument_message([&] { exact_fp8_scaled_gemm(nan, t, 0, 8); }).find("NaN or Inf code at element 17"),
            std::string::npos);
}

// From an audit of the API (2026-11-30): inconsistent structs and unbounded counts are refused by
// name (they overflowed the size check, crashed, dropped the scales, or ran out of memory).
TEST(LibraryFp8, InconsistentMatricesSchedulesAndCountsAreRefused) {
  const LibraryFp8Schedule& tensor = library_fp8_schedule(Fp8Library::cublaslt, false, G::tensor, G::tensor);
  const Fp8ScaledMatrix t = quantized(4, 128, G::tensor, 1);
  // rows x k wraps to the codes' size: 2^62 + 1 rows of 4 codes.
  Fp8ScaledMatrix wrapped = t, b4 = t;
  wrapped.rows = (std::int64_t{1} << 62) + 1;
  wrapped.k = 4;
  wrapped.codes.resize(4);
  b4.k = 4;
  b4.codes.resize(16);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, wrapped, b4, 0, 1); }).find("do not match its shape"),
            std::string::npos);
  Fp8ScaledMatrix huge_k = t;
  huge_k.granularity = G::block_1x128;
  huge_k.k = INT64_MAX;
  EXPECT_EQ(huge_k.k_blocks(), INT64_MAX / 128 + 1);  // no k + 127 overflow
  // A schedule built by the caller is checked field by field.
  LibraryFp8Schedule s = library_fp8_schedule(Fp8Library::cublaslt, false, G::block_1x128, G::block_128x128);
  const Fp8ScaledMatrix a = quantized(4, 256, G::block_1x128, 2), b = quantized(4, 256, G::block_128x128, 3);
  for (const auto& [change, rule] : std::vector<std::pair<std::function<void(LibraryFp8Schedule&)>, std::string>>{
           {[](LibraryFp8Schedule& x) { x.promotion_interval = -1; }, "promotion_interval must be 0"},
           {[](LibraryFp8Schedule& x) { x.promotion_interval = 0; }, "promotion_fma scales need promotions"},
           {[](LibraryFp8Schedule& x) { x.scales = static_cast<Fp8ScaleStage>(9); }, "unknown scale stage"},
           {[](LibraryFp8Schedule& x) { x.a = static_cast<G>(9); }, "a granularity is not one of"},
           {[](LibraryFp8Schedule& x) { x.promotion_fma = static_cast<PromotionFma>(9); }, "unknown promotion FMA order"},
           {[](LibraryFp8Schedule& x) { x.library = static_cast<Fp8Library>(9); }, "unknown library"},
           {[](LibraryFp8Schedule& x) { x.evidence = nullptr; }, "evidence is required"}}) {
    LibraryFp8Schedule bad = s;
    change(bad);
    EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(bad, a, b, 0, 4); }).find(rule), std::string::npos) << rule;
    EXPECT_NE(invalid_argument_message([&] { (void)bad.definition(); }).find(rule), std::string::npos) << rule;
  }
  // An operand whose granularity is outside the enum.
  Fp8ScaledMatrix odd_granularity = a;
  odd_granularity.granularity = static_cast<G>(7);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(s, odd_granularity, b, 0, 4); })
                .find("A's granularity is not one of tensor, row, 1x128, 128x128"),
            std::string::npos);
  // A prepared B whose matrix changed shape since.
  Fp8ScaledMatrix changing = t;
  const ExactFp8ScaledB prepared(changing, Format::float8_e4m3fn);
  changing = quantized(200, 128, G::tensor, 4);
  EXPECT_NE(invalid_argument_message([&] { exact_fp8_scaled_gemm(t, prepared, 0, 4); }).find("changed after it was prepared"),
            std::string::npos);
  // Counts with no bound: split-K slices (a buffer each) and threads (OpenMP starts them all).
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, t, t, 0, 4, kMaxSplitK + 1); })
                .find("split_k must be at most " + std::to_string(kMaxSplitK)),
            std::string::npos);
  GemmOptions many;
  many.threads = kMaxThreads + 1;
  EXPECT_NE(invalid_argument_message([&] { exact_fp8_scaled_gemm(t, t, 0, 4, many); }).find("1 to 4096"),
            std::string::npos);
  GemmOptions negative;
  negative.threads = -7;  // ran with the OpenMP default before
  EXPECT_NE(invalid_argument_message([&] { exact_fp8_scaled_gemm(t, t, 0, 4, negative); })
                .find("GemmOptions::threads = -7"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, t, t, 0, 4, 1, negative); })
                .find("GemmOptions::threads = -7"),
            std::string::npos);
  GemmOptions bad_path;
  bad_path.path = static_cast<GemmPath>(9);
  EXPECT_NE(invalid_argument_message([&] { library_fp8_gemm(tensor, t, t, 0, 4, 1, bad_path); }).find("GemmOptions::path"),
            std::string::npos);
  // The largest interval is INT_MAX / 32 (K positions are int), and the message says so.
  LibraryFp8Schedule long_interval = s;
  long_interval.promotion_interval = 1 << 26;
  EXPECT_NE(invalid_argument_message([&] { long_interval.validate(); }).find("2^26 - 1, got 67108864"), std::string::npos);
}

// From an audit (2026-11-30, sixty-fifth session): values outside an enum were refused, but the
// refusals named them by reading the format table past its end (UBSan: index 200 out of bounds;
// a Release build named whatever it read), and recorded_split_k answered an unknown library as
// cuBLASLt.
TEST(LibraryFp8, ValuesOutsideTheEnumsAreRefusedByNumber) {
  const Format unknown = static_cast<Format>(200);
  EXPECT_EQ(to_string(unknown), "an unknown format (200)");
  EXPECT_EQ(to_string(static_cast<Fp8Library>(7)), "an unknown library");
  std::vector<std::uint32_t> d{0x3F800000u, 0x40000000u};
  const std::vector<std::uint32_t> bias{0, 0};
  EXPECT_NE(invalid_argument_message([&] { round_d(d, unknown); }).find("D's dtype is an unknown format (200)"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { add_bias(d, 2, bias, unknown); }).find("an unknown format (200)"),
            std::string::npos);
  const LibraryFp8Schedule s = library_fp8_schedule(Fp8Library::cublaslt, false, G::tensor, G::tensor);
  const Fp8ScaledMatrix a = quantized(4, 64, G::tensor, 2), b = quantized(4, 64, G::tensor, 3);
  const std::vector<std::uint32_t> bias_words(4, 0u), c_words(16, 0u);
  for (const int field : {0, 1, 2}) {
    CublasLtEpilogue e;
    e.bias = bias_words;
    (field == 0 ? e.d_format : field == 1 ? e.c_format : e.bias_format) = unknown;
    if (field == 1) {
      e.beta = 1.0f;
      e.c = c_words;
    }
    EXPECT_NE(invalid_argument_message([&] { (void)cublaslt_fp8_gemm(s, a, b, 0, 4, 1, e); }).find("an unknown format (200)"),
              std::string::npos)
        << field;
    EXPECT_NE(invalid_argument_message([&] { (void)cublaslt_epilogue_definition(s, 1, e); }).find("an unknown format (200)"),
              std::string::npos)
        << field;
  }
  const Format e4m3 = Format::float8_e4m3fn;
  EXPECT_NE(invalid_argument_message([&] {
              (void)recorded_split_k(Fp8Library::cublaslt, false, G::tensor, G::tensor, unknown, e4m3, 64, 128, 16384, {});
            }).find("not an unknown format (200)"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] {
              (void)recorded_split_k(static_cast<Fp8Library>(7), false, G::tensor, G::tensor, e4m3, e4m3, 64, 128, 16384, {});
            }).find("the library is cublaslt or torch_scaled_mm, got 7"),
            std::string::npos);
}

}  // namespace
}  // namespace blockscale::emulator
