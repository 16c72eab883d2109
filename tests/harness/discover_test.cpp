// SPDX-License-Identifier: Apache-2.0
// Discovery against hypothetical devices: a device built here, outside the emulator, whose dot
// products are a T-FDPA with chosen fused width L, fraction bits F and output rounding (any of
// RZ, RD, RU, RA, RNE, RNA, RNZ, and RNO, ties to odd, which discovery has no name for, at FP32,
// E8M13 or FP16 precision). No Hopper unit rounds other than RZ or RNE, so the emulator's
// self-test device cannot show what discovery reports for the other modes; these tests make every
// branch of its rounding classification run and check the parameters it reads back against the
// ones the device was built with.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "blockscale/harness.h"

namespace blockscale::harness {
namespace {

enum class Mode { RZ, RD, RU, RA, RNE, RNA, RNZ, RNO };

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::RZ: return "RZ";
    case Mode::RD: return "RD";
    case Mode::RU: return "RU";
    case Mode::RA: return "RA";
    case Mode::RNE: return "RNE";
    case Mode::RNA: return "RNA";
    case Mode::RNZ: return "RNZ";
    case Mode::RNO: return "RNO";
  }
  return "?";
}

struct Hypothesis {
  int L = 16;              // products per fused step; K > L chains steps, each rounded to the output
  int F = 25;              // fraction bits kept below the alignment exponent (truncation, b.3)
  Mode mode = Mode::RZ;    // rounding of each step's sum to the output
  int output_bits = 23;    // fraction bits of each step's result (23 FP32, 13 E8M13, 10 FP16)
  bool c_after = false;    // C left out of the fused sum and added to its result, rounded in `mode`
};

// sign * q * 2^e rounded to `bits` fraction bits in mode m, as a double (exact: q < 2^62, e small).
double round_to_bits(bool negative, std::uint64_t q, int e, int bits, Mode m) {
  if (q == 0) return negative ? -0.0 : 0.0;
  const int width = std::bit_width(q);
  const int drop = width - (bits + 1);
  if (drop > 0) {
    const std::uint64_t rem = q & ((std::uint64_t{1} << drop) - 1), half = std::uint64_t{1} << (drop - 1);
    q >>= drop;
    e += drop;
    bool up = false;
    switch (m) {
      case Mode::RZ: up = false; break;
      case Mode::RD: up = negative && rem != 0; break;
      case Mode::RU: up = !negative && rem != 0; break;
      case Mode::RA: up = rem != 0; break;
      case Mode::RNE: up = rem > half || (rem == half && (q & 1) != 0); break;
      case Mode::RNA: up = rem >= half; break;
      case Mode::RNZ: up = rem > half; break;
      case Mode::RNO: up = rem > half || (rem == half && (q & 1) == 0); break;
    }
    q += up ? 1 : 0;
  }
  const double v = std::ldexp(static_cast<double>(q), e);
  return negative ? -v : v;
}

// v rounded to `bits` fraction bits in mode m (v exact in double).
double round_to_bits(double v, int bits, Mode m) {
  int e = 0;
  const double f = std::frexp(std::fabs(v), &e);  // |v| = f * 2^e, f in [0.5, 1)
  return round_to_bits(std::signbit(v), static_cast<std::uint64_t>(std::ldexp(f, 53)), e - 53, bits, m);
}

// The device: every output element of every tile is one hypothetical dot product. Operand products
// are exact in double (the formats used here have at most 11 significand bits); each product is
// aligned on e_a + e_b (unnormalised, b.2), every term of a step is truncated to a multiple of
// 2^(e_max - F) and the integer sum rounded once. Overflow, underflow below the output's normal
// range and special values are outside what these tests ask: any NaN or Inf input gives NaN.
class HypotheticalDevice final : public Device {
 public:
  explicit HypotheticalDevice(Hypothesis h) : h_(h) {}

  DeviceDescription describe() const override {
    DeviceDescription d;
    d.kind = "test";
    d.name = "hypothetical T-FDPA device";
    return d;
  }
  std::vector<Target> targets() const override { return {}; }
  std::vector<std::uint32_t> run(const GemmTarget&, const GemmProblem&) override {
    throw std::invalid_argument("the hypothetical device computes instructions only");
  }

  std::vector<std::uint32_t> run(const InstructionTarget& t, const TileBatch& in) override {
    const std::size_t K = static_cast<std::size_t>(t.k), M = static_cast<std::size_t>(t.m),
                      N = static_cast<std::size_t>(t.n);
    std::vector<std::uint32_t> out(in.tiles * M * N);
    for (std::size_t g = 0; g < in.tiles; ++g)
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
          const std::uint32_t* a = &in.a[(g * M + i) * K];
          const std::uint32_t* b = &in.b[(g * N + j) * K];
          const std::uint32_t c = in.c[(g * M + i) * N + j];
          out[(g * M + i) * N + j] = dot(t, a, b, c);
        }
    return out;
  }

 private:
  std::uint32_t dot(const InstructionTarget& t, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t c) const {
    const std::uint32_t nan = t.acc == Format::float16 ? 0x7FFFu : 0x7FFFFFFFu;
    const double c_value = to_double(t.acc, c);
    if (!std::isfinite(c_value)) return nan;
    double acc = h_.c_after ? 0.0 : c_value;
    for (int k0 = 0; k0 < t.k; k0 += h_.L) {
      struct Term {
        double value;
        int exponent;
      };
      std::vector<Term> terms;
      if (acc != 0) terms.push_back({acc, std::ilogb(acc)});
      for (int k = k0; k < std::min(t.k, k0 + h_.L); ++k) {
        const double x = to_double(t.a, a[k]), y = to_double(t.b, b[k]);
        if (!std::isfinite(x) || !std::isfinite(y)) return nan;
        if (x != 0 && y != 0) terms.push_back({x * y, std::ilogb(x) + std::ilogb(y)});
      }
      if (terms.empty()) {
        acc = 0.0;
        continue;
      }
      int e_max = terms[0].exponent;
      for (const Term& s : terms) e_max = std::max(e_max, s.exponent);
      std::int64_t sum = 0;  // in units of 2^(e_max - F); each term < 2^(F + 2)
      for (const Term& s : terms) sum += static_cast<std::int64_t>(std::trunc(std::ldexp(s.value, h_.F - e_max)));
      acc = round_to_bits(sum < 0, static_cast<std::uint64_t>(sum < 0 ? -sum : sum), e_max - h_.F, h_.output_bits,
                          h_.mode);
    }
    // The sum of two outputs is exact in double while their exponents lie within 29 binades of
    // each other, which holds for the C-placement probe (C = 128, 0.75 ulp of it).
    if (h_.c_after) acc = round_to_bits(acc + c_value, h_.output_bits, h_.mode);
    if (t.acc == Format::float16) return convert(Format::float16, acc);
    if (std::fabs(acc) >= 0x1p128) return std::signbit(acc) ? 0xFF800000u : 0x7F800000u;  // the overflow probe
    return std::bit_cast<std::uint32_t>(static_cast<float>(acc));
  }

  Hypothesis h_;
};

const DiscoveryItem& item(const Discovery& d, const std::string& parameter) {
  for (const DiscoveryItem& i : d.items)
    if (i.parameter == parameter) return i;
  throw std::logic_error("discovery reported no '" + parameter + "'");
}

constexpr const char* kBf16 = "sm_90a wgmma.mma_async m64n8k16 f32 bf16 bf16";  // T-FDPA L=16 F=25 RZ-FP32
constexpr const char* kF16 = "sm_90a wgmma.mma_async m64n8k16 f16 f16 f16";     // T-FDPA L=16 F=25 RNE-FP16

// Every rounding mode at FP32 precision is named as the device was built, and only the table's
// RZ agrees; the fused width and F read back as built.
TEST(HarnessDiscoverHypothetical, NamesEveryRoundingModeAtFp32) {
  const InstructionTarget t = instruction_target(kBf16);
  for (Mode m : {Mode::RZ, Mode::RD, Mode::RU, Mode::RA, Mode::RNE, Mode::RNA, Mode::RNZ}) {
    SCOPED_TRACE(mode_name(m));
    HypotheticalDevice dev({.L = 16, .F = 25, .mode = m, .output_bits = 23});
    const Discovery d = discover(dev, t);
    EXPECT_EQ(item(d, "output fraction bits").discovered, "23") << discovery_table(d);
    const DiscoveryItem& r = item(d, "output rounding");
    EXPECT_EQ(r.discovered, std::string(mode_name(m)) + "-FP32") << r.evidence;
    EXPECT_EQ(r.verdict, m == Mode::RZ ? Verdict::agrees : Verdict::disagrees);
    EXPECT_EQ(item(d, "fused width L").verdict, Verdict::agrees) << discovery_table(d);
    EXPECT_EQ(item(d, "fraction bits F").discovered, "25");
    EXPECT_EQ(item(d, "C placement").verdict, Verdict::agrees);
    EXPECT_EQ(item(d, "product normalisation").verdict, Verdict::agrees);
  }
}

// A tie rule discovery has no name for (ties to odd: 0.5 ulp above the even V0 goes up, 1.5 ulp
// stays at the odd 1) is reported as an unnamed round-to-nearest, not as the nearest named one.
TEST(HarnessDiscoverHypothetical, NamesNoModeForTiesToOdd) {
  HypotheticalDevice dev({.L = 16, .F = 25, .mode = Mode::RNO, .output_bits = 23});
  const Discovery d = discover(dev, instruction_target(kBf16));
  const DiscoveryItem& r = item(d, "output rounding");
  EXPECT_EQ(r.discovered, "RN?-FP32") << r.evidence;
  EXPECT_EQ(r.verdict, Verdict::disagrees);
  EXPECT_NE(r.evidence.find("ties 0.5/1.5 -> 1/1"), std::string::npos) << r.evidence;
}

// The output precision is read before the mode: E8M13 and an unnamed 18-bit precision.
TEST(HarnessDiscoverHypothetical, NamesReducedOutputPrecisions) {
  const InstructionTarget t = instruction_target(kBf16);
  HypotheticalDevice e8m13({.L = 16, .F = 25, .mode = Mode::RD, .output_bits = 13});
  Discovery d = discover(e8m13, t);
  EXPECT_EQ(item(d, "output fraction bits").discovered, "13");
  EXPECT_EQ(item(d, "output fraction bits").verdict, Verdict::disagrees);
  EXPECT_EQ(item(d, "output rounding").discovered, "RD-E8M13");
  HypotheticalDevice p18({.L = 16, .F = 25, .mode = Mode::RNA, .output_bits = 18});
  d = discover(p18, t);
  EXPECT_EQ(item(d, "output fraction bits").discovered, "18");
  EXPECT_EQ(item(d, "output rounding").discovered, "RNA-p18");
  EXPECT_EQ(item(d, "output rounding").verdict, Verdict::disagrees);
}

// An f16 accumulator: the table's RNE-FP16 agrees, the other modes are named and disagree.
TEST(HarnessDiscoverHypothetical, NamesRoundingModesAtFp16) {
  const InstructionTarget t = instruction_target(kF16);
  for (Mode m : {Mode::RNE, Mode::RZ, Mode::RU, Mode::RNZ}) {
    SCOPED_TRACE(mode_name(m));
    HypotheticalDevice dev({.L = 16, .F = 25, .mode = m, .output_bits = 10});
    const Discovery d = discover(dev, t);
    EXPECT_EQ(item(d, "output fraction bits").discovered, "10") << discovery_table(d);
    const DiscoveryItem& r = item(d, "output rounding");
    EXPECT_EQ(r.discovered, std::string(mode_name(m)) + "-FP16") << r.evidence;
    EXPECT_EQ(r.verdict, m == Mode::RNE ? Verdict::agrees : Verdict::disagrees);
  }
}

// A narrower fused width and a smaller F are read back and disagree with the table.
TEST(HarnessDiscoverHypothetical, ReadsBackFusedWidthAndFractionBits) {
  const InstructionTarget t = instruction_target(kBf16);
  HypotheticalDevice narrow({.L = 8, .F = 25, .mode = Mode::RZ, .output_bits = 23});
  Discovery d = discover(narrow, t);
  EXPECT_EQ(item(d, "fused width L").discovered, "L = 8 (k = 0..7, then chained)");
  EXPECT_EQ(item(d, "fused width L").verdict, Verdict::disagrees);
  EXPECT_EQ(item(d, "fraction bits F").discovered, "25");
  // L = 2: no slot past the pair is aligned with it, and the sweep went deeper than F, so that is
  // a finding (not a narrow format); F then comes from C, which the first step holds.
  HypotheticalDevice pairs({.L = 2, .F = 25, .mode = Mode::RZ, .output_bits = 23});
  d = discover(pairs, t);
  EXPECT_EQ(item(d, "fused width L").discovered, "L = 2 (k = 0..1, then chained)") << discovery_table(d);
  EXPECT_EQ(item(d, "fused width L").verdict, Verdict::disagrees);
  EXPECT_EQ(item(d, "fraction bits F").discovered, "25");
  EXPECT_EQ(item(d, "C placement").verdict, Verdict::agrees);
  HypotheticalDevice short_f({.L = 16, .F = 21, .mode = Mode::RZ, .output_bits = 23});
  d = discover(short_f, t);
  EXPECT_EQ(item(d, "fraction bits F").discovered, "21");
  EXPECT_EQ(item(d, "fraction bits F").verdict, Verdict::disagrees);
  // With F = 21 every 4 + 2^-j the probes can place (j <= F + 2) is kept: the output holds at
  // least that many bits, which the table's 23 does not contradict.
  EXPECT_EQ(item(d, "output fraction bits").discovered, ">= 23");
  EXPECT_EQ(item(d, "output fraction bits").verdict, Verdict::consistent);
}

// C added after the products: truncated (RZ) and rounded to nearest (RNE) are told apart by the
// emulation probe (C = 128 plus 0.75 ulp of it in one product, numerics.md d.3-1); both disagree
// with the table's fused C.
TEST(HarnessDiscoverHypothetical, TellsHowCIsAddedAfterTheProducts) {
  const InstructionTarget t = instruction_target(kBf16);
  HypotheticalDevice truncated({.L = 16, .F = 25, .mode = Mode::RZ, .output_bits = 23, .c_after = true});
  Discovery d = discover(truncated, t);
  EXPECT_EQ(item(d, "C placement").discovered, "added after the products, truncated") << discovery_table(d);
  EXPECT_EQ(item(d, "C placement").verdict, Verdict::disagrees);
  HypotheticalDevice nearest({.L = 16, .F = 25, .mode = Mode::RNE, .output_bits = 23, .c_after = true});
  d = discover(nearest, t);
  EXPECT_EQ(item(d, "C placement").discovered, "added after the products, rounded to nearest (FADD/HADD)");
  EXPECT_EQ(item(d, "C placement").verdict, Verdict::disagrees);
  EXPECT_EQ(item(d, "fraction bits F").discovered, "25");
}

// Block-scaled kinds against the emulator's self-test device: F, C placement, the scales' and the
// products' part in the alignment exponent and the output rounding are read from C against a
// scaled pair and agree with each row (ST-FDPA aligns on scale and product exponents, GST-FDPA on
// the group's scales alone); F - 1 on the device is seen as F - 1.
TEST(HarnessDiscoverBlockScaled, ReadsEveryBlockScaledRow) {
  auto exact = make_emulator_device();
  auto short_f = make_emulator_device(Perturbation::fraction_bits);
  const std::string mx8 = "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 ";
  const std::string sm120 = "sm_120a mma.sync.aligned.kind::";
  for (const std::string& name : {
           mx8 + "e4m3 e4m3 ue8m0", mx8 + "e5m2 e5m2 ue8m0", mx8 + "e4m3 e2m1 ue8m0", mx8 + "e2m3 e3m2 ue8m0",
           mx8 + "e2m1 e2m1 ue8m0",
           std::string("sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 m128n8k64 f32 e2m1 e2m1 ue8m0"),
           std::string("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block32 m128n8k64 f32 e2m1 e2m1 ue8m0"),
           std::string("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue8m0"),
           std::string("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3"),
           sm120 + "mxf8f6f4.block_scale.block32 m16n8k32 f32 e5m2 e4m3 ue8m0",
           sm120 + "mxf4nvf4.block_scale.block16 m16n8k64 f32 e2m1 e2m1 ue4m3",
       }) {
    SCOPED_TRACE(name);
    const InstructionTarget t = instruction_target(name);
    const bool gst = t.model.params().algorithm == emulator::Algorithm::gst_fdpa;
    const Discovery d = discover(*exact, t);
    EXPECT_FALSE(d.disagrees()) << discovery_table(d);
    EXPECT_EQ(item(d, "fraction bits F").discovered, gst ? "35" : "25") << discovery_table(d);
    EXPECT_EQ(item(d, "C placement").verdict, Verdict::agrees);
    EXPECT_EQ(item(d, "scales in the alignment exponent").verdict, Verdict::agrees);
    EXPECT_EQ(item(d, "alignment exponent").discovered,
              gst ? "scale exponents alone, group sums exact (GST-FDPA, b.5)" : "scale and product exponents (ST-FDPA, b.4)");
    EXPECT_EQ(item(d, "output rounding").discovered, "RZ-FP32") << discovery_table(d);
    EXPECT_EQ(item(d, "output rounding").verdict, Verdict::agrees);
    // The fused width: from the slot sweep where the operands span F binades (e4m3, e5m2), from
    // per-block scales of 2^-F and 2^-(F+1) where the scales can (ue8m0, two or more blocks).
    const int blocks = t.k / t.block;
    const std::string width = item(d, "fused width L").discovered;
    if (t.a == Format::float8_e5m2 || (t.a == Format::float8_e4m3fn && t.b == Format::float8_e4m3fn)) {
      EXPECT_EQ(width, "L = 32 (all of K fused)");
    } else if (blocks >= 2 && t.scale == Format::float8_e8m0fnu) {
      EXPECT_EQ(width, blocks == 4 ? "blocks {0,1,2,3} of 4 fused (L = 64)" : "blocks {0,1} of 2 fused (L = 64)");
    } else {
      EXPECT_EQ(item(d, "fused width L").verdict, Verdict::undetermined) << width;
    }
    // The block-scale special values, device bits next to the model's (d.3-9).
    EXPECT_EQ(item(d, "NaN scale in SFA, 1 * 1 + 0.75").discovered, "0x7FFFFFFF");
    EXPECT_EQ(item(d, "NaN scale in SFB, 1 * 1 + 0.75").discovered, "0x7FFFFFFF");
    if (t.scale == Format::float8_e8m0fnu) {
      EXPECT_EQ(item(d, "scale 2^-127 (code 0) in SFA, 1 * 1 + 0.75").discovered, "0x3F400000");  // 0.75
    } else {
      EXPECT_EQ(item(d, "scale 0xB8 (0x38 = 1 with bit 7 set) in SFA, 1 * 1 + 0.75").discovered, "0x3FE00000");
    }
    if (gst && t.scale == Format::float8_e8m0fnu) {
      // MS-v2: the cancelled group keeps 2^60 and C is truncated away, 2^-23 above 1 or not.
      EXPECT_EQ(item(d, "group 0 cancelling (+-6) under a large scale, C = 1").discovered, "0x00000000");
      EXPECT_EQ(item(d, "group 0 cancelling (+-6) under a large scale, C = 1 + 2^-23").discovered, "0x00000000");
    } else if (gst) {
      // Under 448 = 1.75 x 2^8 the grid is 2^(8 - F) = 2^-27: C keeps its last bit.
      EXPECT_EQ(item(d, "group 0 cancelling (+-6) under a large scale, C = 1").discovered, "0x3F800000");
      EXPECT_EQ(item(d, "group 0 cancelling (+-6) under a large scale, C = 1 + 2^-23").discovered, "0x3F800001");
    }
    const Discovery wrong = discover(*short_f, t);
    EXPECT_EQ(item(wrong, "fraction bits F").discovered, gst ? "34" : "24") << discovery_table(wrong);
    EXPECT_EQ(item(wrong, "fraction bits F").verdict, Verdict::disagrees);
  }
}

// The Inf probes exist only where the A format has an Inf (e5m2; e4m3's 0x78 is 256, a finite
// value): there they give the NaN both ways; for e4m3 none is asked.
TEST(HarnessDiscoverSpecialValues, AskInfOnlyOfFormatsThatHaveIt) {
  auto dev = make_emulator_device();
  const char* inf_probes[] = {"Inf * 0", "+Inf and -Inf products", "-Inf product, C = 1"};
  const Discovery e5m2 = discover(*dev, instruction_target("sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e5m2"));
  for (const char* p : inf_probes) {
    EXPECT_EQ(item(e5m2, p).discovered, p == inf_probes[2] ? "0xFF800000" : "0x7FFFFFFF") << p;
    EXPECT_EQ(item(e5m2, p).verdict, Verdict::agrees) << p;
  }
  const Discovery e4m3 = discover(*dev, instruction_target("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e5m2"));
  for (const DiscoveryItem& i : e4m3.items) EXPECT_EQ(i.parameter.find("Inf"), std::string::npos) << i.parameter;
}

// A candidate row that chains the four ue8m0 blocks in two steps of 32 (L = 32) is told apart from
// the device, which fuses all four.
TEST(HarnessDiscoverBlockScaled, FlagsACandidateThatChainsTheBlocks) {
  auto dev = make_emulator_device();
  InstructionTarget t = instruction_target(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue8m0");
  emulator::FdpaParams candidate = t.model.params();
  apply_param_override(candidate, "L=32");
  t.model_params = candidate;
  t.model_override = "L=32";
  const Discovery d = discover(*dev, t);
  const DiscoveryItem& width = item(d, "fused width L");
  EXPECT_EQ(width.discovered, "blocks {0,1,2,3} of 4 fused (L = 64)") << discovery_table(d);
  EXPECT_EQ(width.table, "blocks {0,1} of 4 fused");
  EXPECT_EQ(width.verdict, Verdict::disagrees);
  EXPECT_EQ(item(d, "fraction bits F").verdict, Verdict::agrees);
}

}  // namespace
}  // namespace blockscale::harness
