// SPDX-License-Identifier: Apache-2.0
// torch._cslt_sparse_mm runs against the emulator's cuSPARSELt model (harness/sparse_mm.h): the
// committed H100 samples are fitted to the slice counts the probe sweep measured, a changed output
// bit is a mismatch, and malformed files are refused naming the rule broken.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/harness/report.h"
#include "blockscale/harness/sparse_mm.h"
#include "expect_throw.h"

namespace bs = blockscale;
using namespace blockscale::harness;

namespace {

std::filesystem::path samples_dir() {
  const char* src = std::getenv("BLOCKSCALE_SOURCE_DIR");
  if (src == nullptr) throw std::runtime_error("BLOCKSCALE_SOURCE_DIR is not set (blockscale_add_test sets it)");
  return std::filesystem::path(src) / "tests" / "data" / "cusparselt_h100";
}

// A scratch directory of its own per test, removed at the end.
struct Scratch {
  std::filesystem::path dir;
  explicit Scratch(const std::string& name) : dir(std::filesystem::temp_directory_path() / ("blockscale_sparse_mm_" + name)) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::filesystem::path write(const std::string& file, const std::string& header, const std::string& body = "") const {
    std::ofstream f(dir / file, std::ios::binary);
    f << header << "\n" << body;
    return dir / file;
  }
};

// A 1 x 1 x 64 f16 run: A's groups hold 1.0 at positions 0 and 2, B is all 1.0, so D = 32.
std::string f16_body(std::uint16_t d) {
  std::string body;
  const auto put = [&](std::uint16_t x) { body.push_back(static_cast<char>(x & 0xFF)), body.push_back(static_cast<char>(x >> 8)); };
  for (int t = 0; t < 64; ++t) put(t % 4 == 0 || t % 4 == 2 ? 0x3C00 : 0);
  for (int t = 0; t < 64; ++t) put(0x3C00);
  put(d);
  return body;
}
const char* kF16Header = "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f16 b=f16 m=1 n=1 k=64 out=f16";

void expect_refused(const std::filesystem::path& path, const std::string& message) {
  try {
    (void)read_sparse_mm_file(path);
    ADD_FAILURE() << path << " was read; expected: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(SparseMmRuns, TheH100SamplesFitTheirMeasuredSliceCounts) {
  const std::vector<SparseMmRun> runs = read_sparse_mm_runs(samples_dir());
  ASSERT_EQ(runs.size(), 32u);
  // The runs whose data leave one slice count (docs/emulator.md: the sweep measured these S).
  const std::map<std::string, std::vector<int>> only = {
      {"e4m3_bf16_wide_64x64x16384.sparse_mm", {12}},
      {"e4m3_f16_wide_64x64x16384.sparse_mm", {14}},
      {"e4m3_f32_wide_64x64x16384.sparse_mm", {14}},
      {"f16_gaussian_64x64x8192.sparse_mm", {8}},
      {"f32_gaussian_128x128x2048.sparse_mm", {2}},
      {"f32_gaussian_64x64x4096.sparse_mm", {4}},
      {"f32_random_128x128x2048.sparse_mm", {2}},
      {"f32_wide_128x128x2048.sparse_mm", {2}},
  };
  std::vector<SparseMmStudy> studies;
  for (const SparseMmRun& run : runs) {
    SparseMmStudy st = fit_sparse_mm(run);
    SCOPED_TRACE(st.run.file);
    EXPECT_TRUE(st.why_not.empty()) << st.why_not;
    EXPECT_TRUE(st.bit_exact());
    EXPECT_TRUE(st.header_slices_fit()) << "slices=" << st.run.slices << ", exact: " << st.exact_text();
    EXPECT_EQ(st.matches, st.outputs);
    EXPECT_TRUE(st.run.a.empty() && st.run.d.empty());  // arrays cleared after fitting
    if (const auto it = only.find(st.run.file); it != only.end()) {
      EXPECT_EQ(st.exact, it->second);
    }
    studies.push_back(std::move(st));
  }
  const std::string table = sparse_mm_table(studies);
  EXPECT_NE(table.find("f16_gaussian_64x64x8192.sparse_mm: cusparselt f16 -> f16, 5 x 5 x 8192"), std::string::npos) << table;
  EXPECT_NE(table.find("BIT-EXACT 25 outputs with S = 8 (S = 1..64 tried of 128 tiles; the header's slices=8 fits)"),
            std::string::npos)
      << table;
  Session ses;
  ses.sparse_mm = studies;
  const std::string json = to_json(ses);
  EXPECT_NE(json.find("\"file\": \"f16_gaussian_64x64x8192.sparse_mm\""), std::string::npos);
  EXPECT_NE(json.find("\"bit_exact\": true, \"exact_slices\": [8], \"best_slices\": 8, \"matches\": 25, \"outputs\": 25"),
            std::string::npos)
      << json;
  const std::string md = to_markdown(ses);
  EXPECT_NE(md.find("| f16_gaussian_64x64x8192.sparse_mm | torch_2.11.0+cu130_cusparselt_800 | float16 -> float16 | 5 x 5 x 8192 | "
                    "8 (of 1..64) | 8: 25 / 25 |"),
            std::string::npos)
      << md;
}

TEST(SparseMmRuns, OneChangedOutputBitIsAMismatch) {
  // The f16 run that only S = 8 reproduces, with the last bit of one D code (row 1) flipped: no S
  // reproduces it, and the best, S = 8, misses exactly that output.
  SparseMmRun run = read_sparse_mm_file(samples_dir() / "f16_gaussian_64x64x8192.sparse_mm");
  ASSERT_EQ(run.slices, 8);
  run.d[5] ^= 1u;
  const SparseMmStudy st = fit_sparse_mm(run);
  EXPECT_FALSE(st.bit_exact());
  EXPECT_EQ(st.best, 8);
  EXPECT_EQ(st.matches + 1, st.outputs);
  EXPECT_NE(sparse_mm_table({st}).find("MISMATCH: best S = 8, 24/25 outputs match"), std::string::npos) << sparse_mm_table({st});
}

TEST(SparseMmRuns, MaxSlicesBoundsTheSearch) {
  // The f16 run that only S = 8 reproduces, fitted with S = 1 alone: its header's S = 8 is tried
  // beyond the bound and fits; S = 1 does not. A bound below 1 is refused.
  const SparseMmRun run = read_sparse_mm_file(samples_dir() / "f16_gaussian_64x64x8192.sparse_mm");
  ASSERT_EQ(run.slices, 8);
  const SparseMmStudy st = fit_sparse_mm(run, 1);
  EXPECT_EQ(st.tried, 1);
  EXPECT_EQ(st.exact, std::vector<int>{8});
  EXPECT_TRUE(st.header_slices_fit());
  bs::test::expect_throw_with([&] { (void)fit_sparse_mm(run, 0); }, "fit_sparse_mm: max_slices must be >= 1, got 0");
}

TEST(SparseMmRuns, SmallRunsAndWhatHasNoModel) {
  const Scratch s("small");
  // D = 32 at any S (one tile of 64: S = 1 only); a wrong D is a mismatch.
  SparseMmStudy st = fit_sparse_mm(read_sparse_mm_file(s.write("ok.sparse_mm", kF16Header, f16_body(0x5000))));
  EXPECT_EQ(st.exact, std::vector<int>{1});
  EXPECT_EQ(st.tiles, 1);
  st = fit_sparse_mm(read_sparse_mm_file(s.write("wrong.sparse_mm", kF16Header, f16_body(0x4FFF))));
  EXPECT_FALSE(st.bit_exact());
  EXPECT_EQ(st.matches, 0u);
  // A refused call: read with its message, not fitted.
  const SparseMmRun refused = read_sparse_mm_file(
      s.write("refused.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cutlass a=f16 b=f16 m=64 n=64 k=64 "
                                   "error=Supported_only_on_GPUs_with_compute_capability_8.x"));
  EXPECT_EQ(refused.error, "Supported only on GPUs with compute capability 8.x");
  st = fit_sparse_mm(refused);
  EXPECT_EQ(st.tried, 0);
  EXPECT_NE(sparse_mm_table({st}).find("not run: Supported only"), std::string::npos);
  // f32 input whose sparse operand rounds past the largest tf32 value: the kernel reads 0x7F7FFFFF
  // as NaN (measured), so D = NaN fits and D = +Inf does not.
  std::string f32_body(static_cast<std::size_t>(64 + 64 + 1) * 4, '\0');
  f32_body[0] = '\xFF', f32_body[1] = '\xFF', f32_body[2] = '\x7F', f32_body[3] = '\x7F';  // A(0, 0) = 0x7F7FFFFF
  for (std::size_t at = 64 * 4; at < 128 * 4; at += 4) f32_body[at + 2] = '\x80', f32_body[at + 3] = '\x3F';  // B = 1
  const std::size_t d_at = 128 * 4;
  f32_body[d_at] = '\xFF', f32_body[d_at + 1] = '\xFF', f32_body[d_at + 2] = '\xFF', f32_body[d_at + 3] = '\x7F';
  constexpr const char* kF32Header = "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f32 b=f32 m=1 n=1 k=64 out=f32";
  st = fit_sparse_mm(read_sparse_mm_file(s.write("tf32.sparse_mm", kF32Header, f32_body)));
  EXPECT_TRUE(st.why_not.empty()) << st.why_not;
  EXPECT_EQ(st.exact, (std::vector<int>{1, 2}));
  f32_body[d_at] = '\0', f32_body[d_at + 1] = '\0', f32_body[d_at + 2] = '\x80';  // +Inf
  st = fit_sparse_mm(read_sparse_mm_file(s.write("tf32_inf.sparse_mm", kF32Header, f32_body)));
  EXPECT_FALSE(st.bit_exact());
  // Another output format than the table has.
  std::string body16 = f16_body(0x5000);
  body16.resize(body16.size() - 2);
  body16 += std::string(4, '\0');
  st = fit_sparse_mm(read_sparse_mm_file(s.write(
      "f16f32.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f16 b=f16 m=1 n=1 k=64 out=f32", body16)));
  EXPECT_NE(st.why_not.find("no measured kernel for float16 -> float32"), std::string::npos) << st.why_not;
  // K beyond the kernel's tile; A with three nonzero values in a group.
  std::string body = f16_body(0x5000);
  st = fit_sparse_mm(read_sparse_mm_file(s.write(
      "k32.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f16 b=f16 m=1 n=1 k=32 out=f16",
      body.substr(0, 64) + body.substr(128, 64) + body.substr(256))));
  EXPECT_NE(st.why_not.find("K = 32 is not a multiple of the kernel's K tile of 64"), std::string::npos) << st.why_not;
  body[2] = 0x00, body[3] = 0x3C;  // position 1 of group 0 becomes 1.0 as well
  st = fit_sparse_mm(read_sparse_mm_file(s.write("dense.sparse_mm", kF16Header, body)));
  EXPECT_NE(st.why_not.find("group 0 (K 0..3) holds 3 nonzero values: A is not 2:4 sparse (cuSPARSELt's result for such "
                            "a group follows no rule: prune A first)"),
            std::string::npos)
      << st.why_not;
}

TEST(SparseMmRuns, MalformedFilesAreRefusedNamingTheRule) {
  const Scratch s("bad");
  const std::string body = f16_body(0x5000);
  expect_refused(s.write("magic.sparse_mm", "blockscale-scaled-mm 1 a=f16", body), "must start with 'blockscale-sparse-mm 1'");
  expect_refused(s.write("kv.sparse_mm", std::string(kF16Header) + " stray", body), "header item 'stray' is not key=value");
  expect_refused(s.write("twice.sparse_mm", std::string(kF16Header) + " m=2", body), "the header gives 'm' twice");
  expect_refused(s.write("nokey.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f16 b=f16 m=1 n=1 k=64", body),
                 "the header lacks 'out'");
  expect_refused(s.write("mix.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f16 b=bf16 m=1 n=1 k=64 out=f16", body),
                 "torch._cslt_sparse_mm takes one format for A and B");
  expect_refused(s.write("fmt.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f8 b=f8 m=1 n=1 k=64 out=f16", body),
                 "a=f8 is not a format of the probe");
  expect_refused(s.write("zero.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f16 b=f16 m=0 n=1 k=64 out=f16", body),
                 "m=0 must be a whole number from 1 to 1048576");
  expect_refused(s.write("num.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cusparselt a=f16 b=f16 m=1 n=1x k=64 out=f16", body),
                 "n=1x must be a whole number");
  expect_refused(s.write("short.sparse_mm", kF16Header, body.substr(0, body.size() - 1)), "need 258 (truncated)");
  expect_refused(s.write("long.sparse_mm", kF16Header, body + "x"), "need 258 (trailing bytes)");
  expect_refused(s.write("same.sparse_mm", std::string(kF16Header) + " repeats_identical=2", body), "repeats_identical=2 must be 0 or 1");
  expect_refused(s.write("err.sparse_mm", "blockscale-sparse-mm 1 library=torch backend=cutlass a=f16 b=f16 m=1 n=1 k=64 error=x", body),
                 "a refused call (error=) carries no arrays");
  {
    std::ofstream f(s.dir / "empty.sparse_mm");
  }
  expect_refused(s.dir / "empty.sparse_mm", "no header line");
  // A file that is no run is refused after its first 64 KiB, not read whole (/dev/zero would never end).
  {
    std::ofstream f(s.dir / "binary.sparse_mm", std::ios::binary);
    f << std::string(70000, '\0');
  }
  expect_refused(s.dir / "binary.sparse_mm", "no header line in the first 65536 bytes (not a 'blockscale-sparse-mm' file)");
  std::filesystem::create_directory(s.dir / "dir.sparse_mm");
  expect_refused(s.dir / "dir.sparse_mm", "a directory, not a file");
  EXPECT_THROW((void)read_sparse_mm_runs(s.dir / "absent"), std::filesystem::filesystem_error);
  EXPECT_THROW((void)fit_sparse_mm(SparseMmRun{}, 0), std::invalid_argument);
}
