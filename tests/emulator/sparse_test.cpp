// SPDX-License-Identifier: Apache-2.0
// Sparse MMA on sm_90a (mma.sp::ordered_metadata, wgmma.mma_async.sp): names, the rules the
// emulator enforces on shapes and metadata, and the rule itself against H100 output
// (tests/data/sparse_h100, docs/emulator.md "Sparse MMA"): each output is the dense form of K/2
// applied to A's stored values and the B rows their positions select.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/emulator/gemm.h"
#include "blockscale/emulator/mma.h"
#include "blockscale/golden/file.h"
#include "blockscale/golden/verify.h"
#include "expect_throw.h"

namespace blockscale::emulator {
namespace {

using test::expect_throw_with;

// Every sparse form of the table: row, logical K, operand types.
std::vector<Instruction> every_sparse_form() {
  std::vector<Instruction> out;
  for (const InstructionRow& row : instruction_table()) {
    for (const ShapeRule& s : row.sparse_shapes) {
      for (int ta = 0; ta < kTypeCount; ++ta) {
        for (int tb = 0; tb < kTypeCount; ++tb) {
          const auto a = static_cast<Type>(ta), b = static_cast<Type>(tb);
          if (!row.a_types.contains(a) || !row.b_types.contains(b)) continue;
          if ((a == Type::f16) != (b == Type::f16)) continue;  // PTX has no f16 x bf16
          out.push_back(make_sparse_instruction(row, s.m, s.n_min, s.k, a, b));
        }
      }
    }
  }
  return out;
}

TEST(SparseNames, EveryFormRoundTripsAndHasADenseFormOfHalfK) {
  const auto forms = every_sparse_form();
  // wgmma: tf32, f16, bf16, f16 -> f16, 4 + 4 fp8 mixes; mma.sp: tf32 and f16 -> f16 at two K, f16
  // and bf16 at two K, 4 fp8 mixes.
  EXPECT_EQ(forms.size(), 24u);
  for (const Instruction& ins : forms) {
    const Instruction back = parse_instruction(ins.name());
    EXPECT_TRUE(back.sparse) << ins.name();
    EXPECT_EQ(back.name(), ins.name());
    EXPECT_EQ(back.row, ins.row);
    const Instruction dense = ins.dense_form();
    EXPECT_FALSE(dense.sparse);
    EXPECT_EQ(dense.k * 2, ins.k) << ins.name();
    EXPECT_EQ(dense.params(), ins.params());
    EXPECT_EQ(ins.sparse_group(), ins.a == Type::tf32 ? 2 : 4);
  }
}

TEST(SparseNames, PtxSpellingsParse) {
  const Instruction m = parse_instruction("sm_90a mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32");
  EXPECT_TRUE(m.sparse);
  EXPECT_EQ(m.name(), "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16");
  const Instruction w = parse_instruction("sm_90a wgmma.mma_async.sp.sync.aligned.m64n256k64.f32.e5m2.e4m3");
  EXPECT_TRUE(w.sparse);
  EXPECT_EQ(w.name(), "sm_90a wgmma.mma_async.sp m64n256k64 f32 e5m2 e4m3");
  EXPECT_EQ(w.dense_form().name(), "sm_90a wgmma.mma_async m64n256k32 f32 e5m2 e4m3");
  EXPECT_EQ(parse_instruction("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k8 f32 tf32 tf32").dense_form().k, 4);
}

TEST(SparseNames, UnmodelledFormsAreRefusedByName) {
  expect_throw_with([] { parse_instruction("sm_100a tcgen05.mma.sp.cta_group::1.kind::f16 m128n256k32 f32 f16 f16"); },
                    "tcgen05.mma.sp is not modelled");
  expect_throw_with([] { parse_instruction("sm_80 mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16"); },
                    "modelled on sm_90a only");
  expect_throw_with([] { parse_instruction("sm_90a mma.sp.sync.aligned m16n8k32 f32 f16 f16"); },
                    "without ::ordered_metadata is not modelled");
  expect_throw_with([] { parse_instruction("sm_90a mma.sp.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16"); },
                    "more than one sparse qualifier (.sp, .sp::ordered_metadata)");
  expect_throw_with([] { parse_instruction("sm_90a wgmma.mma_async.sp::ordered_metadata m64n8k32 f32 f16 f16"); },
                    "wgmma takes .sp");
  // ptxas rejects fp8 mma.sp with an f16 accumulator on sm_90a; the row has no sparse form.
  expect_throw_with([] { parse_instruction("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k64 f16 e4m3 e4m3"); },
                    "sparse mma.sync on sm_90a with D f16 takes A f16 with B f16, got A e4m3");
  expect_throw_with([] { parse_instruction("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k8 f32 f16 f16"); },
                    "sparse form with M=16 requires K=16 or K=32, got 8");
  expect_throw_with([] { parse_instruction("sm_90a wgmma.mma_async.sp m64n260k32 f32 f16 f16"); },
                    "N in 8..256 in steps of 8, got 260");
  expect_throw_with([] { make_sparse_instruction(*find_row("sm_90a.mma.f64"), 16, 8, 8, Type::f64, Type::f64); },
                    "has no modelled sparse form");
  expect_throw_with([] { (void)parse_instruction("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3").dense_form(); },
                    "is not a sparse instruction");
}

TEST(SparseRules, DenseEntryPointsAndScheduleRefuseSparseInstructions) {
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async.sp m64n8k64 f32 e4m3 e4m3");
  expect_throw_with([&] { dot(ins, std::vector<std::uint32_t>(64), std::vector<std::uint32_t>(64), 0); }, "use dot_sparse");
  expect_throw_with([&] { (void)KernelSchedule::chain(ins); }, "not in GEMM schedules");
  const Instruction dense = ins.dense_form();
  expect_throw_with([&] { dot_sparse(dense, {}, {}, {}, 0); }, "not a sparse instruction");
}

TEST(SparseRules, MetadataAndSizesAreChecked) {
  const Instruction ins = parse_instruction("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16");
  std::vector<std::uint32_t> a(16, 0x3c00), b(32, 0x3c00);
  std::vector<std::uint8_t> idx(16);
  for (int s = 0; s < 16; ++s) idx[s] = static_cast<std::uint8_t>(s % 2 ? 3 : 0);
  EXPECT_EQ(dot_sparse(ins, a, idx, b, 0), 0x41800000u);  // 16 x 1.0
  auto bad = idx;
  bad[5] = 4;
  expect_throw_with([&] { dot_sparse(ins, a, bad, b, 0); }, "stored value 5 has position 4 in its group of 4");
  bad = idx;
  bad[6] = 3;  // group 3: positions 3 and 3
  expect_throw_with([&] { dot_sparse(ins, a, bad, b, 0); }, "group 3 has positions 3 and 3");
  bad = idx;
  bad[6] = 2, bad[7] = 1;
  expect_throw_with([&] { dot_sparse(ins, a, bad, b, 0); }, "group 3 has positions 2 and 1: mma.sp::ordered_metadata");
  expect_throw_with([&] { dot_sparse(ins, a, idx, std::vector<std::uint32_t>(16), 0); }, "K=32 B codes");
  const Instruction tf32 = parse_instruction("sm_90a wgmma.mma_async.sp m64n8k16 f32 tf32 tf32");
  std::vector<std::uint8_t> tidx(8, 1);
  tidx[2] = 2;
  expect_throw_with([&] { dot_sparse(tf32, std::vector<std::uint32_t>(8), tidx, std::vector<std::uint32_t>(16), 0); },
                    "position 2 in its group of 2");

  // mma_sparse: shapes, formats and the row named in metadata errors.
  std::vector<std::uint16_t> av(16 * 16, 0x3c00), bv(32 * 8, 0x3c00);
  std::vector<std::uint8_t> ai(16 * 16);
  for (std::size_t s = 0; s < ai.size(); ++s) ai[s] = static_cast<std::uint8_t>(s % 2 ? 2 : 1);
  const CodeMatrix A(Format::float16, 16, 16, std::span<const std::uint16_t>(av));
  const CodeMatrix B(Format::float16, 32, 8, std::span<const std::uint16_t>(bv));
  const auto d = mma_sparse(ins, A, ai, B, {});
  ASSERT_EQ(d.size(), 128u);
  for (std::uint32_t x : d) EXPECT_EQ(x, 0x41800000u);
  ai[9 * 16 + 4] = 2;  // row 9, group 2: positions 2 and 2
  expect_throw_with([&] { mma_sparse(ins, A, ai, B, {}); }, "A row 9: group 2 has positions 2 and 2");
  const CodeMatrix Bbf(Format::bfloat16, 32, 8, std::span<const std::uint16_t>(bv));
  expect_throw_with([&] { mma_sparse(ins, A, ai, Bbf, {}); }, "B must hold float16 codes, got bfloat16");
  expect_throw_with([&] { mma_sparse(ins, CodeMatrix(Format::float16, 8, 32, std::span<const std::uint16_t>(bv)), ai, B, {}); },
                    "A's stored values must be 16 x 16, got 8 x 32");
  expect_throw_with([&] { mma_sparse(ins, A, std::span<const std::uint8_t>(ai).first(100), B, {}); },
                    "must be M x K/2 = 256, got 100");
}

// The gather, restated: stored value s of a row multiplies logical K position
// (s / (group / 2)) * group + index[s]; mma_sparse agrees with dot_sparse on random data.
TEST(SparseRules, MmaSparseIsDotSparsePerElement) {
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async.sp m64n16k64 f32 e4m3 e5m2");
  std::mt19937_64 rng(7);
  const int M = 64, N = 16, K = 64;
  std::vector<std::uint8_t> av(M * K / 2), bv(K * N), ai(M * K / 2);
  std::vector<std::uint32_t> cv(M * N);
  for (auto& x : av) x = static_cast<std::uint8_t>(rng());
  for (auto& x : bv) x = static_cast<std::uint8_t>(rng());
  for (auto& x : cv) x = static_cast<std::uint32_t>(rng());
  static const std::uint8_t pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  for (std::size_t g = 0; g < ai.size() / 2; ++g) {
    const auto& p = pairs[rng() % 6];
    ai[2 * g] = p[0], ai[2 * g + 1] = p[1];
  }
  const CodeMatrix A(Format::float8_e4m3fn, M, K / 2, std::span<const std::uint8_t>(av));
  const CodeMatrix B(Format::float8_e5m2, K, N, std::span<const std::uint8_t>(bv));
  const CodeMatrix C(Format::float32, M, N, std::span<const std::uint32_t>(cv));
  const auto d = mma_sparse(ins, A, ai, B, C);
  for (int i = 0; i < M; ++i) {
    std::vector<std::uint32_t> arow(av.begin() + i * K / 2, av.begin() + (i + 1) * K / 2), bcol(K), gathered(K / 2);
    for (int j = 0; j < N; ++j) {
      for (int k = 0; k < K; ++k) bcol[k] = bv[k * N + j];
      const std::span<const std::uint8_t> idx(ai.data() + i * K / 2, K / 2);
      ASSERT_EQ(d[i * N + j], dot_sparse(ins, arow, idx, bcol, cv[i * N + j]));
      for (int s = 0; s < K / 2; ++s) gathered[s] = bcol[(s / 2) * 4 + idx[s]];
      ASSERT_EQ(d[i * N + j], dot(ins.dense_form(), arow, gathered, cv[i * N + j]));
    }
  }
}

// ---- The H100 vectors.

std::filesystem::path data_dir() {
  const char* src = std::getenv("BLOCKSCALE_SOURCE_DIR");
  if (src == nullptr) throw std::runtime_error("BLOCKSCALE_SOURCE_DIR is not set (blockscale_add_test sets it)");
  return std::filesystem::path(src) / "tests" / "data" / "sparse_h100";
}

struct Case {
  std::vector<std::uint32_t> a, b;
  std::vector<std::uint8_t> index;
  std::uint32_t c = 0, d = 0;
};

std::vector<Case> cases_of(const golden::GoldenFile& f, const Instruction& ins) {
  const std::size_t kc = static_cast<std::size_t>(ins.k) / 2, k = static_cast<std::size_t>(ins.k);
  EXPECT_EQ(f.words_per_case, kc + kc + k + 2) << f.name;
  std::vector<Case> out;
  for (std::size_t i = 0; i < f.cases(); ++i) {
    const auto w = f.case_words(i);
    Case c;
    for (std::size_t s = 0; s < kc; ++s) c.a.push_back(static_cast<std::uint32_t>(w[s]));
    for (std::size_t s = 0; s < kc; ++s) c.index.push_back(static_cast<std::uint8_t>(w[kc + s]));
    for (std::size_t s = 0; s < k; ++s) c.b.push_back(static_cast<std::uint32_t>(w[2 * kc + s]));
    c.c = static_cast<std::uint32_t>(w[2 * kc + k]);
    c.d = static_cast<std::uint32_t>(w[2 * kc + k + 1]);
    out.push_back(c);
  }
  return out;
}

TEST(SparseHardware, EveryH100VectorIsReproducedBitForBit) {
  std::set<std::string> seen;
  std::size_t files = 0, total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir())) {
    if (entry.path().extension() != ".txt") continue;
    const golden::GoldenFile f = golden::read_golden(entry.path());
    ASSERT_EQ(f.header.ops.size(), 1u) << f.name;
    const Instruction ins = parse_instruction(f.header.ops[0]);
    ASSERT_TRUE(ins.sparse) << f.name;
    seen.insert(ins.name());
    std::size_t mismatches = 0;
    for (const Case& c : cases_of(f, ins)) {
      const std::uint32_t d = dot_sparse(ins, c.a, c.index, c.b, c.c);
      if (d != c.d && ++mismatches <= 3) ADD_FAILURE() << f.name << ": model 0x" << std::hex << d << ", H100 0x" << c.d;
    }
    EXPECT_EQ(mismatches, 0u) << f.name;
    EXPECT_EQ(f.cases(), 256u) << f.name;
    ++files;
    total += f.cases();
  }
  EXPECT_EQ(files, 14u);
  EXPECT_EQ(total, 14u * 256u);
  for (const char* name : {"sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16",
                           "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k64 f32 e4m3 e4m3",
                           "sm_90a wgmma.mma_async.sp m64n8k64 f16 e4m3 e4m3",
                           "sm_90a wgmma.mma_async.sp m64n8k16 f32 tf32 tf32"}) {
    EXPECT_TRUE(seen.count(name)) << name;
  }
}

// The same files through the golden library (golden/FORMAT.md, sparse instruction sets): the
// operation their header names reads the fields a, i, b, c and verifies every case; a case whose
// positions break the metadata rule is reported as one that cannot be computed, with the rule.
TEST(SparseHardware, TheFilesVerifyAsGoldenSparseInstructionSets) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir())) {
    if (entry.path().extension() != ".txt") continue;
    const golden::GoldenFile f = golden::read_golden(entry.path());
    const golden::FileReport r = golden::verify_golden(f);
    EXPECT_TRUE(r.ok()) << f.name << ": " << r.error << " " << r.mismatches << " mismatches";
    EXPECT_EQ(r.cases, 256u) << f.name;
    ++files;
    // A position outside its group in the first case (field i follows a: word `stored` of a case).
    const int group = parse_instruction(f.header.ops[0]).sparse_group();
    golden::GoldenFile broken = f;
    broken.words[f.header.fields[0].count] = static_cast<std::uint64_t>(group);
    const golden::FileReport b = golden::verify_golden(broken);
    EXPECT_EQ(b.mismatches, 1u) << f.name;
    ASSERT_EQ(b.first.size(), 1u) << f.name;
    EXPECT_EQ(b.first[0].index, 0u);
    EXPECT_NE(b.first[0].detail.find("cannot compute"), std::string::npos) << b.first[0].detail;
    EXPECT_NE(b.first[0].detail.find("has position " + std::to_string(group) + " in its group of " +
                                     std::to_string(group)),
              std::string::npos)
        << b.first[0].detail;
  }
  EXPECT_EQ(files, 14u);
}

// The vectors tell the measured rule from its nearest alternative: treating the instruction as the
// dense model over all K logical positions (pruned ones as zero terms, FDPA chunks of L logical
// positions) disagrees with the H100 on a good share of the cases of the forms where K > L.
TEST(SparseHardware, TheVectorsRejectTheDenseOverLogicalKReading) {
  std::size_t compared = 0, disagree = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir())) {
    if (entry.path().extension() != ".txt") continue;
    const golden::GoldenFile f = golden::read_golden(entry.path());
    const Instruction ins = parse_instruction(f.header.ops[0]);
    const FdpaParams& p = ins.params();
    if (p.algorithm != Algorithm::t_fdpa || ins.k <= p.L) continue;
    const int group = ins.sparse_group(), per = group / 2;
    for (const Case& c : cases_of(f, ins)) {
      std::vector<std::uint32_t> a(static_cast<std::size_t>(ins.k), 0);
      for (std::size_t s = 0; s < c.a.size(); ++s) a[(s / per) * group + c.index[s]] = c.a[s];
      DotOperands ops;
      ops.a_format = *format_of(ins.a);
      ops.b_format = *format_of(ins.b);
      ops.a = a;
      ops.b = c.b;
      ops.c = c.c;
      ++compared;
      disagree += fdpa(p, ops) != c.d;
    }
  }
  EXPECT_GT(compared, 2000u);
  EXPECT_GT(disagree, compared / 10) << disagree << " of " << compared;
}

}  // namespace
}  // namespace blockscale::emulator
