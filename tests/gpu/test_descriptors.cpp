// SPDX-License-Identifier: Apache-2.0
// Descriptor encoders against values computed independently of them: the tcgen05 instruction
// descriptors of gpu.md §1.5 (computed with CUTLASS's own encoders), and smem / wgmma descriptors
// assembled by hand from the field tables of gpu.md §1.6 and §3.2.
#include <gtest/gtest.h>

#include <stdexcept>

#include "blockscale/gpu/descriptors.h"
#include "expect_throw.h"

namespace {

using namespace blockscale;
using namespace blockscale::gpu::desc;

Tcgen05Instr instr(Tcgen05Kind kind, Format a, Format b, int m, int n, Format scale = Format::float8_e8m0fnu) {
  Tcgen05Instr in;
  in.kind = kind;
  in.a = a, in.b = b;
  in.d = Format::float32;
  in.m = m, in.n = n;
  in.scale = scale;
  return in;
}

TEST(Tcgen05InstrDesc, GoldenValuesOfGpuMd) {
  const Format e4 = Format::float8_e4m3fn, e5 = Format::float8_e5m2, e2m1 = Format::float4_e2m1fn;
  EXPECT_EQ(encode_tcgen05_idesc(instr(Tcgen05Kind::mxf8f6f4, e4, e4, 128, 128)), 0x08A00000u);
  EXPECT_EQ(encode_tcgen05_idesc(instr(Tcgen05Kind::mxf8f6f4, e2m1, e4, 128, 256)), 0x08C00280u);
  EXPECT_EQ(encode_tcgen05_idesc(instr(Tcgen05Kind::mxf4nvf4, e2m1, e2m1, 128, 256, Format::float8_ue4m3)),
            0x08400480u);
  EXPECT_EQ(encode_tcgen05_idesc(instr(Tcgen05Kind::mxf4, e2m1, e2m1, 128, 8)), 0x08820480u);
  EXPECT_EQ(encode_tcgen05_idesc(instr(Tcgen05Kind::f8f6f4, e4, e5, 128, 256)), 0x08400410u);
  EXPECT_EQ(encode_tcgen05_idesc(instr(Tcgen05Kind::f8f6f4, e2m1, e2m1, 64, 8)), 0x04021690u);
  Tcgen05Instr mn = instr(Tcgen05Kind::f8f6f4, e4, e4, 128, 128);
  mn.b_mn_major = true;
  EXPECT_EQ(encode_tcgen05_idesc(mn), 0x08210010u);
}

TEST(Tcgen05InstrDesc, FieldsOfTheOtherKinds) {
  // kind::f16, bf16 x bf16 -> f32, M128 N256: D F32 (1 << 4), A / B BF16 (1 << 7, 1 << 10),
  // N >> 3 = 32 at bit 17, M >> 4 = 8 at bit 24.
  EXPECT_EQ(encode_tcgen05_idesc(instr(Tcgen05Kind::f16, Format::bfloat16, Format::bfloat16, 128, 256)),
            0x10u | 0x80u | 0x400u | (32u << 17) | (8u << 24));
  // kind::tf32: type code 2 for A and B.
  EXPECT_EQ(encode_tcgen05_idesc(instr(Tcgen05Kind::tf32, Format::tfloat32, Format::tfloat32, 128, 8)),
            0x10u | (2u << 7) | (2u << 10) | (1u << 17) | (8u << 24));
  // Block-scaled SF IDs: SFA at bits 29-30, SFB at bits 4-5.
  Tcgen05Instr in = instr(Tcgen05Kind::mxf8f6f4, Format::float8_e4m3fn, Format::float6_e3m2fn, 128, 16);
  in.sfa_id = 3, in.sfb_id = 2;
  EXPECT_EQ(encode_tcgen05_idesc(in), (2u << 4) | (4u << 10) | (2u << 17) | (1u << 23) | (1u << 27) | (3u << 29));
}

TEST(Tcgen05InstrDesc, RejectsWhatThePtxTablesForbid) {
  const Format e4 = Format::float8_e4m3fn, e2m1 = Format::float4_e2m1fn;
  EXPECT_THROW(encode_tcgen05_idesc(instr(Tcgen05Kind::mxf8f6f4, e4, e4, 64, 128)), std::invalid_argument);  // M
  EXPECT_THROW(encode_tcgen05_idesc(instr(Tcgen05Kind::mxf4, e4, e4, 128, 128)), std::invalid_argument);   // types
  EXPECT_THROW(encode_tcgen05_idesc(instr(Tcgen05Kind::mxf8f6f4, e4, e4, 128, 12)), std::invalid_argument);  // N
  EXPECT_THROW(encode_tcgen05_idesc(instr(Tcgen05Kind::f8f6f4, e4, e4, 128, 8)), std::invalid_argument);  // N % 16
  EXPECT_THROW(encode_tcgen05_idesc(instr(Tcgen05Kind::mxf4, e2m1, e2m1, 128, 64, Format::float8_ue4m3)),
               std::invalid_argument);  // mxf4 scales are ue8m0
  Tcgen05Instr odd = instr(Tcgen05Kind::mxf4nvf4, e2m1, e2m1, 128, 64);
  odd.sfa_id = 1;
  EXPECT_THROW(encode_tcgen05_idesc(odd), std::invalid_argument);  // SF IDs 0 or 2
  Tcgen05Instr fp4_mn = instr(Tcgen05Kind::f8f6f4, e2m1, e4, 128, 64);
  fp4_mn.a_mn_major = true;
  EXPECT_THROW(encode_tcgen05_idesc(fp4_mn), std::invalid_argument);  // sub-byte types are K-major
  try {
    encode_tcgen05_idesc(instr(Tcgen05Kind::mxf8f6f4, e4, e4, 64, 128));
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("M = 128"), std::string::npos) << e.what();
  }
}

// Rules of the PTX facts that the encoder let through before the audit of 2026-11-30.
TEST(Tcgen05InstrDesc, ScaleIdsMnMajorStepsAndKindValues) {
  const Format e4 = Format::float8_e4m3fn, e5 = Format::float8_e5m2, e2m1 = Format::float4_e2m1fn;
  // ue4m3 scales are block16 (scale_vec::4X): the scale is the whole TMEM word, SF ID 0.
  Tcgen05Instr nvfp4 = instr(Tcgen05Kind::mxf4nvf4, e2m1, e2m1, 128, 64, Format::float8_ue4m3);
  EXPECT_NO_THROW(encode_tcgen05_idesc(nvfp4));
  nvfp4.sfa_id = nvfp4.sfb_id = 2;
  EXPECT_THROW(encode_tcgen05_idesc(nvfp4), std::invalid_argument);
  Tcgen05Instr mxf4_block32 = instr(Tcgen05Kind::mxf4nvf4, e2m1, e2m1, 128, 64);
  mxf4_block32.sfa_id = mxf4_block32.sfb_id = 2;  // ue8m0 block32 (2X): half-word 2 exists
  EXPECT_NO_THROW(encode_tcgen05_idesc(mxf4_block32));
  // An 8-bit B stored MN-major: N in steps of 16 (PTX Table 50), for both fp8 kinds.
  Tcgen05Instr mn = instr(Tcgen05Kind::mxf8f6f4, e4, e4, 128, 24);
  mn.b_mn_major = true;
  EXPECT_THROW(encode_tcgen05_idesc(mn), std::invalid_argument);
  mn.n = 32;
  EXPECT_NO_THROW(encode_tcgen05_idesc(mn));
  Tcgen05Instr mn64 = instr(Tcgen05Kind::f8f6f4, e5, e5, 64, 8);
  mn64.b_mn_major = true;
  EXPECT_THROW(encode_tcgen05_idesc(mn64), std::invalid_argument);
  mn64.b_mn_major = false;
  EXPECT_NO_THROW(encode_tcgen05_idesc(mn64));  // K-major: N step 8 at M = 64
  // A kind value outside the enum was encoded as f8f6f4.
  Tcgen05Instr unknown = instr(static_cast<Tcgen05Kind>(9), e4, e4, 128, 64);
  EXPECT_THROW(encode_tcgen05_idesc(unknown), std::invalid_argument);
}

// An SF ID picks a byte or half-word of the scale's TMEM word and has two bits in the block-scaled
// instruction descriptor (PTX ISA Tables 45-47: SFB ID at bits 4-5, SFA ID at bits 29-30). An ID
// outside 0..3 would spill into the next field, so the encoder refuses it on either operand.
TEST(Tcgen05InstrDesc, ScaleIdsOutsideTwoBitsAreRefused) {
  const Format e4 = Format::float8_e4m3fn;
  Tcgen05Instr in = instr(Tcgen05Kind::mxf8f6f4, e4, e4, 128, 64);
  in.sfa_id = in.sfb_id = 3;
  EXPECT_NO_THROW(encode_tcgen05_idesc(in));
  for (const int bad_id : {-1, 4}) {
    for (const bool on_a : {true, false}) {
      Tcgen05Instr out_of_range = in;
      (on_a ? out_of_range.sfa_id : out_of_range.sfb_id) = bad_id;
      SCOPED_TRACE(std::string(on_a ? "SFA" : "SFB") + " ID " + std::to_string(bad_id));
      test::expect_throw_with([&] { encode_tcgen05_idesc(out_of_range); }, "SF IDs are 0..3");
    }
  }
}

TEST(MatrixDescriptors, BaseOffsetNeedsASwizzle) {
  EXPECT_THROW(encode_sm100_smem_desc(0x200, 0, 128, Sm100Swizzle::none, 3), std::invalid_argument);
  EXPECT_THROW(encode_wgmma_desc(0x80, 128, 256, WgmmaSwizzle::none, 1), std::invalid_argument);
  EXPECT_NO_THROW(encode_sm100_smem_desc(0x480, 16, 1024, Sm100Swizzle::b128, 1));
}

TEST(Sm100SmemDesc, FieldsAndVersionBit) {
  // K-major SW128 tile at 0x400: start 0x400 >> 4, LBO 16 >> 4 = 1, SBO 1024 >> 4 = 64, bit 46,
  // swizzle code 2 at bits 61-63.
  EXPECT_EQ(encode_sm100_smem_desc(0x400, 16, 1024, Sm100Swizzle::b128), 0x4000404000010040ull);
  // The scale-factor copy source: no swizzle, LBO 0, SBO 128.
  EXPECT_EQ(encode_sm100_smem_desc(0x200, 0, 128, Sm100Swizzle::none), 0x0000400800000020ull);
  // Base offset (bits 49-51) and absolute LBO mode (bit 52).
  EXPECT_EQ(encode_sm100_smem_desc(0, 0, 0, Sm100Swizzle::b64, 5, true),
            (1ull << 46) | (5ull << 49) | (1ull << 52) | (4ull << 61));
  static_assert(pack_sm100_smem_desc(0, 0, 0, Sm100Swizzle::none) == (1ull << 46), "bit 46 is always set");
  EXPECT_THROW(encode_sm100_smem_desc(0x408, 16, 1024, Sm100Swizzle::b128), std::invalid_argument);  // alignment
  EXPECT_THROW(encode_sm100_smem_desc(1u << 18, 16, 1024, Sm100Swizzle::b128), std::invalid_argument);
  EXPECT_THROW(encode_sm100_smem_desc(0, 16, 1024, static_cast<Sm100Swizzle>(3)), std::invalid_argument);
}

TEST(WgmmaDesc, Fields) {
  // SW128 K-major: start 0x1000 >> 4, LBO 1, SBO 64, swizzle 1 at bits 62-63, no version bit.
  EXPECT_EQ(encode_wgmma_desc(0x1000, 16, 1024, WgmmaSwizzle::b128), 0x4000004000010100ull);
  // The probes' no-swizzle layout: LBO 128 (K-adjacent core matrices), SBO 256 (8-row groups).
  EXPECT_EQ(encode_wgmma_desc(0x80, 128, 256, WgmmaSwizzle::none), 0x0000001000080008ull);
  EXPECT_EQ(encode_wgmma_desc(0, 0, 0, WgmmaSwizzle::b32, 3), (3ull << 49) | (3ull << 62));
  EXPECT_THROW(encode_wgmma_desc(0x1001, 16, 1024, WgmmaSwizzle::b128), std::invalid_argument);
  EXPECT_THROW(encode_wgmma_desc(0, 16, 1024, WgmmaSwizzle::b128, 8), std::invalid_argument);
}

}  // namespace
