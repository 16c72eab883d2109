// SPDX-License-Identifier: Apache-2.0
// The conformance harness against the emulator itself: what CI can check without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <span>
#include <tuple>
#include <utility>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <limits>
#include <locale>
#include <map>
#include <memory>
#include <string>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "blockscale/golden/file.h"
#include "blockscale/golden/operation.h"
#include "blockscale/golden/verify.h"
#include "blockscale/harness.h"
#include "expect_throw.h"
#include "fp_mode.h"

namespace blockscale::harness {
namespace {

TEST(HarnessCompare, UlpDistance) {
  const auto f = [](float x) { return std::bit_cast<std::uint32_t>(x); };
  EXPECT_EQ(ulp_distance(OutputFormat::f32, f(1.0f), f(std::nextafter(1.0f, 2.0f))), 1u);
  EXPECT_EQ(ulp_distance(OutputFormat::f32, 0x00000000u, 0x80000000u), 0u);
  EXPECT_EQ(ulp_distance(OutputFormat::f32, 0x00000001u, 0x80000001u), 2u);
  EXPECT_FALSE(ulp_distance(OutputFormat::f32, 0x7FFFFFFFu, f(1.0f)).has_value());
  EXPECT_EQ(ulp_distance(OutputFormat::f32, 0x7FFFFFFFu, 0x7FC00000u), 0u);
  EXPECT_EQ(ulp_distance(OutputFormat::f16, 0x3C00u, 0x3C02u), 2u);
  EXPECT_EQ(ulp_distance(OutputFormat::bf16, 0x7F80u, 0x7F7Fu), 1u);  // Inf is one above the largest value
}

TEST(HarnessCompare, CountsAndExamples) {
  std::vector<std::uint32_t> dev(2 * 3 * 4, 0x3F800000u), model = dev;
  dev[13] = 0x3F800001u;  // case 1, row 0, col 1
  dev[22] = 0x7FFFFFFFu;  // case 1, row 2, col 2
  Stats s;
  compare_outputs(OutputFormat::f32, dev, model, 10, 3, 4, s, 8);
  EXPECT_EQ(s.cases, 2u);
  EXPECT_EQ(s.outputs, 24u);
  EXPECT_EQ(s.mismatches, 2u);
  EXPECT_EQ(s.nan_mismatches, 1u);
  EXPECT_EQ(s.worst_ulps, 1u);
  ASSERT_EQ(s.examples.size(), 2u);
  EXPECT_EQ(s.examples[0].case_index, 11u);
  EXPECT_EQ(s.examples[0].row, 0u);
  EXPECT_EQ(s.examples[0].col, 1u);
  EXPECT_EQ(s.examples[1].row, 2u);
  EXPECT_EQ(s.examples[1].col, 2u);
}

TEST(HarnessProbes, ExactCodesAndProducts) {
  EXPECT_EQ(exact_code(Format::float8_e4m3fn, 448.0), 0x7Eu);
  EXPECT_FALSE(exact_code(Format::float8_e4m3fn, 449.0));
  EXPECT_FALSE(exact_code(Format::float8_e4m3fn, 512.0));
  EXPECT_EQ(exact_code(Format::float8_e4m3fn, -0.0), 0x80u);
  EXPECT_EQ(exact_code(Format::tfloat32, 1.0 + std::ldexp(1.0, -10)), 0x3F802000u);
  EXPECT_FALSE(exact_code(Format::tfloat32, 1.0 + std::ldexp(1.0, -11)));
  for (int e = -18; e <= 16; ++e) {
    const auto p = product_codes(Format::float8_e4m3fn, Format::float8_e4m3fn, -std::ldexp(1.0, e));
    ASSERT_TRUE(p) << "2^" << e;
    EXPECT_EQ(to_double(Format::float8_e4m3fn, p->first) * to_double(Format::float8_e4m3fn, p->second),
              -std::ldexp(1.0, e));
  }
  EXPECT_FALSE(product_codes(Format::float8_e4m3fn, Format::float8_e4m3fn, std::ldexp(1.0, -19)));
  EXPECT_FALSE(product_codes(Format::float8_e4m3fn, Format::float8_e4m3fn, std::ldexp(1.0, 17)));
  EXPECT_TRUE(product_codes(Format::bfloat16, Format::bfloat16, std::ldexp(1.0, -150)));
}

// The caller's floating-point mode (round toward zero, subnormals flushed: fp_mode.h) changes no
// probe. The first probe set of the process is built under it (ctest runs each test alone), so the
// product candidates' process-wide cache is filled in that mode: subnormal candidates had been lost
// in exact_code's float round trip, for good.
TEST(HarnessProbes, TheCallersFloatingPointModeChangesNoProbe) {
  std::vector<std::pair<std::string, std::vector<DotCase>>> hostile;
  {
    const test::HostileFpMode mode;
    EXPECT_EQ(exact_code(Format::float32, std::ldexp(1.0, -140)), 0x00000200u);
    EXPECT_EQ(exact_code(Format::bfloat16, -std::ldexp(1.0, -133)), 0x8001u);
    EXPECT_TRUE(product_codes(Format::bfloat16, Format::bfloat16, std::ldexp(1.0, -150)));
    for (const Target& t : self_test_targets()) {
      if (t.kind != TargetKind::instruction || t.instruction.f64 || t.instruction.sparse) continue;
      hostile.emplace_back(t.name(), probe_set(t.instruction));
    }
  }
  std::size_t i = 0, probes = 0;
  for (const Target& t : self_test_targets()) {
    if (t.kind != TargetKind::instruction || t.instruction.f64 || t.instruction.sparse) continue;
    const std::vector<DotCase> want = probe_set(t.instruction);
    const std::vector<DotCase>& got = hostile[i++].second;
    ASSERT_EQ(got.size(), want.size()) << t.name();
    for (std::size_t j = 0; j < want.size(); ++j) {
      EXPECT_TRUE(got[j].a == want[j].a && got[j].b == want[j].b && got[j].c == want[j].c && got[j].sa == want[j].sa &&
                  got[j].sb == want[j].sb && got[j].label == want[j].label)
          << t.name() << ": " << want[j].label;
    }
    probes += want.size();
  }
  EXPECT_GT(probes, 0u);
}

TEST(HarnessProbes, ProbeSetsAreBuiltAndPacked) {
  for (const Target& t : self_test_targets()) {
    // The FDPA probes of numerics.md d.3; the f64 rows have their own (HarnessF64), the sparse forms
    // take their dense form's (HarnessSparse).
    if (t.kind != TargetKind::instruction || t.instruction.f64 || t.instruction.sparse) continue;
    const std::vector<DotCase> dots = probe_set(t.instruction);
    EXPECT_GT(dots.size(), 40u) << t.name();
    const TileBatch b = pack_dots(t.instruction, dots);
    const std::vector<std::uint32_t> d = emulate_tiles(t.instruction, b);
    const std::vector<std::uint32_t> diag = unpack_dots(t.instruction, d, dots.size());
    // Every probe's diagonal output is that probe's own dot product.
    for (std::size_t i = 0; i < dots.size(); i += 7) {
      std::vector<std::uint32_t> sa(dots[i].sa.begin(), dots[i].sa.end()), sb(dots[i].sb.begin(), dots[i].sb.end());
      EXPECT_EQ(diag[i], emulator::dot(t.instruction.model, dots[i].a, dots[i].b, dots[i].c, sa, sb))
          << t.name() << ": " << dots[i].label;
    }
  }
}

// The value of probe d's product in slot k: a_k b_k, times the block's two scales.
double probe_product(const InstructionTarget& t, const DotCase& d, int k) {
  const auto at = static_cast<std::size_t>(k);
  double v = to_double(t.a, from_storage(t.a, d.a[at])) * to_double(t.b, from_storage(t.b, d.b[at]));
  if (t.block_scaled) {
    const auto q = static_cast<std::size_t>(k / t.block);
    v *= to_double(t.scale, d.sa[q]) * to_double(t.scale, d.sb[q]);
  }
  return v;
}

// The probes of numerics.md d.3 hold the values that section gives them, whatever scaling the
// formats needed: the discovery reads hardware behaviour off them, and a self-test against the
// emulator passes with a weakened probe too (a mutation audit found that, docs/verification.md).
TEST(HarnessProbes, TheDocumentedProbesHoldTheirValues) {
  std::size_t checked = 0, with_table_8 = 0, with_c_max = 0;
  for (const Target& target : self_test_targets()) {
    const InstructionTarget& t = target.instruction;
    if (target.kind != TargetKind::instruction || t.f64 || t.sparse) continue;
    const emulator::FdpaParams& p = t.model.params();
    // The first fused step: every other pair of K for the fp8-via-f16 emulation (numerics.md b.9),
    // the first L products otherwise.
    std::vector<int> step;
    for (int k = 0; k < t.k; ++k) {
      if (p.algorithm == emulator::Algorithm::fp8_via_f16 ? k % 4 < 2 : k < p.L) step.push_back(k);
    }
    const int output_fraction_bits = t.acc == Format::float16 ? 10
                                     : p.rounding == emulator::OutputRounding::rz_e8m13 ? 13 : 23;
    const double c_max = t.acc == Format::float16 ? 65504.0 : static_cast<double>(std::numeric_limits<float>::max());
    const double c_ulp = t.acc == Format::float16 ? 32.0 : std::ldexp(1.0, 104);
    const double largest = to_double(t.a, max_finite_code(t.a)) * to_double(t.b, max_finite_code(t.b));
    std::map<std::string, int> seen;
    for (const DotCase& d : probe_set(t)) {
      std::vector<std::pair<int, double>> products;  // nonzero, in k order
      int negative_zeros = 0;
      for (int k = 0; k < t.k; ++k) {
        const double v = probe_product(t, d, k);
        if (v != 0) products.emplace_back(k, v);
        if (v == 0 && std::signbit(v)) ++negative_zeros;
      }
      const double c = acc_value(t.acc, d.c);
      const std::string where = t.name + ": " + d.label;
      if (d.label.starts_with("emulation probe")) {
        // C = 128 and 0.75 ulp of 128 in the output format, of either sign, in one product.
        ASSERT_EQ(products.size(), 1u) << where;
        EXPECT_EQ(std::fabs(products[0].second) / c, 0.75 * std::ldexp(1.0, -output_fraction_bits)) << where;
        ++seen[products[0].second > 0 ? "emulation +" : "emulation -"];
      } else if (d.label.starts_with("Table 8 vector")) {
        // c = 2^23, products -2^23, -1/2, -1/4, -1/8 in the first four slots of the step.
        ASSERT_EQ(products.size(), 4u) << where;
        const double want[4] = {-1.0, -std::ldexp(1.0, -24), -std::ldexp(1.0, -25), -std::ldexp(1.0, -26)};
        for (std::size_t i = 0; i < 4; ++i) {
          EXPECT_EQ(products[i].first, step[std::min<std::size_t>(i, step.size() - 1)]) << where;
          EXPECT_EQ(products[i].second / c, want[i]) << where << ", product " << i;
        }
        ++seen["Table 8"];
      } else if (d.label == "largest products, one sign") {
        // Every slot of the first step at the largest product, all of one sign.
        ASSERT_EQ(products.size(), step.size()) << where;
        for (std::size_t i = 0; i < step.size(); ++i) {
          EXPECT_EQ(products[i].first, step[i]) << where;
          EXPECT_EQ(products[i].second, products[0].second > 0 ? largest : -largest) << where;
        }
        ++seen[products[0].second > 0 ? "largest +" : "largest -"];
      } else if (d.label.starts_with("C = max plus ")) {
        // C the accumulator's largest finite value, one product a fraction of its ulp.
        ASSERT_EQ(products.size(), 1u) << where;
        EXPECT_EQ(c, c_max) << where;
        EXPECT_EQ(d.label, "C = max plus " + std::to_string(products[0].second / c_ulp) + " ulp") << where;
        ++seen["C = max"];
      } else if (d.label == "exact cancellation") {
        // 3 and -3 in the first two slots of the step, C = +0: the exact zero sum's sign.
        ASSERT_EQ(products.size(), 2u) << where;
        EXPECT_EQ(products[0], std::make_pair(step[0], 3.0)) << where;
        EXPECT_EQ(products[1], std::make_pair(step[1], -3.0)) << where;
        EXPECT_TRUE(c == 0 && !std::signbit(c)) << where;
        ++seen["cancellation"];
      } else if (d.label == "all products -0, C = -0") {
        EXPECT_TRUE(products.empty()) << where;
        EXPECT_EQ(negative_zeros, static_cast<int>(step.size())) << where;
        EXPECT_TRUE(c == 0 && std::signbit(c)) << where;
        ++seen["-0"];
      }
    }
    // Every format expresses these; the Table 8 vector and C at the accumulator's top need wider
    // operands than some (fp8's products reach neither 2^23 with -1/8 beside it nor 2^102).
    for (const char* always : {"emulation +", "emulation -", "largest +", "largest -", "cancellation", "-0"}) {
      EXPECT_EQ(seen[always], 1) << t.name << ": " << always;
    }
    EXPECT_LE(seen["Table 8"], 1) << t.name;
    EXPECT_TRUE(seen["C = max"] == 0 || seen["C = max"] == 4) << t.name;
    with_table_8 += seen["Table 8"] == 1;
    with_c_max += seen["C = max"] == 4;
    ++checked;
  }
  EXPECT_GT(checked, 20u);
  EXPECT_GT(with_table_8, 10u);
  EXPECT_GT(with_c_max, 10u);
}

TEST(HarnessCases, DeterministicAndIndependentOfTheRange) {
  const InstructionTarget t = instruction_target("sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e4m3");
  for (DataKind d : {DataKind::random, DataKind::realistic, DataKind::probes, DataKind::tiny}) {
    const TileBatch all = make_tiles(t, d, 7, 0, 12);
    const TileBatch part = make_tiles(t, d, 7, 5, 4);
    const std::size_t na = a_words(t), nc = c_words(t);
    for (std::size_t i = 0; i < part.a.size(); ++i) ASSERT_EQ(part.a[i], all.a[5 * na + i]) << to_string(d);
    for (std::size_t i = 0; i < part.c.size(); ++i) ASSERT_EQ(part.c[i], all.c[5 * nc + i]) << to_string(d);
    if (d != DataKind::probes) {
      const TileBatch other = make_tiles(t, d, 8, 0, 12);
      EXPECT_NE(other.a, all.a) << "the seed changes the cases";
    }
  }
}

TEST(HarnessCases, RandomDataCoversEverySpecialClass) {
  const InstructionTarget t = instruction_target("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16");
  const TileBatch b = make_tiles(t, DataKind::random, 1, 0, 64);
  std::set<ValueClass> a_classes, c_classes;
  for (std::uint32_t w : b.a) a_classes.insert(classify(Format::float16, w));
  for (std::uint32_t w : b.c) c_classes.insert(classify(Format::float32, w));
  EXPECT_EQ(a_classes.size(), 5u);  // zero, subnormal, normal, infinite, nan
  EXPECT_EQ(c_classes.size(), 5u);
}

TEST(HarnessCases, RealisticDataUsesEveryScaleRule) {
  // Block-scaled NVFP4 tiles: the TE and torchao rules both appear; the scale codes are valid.
  const InstructionTarget t = instruction_target(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3");
  const TileBatch b = make_tiles(t, DataKind::realistic, 3, 0, 12);
  for (std::uint8_t s : b.sfa) EXPECT_NE(s & 0x7F, 0x7F);
  const InstructionTarget f8 = instruction_target("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3");
  const TileBatch q = make_tiles(f8, DataKind::realistic, 3, 0, 30);  // 6 e8m0 rules x 5 distributions
  std::size_t nan = 0;
  for (std::uint32_t w : q.a) nan += classify(Format::float8_e4m3fn, w) == ValueClass::nan;
  EXPECT_EQ(nan, 0u);
}

TEST(HarnessConform, SelfTestAgreesEverywhere) {
  auto dev = make_emulator_device();
  ConformOptions o;
  o.outputs = 3000;
  o.gemm_sizes = GemmSizes::small;
  const ConformReport r = run_conformance(*dev, o);
  EXPECT_FALSE(r.failed()) << conform_table(r);
  EXPECT_EQ(r.targets.size(), self_test_targets().size());
  for (const TargetResult& t : r.targets) {
    EXPECT_GE(t.total.outputs, 3000u) << t.target.name();
    EXPECT_EQ(t.data.size(), 3u);
  }
}

// The progress callback follows the run: per target and data set the outputs done reach the plan
// in steps, and the mismatches so far end at the target's count (the CLI's progress line shows
// them). The device flips the last bit of every 4096th output, so every target has some; small
// chunks give several calls per data set.
TEST(HarnessConform, ProgressFollowsTheRun) {
  auto dev = make_emulator_device(Perturbation::output_lsb);
  ConformOptions o;
  o.pattern = "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3|gemm mxfp8";
  o.outputs = 40000;
  o.chunk_outputs = 4096;
  o.gemm_sizes = GemmSizes::small;
  std::vector<Progress> calls;
  o.progress = [&](const Progress& p) { calls.push_back(p); };
  const ConformReport r = run_conformance(*dev, o);
  ASSERT_GE(r.targets.size(), 2u);
  std::size_t at = 0;
  for (std::size_t ti = 0; ti < r.targets.size(); ++ti) {
    const TargetResult& t = r.targets[ti];
    ASSERT_EQ(t.data.size(), o.data.size()) << t.target.name();
    std::uint64_t mismatches_before = 0;
    for (const DataResult& dr : t.data) {
      std::size_t steps = 0;
      std::uint64_t done = 0;
      for (; at < calls.size() && calls[at].target == t.target.name() && calls[at].data == dr.data; ++at, ++steps) {
        const Progress& p = calls[at];
        EXPECT_EQ(p.target_index, ti);
        EXPECT_EQ(p.targets, r.targets.size());
        EXPECT_GT(p.outputs_done, done) << p.target;
        EXPECT_GE(p.mismatches, mismatches_before) << p.target;
        done = p.outputs_done;
        mismatches_before = p.mismatches;
      }
      ASSERT_GT(steps, 0u) << t.target.name() << " " << to_string(dr.data);
      EXPECT_EQ(done, calls[at - 1].outputs_planned) << t.target.name() << " " << to_string(dr.data);
      EXPECT_EQ(done, dr.stats.outputs) << t.target.name() << " " << to_string(dr.data);
    }
    EXPECT_GT(t.total.mismatches, 0u) << t.target.name();
    EXPECT_EQ(calls[at - 1].mismatches, t.total.mismatches) << t.target.name();
  }
  EXPECT_EQ(at, calls.size());
}

// The emulator's d for every case of a golden file, through the operation its header names.
std::vector<std::uint64_t> recomputed(const golden::GoldenFile& f) {
  const auto op = golden::make_operation(f);
  const std::size_t ni = golden::input_words(f.header.fields);
  std::vector<std::uint64_t> d(f.cases());
  for (std::size_t i = 0; i < f.cases(); ++i) op->compute(f.case_words(i).subspan(0, ni), std::span(&d[i], 1));
  return d;
}

// A failure file as a user meets it: its text read back by the golden reader and verified. The
// expected outputs are the device's bits; verification recomputes exactly the model's bits and
// reports exactly the cases where the two differ; with the model's bits put in, the file verifies
// clean. The notes show both bits of every case.
void check_failure_file(const FailureFile& f) {
  SCOPED_TRACE(f.name);
  const golden::GoldenFile g = golden::parse_golden(golden::format_golden(f.golden), f.name);
  ASSERT_EQ(g.cases(), f.examples.size());
  ASSERT_GT(g.cases(), 0u);
  const std::vector<std::uint64_t> model = recomputed(g);
  golden::VerifyOptions vo;
  vo.max_report = 64;
  const golden::FileReport r = golden::verify_golden(g, vo);
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::vector<std::size_t> differing;
  for (std::size_t i = 0; i < g.cases(); ++i) {
    const Mismatch& m = f.examples[i];
    EXPECT_EQ(g.case_words(i).back(), m.device) << "case " << i;
    EXPECT_EQ(model[i], m.model) << "case " << i;
    if (m.device != m.model) differing.push_back(i);
  }
  EXPECT_EQ(r.mismatches, differing.size());
  ASSERT_EQ(r.first.size(), differing.size());
  for (std::size_t j = 0; j < differing.size(); ++j) EXPECT_EQ(r.first[j].index, differing[j]);
  golden::GoldenFile agreed = g;
  for (std::size_t i = 0; i < g.cases(); ++i) agreed.words[(i + 1) * g.words_per_case - 1] = model[i];
  const golden::FileReport clean = golden::verify_golden(golden::parse_golden(golden::format_golden(agreed), f.name));
  EXPECT_TRUE(clean.ok()) << clean.error << " " << clean.mismatches << " mismatches";
  std::size_t case_notes = 0;
  for (const std::string& n : g.header.notes) {
    if (n.rfind("case ", 0) != 0) continue;
    const Mismatch& m = f.examples.at(case_notes++);
    for (std::uint32_t bits : {m.device, m.model}) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "%X", bits);
      EXPECT_NE(n.find(hex), std::string::npos) << n;
    }
  }
  EXPECT_EQ(case_notes, g.cases());
  ASSERT_EQ(g.header.sources.size(), 2u);
  EXPECT_NE(g.header.sources[1].find("'" + f.target + "', data set " + to_string(f.data)), std::string::npos)
      << g.header.sources[1];
}

class Perturbed : public ::testing::TestWithParam<Perturbation> {};

TEST_P(Perturbed, IsCaughtAndReproducible) {
  auto dev = make_emulator_device(GetParam());
  ConformOptions o;
  o.outputs = 20000;
  o.gemm_sizes = GemmSizes::small;
  o.pattern = GetParam() == Perturbation::promotion_fma ? "gemm mxfp8" : "wgmma.*f32 e4m3 e4m3|mma.sync.*k32 f16 e5m2 e5m2";
  if (GetParam() == Perturbation::zero_floor) {
    // Only products below the floor show it: the tiny set on the bf16 and tf32 rows with f32 D.
    o.pattern = "sm_90a (wgmma|mma.sync).* f32 (bf16|tf32)";
    o.data = {DataKind::tiny};
  }
  const ConformReport r = run_conformance(*dev, o);
  ASSERT_FALSE(r.targets.empty());
  for (const TargetResult& t : r.targets) {
    EXPECT_TRUE(t.error.empty()) << t.error;
    EXPECT_GT(t.total.mismatches, 0u) << t.target.name() << " perturbed by " << to_string(GetParam());
  }
  // The failures regenerate from the seed and become golden files that reproduce them: every kept
  // example is one case, and `golden verify` reports each (the device's bits differ from the model's).
  const std::vector<FailureFile> files = failure_files(r, o);
  for (const TargetResult& t : r.targets) {
    std::size_t kept = 0, cases = 0;
    for (const DataResult& d : t.data) kept += d.stats.examples.size();
    for (const FailureFile& f : files) cases += f.target == t.target.name() ? f.examples.size() : 0;
    EXPECT_GT(kept, 0u) << t.target.name();
    EXPECT_EQ(cases, kept) << t.target.name();
  }
  for (const FailureFile& f : files) {
    EXPECT_EQ(f.golden.header.data, "self-test");
    EXPECT_NE(f.golden.header.sources[0].find("perturbed: " + to_string(GetParam())), std::string::npos);
    check_failure_file(f);
  }
}

INSTANTIATE_TEST_SUITE_P(Harness, Perturbed,
                         ::testing::Values(Perturbation::fraction_bits, Perturbation::output_rounding,
                                           Perturbation::c_placement, Perturbation::promotion_fma,
                                           Perturbation::output_lsb, Perturbation::zero_floor),
                         [](const auto& param_info) {
                           std::string n = to_string(param_info.param);
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

// Every GEMM target the harness knows: the self-test's, and the targets gpu_device.cpp makes of
// blockscale::gpu::gemm_kernels() (their fields written out here as gpu/gemm.cpp sets them: a build
// without CUDA has no GPU catalogue).
std::vector<GemmTarget> every_gemm_target() {
  std::vector<GemmTarget> v;
  for (const Target& t : self_test_targets())
    if (t.kind == TargetKind::gemm) v.push_back(t.gemm);
  auto add = [&](GemmRecipe r, Format a, Format b, Format scale, int block, int k_multiple, GemmSchedule kind) {
    GemmTarget g;
    g.recipe = r, g.a = a, g.b = b, g.scale = scale, g.block = block, g.k_multiple = k_multiple;
    g.schedule_kind = kind;
    g.linear_scales = kind == GemmSchedule::hopper_promotion;
    g.promotion_interval = kind == GemmSchedule::hopper_promotion ? 1 : 0;
    g.name = std::string(kind == GemmSchedule::hopper_promotion ? "sm_90a" : "sm_100a") + " gemm " + to_string(r) +
             " " + info(a).short_name + " " + info(b).short_name + " " + info(scale).short_name + " block" +
             std::to_string(block) + (kind == GemmSchedule::hopper_promotion ? " (wgmma promotion P=1)" : " (tcgen05 chain)");
    v.push_back(g);
  };
  const Format fp8[] = {Format::float8_e4m3fn, Format::float8_e5m2};
  for (GemmSchedule kind : {GemmSchedule::hopper_promotion, GemmSchedule::tcgen05_chain})
    for (Format a : fp8)
      for (Format b : fp8) add(GemmRecipe::mxfp8, a, b, Format::float8_e8m0fnu, 32, 128, kind);
  add(GemmRecipe::mxfp4, Format::float4_e2m1fn, Format::float4_e2m1fn, Format::float8_e8m0fnu, 32, 128,
      GemmSchedule::hopper_promotion);
  add(GemmRecipe::nvfp4, Format::float4_e2m1fn, Format::float4_e2m1fn, Format::float8_ue4m3, 16, 64,
      GemmSchedule::hopper_promotion);
  add(GemmRecipe::nvfp4, Format::float4_e2m1fn, Format::float4_e2m1fn, Format::float8_ue4m3, 16, 256,
      GemmSchedule::tcgen05_chain);
  return v;
}

// --model-override: a candidate table row. The self-test device perturbed to F - 1 disagrees with
// the table; with the override F = table F - 1 on the targets it selects, those targets agree again
// and the others still disagree. The failure files of an overridden run say so and verify.
TEST(HarnessConform, ModelOverridesAreTheCandidateRowsTheyName) {
  auto dev = make_emulator_device(Perturbation::fraction_bits);
  ConformOptions o;
  o.pattern = "^sm_90a mma.sync.aligned m16n8k32 f32";
  o.outputs = 3000;
  const int table_f = instruction_target("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3").model.params().F;
  const ConformReport plain = run_conformance(*dev, o);
  ASSERT_EQ(plain.targets.size(), 4u);
  for (const TargetResult& t : plain.targets) EXPECT_GT(t.total.mismatches, 0u) << t.target.name();
  o.model_overrides = parse_model_overrides("e4m3 e[45]m[23]$@F=" + std::to_string(table_f - 1) + ";e4m3 e5m2@L=16");
  const ConformReport overridden = run_conformance(*dev, o);
  ASSERT_EQ(overridden.targets.size(), 4u);
  for (const TargetResult& t : overridden.targets) {
    const std::string& name = t.target.instruction.name;
    const bool a_e4m3 = name.find("f32 e4m3 ") != std::string::npos;
    EXPECT_EQ(t.total.mismatches == 0, a_e4m3) << name;
    const std::string want = !a_e4m3 ? ""
                             : name.ends_with("e5m2") ? "F=" + std::to_string(table_f - 1) + ",L=16"
                                                      : "F=" + std::to_string(table_f - 1);
    EXPECT_EQ(t.target.instruction.model_override, want) << name;
  }
  for (const FailureFile& f : failure_files(overridden, o)) check_failure_file(f);
}

TEST(HarnessConform, ModelOverridesRefuseWhatTheyCannotMean) {
  emulator::FdpaParams p;
  apply_param_override(p, "F=13,L=16,e_zero=-140,underflow=positive,rounding=rz_e8m13");
  EXPECT_EQ(p.F, 13);
  EXPECT_EQ(p.L, 16);
  EXPECT_EQ(p.e_zero, -140);
  EXPECT_EQ(p.underflow_zero, emulator::UnderflowZero::positive);
  EXPECT_EQ(p.rounding, emulator::OutputRounding::rz_e8m13);
  apply_param_override(p, "rounding=RNE-FP16");  // as `blockscale models` spells it
  EXPECT_EQ(p.rounding, emulator::OutputRounding::rne_fp16);
  const std::pair<const char*, const char*> bad[] = {
      {"F", "model override 'F' is not key=value"},
      {"F=x", "model override F=x: not an integer"},
      {"F=12x", "model override F=12x: not an integer"},
      {"underflow=zero", "model override underflow=zero: positive or negative"},
      {"rounding=rn", "model override rounding=rn: rz_fp32, rz_e8m13 or rne_fp16"},
      {"G=4", "model override: unknown key 'G' (F, L, e_zero, underflow, rounding)"},
      {"F=0", "F"},  // validate(): F in 1..40
  };
  for (const auto& entry : bad) {  // not a structured binding: Clang 14 cannot capture one in a lambda
    SCOPED_TRACE(entry.first);
    emulator::FdpaParams q;
    test::expect_throw_with([&] { apply_param_override(q, entry.first); }, entry.second);
  }
  auto dev = make_emulator_device();
  std::vector<Target> targets = select_targets(*dev, "m16n8k32");
  test::expect_throw_with([&] { apply_model_overrides(targets, parse_model_overrides("m16n8k32(@F=12")); },
                          "--model-override 'm16n8k32(' is not a valid regular expression");
}

// The device's MXFP8 GEMM target (the last one it lists; an empty name when it has none).
GemmTarget mxfp8_gemm_target(Device& dev) {
  GemmTarget g;
  for (const Target& target : dev.targets())
    if (target.kind == TargetKind::gemm && target.gemm.recipe == GemmRecipe::mxfp8) g = target.gemm;
  return g;
}

// Batches and problems whose vectors do not hold what their sizes say are refused by name before
// any output is computed (the audit of 2026-11-30: the self-test device and emulate_gemm read past
// short vectors; 2^58 tiles "needed" 0 words).
TEST(HarnessConform, BatchAndProblemSizesAreChecked) {
  auto dev = make_emulator_device();
  const InstructionTarget t = instruction_target("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3");
  TileBatch short_batch = make_batch(t, 2);
  short_batch.b.resize(1);
  test::expect_throw_with([&] { dev->run(t, short_batch); }, "b has 1 words; 2 tiles need 512");
  test::expect_throw_with([&] { emulate_tiles(t, short_batch); }, "b has 1 words");
  TileBatch wraps;
  wraps.tiles = std::size_t{1} << 58;
  test::expect_throw_with([&] { emulate_tiles(t, wraps); }, "overflow");

  const GemmTarget g = mxfp8_gemm_target(*dev);
  ASSERT_FALSE(g.name.empty());
  GemmProblem p;
  p.m = p.n = 2;
  p.k = 128;
  p.a.assign(8, 0x38);  // 2 x 128 needed
  p.b.assign(256, 0x38);
  p.sfa.assign(8, 127);
  p.sfb.assign(8, 127);
  test::expect_throw_with([&] { emulate_gemm(g, p); }, "a has 8 elements; M=2 N=2 K=128 needs M x K = 256");
  test::expect_throw_with([&] { dev->run(g, p); }, "a has 8 elements");
  p.a.assign(256, 0x38);
  p.c.assign(3, 0);
  test::expect_throw_with([&] { emulate_gemm(g, p); }, "c has 3 elements");
  p.c.clear();
  EXPECT_EQ(emulate_gemm(g, p).size(), 4u);
  p.m = 0;
  test::expect_throw_with([&] { emulate_gemm(g, p); }, "M, N and K must be positive");
}

// The output-lsb perturbation is the rare one-ulp fault device.h promises: the last bit of every
// 4096th output (7, 4103, 8199, ...) and nothing else, in f32 instructions, in f64 ones (the low
// word of the pair, which holds the last bit) and in GEMMs.
TEST(HarnessConform, OutputLsbFlipsTheLastBitOfEvery4096thOutput) {
  auto exact = make_emulator_device();
  auto flipped = make_emulator_device(Perturbation::output_lsb);
  auto expect_flips = [](const std::vector<std::uint32_t>& want, const std::vector<std::uint32_t>& got,
                         std::size_t words, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    ASSERT_GT(want.size(), 3 * 4096 * words) << what;  // at least three flips to place
    for (std::size_t i = 0; i < want.size(); ++i) {
      const bool flip = i % words == 0 && i / words % 4096 == 7;
      ASSERT_EQ(got[i] ^ want[i], flip ? 1u : 0u) << what << ": word " << i;
    }
  };
  for (const char* name :
       {"sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", "sm_90a mma.sync.aligned m16n8k16 f64 f64 f64"}) {
    const InstructionTarget t = instruction_target(name);
    const TileBatch b = make_tiles(t, DataKind::realistic, 5, 0, t.f64 ? 100 : 30);
    expect_flips(exact->run(t, b), flipped->run(t, b), words_per_element(t), name);
  }
  const GemmTarget g = mxfp8_gemm_target(*exact);
  ASSERT_FALSE(g.name.empty());
  GemmProblem p;
  p.m = 128;
  p.n = 100;
  p.k = 128;  // the kernels' K multiple
  p.a.assign(std::size_t(p.m * p.k), 0x38);  // e4m3 1.0
  p.b.assign(std::size_t(p.n * p.k), 0x40);  // e4m3 2.0
  p.sfa.assign(std::size_t(p.m * p.k / 32), 127);
  p.sfb.assign(std::size_t(p.n * p.k / 32), 127);
  expect_flips(exact->run(g, p), flipped->run(g, p), 1, g.name);
}

// The Markdown report's command line is a comment: a "-->" or a line break in it cannot end the
// comment or a table row early.
TEST(HarnessReport, CommandLineCannotInjectMarkdown) {
  Session ses;
  ses.command = "blockscale conform --notes '-->\n# injected heading' --x '--!>' --y 'a|b' --z '--->-->--!>-->'";
  const std::string md = to_markdown(ses);
  const std::string first = md.substr(0, md.find('\n'));
  EXPECT_EQ(first.find("-->"), first.size() - 3) << first;  // the comment's own end, and no other
  EXPECT_EQ(first.find("--!>"), std::string::npos) << first;
  EXPECT_EQ(md.find("\n# injected"), std::string::npos) << md;
  EXPECT_NE(first.find("'a\\|b'"), std::string::npos) << first;  // '|' escaped as in every cell
  EXPECT_NE(first.find("'--- >-- >-- !>-- >'"), std::string::npos) << first;  // each closer opened up, nothing else
}

// A program's global C++ locale changes no report: the JSON, the Markdown and the tables are
// written in the classic locale. Under a German-style locale (digits grouped in threes by '.', ','
// before the fraction) the JSON had read "outputs": 6.144 and "seconds": 0,5, which no parser takes.
struct GroupedCommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(HarnessReport, TheGlobalLocaleChangesNoReport) {
  auto dev = make_emulator_device();
  ConformOptions o;
  o.pattern = "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3";
  o.outputs = 6000;
  Session ses;
  ses.command = "blockscale conform";
  ses.conform = run_conformance(*dev, o);
  ses.conform->seconds = 1234.5;
  ses.discoveries.push_back(discover(*dev, instruction_target(o.pattern)));
  const auto reports = [&] {
    return std::vector<std::string>{to_json(ses), to_markdown(ses), conform_table(*ses.conform),
                                    discovery_table(ses.discoveries[0])};
  };
  const std::vector<std::string> classic = reports();
  ASSERT_NE(classic[0].find("\"seconds\": 1234.5"), std::string::npos) << classic[0];
  std::vector<std::string> grouped;
  {
    const std::locale before = std::locale::global(std::locale(std::locale::classic(), new GroupedCommaDecimal));
    grouped = reports();
    std::locale::global(before);
  }
  for (std::size_t i = 0; i < classic.size(); ++i) EXPECT_EQ(grouped[i], classic[i]) << "report " << i;
}

// The probes' first variant cancels across blocks as it says: block 2b+1 of every A row is block 2b
// negated and of every B column a copy of it, each with block 2b's scale, on every GEMM target.
TEST(HarnessCases, GemmProbesCancelPairsOfBlocks) {
  std::size_t pairs = 0;
  for (const GemmTarget& t : every_gemm_target()) {
    for (const std::uint64_t index : {0u, 4u, 8u}) {  // variant 0 of three problems
      const GemmProblem p = make_gemm_problem(t, DataKind::probes, 3, index, GemmSizes::small);
      const int blocks = p.k / t.block;
      const auto neg = static_cast<std::uint8_t>(sign_mask(t.a));
      for (int bk = 1; bk < blocks; bk += 2) {
        for (int i = 0; i < p.m; ++i) {
          const std::size_t row = std::size_t(i) * p.k + std::size_t(bk) * t.block;
          for (int e = 0; e < t.block; ++e) ASSERT_EQ(p.a[row + e], p.a[row + e - t.block] ^ neg) << t.name << " A row " << i;
          ASSERT_EQ(p.sfa[std::size_t(i) * blocks + bk], p.sfa[std::size_t(i) * blocks + bk - 1]) << t.name;
        }
        for (int j = 0; j < p.n; ++j) {
          const std::size_t col = std::size_t(j) * p.k + std::size_t(bk) * t.block;
          for (int e = 0; e < t.block; ++e) ASSERT_EQ(p.b[col + e], p.b[col + e - t.block]) << t.name << " B column " << j;
          ASSERT_EQ(p.sfb[std::size_t(j) * blocks + bk], p.sfb[std::size_t(j) * blocks + bk - 1]) << t.name;
        }
        ++pairs;
      }
    }
  }
  EXPECT_GT(pairs, 0u);
}

// The mapping of a GEMM output onto the golden gemm operation (M = N = 1: expanded and padded e4m3
// codes with fp32 scales for the promotion schedule, codes as they are for the tcgen05 chain, C = +0
// for an absent C, out=bf16) gives emulate_gemm's bits, for every GEMM target, on every data set,
// with and without C, f32 and bf16 output.
TEST(HarnessFailures, GemmFailureOperationComputesWhatEmulateGemmComputes) {
  std::size_t compared = 0, bf16 = 0, without_c = 0, nan = 0;
  const std::vector<GemmTarget> targets = every_gemm_target();
  EXPECT_EQ(targets.size(), 3u + 11u);
  for (const GemmTarget& t : targets) {
    for (DataKind data : {DataKind::random, DataKind::realistic, DataKind::probes, DataKind::tiny}) {
      for (std::uint64_t i = 0; i < 12; ++i) {
        const GemmProblem p = make_gemm_problem(t, data, 3, i, GemmSizes::small);
        const std::vector<std::uint32_t> want = emulate_gemm(t, p);
        const auto op = gemm_failure_operation(t, p.k, p.bf16_output, "mapping");
        const int row_step = std::max(1, p.m / 6), col_step = std::max(1, p.n / 6);
        for (int row = 0; row < p.m; row += row_step)
          for (int col = 0; col < p.n; col += col_step) {
            const std::vector<std::uint64_t> in =
                gemm_failure_inputs(t, p, static_cast<std::size_t>(row), static_cast<std::size_t>(col));
            std::uint64_t d = 0;
            op->compute(in, std::span(&d, 1));
            const std::uint32_t w = want[static_cast<std::size_t>(row) * static_cast<std::size_t>(p.n) +
                                         static_cast<std::size_t>(col)];
            ASSERT_EQ(d, w) << t.name << ", " << to_string(data) << " problem " << i << ", D[" << row << "][" << col
                            << "]";
            ++compared;
            bf16 += p.bf16_output;
            without_c += p.c.empty();
            nan += p.bf16_output ? (w & 0x7FFFu) > 0x7F80u : (w & 0x7FFFFFFFu) > 0x7F800000u;
          }
      }
    }
  }
  // Without C, an A row of negative zeros: D = +0 in the file as in the model (an all -0 sum is +0,
  // numerics.md b.6, so the +0 that stands in for an absent C keeps it so).
  for (const GemmTarget& t : targets) {
    for (bool bf16_output : {false, true}) {
      GemmProblem p = make_gemm_problem(t, DataKind::realistic, 3, 0, GemmSizes::small);
      p.c.clear();
      p.bf16_output = bf16_output;
      std::fill(p.a.begin(), p.a.begin() + p.k, static_cast<std::uint8_t>(sign_mask(t.a)));
      const std::vector<std::uint32_t> want = emulate_gemm(t, p);
      const auto op = gemm_failure_operation(t, p.k, p.bf16_output, "zero_row");
      for (std::size_t col = 0; col < static_cast<std::size_t>(p.n); col += 7) {
        ASSERT_EQ(want[col], 0u) << t.name << ": D[0][" << col << "] of a zero row without C is not +0";
        std::uint64_t d = 1;
        op->compute(gemm_failure_inputs(t, p, 0, col), std::span(&d, 1));
        ASSERT_EQ(d, want[col]) << t.name << ", D[0][" << col << "]" << (bf16_output ? ", bf16" : "");
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 20000u);
  EXPECT_GT(bf16, 1000u);
  EXPECT_GT(without_c, 1000u);
  EXPECT_GT(nan, 10u);
}

// A report as a GPU run would give it, with mismatches injected (the device's bits are the model's
// with the last bit flipped; one example per data set where they agree), for instruction and GEMM
// targets: the files name the device, hold one case per example, split GEMM examples by K and
// output format, and verify with exactly the injected mismatches.
TEST(HarnessFailures, InjectedMismatchesAreReportedExactly) {
  ConformOptions o;
  o.seed = 5;
  o.gemm_sizes = GemmSizes::small;
  ConformReport report;
  report.device.kind = "gpu";
  report.device.name = "NVIDIA H200";
  report.device.compute_capability = "9.0";
  report.device.multiprocessors = 132;
  report.device.driver = "580.159.04";
  report.device.cuda_driver = "13.0";
  report.device.cuda_runtime = "13.0";
  report.date = "2026-01-02T03:04:05Z";
  auto example = [](OutputFormat f, std::uint64_t index, std::size_t row, std::size_t col, std::uint32_t model,
                    bool agree) {
    Mismatch m;
    m.case_index = index, m.row = row, m.col = col, m.model = model;
    m.device = agree ? model : model ^ 1u;
    m.ulps = ulp_distance(f, m.device, m.model);
    return m;
  };
  for (const char* name :
       {"sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3",
        "sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32", "sm_90a wgmma.mma_async m64n8k32 f16 e5m2 e4m3"}) {
    TargetResult tr;
    tr.target.kind = TargetKind::instruction;
    tr.target.instruction = instruction_target(name);
    const InstructionTarget& t = tr.target.instruction;
    for (DataKind data : {DataKind::random, DataKind::probes}) {
      DataResult dr;
      dr.data = data;
      using Where = std::tuple<std::uint64_t, std::size_t, std::size_t>;  // tile, row, column
      const Where where[] = {{0, 0, 0},
                             {3, static_cast<std::size_t>(t.m - 1), static_cast<std::size_t>(t.n - 1)},
                             {3, 5, 2},
                             {9, 1, 7}};
      for (const auto& [tile, row, col] : where) {
        const std::vector<std::uint32_t> d = emulate_tiles(t, make_tiles(t, data, o.seed, tile, 1));
        dr.stats.examples.push_back(example(output_format(t.acc), tile, row, col, d[row * static_cast<std::size_t>(t.n) + col],
                                            tile == 9));
      }
      tr.data.push_back(dr);
    }
    report.targets.push_back(tr);
  }
  for (const GemmTarget& g : every_gemm_target()) {
    TargetResult tr;
    tr.target.kind = TargetKind::gemm;
    tr.target.gemm = g;
    for (DataKind data : {DataKind::realistic, DataKind::probes}) {
      DataResult dr;
      dr.data = data;
      // Problems 0, 1 and 4 have f32 output and K of 1, 4 and 8 pipeline stages; 9 and 10 bf16
      // output and no C (K of 1 and 8 stages): five files.
      using Where = std::tuple<std::uint64_t, std::size_t, std::size_t, bool>;  // problem, row, column, agree
      const Where where[] = {{0, 0, 0, false}, {0, 63, 62, true}, {1, 31, 0, false}, {4, 7, 9, false},
                             {9, 32, 64, false}, {10, 15, 15, false}, {0, 5, 6, false}};
      for (const auto& [index, row, col, agree] : where) {
        const GemmProblem p = make_gemm_problem(g, data, o.seed, index, o.gemm_sizes);
        const std::vector<std::uint32_t> d = emulate_gemm(g, p);
        dr.stats.examples.push_back(example(p.bf16_output ? OutputFormat::bf16 : OutputFormat::f32, index, row, col,
                                            d[row * static_cast<std::size_t>(p.n) + col], agree));
      }
      tr.data.push_back(dr);
    }
    report.targets.push_back(tr);
  }

  const std::vector<FailureFile> files = failure_files(report, o);
  ASSERT_EQ(files.size(), 3u * 2u + every_gemm_target().size() * 2u * 5u);
  for (const FailureFile& f : files) {
    EXPECT_EQ(f.golden.header.data, "hardware");
    EXPECT_EQ(f.golden.header.sources[0],
              "blockscale conform, device NVIDIA H200 (compute capability 9.0, 132 SMs), driver 580.159.04, CUDA 13.0 "
              "(runtime 13.0), 2026-01-02T03:04:05Z");
    check_failure_file(f);
  }
  // One target's GEMM files: named by target, data set, K and output, in order of first appearance.
  std::vector<std::string> names;
  for (const FailureFile& f : files)
    if (f.target == every_gemm_target()[2].name && f.data == DataKind::probes) names.push_back(f.name);
  const std::string stem = "sm_90a_gemm_nvfp4_e2m1_e2m1_ue4m3_block16_emulated_promotion_P_1.probes.";
  EXPECT_EQ(names, (std::vector<std::string>{stem + "k64.f32.txt", stem + "k256.f32.txt", stem + "k512.f32.txt",
                                             stem + "k64.bf16.txt", stem + "k512.bf16.txt"}));
  // The nvfp4 promotion file holds 16-element blocks padded into k32 slots: K = 2 x 64 e4m3 codes.
  for (const FailureFile& f : files) {
    if (f.name != stem + "k64.f32.txt") continue;
    EXPECT_EQ(f.examples.size(), 3u);
    EXPECT_EQ(golden::fields_string(f.golden.header.fields),
              "a:e4m3[128] b:e4m3[128] c:f32 sa:f32[4] sb:f32[4] -> d:f32");
    EXPECT_NE(f.golden.header.ops[0].find("gemm m=1 n=1 k=128 schedule=promotion interval=1 fma=scale_product"),
              std::string::npos)
        << f.golden.header.ops[0];
  }
}

// A saved file that was cut short or corrupted is refused by the golden reader, naming the line.
TEST(HarnessFailures, CorruptOrTruncatedFilesNameTheLine) {
  auto dev = make_emulator_device(Perturbation::fraction_bits);
  ConformOptions o;
  o.outputs = 4096;
  o.pattern = "wgmma.*k32 f32 e4m3 e4m3";
  o.data = {DataKind::random};
  const ConformReport r = run_conformance(*dev, o);
  const std::vector<FailureFile> files = failure_files(r, o);
  ASSERT_FALSE(files.empty());
  const std::string text = golden::format_golden(files[0].golden);
  const std::size_t last = text.rfind('\n', text.size() - 2) + 1;  // start of the last case line
  const auto last_line = static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(last), '\n')) + 1;
  auto fails_at = [&](const std::string& bad, std::size_t line, const std::string& what) {
    try {
      (void)golden::parse_golden(bad, "saved.txt");
      ADD_FAILURE() << "accepted: " << what;
    } catch (const golden::GoldenError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  std::string corrupt = text;
  corrupt[last + 3] = 'g';
  fails_at(corrupt, last_line, "is not hexadecimal");
  fails_at(text.substr(0, text.size() - 3), last_line, "field d (f32) needs 8 hex digits, got 6");
  fails_at(text.substr(0, last), 0, "(truncated?)");
}

// Discovery recovers every self-test instruction's table row from the emulator, and notices a
// perturbed one.
TEST(HarnessDiscover, RecoversTheTableFromTheEmulator) {
  auto dev = make_emulator_device();
  for (const Target& t : self_test_targets()) {
    // f64 fma chains have no FDPA parameters (HarnessF64.ParameterOverridesAndDiscoveryAreRefused);
    // sparse forms are discovered through their dense form (HarnessSparse).
    if (t.kind != TargetKind::instruction || t.instruction.f64 || t.instruction.sparse) continue;
    const Discovery d = discover(*dev, t.instruction);
    EXPECT_FALSE(d.disagrees()) << discovery_table(d);
    std::set<std::string> determined;
    for (const DiscoveryItem& i : d.items)
      if (i.verdict == Verdict::agrees) determined.insert(i.parameter);
    // Block-scaled kinds: their operands are too narrow for the slot sweeps (L, normalisation);
    // F, C and the alignment come from C against a scaled pair (HarnessDiscoverBlockScaled).
    const std::vector<std::string> wanted =
        t.instruction.block_scaled
            ? std::vector<std::string>{"fraction bits F", "C placement", "scales in the alignment exponent",
                                       "alignment exponent", "output rounding"}
            : std::vector<std::string>{"fused width L", "fraction bits F", "C placement", "product normalisation",
                                       "output rounding"};
    for (const std::string& p : wanted) {
      EXPECT_TRUE(determined.count(p)) << t.name() << ": " << p << "\n" << discovery_table(d);
    }
  }
}

TEST(HarnessDiscover, HopperFp8Parameters) {
  auto dev = make_emulator_device();
  const Discovery w = discover(*dev, instruction_target("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3"));
  const Discovery m = discover(*dev, instruction_target("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3"));
  auto item = [](const Discovery& d, const std::string& p) {
    for (const DiscoveryItem& i : d.items)
      if (i.parameter == p) return i.discovered;
    return std::string("(missing)");
  };
  EXPECT_EQ(item(w, "fraction bits F"), "13");
  EXPECT_EQ(item(w, "output rounding"), "RZ-E8M13");
  EXPECT_EQ(item(m, "fraction bits F"), "25");
  EXPECT_EQ(item(m, "C placement"), "added after the products, rounded to nearest (FADD/HADD)");
  EXPECT_NE(item(m, "fused width L").find("k mod 4 in {0,1}"), std::string::npos);
  const Discovery f16 = discover(*dev, instruction_target("sm_90a mma.sync.aligned m16n8k16 f16 f16 f16"));
  // The sm_90a f16 accumulators floor at -21, as measured on an H200 (docs/conformance.md).
  EXPECT_EQ(item(f16, "e_zero (floor of e_max)"), "-21");
}

TEST(HarnessDiscover, FlagsAPerturbedModel) {
  auto dev = make_emulator_device(Perturbation::fraction_bits);
  const Discovery d = discover(*dev, instruction_target("sm_90a wgmma.mma_async m64n8k16 f32 bf16 bf16"));
  EXPECT_TRUE(d.disagrees());
  for (const DiscoveryItem& i : d.items) {
    if (i.parameter == "fraction bits F") {
      EXPECT_EQ(i.discovered, "24");
      EXPECT_EQ(i.verdict, Verdict::disagrees);
    }
  }
}

// Schedule fitting: a GEMM made by a known emulator schedule is recognised as that schedule.
ExternalRun synthetic_run(ExternalScaling scaling, const emulator::KernelSchedule& s, int k) {
  ExternalRun r;
  r.library = "emulator";
  r.config = "synthetic";
  r.scaling = scaling;
  r.m = 24, r.n = 16, r.k = k;
  Rng rng(5);
  r.a.resize(std::size_t(r.m) * k);
  r.b.resize(std::size_t(r.n) * k);
  ConvertOptions o;
  o.overflow = Overflow::saturate;
  for (auto& x : r.a) x = static_cast<std::uint8_t>(convert(Format::float8_e4m3fn, rng.uniform() * 3, o));
  for (auto& x : r.b) x = static_cast<std::uint8_t>(convert(Format::float8_e4m3fn, rng.gaussian(), o));
  const int kb = k / 128;
  const bool block = scaling == ExternalScaling::block_1x128;
  r.sa.assign(block ? std::size_t(r.m) * kb : 1, 1.0f);
  r.sb.assign(block ? std::size_t(r.n) * kb : 1, 1.0f);
  for (auto& x : r.sa) x = block ? static_cast<float>(0.1 + rng.uniform()) : 1.0f;
  for (auto& x : r.sb) x = block ? static_cast<float>(0.1 + rng.uniform()) : 1.0f;
  emulator::GemmOperands ops;
  ops.a = emulator::CodeMatrix(Format::float8_e4m3fn, r.m, k, std::span<const std::uint8_t>(r.a));
  ops.b = emulator::CodeMatrix(Format::float8_e4m3fn, k, r.n, std::span<const std::uint8_t>(r.b), emulator::Order::col_major);
  std::vector<std::uint32_t> sa, sb;
  if (s.accumulation == emulator::Accumulation::promotion) {
    const int intervals = k / s.scale_block();
    sa.resize(std::size_t(r.m) * intervals);
    sb.resize(std::size_t(intervals) * r.n);
    for (int q = 0; q < intervals; ++q) {
      const int blk = q * s.scale_block() / 128;
      for (int i = 0; i < r.m; ++i) sa[std::size_t(i) * intervals + q] = std::bit_cast<std::uint32_t>(block ? r.sa[std::size_t(i) * kb + blk] : 1.0f);
      for (int j = 0; j < r.n; ++j) sb[std::size_t(j) * intervals + q] = std::bit_cast<std::uint32_t>(block ? r.sb[std::size_t(j) * kb + blk] : 1.0f);
    }
    ops.scale_a = emulator::CodeMatrix(Format::float32, r.m, intervals, std::span<const std::uint32_t>(sa));
    ops.scale_b = emulator::CodeMatrix(Format::float32, intervals, r.n, std::span<const std::uint32_t>(sb), emulator::Order::col_major);
  }
  r.d = emulator::gemm(s, ops);
  return r;
}

TEST(HarnessExternal, FitsTheGeneratingSchedule) {
  const emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  {
    const ExternalStudy st = fit_schedules(synthetic_run(ExternalScaling::tensor, emulator::KernelSchedule::chain(ins), 2048));
    ASSERT_TRUE(st.bit_exact());
    EXPECT_EQ(st.fits.front().schedule.rfind("one wgmma chain", 0), 0u) << st.fits.front().schedule;
    EXPECT_LT(st.fits[1].matches, st.fits[1].outputs) << "the data must tell the schedules apart";
  }
  {
    const ExternalStudy st =
        fit_schedules(synthetic_run(ExternalScaling::tensor, emulator::KernelSchedule::hopper_promotion(ins, 4), 2048));
    ASSERT_TRUE(st.bit_exact());
    EXPECT_NE(st.fits.front().schedule.find("(P=4"), std::string::npos) << st.fits.front().schedule;
  }
  {
    const auto s = emulator::KernelSchedule::hopper_promotion(ins, 4, emulator::PromotionFma::scale_b_first);
    const ExternalStudy st = fit_schedules(synthetic_run(ExternalScaling::block_1x128, s, 1024));
    ASSERT_TRUE(st.bit_exact());
    EXPECT_NE(st.fits.front().schedule.find("fma(sa, sb*p, acc)"), std::string::npos) << st.fits.front().schedule;
  }
  {
    // A D with NaN where no schedule has one: those outputs are mismatches without an ulp distance,
    // counted apart ("worst 0 ulp" alone read as a near miss).
    ExternalRun run = synthetic_run(ExternalScaling::tensor, emulator::KernelSchedule::chain(ins), 2048);
    run.d[0] = run.d[1] = 0x7FC00000u;
    const ExternalStudy st = fit_schedules(run);
    EXPECT_EQ(st.fits.front().nan_mismatches, 2u);
    EXPECT_NE(external_table({st}).find("(+2 NaN)"), std::string::npos) << external_table({st});
  }
}

// A synthetic run's e4m3 operands and scales as the library fp8 rows take them.
std::pair<Fp8ScaledMatrix, Fp8ScaledMatrix> scaled_operands_of(const ExternalRun& r, Fp8Granularity g) {
  Fp8ScaledMatrix a, b;
  a.element = b.element = Format::float8_e4m3fn;
  a.granularity = b.granularity = g;
  a.rows = r.m, b.rows = r.n, a.k = b.k = r.k;
  a.codes = r.a, b.codes = r.b, a.scales = r.sa, b.scales = r.sb;
  return {std::move(a), std::move(b)};
}

// A run with cuBLASLt's epilogue is checked against cublaslt_fp8_gemm alone, at the split count
// that reproduces it; a changed output or amax_d shows as a mismatch.
TEST(HarnessExternal, EpilogueRunsAreCheckedAgainstTheCublasLtModel) {
  const emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  const ExternalRun base = [&] {
    ExternalRun r = synthetic_run(ExternalScaling::tensor, emulator::KernelSchedule::chain(ins), 1024);
    r.library = "cuBLASLt 130100";
    r.sa = {1.5f};
    r.sb = {0.75f};
    r.split_k = 0;  // not reported: the fit finds it
    return r;
  }();
  const auto operands = scaled_operands_of(base, Fp8Granularity::tensor);
  const Fp8ScaledMatrix &a = operands.first, &b = operands.second;
  const auto& row = emulator::library_fp8_schedule(emulator::Fp8Library::cublaslt, false, Fp8Granularity::tensor,
                                                   Fp8Granularity::tensor);
  // The run as cublaslt_fp8_gemm computes it with split-K 2 and this epilogue.
  const auto run_with = [&](Format c_format, Format d_format, float d_scale) {
    ExternalEpilogue e;
    e.alpha = 0.7f, e.beta = 0.6f, e.d_scale = d_scale;
    e.c_format = c_format, e.bias_format = Format::bfloat16, e.d_format = d_format;
    Rng rng(9);
    for (int i = 0; i < base.m * base.n; ++i) e.c.push_back(convert(c_format, 8 * rng.gaussian(), presets::ieee()));
    for (int i = 0; i < base.m; ++i) e.bias.push_back(convert(Format::bfloat16, 4 * rng.gaussian(), presets::ieee()));
    emulator::CublasLtEpilogue le;
    le.alpha = e.alpha, le.beta = e.beta, le.d_scale = e.d_scale, le.c = e.c, le.c_format = e.c_format;
    le.bias = e.bias, le.bias_format = e.bias_format, le.d_format = e.d_format;
    const emulator::CublasLtFp8Result want = emulator::cublaslt_fp8_gemm(row, a, b, 0, base.m, 2, le);
    ExternalRun r = base;
    r.d = want.d;
    if (d_format == Format::float8_e4m3fn) e.amax_d = want.amax_d;
    r.epilogue = e;
    return r;
  };
  // An f32 D tells the split counts apart (beta C fused at split-K 1, added after a split-K).
  const ExternalRun f32_run = run_with(Format::float32, Format::float32, 1.0f);
  const ExternalStudy st = fit_schedules(f32_run);
  EXPECT_TRUE(st.fits.empty());
  ASSERT_TRUE(st.table.bit_exact()) << st.table.row << " " << st.table.why_not;
  EXPECT_EQ(st.table.split_k, 2);
  EXPECT_FALSE(st.table.amax_d_equal.has_value());
  ExternalRun changed = f32_run;
  changed.d[5] ^= 1;
  const ExternalStudy one_off = fit_schedules(changed);
  EXPECT_EQ(one_off.table.matches + 1, one_off.table.outputs);
  EXPECT_FALSE(one_off.table.bit_exact());
  // An e4m3 D with its amax_d.
  const ExternalRun e4m3_run = run_with(Format::bfloat16, Format::float8_e4m3fn, 3.0f);
  const ExternalStudy e4 = fit_schedules(e4m3_run);
  ASSERT_TRUE(e4.table.bit_exact()) << e4.table.row << " " << e4.table.why_not;
  EXPECT_EQ(e4.table.amax_d_equal, std::optional<bool>(true));
  EXPECT_NE(external_table({e4}).find("amax_d equal (bit-exact)"), std::string::npos) << external_table({e4});
  Session ses;
  ses.external = {e4};
  EXPECT_NE(to_json(ses).find("\"amax_d_equal\": true"), std::string::npos);
  changed = e4m3_run;
  changed.epilogue->amax_d = *e4m3_run.epilogue->amax_d * 2;
  const ExternalStudy amax_off = fit_schedules(changed);
  EXPECT_EQ(amax_off.table.matches, amax_off.table.outputs);
  EXPECT_EQ(amax_off.table.amax_d_equal, std::optional<bool>(false));
  EXPECT_FALSE(amax_off.table.bit_exact());
  // A run that the table cannot compute says why rather than fitting nothing silently (line
  // coverage, 2026-11-30: neither refusal had run): a C of the wrong size, and a scaling cuBLASLt
  // was not measured with (fast accumulation with 1 x 128 blocks).
  ExternalRun short_c = f32_run;
  short_c.epilogue->c.pop_back();
  const ExternalStudy refused = fit_schedules(short_c);
  EXPECT_FALSE(refused.table.bit_exact());
  EXPECT_NE(refused.table.why_not.find("cannot run this call"), std::string::npos) << refused.table.why_not;
  ExternalRun unmeasured = synthetic_run(ExternalScaling::block_1x128, emulator::KernelSchedule::chain(ins), 1024);
  unmeasured.library = "cuBLASLt 130100";
  unmeasured.fast_accum = true;
  unmeasured.epilogue = ExternalEpilogue{};
  const ExternalStudy none = fit_schedules(unmeasured);
  EXPECT_NE(none.table.why_not.find("was not measured with A 1x128"), std::string::npos) << none.table.why_not;
  EXPECT_NE(external_table({amax_off}).find("amax_d differs"), std::string::npos);
}

// A table row that was never seen splitting K (cuBLASLt's row-wise scaling) is tried unsplit only,
// whatever count the run reports: the row refuses a split, and the fit must not end there.
TEST(HarnessExternal, ARowThatNeverSplitsIsTriedUnsplit) {
  const emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  ExternalRun r = synthetic_run(ExternalScaling::tensor, emulator::KernelSchedule::chain(ins), 1024);
  r.library = "cuBLASLt 130100";
  r.scaling = ExternalScaling::rowwise;
  r.sa.assign(std::size_t(r.m), 1.5f);
  r.sb.assign(std::size_t(r.n), 0.75f);
  const auto operands = scaled_operands_of(r, Fp8Granularity::row);
  const Fp8ScaledMatrix &a = operands.first, &b = operands.second;
  const auto& row = emulator::library_fp8_schedule(emulator::Fp8Library::cublaslt, false, Fp8Granularity::row,
                                                   Fp8Granularity::row);
  ASSERT_EQ(row.split_granule_k, 0);
  r.d = emulator::library_fp8_gemm(row, a, b, 0, r.m, 1);
  r.split_k = 3;
  const ExternalStudy st = fit_schedules(r);
  ASSERT_TRUE(st.table.bit_exact()) << st.table.row << " " << st.table.why_not;
  EXPECT_EQ(st.table.split_k, 1);
}

TEST(HarnessExternal, FitsSwappedOperandRoles) {
  // A run made with B in A's place (fma(sb, sa*p, acc)) is recognised as such.
  const emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  const auto s = emulator::KernelSchedule::hopper_promotion(ins, 4, emulator::PromotionFma::scale_b_first);
  // Operands and scales of a synthetic run; D is recomputed with the roles exchanged: the emulator
  // computes (B, A) and the result is transposed.
  ExternalRun r = synthetic_run(ExternalScaling::block_1x128, s, 1024);
  emulator::GemmOperands ops;
  ops.a = emulator::CodeMatrix(Format::float8_e4m3fn, r.n, 1024, std::span<const std::uint8_t>(r.b));
  ops.b = emulator::CodeMatrix(Format::float8_e4m3fn, 1024, r.m, std::span<const std::uint8_t>(r.a), emulator::Order::col_major);
  std::vector<std::uint32_t> sa, sb;
  for (int i = 0; i < r.n; ++i)
    for (int q = 0; q < 8; ++q) sa.push_back(std::bit_cast<std::uint32_t>(r.sb[std::size_t(i) * 8 + q]));
  for (int j = 0; j < r.m; ++j)
    for (int q = 0; q < 8; ++q) sb.push_back(std::bit_cast<std::uint32_t>(r.sa[std::size_t(j) * 8 + q]));
  ops.scale_a = emulator::CodeMatrix(Format::float32, r.n, 8, std::span<const std::uint32_t>(sa));
  ops.scale_b = emulator::CodeMatrix(Format::float32, 8, r.m, std::span<const std::uint32_t>(sb), emulator::Order::col_major);
  const std::vector<std::uint32_t> dt = emulator::gemm(s, ops);  // r.n x r.m
  r.d.assign(dt.size(), 0);
  for (int i = 0; i < r.m; ++i)
    for (int j = 0; j < r.n; ++j) r.d[std::size_t(i) * r.n + j] = dt[std::size_t(j) * r.m + i];
  const ExternalStudy st = fit_schedules(r);
  ASSERT_TRUE(st.bit_exact());
  EXPECT_NE(st.fits.front().schedule.find("operands swapped: acc = fma(sa, sb*p, acc)"), std::string::npos)
      << st.fits.front().schedule;
}

TEST(HarnessExternal, FitsSplitK) {
  // 18 tiles of 128 in 6 slices of 384 elements: the splits at k32 steps and at 128-element K tiles
  // cut at the same places, so both must reproduce the run, and no unsplit schedule can (384 is no
  // power-of-two promotion interval).
  const emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  const auto s = emulator::KernelSchedule::chain(ins).with_split_k(6, emulator::SplitKReduction::pairwise);
  const ExternalStudy st = fit_schedules(synthetic_run(ExternalScaling::tensor, s, 18 * 128));
  ASSERT_TRUE(st.bit_exact());
  std::size_t exact = 0, six = 0;
  for (const ScheduleFit& f : st.fits) {
    if (f.matches != f.outputs) continue;
    ++exact;
    six += f.schedule.find("split-K 6") != std::string::npos;
    // Every exact fit cuts K into six slices of 3 tiles.
    EXPECT_NE(f.schedule.find("split-K"), std::string::npos) << f.schedule;
  }
  EXPECT_GE(six, 2u);  // at k32 steps and at 128-element K tiles
}

// A split of a schedule that neither chains nor promotes per 128-element block (promotion every two
// k32 steps, with 1x128 block scales) is tried through the two best unsplit fits, found by the name
// prefix their fits share with it, and reproduces the run; no unsplit schedule does.
TEST(HarnessExternal, FitsSplitKOfTheBestUnsplitSchedules) {
  const emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  const auto s = emulator::KernelSchedule::hopper_promotion(ins, 2).with_split_k(3, emulator::SplitKReduction::pairwise);
  const ExternalStudy st = fit_schedules(synthetic_run(ExternalScaling::block_1x128, s, 12 * 128));
  ASSERT_TRUE(st.bit_exact());
  std::size_t exact_p2_split = 0;
  for (const ScheduleFit& f : st.fits) {
    if (f.matches != f.outputs) continue;
    EXPECT_NE(f.schedule.find("split-K"), std::string::npos) << f.schedule;
    exact_p2_split += f.schedule.find("(P=2)") != std::string::npos;
  }
  EXPECT_GE(exact_p2_split, 1u);
}

TEST(HarnessExternal, ReadsScaledMmRuns) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "blockscale_harness_scaled_mm";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "a.scaled_mm", std::ios::binary);
    f << "blockscale-scaled-mm 1 library=torch config=tensor-wise m=2 n=1 k=128 scaling=tensor fast_accum=0 out=f32 "
         "sa_count=1 sb_count=1\n";
    std::vector<std::uint8_t> a(256, 0x38), b(128, 0x38);  // 1.0
    const float one = 1.0f, d[2] = {128.0f, 128.0f};
    f.write(reinterpret_cast<const char*>(a.data()), 256);
    f.write(reinterpret_cast<const char*>(b.data()), 128);
    f.write(reinterpret_cast<const char*>(&one), 4);
    f.write(reinterpret_cast<const char*>(&one), 4);
    f.write(reinterpret_cast<const char*>(d), 8);
  }
  const std::vector<ExternalRun> runs = read_scaled_mm_runs(dir);
  ASSERT_EQ(runs.size(), 1u);
  const ExternalStudy st = fit_schedules(runs[0]);
  EXPECT_TRUE(st.bit_exact());
  {
    std::ofstream f(dir / "b.scaled_mm", std::ios::binary);
    f << "blockscale-scaled-mm 1 library=torch config=x m=2 n=1 k=128 scaling=tensor fast_accum=0 out=f32 sa_count=1 "
         "sb_count=1\n";
  }
  EXPECT_THROW(read_scaled_mm_runs(dir), std::invalid_argument);  // truncated
  std::filesystem::remove_all(dir);
}

// A library run whose scales the committed library row refuses (zero, negative, Inf or NaN) is
// still fitted; only the table row says why it could not run (before, the row's exception ended
// the whole conform session with "A has a scale that is not a positive finite fp32 value").
TEST(HarnessExternal, ScalesTheLibraryRowRefusesLeaveTheFitsStanding) {
  const emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  for (const float scale : {0.0f, std::numeric_limits<float>::quiet_NaN()}) {
    SCOPED_TRACE(scale);
    ExternalRun r = synthetic_run(ExternalScaling::tensor, emulator::KernelSchedule::chain(ins), 128);
    r.library = "torch 2.11.0+cu130 _scaled_mm";
    r.sa = {scale};
    const ExternalStudy st = fit_schedules(r);
    EXPECT_FALSE(st.fits.empty());
    EXPECT_TRUE(st.table.row.empty());
    EXPECT_NE(st.table.why_not.find("cannot run this call: A has a scale that is not a positive finite fp32 value"), std::string::npos)
        << st.table.why_not;
  }
}

// Each malformed .scaled_mm file is refused with a message naming the file and the rule broken
// (before this reader took the shared run-file checks, m=-5 ended in vector::_M_default_append,
// m=abc in "stoll", and m=0, trailing bytes or fast_accum=7 were read as if they were valid).
TEST(HarnessExternal, MalformedScaledMmFilesAreRefusedNamingTheRule) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "blockscale_harness_scaled_mm_bad";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string good_header =
      "blockscale-scaled-mm 1 library=torch config=tensor-wise m=2 n=1 k=128 scaling=tensor fast_accum=0 out=f32 sa_count=1 sb_count=1";
  const std::string body = std::string(384, '\x38') + std::string(8 + 8, '\0');  // A, B^T = 1.0; scales and D 0
  const auto write = [&](const std::string& name, const std::string& header, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << header << "\n" << bytes;
    return dir / name;
  };
  // The good header with `key`'s value replaced.
  const auto with = [&](const std::string& key, const std::string& value) {
    std::string h = good_header;
    const std::size_t at = h.find(" " + key + "=") + key.size() + 2, end = std::min(h.find(' ', at), h.size());
    return h.replace(at, end - at, value);
  };
  // The reference file reads: scales and D as written.
  const ExternalRun ok = read_scaled_mm_file(write("ok.scaled_mm", good_header, body));
  EXPECT_EQ(std::tuple(ok.m, ok.n, ok.k), std::tuple(2, 1, 128));
  EXPECT_EQ(ok.config, "tensor-wise");
  EXPECT_EQ(ok.a.size(), 256u);
  EXPECT_EQ(ok.d, (std::vector<std::uint32_t>{0, 0}));
  // A bf16 D: two-byte little-endian codes.
  const ExternalRun bf16 = read_scaled_mm_file(write("bf16.scaled_mm", with("out", "bf16"), body.substr(0, 392) + "\x80\x43\x01\xFF"));
  EXPECT_TRUE(bf16.bf16_output);
  EXPECT_EQ(bf16.d, (std::vector<std::uint32_t>{0x4380, 0xFF01}));
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"blockscale-sparse-mm 1 library=torch", body, "must start with 'blockscale-scaled-mm 1'"},
      {good_header + " stray", body, "header item 'stray' is not key=value"},
      {good_header + " k=256", body, "the header gives 'k' twice"},
      {with("m", "abc"), body, "m=abc must be a whole number from 1 to 1048576"},
      {with("m", "-5"), body, "m=-5 must be a whole number from 1 to 1048576"},
      {with("n", "0"), body, "n=0 must be a whole number from 1 to 1048576"},
      {with("k", "99999999999"), body, "k=99999999999 must be a whole number from 1 to 1048576"},
      // Past 2^40 (13 digits, like 2^40 itself, which is taken): the count's range, not its digits.
      {with("sa_count", "1099511627777"), body, "sa_count=1099511627777 must be a whole number from 1 to 1099511627776"},
      {with("sa_count", "99999999999999999999"), body, "sa_count=99999999999999999999 must be a whole number from 1"},
      {with("sa_count", "2"), body, "sa_count=2 and sb_count=1: tensor scaling of 2 x 1 x 128 needs 1 and 1"},
      {with("scaling", "rowwise"), body, "rowwise scaling of 2 x 1 x 128 needs 2 and 1"},
      {with("scaling", "blockwise"), body, "scaling=blockwise must be tensor, rowwise, block_1x128 or block_128x128"},
      {with("fast_accum", "7"), body, "fast_accum=7 must be 0 or 1"},
      {with("out", "f16"), body, "out=f16 must be f32 or bf16"},
      {with("out", "bf16"), body, "need 396 (trailing bytes)"},
      {good_header, body + "x", "need 400 (trailing bytes)"},
      {good_header, body.substr(0, 399), "need 400 (truncated)"},
      {"blockscale-scaled-mm 1 library=torch m=2", body, "the header lacks 'config'"},
      {"blockscale-scaled-mm 1 library=torch config=x error=refused", "x", "a refused call (error=) carries no arrays"},
  };
  for (const auto& [header, bytes, message] : cases) {
    SCOPED_TRACE(header);
    try {
      (void)read_scaled_mm_file(write("bad.scaled_mm", header, bytes));
      ADD_FAILURE() << "read; expected: " << message;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("bad.scaled_mm: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  const ExternalRun refused = read_scaled_mm_file(write("refused.scaled_mm", "blockscale-scaled-mm 1 library=torch config=x error=not_supported", ""));
  EXPECT_EQ(refused.error, "not supported");
  std::ofstream(dir / "empty.scaled_mm").close();
  EXPECT_THROW((void)read_scaled_mm_file(dir / "empty.scaled_mm"), std::invalid_argument);
  EXPECT_THROW((void)read_scaled_mm_runs(dir / "absent"), std::filesystem::filesystem_error);
  std::filesystem::remove_all(dir);
}


// ---- f64 DMMA targets: binary64 elements as word pairs (low word first) through the batches.

double f64_word(const std::vector<std::uint32_t>& w, std::size_t i) { return std::bit_cast<double>(f64_bits(&w[2 * i])); }

TEST(HarnessF64, TargetsAreWordPairsAndCasesAreDeterministic) {
  const InstructionTarget t = instruction_target("sm_90a mma.sync.aligned m16n8k16 f64 f64 f64");
  EXPECT_TRUE(t.f64);
  EXPECT_EQ(words_per_element(t), 2u);
  EXPECT_EQ(a_words(t), 16u * 16u * 2u);
  EXPECT_EQ(b_words(t), 8u * 16u * 2u);
  EXPECT_EQ(c_words(t), 16u * 8u * 2u);
  EXPECT_EQ(outputs_per_tile(t), 128u);
  EXPECT_EQ(output_format(t), OutputFormat::f64);
  EXPECT_FALSE(instruction_target("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16").f64);
  for (DataKind d : {DataKind::random, DataKind::realistic, DataKind::probes, DataKind::tiny}) {
    const TileBatch all = make_tiles(t, d, 3, 0, 12), part = make_tiles(t, d, 3, 5, 4);
    ASSERT_EQ(part.a.size(), 4 * a_words(t));
    EXPECT_TRUE(std::equal(part.a.begin(), part.a.end(), all.a.begin() + 5 * a_words(t))) << to_string(d);
    EXPECT_TRUE(std::equal(part.b.begin(), part.b.end(), all.b.begin() + 5 * b_words(t))) << to_string(d);
    EXPECT_TRUE(std::equal(part.c.begin(), part.c.end(), all.c.begin() + 5 * c_words(t))) << to_string(d);
  }
}

// The random set's window profiles (cases.cpp, f64_tile): in tiles 1 and 2 of every 8, A, B and C
// lie in one narrow window (A and B within 2^lo .. 2^(lo+4), C within 2^(2lo-2) .. 2^(2lo+9), so
// every step rounds); in tile 7, C lies anywhere in 2^-60 .. 2^61, far from the products too.
TEST(HarnessF64, RandomWindowTilesPutCWhereTheirProfileSays) {
  const InstructionTarget t = instruction_target("sm_90a mma.sync.aligned m16n8k16 f64 f64 f64");
  const std::size_t tiles = 64, na = std::size_t(t.m) * std::size_t(t.k), nc = std::size_t(t.m) * std::size_t(t.n);
  const TileBatch b = make_tiles(t, DataKind::random, 5, 0, tiles);
  for (std::size_t g = 0; g < tiles; ++g) {
    if (g % 8 != 1 && g % 8 != 2 && g % 8 != 7) continue;
    int a_lo = 2000, a_hi = -2000;
    for (std::size_t i = 0; i < na; ++i) {
      const int e = std::ilogb(f64_word(b.a, g * na + i));
      a_lo = std::min(a_lo, e);
      a_hi = std::max(a_hi, e);
    }
    ASSERT_LE(a_hi - a_lo, 3) << "tile " << g << ": A outside one window";
    for (std::size_t i = 0; i < nc; ++i) {
      const int e = std::ilogb(f64_word(b.c, g * nc + i));
      if (g % 8 == 7) {
        ASSERT_TRUE(e >= -60 && e <= 60) << "tile " << g << ": C at 2^" << e;
      } else {
        // A's exponents lie in lo .. lo + 3, so lo is at most A's lowest and at least its highest less 3.
        ASSERT_TRUE(e >= 2 * (a_hi - 3) - 2 && e <= 2 * a_lo + 8)
            << "tile " << g << ": C at 2^" << e << ", A at 2^" << a_lo << " .. 2^" << a_hi;
      }
    }
  }
}

// One step of the chain as DMMA computes it (docs/emulator.md, "f64 rows"; measured on an H200 and an
// H100): a NaN operand comes back quieted, B's before the accumulator's before A's; an invalid
// operation gives the negative default NaN. `nans` counts the steps with two or more NaN operands.
double dmma_step(double a, double b, double acc, std::size_t& nans) {
  const auto quieted = [](double x) { return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) | (1ull << 51)); };
  nans += (std::isnan(a) + std::isnan(b) + std::isnan(acc)) >= 2;
  for (double x : {b, acc, a})
    if (std::isnan(x)) return quieted(x);
  const double d = std::fma(a, b, acc);
  return std::isnan(d) ? std::bit_cast<double>(0xFFF8000000000000ull) : d;
}

// The model is the fma chain in k order from C, over A's rows and B's columns as the batch lays them
// out (B^T rows), with DMMA's NaN results; on the probe data a reversed chain differs, so the data can
// tell orders apart, and the probes' NaN operands meet in one fma often enough to tell whose payload
// is kept.
TEST(HarnessF64, TheModelIsTheChainInKOrderAndTheProbesTellOrdersApart) {
  for (const char* name : {"sm_90a mma.sync.aligned m8n8k4 f64 f64 f64", "sm_90a mma.sync.aligned m16n8k16 f64 f64 f64"}) {
    SCOPED_TRACE(name);
    const InstructionTarget t = instruction_target(name);
    const std::size_t M = std::size_t(t.m), N = std::size_t(t.n), K = std::size_t(t.k), tiles = 64;
    for (DataKind d : {DataKind::random, DataKind::probes, DataKind::tiny}) {
      const TileBatch b = make_tiles(t, d, 9, 0, tiles);
      const std::vector<std::uint32_t> model = emulate_tiles(t, b);
      std::size_t checked = 0, reversed_differs = 0, nan = 0, nans_meet = 0, unused = 0;
      for (std::size_t g = 0; g < tiles; ++g)
        for (std::size_t i = 0; i < M; ++i)
          for (std::size_t j = 0; j < N; ++j) {
            const std::size_t at = (g * M + i) * N + j;
            double chain = f64_word(b.c, at), reversed = chain;
            for (std::size_t k = 0; k < K; ++k)
              chain = dmma_step(f64_word(b.a, (g * M + i) * K + k), f64_word(b.b, (g * N + j) * K + k), chain, nans_meet);
            for (std::size_t k = K; k-- > 0;)
              reversed = dmma_step(f64_word(b.a, (g * M + i) * K + k), f64_word(b.b, (g * N + j) * K + k), reversed, unused);
            const double got = f64_word(model, at);
            EXPECT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(chain)) << to_string(d) << " tile " << g;
            if (std::isnan(chain)) {
              ++nan;
              continue;
            }
            reversed_differs += std::bit_cast<std::uint64_t>(reversed) != std::bit_cast<std::uint64_t>(chain);
            ++checked;
          }
      EXPECT_GT(checked, tiles * M * N / 2) << to_string(d);
      if (d == DataKind::probes) {
        EXPECT_GT(reversed_differs, checked / 20) << "the probes do not tell a reversed chain apart";
        EXPECT_GT(nans_meet, tiles) << "the probes' NaN operands rarely meet in one fma";
      }
      if (d == DataKind::random) {
        EXPECT_GT(nan, 0u) << "the random set reaches no NaN";
      }
    }
  }
}

// Every bit counts, NaN payloads included: the model gives DMMA's NaN results (docs/emulator.md).
TEST(HarnessF64, ComparisonCountsEveryBitNaNPayloadsIncluded) {
  const auto words = [](std::initializer_list<double> v) {
    std::vector<std::uint32_t> w;
    for (double x : v) {
      w.resize(w.size() + 2);
      put_f64_bits(&w[w.size() - 2], std::bit_cast<std::uint64_t>(x));
    }
    return w;
  };
  const double nan1 = std::bit_cast<double>(0x7FF8000000000001ull), nan2 = std::bit_cast<double>(0xFFF8000000000000ull);
  const std::vector<std::uint32_t> dev = words({1.0, nan1, -0.0, std::nextafter(1.0, 2.0), 0x1p-1074, nan1}),
                                   model = words({1.0, nan2, 0.0, 1.0, -0x1p-1074, 2.0});
  Stats s;
  compare_outputs(OutputFormat::f64, dev, model, 0, 1, 3, s, 8);
  EXPECT_EQ(s.cases, 2u);
  EXPECT_EQ(s.outputs, 6u);
  EXPECT_EQ(s.mismatches, 5u);  // the NaN pair with other payloads too
  EXPECT_EQ(s.zero_sign_mismatches, 1u);
  EXPECT_EQ(s.nan_mismatches, 1u);  // NaN against a number; two NaNs are 0 ulps apart
  EXPECT_EQ(s.worst_ulps, 2u);  // the smallest subnormals of either sign
  ASSERT_EQ(s.examples.size(), 5u);
  EXPECT_EQ(s.examples[0].device, 0x7FF8000000000001ull);
  EXPECT_EQ(s.examples[0].model, 0xFFF8000000000000ull);
  EXPECT_EQ(s.examples[2].case_index, 1u);
  EXPECT_EQ(s.examples[2].col, 0u);
  EXPECT_EQ(s.examples[2].device, std::bit_cast<std::uint64_t>(std::nextafter(1.0, 2.0)));
  EXPECT_EQ(hex_code(OutputFormat::f64, s.examples[2].device), "0x3FF0000000000001");
  EXPECT_EQ(ulp_distance(OutputFormat::f64, std::bit_cast<std::uint64_t>(-std::numeric_limits<double>::max()),
                         std::bit_cast<std::uint64_t>(std::numeric_limits<double>::max())),
            2 * 0x7FEFFFFFFFFFFFFFull);
  EXPECT_THROW(compare_outputs(OutputFormat::f64, std::vector<std::uint32_t>(5), std::vector<std::uint32_t>(5), 0, 1, 1, s, 1),
               std::invalid_argument);
}

TEST(HarnessF64, SelfTestAgreesAndCPlacementAndLastBitAreCaught) {
  ConformOptions o;
  o.outputs = 20000;
  o.pattern = "f64";
  o.data = {DataKind::random, DataKind::realistic, DataKind::probes, DataKind::tiny};
  {
    auto dev = make_emulator_device();
    const ConformReport r = run_conformance(*dev, o);
    ASSERT_EQ(r.targets.size(), 2u);
    for (const TargetResult& t : r.targets) {
      EXPECT_TRUE(t.error.empty()) << t.error;
      EXPECT_EQ(t.output, OutputFormat::f64);
      EXPECT_GE(t.total.outputs, 20000u);
      EXPECT_EQ(t.total.mismatches, 0u) << t.target.name();
    }
  }
  for (Perturbation p : {Perturbation::c_placement, Perturbation::output_lsb}) {
    auto dev = make_emulator_device(p);
    const ConformReport r = run_conformance(*dev, o);
    for (const TargetResult& t : r.targets) {
      EXPECT_GT(t.total.mismatches, 0u) << t.target.name() << " perturbed by " << to_string(p);
      if (p == Perturbation::output_lsb) {
        EXPECT_EQ(t.total.worst_ulps, 1u) << t.target.name();
      }
    }
    for (const FailureFile& f : failure_files(r, o)) check_failure_file(f);
  }
}

TEST(HarnessF64, ParameterOverridesAndDiscoveryAreRefused) {
  auto dev = make_emulator_device();
  std::vector<Target> targets = select_targets(*dev, "f64");
  ASSERT_FALSE(targets.empty());
  EXPECT_THROW(apply_model_overrides(targets, parse_model_overrides("f64@F=52")), std::invalid_argument);
  EXPECT_THROW(discover(*dev, instruction_target("sm_90a mma.sync.aligned m8n8k4 f64 f64 f64")), std::invalid_argument);
}

// ---- Sparse forms (mma.sp, wgmma.sp): A's stored values, their positions, the whole of B.

std::vector<InstructionTarget> sparse_self_test_targets() {
  std::vector<InstructionTarget> v;
  for (const Target& t : self_test_targets())
    if (t.kind == TargetKind::instruction && t.instruction.sparse) v.push_back(t.instruction);
  return v;
}

TEST(HarnessSparse, TilesFollowTheMetadataRulesAndAreDeterministic) {
  const std::vector<InstructionTarget> targets = sparse_self_test_targets();
  ASSERT_EQ(targets.size(), 5u);
  for (const InstructionTarget& t : targets) {
    ASSERT_EQ(t.group, t.a == Format::tfloat32 ? 2 : 4) << t.name;
    ASSERT_EQ(a_words(t), std::size_t(t.m) * std::size_t(t.k) / 2) << t.name;
    ASSERT_EQ(a_index_words(t), a_words(t)) << t.name;
    ASSERT_EQ(b_words(t), std::size_t(t.n) * std::size_t(t.k)) << t.name;
    std::set<std::pair<int, int>> pairs;
    for (DataKind d : {DataKind::random, DataKind::realistic, DataKind::probes, DataKind::tiny}) {
      const TileBatch all = make_tiles(t, d, 7, 0, 12);
      ASSERT_EQ(all.a.size(), 12 * a_words(t));
      ASSERT_EQ(all.a_index.size(), 12 * a_index_words(t));
      ASSERT_EQ(all.b.size(), 12 * b_words(t));
      for (std::size_t i = 0; i < all.a_index.size(); ++i) {
        ASSERT_LT(all.a_index[i], t.group) << t.name << " " << to_string(d);
        if (t.group == 4 && i % 2 == 1) {
          ASSERT_LT(all.a_index[i - 1], all.a_index[i]) << t.name << " " << to_string(d) << " at " << i;
          pairs.insert({all.a_index[i - 1], all.a_index[i]});
        }
      }
      const TileBatch part = make_tiles(t, d, 7, 5, 4);
      for (std::size_t i = 0; i < part.a.size(); ++i) ASSERT_EQ(part.a[i], all.a[5 * a_words(t) + i]) << t.name;
      for (std::size_t i = 0; i < part.a_index.size(); ++i)
        ASSERT_EQ(part.a_index[i], all.a_index[5 * a_index_words(t) + i]) << t.name;
      for (std::size_t i = 0; i < part.b.size(); ++i) ASSERT_EQ(part.b[i], all.b[5 * b_words(t) + i]) << t.name;
    }
    if (t.group == 4) {
      EXPECT_EQ(pairs.size(), 6u) << t.name << ": every 2:4 pattern occurs";
    }
  }
}

// Realistic data is pruned by magnitude: every kept value is at least as large as the row's other
// values in its group. The pruned ones are not in the batch; they are the logical tile's, which the
// same data set gives a dense target of the same name, formats and logical K.
TEST(HarnessSparse, RealisticDataKeepsTheLargestValuesOfEachGroup) {
  for (const InstructionTarget& t : sparse_self_test_targets()) {
    InstructionTarget logical = t;
    logical.sparse = false;
    logical.group = 0;
    const TileBatch dense = make_tiles(logical, DataKind::realistic, 3, 0, 6);
    const TileBatch sparse = make_tiles(t, DataKind::realistic, 3, 0, 6);
    EXPECT_EQ(sparse.b, dense.b) << t.name;
    const std::size_t K = std::size_t(t.k), S = K / 2, per_group = std::size_t(t.group) / 2;
    auto magnitude = [&](std::uint32_t w) {
      return t.a == Format::tfloat32 ? std::fabs(double(std::bit_cast<float>(w))) : std::fabs(to_double(t.a, w));
    };
    for (std::size_t row = 0; row < 6 * std::size_t(t.m); ++row) {
      for (std::size_t s = 0; s < S; ++s) {
        const std::size_t base = s / per_group * std::size_t(t.group);
        const std::uint32_t kept = dense.a[row * K + base + sparse.a_index[row * S + s]];
        ASSERT_EQ(sparse.a[row * S + s], kept) << t.name << " row " << row << " value " << s;
        for (std::size_t q = 0; q < std::size_t(t.group); ++q) {
          bool is_kept = false;
          for (std::size_t u = s / per_group * per_group; u < s / per_group * per_group + per_group; ++u)
            is_kept |= sparse.a_index[row * S + u] == q;
          if (!is_kept) {
            ASSERT_GE(magnitude(kept), magnitude(dense.a[row * K + base + q])) << t.name << " row " << row;
          }
        }
      }
    }
  }
}

// The probes data set is the dense form's probe set: each probe's diagonal outputs are that probe's
// dot product on the dense form, whatever the pruned B rows hold (random codes, NaN and Inf among
// them).
TEST(HarnessSparse, ProbesAreTheDenseFormsProbesWithPrunedRowsIgnored) {
  for (const InstructionTarget& t : sparse_self_test_targets()) {
    const InstructionTarget dense = instruction_target(t.model.dense_form().name());
    const std::vector<DotCase> dots = probe_set(dense);
    ASSERT_EQ(probe_tiles(t), probe_tiles(dense)) << t.name;
    const TileBatch tiles = make_tiles(t, DataKind::probes, 11, 0, probe_tiles(t));
    const std::vector<std::uint32_t> diag = unpack_dots(dense, emulate_tiles(t, tiles), dots.size());
    for (std::size_t i = 0; i < dots.size(); ++i) {
      ASSERT_EQ(diag[i], emulator::dot(dense.model, dots[i].a, dots[i].b, dots[i].c)) << t.name << ": " << dots[i].label;
    }
    std::size_t special_pruned = 0;
    const std::size_t K = std::size_t(t.k), S = K / 2, per_group = std::size_t(t.group) / 2;
    for (std::size_t j = 0; j < tiles.tiles * std::size_t(t.n); ++j) {
      const std::size_t g = j / std::size_t(t.n), col = j % std::size_t(t.n);
      const std::size_t row = g * std::size_t(t.m) + col % std::min<std::size_t>(std::size_t(t.m), std::size_t(t.n));
      for (std::size_t q = 0; q < K; ++q) {
        bool kept = false;
        for (std::size_t s = q / std::size_t(t.group) * per_group; s < (q / std::size_t(t.group) + 1) * per_group; ++s)
          kept |= tiles.a_index[row * S + s] == q % std::size_t(t.group);
        const ValueClass c = t.b == Format::tfloat32 ? classify(Format::float32, tiles.b[j * K + q])
                                                      : classify(t.b, tiles.b[j * K + q]);
        if (!kept && (c == ValueClass::nan || c == ValueClass::infinite)) ++special_pruned;
      }
    }
    EXPECT_GT(special_pruned, 0u) << t.name;
  }
}

// Every sparse target agrees with the self-test device, which gathers B itself and computes each
// output by emulator::fdpa; a perturbed device is caught on each, and the failure files (golden
// sparse instruction sets: fields a, i, b, c) reproduce the mismatches through `golden verify`.
TEST(HarnessSparse, SelfTestAgreesPerturbationsAreCaughtAndFailureFilesReproduce) {
  ConformOptions o;
  o.outputs = 6000;
  o.pattern = "\\.sp";
  o.data = {DataKind::random, DataKind::realistic, DataKind::probes, DataKind::tiny};
  {
    auto dev = make_emulator_device();
    const ConformReport r = run_conformance(*dev, o);
    ASSERT_EQ(r.targets.size(), 5u);
    for (const TargetResult& t : r.targets) {
      EXPECT_TRUE(t.error.empty()) << t.error;
      EXPECT_GE(t.total.outputs, 6000u);
      EXPECT_EQ(t.total.mismatches, 0u) << t.target.name();
    }
  }
  for (Perturbation p : {Perturbation::fraction_bits, Perturbation::output_rounding}) {
    auto dev = make_emulator_device(p);
    const ConformReport r = run_conformance(*dev, o);
    for (const TargetResult& t : r.targets) {
      EXPECT_GT(t.total.mismatches, 0u) << t.target.name() << " perturbed by " << to_string(p);
    }
    const std::vector<FailureFile> files = failure_files(r, o);
    ASSERT_FALSE(files.empty());
    for (const FailureFile& f : files) {
      EXPECT_NE(golden::fields_string(f.golden.header.fields).find(" i:u8["), std::string::npos);
      check_failure_file(f);
    }
  }
}

TEST(HarnessSparse, DiscoveryPointsToTheDenseForm) {
  auto dev = make_emulator_device();
  try {
    discover(*dev, instruction_target("sm_90a wgmma.mma_async.sp m64n8k64 f32 e5m2 e4m3"));
    FAIL() << "discovery of a sparse form must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e4m3"), std::string::npos)
        << e.what();
  }
}

// Values outside the enums are refused by name (from an audit, 2026-11-30: exact_code, output_format
// and gemm_schedule read the format table at 200; the product candidates threw map::at; unit_scale,
// the perturbations, data sets, GEMM sizes and output formats took such values as another one).
TEST(HarnessRules, ValuesOutsideTheEnumsAreRefused) {
  const Format unknown = static_cast<Format>(200);
  EXPECT_THROW((void)exact_code(unknown, 1.0), std::invalid_argument);
  EXPECT_THROW((void)output_format(unknown), std::invalid_argument);
  EXPECT_THROW((void)unit_scale(static_cast<Format>(11)), std::invalid_argument);
  EXPECT_THROW((void)unit_scale(Format::float32), std::invalid_argument);
  EXPECT_THROW((void)words_per_output(static_cast<OutputFormat>(4)), std::invalid_argument);
  EXPECT_THROW((void)ulp_distance(static_cast<OutputFormat>(4), 1, 2), std::invalid_argument);
  EXPECT_THROW((void)make_emulator_device(static_cast<Perturbation>(7)), std::invalid_argument);
  EXPECT_THROW((void)case_seed(1, "t", static_cast<DataKind>(4), 0), std::invalid_argument);
  EXPECT_THROW((void)gemm_problem_outputs(0, static_cast<GemmSizes>(2)), std::invalid_argument);
  GemmTarget t;
  t.name = "bad";
  t.a = unknown;
  EXPECT_THROW((void)gemm_schedule(t), std::invalid_argument);
  for (const auto& change : std::vector<std::function<void(GemmTarget&)>>{
           [](GemmTarget& g) { g.recipe = static_cast<GemmRecipe>(3); },
           [](GemmTarget& g) { g.schedule_kind = static_cast<GemmSchedule>(2); },
           [](GemmTarget& g) { g.fma = static_cast<emulator::PromotionFma>(3); }}) {
    GemmTarget g;
    g.name = "bad";
    change(g);
    EXPECT_THROW((void)gemm_schedule(g), std::invalid_argument);
    // A problem that is valid for the default target, refused for its changed enum alone.
    GemmTarget valid;
    valid.name = "bad";
    const GemmProblem p = make_gemm_problem(valid, DataKind::random, 1, 0, GemmSizes::small);
    EXPECT_NO_THROW(validate_problem(valid, p));
    EXPECT_NE(test::invalid_argument_message([&] { validate_problem(g, p); }).find("is not a"), std::string::npos);
  }
}

// built_with_gpu says whether this build has the GPU kernels (CMake's blockscale_gpu target), and
// make_gpu_device's refusal says why there is no device: no kernels in the build, or no GPU.
TEST(GpuDevice, TheBuildAndTheMachineSayWhyThereIsNoDevice) {
  EXPECT_EQ(built_with_gpu(), BLOCKSCALE_TEST_BUILT_WITH_GPU != 0);
  std::string why_not;
  const std::unique_ptr<Device> device = make_gpu_device(why_not);
  if (!built_with_gpu()) {
    EXPECT_EQ(device, nullptr);
    EXPECT_NE(why_not.find("built without CUDA"), std::string::npos) << why_not;
  } else if (device == nullptr) {
    EXPECT_NE(why_not.find("no CUDA GPU is present"), std::string::npos) << why_not;
  } else {
    EXPECT_TRUE(why_not.empty()) << why_not;
  }
}

}  // namespace
}  // namespace blockscale::harness
