// SPDX-License-Identifier: Apache-2.0
// emulator::recorded_split_k, the split counts of cuBLASLt's heuristic recorded on an H100 and an
// H200, against three records made apart from the table it reads:
// - the split counts read from torch._scaled_mm's output bits on each GPU (scripts/probe_split_k.py,
//   docs/conformance/*-split-k-probes.json): slices found in the outputs, not asked of cuBLASLt;
// - the split counts with which the emulator reproduced torch._scaled_mm bit for bit on each GPU
//   (docs/conformance/*-fp8-scaled-vs-torch.json);
// - the per-recipe counts of the grid queries that the table was generated from, as summarised on
//   the device when they were made (docs/conformance/*-split-k-heuristic.json): every grid shape
//   of every table is looked up, so a table shifted by one shape or mapped to the wrong call fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/emulator/library_fp8.h"
#include "expect_throw.h"
#include "golden/helpers.h"  // tests/golden: env, whole-file reads
#include "json.h"            // src/golden: the project's strict JSON reader

namespace blockscale::emulator {
namespace {

using blockscale::test::expect_throw_with;

using G = Fp8Granularity;
using golden::detail::Json;

Json record(const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::path(golden::test::env("BLOCKSCALE_SOURCE_DIR")) / "docs" / "conformance" / name;
  if (!std::filesystem::is_regular_file(path)) throw std::runtime_error("cannot read " + path.string());
  return golden::detail::parse_json(golden::test::read(path));
}

std::int64_t integer(const Json& j) { return std::stoll(j.text); }

struct Scaling {
  bool fast_accum;
  G a, b;
};

// scripts/cublaslt_split_k.py's recipe names (also the probe runs' names, where tensor_fast0 and
// tensor_fast1 are tensor-wise scaling without and with fast accumulation).
Scaling scaling(const std::string& recipe) {
  if (recipe == "tensor" || recipe == "tensor_fast0") return {false, G::tensor, G::tensor};
  if (recipe == "tensor_fast" || recipe == "tensor_fast1") return {true, G::tensor, G::tensor};
  if (recipe == "rowwise") return {false, G::row, G::row};
  if (recipe == "block_1x128") return {false, G::block_1x128, G::block_1x128};
  if (recipe == "block_128x128") return {false, G::block_1x128, G::block_128x128};
  throw std::invalid_argument("unknown recipe " + recipe);
}

Format element(const std::string& name) { return name == "e5m2" ? Format::float8_e5m2 : Format::float8_e4m3fn; }

int lookup(Fp8Library library, const std::string& recipe, const std::string& elements, std::int64_t M, std::int64_t N,
           std::int64_t K, const SplitKLookup& where) {
  const Scaling s = scaling(recipe);
  const auto x = elements.find('x');
  return recorded_split_k(library, s.fast_accum, s.a, s.b, element(elements.substr(0, x)),
                          element(elements.substr(x + 1)), M, N, K, where);
}

TEST(RecordedSplitK, AgreesWithTheSplitsReadFromTorchOutputs) {
  // Run names "<recipe>_<M>x<N>x<K>_probe_block"; slice_blocks lists the slices the outputs showed.
  const std::regex name(R"((\w+?)_(\d+)x(\d+)x(\d+)_probe_block)");
  for (const std::string gpu : {"h100", "h200"}) {
    int checked = 0, split = 0;
    const Json probes = record(gpu + "-split-k-probes.json");
    for (const Json& run : probes.find("runs")->items) {
      std::smatch m;
      const std::string run_name = run.find("run")->text;
      if (!std::regex_match(run_name, m, name)) continue;
      const int slices = static_cast<int>(run.find("slice_blocks")->items.size());
      const int S = lookup(Fp8Library::torch_scaled_mm, m[1], "e4m3xe4m3", std::stoll(m[2]), std::stoll(m[3]),
                           std::stoll(m[4]), {gpu, false, 64});
      EXPECT_EQ(S, slices) << gpu << " " << run_name;
      ++checked;
      split += slices > 1;
    }
    EXPECT_EQ(checked, 45) << gpu;
    EXPECT_GE(split, 25) << gpu;
  }
}

TEST(RecordedSplitK, AgreesWithTheSplitCountsThatReproducedTorch) {
  // Cases "deepgemm 1x128 x 128x128 M=64 N=256 K=65536", "torchao tensorwise e4m3 x e5m2 M=...",
  // "torchao tensorwise fast_accum=1 M=...", "torchao rowwise M=..."; every one bit-exact, with f32
  // D (the first record) or f32 and bf16 D at shapes where the two differ (the second, whose
  // blockscale runs took S from this table and were checked against a live heuristic query).
  const std::regex shape(R"(M=(\d+) N=(\d+) K=(\d+))");
  for (const std::string gpu : {"h100", "h200"}) {
    for (const auto& [file, expected] : {std::pair<std::string, int>{"-fp8-scaled-vs-torch.json", 56},
                                         std::pair<std::string, int>{"-recorded-split-k-vs-torch.json", 112}}) {
      int checked = 0, split = 0, bf16 = 0;
      const Json cases = record(gpu + file);
      for (const Json& c : cases.find("cases")->items) {
        const std::string name = c.find("case")->text, output = c.find("output")->text;
        ASSERT_EQ(c.find("outputs")->text, c.find("bit_exact")->text) << name;
        ASSERT_TRUE(output == "torch.float32" || output == "torch.bfloat16") << name;
        std::smatch m;
        ASSERT_TRUE(std::regex_search(name, m, shape)) << name;
        const std::string recipe = name.find("1x128 x 128x128") != std::string::npos ? "block_128x128"
                                   : name.find("1x128 x 1x128") != std::string::npos ? "block_1x128"
                                   : name.find("rowwise") != std::string::npos       ? "rowwise"
                                   : name.find("fast_accum=1") != std::string::npos  ? "tensor_fast"
                                                                                     : "tensor";
        const std::string elements = name.find("e4m3 x e5m2") != std::string::npos ? "e4m3xe5m2" : "e4m3xe4m3";
        const int S = lookup(Fp8Library::torch_scaled_mm, recipe, elements, std::stoll(m[1]), std::stoll(m[2]),
                             std::stoll(m[3]), {gpu, output == "torch.bfloat16", 64});
        EXPECT_EQ(S, integer(*c.find("split_k"))) << gpu << " " << name << " " << output;
        ++checked;
        split += S > 1;
        bf16 += output == "torch.bfloat16";
      }
      EXPECT_EQ(checked, expected) << gpu << file;
      EXPECT_GE(split, 10) << gpu << file;
      if (expected == 112) {
        EXPECT_EQ(bf16, 56) << gpu << file;
      }
    }
  }
}

TEST(RecordedSplitK, EveryGridShapeMatchesTheRecordedSummaries) {
  int blocks = 0;
  for (const std::string gpu : {"h100", "h200"}) {
    const Json heuristic = record(gpu + "-split-k-heuristic.json");
    const Json& grid = *heuristic.find("grid");
    std::vector<std::int64_t> ms, ns, ks;
    for (const Json& v : grid.find("m")->items) ms.push_back(integer(v));
    for (const Json& v : grid.find("n")->items) ns.push_back(integer(v));
    for (const Json& v : grid.find("k")->items) ks.push_back(integer(v));
    for (const Json& block : grid.find("queries")->values) {
      const std::string library = block.find("library")->text, elements = block.find("elements")->text;
      const int workspace = static_cast<int>(integer(*block.find("workspace_mib")));
      const Fp8Library call = library == "torch" ? Fp8Library::torch_scaled_mm : Fp8Library::cublaslt;
      for (const Json& row : block.find("summary")->items) {
        const std::string recipe = row.find("recipe")->text, d = row.find("out")->text;
        const SplitKLookup where{gpu, d == "bf16", workspace};
        std::int64_t shapes = 0, unsupported = 0, split = 0, largest = 0, largest_mn = 0, smallest_k = 0;
        for (const std::int64_t M : ms) {
          for (const std::int64_t N : ns) {
            for (const std::int64_t K : ks) {
              ++shapes;
              int S = 0;
              try {
                S = lookup(call, recipe, elements, M, N, K, where);
              } catch (const std::invalid_argument& e) {
                ASSERT_NE(std::string(e.what()).find("had no algorithm"), std::string::npos) << e.what();
                ++unsupported;
                continue;
              }
              largest = std::max<std::int64_t>(largest, S);
              if (S > 1) {
                ++split;
                largest_mn = std::max(largest_mn, M * N);
                smallest_k = smallest_k == 0 ? K : std::min(smallest_k, K);
              }
            }
          }
        }
        const std::string what = gpu + " " + library + " " + std::to_string(workspace) + " MiB " + elements + " " +
                                 recipe + " " + d;
        EXPECT_EQ(shapes, integer(*row.find("shapes"))) << what;
        EXPECT_EQ(unsupported, integer(*row.find("unsupported"))) << what;
        EXPECT_EQ(split, integer(*row.find("split"))) << what;
        EXPECT_EQ(largest, integer(*row.find("largest_split_k"))) << what;
        EXPECT_EQ(largest_mn, integer(*row.find("largest_m_times_n_split"))) << what;
        EXPECT_EQ(smallest_k, integer(*row.find("smallest_k_split"))) << what;
        ++blocks;
      }
    }
  }
  EXPECT_EQ(blocks, 2 * 9 * 10);  // two GPUs, three calls x three element pairs, ten recipes and D types
}

TEST(RecordedSplitK, TellsTheCallsApartWhereTheHeuristicDoes) {
  // Shapes where the recorded heuristic answers differ by GPU, D type, workspace and elements:
  // a lookup that ignored one of them would fail here.
  const auto torch = Fp8Library::torch_scaled_mm;
  EXPECT_EQ(lookup(torch, "block_128x128", "e4m3xe4m3", 16, 8, 40960, {"h100"}), 13);
  EXPECT_EQ(lookup(torch, "block_128x128", "e4m3xe4m3", 16, 8, 40960, {"h200"}), 15);
  EXPECT_EQ(lookup(torch, "tensor", "e4m3xe4m3", 1, 384, 49152, {"h100", false}), 19);
  EXPECT_EQ(lookup(torch, "tensor", "e4m3xe4m3", 1, 384, 49152, {"h100", true}), 16);
  EXPECT_EQ(lookup(Fp8Library::cublaslt, "tensor", "e4m3xe4m3", 8, 384, 65536, {"h100", false, 64}), 22);
  EXPECT_EQ(lookup(Fp8Library::cublaslt, "tensor", "e4m3xe4m3", 8, 384, 65536, {"h100", false, 1}), 21);
  EXPECT_EQ(lookup(torch, "tensor", "e4m3xe4m3", 1, 1536, 40960, {"h100"}), 5);
  EXPECT_EQ(lookup(torch, "tensor", "e4m3xe5m2", 1, 1536, 40960, {"h100"}), 11);
  // torch._scaled_mm's workspace is its own: the caller's cuBLASLt workspace does not enter.
  EXPECT_EQ(lookup(torch, "tensor", "e4m3xe4m3", 64, 256, 16384, {"h100", false, 1}),
            lookup(torch, "tensor", "e4m3xe4m3", 64, 256, 16384, {"h100", false, 64}));
  EXPECT_EQ(lookup(torch, "tensor", "e4m3xe4m3", 64, 256, 16384, {"h100", false, 32}), 6);
}

TEST(RecordedSplitK, RefusesWhatWasNotRecordedAndSaysWhy) {
  const auto torch = Fp8Library::torch_scaled_mm;
  const auto e4m3 = Format::float8_e4m3fn, e5m2 = Format::float8_e5m2;
  expect_throw_with([&] { recorded_split_k(torch, false, G::tensor, G::tensor, e4m3, e4m3, 64, 256, 16384, {"b200"}); },
                 "recorded on an H100 and an H200");
  expect_throw_with(
      [&] {
        recorded_split_k(Fp8Library::cublaslt, false, G::tensor, G::tensor, e4m3, e4m3, 64, 256, 16384,
                         {"h100", false, 32});
      },
      "1 or a 64 MiB workspace");
  expect_throw_with([&] { recorded_split_k(torch, false, G::tensor, G::tensor, e5m2, e5m2, 64, 256, 16384, {"h100"}); },
                 "not e5m2 x e5m2");
  expect_throw_with(
      [&] { recorded_split_k(torch, false, G::tensor, G::tensor, Format::float6_e2m3fn, e4m3, 64, 256, 16384, {"h100"}); },
      "e4m3 or e5m2");
  expect_throw_with(
      [&] { recorded_split_k(torch, true, G::block_1x128, G::block_1x128, e4m3, e4m3, 64, 256, 16384, {"h100"}); },
      "fast accumulation was recorded for tensor x tensor");
  expect_throw_with([&] { recorded_split_k(torch, false, G::row, G::tensor, e4m3, e4m3, 64, 256, 16384, {"h100"}); },
                 "the libraries take tensor x tensor");
  // Off the grid, the message names the query that asks the GPU.
  expect_throw_with([&] { recorded_split_k(torch, false, G::tensor, G::tensor, e4m3, e4m3, 64, 256, 16000, {"h100"}); },
                 "64x256x16000 is not on the recorded grid");
  expect_throw_with([&] { recorded_split_k(torch, false, G::tensor, G::tensor, e4m3, e4m3, 64, 200, 16384, {"h100"}); },
                 "scripts/cublaslt_split_k.py query 64x200x16384 asks");
  expect_throw_with(
      [&] {
        recorded_split_k(Fp8Library::cublaslt, false, G::tensor, G::tensor, e4m3, e4m3, 64, 200, 16384, {"h100"});
      },
      "query 64x200x16384 --library cublaslt asks");
  // 1 x 1 outputs: cuBLASLt offered no fp8 algorithm.
  expect_throw_with([&] { recorded_split_k(torch, false, G::tensor, G::tensor, e4m3, e4m3, 1, 1, 4096, {"h200"}); },
                 "had no algorithm for torch tensor e4m3xe4m3 f32 D at 1x1x4096 on the H200");
}

}  // namespace
}  // namespace blockscale::emulator
