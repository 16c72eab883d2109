// SPDX-License-Identifier: Apache-2.0
// 2:4 sparse GEMMs (sparse_gemm.h): the slice partition, the chain against a step-by-step
// re-statement, compress_sparse's rules, and torch._cslt_sparse_mm (cuSPARSELt 0.8) on an H100:
// tests/data/cusparselt_h100 holds sub-matrices of its runs (scripts/probe_sparse_mm.py,
// scripts/cut_sparse_mm.py), every output reproduced bit for bit. BLOCKSCALE_SPARSE_MM_DIR names
// a further directory of such files (the whole runs, for the record of docs/emulator.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "blockscale/emulator/arith.h"
#include "blockscale/emulator/mma.h"
#include "blockscale/emulator/sparse_gemm.h"
#include "blockscale/formats/convert.h"
#include "expect_throw.h"

namespace bs = blockscale;
namespace em = blockscale::emulator;
using blockscale::test::expect_throw_with;

namespace {

// One run file (format: scripts/probe_sparse_mm.py).
struct SparseMmRun {
  std::map<std::string, std::string> meta;
  int m = 0, n = 0, k = 0, slices = 1;
  bs::Format input = bs::Format::float32, output = bs::Format::float32;
  std::vector<std::uint32_t> a, b_t, d;  // M x K, N x K, M x N codes
};

bs::Format format_named(const std::string& s) {
  if (s == "f16") return bs::Format::float16;
  if (s == "bf16") return bs::Format::bfloat16;
  if (s == "e4m3") return bs::Format::float8_e4m3fn;
  if (s == "f32") return bs::Format::float32;
  throw std::runtime_error("unknown format " + s);
}

SparseMmRun load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head;
  std::getline(in, head);
  std::istringstream words(head);
  std::string w;
  words >> w >> w;
  SparseMmRun r;
  while (words >> w) {
    const auto eq = w.find('=');
    r.meta[w.substr(0, eq)] = w.substr(eq + 1);
  }
  r.m = std::stoi(r.meta.at("m"));
  r.n = std::stoi(r.meta.at("n"));
  r.k = std::stoi(r.meta.at("k"));
  r.slices = std::stoi(r.meta.at("slices"));
  r.input = format_named(r.meta.at("a"));
  r.output = format_named(r.meta.at("out"));
  const auto read = [&](std::size_t count, int bytes) {
    std::vector<std::uint32_t> v(count);
    for (auto& x : v) {
      unsigned char buf[4] = {};
      in.read(reinterpret_cast<char*>(buf), bytes);
      for (int i = bytes - 1; i >= 0; --i) x = x << 8 | buf[i];
    }
    if (!in) throw std::runtime_error(path.string() + ": truncated");
    return v;
  };
  const int wa = bs::info(r.input).storage_bits / 8, wd = bs::info(r.output).storage_bits / 8;
  r.a = read(static_cast<std::size_t>(r.m) * r.k, wa);
  r.b_t = read(static_cast<std::size_t>(r.n) * r.k, wa);
  r.d = read(static_cast<std::size_t>(r.m) * r.n, wd);
  return r;
}

em::CodeMatrix a_of(const SparseMmRun& r) {
  return em::CodeMatrix(r.input, r.m, r.k, std::span<const std::uint32_t>(r.a));
}
em::CodeMatrix b_of(const SparseMmRun& r) {  // B (K x N) is B^T's rows read column-major
  return em::CodeMatrix(r.input, r.k, r.n, std::span<const std::uint32_t>(r.b_t), em::Order::col_major);
}

std::filesystem::path samples_dir() {
  const char* src = std::getenv("BLOCKSCALE_SOURCE_DIR");
  if (src == nullptr) throw std::runtime_error("BLOCKSCALE_SOURCE_DIR is not set (blockscale_add_test sets it)");
  return std::filesystem::path(src) / "tests" / "data" / "cusparselt_h100";
}

std::vector<std::filesystem::path> run_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".sparse_mm") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::size_t mismatches(const std::vector<std::uint32_t>& got, const std::vector<std::uint32_t>& want) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < got.size(); ++i) n += got[i] != want[i];
  return n;
}

// Random 2:4 sparse M x K e4m3 codes (zeros at the pruned positions, nonzero finite kept codes)
// and their expected positions. K blocks [128, 256) and [448, 640) hold tiny codes (exponent field
// 0 or 1), the others large ones (field >= 12), so that the slices of the test below differ by
// 2^20 and more and their fp32 sums round differently in different orders.
std::vector<std::uint32_t> random_sparse(std::mt19937& rng, int m, int k, std::vector<std::uint8_t>& index) {
  std::vector<std::uint32_t> a(static_cast<std::size_t>(m) * k, 0);
  index.clear();
  for (int i = 0; i < m; ++i) {
    for (int g = 0; g < k / 4; ++g) {
      const auto& pair = em::kOrderedPairs[rng() % 6];
      for (int s = 0; s < 2; ++s) {
        const int at = g * 4;
        const bool tiny = (at >= 128 && at < 256) || at >= 448;
        std::uint32_t code = 0;
        while ((code & 0x7F) == 0 || (code & 0x7F) == 0x7F) code = tiny ? rng() & 0x8F : (rng() & 0xFF) | 0x60;
        a[static_cast<std::size_t>(i) * k + g * 4 + pair[s]] = code;
        index.push_back(pair[s]);
      }
    }
  }
  return a;
}

}  // namespace

TEST(SparseGemm, SlicesAreBalancedWithTheLongerOnesLast) {
  // The partitions the H100 probe sweep measured (docs/emulator.md): e4m3 -> f32 at K = 16384 in
  // 14 slices of 128-element tiles (12 of 9 tiles, 2 of 10); e4m3 -> e4m3 in 12 slices of 256 (8 of
  // 5, 4 of 6); f16 1024^2 x 4096 in 3 slices of 64 (21, 21, 22 tiles).
  em::SparseGemmSchedule s = em::cusparselt_schedule(bs::Format::float8_e4m3fn, bs::Format::float32, 14);
  std::vector<int> want;
  for (int i = 1; i <= 12; ++i) want.push_back(1152 * i);
  want.push_back(13824 + 1280);
  EXPECT_EQ(s.slice_starts(16384), want);
  s = em::cusparselt_schedule(bs::Format::float8_e4m3fn, bs::Format::float8_e4m3fn, 12);
  EXPECT_EQ(s.slice_starts(16384),
            (std::vector<int>{1280, 2560, 3840, 5120, 6400, 7680, 8960, 10240, 11776, 13312, 14848}));
  s = em::cusparselt_schedule(bs::Format::float16, bs::Format::float16, 3);
  EXPECT_EQ(s.slice_starts(4096), (std::vector<int>{1344, 2688}));
  s.slices = 1;
  EXPECT_TRUE(s.slice_starts(4096).empty());
  expect_throw_with([&] { (void)s.slice_starts(4000); }, "multiple of the tile of 64");
  s.slices = 65;
  expect_throw_with([&] { (void)s.slice_starts(4096); }, "65 split-K slices need at least as many tiles");
}

TEST(SparseGemm, ScheduleNamesSayTheSplitAndTheOrderOfItsSum) {
  // The name is what reports and failure messages show of a schedule; a wrong order in it would
  // describe another sum.
  const em::Instruction ins = em::parse_instruction("sm_90a wgmma.mma_async.sp m64n64k64 f32 e4m3 e4m3");
  const std::string of = " of " + ins.name();
  EXPECT_EQ((em::SparseGemmSchedule{ins, 1, 0, em::SplitKReduction::pairwise}.name()), "chain" + of);
  EXPECT_EQ((em::SparseGemmSchedule{ins, 4, 128, em::SplitKReduction::pairwise}.name()),
            "chain split-K 4 of tiles of 128 pairwise" + of);
  EXPECT_EQ((em::SparseGemmSchedule{ins, 3, 0, em::SplitKReduction::sequential}.name()),
            "chain split-K 3 of tiles of 64 sequential" + of);
}

TEST(SparseGemm, IsTheChainOfItsInstructionsSlicedAndSummedPairwise) {
  // A re-statement one output at a time: dot_sparse per instruction step, slices from +0 at the
  // tile bounds written out by hand, the tree of four slices (P0 + P1) + (P2 + P3).
  std::mt19937 rng(42);
  const int m = 6, n = 5, k = 10 * 64;  // 10 tiles of 64 = 10 steps of wgmma.sp k64
  std::vector<std::uint8_t> index;
  const std::vector<std::uint32_t> a = random_sparse(rng, m, k, index);
  std::vector<std::uint32_t> b(static_cast<std::size_t>(k) * n);
  for (auto& x : b) {
    do x = rng() & 0xFF; while ((x & 0x7F) == 0x7F);  // every finite e4m3 code
  }
  for (int t = 0; t < 4; ++t) b[static_cast<std::size_t>(t) * n] = 0x7F;  // NaN in column 0's first group
  const em::Instruction ins = em::parse_instruction("sm_90a wgmma.mma_async.sp m64n64k64 f32 e4m3 e4m3");
  em::SparseGemmSchedule s{ins, 4, 64, em::SplitKReduction::pairwise};
  const em::CodeMatrix dense(bs::Format::float8_e4m3fn, m, k, std::span<const std::uint32_t>(a));
  const em::CodeMatrix bm(bs::Format::float8_e4m3fn, k, n, std::span<const std::uint32_t>(b));
  const em::SparseOperand sp = em::compress_sparse(ins, dense);
  EXPECT_EQ(sp.index, index);
  const std::vector<std::uint32_t> d = em::gemm_sparse(s, sp, bm);
  s.reduction = em::SplitKReduction::sequential;
  const std::vector<std::uint32_t> d_seq = em::gemm_sparse(s, sp, bm);
  s.slices = 1;
  const std::vector<std::uint32_t> d_chain = em::gemm_sparse(s, sp, bm);
  const int bounds[] = {0, 128, 256, 448, 640};  // 10 tiles in 4 slices: 2, 2, 3, 3
  std::size_t nan_outputs = 0, pairwise_differs = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      std::uint32_t part[4], chain = 0;
      for (int sl = 0; sl < 4; ++sl) {
        part[sl] = 0;
        for (int k0 = bounds[sl]; k0 < bounds[sl + 1]; k0 += 64) {
          std::vector<std::uint32_t> vals(32), col(64);
          std::vector<std::uint8_t> idx(32);
          for (int t = 0; t < 32; ++t) {
            vals[t] = sp.values.word(i, k0 / 2 + t);
            idx[t] = index[static_cast<std::size_t>(i) * k / 2 + k0 / 2 + t];
          }
          for (int t = 0; t < 64; ++t) col[t] = b[static_cast<std::size_t>(k0 + t) * n + j];
          part[sl] = em::dot_sparse(ins, vals, idx, col, part[sl]);
          chain = em::dot_sparse(ins, vals, idx, col, chain);
        }
      }
      const std::size_t o = static_cast<std::size_t>(i) * n + j;
      EXPECT_EQ(d[o], em::add_f32(em::add_f32(part[0], part[1]), em::add_f32(part[2], part[3]))) << i << "," << j;
      EXPECT_EQ(d_seq[o], em::add_f32(em::add_f32(em::add_f32(part[0], part[1]), part[2]), part[3])) << i << "," << j;
      pairwise_differs += d[o] != d_seq[o];
      EXPECT_EQ(d_chain[o], chain) << i << "," << j;
      nan_outputs += (d[o] & 0x7FFFFFFF) > 0x7F800000;
    }
  }
  EXPECT_EQ(nan_outputs, static_cast<std::size_t>(m));  // column 0: the NaN path
  EXPECT_GT(pairwise_differs, 0u);                     // the two orders are told apart
}

TEST(SparseGemm, EverySparseInstructionMatchesItsStepByStepChainAtAnyThreadCount) {
  // gemm_sparse gathers and decodes a row's selected B elements once and runs the engine on them;
  // here each output is re-stated with dot_sparse (which checks and decodes every step on its own),
  // for every sparse family with an f32 accumulator, including tf32 1:2 pairs and the fp8 -> f16
  // path of mma.sp m16n8k64 (b.9). Random codes of every class (about 1 in 64 NaN or Inf, the rest
  // finite with subnormals and zeros), random positions, C or none. A small shape takes 1-3 slices
  // of single steps in both orders on 1, 2 and 3 threads (N = 70: beyond one block of 64 gathered
  // columns); a large one (16 x 130 x 64 steps, 5 slices) brings the steps re-stated to about 1.4e5
  // per family, 1e6 in all.
  const char* names[] = {
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k16 f32 f16 f16",
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 bf16 bf16",
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k8 f32 tf32 tf32",
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k64 f32 e4m3 e5m2",
      "sm_90a wgmma.mma_async.sp m64n8k16 f32 tf32 tf32",
      "sm_90a wgmma.mma_async.sp m64n8k32 f32 bf16 bf16",
      "sm_90a wgmma.mma_async.sp m64n8k64 f32 e5m2 e4m3",
  };
  struct Shape {
    int m, n, steps;
    std::vector<int> slices;
    std::vector<em::SplitKReduction> orders;
    std::vector<bool> with_c;
    std::vector<int> threads;
  };
  const std::vector<Shape> shapes = {
      {5, 70, 3, {1, 2, 3}, {em::SplitKReduction::pairwise, em::SplitKReduction::sequential}, {false, true}, {1, 2, 3}},
      {16, 130, 64, {5}, {em::SplitKReduction::pairwise}, {true}, {2}},
  };
  std::mt19937 rng(7);
  const auto draw = [&](bs::Format f) {
    for (;;) {
      const std::uint32_t code = f == bs::Format::tfloat32 ? rng() & 0xFFFFE000u : rng() & bs::code_mask(f);
      const bs::ValueClass c = bs::classify(f, code);
      const bool special = c == bs::ValueClass::nan || c == bs::ValueClass::infinite;
      if (!special || rng() % 64 == 0) return code;
    }
  };
  for (const char* name : names) {
    SCOPED_TRACE(name);
    const em::Instruction ins = em::parse_instruction(name);
    const bs::Format fa = *em::format_of(ins.a), fb = *em::format_of(ins.b);
    for (const Shape& shape : shapes) {
      const int m = shape.m, n = shape.n, k = shape.steps * ins.k, group = ins.sparse_group();
      std::vector<std::uint32_t> values(static_cast<std::size_t>(m) * k / 2), b(static_cast<std::size_t>(k) * n),
          c(static_cast<std::size_t>(m) * n);
      std::vector<std::uint8_t> index;
      for (auto& x : values) x = draw(fa);
      for (auto& x : b) x = draw(fb);
      for (auto& x : c) x = draw(bs::Format::float32);
      for (int i = 0; i < m * k / group; ++i) {
        if (group == 2) {
          index.push_back(static_cast<std::uint8_t>(rng() % 2));
        } else {
          const auto& pair = em::kOrderedPairs[rng() % 6];
          index.push_back(pair[0]);
          index.push_back(pair[1]);
        }
      }
      const em::SparseOperand sp{em::CodeMatrix(fa, m, k / 2, std::span<const std::uint32_t>(values)), index, nullptr};
      const em::CodeMatrix bm(fb, k, n, std::span<const std::uint32_t>(b));
      const em::CodeMatrix cm(bs::Format::float32, m, n, std::span<const std::uint32_t>(c));
      for (const int slices : shape.slices) {
        for (const em::SplitKReduction order : shape.orders) {
          if (slices == 1 && order == em::SplitKReduction::sequential) continue;
          const em::SparseGemmSchedule s{ins, slices, 0, order};
          std::vector<int> bounds{0};
          for (int at : s.slice_starts(k)) bounds.push_back(at);
          bounds.push_back(k);
          for (const bool with_c : shape.with_c) {
            std::vector<std::uint32_t> want(static_cast<std::size_t>(m) * n);
            for (int i = 0; i < m; ++i) {
              for (int j = 0; j < n; ++j) {
                std::vector<std::uint32_t> part;
                for (std::size_t sl = 0; sl + 1 < bounds.size(); ++sl) {
                  std::uint32_t acc = 0;
                  for (int k0 = bounds[sl]; k0 < bounds[sl + 1]; k0 += ins.k) {
                    const std::size_t at = static_cast<std::size_t>(i) * k / 2 + k0 / 2;
                    std::vector<std::uint32_t> col(static_cast<std::size_t>(ins.k));
                    for (int t = 0; t < ins.k; ++t) col[t] = b[static_cast<std::size_t>(k0 + t) * n + j];
                    acc = em::dot_sparse(ins, std::span<const std::uint32_t>(values).subspan(at, ins.k / 2),
                                         std::span<const std::uint8_t>(index).subspan(at, ins.k / 2), col, acc);
                  }
                  part.push_back(acc);
                }
                std::uint32_t sum = part[0];
                if (order == em::SplitKReduction::pairwise) {
                  sum = em::sum_f32_pairwise(part);
                } else {
                  for (std::size_t q = 1; q < part.size(); ++q) sum = em::add_f32(sum, part[q]);
                }
                const std::size_t o = static_cast<std::size_t>(i) * n + j;
                want[o] = with_c ? em::add_f32(c[o], sum) : sum;
              }
            }
            for (const int threads : shape.threads) {
              em::GemmOptions o;
              o.threads = threads;
              EXPECT_EQ(em::gemm_sparse(s, sp, bm, with_c ? cm : em::CodeMatrix{}, o), want)
                  << s.name() << (with_c ? " + C" : "") << ", " << threads << " threads";
            }
          }
        }
      }
    }
  }
}

TEST(SparseGemm, TheTf32KernelReadsItsOperandsAsTheH100Did) {
  // Pairs read off the one-product probes on the H100 (scripts/probe_sparse_mm.py single_a_grid,
  // single_a_special, single_b; the committed samples hold their rows): A (the sparse operand) is
  // rounded up in magnitude unless its 13 dropped bits are 0 and the last kept bit is 0.
  const auto a = [](std::uint32_t x) { return em::cusparselt_round(em::CusparseltRounding::tf32_cusparselt_sparse, x); };
  EXPECT_EQ(a(0x3F800000u), 0x3F800000u);  // exact, last bit 0: kept
  EXPECT_EQ(a(0x3F802000u), 0x3F804000u);  // exact, last bit 1: up
  EXPECT_EQ(a(0x3F800001u), 0x3F802000u);  // any dropped bit: up
  EXPECT_EQ(a(0x3F801000u), 0x3F802000u);
  EXPECT_EQ(a(0x3F803000u), 0x3F804000u);  // a tie: up, not to even
  EXPECT_EQ(a(0xBF7FF001u), 0xBF800000u);  // the sign kept, carried into the exponent
  EXPECT_EQ(a(0x00800001u), 0x00802000u);
  EXPECT_EQ(a(0x7F7FDFFFu), 0x7F7FE000u);  // up to the largest tf32 value
  EXPECT_EQ(a(0x007FFFFFu), 0x00800000u);  // subnormals by the same rule (the compressor's zero test
  EXPECT_EQ(a(0x80000001u), 0x80002000u);  // drops most of them: below)
  EXPECT_EQ(a(0x00002000u), 0x00004000u);
  EXPECT_EQ(a(0x80000000u), 0x80000000u);
  EXPECT_EQ(a(0x7F800000u), 0x7F800000u);  // Inf kept, either sign
  EXPECT_EQ(a(0xFF800000u), 0xFF800000u);
  EXPECT_EQ(a(0x7F800001u), 0x7FFFE000u);  // a NaN whose fraction sits in the dropped bits stays NaN
  // Past the largest tf32 value (single_a_overflow*, all 16,384 such values): Inf of the sign up to
  // 0x7F7FF000, NaN above.
  EXPECT_EQ(a(0x7F7FE000u), 0x7F800000u);
  EXPECT_EQ(a(0x7F7FF000u), 0x7F800000u);
  EXPECT_EQ(a(0xFF7FE001u), 0xFF800000u);
  EXPECT_EQ(a(0x7F7FF001u), 0x7FFFE000u);
  EXPECT_EQ(a(0xFF7FFFFFu), 0x7FFFE000u);
  // B (the dense operand): to nearest, ties to even, subnormals kept.
  const auto b = [](std::uint32_t x) { return em::cusparselt_round(em::CusparseltRounding::tf32_nearest_even, x); };
  EXPECT_EQ(b(0x3F801000u), 0x3F800000u);
  EXPECT_EQ(b(0x3F803000u), 0x3F804000u);
  EXPECT_EQ(b(0x3F801001u), 0x3F802000u);
  EXPECT_EQ(b(0x800258F3u), 0x80026000u);
  // Through the GEMM: A = 1 + 2^-10 (exact, last bit 1) times B = 1 + 2^-11 (a tie) over one step.
  std::vector<std::uint32_t> dense(32, 0), ones(32 * 8, 0x3F801000u);
  dense[0] = 0x3F802000u;
  const em::CodeMatrix am(bs::Format::float32, 1, 32, std::span<const std::uint32_t>(dense));
  const em::CodeMatrix bm(bs::Format::float32, 32, 8, std::span<const std::uint32_t>(ones));
  EXPECT_EQ(em::cusparselt_sparse_mm(bs::Format::float32, am, bm)[0], 0x3F804000u);  // (1 + 2^-9) x 1
  // The compressor takes f32 subnormals for zeros (fill_subnormal): beside a normal value one is
  // dropped, in a pair of zeros it is kept only at the second position (the fill's choice) and then
  // rounded as above. Pairs: (1, s), (s, 0), (0, s), (s, s) with s = 2^-149.
  std::vector<std::uint32_t> sub(32, 0);
  sub[0] = 0x3F800000u, sub[1] = 1u, sub[2] = 1u, sub[5] = 1u, sub[6] = 1u, sub[7] = 1u;
  const em::SparseOperand sop = em::cusparselt_compress(em::CodeMatrix(bs::Format::float32, 1, 32, std::span<const std::uint32_t>(sub)));
  EXPECT_EQ(std::vector<std::uint8_t>(sop.index.begin(), sop.index.begin() + 4), (std::vector<std::uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(sop.values.word(0, 0), 0x3F800000u);
  EXPECT_EQ(sop.values.word(0, 1), 0u);
  EXPECT_EQ(sop.values.word(0, 2), 0x2000u);
  EXPECT_EQ(sop.values.word(0, 3), 0x2000u);
  // A D of -Inf is returned as NaN, +Inf stays: A = -Inf (its pair partner is zero, so it is the
  // stored value) times B = 1 and B = -1.
  dense[0] = 0, dense[1] = 0xFF800000u;
  std::vector<std::uint32_t> signs(32 * 8, 0x3F800000u);
  for (std::size_t j = 4; j < 8; ++j) signs[32 * j] = signs[32 * j + 1] = 0xBF800000u;  // B is K x N column-major
  const em::CodeMatrix inf_a(bs::Format::float32, 1, 32, std::span<const std::uint32_t>(dense));
  const em::CodeMatrix sb(bs::Format::float32, 32, 8, std::span<const std::uint32_t>(signs), em::Order::col_major);
  const std::vector<std::uint32_t> d = em::cusparselt_sparse_mm(bs::Format::float32, inf_a, sb);
  EXPECT_EQ(d[0], 0x7FFFFFFFu);
  EXPECT_EQ(d[4], 0x7F800000u);
  // f16: -Inf x 1 is NaN too.
  std::vector<std::uint32_t> h(64, 0), h_ones(64 * 8, 0x3C00u);
  h[0] = 0xFC00u;
  const em::CodeMatrix ha(bs::Format::float16, 1, 64, std::span<const std::uint32_t>(h));
  const em::CodeMatrix hb(bs::Format::float16, 64, 8, std::span<const std::uint32_t>(h_ones));
  EXPECT_EQ(em::cusparselt_sparse_mm(bs::Format::float16, ha, hb)[0], 0x7FFFu);
}

TEST(SparseGemm, TheDenseOperandsTf32RoundingIsTheFormatsConversion) {
  // cusparselt_round(tf32_nearest_even) works on the bit pattern; the formats library's f32 -> tf32
  // conversion (RNE, Inf past the largest value, NaN quieted) is the oracle. Every sign, exponent
  // and kept 10-bit fraction with 24 patterns of the 13 dropped bits (zero, ties, one either side,
  // the extremes, random ones): 2^24 words, NaN payloads included. (All 2^32 words agreed when the
  // bit form was written.)
  std::mt19937 rng(13);
  std::size_t differ = 0;
  for (std::uint32_t top = 0; top < (1u << 19); ++top) {
    const std::uint32_t low[24] = {0,      1,      2,      0x0FFE, 0x0FFF, 0x1000, 0x1001, 0x1002,
                                   0x1FFE, 0x1FFF, 0x0800, 0x17FF, static_cast<std::uint32_t>(rng() & 0x1FFF),
                                   static_cast<std::uint32_t>(rng() & 0x1FFF), static_cast<std::uint32_t>(rng() & 0x1FFF),
                                   static_cast<std::uint32_t>(rng() & 0x1FFF), static_cast<std::uint32_t>(rng() & 0x1FFF),
                                   static_cast<std::uint32_t>(rng() & 0x1FFF), static_cast<std::uint32_t>(rng() & 0x1FFF),
                                   static_cast<std::uint32_t>(rng() & 0x1FFF), static_cast<std::uint32_t>(rng() & 0x1FFF),
                                   static_cast<std::uint32_t>(rng() & 0x1FFF), static_cast<std::uint32_t>(rng() & 0x1FFF),
                                   static_cast<std::uint32_t>(rng() & 0x1FFF)};
    for (const std::uint32_t l : low) {
      const std::uint32_t w = top << 13 | l;
      const std::uint32_t want = bs::to_storage(bs::Format::tfloat32, bs::convert_code(bs::Format::tfloat32, bs::Format::float32, w));
      differ += em::cusparselt_round(em::CusparseltRounding::tf32_nearest_even, w) != want;
    }
  }
  EXPECT_EQ(differ, 0u);
}

TEST(SparseGemm, CompressTakesTheNonzeroCodesAndFillsWithTheHighestZeros) {
  const em::Instruction ins = em::parse_instruction("sm_90a wgmma.mma_async.sp m64n8k32 f32 f16 f16");
  // One row of K = 32: groups with two nonzero codes, one (-0 counts as zero), none.
  std::vector<std::uint32_t> a(32, 0);
  a[1] = 0x3C00, a[3] = 0xBC00;          // group 0: positions 1, 3
  a[4 + 2] = 0x4000, a[4 + 0] = 0x8000;  // group 1: 2 and a -0 at 0: positions 2, 3
  a[8 + 3] = 0x4000, a[8 + 2] = 0x8000;  // group 2: 3 and a -0 at 2: positions 2, 3
  a[12 + 0] = 0x4000;                    // group 3: 0 and the highest zero, 3
  const em::CodeMatrix dense(bs::Format::float16, 1, 32, std::span<const std::uint32_t>(a));
  const em::SparseOperand sp = em::compress_sparse(ins, dense);
  EXPECT_EQ(std::vector<std::uint8_t>(sp.index.begin(), sp.index.begin() + 10),
            (std::vector<std::uint8_t>{1, 3, 2, 3, 2, 3, 0, 3, 2, 3}));  // group 4: none, positions 2, 3
  EXPECT_EQ(sp.values.word(0, 0), 0x3C00u);
  EXPECT_EQ(sp.values.word(0, 1), 0xBC00u);
  EXPECT_EQ(sp.values.word(0, 2), 0x4000u);
  EXPECT_EQ(sp.values.word(0, 3), 0x0000u);
  EXPECT_EQ(sp.values.word(0, 4), 0x8000u);
  EXPECT_EQ(sp.values.word(0, 5), 0x4000u);
  a[12 + 0] = 0, a[8 + 2] = 0, a[4 + 0] = 0;
  a[2] = 0x3C00;  // group 0 now holds three nonzero values
  const em::CodeMatrix bad(bs::Format::float16, 1, 32, std::span<const std::uint32_t>(a));
  expect_throw_with([&] { (void)em::compress_sparse(ins, bad); }, "row 0, group 0 (K 0..3) holds 3 nonzero values: A is not 2:4 sparse");
  // Rows are compressed in parallel: of several bad groups the first in row-major order is named,
  // on any thread count.
  std::vector<std::uint32_t> many(64 * 32, 0);
  for (const auto& [row, group] : {std::pair{40, 1}, std::pair{9, 6}, std::pair{9, 7}, std::pair{63, 0}}) {
    for (int p = 0; p < 4; ++p) many[static_cast<std::size_t>(row) * 32 + group * 4 + p] = 0x3C00;
  }
  expect_throw_with([&] { (void)em::compress_sparse(ins, em::CodeMatrix(bs::Format::float16, 64, 32, std::span<const std::uint32_t>(many))); },
                    "row 9, group 6 (K 24..27) holds 4 nonzero values");
  const em::CodeMatrix wrong_k(bs::Format::float16, 1, 16, std::span<const std::uint32_t>(a).first(16));
  expect_throw_with([&] { (void)em::compress_sparse(ins, wrong_k); }, "K must be a positive multiple of the instruction's K = 32");
  const em::CodeMatrix wrong_format(bs::Format::bfloat16, 1, 32, std::span<const std::uint32_t>(a));
  expect_throw_with([&] { (void)em::compress_sparse(ins, wrong_format); }, "A must hold float16 codes, got bfloat16");
  // tf32 keeps one of each pair; a zero pair its second position.
  const em::Instruction tf32 = em::parse_instruction("sm_90a wgmma.mma_async.sp m64n8k16 f32 tf32 tf32");
  std::vector<std::uint32_t> t(16, 0);
  t[1] = 0x3F800000, t[2] = 0x40000000;
  const em::SparseOperand tsp = em::compress_sparse(tf32, em::CodeMatrix(bs::Format::tfloat32, 1, 16, std::span<const std::uint32_t>(t)));
  EXPECT_EQ(std::vector<std::uint8_t>(tsp.index.begin(), tsp.index.begin() + 3), (std::vector<std::uint8_t>{1, 0, 1}));
  t[0] = 0x3F800000;
  expect_throw_with([&] { (void)em::compress_sparse(tf32, em::CodeMatrix(bs::Format::tfloat32, 1, 16, std::span<const std::uint32_t>(t))); },
                    "holds 2 nonzero values: A is not 1:2 sparse");
}

// The kernel table lists the seven measured input/output pairs once each, and the lookup by pair
// returns each row; every row names a sparse instruction that parses and its evidence.
TEST(SparseGemm, TheKernelTableHasEachMeasuredPairOnce) {
  using F = bs::Format;
  const std::vector<std::pair<F, F>> measured = {
      {F::float16, F::float16},         {F::bfloat16, F::bfloat16},      {F::float32, F::float32},
      {F::float8_e4m3fn, F::float8_e4m3fn}, {F::float8_e4m3fn, F::bfloat16}, {F::float8_e4m3fn, F::float16},
      {F::float8_e4m3fn, F::float32}};
  const auto kernels = em::cusparselt_kernels();
  ASSERT_EQ(kernels.size(), measured.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const em::CusparseltKernel& k = kernels[i];
    EXPECT_EQ(std::make_pair(k.input, k.output), measured[i]) << i;
    EXPECT_EQ(&em::cusparselt_kernel(k.input, k.output), &k) << i;
    EXPECT_TRUE(em::parse_instruction(k.instruction).sparse) << k.instruction;
    EXPECT_GT(std::string(k.evidence).size(), 0u) << i;
  }
}


// The bulk conversion works in blocks of 4096 words; every word of the span is converted as the
// one-word form converts it, and no word past the span is touched (a guard of sentinels follows
// it). The sizes sit on each side of a block boundary, and the largest passes 2^22 words, where the
// conversion takes more than one thread. A block count one too high at 4095 mod 4096 wrote past
// the span and changed no bit inside it (the mutation audit of 2026-11-30).
TEST(SparseGemm, BulkOutputConversionIsTheOneWordConversionOnEachWordAndNoMore) {
  constexpr std::size_t kGuard = 8192;
  constexpr std::uint32_t kSentinel = 0x7FC0DEADu;
  std::mt19937 rng(20261130);
  for (const bs::Format f : {bs::Format::float16, bs::Format::bfloat16, bs::Format::float8_e4m3fn, bs::Format::float32}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{4097},
                                std::size_t{3 * 4096 - 1}, (std::size_t{1} << 22) + 4095}) {
      for (const int threads : {1, 2}) {
        std::vector<std::uint32_t> words(n + kGuard, kSentinel);
        // Random bits, with the specials and the e4m3 saturation edge at the front.
        const std::uint32_t edges[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                       0x43E00000u, 0x43E80000u, 0xC3F00000u, 0x00000001u, 0x477FF000u};
        for (std::size_t i = 0; i < n; ++i) words[i] = i < std::size(edges) ? edges[i] : static_cast<std::uint32_t>(rng());
        std::vector<std::uint32_t> expected(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(n));
        for (std::uint32_t& w : expected) w = em::cusparselt_output(f, w);
        em::cusparselt_output(f, std::span<std::uint32_t>(words).first(n), threads);
        std::size_t wrong = 0, guard_changed = 0;
        for (std::size_t i = 0; i < n; ++i) wrong += words[i] != expected[i];
        for (std::size_t i = n; i < words.size(); ++i) guard_changed += words[i] != kSentinel;
        EXPECT_EQ(wrong, 0u) << bs::to_string(f) << " n=" << n << " threads=" << threads;
        EXPECT_EQ(guard_changed, 0u) << bs::to_string(f) << " n=" << n << " threads=" << threads;
      }
    }
  }
}
TEST(SparseGemm, RefusesWhatItDoesNotModel) {
  const em::Instruction dense = em::parse_instruction("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3");
  expect_throw_with([&] { em::SparseGemmSchedule{dense, 1, 0, em::SplitKReduction::pairwise}.validate(); }, "not a sparse instruction");
  const em::Instruction f16acc = em::parse_instruction("sm_90a wgmma.mma_async.sp m64n8k32 f16 f16 f16");
  expect_throw_with([&] { em::SparseGemmSchedule{f16acc, 1, 0, em::SplitKReduction::pairwise}.validate(); }, "f32-output instruction");
  const em::Instruction sp = em::parse_instruction("sm_90a wgmma.mma_async.sp m64n8k64 f32 e4m3 e4m3");
  expect_throw_with([&] { em::SparseGemmSchedule{sp, 0, 0, em::SplitKReduction::pairwise}.validate(); }, "slices must be >= 1");
  expect_throw_with([&] { em::SparseGemmSchedule{sp, 1, 96, em::SplitKReduction::pairwise}.validate(); }, "multiple of the instruction's K = 64");
  // An instruction whose public k was changed to 0 (a SIGFPE in slice_starts and compress_sparse).
  em::Instruction k0 = sp;
  k0.k = 0;
  expect_throw_with([&] { em::SparseGemmSchedule{k0, 1, 0, em::SplitKReduction::pairwise}.validate(); }, "got 0");
  const std::vector<std::uint32_t> codes(64 * 64, 0);
  expect_throw_with([&] { (void)em::compress_sparse(k0, em::CodeMatrix(bs::Format::float8_e4m3fn, 64, 64, std::span<const std::uint32_t>(codes))); },
                    "got 0");
  expect_throw_with([&] { (void)em::cusparselt_kernel(bs::Format::float16, bs::Format::float32); },
                    "no measured kernel for float16 -> float32");
  // From an audit of the API (2026-11-30): tf32 output aborted the process (thrown inside an OpenMP
  // loop), other formats no kernel writes were converted; a schedule without an instruction divided
  // by zero; an unknown reduction or rounding was taken.
  std::vector<std::uint32_t> words{0x3f800fffu, 0x40400000u};
  for (const bs::Format f : {bs::Format::tfloat32, bs::Format::float8_e5m2, bs::Format::float4_e2m1fn,
                             bs::Format::float8_e8m0fnu}) {
    expect_throw_with([&] { em::cusparselt_output(f, std::span<std::uint32_t>(words)); }, "write D as f32, f16, bf16 or e4m3");
    expect_throw_with([&] { (void)em::cusparselt_output(f, 0x3f800000u); }, "write D as f32, f16, bf16 or e4m3");
  }
  expect_throw_with([&] { (void)em::cusparselt_output(static_cast<bs::Format>(200), 0x3f800000u); },
                    "got an unknown format");
  expect_throw_with([&] { (void)em::cusparselt_kernel(static_cast<bs::Format>(200), bs::Format::float32); },
                    "no measured kernel for an unknown format (200) -> float32");
  expect_throw_with([&] { (void)em::SparseGemmSchedule{}.slice_starts(64); }, "no instruction");
  expect_throw_with([&] { em::SparseGemmSchedule{sp, 1, 0, static_cast<em::SplitKReduction>(7)}.validate(); },
                    "neither sequential nor pairwise");
  expect_throw_with([&] { (void)em::cusparselt_round(static_cast<em::CusparseltRounding>(9), 0u); }, "not a CusparseltRounding");
  const std::vector<std::uint32_t> z(64 * 8, 0);
  const em::CodeMatrix a(bs::Format::float8_e4m3fn, 8, 64, std::span<const std::uint32_t>(z));
  const em::CodeMatrix b16(bs::Format::float16, 64, 8, std::span<const std::uint32_t>(z));
  expect_throw_with([&] { (void)em::cusparselt_sparse_mm(bs::Format::float32, a, b16); }, "A and B must have one format");
  const em::CodeMatrix b_short(bs::Format::float8_e4m3fn, 32, 8, std::span<const std::uint32_t>(z).first(256));
  const em::SparseOperand op = em::compress_sparse(sp, a);
  expect_throw_with([&] { (void)em::gemm_sparse(em::cusparselt_schedule(bs::Format::float8_e4m3fn, bs::Format::float32), op, b_short); },
                    "A's stored values must be M x K/2 for B's K = 32");
  // The positions are checked before any work, rows in parallel above the serial threshold
  // (64 x 128 x 1024: 2^22 multiply-adds): of several bad steps the first in row-major order is
  // named, on any thread count.
  const em::Instruction f16 = em::parse_instruction("sm_90a wgmma.mma_async.sp m64n8k32 f32 f16 f16");
  std::vector<std::uint32_t> ones(64 * 1024, 0);
  for (std::size_t g = 0; g < ones.size(); g += 4) ones[g] = 0x3C00;
  em::SparseOperand bad = em::compress_sparse(f16, em::CodeMatrix(bs::Format::float16, 64, 1024, std::span<const std::uint32_t>(ones)));
  bad.index[50 * 512 + 3 * 16 + 5] = 4;      // row 50, step 3: a position outside its group
  bad.index[7 * 512 + 20 * 16 + 9] = 0;      // row 7, step 20: positions 0 and 0
  bad.index[7 * 512 + 30 * 16 + 0] = 3;      // row 7, step 30: positions 3 and 3
  const std::vector<std::uint32_t> b_ones(1024 * 128, 0x3C00);
  const em::CodeMatrix bm(bs::Format::float16, 1024, 128, std::span<const std::uint32_t>(b_ones));
  for (const int threads : {1, 2, 3}) {
    em::GemmOptions o;
    o.threads = threads;
    expect_throw_with([&] { (void)em::gemm_sparse({f16, 1, 0, em::SplitKReduction::pairwise}, bad, bm, {}, o); },
                      "row 7, K 640..671: sm_90a wgmma.mma_async.sp m64n8k32 f32 f16 f16: group 4 has positions 0 and 0");
  }
}

TEST(SparseGemm, ReproducesTorchCsltSparseMmOnAnH100) {
  std::vector<std::filesystem::path> files = run_files(samples_dir());
  ASSERT_GE(files.size(), 11u);
  if (const char* extra = std::getenv("BLOCKSCALE_SPARSE_MM_DIR")) {
    for (const auto& f : run_files(extra)) files.push_back(f);
  }
  std::size_t outputs = 0;
  for (const auto& path : files) {
    const SparseMmRun r = load(path);
    const std::vector<std::uint32_t> d = em::cusparselt_sparse_mm(r.output, a_of(r), b_of(r), r.slices);
    EXPECT_EQ(mismatches(d, r.d), 0u) << path.filename();
    outputs += d.size();
  }
  std::printf("%zu outputs of %zu runs bit-exact\n", outputs, files.size());
}

TEST(SparseGemm, TheSamplesTellTheScheduleApart) {
  // The committed samples fail the nearest wrong schedules: f16's slices added in order instead of
  // pairwise, e4m3 -> f32 without its 14 slices, tf32's sparse operand rounded to nearest even,
  // e4m3 -> e4m3 converted without saturation, and (below) the fill probes' wrong rules.
  const SparseMmRun f16 = load(samples_dir() / "f16_gaussian_64x64x8192.sparse_mm");
  em::SparseGemmSchedule s = em::cusparselt_schedule(f16.input, f16.output, f16.slices);
  const em::CodeMatrix a16 = a_of(f16);
  s.reduction = em::SplitKReduction::sequential;
  std::vector<std::uint32_t> d = em::gemm_sparse(s, em::compress_sparse(s.instruction, a16), b_of(f16));
  for (auto& x : d) x = bs::convert_code(bs::Format::float16, bs::Format::float32, x);
  EXPECT_GT(mismatches(d, f16.d), 0u);

  const SparseMmRun e4 = load(samples_dir() / "e4m3_f32_wide_64x64x16384.sparse_mm");
  EXPECT_GT(mismatches(em::cusparselt_sparse_mm(e4.output, a_of(e4), b_of(e4), 1), e4.d), 0u);

  // f32 input: A rounded to nearest even (as B is) instead of as the tf32 kernel reads its sparse
  // operand misses outputs of the rounding probe.
  const SparseMmRun grid = load(samples_dir() / "f32_single_a_grid_8192x64x256.sparse_mm");
  std::vector<std::uint32_t> nearest(grid.a);
  for (std::uint32_t& x : nearest) x = em::cusparselt_round(em::CusparseltRounding::tf32_nearest_even, x);
  const em::SparseGemmSchedule tf32 = em::cusparselt_schedule(bs::Format::float32, bs::Format::float32, 1);
  const em::SparseOperand rne = em::compress_sparse(
      tf32.instruction, em::CodeMatrix(bs::Format::tfloat32, grid.m, grid.k, std::span<const std::uint32_t>(nearest)));
  EXPECT_GT(mismatches(em::cusparselt_sparse_mm(grid.output, rne, b_of(grid), 1), grid.d), 0u);
  EXPECT_EQ(mismatches(em::cusparselt_sparse_mm(grid.output, a_of(grid), b_of(grid), 1), grid.d), 0u);
  const SparseMmRun sat = load(samples_dir() / "e4m3_e4m3_random_128x128x2048.sparse_mm");
  s = em::cusparselt_schedule(sat.input, sat.output, sat.slices);
  d = em::gemm_sparse(s, em::compress_sparse(s.instruction, a_of(sat)), b_of(sat));
  for (auto& x : d) x = bs::convert_code(bs::Format::float8_e4m3fn, bs::Format::float32, x);  // overflow -> NaN
  EXPECT_GT(mismatches(d, sat.d), 0u);

  // The fill probes (edges mode): a D that keeps -Inf, and a compressor that fills with the lowest
  // zeros instead of the highest. The second is the model run on A and B with the positions of
  // every group of four reversed: one instruction step sums its products as one fused sum, so only
  // the fill changes.
  for (const char* name : {"f16_fill_40rows.sparse_mm", "bf16_fill_subnormal_20rows.sparse_mm", "f32_fill_33rows.sparse_mm"}) {
    const SparseMmRun fill = load(samples_dir() / name);
    EXPECT_EQ(mismatches(em::cusparselt_sparse_mm(fill.output, a_of(fill), b_of(fill), fill.slices), fill.d), 0u) << name;
    if (fill.input != bs::Format::float32) {
      s = em::cusparselt_schedule(fill.input, fill.output, fill.slices);
      d = em::gemm_sparse(s, em::cusparselt_compress(a_of(fill)), b_of(fill));
      for (auto& x : d) x = bs::convert_code(fill.output, bs::Format::float32, x);
      EXPECT_GT(mismatches(d, fill.d), 0u) << name << ": -Inf kept";
    }
    SparseMmRun mirrored = fill;
    for (std::size_t at = 0; at < mirrored.a.size(); at += 4) std::reverse(mirrored.a.begin() + at, mirrored.a.begin() + at + 4);
    for (std::size_t at = 0; at < mirrored.b_t.size(); at += 4) std::reverse(mirrored.b_t.begin() + at, mirrored.b_t.begin() + at + 4);
    EXPECT_GT(mismatches(em::cusparselt_sparse_mm(fill.output, a_of(mirrored), b_of(mirrored), fill.slices), fill.d), 0u)
        << name << ": the lowest zeros fill";
  }
}

namespace {

// The words of one operand format (f16, bf16, tf32, e4m3, e5m2) from their fields (tf32: the fp32
// pattern with the low 13 bits clear, as CodeMatrix holds it).
struct OperandWords {
  bs::Format f;
  std::uint32_t top, bias, sign, mantissa_mask;  // top: the exponent field of all ones
  bool tf32;

  explicit OperandWords(bs::Format format)
      : f(format),
        top((1u << bs::info(format).exponent_bits) - 1u),
        bias(static_cast<std::uint32_t>(bs::info(format).bias)),
        sign(format == bs::Format::tfloat32 ? 0x80000000u : 1u << (bs::info(format).exponent_bits + bs::info(format).mantissa_bits)),
        mantissa_mask((1u << bs::info(format).mantissa_bits) - 1u),
        tf32(format == bs::Format::tfloat32) {}

  std::uint32_t word(bool negative, std::uint32_t field, std::uint32_t mantissa) const {
    const int shift = tf32 ? 13 : 0, m_bits = bs::info(f).mantissa_bits;
    return (negative ? sign : 0u) | field << (m_bits + shift) | (mantissa & mantissa_mask) << shift;
  }
  // The largest exponent field with finite values: all ones for e4m3 (its NaN is the code of all
  // ones alone), else one below.
  std::uint32_t top_finite() const { return bs::has_inf(f) ? top - 1 : top; }
  std::uint32_t finite(std::mt19937_64& rng, std::uint32_t lo, std::uint32_t hi) const {
    hi = std::min(hi, top_finite());
    lo = std::min(lo, hi);
    const std::uint32_t field = lo + static_cast<std::uint32_t>(rng() % (hi - lo + 1));
    std::uint32_t mantissa = static_cast<std::uint32_t>(rng()) & mantissa_mask;
    if (!bs::has_inf(f) && field == top && mantissa == mantissa_mask) mantissa ^= 1u;  // not e4m3's NaN
    return word(rng() & 1, field, mantissa);
  }
  // Inf or NaN (e4m3: NaN only).
  std::uint32_t special(std::mt19937_64& rng) const {
    if (!bs::has_inf(f)) return word(rng() & 1, top, mantissa_mask);
    return rng() % 2 == 0 ? word(rng() & 1, top, 0) : word(rng() & 1, top, 1 + static_cast<std::uint32_t>(rng() % mantissa_mask));
  }
  std::uint32_t bits(std::mt19937_64& rng) const {
    const auto w = static_cast<std::uint32_t>(rng());
    return tf32 ? w & 0xFFFFE000u : w & ((sign << 1) - 1u);
  }
};

// The data kinds of the fast-path comparison below, each aimed at a route of the expanded form
// (sparse_gemm.cpp, ExpandedForm) or of the fast kernels (fast_kernels.h).
enum class SparseData { realistic, wide, tiny, cancel, special, bits };

struct SparseCase {
  std::vector<std::uint32_t> values, b, c;
  std::vector<std::uint8_t> index;
};

SparseCase sparse_case(std::mt19937_64& rng, SparseData kind, bs::Format fa, bs::Format fb, int group, int m, int n, int k) {
  const OperandWords wa(fa), wb(fb);
  const auto below = [&](std::uint32_t x) { return static_cast<std::uint32_t>(rng() % x); };
  std::vector<std::uint32_t> row_field(static_cast<std::size_t>(m)), col_field(static_cast<std::size_t>(n));
  for (auto& x : row_field) x = wa.bias - 4 + below(9);
  for (auto& x : col_field) x = wb.bias - 4 + below(9);
  std::vector<std::uint32_t> row_value(static_cast<std::size_t>(m)), col_value(static_cast<std::size_t>(n));
  for (auto& x : row_value) x = wa.finite(rng, wa.bias - 2, wa.bias + 2);
  for (auto& x : col_value) x = wb.finite(rng, wb.bias - 2, wb.bias + 2) & ~wb.sign;
  const auto element = [&](std::size_t r, std::size_t col, bool is_a) -> std::uint32_t {
    const OperandWords& w = is_a ? wa : wb;
    switch (kind) {
      case SparseData::realistic: {
        const std::uint32_t centre = is_a ? row_field[r] : col_field[col];
        return w.finite(rng, centre - 3, centre + 3);
      }
      case SparseData::wide: return below(16) == 0 ? (rng() & 1 ? w.sign : 0u) : w.finite(rng, 0, w.top);
      case SparseData::tiny:  // products below 2^-133 (bf16, tf32), subnormals (f16, fp8), and some of normal size
        return below(4) == 0 ? w.finite(rng, w.bias - 3, w.bias + 3) : w.finite(rng, 0, w.top < 255 ? 3 : 20);
      case SparseData::cancel:  // one magnitude per row of A and per column of B: sums cancel to exact zeros
        if (below(8) == 0) return rng() & 1 ? w.sign : 0u;
        return (is_a ? row_value[r] : col_value[col]) ^ (rng() & 1 ? w.sign : 0u);
      case SparseData::special: return below(24) == 0 ? w.special(rng) : w.finite(rng, w.bias - 6, w.bias + 6);
      case SparseData::bits: return w.bits(rng);
    }
    return 0;
  };
  SparseCase out;
  out.values.resize(static_cast<std::size_t>(m) * k / 2);
  for (int i = 0; i < m; ++i) {
    for (int s = 0; s < k / 2; ++s) out.values[static_cast<std::size_t>(i) * k / 2 + s] = element(i, 0, true);
    for (int g = 0; g < k / group; ++g) {
      if (group == 2) {
        out.index.push_back(static_cast<std::uint8_t>(rng() % 2));
      } else {
        const auto& pair = em::kOrderedPairs[rng() % 6];
        out.index.push_back(pair[0]);
        out.index.push_back(pair[1]);
      }
    }
  }
  out.b.resize(static_cast<std::size_t>(k) * n);
  for (int kk = 0; kk < k; ++kk) {
    for (int j = 0; j < n; ++j) out.b[static_cast<std::size_t>(kk) * n + j] = element(0, j, false);
  }
  if (below(2) == 0) {  // C: zeros of both signs, values of the products' size, huge ones, and for special NaN / Inf
    out.c.resize(static_cast<std::size_t>(m) * n);
    for (auto& x : out.c) {
      const std::uint32_t s = rng() & 1 ? 0x80000000u : 0u;
      switch (below(kind == SparseData::special ? 5 : 4)) {
        case 0: x = s; break;
        case 1: x = s | (127u - 2 + below(5)) << 23 | static_cast<std::uint32_t>(rng() & 0x7FFFFF); break;
        case 2: x = s | (below(254) + 1) << 23 | static_cast<std::uint32_t>(rng() & 0x7FFFFF); break;
        case 3: x = s | static_cast<std::uint32_t>(rng() & 0x7FFFFF); break;  // subnormal
        default: x = below(2) == 0 ? (s | 0x7F800000u) : 0x7FC00001u;
      }
    }
  }
  return out;
}

std::vector<em::GemmPath> fast_paths() {
  std::vector<em::GemmPath> paths{em::GemmPath::portable};
  for (em::GemmPath p : {em::GemmPath::avx2, em::GemmPath::avx512}) {
    if (em::gemm_path_available(p)) paths.push_back(p);
  }
  return paths;
}

}  // namespace

TEST(SparseGemm, EveryFastPathEqualsTheReferenceEngine) {
  // The f16, bf16, tf32 and wgmma fp8 rows run on the fast paths as the dense GEMM of their
  // expanded form (sparse_gemm.cpp; fp8: steps of 64 products); GemmPath::reference runs the
  // engine, which the test above checks against dot_sparse. 10^6 outputs per sparse family and
  // fp8 operand mix, each of 1-6 instruction steps in 1-3 slices, with
  // and without C, B in either order, in six data kinds: realistic windows (the exact tier), any finite code
  // (truncation), products below 2^-133 (where a pruned zero term would matter if it could move
  // e_max), exact cancellation (zero sums), NaN and Inf in A, in B (also at pruned positions: those
  // outputs go back to the engine) and in C, and uniform random bits. Every path must take each
  // route: exact and truncating steps, special steps, and outputs sent back to the engine.
  const char* names[] = {
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k16 f32 f16 f16",
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k16 f32 bf16 bf16",
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16",
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 bf16 bf16",
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k8 f32 tf32 tf32",
      "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k16 f32 tf32 tf32",
      "sm_90a wgmma.mma_async.sp m64n8k32 f32 f16 f16",
      "sm_90a wgmma.mma_async.sp m64n8k32 f32 bf16 bf16",
      "sm_90a wgmma.mma_async.sp m64n8k16 f32 tf32 tf32",
      "sm_90a wgmma.mma_async.sp m64n8k64 f32 e4m3 e4m3",
      "sm_90a wgmma.mma_async.sp m64n8k64 f32 e4m3 e5m2",
      "sm_90a wgmma.mma_async.sp m64n8k64 f32 e5m2 e4m3",
      "sm_90a wgmma.mma_async.sp m64n8k64 f32 e5m2 e5m2",
  };
  constexpr std::size_t kOutputs = 1000000;
  const SparseData kinds[] = {SparseData::realistic, SparseData::wide,    SparseData::tiny,
                              SparseData::cancel,    SparseData::special, SparseData::bits};
  const std::vector<em::GemmPath> paths = fast_paths();
  std::mt19937_64 rng(2026);
  for (const char* name : names) {
    SCOPED_TRACE(name);
    const em::Instruction ins = em::parse_instruction(name);
    const bs::Format fa = *em::format_of(ins.a), fb = *em::format_of(ins.b);
    const bool wide = bs::info(fa).storage_bits > 8;
    std::vector<em::GemmPathStats> total(paths.size());
    std::size_t outputs = 0;
    for (std::size_t round = 0; outputs < kOutputs; ++round) {
      const SparseData kind = kinds[round % std::size(kinds)];
      const int m = 40, n = 70, steps = 1 + static_cast<int>(rng() % 6), k = steps * ins.k;
      const SparseCase data = sparse_case(rng, kind, fa, fb, ins.sparse_group(), m, n, k);
      const em::SparseOperand sp{em::CodeMatrix(fa, m, k / 2, std::span<const std::uint32_t>(data.values)), data.index, nullptr};
      // B row-major, or (odd rounds) K-contiguous columns as torch passes B^T.
      std::vector<std::uint32_t> b_columns(data.b.size());
      for (int kk = 0; kk < k; ++kk) {
        for (int j = 0; j < n; ++j) b_columns[static_cast<std::size_t>(j) * k + kk] = data.b[static_cast<std::size_t>(kk) * n + j];
      }
      const em::CodeMatrix bm = round % 2 == 0 ? em::CodeMatrix(fb, k, n, std::span<const std::uint32_t>(data.b))
                                               : em::CodeMatrix(fb, k, n, std::span<const std::uint32_t>(b_columns), em::Order::col_major);
      const em::CodeMatrix cm = data.c.empty() ? em::CodeMatrix{}
                                               : em::CodeMatrix(bs::Format::float32, m, n, std::span<const std::uint32_t>(data.c));
      const em::SparseGemmSchedule s{ins, 1 + static_cast<int>(rng() % std::min(steps, 3)), 0,
                                     rng() & 1 ? em::SplitKReduction::pairwise : em::SplitKReduction::sequential};
      em::GemmOptions o;
      o.path = em::GemmPath::reference;
      const std::vector<std::uint32_t> want = em::gemm_sparse(s, sp, bm, cm, o);
      for (std::size_t p = 0; p < paths.size(); ++p) {
        em::GemmPathStats stats;
        o.path = paths[p];
        o.stats = &stats;
        const std::vector<std::uint32_t> got = em::gemm_sparse(s, sp, bm, cm, o);
        ASSERT_EQ(mismatches(got, want), 0u) << em::to_string(paths[p]) << ", round " << round << ", " << s.name();
        total[p].exact += stats.exact;
        total[p].truncating += stats.truncating;
        total[p].special += stats.special;
        total[p].fp16 += stats.fp16;
        total[p].reference_outputs += stats.reference_outputs;
      }
      outputs += want.size();
    }
    for (std::size_t p = 0; p < paths.size(); ++p) {
      SCOPED_TRACE(em::to_string(paths[p]));
      std::printf("%-70s %-9s %zu outputs: steps %llu exact, %llu truncating (%llu in fp16), %llu special; %llu outputs by the engine\n",
                  name, std::string(em::to_string(paths[p])).c_str(), outputs, static_cast<unsigned long long>(total[p].exact),
                  static_cast<unsigned long long>(total[p].truncating), static_cast<unsigned long long>(total[p].fp16),
                  static_cast<unsigned long long>(total[p].special), static_cast<unsigned long long>(total[p].reference_outputs));
      // The AVX-512 kernel of 16- and 19-bit operands has no exact tier, nor has the AVX-512 fp8
      // kernel where it forms the terms in fp16 (F <= 13 on CPUs with AVX512-FP16: every tile-step
      // then takes the fp16 or the fp32 float form; fast_kernels_avx512.cpp), nor the AVX2 kernel
      // of 8-bit operands (the fp32 float form for every tile-step; fast_kernels_portable.cpp).
      const bool exact_tier = paths[p] == em::GemmPath::avx512 ? !wide && total[p].fp16 == 0
                              : paths[p] == em::GemmPath::avx2  ? wide
                                                                : true;
      if (exact_tier) {
        EXPECT_GT(total[p].exact, 0u);
      } else if (paths[p] == em::GemmPath::avx2) {
        EXPECT_EQ(total[p].exact, 0u);
      }
      EXPECT_GT(total[p].truncating, 0u);
      EXPECT_GT(total[p].special, 0u);
      EXPECT_GT(total[p].reference_outputs, 0u);
      EXPECT_LT(total[p].reference_outputs, outputs / 2);  // pruned Inf / NaN of B: the special and bits kinds
    }
  }
}

TEST(SparseGemm, Fp8MmaSpRowsTakeTheReferenceEngineOnEveryPath) {
  // fp8 mma.sp runs b.9's two HMMAs, split by k mod 4, which the expanded form would change
  // (sparse_gemm.cpp, ExpandedForm): every output on the engine, on every path.
  const em::Instruction ins = em::parse_instruction("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k64 f32 e4m3 e4m3");
  std::mt19937 rng(3);
  std::vector<std::uint8_t> index;
  const std::vector<std::uint32_t> a = random_sparse(rng, 8, 256, index);
  std::vector<std::uint32_t> b(256 * 8);
  for (auto& x : b) x = rng() & 0x77;
  const em::CodeMatrix bm(bs::Format::float8_e4m3fn, 256, 8, std::span<const std::uint32_t>(b));
  const em::SparseOperand sp = em::compress_sparse(ins, em::CodeMatrix(bs::Format::float8_e4m3fn, 8, 256, std::span<const std::uint32_t>(a)));
  em::GemmOptions o;
  o.path = em::GemmPath::reference;
  const std::vector<std::uint32_t> want = em::gemm_sparse({ins, 2, 0, em::SplitKReduction::pairwise}, sp, bm, {}, o);
  for (const em::GemmPath path : fast_paths()) {
    em::GemmPathStats stats;
    o.path = path;
    o.stats = &stats;
    EXPECT_EQ(em::gemm_sparse({ins, 2, 0, em::SplitKReduction::pairwise}, sp, bm, {}, o), want);
    EXPECT_EQ(stats.reference_outputs, want.size());
    EXPECT_EQ(stats.exact + stats.truncating + stats.special, 0u);
  }
}

TEST(SparseGemm, ThreadCountsGiveTheSameBitsAboveTheSerialThreshold) {
  // Calls below 2^22 multiply-adds run on one thread (sparse_gemm.cpp, kParallelWork), so the
  // thread counts of the tests above change nothing there; this one is above it on both routes:
  // 128 x 130 x 1024 f16 (8.5e6 stored products) with NaN and Inf in A and B, 3 slices, C.
  const em::Instruction ins = em::parse_instruction("sm_90a wgmma.mma_async.sp m64n8k32 f32 f16 f16");
  std::mt19937_64 rng(99);
  const int m = 128, n = 130, k = 1024;
  const SparseCase data = sparse_case(rng, SparseData::special, bs::Format::float16, bs::Format::float16, 4, m, n, k);
  const em::SparseOperand sp{em::CodeMatrix(bs::Format::float16, m, k / 2, std::span<const std::uint32_t>(data.values)), data.index,
                             nullptr};
  const em::CodeMatrix bm(bs::Format::float16, k, n, std::span<const std::uint32_t>(data.b));
  const em::SparseGemmSchedule s{ins, 3, 0, em::SplitKReduction::pairwise};
  for (const em::GemmPath path : {em::GemmPath::reference, em::GemmPath::automatic}) {
    em::GemmOptions o;
    o.path = path;
    o.threads = 1;
    const std::vector<std::uint32_t> one = em::gemm_sparse(s, sp, bm, {}, o);
    for (const int threads : {2, 3}) {
      o.threads = threads;
      EXPECT_EQ(em::gemm_sparse(s, sp, bm, {}, o), one) << em::to_string(path) << ", " << threads << " threads";
    }
  }
}
