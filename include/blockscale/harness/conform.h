// SPDX-License-Identifier: Apache-2.0
// The conformance run: for every selected target, generate cases, run them on the device and on
// the emulator model, and compare the output bits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "blockscale/harness/cases.h"
#include "blockscale/harness/compare.h"
#include "blockscale/harness/device.h"

namespace blockscale::harness {

struct Progress {
  std::size_t target_index = 0, targets = 0;  // 0-based index among the selected, runnable targets
  std::string target;
  DataKind data = DataKind::random;
  std::uint64_t outputs_done = 0, outputs_planned = 0;
  std::uint64_t mismatches = 0;  // so far, this target
  double seconds = 0;            // since the target started
};

struct ConformOptions {
  std::string pattern;  // ECMAScript regular expression searched in target names; empty: all
  std::vector<DataKind> data = {DataKind::random, DataKind::realistic, DataKind::probes};
  std::uint64_t seed = 1;
  // Cases (tiles / GEMM problems) per target and data set; unset: enough for `outputs`.
  std::optional<std::uint64_t> cases;
  // Outputs per target, over all data sets, when `cases` is unset: the probes data set runs its
  // probe tiles (a few dozen GEMMs) once and the rest is split between random and realistic.
  std::uint64_t outputs = std::uint64_t(1) << 20;
  GemmSizes gemm_sizes = GemmSizes::full;
  std::size_t max_examples = 16;               // mismatch examples kept per target and data set
  std::uint64_t chunk_outputs = std::uint64_t(1) << 22;  // outputs per device call
  std::function<void(const Progress&)> progress;        // called after every chunk
  // Candidate table rows (--model-override): (regular expression over instruction names,
  // "key=value,..." as apply_param_override takes), applied in order to every match.
  std::vector<std::pair<std::string, std::string>> model_overrides;
};

// Sets model_params / model_override of the instruction targets the overrides select. Throws
// std::invalid_argument for a bad expression or parameter.
void apply_model_overrides(std::vector<Target>& targets,
                           const std::vector<std::pair<std::string, std::string>>& overrides);
// Parses "REGEX@key=value,...[;REGEX@key=value,...]".
std::vector<std::pair<std::string, std::string>> parse_model_overrides(const std::string& text);

struct DataResult {
  DataKind data = DataKind::random;
  Stats stats;
  double device_seconds = 0, model_seconds = 0;
};

struct TargetResult {
  Target target;
  OutputFormat output = OutputFormat::f32;  // bf16 GEMM outputs are counted in the f32 row too
  std::vector<DataResult> data;
  Stats total;
  std::string error;  // the device or model failed (CUDA error, invalid input): counted as failing
  bool skipped() const { return !target.skip_reason.empty(); }
  bool failed() const { return !error.empty() || total.mismatches > 0; }
};

struct ConformReport {
  DeviceDescription device;
  std::string date;  // UTC, ISO 8601
  std::uint64_t seed = 1;
  std::string pattern;
  std::vector<DataKind> data;
  std::vector<TargetResult> targets;  // selected targets, skipped ones included
  double seconds = 0;
  bool failed() const;
  std::uint64_t outputs() const;
  std::uint64_t mismatches() const;
};

// Runs the selected targets. Throws std::invalid_argument for a bad pattern or options.
ConformReport run_conformance(Device& device, const ConformOptions& options);

// The targets of `device` whose names the pattern selects (all when empty).
std::vector<Target> select_targets(const Device& device, const std::string& pattern);

// The current UTC time as "2026-11-21T10:00:00Z".
std::string utc_now();

}  // namespace blockscale::harness
