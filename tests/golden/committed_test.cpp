// SPDX-License-Identifier: Apache-2.0
// The committed sets under golden/: every case verifies, they cover the whole instruction table,
// every scale rule, layout, packing and conversion preset, they stay small, and they regenerate
// byte for byte (every family, on the portable and the AVX-512 conversion paths; the K&M files from
// the data set).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>

#include "blockscale/emulator/instruction.h"
#include "blockscale/emulator/library_fp8.h"
#include "blockscale/emulator/table.h"
#include "blockscale/formats/detail/bulk_paths.h"
#include "blockscale/golden/file.h"
#include "blockscale/golden/km.h"
#include "blockscale/golden/manifest.h"
#include "blockscale/golden/operation.h"
#include "blockscale/golden/set.h"
#include "blockscale/golden/verify.h"
#include "blockscale/layout/scale_layout.h"
#include "blockscale/layout/weight_interleave.h"
#include "blockscale/quantize/options.h"
#include "fp_mode.h"
#include "golden/helpers.h"

namespace blockscale::golden {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() { return fs::path(test::env("BLOCKSCALE_SOURCE_DIR")) / "golden"; }

const std::vector<std::string> kSets = {"conversions",  "quantization", "layouts",
                                        "instructions", "gemms",        "km"};

class GoldenCommitted : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::env("BLOCKSCALE_SOURCE_DIR").empty())
      GTEST_FAIL() << "BLOCKSCALE_SOURCE_DIR is not set (blockscale_add_test sets it)";
  }
  // Every text file of a set, parsed.
  static std::vector<GoldenFile> files_of(const std::string& set) {
    std::vector<GoldenFile> out;
    const Manifest m = read_manifest(golden_dir() / set / "manifest.json");
    for (const ManifestFile& f : m.files) {
      if (f.kind != "npy") out.push_back(read_golden(golden_dir() / set / f.path));
    }
    return out;
  }
};

TEST_F(GoldenCommitted, EverySetVerifies) {
  std::uint64_t cases = 0, files = 0;
  for (const std::string& set : kSets) {
    ASSERT_TRUE(fs::exists(golden_dir() / set / "manifest.json")) << set;
    std::uint64_t set_cases = 0;
    for (const FileReport& r : verify_manifest(golden_dir() / set / "manifest.json")) {
      EXPECT_TRUE(r.ok()) << r.path << ": " << r.error
                          << (r.first.empty() ? ""
                                              : " first mismatch: line " + std::to_string(r.first[0].line) +
                                                    " " + r.first[0].detail);
      set_cases += r.kind == "npy" ? 0 : r.cases;
      ++files;
    }
    std::printf("[ golden ] %-13s %7llu cases verified\n", set.c_str(),
                static_cast<unsigned long long>(set_cases));
    cases += set_cases;
  }
  std::printf("[ golden ] %llu files, %llu cases, 0 mismatches expected\n",
              static_cast<unsigned long long>(files), static_cast<unsigned long long>(cases));
  // Nothing outside the sets but the format documentation.
  for (const auto& e : fs::directory_iterator(golden_dir())) {
    const std::string n = e.path().filename().string();
    const bool known = n == "FORMAT.md" || std::find(kSets.begin(), kSets.end(), n) != kSets.end();
    EXPECT_TRUE(known) << e.path() << " is not part of a set";
  }
}

TEST_F(GoldenCommitted, StaysSmall) {
  std::uintmax_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(golden_dir())) {
    if (e.is_regular_file()) bytes += e.file_size();
  }
  std::printf("[ golden ] golden/ holds %.2f MB\n", static_cast<double>(bytes) / 1e6);
  // The cap is 20 MB; FORMAT.md sets our budget at 12 MB (the tree travels to GPU machines).
  EXPECT_LE(bytes, 12'000'000u);
}

TEST_F(GoldenCommitted, CoverEveryInstructionOfTheTable) {
  std::set<std::string> covered;  // row id / k / a / b
  std::set<std::string> rows;
  for (const std::string& set : {std::string("instructions"), std::string("km")}) {
    for (const GoldenFile& f : files_of(set)) {
      for (const std::string& op : f.header.ops) {
        const emulator::Instruction ins = emulator::parse_instruction(op);
        rows.insert(std::string(ins.row->id));
        covered.insert(std::string(ins.row->id) + (ins.sparse ? "/sp/" : "/") + std::to_string(ins.k) + "/" +
                       std::string(emulator::to_string(ins.a)) + "/" +
                       std::string(emulator::to_string(ins.b)));
      }
    }
  }
  std::size_t concrete = 0, sparse = 0;
  for (const emulator::InstructionRow& row : emulator::instruction_table()) {
    EXPECT_TRUE(rows.count(std::string(row.id))) << row.id << " has no golden set";
    // Dense forms (row.shapes), then the sparse forms (row.sparse_shapes: mma.sp, wgmma.sp).
    for (bool sp : {false, true}) {
      const std::span<const emulator::ShapeRule> shapes = sp ? row.sparse_shapes : row.shapes;
      std::set<int> ks;
      for (const auto& s : shapes) ks.insert(s.k);
      for (int k : ks) {
        for (int ta = 0; ta < emulator::kTypeCount; ++ta) {
          for (int tb = 0; tb < emulator::kTypeCount; ++tb) {
            const auto a = static_cast<emulator::Type>(ta), b = static_cast<emulator::Type>(tb);
            if (!row.a_types.contains(a) || !row.b_types.contains(b)) continue;
            const auto shape = std::find_if(shapes.begin(), shapes.end(), [&](const auto& s) { return s.k == k; });
            try {
              (void)(sp ? emulator::make_sparse_instruction(row, shape->m, shape->n_min, k, a, b)
                        : emulator::make_instruction(row, shape->m, shape->n_min, k, a, b));
            } catch (const std::invalid_argument&) {
              continue;
            }
            ++(sp ? sparse : concrete);
            const std::string key = std::string(row.id) + (sp ? "/sp/" : "/") + std::to_string(k) + "/" +
                                    std::string(emulator::to_string(a)) + "/" +
                                    std::string(emulator::to_string(b));
            EXPECT_TRUE(covered.count(key)) << key << " has no golden set";
          }
        }
      }
    }
  }
  EXPECT_GT(sparse, 0u);
  std::printf("[ golden ] %zu table rows, %zu dense and %zu sparse instructions (row x K x operand types) covered\n",
              rows.size(), concrete, sparse);
}

TEST_F(GoldenCommitted, CoverEveryRuleLayoutPackingAndPreset) {
  std::set<std::string> ops;
  for (const std::string& set : {std::string("quantization"), std::string("layouts"),
                                 std::string("conversions"), std::string("gemms")}) {
    for (const GoldenFile& f : files_of(set)) {
      for (const std::string& op : f.header.ops) ops.insert(op);
      for (const std::string& m : f.header.modes) ops.insert("mode " + m);
    }
  }
  const auto any = [&](const std::string& needle) {
    for (const std::string& o : ops) {
      if (o.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  for (ScaleRule r :
       {ScaleRule::ocp_floor, ScaleRule::ceil, ScaleRule::even, ScaleRule::rceil, ScaleRule::triton_round_up,
        ScaleRule::triton_round_down, ScaleRule::nvfp4_transformer_engine, ScaleRule::nvfp4_torchao}) {
    EXPECT_TRUE(any(" rule=" + to_string(r) + " ")) << "scale rule " << to_string(r);
  }
  for (const ScaleLayoutKindInfo& k : kScaleLayoutKindTable)
    EXPECT_TRUE(any("scale_layout " + std::string(k.name))) << k.name;
  for (const char* grouped : {"grouped_scale_layout rows:", "grouped_scale_layout cols:",
                               "grouped_scale_layout deepgemm_sm100_rows:alignment=128:",
                               "grouped_scale_layout deepgemm_sm100_rows:alignment=32,padded_rows=",
                               "grouped_scale_layout deepgemm_sm100_cols:", "grouped_scale_layout triton_kernels_rows:0",
                               "grouped_scale_layout triton_kernels_rows:tokens="})
    EXPECT_TRUE(any(grouped)) << grouped;
  // The optional parameters: aiter's atom width, and a row order before BlockMajorK.
  for (const char* optional : {"scale_layout gfx1250_mx:scale_k_width=", "scale_layout block_major_k:block_k=128,rows="})
    EXPECT_TRUE(any(optional)) << optional;
  for (const RowOrderInfo& o : kRowOrderTable) {
    if (o.order == RowOrder::natural) continue;
    for (const char* kind : {"linear", "tiled_128x4"})
      EXPECT_TRUE(any("scale_layout " + std::string(kind) + ":rows=" + o.name)) << kind << " " << o.name;
  }
  for (const WeightInterleaveInfo& v : kWeightInterleaveTable)
    EXPECT_TRUE(any("weight_interleave " + std::string(v.name))) << v.name;
  for (const char* p : {"byte_per_element", "fp4_dense", "fp6_dense", "fp4_padded16", "fp6_padded16"}) {
    EXPECT_TRUE(any(std::string("pack ") + p + " ")) << p;
  }
  for (const char* preset : {"preset=ieee(", "preset=cuda(", "preset=ml_dtypes(", "rounding=stochastic"})
    EXPECT_TRUE(any(preset)) << preset;
  for (const FormatInfo& fi : kFormatTable) {
    if (fi.id == Format::float32) continue;
    EXPECT_TRUE(any("convert f32 " + std::string(fi.short_name)) &&
                any("convert f64 " + std::string(fi.short_name)))
        << fi.short_name;
  }
  EXPECT_TRUE(any("convert f64 f32"));
  for (const char* s : {"schedule=chain", "schedule=promotion", "split_k=2", "split_k=3", "c=epilogue",
                        "fma=scale_product", "fma=scale_b_first", "fma=mul_then_add", "reduction=pairwise"}) {
    EXPECT_TRUE(any(s)) << s;
  }
}

// fp8 with fp32 scales: every recipe of quantize/fp8_scaled.h and every measured library row of
// emulator/library_fp8.h has a committed file.
TEST_F(GoldenCommitted, CoverEveryFp8RecipeAndLibraryRow) {
  std::set<std::string> ops;
  for (const std::string& set : {std::string("quantization"), std::string("gemms")}) {
    for (const GoldenFile& f : files_of(set)) ops.insert(f.header.ops.begin(), f.header.ops.end());
  }
  for (const char* recipe : {"deepgemm", "deepgemm_ue8m0", "torchao"}) {
    EXPECT_TRUE(ops.count(std::string("quantize fp8_e4m3 recipe=") + recipe)) << recipe;
  }
  EXPECT_TRUE(ops.count("quantize fp8_e5m2 recipe=torchao"));
  for (const emulator::LibraryFp8Schedule& row : emulator::library_fp8_schedules()) {
    const std::string needle = " library=" + std::string(emulator::to_string(row.library)) +
                               " fast_accum=" + (row.fast_accum ? "1" : "0") +
                               " scale_a=" + std::string(to_string(row.a)) +
                               " scale_b=" + std::string(to_string(row.b)) + " a=e4m3 b=e4m3 ";
    bool found = false;
    for (const std::string& op : ops)
      found = found || (op.rfind("fp8_scaled_gemm ", 0) == 0 && op.find(needle) != std::string::npos);
    EXPECT_TRUE(found) << row.name();
    // Every distinct split schedule (the K tile and where the scales enter) is committed split too.
    if (row.split_granule_k == 0) continue;
    bool split = false;
    for (const std::string& op : ops) {
      split = split || (op.rfind("fp8_scaled_gemm ", 0) == 0 && op.find(" split_k=") != std::string::npos &&
                        op.find(" scales=" + std::string(row.scales == emulator::Fp8ScaleStage::promotion_fma
                                                             ? "promotion_fma"
                                                             : "epilogue")) != std::string::npos &&
                        op.find(" interval=" + std::to_string(row.promotion_interval)) != std::string::npos &&
                        op.find(" split_tile=" + std::to_string(row.split_granule_k)) != std::string::npos);
    }
    EXPECT_TRUE(split) << row.name() << ": no split-K file of its kind";
  }
}

// Every family regenerated from its manifest's seed and data gives the committed bytes, on both
// conversion paths (BLOCKSCALE_SIMD=portable and avx512 as the formats library calls them).
TEST_F(GoldenCommitted, RegenerateByteIdenticallyOnEverySimdPath) {
  std::vector<blockscale::detail::BulkPath> paths;
  paths.push_back(blockscale::detail::BulkPath::portable);
  if (blockscale::detail::avx512_available()) {
    paths.push_back(blockscale::detail::BulkPath::avx512);
  } else {
    std::printf("[ golden ] this CPU has no AVX-512: the portable path only\n");
  }
  const auto saved = blockscale::detail::automatic_path();
  for (const auto path : paths) {
    blockscale::detail::set_automatic_path(path);
    for (const std::string& set : family_names()) {
      const Manifest m = read_manifest(golden_dir() / set / "manifest.json");
      ASSERT_TRUE(m.seed.has_value()) << set;
      const auto data = parse_data_kind(m.data);
      ASSERT_TRUE(data.has_value()) << set << ": data " << m.data;
      const std::vector<GoldenFile> files = generate_set(m.operation, *m.seed, *data, std::nullopt);
      std::size_t i = 0;
      for (const ManifestFile& mf : m.files) {
        if (mf.kind == "npy") continue;
        ASSERT_LT(i, files.size()) << set << ": the generator makes fewer files than the manifest lists";
        EXPECT_EQ(files[i].name, mf.path);
        const std::string text = format_golden(files[i]);
        EXPECT_EQ(sha256_hex(text), mf.sha256)
            << set << "/" << mf.path << " differs when regenerated on the "
            << (path == blockscale::detail::BulkPath::portable ? "portable" : "avx512") << " path";
        ++i;
      }
      EXPECT_EQ(i, files.size()) << set << ": the generator makes more files than the manifest lists";
    }
  }
  blockscale::detail::set_automatic_path(saved);
}

// The same under the caller's worst floating-point mode (round toward zero, subnormals flushed on
// every thread: a -ffast-math program's start-up mode, torch.set_flush_denormal(True)): the
// generators draw their inputs and compute their outputs through every library part (formats,
// quantize, layout, reference, emulator), and each holds IEEE mode where it does host float
// arithmetic, so the committed bytes come out and the caller's mode is given back.
TEST_F(GoldenCommitted, RegenerateByteIdenticallyUnderTheCallersFloatingPointMode) {
  for (const std::string& set : family_names()) {
    const Manifest m = read_manifest(golden_dir() / set / "manifest.json");
    ASSERT_TRUE(m.seed.has_value()) << set;
    const auto data = parse_data_kind(m.data);
    ASSERT_TRUE(data.has_value()) << set << ": data " << m.data;
    std::vector<GoldenFile> files;
    {
      const blockscale::test::HostileFpMode hostile;
      const std::uint64_t mode = blockscale::test::fp_control();
      files = generate_set(m.operation, *m.seed, *data, std::nullopt);
      ASSERT_EQ(blockscale::test::fp_control(), mode) << set << ": the caller's mode was not given back";
    }
    std::size_t i = 0;
    for (const ManifestFile& mf : m.files) {
      if (mf.kind == "npy") continue;
      ASSERT_LT(i, files.size()) << set;
      EXPECT_EQ(sha256_hex(format_golden(files[i])), mf.sha256) << set << "/" << mf.path << " differs when regenerated in the hostile mode";
      ++i;
    }
  }
}

TEST_F(GoldenCommitted, KmFilesAreTheImportOfTheDataSet) {
  if (test::env("BLOCKSCALE_KM_DIR").empty()) GTEST_FAIL() << "BLOCKSCALE_KM_DIR is not set";
  const Manifest m = read_manifest(golden_dir() / "km" / "manifest.json");
  ASSERT_FALSE(m.files.empty());
  const std::size_t per_file = m.files[0].cases;
  const std::vector<GoldenFile> files = import_km(test::env("BLOCKSCALE_KM_DIR"), per_file);
  ASSERT_EQ(files.size(), km_sets().size());
  std::size_t i = 0;
  for (const ManifestFile& mf : m.files) {
    if (mf.kind == "npy") continue;
    ASSERT_LT(i, files.size());
    EXPECT_EQ(files[i].name, mf.path);
    EXPECT_EQ(sha256_hex(format_golden(files[i])), mf.sha256) << mf.path;
    ++i;
  }
}

// All 5000 vectors of all 32 K&M result files, through the import and the verifier.
TEST(GoldenKm, FullImportVerifies) {
  if (test::env("BLOCKSCALE_KM_DIR").empty()) GTEST_FAIL() << "BLOCKSCALE_KM_DIR is not set";
  const std::vector<GoldenFile> files = import_km(test::env("BLOCKSCALE_KM_DIR"));
  ASSERT_EQ(files.size(), 32u);
  std::uint64_t cases = 0;
  for (const GoldenFile& f : files) {
    const FileReport r = verify_golden(f);
    EXPECT_TRUE(r.ok()) << f.name << ": " << r.error << " " << r.mismatches << " mismatches";
    EXPECT_EQ(r.cases, 5000u) << f.name;
    cases += r.cases;
  }
  std::printf("[ golden ] K&M: %llu hardware vectors imported and verified\n",
              static_cast<unsigned long long>(cases));
}

// A copy of the K&M data set made of hard links, so that a test can spoil one file of it cheaply;
// replace_linked_file writes a file of such a copy without writing through the link into the
// data set itself.
fs::path hard_linked_km_copy(const std::string& name) {
  const fs::path dir = test::scratch_dir(name);
  fs::copy(test::env("BLOCKSCALE_KM_DIR"), dir, fs::copy_options::recursive | fs::copy_options::create_hard_links);
  return dir;
}
void replace_linked_file(const fs::path& p, const std::string& text) {
  fs::remove(p);
  test::write(p, text);
}

TEST(GoldenKm, MalformedDataIsReportedWithFileAndLine) {
  if (test::env("BLOCKSCALE_KM_DIR").empty()) GTEST_FAIL() << "BLOCKSCALE_KM_DIR is not set";
  const fs::path dir = hard_linked_km_copy("km_bad");
  const fs::path c = dir / "H100" / "fp16" / "c_H100_fp32.txt";
  std::string text = test::read(c);
  text[33 * 41 + 5] = '2';  // line 42 of 33-byte lines: not a binary digit
  replace_linked_file(c, text);
  try {
    (void)import_km(dir, 100);
    FAIL() << "accepted a bad c_ file";
  } catch (const GoldenError& e) {
    EXPECT_EQ(e.file(), c.string());
    EXPECT_EQ(e.line(), 42u);
    EXPECT_NE(std::string(e.what()).find("expected 32 binary digits"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// hex_words reads lower-case hex digits only (the data set's own spelling): any other character,
// an upper-case digit or one between '9' and 'a' in ASCII among them, is refused with its line,
// not read as a digit value.
TEST(GoldenKm, BadHexDigitsAreRefused) {
  if (test::env("BLOCKSCALE_KM_DIR").empty()) GTEST_FAIL() << "BLOCKSCALE_KM_DIR is not set";
  const fs::path dir = hard_linked_km_copy("km_hex");
  const fs::path p = dir / "H200" / "E4M3" / "a_H200_E4M3.txt";
  const std::string original = test::read(p);
  for (const char bad : {'g', 'A', ':', '/', '`'}) {
    std::string text = original;
    text[6 * 289 + 3 * 9 + 5] = bad;  // line 7, value 4, digit 6 (32 values of 9 bytes + LF per line)
    replace_linked_file(p, text);
    try {
      (void)import_km(dir, 100);
      ADD_FAILURE() << "accepted the hex digit '" << bad << "'";
    } catch (const GoldenError& e) {
      EXPECT_EQ(e.file(), p.string());
      EXPECT_EQ(e.line(), 7u);
      EXPECT_NE(std::string(e.what()).find(std::string("bad hex digit '") + bad + "'"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

// The README gives the values per a_ / b_ line (32 for fp8): a shorter line is an error, not
// zeros that would then read as the hardware disagreeing with the model.
TEST(GoldenKm, ShortOperandLinesAreRefused) {
  if (test::env("BLOCKSCALE_KM_DIR").empty()) GTEST_FAIL() << "BLOCKSCALE_KM_DIR is not set";
  const fs::path dir = hard_linked_km_copy("km_short");
  for (const char* side : {"a", "b"}) {
    const fs::path p = dir / "H200" / "E4M3" / (std::string(side) + "_H200_E4M3.txt");
    const std::string original = test::read(p);
    std::string text = original;
    // Line 7 loses its last value ("xxxxxxxx " is 9 bytes; lines are 32 values, 288 bytes + LF).
    text.erase(6 * 289 + 31 * 9, 9);
    replace_linked_file(p, text);
    try {
      (void)import_km(dir, 100);
      ADD_FAILURE() << side << ": accepted a line of 31 values";
    } catch (const GoldenError& e) {
      EXPECT_EQ(e.file(), p.string());
      EXPECT_EQ(e.line(), 7u);
      EXPECT_NE(std::string(e.what()).find("the K&M README gives 32 per line for E4M3 on H200"), std::string::npos)
          << e.what();
    }
    replace_linked_file(p, original);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace blockscale::golden
