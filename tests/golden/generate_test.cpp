// SPDX-License-Identifier: Apache-2.0
// Generation: deterministic in the seed, the same for an operation alone and inside its family, and
// every kind's verification able to fail (a flipped output bit is reported at its line).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "blockscale/emulator/gemm.h"
#include "blockscale/golden/file.h"
#include "blockscale/golden/operation.h"
#include "blockscale/golden/set.h"
#include "blockscale/golden/verify.h"

namespace blockscale::golden {
namespace {

// One operation of each kind (and the stochastic and NVFP4 variants).
const char* kOps[] = {
    "convert:f32:e4m3",
    "convert:f64:ue8m0",
    "convert:bf16:e2m1",
    "convert:f32:e5m2:stochastic",
    "quantize:mxfp8_e4m3:te_mxfp8",
    "quantize:nvfp4:nvfp4_torchao",
    "quantize:nvfp4:nvfp4_te_stochastic",
    "layout:cdna4_mfma16",
    "grouped_layout:rows:0,5,133,133,300",
    "weight_interleave:trtllm_sm90_fp4",
    "pack:fp6_padded16:e3m2",
    "instruction:sm_120a mma.sync.aligned.kind::mxf8f6f4.block_scale.block32 m16n8k32 f32 e3m2 e2m1 ue8m0",
    "instruction:sm_90a mma.sync.aligned m16n8k32 f16 e5m2 e4m3",
    "instruction:sm_80 mma.sync.aligned m16n8k4 f32 tf32 tf32",
    "instruction:sm_100a mma.sync.aligned m16n8k8 f64 f64 f64",
    "gemm:sm_90a_wgmma_e5m2_e4m3_promotion_p1_mul_then_add_epilogue",
    "gemm:sm_100a_mxf8f6f4_e3m2_e2m1_chain_k80",
};

TEST(GoldenGenerate, SameSeedSameBytesOtherSeedOtherCases) {
  for (const char* id : kOps) {
    // Enough cases that every set goes past its edge list into random data.
    const auto a = generate_set(id, 11, DataKind::mixed, 600);
    const auto b = generate_set(id, 11, DataKind::mixed, 600);
    const auto c = generate_set(id, 12, DataKind::mixed, 600);
    ASSERT_EQ(a.size(), 1u) << id;
    EXPECT_EQ(format_golden(a[0]), format_golden(b[0])) << id;
    EXPECT_NE(a[0].words, c[0].words) << id << ": the seed changes nothing";
    // Mixed conversions are their whole edge list plus the count in random and realistic inputs.
    if (std::string(id).rfind("convert:", 0) == 0) {
      EXPECT_GT(a[0].cases(), 600u) << id;
    } else {
      EXPECT_EQ(a[0].cases(), 600u) << id;
    }
  }
}

TEST(GoldenGenerate, EveryDataKindGeneratesAndVerifies) {
  for (const char* id : kOps) {
    for (DataKind d : {DataKind::edge, DataKind::random, DataKind::realistic, DataKind::mixed}) {
      const bool complete_edge = std::string(id).rfind("convert:", 0) == 0 && d == DataKind::edge;
      const auto files =
          generate_set(id, 5, d, complete_edge ? std::nullopt : std::optional<std::size_t>(24));
      const FileReport r = verify_golden(files[0]);
      EXPECT_TRUE(r.ok()) << id << " " << to_string(d) << ": " << r.error
                          << (r.first.empty() ? "" : r.first[0].detail);
      EXPECT_EQ(files[0].header.data, to_string(d));
      // A count is the file's count (a conversion's edge list is whole, and its mixed data add the
      // count to it), also where the edge cases alone would be more.
      const bool convert = std::string(id).rfind("convert:", 0) == 0;
      if (!convert) {
        EXPECT_EQ(files[0].cases(), 24u) << id << " " << to_string(d);
      }
    }
  }
}

TEST(GoldenGenerate, AnOperationAloneEqualsItsFamilyMember) {
  for (const std::string fam : {"layouts", "gemms"}) {
    const auto all = generate_set(fam, 3, std::nullopt, std::nullopt);
    for (const GoldenFile& f : all) {
      const auto op = make_operation(f);
      const auto alone = generate_set(op->id(), 3, std::nullopt, std::nullopt);
      ASSERT_EQ(alone.size(), 1u);
      EXPECT_EQ(format_golden(alone[0]), format_golden(f)) << op->id();
    }
  }
}

TEST(GoldenGenerate, TheEdgeListOfAConversionIsComplete) {
  // An explicit count would truncate the list: refused.
  EXPECT_THROW(generate_set("convert:f32:e4m3", 1, DataKind::edge, 10), std::invalid_argument);
  const auto files = generate_set("convert:f32:e2m1", 1, DataKind::edge, std::nullopt);
  // Every e2m1 value and every midpoint between neighbours (both signs) is an input.
  std::set<std::uint64_t> inputs;
  for (std::size_t i = 0; i < files[0].cases(); ++i) inputs.insert(files[0].case_words(i)[0]);
  for (std::uint32_t x : {0x3f800000u, 0x3fa00000u, 0x40a00000u, 0xc0a00000u, 0x40c00000u, 0x40e00000u,
                          0x3e800000u, 0x7fc00000u}) {
    EXPECT_TRUE(inputs.count(x)) << std::hex << x;
  }
}

// `blockscale golden gen` without --data: "edge for conversions, mixed otherwise" (its help), the
// conversion family and each convert: operation alike.
TEST(GoldenGenerate, WithoutDataConversionsTakeTheirEdgeLists) {
  EXPECT_TRUE(default_data("conversions") == DataKind::edge);
  EXPECT_TRUE(default_data("convert:f32:e2m1") == DataKind::edge);
  for (const char* other : {"quantization", "layouts", "instructions", "gemms"}) {
    EXPECT_TRUE(default_data(other) == DataKind::mixed) << other;
  }
  const auto unset = generate_set("convert:f32:e2m1", 1, std::nullopt, std::nullopt);
  const auto edge = generate_set("convert:f32:e2m1", 1, DataKind::edge, std::nullopt);
  ASSERT_EQ(unset.size(), 1u);
  EXPECT_EQ(format_golden(unset[0]), format_golden(edge[0]));
}

// Verification of every kind can fail: one flipped bit in one expected output is one mismatch, at
// its line.
TEST(GoldenGenerate, AFlippedOutputBitIsFoundAtItsLine) {
  for (const char* id : kOps) {
    auto files = generate_set(id, 9, DataKind::mixed, 30);
    GoldenFile& f = files[0];
    const std::size_t victim = 17;
    const std::size_t last = victim * f.words_per_case + f.words_per_case - 1;
    f.words[last] ^= 1;
    const GoldenFile g = parse_golden(format_golden(f), "flipped.txt");
    const FileReport r = verify_golden(g);
    EXPECT_EQ(r.mismatches, 1u) << id;
    ASSERT_EQ(r.first.size(), 1u) << id;
    EXPECT_EQ(r.first[0].index, victim) << id;
    EXPECT_EQ(r.first[0].line, g.case_lines[victim]) << id;
  }
}

// A file is built in memory: a case count that could not fit is refused before anything is drawn.
TEST(GoldenGenerate, AFileTooLargeToBuildIsRefusedUpFront) {
  GenerateOptions o;
  o.cases = 10'000'000;
  const auto op = operation_from_id("gemm:sm_90a_mma_e4m3_emulated_chain");
  try {
    (void)generate(*op, o);
    FAIL() << "accepted 10^7 gemm cases";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("words one file may hold"), std::string::npos) << e.what();
  }
}

TEST(GoldenGenerate, UnknownIdsAreRefusedWithTheChoices) {
  const std::pair<const char*, const char*> bad[] = {
      {"nonsense", "is not <kind>:<operation>"},
      {"convert:f32:e9m9", "unknown destination format 'e9m9'"},
      {"convert:f32:e4m3:fast", "is not <src>:<dst> or <src>:<dst>:stochastic"},
      {"quantize:mxfp4:nope", "unknown quantization recipe 'nope'"},
      {"quantize:nvfp4:ocp", ""},
      {"layout:tiled_9x9", "tiled_9x9"},
      {"pack:fp4_dense:e4m3", ""},
      {"instruction:sm_90a wgmma.mma_async m64n8k32 f32 e2m1 e4m3", ""},
      {"gemm:fastest", "unknown GEMM schedule 'fastest'"},
      {"teleport:x", "unknown operation kind 'teleport'"},
  };
  for (const auto& [id, msg] : bad) {
    try {
      (void)operation_from_id(id);
      ADD_FAILURE() << id << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << id << ": " << e.what();
    }
  }
}


// The operations of files written outside the committed families (the conformance harness's
// failure files): one instruction alone, and a GEMM of any shape with bf16 output.
// A file's instructions must share one model: one whose second @op line names an instruction of the
// same operands but another model (sm_80's f16 mma for sm_120a's) fails the cases where the outputs
// part, naming both. The check compares every member with the first, the second included.
TEST(GoldenOperations, InstructionsOfOneFileMustShareTheirModel) {
  const auto files = generate_set("instruction:sm_100a mma.sync.aligned m16n8k16 f16 f16 f16", 3, DataKind::random, 400);
  ASSERT_EQ(files.size(), 1u);
  std::string text = format_golden(files[0]);
  const std::string second = "@op sm_120a mma.sync.aligned m16n8k16 f16 f16 f16";
  const std::size_t at = text.find(second);
  ASSERT_NE(at, std::string::npos) << "the class's second member is no longer sm_120a's";
  ASSERT_LT(text.find("@op sm_100a"), at);  // sm_100a first, sm_120a second
  text.replace(at, second.size(), "@op sm_80 mma.sync.aligned m16n8k16 f16 f16 f16");
  const FileReport r = verify_golden(parse_golden(text, "mixed_models.txt"));
  EXPECT_TRUE(r.error.empty()) << r.error;  // the file is well formed; its cases fail
  ASSERT_GT(r.mismatches, 0u);
  ASSERT_FALSE(r.first.empty());
  const std::string& why = r.first[0].detail;
  EXPECT_NE(why.find("no longer share a model"), std::string::npos) << why;
  EXPECT_NE(why.find("'sm_80 mma.sync.aligned m16n8k16 f16 f16 f16' gives"), std::string::npos) << why;
}

TEST(GoldenOperations, OneInstructionAlone) {
  const std::string name = "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3";
  const auto one = instruction_operation(name);
  EXPECT_EQ(one->op_lines(), std::vector<std::string>{name});
  EXPECT_EQ(one->id(), "instruction:" + name);
  EXPECT_EQ(one->fields(), operation_from_id("instruction:" + name)->fields());
  EXPECT_THROW((void)instruction_operation("sm_90a wgmma.mma_async m64n8k32 f32 e2m1 e4m3"), std::invalid_argument);
}

// out=bf16 narrows the f32 result as cvt.rn.bf16.f32: expected codes worked out by hand from the
// bf16 grid (8 significand bits), not by any code of blockscale.
TEST(GoldenOperations, Bf16OutputNarrowsAsCvtRnBf16) {
  // D = C: a tcgen05 chain (ST-FDPA, RZ-FP32) over zero products adds nothing to C.
  const emulator::KernelSchedule chain = emulator::block_scaled_schedule(
      emulator::Arch::sm_100a, Format::float8_e4m3fn, Format::float8_e4m3fn, Format::float8_e8m0fnu, 32);
  const auto f32 = gemm_operation("f32_probe", 1, 1, 32, chain);
  const auto bf16 = gemm_operation("bf16_probe", 1, 1, 32, chain, GemmOutput::bf16);
  EXPECT_EQ(fields_string(bf16->fields()), "a:e4m3[32] b:e4m3[32] c:f32 sa:ue8m0 sb:ue8m0 -> d:bf16");
  const std::pair<std::uint32_t, std::uint32_t> cases[] = {
      {0x3F800000u, 0x3F80u},  // 1.0
      {0x3F808000u, 0x3F80u},  // the tie between 1.0 and its successor: to even (down)
      {0x3F818000u, 0x3F82u},  // the next tie: to even (up)
      {0x3F808001u, 0x3F81u},  // just above the tie
      {0xBF7FFFFFu, 0xBF80u},  // -(1 - 2^-24) rounds to -1.0
      {0x7F7F7FFFu, 0x7F7Fu},  // below the last tie: the largest bf16
      {0x7F7FFFFFu, 0x7F80u},  // f32 max: overflow to +Inf
      {0xFF800000u, 0xFF80u},  // -Inf
      {0x00018000u, 0x0002u},  // subnormal tie (1.5 units of bf16's smallest subnormal): to even
      {0x00008000u, 0x0000u},  // half the smallest bf16 subnormal: to even (zero)
      {0x807FFFFFu, 0x8080u},  // the largest negative f32 subnormal rounds to -2^-126
      {0x7FC00000u, 0x7FFFu},  // NaN: the canonical 0x7FFF whatever the payload and sign
      {0xFFC00001u, 0x7FFFu},
      {0x7F800001u, 0x7FFFu},
  };
  for (const auto& [c, want] : cases) {
    std::vector<std::uint64_t> in(32 + 32, 0);  // a and b: +0 codes
    in.push_back(c);
    in.push_back(127);  // sa = sb = 1.0
    in.push_back(127);
    std::uint64_t d32 = 0, d16 = 0;
    f32->compute(in, std::span<std::uint64_t>(&d32, 1));
    if ((c & 0x7FFFFFFFu) <= 0x7F800000u) {
      ASSERT_EQ(d32, c) << std::hex << "the f32 chain does not return C = " << c;
    }
    bf16->compute(in, std::span<std::uint64_t>(&d16, 1));
    EXPECT_EQ(d16, want) << std::hex << "C = 0x" << c;
  }
}

TEST(GoldenOperations, Bf16GemmFilesRoundTripAndFailWhenWrong) {
  const emulator::KernelSchedule promotion = emulator::KernelSchedule::hopper_promotion(
      emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3"), 1);
  const auto op = gemm_operation("promotion_bf16", 1, 1, 64, promotion, GemmOutput::bf16);
  ASSERT_EQ(op->op_lines().size(), 1u);
  EXPECT_NE(op->op_lines()[0].find(" reduction=sequential out=bf16 instruction=sm_90a wgmma"), std::string::npos)
      << op->op_lines()[0];
  GenerateOptions o;
  o.cases = 40;
  const GoldenFile f = generate(*op, o);
  const GoldenFile g = parse_golden(format_golden(f), "promotion_bf16.txt");
  EXPECT_EQ(format_golden(g), format_golden(f));
  const FileReport r = verify_golden(g);
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.operation, "gemm:promotion_bf16");
  // Without out=bf16 the same file's fields no longer match the operation.
  std::string text = format_golden(f);
  const std::size_t at = text.find(" out=bf16");
  ASSERT_NE(at, std::string::npos);
  EXPECT_FALSE(verify_golden(parse_golden(std::string(text).erase(at, 9), "x.txt")).error.empty());
  // A flipped bit of one bf16 result is one mismatch.
  GoldenFile flipped = f;
  flipped.words[5 * f.words_per_case + f.words_per_case - 1] ^= 1;
  const FileReport fr = verify_golden(parse_golden(format_golden(flipped), "flipped.txt"));
  EXPECT_EQ(fr.mismatches, 1u);
  ASSERT_EQ(fr.first.size(), 1u);
  EXPECT_EQ(fr.first[0].index, 5u);
  // Other outputs and accumulators are refused at the @op line.
  std::string f16_out = text;
  f16_out.replace(at, 9, " out=f16");
  const FileReport bad = verify_golden(parse_golden(f16_out, "f16.txt"));
  EXPECT_NE(bad.error.find("f16.txt:4: out='f16' (bf16"), std::string::npos) << bad.error;
  const emulator::KernelSchedule f16_chain =
      emulator::KernelSchedule::chain(emulator::parse_instruction("sm_90a wgmma.mma_async m64n8k16 f16 f16 f16"));
  EXPECT_THROW((void)gemm_operation("f16_bf16", 1, 1, 16, f16_chain, GemmOutput::bf16), std::invalid_argument);
  EXPECT_THROW((void)gemm_operation("too_long", 1, 1, 8192, promotion), std::invalid_argument);
}

}  // namespace
}  // namespace blockscale::golden
