// SPDX-License-Identifier: Apache-2.0
// External fp8 GEMMs on Hopper (cuBLASLt, torch._scaled_mm) diffed against emulator schedules.
//
// A library GEMM is run on known e4m3 inputs; its output is then compared with every candidate
// schedule the emulator can express: one wgmma k32 chain over the whole K (what FAST_ACCUM's
// "no periodic promotion" means), Hopper promotion every P instructions into fp32 (P = 1 .. 32),
// and, for the block-scaled modes, the three orders of the promotion FMA; tensor-wise and row-wise
// scales are applied in an epilogue (two orders of the two multiplications). When the best of
// these is not bit-exact, split-K variants follow (emulator with_split_k) of the candidates that
// promote every 128 elements or never and of the two best: S slices (S = 2, 3, 4, 5, 6, 8 and the
// count the library reported) cut at every accumulation unit or only at multiples of a 128, 256,
// 512 or 1024-element K tile, each accumulated from zero, then reduced in fp32 sequentially or
// pairwise. The best candidate is reported with its match count: bit for bit means every output
// agrees. Beside the fits, the committed library row of the call (emulator/library_fp8.h) is run
// on the same operands (TableFit), so that a study also checks the table.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "blockscale/formats/format.h"

namespace blockscale::harness {

enum class ExternalScaling : std::uint8_t {
  tensor,         // one fp32 scale per operand (cuBLASLt SCALAR_32F)
  rowwise,        // fp32 per row of A and per column of B (cuBLASLt OUTER_VEC_32F)
  block_1x128,    // fp32 per 1 x 128 block of A and of B (VEC128_32F x VEC128_32F)
  block_128x128,  // A 1 x 128, B 128 x 128 (VEC128_32F x BLK128x128_32F): DeepSeek-V3 style
};
std::string to_string(ExternalScaling s);

// cuBLASLt's epilogue of a call that used one (emulator::CublasLtEpilogue): D = d_scale (alpha
// (A sa) (B sb) + beta C + bias), amax_d. Such a run is checked against cublaslt_fp8_gemm only
// (the schedule fits model the GEMM without an epilogue).
struct ExternalEpilogue {
  float alpha = 1.0f, beta = 0.0f, d_scale = 1.0f;
  std::vector<std::uint32_t> c;  // M x N codes of c_format, row-major (read when beta != 0)
  Format c_format = Format::float32;
  std::vector<std::uint32_t> bias;  // M codes of bias_format, one per row of D; empty: no bias
  Format bias_format = Format::bfloat16;
  Format d_format = Format::float32;  // the codes ExternalRun::d holds
  std::optional<float> amax_d;        // what the library wrote to AMAX_D (an e4m3 D)
  bool relu = false;                  // CUBLASLT_EPILOGUE_RELU_BIAS instead of BIAS
};

// One library GEMM D = (A sa) (B sb), A: M x K, B given as N x K, both e4m3 codes (K-major, "TN").
struct ExternalRun {
  std::string library;  // "cuBLASLt 130100", "torch 2.11.0+cu130 _scaled_mm"
  std::string config;   // human description of the call
  std::string algo;     // what the library chose (cuBLASLt: algo id, tile, split-K), when known
  int split_k = 0;      // the split-K count the library reported (0: not known)
  std::string error;    // non-empty: the call was refused or failed
  ExternalScaling scaling = ExternalScaling::tensor;
  bool fast_accum = false;
  int m = 0, n = 0, k = 0;
  std::vector<std::uint8_t> a, b;
  // Scales, logical and expanded: sa[i * kb + q] for row i, K-block q of 128 (tensor: one value,
  // rowwise: M values, block: M x kb); sb[j * kb + q] likewise for column j.
  std::vector<float> sa, sb;
  bool bf16_output = false;
  std::vector<std::uint32_t> d;  // M x N row-major: f32 bits, or bf16 codes (epilogue: d_format's codes)
  std::optional<ExternalEpilogue> epilogue;
};

struct ScheduleFit {
  std::string schedule;  // "promotion P=4 (FADD), epilogue (sa*sb)*acc"
  std::uint64_t matches = 0, outputs = 0;
  std::uint64_t worst_ulps = 0;      // over the mismatches (NaN mismatches aside)
  std::uint64_t nan_mismatches = 0;  // one side NaN, the other not: no ulp distance
};

// The committed library row of this call (emulator/library_fp8.h), run on the same operands with
// the split-K count that matches most outputs: the first of the library's reported count, 1, 2,
// ..., 8 (rows that never split: 1 only).
struct TableFit {
  std::string row;  // "cublaslt block_1x128 x block_128x128"; empty: no row takes this call
  std::string why_not;  // when `row` is empty: why
  int split_k = 1;
  std::uint64_t matches = 0, outputs = 0;
  std::optional<bool> amax_d_equal;  // an epilogue run with AMAX_D: whether cublaslt_fp8_gemm's equals it
  bool bit_exact() const { return !row.empty() && matches == outputs && amax_d_equal.value_or(true); }
};

struct ExternalStudy {
  ExternalRun run;  // inputs and outputs cleared after fitting (counts kept)
  std::vector<ScheduleFit> fits;  // best first
  TableFit table;
  bool bit_exact() const { return !fits.empty() && fits.front().matches == fits.front().outputs; }
};

// Compares the run with the candidate schedules and with its library row (OpenMP inside the
// emulator).
ExternalStudy fit_schedules(ExternalRun run);

// cuBLASLt fp8 GEMMs on device 0: per-tensor scaling with FAST_ACCUM off and on (unit and
// non-unit scales), VEC128_32F x VEC128_32F and VEC128_32F x BLK128x128_32F block scaling, on a
// square and a skinny long-K shape; then calls with cuBLASLt's epilogue (alpha, beta C, a bias, f32,
// bf16, f16 and e4m3 D with D_SCALE and AMAX_D), C and the bias partly cancelling the library model's
// D so that the epilogue's roundings show. Empty with `why_not` set when this build or machine cannot.
std::vector<ExternalRun> run_cublaslt(std::uint64_t seed, std::string& why_not);

// The files of `dir` whose name ends in `extension` (".scaled_mm"), in name order.
std::vector<std::filesystem::path> files_with_extension(const std::filesystem::path& dir, const std::string& extension);

// One run written by scripts/conform_scaled_mm.py (torch._scaled_mm on the device machine): the
// header line "blockscale-scaled-mm 1 library=... config=... m= n= k= scaling= fast_accum=0|1
// out=f32|bf16 sa_count= sb_count=" (or library, config and error= for a refused call, with nothing
// after it), then A (M x K e4m3), B^T (N x K e4m3), the logical f32 scales and D (f32 bits or bf16
// codes), little-endian. Throws std::invalid_argument naming the file and the rule broken: a
// missing or repeated key, sizes outside 1 .. 2^20, an unknown scaling or output, scale counts the
// scaling does not have, a file shorter or longer than its header's sizes.
ExternalRun read_scaled_mm_file(const std::filesystem::path& path);

// Every *.scaled_mm file in `dir`, in name order.
std::vector<ExternalRun> read_scaled_mm_runs(const std::filesystem::path& dir);

}  // namespace blockscale::harness
