// SPDX-License-Identifier: Apache-2.0
// Generation: deterministic in the seed, the same for an operation alone and inside its family, and
// every kind's verification able to fail (a flipped output bit is reported at its line).
#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace blockscale::golden
