// SPDX-License-Identifier: Apache-2.0
// The targeted probes of ../shared/docs/numerics.md d.3, with the outputs numerics.md states for each
// architecture. Each probe is one dot product (row 0 / column 0 of an instruction); every value
// below is exact in its format.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"

namespace blockscale::emulator {
namespace {

std::uint32_t code(Format f, double v) {
  if (f == Format::tfloat32) return std::bit_cast<std::uint32_t>(static_cast<float>(v));
  const std::uint32_t c = convert(f, v, presets::ieee());
  if (to_double(f, c) != v) throw std::logic_error(std::to_string(v) + " is not exact in " + to_string(f));
  return c;
}

// An e8m0 scale code for 2^e.
std::uint32_t e8m0(int e) { return static_cast<std::uint32_t>(e + 127); }

struct Dot {
  Dot() = default;
  Dot(std::vector<double> a_, std::vector<double> b_, double c_, std::vector<std::uint32_t> sa_ = {},
      std::vector<std::uint32_t> sb_ = {})
      : a(std::move(a_)), b(std::move(b_)), c(c_), sa(std::move(sa_)), sb(std::move(sb_)) {}
  std::vector<double> a, b;  // leading products; the rest of K is zero
  double c = 0;
  std::vector<std::uint32_t> sa, sb;  // scale codes per block (default: 1.0)
};

// The instruction's output as a double (f16 outputs widened).
double run(const std::string& name, const Dot& d) {
  const Instruction ins = parse_instruction(name);
  const Format fa = *format_of(ins.a), fb = *format_of(ins.b), acc = accumulator_format(ins.params().rounding);
  std::vector<std::uint32_t> a(ins.k, 0), b(ins.k, 0);
  for (std::size_t k = 0; k < d.a.size(); ++k) a[k] = code(fa, d.a[k]);
  for (std::size_t k = 0; k < d.b.size(); ++k) b[k] = code(fb, d.b[k]);
  std::vector<std::uint32_t> sa, sb;
  if (ins.block_scaled()) {
    const std::uint32_t one = ins.scale_type() == Type::ue8m0 ? e8m0(0) : 0x38u;
    sa.assign(ins.k / ins.block(), one);
    sb.assign(ins.k / ins.block(), one);
    for (std::size_t t = 0; t < d.sa.size(); ++t) sa[t] = d.sa[t];
    for (std::size_t t = 0; t < d.sb.size(); ++t) sb[t] = d.sb[t];
  }
  return to_double(acc, dot(ins, a, b, code(acc, d.c), sa, sb));
}

std::uint32_t run_bits(const std::string& name, const Dot& d, const FdpaParams* override_params = nullptr) {
  const Instruction ins = parse_instruction(name);
  const Format fa = *format_of(ins.a), fb = *format_of(ins.b), acc = accumulator_format(ins.params().rounding);
  std::vector<std::uint32_t> a(ins.k, 0), b(ins.k, 0);
  for (std::size_t k = 0; k < d.a.size(); ++k) a[k] = code(fa, d.a[k]);
  for (std::size_t k = 0; k < d.b.size(); ++k) b[k] = code(fb, d.b[k]);
  DotOperands ops;
  ops.a_format = fa;
  ops.b_format = fb;
  ops.a = a;
  ops.b = b;
  ops.c = code(acc, d.c);
  std::vector<std::uint32_t> sa, sb;
  if (ins.block_scaled()) {
    const std::uint32_t one = ins.scale_type() == Type::ue8m0 ? e8m0(0) : 0x38u;
    sa.assign(ins.k / ins.block(), one);
    sb.assign(ins.k / ins.block(), one);
    for (std::size_t t = 0; t < d.sa.size(); ++t) sa[t] = d.sa[t];
    for (std::size_t t = 0; t < d.sb.size(); ++t) sb[t] = d.sb[t];
    ops.scale_format = *format_of(ins.scale_type());
    ops.block = ins.block();
    ops.scale_a = sa;
    ops.scale_b = sb;
  }
  return fdpa(override_params ? *override_params : ins.params(), ops);
}

double pow2(int e) { return std::ldexp(1.0, e); }

// d.3-1: C = 128 and one product 3*2^-9 * 2^-9 = 0.75 ulp(128). The emulated mma.sync (RNE FADD of C)
// gives 128 + 2^-16; every native fused RZ path gives 128.
TEST(EmulatorProbes, EmulationProbeSeparatesEmulatedFp8MmaSync) {
  const Dot d{{3 * pow2(-9)}, {pow2(-9)}, 128.0};
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3", d), 128.0 + pow2(-16));
  EXPECT_EQ(run("sm_100a mma.sync.aligned m16n8k32 f32 e4m3 e4m3", d), 128.0 + pow2(-16));
  EXPECT_EQ(run("sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3", d), 128.0);
  EXPECT_EQ(run("sm_120a mma.sync.aligned m16n8k32 f32 e4m3 e4m3", d), 128.0);
  EXPECT_EQ(run("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", d), 128.0);
  EXPECT_EQ(run("sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m64n8k32 f32 e4m3 e4m3", d), 128.0);
}

// d.3-2: the "Table 8" vector: c = 2^23, a = [-2^13, -0.5, -0.25, -0.125], b = [2^10, 1, 1, 1].
// Exact -0.875; F = 23 keeps nothing, 24 keeps -0.5, 25 keeps -0.75, 13 nothing, GST (F = 35) all.
TEST(EmulatorProbes, Table8VectorSeparatesTheArchitectures) {
  const Dot d{{-pow2(13), -0.5, -0.25, -0.125}, {pow2(10), 1, 1, 1}, pow2(23)};
  EXPECT_EQ(run("sm_70 mma.sync.aligned m8n8k4 f32 f16 f16", d), 0.0);
  EXPECT_EQ(run("sm_75 mma.sync.aligned m16n8k8 f32 f16 f16", d), -0.5);
  EXPECT_EQ(run("sm_80 mma.sync.aligned m16n8k16 f32 f16 f16", d), -0.5);
  EXPECT_EQ(run("sm_80 mma.sync.aligned m16n8k16 f32 bf16 bf16", d), -0.5);
  EXPECT_EQ(run("sm_80 mma.sync.aligned m16n8k8 f32 tf32 tf32", d), -0.5);
  EXPECT_EQ(run("sm_89 mma.sync.aligned m16n8k16 f32 f16 f16", d), -0.5);
  EXPECT_EQ(run("sm_89 mma.sync.aligned m16n8k32 f32 e5m2 e5m2", d), 0.0);
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", d), -0.75);
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16", d), -0.75);
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32", d), -0.75);
  EXPECT_EQ(run("sm_90a wgmma.mma_async m64n8k16 f32 f16 f16", d), -0.75);
  EXPECT_EQ(run("sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e5m2", d), 0.0);
  // Emulated fp8 mma.sync: each HMMA half truncates to -2^23, then + 2^23.
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k32 f32 e5m2 e5m2", d), 0.0);
  EXPECT_EQ(run("sm_100a tcgen05.mma.cta_group::1.kind::f16 m64n8k16 f32 f16 f16", d), -0.75);
  EXPECT_EQ(run("sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m64n8k32 f32 e5m2 e5m2", d), -0.75);
  EXPECT_EQ(run("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e5m2 e5m2 ue8m0", d),
            -0.75);
  EXPECT_EQ(run("sm_120a mma.sync.aligned m16n8k32 f32 e5m2 e5m2", d), -0.75);
  // NVFP4 arranged through the scales: one product per 16-group, -1 * 2^13 * 1 * 2^10 in group 0,
  // -0.5 * 2^0, -0.5 * 2^-1, -0.5 * 2^-2 in groups 1-3.
  Dot fp4;
  fp4.a.assign(64, 0);
  fp4.b.assign(64, 0);
  fp4.a[0] = -1;
  fp4.a[16] = fp4.a[32] = fp4.a[48] = -0.5;
  fp4.b[0] = fp4.b[16] = fp4.b[32] = fp4.b[48] = 1;
  fp4.sa = {e8m0(13), e8m0(0), e8m0(-1), e8m0(-2)};
  fp4.sb = {e8m0(10), e8m0(0), e8m0(0), e8m0(0)};
  fp4.c = pow2(23);
  EXPECT_EQ(run("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue8m0", fp4),
            -0.875);
}

// d.3-3: the F sweep per slot. A pair [M, -M] * [M, M] with M = 2^7 fixes e_max = 14 and sums to 0;
// 2^e in the probed slot (or in C) survives down to e = 14 - F. Same F in every slot of the first
// fused step, and for C.
TEST(EmulatorProbes, FractionBitsAreTheSameInEverySlot) {
  int rows_probed = 0;
  for (const InstructionRow& row : instruction_table()) {
    const Algorithm alg = row.params.algorithm;
    if (alg == Algorithm::fma_chain || alg == Algorithm::gst_fdpa) continue;
    Type t = Type::f32;
    for (Type cand : {Type::e4m3, Type::e5m2, Type::f16, Type::bf16, Type::tf32}) {
      if (row.a_types.contains(cand) && row.b_types.contains(cand)) {
        t = cand;
        break;
      }
    }
    if (t == Type::f32) continue;  // fp6/fp4-only rows cannot hold 2^7
    const Instruction ins = smallest_instruction(row, t, t);
    const std::string name = ins.name();
    // Slots of the first fused step; b.9 fuses only k mod 4 in {0,1} in its first HMMA.
    std::vector<int> slots;
    for (int k = 2; k < std::min(ins.k, row.params.L); ++k) {
      if (alg != Algorithm::fp8_via_f16 || k % 4 < 2) slots.push_back(k);
    }
    if (alg == Algorithm::fp8_via_f16) {
      slots.clear();
      for (int k = 4; k < ins.k; ++k) {
        if (k % 4 < 2) slots.push_back(k);
      }
    }
    slots.push_back(-1);  // C
    for (int slot : slots) {
      if (slot == -1 && alg == Algorithm::fp8_via_f16) continue;  // C is added by an RNE FADD, not fused
      int last = 99;
      for (int e = 14; e >= -30; --e) {
        Dot d;
        d.a.assign(static_cast<std::size_t>(ins.k), 0);
        d.b.assign(static_cast<std::size_t>(ins.k), 0);
        d.a[0] = pow2(7);
        d.a[1] = -pow2(7);
        d.b[0] = d.b[1] = pow2(7);
        if (slot >= 0) {
          const int ea = static_cast<int>(std::floor(e / 2.0));  // 2^e = 2^ea * 2^(e - ea)
          d.a[static_cast<std::size_t>(slot)] = pow2(ea);
          d.b[static_cast<std::size_t>(slot)] = pow2(e - ea);
        } else {
          d.c = pow2(e);
        }
        double r;
        try {
          r = run(name, d);
        } catch (const std::logic_error&) {
          break;  // 2^e no longer representable in the operand format
        }
        if (r == 0) break;
        ASSERT_EQ(r, pow2(e)) << name << " slot " << slot;
        last = e;
      }
      EXPECT_EQ(14 - last, row.params.F) << name << " slot " << slot;
    }
    ++rows_probed;
  }
  EXPECT_EQ(rows_probed, 45);  // every row but the GST and f64 rows
}

// d.3-4: output rounding. Hopper wgmma fp8 -> f32: C = 1 + 2^-13 plus 1 * 1 is exactly 2 + 2^-13 on
// the F = 13 grid, and RZ-E8M13 at exponent 1 gives 2.0; an RZ-FP32 path keeps 2 + 2^-13.
TEST(EmulatorProbes, OutputRoundingE8M13VersusFp32) {
  const Dot d{{1.0}, {1.0}, 1.0 + pow2(-13)};
  EXPECT_EQ(run("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", d), 2.0);
  EXPECT_EQ(run("sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3", d), 2.0);
  EXPECT_EQ(run("sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m64n8k32 f32 e4m3 e4m3", d), 2.0 + pow2(-13));
  // RZ (not RN) into fp32: 1 + 2^-24 and -(1 + 2^-24) truncate toward zero.
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", {{1.0, pow2(-12)}, {1.0, pow2(-12)}, 0.0}), 1.0);
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", {{-1.0, -pow2(-12)}, {1.0, pow2(-12)}, 0.0}), -1.0);
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", {{1.0, pow2(-12)}, {1.0, 3 * pow2(-12)}, 0.0}),
            1.0 + pow2(-23));  // 1 + 1.5 * 2^-23
}

// d.3-4: RNE-FP16 ties at 0.5 and 1.5 ulp, and 0.25 / 0.75 ulp (ulp(1) = 2^-10 in fp16).
TEST(EmulatorProbes, Fp16OutputRoundsToNearestEven) {
  for (const char* name : {"sm_90a mma.sync.aligned m16n8k16 f16 f16 f16", "sm_90a wgmma.mma_async m64n8k16 f16 f16 f16",
                           "sm_100a tcgen05.mma.cta_group::1.kind::f16 m64n8k16 f16 f16 f16",
                           "sm_89 mma.sync.aligned m16n8k16 f16 f16 f16", "sm_70 mma.sync.aligned m8n8k4 f16 f16 f16"}) {
    EXPECT_EQ(run(name, {{pow2(-11)}, {1.0}, 1.0}), 1.0) << name;                              // 0.5 ulp: tie to even
    EXPECT_EQ(run(name, {{pow2(-11)}, {1.0}, 1.0 + pow2(-10)}), 1.0 + pow2(-9)) << name;       // 1.5 ulp: tie to even
    EXPECT_EQ(run(name, {{3 * pow2(-12)}, {1.0}, 1.0}), 1.0 + pow2(-10)) << name;              // 0.75 ulp: up
    EXPECT_EQ(run(name, {{pow2(-12)}, {1.0}, 1.0}), 1.0) << name;                              // 0.25 ulp: down
    EXPECT_EQ(run(name, {{-pow2(-11)}, {1.0}, -1.0 - pow2(-10)}), -1.0 - pow2(-9)) << name;    // negative tie
  }
}

// d.3-5: C = (2 - 2^-10) * 2^-14 against a cancelling pair X*X - X*X with X = 2^j: C keeps its bits
// exactly while they lie on the 2^(2j - 25) grid (F = 25) and loses them below it.
TEST(EmulatorProbes, CIsAlignedAndTruncatedWithTheProducts) {
  const double c = (2 - pow2(-10)) * pow2(-14);
  for (int j = 0; j <= 8; ++j) {
    const double X = pow2(j);
    const double grid = pow2(2 * j - 25);
    const double expected = std::floor(c / grid) * grid;
    EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", {{X, -X}, {X, X}, c}), expected) << "j = " << j;
  }
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", {{1, -1}, {1, 1}, c}), c);
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", {{2, -2}, {2, 2}, c}), pow2(-13) - pow2(-23));
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", {{pow2(6), -pow2(6)}, {pow2(6), pow2(6)}, c}), 0.0);
}

// d.3-6: products are not renormalised: 12 * 24 = 2.25 * 2^7 aligns at 2^7, 18 * 16 = 1.125 * 2^8 at
// 2^8, so a small term at the 2^(7 - F) grid point survives only in the first case.
TEST(EmulatorProbes, ProductsAreNotNormalisedBeforeAlignment) {
  const char* f16 = "sm_90a mma.sync.aligned m16n8k16 f32 f16 f16";
  EXPECT_EQ(run(f16, {{12, -12, pow2(-9)}, {24, 24, pow2(-9)}, 0.0}), pow2(-18));
  EXPECT_EQ(run(f16, {{18, -18, pow2(-9)}, {16, 16, pow2(-9)}, 0.0}), 0.0);
  const char* fp8 = "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3";
  EXPECT_EQ(run(fp8, {{12, -12, pow2(-3)}, {24, 24, pow2(-3)}, 0.0}), pow2(-6));
  EXPECT_EQ(run(fp8, {{18, -18, pow2(-3)}, {16, 16, pow2(-3)}, 0.0}), 0.0);
}

// d.3-7: the e_zero floor with C = 0.
TEST(EmulatorProbes, ZeroTermExponentFloor) {
  // fp16 output on mma.sync (F = 25): 2^-24 if e_zero <= -22 (MMA-Sim v2), 0 if -21 (K&M). The H200
  // gives 0 (blockscale conform, docs/conformance.md), and so does the sm_90a row; sm_100a keeps -22.
  const Dot h{{pow2(-14), pow2(-24), 0}, {pow2(-11), pow2(-23), 1}, 0.0};
  EXPECT_EQ(run_bits("sm_90a mma.sync.aligned m16n8k16 f16 f16 f16", h), 0x0000u);
  EXPECT_EQ(run_bits("sm_90a wgmma.mma_async m64n8k16 f16 f16 f16", h), 0x0000u);
  EXPECT_EQ(run_bits("sm_100a mma.sync.aligned m16n8k16 f16 f16 f16", h), 0x0001u);
  FdpaParams ms_v2 = find_row("sm_90a.mma.f16.f16")->params;
  ms_v2.e_zero = -22;
  EXPECT_EQ(run_bits("sm_90a mma.sync.aligned m16n8k16 f16 f16 f16", h, &ms_v2), 0x0001u);
  FdpaParams km = find_row("sm_100a.mma.f16.f16")->params;
  // F = 24 (Ampere / Ada) with B[1] = 2^-21: 2^-24 if e_zero <= -21, 0 if -20.
  const Dot a{{pow2(-14), pow2(-24), 0}, {pow2(-11), pow2(-21), 1}, 0.0};
  EXPECT_EQ(run_bits("sm_80 mma.sync.aligned m16n8k16 f16 f16 f16", a), 0x0001u);
  EXPECT_EQ(run_bits("sm_89 mma.sync.aligned m16n8k16 f16 f16 f16", a), 0x0001u);
  km.e_zero = -21;
  EXPECT_EQ(run_bits("sm_100a mma.sync.aligned m16n8k16 f16 f16 f16", h, &km), 0x0000u);
  km = find_row("sm_89.mma.f16.f16")->params;
  km.e_zero = -20;
  EXPECT_EQ(run_bits("sm_89 mma.sync.aligned m16n8k16 f16 f16 f16", a, &km), 0x0000u);

  // fp32 output: 15 products 65 * 2^-159 and one 49 * 2^-159 sum exactly to 2^-149, but truncated on
  // the 2^(-133 - 25) grid of the floor they lose 0.5 * 2^-158 each and the sum falls below 2^-149.
  Dot b;
  for (int k = 0; k < 15; ++k) {
    b.a.push_back(5 * pow2(-80));
    b.b.push_back(13 * pow2(-79));
  }
  b.a.push_back(7 * pow2(-80));
  b.b.push_back(7 * pow2(-79));
  EXPECT_EQ(run_bits("sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16", b), 0x00000000u);
  FdpaParams exact = find_row("sm_90a.mma.f16bf16.f32")->params;
  exact.e_zero = -200;
  EXPECT_EQ(run_bits("sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16", b, &exact), 0x00000001u);

  // MXFP8 with scales 2^-127 * 2^-24: 32 products 1.5 * 2^-151. C = 0: floor -133, grid 2^-158, exact
  // sum 48 * 2^-151 = 12 * 2^-149. C = 2^-149: e_max = -126, grid 2^-151, each product truncated to
  // 2^-151: 32 * 2^-151 + 2^-149 = 9 * 2^-149.
  Dot m;
  m.a.assign(32, 1.5);
  m.b.assign(32, 1.0);
  m.sa = {e8m0(-127)};
  m.sb = {e8m0(-24)};
  const char* mx = "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale m128n8k32 f32 e4m3 e4m3";
  EXPECT_EQ(run_bits(mx, m), 12u);
  m.c = pow2(-149);
  EXPECT_EQ(run_bits(mx, m), 9u);
}

// d.3-9: block-scale specific probes.
TEST(EmulatorProbes, BlockScales) {
  const char* mx = "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e4m3 e4m3 ue8m0";
  const char* nv = "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3";
  const char* nv8 = "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue8m0";
  const char* mxf4 = "sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 m128n8k64 f32 e2m1 e2m1 ue8m0";
  // A NaN scale makes every product NaN, even over zero elements.
  EXPECT_EQ(run_bits(mx, {{}, {}, 1.0, {0xFF}, {}}), 0x7FFFFFFFu);
  EXPECT_EQ(run_bits(nv, {{}, {}, 1.0, {0x38, 0x7F}, {}}), 0x7FFFFFFFu);
  EXPECT_EQ(run_bits(nv, {{}, {}, 1.0, {}, {0x38, 0x38, 0xFF}}), 0x7FFFFFFFu);
  // e8m0 code 0 is 2^-127 (a subnormal fp32 result, kept).
  EXPECT_EQ(run_bits(mx, {{1.0}, {1.0}, 0.0, {0x00}, {}}), 0x00400000u);
  // ue4m3: bit 7 ignored; a subnormal scale 2^-9; a zero scale makes its group a zero term.
  EXPECT_EQ(run_bits(nv, {{1.5}, {3.0}, 0.0, {0xC8}, {0x38}}), run_bits(nv, {{1.5}, {3.0}, 0.0, {0x48}, {0x38}}));
  EXPECT_EQ(run(nv, {{1.0}, {1.0}, 0.0, {0x01}, {0x38}}), pow2(-9));
  EXPECT_EQ(run(nv, {{6.0}, {6.0}, 1.0 + pow2(-23), {0x00}, {0x38}}), 1.0 + pow2(-23));
  // Group-of-16: a cancelling +-6 * 1 pair under a 2^60 scale keeps exponent 60 and truncates C = 1
  // (grid 2^25), so D = 0 (if cancelled groups took e_zero, D would be 1).
  EXPECT_EQ(run_bits(nv8, {{6, -6}, {1, 1}, 1.0, {e8m0(60)}, {}}), 0x00000000u);
  // Group width under block32: the pair across the k = 15/16 boundary (two groups, both keep 60) and
  // within one group give the same D = 0.
  Dot across;
  across.a.assign(64, 0);
  across.b.assign(64, 0);
  across.a[15] = 6;
  across.a[16] = -6;
  across.b[15] = across.b[16] = 1;
  across.c = 1.0;
  across.sa = {e8m0(60)};
  EXPECT_EQ(run_bits(mxf4, across), 0x00000000u);
  EXPECT_EQ(run_bits(mxf4, {{6, -6}, {1, 1}, 1.0, {e8m0(60)}, {}}), 0x00000000u);
  // C truncation under GST: a cancelled group under 2^13 sets e_max = 13, grid 2^-22: C = 1 + 2^-23 -> 1.
  EXPECT_EQ(run(nv8, {{6, -6}, {1, 1}, 1.0 + pow2(-23), {e8m0(13)}, {}}), 1.0);
  // A zero product with a huge scale takes e_zero (b.4): it does not truncate C.
  EXPECT_EQ(run(mx, {{0.0}, {1.0}, 1.0 + pow2(-23), {e8m0(127)}, {e8m0(127)}}), 1.0 + pow2(-23));
}

// d.3-10: chaining. sm_80 k16 is two 8-product steps in k order (C fused with the first); Hopper's k16
// is one fused step.
TEST(EmulatorProbes, ChainingOfSteps) {
  Dot d;
  d.a.assign(16, 0);
  d.b.assign(16, 0);
  d.a[0] = 1;
  d.b[0] = 1;
  d.a[1] = d.b[1] = pow2(-12);
  d.a[8] = -1;
  d.b[8] = 1;
  EXPECT_EQ(run("sm_80 mma.sync.aligned m16n8k16 f32 f16 f16", d), 0.0);  // 1 + 2^-24 rounds to 1, then - 1
  EXPECT_EQ(run("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", d), pow2(-24));
  Dot r;  // the same terms in the other order: -1 first, then 1 + 2^-24 fused with C = -1
  r.a.assign(16, 0);
  r.b.assign(16, 0);
  r.a[0] = -1;
  r.b[0] = 1;
  r.a[8] = 1;
  r.b[8] = 1;
  r.a[9] = r.b[9] = pow2(-12);
  EXPECT_EQ(run("sm_80 mma.sync.aligned m16n8k16 f32 f16 f16", r), pow2(-24));
  // Ada fp8 k32 = 2 x 16 with an e8m13 intermediate.
  Dot f;
  f.a.assign(32, 0);
  f.b.assign(32, 0);
  f.a[0] = f.b[0] = 1;
  f.a[1] = f.b[1] = pow2(-7);  // 1 + 2^-14: the e8m13 intermediate keeps 1
  f.a[16] = -1;
  f.b[16] = 1;
  EXPECT_EQ(run("sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3", f), 0.0);
  EXPECT_EQ(run("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", f), 0.0);  // F = 13 drops 2^-14 in one step
  EXPECT_EQ(run("sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m64n8k32 f32 e4m3 e4m3", f), pow2(-14));
}

}  // namespace
}  // namespace blockscale::emulator
