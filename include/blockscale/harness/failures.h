// SPDX-License-Identifier: Apache-2.0
// Failure files: the kept mismatch examples of a conformance run, written as golden-vector files
// (golden/FORMAT.md) whose expected outputs are the DEVICE's bits. `blockscale golden verify` on any
// machine recomputes every case with the emulator and reports exactly the outputs on which the
// device and the model disagree; a file whose device bits equal the model verifies clean.
//
// Every output is an independent dot product (instructions) or row times column (GEMMs), so a case
// holds one output's inputs only:
//   instruction targets  @kind instruction, one @op: the emulator instruction; a case is the
//                        output's A row, B column, C element and (block-scaled) scales -> d; one
//                        file per target and data set;
//   GEMM targets         @kind gemm, M = N = 1: the output's A row and B column in the form the
//                        golden gemm operation computes exactly what emulate_gemm computes
//                        (gemm_failure_operation); one file per target, data set, K and output
//                        format (f32, or bf16 through the operation's out=bf16).
// @data is `hardware` for a GPU and `self-test` for the emulator self-test device; @source lines
// name the device (name, compute capability, driver, CUDA), the date, the target, the data set and
// the seed; a note per case gives its conformance case index, output position and the emulator
// model's bits, so that a reader sees both without running anything.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "blockscale/golden/file.h"
#include "blockscale/golden/operation.h"
#include "blockscale/harness/conform.h"

namespace blockscale::harness {

struct FailureFile {
  std::string name;    // file name: <target>.<data set>[.k<K>.<f32|bf16>].txt
  std::string target;  // the conformance target's name
  DataKind data = DataKind::random;
  golden::GoldenFile golden;       // header (with the notes) and cases; expected d = the device's bits
  std::vector<Mismatch> examples;  // case i of the file is examples[i]
};

// The failure files of every target of the report with mismatch examples, each example
// regenerated from (seed, target, data set, case index) with the options of the run.
std::vector<FailureFile> failure_files(const ConformReport& report, const ConformOptions& o);

// Writes failure_files() into `dir` (created if needed) as <name> and returns the paths written.
std::vector<std::filesystem::path> save_failures(const std::filesystem::path& dir,
                                                 const ConformReport& report, const ConformOptions& o);

// The golden gemm operation (named `name`, M = N = 1) that computes one output of a K = k problem
// of GEMM target `t` as emulate_gemm does:
//   hopper_promotion  the promotion schedule over K = 32 x (k / block) wgmma operand codes with
//                     fp32 scales (promotion_elements, promotion_scales);
//   tcgen05_chain     the tcgen05 chain over the element and scale codes as they are;
// with out=bf16 for bf16 output. std::invalid_argument for what emulate_gemm refuses too.
std::unique_ptr<golden::Operation> gemm_failure_operation(const GemmTarget& t, int k, bool bf16_output,
                                                          std::string name);
// The input words of output (row, col) of problem `p` for that operation: a, b, c (+0 where the
// problem has no C, which is what emulator::gemm takes an absent C to be), sa, sb.
std::vector<std::uint64_t> gemm_failure_inputs(const GemmTarget& t, const GemmProblem& p, std::size_t row,
                                               std::size_t col);

}  // namespace blockscale::harness
