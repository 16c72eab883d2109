// SPDX-License-Identifier: Apache-2.0
// The instruction table as data (every row consistent, every name round-trips through the parser)
// and every shape, type and argument rule as a clear std::invalid_argument.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "expect_throw.h"

namespace blockscale::emulator {
namespace {

TEST(EmulatorTable, RowsAreConsistent) {
  std::set<std::string_view> ids;
  int hardware_rows = 0;
  for (const InstructionRow& row : instruction_table()) {
    SCOPED_TRACE(std::string(row.id));
    EXPECT_TRUE(ids.insert(row.id).second) << "duplicate id";
    EXPECT_FALSE(row.shapes.empty());
    EXPECT_FALSE(row.a_types.empty());
    EXPECT_FALSE(row.b_types.empty());
    EXPECT_FALSE(row.evidence.empty());
    EXPECT_FALSE(row.family.empty());
    EXPECT_NO_THROW(validate(row.params));
    EXPECT_EQ(find_row(row.id), &row);
    EXPECT_EQ(row.block_scaled, row.block != 0);
    if (row.params.algorithm != Algorithm::fma_chain) {
      EXPECT_EQ(type_of(accumulator_format(row.params.rounding)), row.d_type);
    }
    // The fused-step arity divides every K (or the step is the whole K).
    for (const ShapeRule& s : row.shapes) {
      if (row.params.algorithm == Algorithm::fp8_via_f16) {
        EXPECT_EQ(s.k, 2 * row.params.L);
      } else if (row.params.algorithm != Algorithm::fma_chain) {
        EXPECT_TRUE(s.k % row.params.L == 0 || s.k < row.params.L) << s.k;
      }
    }
    for (const HardwareEvidence& h : row.hardware) {
      EXPECT_TRUE(row.a_types.contains(h.a) && row.b_types.contains(h.b));
      EXPECT_EQ(provenance_of(row, h.a, h.b), Provenance::hardware);
      EXPECT_GT(h.outputs, 0u);
    }
    hardware_rows += row.hardware.empty() ? 0 : 1;
  }
  EXPECT_EQ(instruction_table().size(), 55u);
  EXPECT_EQ(hardware_rows, 23);  // 22, and sm_90a.mma.f64 since the DMMA probes (2026-11-24)
}

TEST(EmulatorTable, EveryRowAndTypePairRoundTripsThroughItsName) {
  std::size_t names = 0;
  for (const InstructionRow& row : instruction_table()) {
    for (int a = 0; a < kTypeCount; ++a) {
      for (int b = 0; b < kTypeCount; ++b) {
        if (!row.a_types.contains(static_cast<Type>(a)) || !row.b_types.contains(static_cast<Type>(b))) continue;
        for (const ShapeRule& s : row.shapes) {
          for (int n : {s.n_min, s.n_max}) {
            const Instruction ins = make_instruction(row, s.m, n, s.k, static_cast<Type>(a), static_cast<Type>(b));
            const Instruction back = parse_instruction(ins.name());
            EXPECT_EQ(back.row, &row) << ins.name();
            EXPECT_EQ(back.name(), ins.name());
            EXPECT_EQ(back.m, s.m);
            EXPECT_EQ(back.n, n);
            EXPECT_EQ(back.k, s.k);
            ++names;
          }
        }
      }
    }
  }
  EXPECT_GT(names, 500u);
}

TEST(EmulatorTable, ParsesPtxSpellings) {
  const Instruction mx = parse_instruction(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e4m3 e2m1 ue8m0");
  EXPECT_EQ(mx.row->id, "sm_100a.tcgen05.mxf8f6f4.block32.ue8m0");
  EXPECT_EQ(mx.a, Type::e4m3);
  EXPECT_EQ(mx.b, Type::e2m1);
  EXPECT_EQ(mx.provenance(), Provenance::inferred);  // fp4 through kind::mxf8f6f4 (numerics.md e.4)
  const Instruction wg = parse_instruction("sm_90a wgmma.mma_async m64n256k32 f32 e5m2 e4m3");
  EXPECT_EQ(wg.row->id, "sm_90a.wgmma.fp8.f32");
  EXPECT_EQ(wg.provenance(), Provenance::hardware);  // the H200 conform sweep covers every mix
  EXPECT_EQ(parse_instruction("sm_120a mma.sync.aligned m16n8k32 f32 e5m2 e4m3").provenance(), Provenance::published_model);
  EXPECT_EQ(parse_instruction("sm_90a wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3").provenance(),
            Provenance::hardware);
  // PTX's own form: shape and types D A B C inside the opcode.
  EXPECT_EQ(parse_instruction("sm_89 mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32").row->id, "sm_89.mma.fp8.f32");
  // Vector-size spellings and defaults (gpu.md 1.3).
  EXPECT_EQ(parse_instruction("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X m128n8k32 f32 e4m3 e4m3")
                .block(),
            32);
  EXPECT_EQ(parse_instruction("sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale m128n8k64 f32 e2m1 e2m1").block(), 32);
  EXPECT_EQ(parse_instruction(
                "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X m128n8k64 f32 e2m1 e2m1 ue4m3")
                .row->id,
            "sm_100a.tcgen05.mxf4nvf4.block16.ue4m3");
  EXPECT_EQ(parse_instruction(
                "sm_120a mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0")
                .row->id,
            "sm_120a.mma.mxf4nvf4.block32.ue8m0");
  // sm_90 (not 90a) is fine for mma.sync.
  EXPECT_EQ(parse_instruction("sm_90 mma.sync.aligned m16n8k16 f32 bf16 bf16").row->id, "sm_90a.mma.f16bf16.f32");
}

void expect_error(const std::string& name, const std::string& message) {
  try {
    parse_instruction(name);
    ADD_FAILURE() << name << ": no error, expected '" << message << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << name << ": '" << e.what() << "'";
  }
}

TEST(EmulatorTable, EveryNameRuleGivesAClearError) {
  const std::string mx = "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 ";
  expect_error(mx + "m64n8k32 f32 e4m3 e4m3 ue8m0", "tcgen05 kind::mxf8f6f4 block_scale requires M=128, got 64");
  expect_error(mx + "m128n8k64 f32 e4m3 e4m3 ue8m0", "requires K=32, got 64");
  expect_error(mx + "m128n12k32 f32 e4m3 e4m3 ue8m0", "requires N in 8..256 in steps of 8, got 12");
  expect_error(mx + "m128n264k32 f32 e4m3 e4m3 ue8m0", "got 264");
  expect_error(mx + "m128n8k32 f16 e4m3 e4m3 ue8m0", "produces D of type f32, got f16");
  expect_error(mx + "m128n8k32 f32 f16 e4m3 ue8m0", "got A f16 and B e4m3");
  expect_error(mx + "m128n8k32 f32 e4m3 e4m3 ue4m3", "ue4m3 scales require kind::mxf4nvf4 with block16");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n24k32 f32 e4m3 e4m3", "N in 16..256 in steps of 16");
  expect_error("sm_90a wgmma.mma_async m64n12k32 f32 e4m3 e4m3", "wgmma fp8 with M=64 requires N in 8..256 in steps of 8, got 12");
  expect_error("sm_90a wgmma.mma_async m128n8k32 f32 e4m3 e4m3", "requires M=64, got 128");
  expect_error("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e2m1",
               "wgmma on sm_90a with D f32 takes A tf32 with B tf32; A f16|bf16 with B f16|bf16; A e4m3|e5m2 with B "
               "e4m3|e5m2, got A e4m3 and B e2m1");
  expect_error("sm_90 wgmma.mma_async m64n8k32 f32 e4m3 e4m3", "requires the architecture-specific target sm_90a, got sm_90");
  expect_error("sm_100a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", "wgmma is not available on sm_100a");
  expect_error("sm_89 tcgen05.mma.cta_group::1.kind::f16 m64n8k16 f32 f16 f16", "requires the architecture-specific target");
  expect_error("sm_90a tcgen05.mma.cta_group::1.kind::f16 m64n8k16 f32 f16 f16", "tcgen05.mma is not available on sm_90a");
  expect_error("sm_90a mma.sync.aligned m16n8k8 f32 e4m3 e4m3", "requires K=16 or K=32, got 8");  // two b.9 rows
  expect_error("sm_61 mma.sync.aligned m8n8k4 f32 f16 f16", "unknown architecture 'sm_61'");
  expect_error("sm_90a mma.sync.aligned.satfinite m16n8k16 f32 f16 f16", "unknown qualifier or type 'satfinite'");
  expect_error("sm_90a mma.sync.aligned f32 f16 f16", "no shape");
  expect_error("sm_90a mma.sync.aligned m16n8k16 f32 f16", "expected the types D A B");
  expect_error("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16 f16", "C type f16 must equal D type f32");
  expect_error("sm_90a ldmatrix m16n8k16 f32 f16 f16", "unknown qualifier or type 'ldmatrix'");
  expect_error("sm_90a m16n8k16 f32 f16 f16", "no instruction");
  expect_error("", "empty instruction name");
  // Contradictory or repeated pieces are refused, not resolved by whichever came last.
  expect_error("sm_100a tcgen05.mma.wgmma.mma_async.cta_group::1.kind::f16 m128n256k16 f32 f16 f16", "more than one opcode");
  expect_error("sm_90a wgmma.mma_async.mma.sync m64n8k32 f32 e4m3 e4m3", "more than one opcode");
  expect_error("sm_90a mma.sync.mma_async m16n8k32 f32 e4m3 e4m3", "more than one opcode");
  expect_error("sm_90a mma.sync.aligned.aligned m16n8k32 f32 e4m3 e4m3", "'.aligned' appears twice");
  expect_error("sm_90a mma.sync.aligned.row.row.col m16n8k32 f32 e4m3 e4m3", "more than two layouts");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16.block32 m128n256k64 f32 e2m1 e2m1 ue4m3",
               "more than one block size");
  expect_error("sm_90a mma.sync.aligned m0016n0008k0032 f32 e4m3 e4m3", "unknown qualifier or type 'm0016n0008k0032'");
  EXPECT_NO_THROW(parse_instruction("sm_70 mma.sync.aligned.m8n8k4.row.row f32 f16 f16"));  // PTX allows any layouts
  EXPECT_NO_THROW(parse_instruction("sm_70 mma.sync.aligned.m8n8k4.col.row f16 f16 f16"));
  // ... for m8n8k4 with f16 operands only; every other mma.sync shape is .row.col (PTX ISA
  // 9.7.14.5.14), and the other opcodes take no layout.
  EXPECT_NO_THROW(parse_instruction("sm_89 mma.sync.aligned.row.col m16n8k32 f32 e4m3 e4m3"));
  expect_error("sm_89 mma.sync.aligned.row.row m16n8k32 f32 e4m3 e4m3", ".row.row only for m8n8k4 with f16 operands");
  expect_error("sm_89 mma.sync.aligned.col.row m16n8k32 f32 e4m3 e4m3", ".col.row only for m8n8k4");
  expect_error("sm_90a mma.sync.aligned.m8n8k4.row.row f64 f64 f64", ".row.row only for m8n8k4 with f16 operands");
  expect_error("sm_89 mma.sync.aligned.row m16n8k32 f32 e4m3 e4m3", "two layouts");
  expect_error("sm_70 mma.sync.aligned.row.row f16 f16 f16", "no shape");  // the missing shape first
  expect_error("sm_90a wgmma.mma_async.row.col m64n8k32 f32 e4m3 e4m3", "mma.sync qualifiers");
  // An empty qualifier is a typo, not nothing.
  expect_error("sm_100a tcgen05.mma..cta_group::1.kind::f16 m64n8k16 f32 f16 f16", "empty qualifier");
  expect_error("sm_90a mma.sync.aligned. m16n8k32 f32 e4m3 e4m3", "empty qualifier");
  expect_error("sm_90a .mma.sync.aligned m16n8k32 f32 e4m3 e4m3", "empty qualifier");
  expect_error("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3.", "empty qualifier");
  expect_error("sm_100a tcgen05.mma.cta_group::2.kind::f16 m128n16k16 f32 f16 f16", "cta_group::2 is not modelled");
  expect_error("sm_100a tcgen05.mma.ws.cta_group::1.kind::f16 m64n8k16 f32 f16 f16", ".ws is not modelled");
  expect_error("sm_100a tcgen05.mma.sp.cta_group::1.kind::f16 m64n8k32 f32 f16 f16", "tcgen05.mma.sp is not modelled");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::i8 m64n8k32 s32 s8 s8", "kind::i8 is not modelled");
  expect_error("sm_100a tcgen05.mma.cta_group::1 m64n8k16 f32 f16 f16", "tcgen05.mma needs a .kind");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4 m128n8k32 f32 e4m3 e4m3", "kind::mxf8f6f4 requires .block_scale");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::f16.block_scale m64n8k16 f32 f16 f16", ".block_scale requires kind::");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale m128n8k64 f32 e2m1 e2m1",
               "kind::mxf4nvf4 must name its scale vector size");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1",
               "must name its scale type");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::2X m128n8k32 f32 e4m3 e4m3",
               "kind::mxf8f6f4 takes scale_vec::1X (block32), got scale_vec::2X");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::4X m128n8k64 f32 e2m1 e2m1",
               "kind::mxf4 takes scale_vec::2X (block32)");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue8m0",
               "has no block16 form");
  expect_error("sm_100a tcgen05.mma.cta_group::1.kind::f16 m64n8k16 f32 f16 f16 ue8m0", "requires a block-scaled kind");
  expect_error("sm_89 mma.sync.aligned.kind::f8f6f4 m16n8k32 f32 e4m3 e4m3", "requires the architecture-specific target");
  expect_error("sm_120a mma.sync.aligned.kind::f16 m16n8k16 f32 f16 f16", "kind::f16 is not available on sm_120a");
  expect_error("sm_70 mma.sync.aligned m16n8k8 f32 f16 f16", "requires M=8, got 16");
}

using test::expect_throw_with;

TEST(EmulatorTable, EveryArgumentRuleGivesAClearError) {
  const Instruction mx = parse_instruction(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e4m3 e4m3 ue8m0");
  std::vector<std::uint8_t> a(128 * 32, 0x38), b(32 * 8, 0x38), sa(128, 127), sb(8, 127);
  std::vector<std::uint32_t> c(128 * 8, 0);
  const CodeMatrix A(Format::float8_e4m3fn, 128, 32, a), B(Format::float8_e4m3fn, 32, 8, b);
  const CodeMatrix SA(Format::float8_e8m0fnu, 128, 1, sa), SB(Format::float8_e8m0fnu, 1, 8, sb);
  const CodeMatrix C(Format::float32, 128, 8, c);
  EXPECT_EQ(mma(mx, A, B, C, SA, SB).size(), 128u * 8u);
  expect_throw_with([&] { mma(mx, CodeMatrix(Format::float8_e4m3fn, 64, 64, a), B, C, SA, SB); }, "A must be 128 x 32, got 64 x 64");
  expect_throw_with([&] { mma(mx, A, CodeMatrix(Format::float8_e5m2, 32, 8, b), C, SA, SB); },
                    "B holds float8_e5m2 codes, the instruction takes float8_e4m3fn");
  expect_throw_with([&] { mma(mx, A, B, C); }, "needs SFA and SFB");
  expect_throw_with([&] { mma(mx, A, B, C, CodeMatrix(Format::float8_e8m0fnu, 8, 16, sa), SB); }, "SFA must be 128 x 1, got 8 x 16");
  expect_throw_with([&] { mma(mx, A, B, C, CodeMatrix(Format::float8_ue4m3, 128, 1, sa), SB); },
                    "SFA holds float8_ue4m3 codes, expected float8_e8m0fnu");
  expect_throw_with([&] { mma(mx, A, B, CodeMatrix(Format::float16, 128, 8, std::span<const std::uint32_t>(c)), SA, SB); },
                    "C holds float16 codes, the accumulator is float32");
  const Instruction wg = parse_instruction("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3");
  expect_throw_with([&] { mma(wg, CodeMatrix(Format::float8_e4m3fn, 64, 32, std::span(a).first(64 * 32)), B, {}, SA, SB); },
                    "the instruction takes no block scales");
  // Codes outside the format, and storage words too narrow.
  std::vector<std::uint8_t> bad(32, 0);
  bad[5] = 0x1F;
  const Instruction f4 = parse_instruction("sm_120a mma.sync.aligned.kind::f8f6f4 m16n8k32 f32 e2m1 e2m1");
  expect_throw_with([&] { mma(f4, CodeMatrix(Format::float4_e2m1fn, 1, 32, bad), B, {}); }, "A must be 16 x 32");
  expect_throw_with([&] { dot(f4, std::vector<std::uint32_t>(bad.begin(), bad.end()), std::vector<std::uint32_t>(32, 0), 0); },
                    "a[0][5] = 0x1F is not a float4_e2m1fn code (4 bits)");
  // fp8 codes in 16-bit words are checked (only words all of whose bits are code bits are not).
  std::vector<std::uint16_t> wide_a(128 * 32, 0x38);
  wide_a[7] = 0x138;
  expect_throw_with([&] { mma(mx, CodeMatrix(Format::float8_e4m3fn, 128, 32, wide_a), B, C, SA, SB); },
                    "[0][7] = 0x138 is not a float8_e4m3fn code (8 bits)");
  expect_throw_with([&] { CodeMatrix(Format::float16, 2, 2, std::vector<std::uint8_t>(4)); },
                    "float16 codes need words of at least 16 bits, got 8-bit words");
  expect_throw_with([&] { CodeMatrix(Format::float8_e4m3fn, 2, 3, std::vector<std::uint8_t>(5)); },
                    "a 2 x 3 float8_e4m3fn matrix needs 6 codes, got 5");
  // dot(): K, scales.
  expect_throw_with([&] { dot(wg, std::vector<std::uint32_t>(16), std::vector<std::uint32_t>(16), 0); },
                    "needs K=32 codes per operand, got 16 and 16");
  expect_throw_with([&] { dot(mx, std::vector<std::uint32_t>(32), std::vector<std::uint32_t>(32), 0); },
                    "block-scaled instruction without scales");
  expect_throw_with([&] { dot(wg, std::vector<std::uint32_t>(32), std::vector<std::uint32_t>(32), 0, std::vector<std::uint32_t>(1)); },
                    "takes no block scales");
  // fdpa(): parameters and operand rules.
  FdpaParams p = wg.params();
  p.F = 0;
  DotOperands ops;
  expect_throw_with([&] { fdpa(p, ops); }, "F must be in 1..40, got 0");
  p = wg.params();
  p.algorithm = Algorithm::fp8_via_f16;
  expect_throw_with([&] { fdpa(p, ops); }, "L must be 16 or 8");
  p.L = 16;
  expect_throw_with([&] { fdpa(p, ops); }, "inner HMMAs round RZ-FP32 or RNE-FP16");
  p.rounding = OutputRounding::rz_fp32;
  ops.a_format = ops.b_format = Format::float16;
  expect_throw_with([&] { fdpa(p, ops); }, "takes e4m3/e5m2 operands, got float16");
  p = find_row("sm_100a.tcgen05.mxf4.block32.ue8m0")->params;
  ops.a_format = ops.b_format = Format::float4_e2m1fn;
  ops.block = 24;
  expect_throw_with([&] { fdpa(p, ops); }, "GST groups of 16 must tile the scale block of 24");
  p.group = 5;
  expect_throw_with([&] { fdpa(p, ops); }, "GST group 5 must divide L=64");
  ops.c = 0x10000;
  p = find_row("sm_90a.mma.f16.f16")->params;
  ops.a_format = ops.b_format = Format::float16;
  ops.block = 0;
  expect_throw_with([&] { fdpa(p, ops); }, "is not an f16 code");
  // Schedules.
  expect_throw_with([&] { KernelSchedule::hopper_promotion(mx); }, "needs a non-block-scaled instruction");
  expect_throw_with([&] { KernelSchedule::hopper_promotion(parse_instruction("sm_90a wgmma.mma_async m64n8k32 f16 e4m3 e4m3")); },
                    "needs an f32-output instruction");
  expect_throw_with([&] { KernelSchedule::hopper_promotion(wg, 0); }, "promotion interval must be >= 1");
  // P x K must be an int (P = 2^26 of a k32 instruction overflowed into a negative scale block).
  expect_throw_with([&] { KernelSchedule::hopper_promotion(wg, 1 << 26); }, "promotion interval 67108864 x K=32");
  // Sizes whose product wraps, and a default-constructed Instruction, are refused, not followed.
  expect_throw_with([&] { CodeMatrix(Format::float8_e4m3fn, 2, std::size_t{1} << 63, std::span<const std::uint32_t>()); },
                    "has more elements than a size_t counts");
  expect_throw_with([&] { (void)Instruction{}.name(); }, "a default-constructed Instruction names none");
  expect_throw_with([&] { dot(Instruction{}, std::vector<std::uint32_t>(32), std::vector<std::uint32_t>(32), 0); },
                    "a default-constructed Instruction names none");
  expect_throw_with([&] { KernelSchedule::chain(wg).with_split_k(0); }, "split_k must be >= 1, got 0");
  expect_throw_with([&] { KernelSchedule::hopper_promotion(wg, 4).with_split_k(2, SplitKReduction::sequential, 192); },
                    "split-K granule must be 0 or a multiple of the schedule's unit of 128 K elements, got 192");
  expect_throw_with([&] { KernelSchedule::chain(wg).with_split_k(2, SplitKReduction::sequential, -32); },
                    "split-K granule must be 0 or a multiple");
  expect_throw_with([&] { KernelSchedule::chain(parse_instruction("sm_90a mma.sync.aligned m16n8k16 f16 f16 f16")).with_split_k(2); },
                    "split-K reduces in fp32");
  expect_throw_with([&] { KernelSchedule::chain(parse_instruction("sm_90a mma.sync.aligned m8n8k4 f64 f64 f64")); },
                    "f64 GEMMs are not modelled here: use mma_f64");
  expect_throw_with([&] { block_scaled_schedule(Arch::sm_100a, Format::float8_e4m3fn, Format::float8_e4m3fn, Format::float8_ue4m3, 16); },
                    "no block-scaled instruction takes e4m3 x e4m3 with ue4m3 scales per 16");
  expect_throw_with([&] { block_scaled_schedule(Arch::sm_90a, Format::float8_e4m3fn, Format::float8_e4m3fn, Format::float8_e8m0fnu, 32); },
                    "block-scaled MMA models exist for sm_100a and sm_120a, got sm_90a");
  expect_throw_with([&] { gemm(KernelSchedule::hopper_promotion(wg), GemmOperands{A, B, {}, {}, {}}); },
                    "SFA (fp32 promotion block128 scales) is required");
  expect_throw_with([&] { gemm(KernelSchedule::chain(wg), GemmOperands{A, CodeMatrix(Format::float8_e4m3fn, 16, 16, std::span(b).first(256)), {}, {}, {}}); },
                    "(K must match)");
  expect_throw_with([&] { gemm(KernelSchedule::chain(wg), GemmOperands{A, B, SA, SB, {}}); }, "takes no block scales");
  // f64 entry points.
  const Instruction d64 = parse_instruction("sm_90a mma.sync.aligned m8n8k4 f64 f64 f64");
  expect_throw_with([&] { dot(d64, std::vector<std::uint32_t>(4), std::vector<std::uint32_t>(4), 0); }, "use dot_f64");
  expect_throw_with([&] { dot_f64(wg, std::vector<double>(32), std::vector<double>(32), 0.0); }, "not an f64 instruction");
  expect_throw_with([&] { mma_f64(d64, std::vector<double>(3), std::vector<double>(32), std::vector<double>(64)); },
                    "A, B, C must hold M*K, K*N, M*N = 32, 32, 64 values");
  EXPECT_EQ(mma_f64(d64, std::vector<double>(32, 0.5), std::vector<double>(32, 2.0), std::vector<double>(64, 1.0))[0], 5.0);
}

// DMMA's NaN results, as an H200 and an H100 give them (docs/emulator.md, "f64 rows"): each fma of the
// chain returns its NaN operand quieted, B's before the accumulator's before A's (a signalling NaN
// takes no precedence), and an invalid operation gives the negative default NaN; the host's own NaN
// choices (x86: by the instruction form's operand order; AArch64: signalling first, positive default)
// must not show through.
TEST(EmulatorTable, F64ChainGivesDmmaNaNResults) {
  const Instruction d64 = parse_instruction("sm_90a mma.sync.aligned m8n8k4 f64 f64 f64");
  const auto w = [](std::uint64_t bits) { return std::bit_cast<double>(bits); };
  const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  const double qa = w(0x7FF8000000000A0Aull), sa = w(0x7FF0000000000A0Aull), qb = w(0xFFF800000000B0B0ull),
               sb = w(0xFFF000000000B0B0ull), qc = w(0x7FF80000000C0C0Cull), sc = w(0x7FF00000000C0C0Cull);
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::vector<double> a, b;
    double c;
    std::uint64_t d;
    const char* why;
  };
  const std::vector<Case> cases = {
      {{qa, 1, 1, 1}, {1, 1, 1, 1}, 0.0, 0x7FF8000000000A0Aull, "A's NaN"},
      {{sa, 1, 1, 1}, {1, 1, 1, 1}, 0.0, 0x7FF8000000000A0Aull, "A's signalling NaN, quieted"},
      {{1, 1, 1, 1}, {sb, 1, 1, 1}, 0.0, 0xFFF800000000B0B0ull, "B's signalling NaN keeps its sign"},
      {{qa, 1, 1, 1}, {sb, 1, 1, 1}, qc, 0xFFF800000000B0B0ull, "B before C before A"},
      {{sa, 1, 1, 1}, {1, 1, 1, 1}, qc, 0x7FF80000000C0C0Cull, "C before A, a signalling A no matter"},
      {{qa, 1, 1, 1}, {1, 1, 1, 1}, sc, 0x7FF80000000C0C0Cull, "C's signalling NaN before A's quiet one"},
      {{1, 1, 1, qa}, {1, qb, 1, 1}, 0.0, 0xFFF800000000B0B0ull, "the accumulator's NaN before a later A's"},
      {{1, 1, 1, 1}, {qb, 1, 1, w(0x7FF0000000000BBBull)}, 0.0, 0x7FF8000000000BBBull,
       "a later B's NaN replaces the accumulator's"},
      {{inf, 1, 1, 1}, {0.0, 1, 1, 1}, 1.0, 0xFFF8000000000000ull, "Inf x 0: the negative default NaN"},
      {{inf, 1, 1, 1}, {1, 1, 1, 1}, -inf, 0xFFF8000000000000ull, "Inf - Inf: the negative default NaN"},
      {{inf, 1, 1, 1}, {0.0, 1, 1, 1}, qc, 0x7FF80000000C0C0Cull, "Inf x 0 + NaN: the operand's NaN"},
      {{inf, 1, 1, 1}, {-inf, 1, 1, 1}, 1.0, 0xFFF0000000000000ull, "no NaN: -Inf"},
  };
  for (const Case& k : cases) EXPECT_EQ(bits(dot_f64(d64, k.a, k.b, k.c)), k.d) << k.why;
}

// docs/emulator.md carries the table (blockscale models --markdown): every row with its parameters.
TEST(EmulatorTable, DocumentationListsEveryRowWithItsParameters) {
  const char* src = std::getenv("BLOCKSCALE_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "BLOCKSCALE_SOURCE_DIR is not set (blockscale_add_test sets it)";
  std::ifstream in(std::string(src) + "/docs/emulator.md");
  ASSERT_TRUE(in) << "docs/emulator.md";
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  for (const InstructionRow& row : instruction_table()) {
    const std::string key = "| `" + std::string(row.id) + "` |";
    const auto it = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(key, 0) == 0; });
    ASSERT_NE(it, lines.end()) << row.id << " is missing from docs/emulator.md";
    if (row.params.algorithm == Algorithm::fma_chain) continue;
    std::ostringstream cells;
    cells << "| " << row.params.L << " | " << row.params.F << " | " << to_string(row.params.rounding);
    EXPECT_NE(it->find(cells.str()), std::string::npos) << row.id << ": " << *it;
    const char* underflow = row.params.underflow_zero == UnderflowZero::positive ? " | +0 |" : " | -0 |";
    EXPECT_NE(it->find("| " + std::to_string(row.params.e_zero) + underflow), std::string::npos) << row.id;
  }
}

// Instruction's fields are public: a changed shape or type is refused by name wherever the
// instruction is used, not divided by or dereferenced (the audit of 2026-11-30: k = 0 ended a GEMM
// with SIGFPE, a = f64 on an fp8 row read an empty optional).
TEST(InstructionTable, ChangedInstructionsAreRefused) {
  const Instruction good = parse_instruction("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3");
  EXPECT_NO_THROW(validate(good));
  Instruction k0 = good;
  k0.k = 0;
  const std::vector<std::uint8_t> codes(4, 0x38);
  GemmOperands ops{CodeMatrix(Format::float8_e4m3fn, 2, 2, std::span<const std::uint8_t>(codes)),
                   CodeMatrix(Format::float8_e4m3fn, 2, 2, std::span<const std::uint8_t>(codes)), {}, {}, {}};
  test::expect_throw_with([&] { gemm(KernelSchedule::chain(k0), ops); }, "requires K=32, got 0");
  test::expect_throw_with([&] { dot(k0, {}, {}, 0u); }, "requires K=32, got 0");
  Instruction f64_operand = good;
  f64_operand.a = Type::f64;
  test::expect_throw_with([&] { gemm(KernelSchedule::chain(f64_operand), ops); }, "got f64");
  Instruction d_changed = good;
  d_changed.d = Type::f16;  // the f16-output form is another row
  test::expect_throw_with([&] { validate(d_changed); }, "has D of type f32, got f16");
  Instruction sparse_flag = good;
  sparse_flag.sparse = true;  // the sparse wgmma's K is 64
  test::expect_throw_with([&] { validate(sparse_flag); }, "sparse form");
  test::expect_throw_with([&] { validate(Instruction{}); }, "no instruction");
}

// Values outside the Type and Format enums (a cast integer) are named by number or refused, never
// read from past the end of a table (UBSan; from an audit, 2026-11-30).
TEST(EmulatorTable, ValuesOutsideTheEnumsAreNotReadFromTables) {
  EXPECT_EQ(to_string(static_cast<Type>(99)), "an unknown type");
  EXPECT_THROW((void)format_of(static_cast<Type>(99)), std::invalid_argument);
  const std::vector<std::uint8_t> codes(4, 0);
  try {
    (void)CodeMatrix(static_cast<Format>(12), 2, 2, codes);
    ADD_FAILURE() << "a CodeMatrix of Format 12 was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CodeMatrix: an unknown format (12)"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)CodeMatrix(Format::float8_e4m3fn, 2, 2, codes, static_cast<Order>(2)), std::invalid_argument);
  // A type outside the enum is in no set (the bit shift was 1 << 200: UBSan) and so is refused.
  EXPECT_FALSE(TypeSet({Type::e4m3}).contains(static_cast<Type>(200)));
  Instruction bad = parse_instruction("sm_90a wgmma.mma_async m64n64k16 f32 f16 f16");
  bad.b = static_cast<Type>(200);
  EXPECT_THROW(validate(bad), std::invalid_argument);
  // FdpaParams and KernelSchedule fields, gemm paths.
  for (const auto& change : std::vector<std::function<void(FdpaParams&)>>{
           [](FdpaParams& p) { p.algorithm = static_cast<Algorithm>(5); },
           [](FdpaParams& p) { p.rounding = static_cast<OutputRounding>(4); },
           [](FdpaParams& p) { p.underflow_zero = static_cast<UnderflowZero>(2); }}) {
    FdpaParams p = bad.params();
    change(p);
    EXPECT_THROW(validate(p), std::invalid_argument);
  }
  EXPECT_THROW((void)accumulator_format(static_cast<OutputRounding>(4)), std::invalid_argument);
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async m64n64k16 f32 f16 f16");
  for (const auto& change : std::vector<std::function<void(KernelSchedule&)>>{
           [](KernelSchedule& s) { s.accumulation = static_cast<Accumulation>(2); },
           [](KernelSchedule& s) { s.promotion_fma = static_cast<PromotionFma>(3); },
           [](KernelSchedule& s) { s.c_placement = static_cast<CPlacement>(2); },
           [](KernelSchedule& s) { s.reduction = static_cast<SplitKReduction>(2); }}) {
    KernelSchedule s = KernelSchedule::chain(ins);
    change(s);
    EXPECT_THROW(s.validate(), std::invalid_argument);
  }
  EXPECT_FALSE(gemm_path_available(static_cast<GemmPath>(5)));
  DotOperands ops;
  ops.a_format = static_cast<Format>(200);
  ops.b_format = Format::float16;
  EXPECT_THROW((void)fdpa(ins.params(), ops), std::invalid_argument);
}

TEST(Arith, PairwiseSumOfNothingIsRefused) {
  test::expect_throw_with([] { sum_f32_pairwise({}); }, "no partial sums");
  const std::uint32_t one = 0x3F800000u;
  const std::vector<std::uint32_t> three = {one, one, one};
  EXPECT_EQ(sum_f32_pairwise(three), 0x40400000u);
}

}  // namespace
}  // namespace blockscale::emulator
