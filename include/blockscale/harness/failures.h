// SPDX-License-Identifier: Apache-2.0
// Failure files: one mismatching output, written so that a CPU machine can reproduce the
// disagreement (`blockscale conform --replay FILE`). Every output is an independent dot product
// (instructions) or an independent row-times-column of the GEMM (GEMMs: a 1 x 1 x K problem with
// that row's and column's scales gives the same output bits under every schedule here), so a
// file holds just that output's inputs, the device's bits and the model's bits.
//
// Interim format, until the golden-vector library (issue 9) is in the tree; docs/conformance.md
// "Failure files" specifies it:
//   blockscale-conformance-failure 1
//   kind instruction|gemm
//   target <name>                    (instruction: emulator name; gemm: the kernel's name)
//   gemm <recipe> <a> <b> <scale> <block> <schedule> <P> <fma> <f32|bf16>   (gemm only)
//   device <description>
//   data <random|realistic|probes> seed <S> case <index> position <row> <col>
//   a <K hex words> / b <K hex words> / c <hex word or "none"> / sa <hex bytes> / sb <hex bytes>
//   device_d <hex> / model_d <hex>
// Lines starting with '#' are comments.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "blockscale/harness/conform.h"

namespace blockscale::harness {

struct FailureCase {
  TargetKind kind = TargetKind::instruction;
  std::string target;
  GemmTarget gemm;      // kind == gemm: recipe, formats, block, schedule (name is `target`)
  bool bf16_output = false;
  std::string device;
  DataKind data = DataKind::random;
  std::uint64_t seed = 0, case_index = 0;
  std::size_t row = 0, col = 0;
  std::vector<std::uint32_t> a, b;
  bool has_c = true;
  std::uint32_t c = 0;
  std::vector<std::uint8_t> sa, sb;
  std::uint32_t device_d = 0, model_d = 0;
};

// The failure cases of a target's mismatch examples, regenerated from (seed, data set, case).
std::vector<FailureCase> failure_cases(const TargetResult& r, const ConformOptions& o, const DeviceDescription& d);

std::string format_failure(const FailureCase& f);
// Parses a failure file; std::invalid_argument "<name>:<line>: <what>" for anything malformed.
FailureCase parse_failure(const std::string& text, const std::string& name);

// Writes every example of every failing target into `dir` (created if needed) and returns the
// paths written.
std::vector<std::filesystem::path> save_failures(const std::filesystem::path& dir, const ConformReport& report,
                                                 const ConformOptions& o);

// The model's output for the case, recomputed here.
std::uint32_t replay_model(const FailureCase& f);

}  // namespace blockscale::harness
