// SPDX-License-Identifier: Apache-2.0
// Special-value tables (numerics.md b.7 and table (c)): every combination of operand classes
// {+0, -0, subnormal, normal, max, +Inf, -Inf, NaN} for A, B and C on several instructions. Special
// outcomes are stated here from the rules of b.7; finite outcomes come from the independent
// reference model. Then the directed corner cases of table (c).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "reference_model.h"
#include "value_classes.h"

namespace blockscale::emulator {
namespace {

using testing::Cls;
using testing::code_of;
using testing::kClasses;

std::uint32_t storage(Format f, std::uint32_t code) { return to_storage(f, code); }

bool is_inf(Cls c) { return c == Cls::pos_inf || c == Cls::neg_inf; }
bool is_zero(Cls c) { return c == Cls::pos_zero || c == Cls::neg_zero; }
bool is_negative(Cls c) { return c == Cls::neg_zero || c == Cls::neg_normal || c == Cls::neg_inf; }

// b.7 applied to one product a*b (times scales of 1) plus C: the special result, or nullopt when
// every value is finite.
// `inner_overflow`: the b.9 emulation with f16 output rounds the product to f16 in its HMMA before C
// is added, so a finite product of magnitude >= 65520 has become an Inf of its sign there.
std::optional<std::uint32_t> special_rule(Format acc, Cls a, Cls b, Cls c, bool inner_overflow) {
  const std::uint32_t nan = acc == Format::float16 ? 0x7FFFu : 0x7FFFFFFFu;
  const auto inf = [&](bool neg) { return acc == Format::float16 ? (neg ? 0xFC00u : 0x7C00u) : (neg ? 0xFF800000u : 0x7F800000u); };
  if (a == Cls::nan || b == Cls::nan || c == Cls::nan) return nan;                      // NaN in A, B or C
  const bool prod_inf = is_inf(a) || is_inf(b) || inner_overflow;
  if (prod_inf && (is_zero(a) || is_zero(b))) return nan;                              // Inf * 0
  const bool prod_neg = is_negative(a) != is_negative(b);
  if (prod_inf && is_inf(c) && prod_neg != is_negative(c)) return nan;                  // +Inf and -Inf
  if (prod_inf) return inf(prod_neg);
  if (is_inf(c)) return inf(is_negative(c));
  return std::nullopt;
}

struct TableCase {
  const char* instruction;
};

void PrintTo(const TableCase& c, std::ostream* os) { *os << c.instruction; }

class EmulatorSpecialValueTable : public ::testing::TestWithParam<TableCase> {};

TEST_P(EmulatorSpecialValueTable, EveryClassCombination) {
  const Instruction ins = parse_instruction(GetParam().instruction);
  const Format fa = *format_of(ins.a), fb = *format_of(ins.b), acc = accumulator_format(ins.params().rounding);
  std::vector<std::uint32_t> sa, sb;
  if (ins.block_scaled()) {
    sa.assign(ins.k / ins.block(), ins.scale_type() == Type::ue8m0 ? 127u : 0x38u);
    sb = sa;
  }
  std::size_t combos = 0, specials = 0;
  for (Cls ca : kClasses) {
    for (Cls cb : kClasses) {
      for (Cls cc : kClasses) {
        const auto xa = code_of(fa, ca), xb = code_of(fb, cb), xc = code_of(acc, cc);
        if (!xa || !xb || !xc) continue;
        // The product sits at k = 1 (in the first HMMA half of b.9); every other element is +0.
        std::vector<std::uint32_t> a(ins.k, 0), b(ins.k, 0);
        a[1] = storage(fa, *xa);
        b[1] = storage(fb, *xb);
        const std::uint32_t d = dot(ins, a, b, *xc, sa, sb);
        ++combos;
        const double product = to_double(fa, *xa) * to_double(fb, *xb);
        const bool inner_overflow = ins.params().algorithm == Algorithm::fp8_via_f16 && acc == Format::float16 &&
                                    std::isfinite(product) && std::fabs(product) >= 65520.0;
        const auto rule = special_rule(acc, ca, cb, cc, inner_overflow);
        if (rule) {
          ++specials;
          EXPECT_EQ(d, *rule) << ins.name() << " a=" << int(ca) << " b=" << int(cb) << " c=" << int(cc);
          continue;
        }
        testing::ReferenceDot ref;
        ref.a_format = fa;
        ref.b_format = fb;
        ref.a = a;
        ref.b = b;
        ref.c = *xc;
        if (ins.block_scaled()) {
          ref.scale_format = *format_of(ins.scale_type());
          ref.block = ins.block();
          ref.scale_a = sa;
          ref.scale_b = sb;
        }
        EXPECT_EQ(d, testing::reference_fdpa(ins.params(), ref).d)
            << ins.name() << " a=" << int(ca) << " b=" << int(cb) << " c=" << int(cc);
      }
    }
  }
  std::printf("[ specials ] %s: %zu class combinations, %zu with a NaN/Inf rule\n", ins.name().c_str(), combos,
              specials);
  EXPECT_GT(specials, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Instructions, EmulatorSpecialValueTable,
    ::testing::Values(TableCase{"sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e5m2"},
                      TableCase{"sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e5m2"},
                      TableCase{"sm_90a mma.sync.aligned m16n8k16 f16 f16 f16"},
                      TableCase{"sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16"},
                      TableCase{"sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32"},
                      TableCase{"sm_90a mma.sync.aligned m16n8k32 f32 e5m2 e5m2"},
                      TableCase{"sm_100a mma.sync.aligned m16n8k32 f16 e5m2 e4m3"},
                      TableCase{"sm_89 mma.sync.aligned m16n8k32 f16 e5m2 e5m2"},
                      TableCase{"sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale m128n8k32 f32 e5m2 e2m3 ue8m0"},
                      TableCase{"sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3"}),
    [](const ::testing::TestParamInfo<TableCase>& p) { return "case" + std::to_string(p.index); });

std::uint32_t f32(float x) { return std::bit_cast<std::uint32_t>(x); }

std::uint32_t dot1(const char* name, std::vector<std::uint32_t> a_codes, std::vector<std::uint32_t> b_codes, std::uint32_t c,
                   std::vector<std::uint32_t> sa = {}, std::vector<std::uint32_t> sb = {}) {
  const Instruction ins = parse_instruction(name);
  a_codes.resize(ins.k, 0);
  b_codes.resize(ins.k, 0);
  if (ins.block_scaled()) {
    sa.resize(ins.k / ins.block(), ins.scale_type() == Type::ue8m0 ? 127u : 0x38u);
    sb.resize(ins.k / ins.block(), ins.scale_type() == Type::ue8m0 ? 127u : 0x38u);
  }
  return dot(ins, a_codes, b_codes, c, sa, sb);
}

// Table (c), row by row.
TEST(EmulatorSpecialValues, CornerCasesOfTableC) {
  const char* bf = "sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16";
  const char* h = "sm_90a mma.sync.aligned m16n8k16 f16 f16 f16";
  const char* tf = "sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32";
  const char* mx = "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale m128n8k32 f32 e4m3 e4m3 ue8m0";
  const std::uint32_t one_bf = 0x3F80, two64_bf = 0x5F80;  // 1.0, 2^64
  // NaN with any payload and sign -> canonical NaN.
  EXPECT_EQ(dot1(bf, {0xFFC1}, {one_bf}, 0), 0x7FFFFFFFu);
  EXPECT_EQ(dot1(h, {0x3C00}, {0x3C00}, 0xFE01), 0x7FFFu);
  EXPECT_EQ(dot1(bf, {one_bf}, {one_bf}, 0xFFBFFFFFu), 0x7FFFFFFFu);
  // Inf * 0 and +Inf with -Inf among the products.
  EXPECT_EQ(dot1(bf, {0x7F80}, {0x0000}, f32(1.0f)), 0x7FFFFFFFu);
  EXPECT_EQ(dot1(bf, {0x7F80, 0xFF80}, {one_bf, one_bf}, 0), 0x7FFFFFFFu);
  EXPECT_EQ(dot1(bf, {0x7F80, 0x7F80}, {one_bf, 0xBF80}, f32(1.0f)), 0x7FFFFFFFu);
  EXPECT_EQ(dot1(bf, {0x7F80, 0x7F80}, {one_bf, one_bf}, f32(-1.0f)), 0x7F800000u);
  EXPECT_EQ(dot1(bf, {0x7F80}, {0xBF80}, 0xFF800000u), 0xFF800000u);
  // Finite sums: >= 2^128 after truncation gives Inf, [FLT_MAX, 2^128) gives FLT_MAX (RZ).
  EXPECT_EQ(dot1(bf, {two64_bf}, {two64_bf}, 0), 0x7F800000u);
  EXPECT_EQ(dot1(bf, {two64_bf | 0x8000}, {two64_bf}, 0), 0xFF800000u);
  EXPECT_EQ(dot1(bf, {one_bf}, {one_bf}, 0x7F7FFFFFu), 0x7F7FFFFFu);
  EXPECT_EQ(dot1(bf, {0x7F7F}, {one_bf}, 0x7F7FFFFFu), 0x7F800000u);  // FLT_MAX + 1.99 * 2^127 > 2^128
  // Products beyond the fp32 range do not overflow inside: 2^127 * 2^127 - 2^127 * 2^127 + 1 = 1.
  EXPECT_EQ(dot1(bf, {0x7F00, 0xFF00}, {0x7F00, 0x7F00}, f32(1.0f)), f32(0.0f));  // C truncated at e_max = 254
  EXPECT_EQ(dot1(bf, {0x7F00, 0xFF00}, {0x7F00, 0x7F00}, 0), 0u);
  // f16 out: |V| >= 65520 rounds to Inf; just below stays 65504.
  EXPECT_EQ(dot1(h, {0x4C00}, {0x3C00}, 0x7BFF), 0x7C00u);  // 65504 + 16 = 65520: tie to even -> 65536 = Inf
  EXPECT_EQ(dot1(h, {0x4B80}, {0x3C00}, 0x7BFF), 0x7BFFu);  // 65504 + 15
  EXPECT_EQ(dot1(h, {0xCC00}, {0x3C00}, 0xFBFF), 0xFC00u);
  // All products -0 and C = -0 give +0; exact cancellation gives +0.
  EXPECT_EQ(dot1(bf, {0x8000, 0x8000}, {one_bf, one_bf}, 0x80000000u), 0u);
  EXPECT_EQ(dot1(h, {0x8000}, {0x3C00}, 0x8000), 0u);
  EXPECT_EQ(dot1(bf, {one_bf, 0xBF80}, {one_bf, one_bf}, 0), 0u);
  // Negative V below the smallest subnormal: +0 on sm_90a (measured on an H200), -0 on the rows that
  // follow MMA-Sim v2 (sm_100a here), and whatever UnderflowZero says when the parameters are changed.
  EXPECT_EQ(dot1(tf, {0x9A000000u}, {0x19800000u}, 0), 0u);
  const Instruction tf_ins = parse_instruction("sm_100a mma.sync.aligned m16n8k8 f32 tf32 tf32");
  DotOperands ops;
  ops.a_format = ops.b_format = Format::tfloat32;
  // -2^-75 * 2^-76 = -2^-151: kept by the 2^-158 grid of the e_zero floor, below fp32's 2^-149.
  const std::vector<std::uint32_t> a{0x9A000000u, 0, 0, 0, 0, 0, 0, 0}, b{0x19800000u, 0, 0, 0, 0, 0, 0, 0};
  ops.a = a;
  ops.b = b;
  EXPECT_EQ(fdpa(tf_ins.params(), ops), 0x80000000u);
  FdpaParams positive = tf_ins.params();
  positive.underflow_zero = UnderflowZero::positive;
  EXPECT_EQ(fdpa(positive, ops), 0u);
  // Subnormal inputs are kept (exponent clamped at emin): 2^-135 (tf32 subnormal 0x00004000) * 2^10.
  EXPECT_EQ(dot1(tf, {0x00004000u}, {f32(1024.0f)}, 0), f32(std::ldexp(1.0f, -125)));
  // TF32: an fp32 NaN whose payload is only in the low 13 bits becomes +-Inf before the multiply.
  EXPECT_EQ(dot1(tf, {0x7F800001u}, {f32(1.0f)}, 0), 0x7F800000u);
  EXPECT_EQ(dot1(tf, {0xFF801FFFu}, {f32(2.0f)}, 0), 0xFF800000u);
  EXPECT_EQ(dot1(tf, {0x7F800001u}, {0u}, 0), 0x7FFFFFFFu);  // (Inf) * 0
  EXPECT_EQ(dot1(tf, {0x7F802000u}, {f32(1.0f)}, 0), 0x7FFFFFFFu);  // payload above bit 13 stays NaN
  // TF32 truncation (not rounding) of A and B: clearing the low 13 bits keeps 10 fraction bits, so
  // 1 + 2^-10 + 2^-11 reads as 1 + 2^-10.
  EXPECT_EQ(dot1(tf, {f32(1.0f + std::ldexp(1.0f, -10) + std::ldexp(1.0f, -11))}, {f32(1.0f)}, 0),
            f32(1.0f + std::ldexp(1.0f, -10)));
  // Scales: e8m0 0xFF is NaN; a zero product under a huge scale takes e_zero (C keeps its bits).
  EXPECT_EQ(dot1(mx, {0x38}, {0x38}, 0, {0xFF}), 0x7FFFFFFFu);
  EXPECT_EQ(dot1(mx, {0x00}, {0x38}, f32(1.0f + std::ldexp(1.0f, -23)), {254}, {254}), f32(1.0f + std::ldexp(1.0f, -23)));
  // e5m2 Inf through a block scale stays Inf; Inf * 0 through a scale is NaN.
  const char* mx5 = "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale m128n8k32 f32 e5m2 e5m2 ue8m0";
  EXPECT_EQ(dot1(mx5, {0x7C}, {0x3C}, 0, {0}, {0}), 0x7F800000u);
  EXPECT_EQ(dot1(mx5, {0x7C}, {0x00}, 0, {200}), 0x7FFFFFFFu);
}

// The b.9 emulation adds C with an IEEE RNE add: its special cases are FADD's.
TEST(EmulatorSpecialValues, EmulatedFp8AddsCWithFadd) {
  const char* e = "sm_90a mma.sync.aligned m16n8k32 f32 e5m2 e5m2";
  EXPECT_EQ(dot1(e, {0x7C}, {0x3C}, 0xFF800000u), 0x7FFFFFFFu);                 // +Inf + -Inf
  EXPECT_EQ(dot1(e, {0x80}, {0x3C}, 0x80000000u), 0u);                          // HMMAs give +0; +0 + -0 = +0
  EXPECT_EQ(dot1(e, {0x3C}, {0x3C}, 0xBF800000u), 0u);                          // 1 - 1 = +0
  EXPECT_EQ(dot1(e, {}, {}, 0x80000000u), 0u);                                  // +0 + -0
  EXPECT_EQ(dot1(e, {}, {}, 0x00000001u), 0x00000001u);                         // subnormal C kept
  EXPECT_EQ(dot1(e, {0x7B}, {0x7B}, 0x7F7FFFFFu), 0x7F7FFFFFu);                 // FLT_MAX + 2^31.6: RNE keeps FLT_MAX
  const char* h = "sm_90a mma.sync.aligned m16n8k32 f16 e5m2 e5m2";
  EXPECT_EQ(dot1(h, {0x4C}, {0x3C}, 0x7BFF), 0x7C00u);                          // HADD: 65504 + 16 rounds to Inf
  EXPECT_EQ(dot1(h, {0x7B}, {0x7B}, 0xFC00), 0x7FFFu);  // the f16 HMMA overflows to +Inf, then + -Inf
}

// The CUDA-core operations of arith.h against the reference's big-integer adds and the host FPU.
TEST(EmulatorSpecialValues, ArithmeticOperationsAgreeWithOracles) {
  std::uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(state >> 32);
  };
  const auto canon = [](float r) {
    return std::isnan(r) ? 0x7FFFFFFFu : std::bit_cast<std::uint32_t>(r);
  };
  std::size_t n = 0;
  for (int i = 0; i < 300000; ++i) {
    std::uint32_t x = next(), y = next(), z = next();
    if (i % 3 == 1) y = (x & 0xFF800000u) ^ (next() & 0x807FFFFFu);  // close exponents: cancellation
    if (i % 7 == 2) x &= 0x807FFFFFu;                                  // subnormals
    const float fx = std::bit_cast<float>(x), fy = std::bit_cast<float>(y), fz = std::bit_cast<float>(z);
    ASSERT_EQ(add_f32(x, y), testing::reference_add(Format::float32, x, y)) << std::hex << x << " " << y;
    ASSERT_EQ(add_f32(x, y), canon(fx + fy)) << std::hex << x << " " << y;
    ASSERT_EQ(mul_f32(x, y), canon(fx * fy)) << std::hex << x << " " << y;
    ASSERT_EQ(fma_f32(x, y, z), canon(std::fma(fx, fy, fz))) << std::hex << x << " " << y << " " << z;
    const std::uint16_t hx = static_cast<std::uint16_t>(x), hy = static_cast<std::uint16_t>(i % 5 ? y : (x ^ 0x8000u));
    ASSERT_EQ(add_f16(hx, hy), testing::reference_add(Format::float16, hx, hy)) << std::hex << hx << " " << hy;
    ++n;
  }
  EXPECT_EQ(n, 300000u);
}

}  // namespace
}  // namespace blockscale::emulator
