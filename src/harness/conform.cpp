// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/conform.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <exception>
#include <regex>
#include <stdexcept>

namespace blockscale::harness {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// GEMM problems of the probes data set when no --cases is given: every structured variant on
// every shape at least once.
constexpr std::uint64_t kGemmProbeProblems = 12;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Outputs left for each data set but the probes (random, realistic, tiny), after the probes.
std::uint64_t share(const ConformOptions& o, std::uint64_t probe_outputs) {
  std::uint64_t bulk = 0;
  for (DataKind d : o.data) bulk += d != DataKind::probes;
  if (bulk == 0) return 0;
  const std::uint64_t rest = o.outputs > probe_outputs ? o.outputs - probe_outputs : 0;
  return ceil_div(rest, bulk);
}

bool has(const std::vector<DataKind>& v, DataKind d) { return std::find(v.begin(), v.end(), d) != v.end(); }

void run_instruction(Device& device, const InstructionTarget& t, const ConformOptions& o, Progress& prog,
                     TargetResult& result, Clock::time_point t0) {
  const std::uint64_t per_tile = outputs_per_tile(t);
  const std::uint64_t probe_tile_count = probe_tiles(t);
  const std::uint64_t probe_out = has(o.data, DataKind::probes) ? probe_tile_count * per_tile : 0;
  const std::uint64_t bulk = share(o, probe_out);
  const OutputFormat f = output_format(t);
  result.output = f;
  for (DataKind d : o.data) {
    DataResult dr;
    dr.data = d;
    const std::uint64_t tiles =
        o.cases ? *o.cases : (d == DataKind::probes ? probe_tile_count : ceil_div(bulk, per_tile));
    const std::uint64_t chunk = std::max<std::uint64_t>(1, o.chunk_outputs / per_tile);
    prog.data = d;
    prog.outputs_done = 0;
    prog.outputs_planned = tiles * per_tile;
    for (std::uint64_t first = 0; first < tiles; first += chunk) {
      const std::uint64_t count = std::min(chunk, tiles - first);
      const TileBatch batch = make_tiles(t, d, o.seed, first, count);
      const auto td = Clock::now();
      const std::vector<std::uint32_t> got = device.run(t, batch);
      dr.device_seconds += since(td);
      const auto tm = Clock::now();
      const std::vector<std::uint32_t> want = emulate_tiles(t, batch);
      dr.model_seconds += since(tm);
      compare_outputs(f, got, want, first, static_cast<std::size_t>(t.m), static_cast<std::size_t>(t.n), dr.stats,
                      o.max_examples);
      prog.outputs_done += count * per_tile;
      prog.mismatches = result.total.mismatches + dr.stats.mismatches;
      prog.seconds = since(t0);
      if (o.progress) o.progress(prog);
    }
    result.total.merge(dr.stats, o.max_examples * o.data.size());
    result.data.push_back(std::move(dr));
  }
}

void run_gemm(Device& device, const GemmTarget& t, const ConformOptions& o, Progress& prog, TargetResult& result,
              Clock::time_point t0) {
  std::uint64_t probe_out = 0;
  if (has(o.data, DataKind::probes)) {
    for (std::uint64_t i = 0; i < (o.cases ? *o.cases : kGemmProbeProblems); ++i) {
      probe_out += gemm_problem_outputs(i, o.gemm_sizes);
    }
  }
  const std::uint64_t bulk = share(o, probe_out);
  for (DataKind d : o.data) {
    DataResult dr;
    dr.data = d;
    std::uint64_t problems = 0;
    if (o.cases) {
      problems = *o.cases;
    } else if (d == DataKind::probes) {
      problems = kGemmProbeProblems;
    } else {
      for (std::uint64_t sum = 0; sum < bulk; ++problems) sum += gemm_problem_outputs(problems, o.gemm_sizes);
    }
    prog.data = d;
    prog.outputs_done = 0;
    prog.outputs_planned = 0;
    for (std::uint64_t i = 0; i < problems; ++i) prog.outputs_planned += gemm_problem_outputs(i, o.gemm_sizes);
    for (std::uint64_t i = 0; i < problems; ++i) {
      const GemmProblem p = make_gemm_problem(t, d, o.seed, i, o.gemm_sizes);
      const auto td = Clock::now();
      const std::vector<std::uint32_t> got = device.run(t, p);
      dr.device_seconds += since(td);
      const auto tm = Clock::now();
      const std::vector<std::uint32_t> want = emulate_gemm(t, p);
      dr.model_seconds += since(tm);
      compare_outputs(p.bf16_output ? OutputFormat::bf16 : OutputFormat::f32, got, want, i,
                      static_cast<std::size_t>(p.m), static_cast<std::size_t>(p.n), dr.stats, o.max_examples);
      prog.outputs_done += std::uint64_t(p.m) * std::uint64_t(p.n);
      prog.mismatches = result.total.mismatches + dr.stats.mismatches;
      prog.seconds = since(t0);
      if (o.progress) o.progress(prog);
    }
    result.total.merge(dr.stats, o.max_examples * o.data.size());
    result.data.push_back(std::move(dr));
  }
}

}  // namespace

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<Target> select_targets(const Device& device, const std::string& pattern) {
  std::optional<std::regex> re;
  if (!pattern.empty()) {
    try {
      re.emplace(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("--kernels '" + pattern + "' is not a valid regular expression: " + e.what());
    }
  }
  std::vector<Target> out;
  for (Target& t : device.targets()) {
    if (!re || std::regex_search(t.name(), *re)) out.push_back(std::move(t));
  }
  return out;
}

void apply_model_overrides(std::vector<Target>& targets,
                           const std::vector<std::pair<std::string, std::string>>& overrides) {
  for (const auto& [pattern, spec] : overrides) {
    std::regex re;
    try {
      re = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("--model-override '" + pattern + "' is not a valid regular expression: " + e.what());
    }
    for (Target& t : targets) {
      if (t.kind != TargetKind::instruction || !std::regex_search(t.instruction.name, re)) continue;
      InstructionTarget& it = t.instruction;
      if (it.f64) {
        throw std::invalid_argument("--model-override '" + pattern + "' matches '" + it.name +
                                    "': an f64 fma chain has no FDPA parameters to override");
      }
      emulator::FdpaParams p = it.model_params.value_or(it.model.params());
      apply_param_override(p, spec);
      it.model_params = p;
      it.model_override += (it.model_override.empty() ? "" : ",") + spec;
    }
  }
}

std::vector<std::pair<std::string, std::string>> parse_model_overrides(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t semi = std::min(text.find(';', start), text.size());
    const std::string part = text.substr(start, semi - start);
    const std::size_t at = part.rfind('@');
    if (at == std::string::npos || at == 0 || at + 1 == part.size()) {
      throw std::invalid_argument("--model-override '" + part + "' is not REGEX@key=value[,key=value...]");
    }
    out.emplace_back(part.substr(0, at), part.substr(at + 1));
    start = semi + 1;
  }
  return out;
}

bool ConformReport::failed() const {
  return std::any_of(targets.begin(), targets.end(), [](const TargetResult& r) { return r.failed(); });
}

std::uint64_t ConformReport::outputs() const {
  std::uint64_t n = 0;
  for (const TargetResult& r : targets) n += r.total.outputs;
  return n;
}

std::uint64_t ConformReport::mismatches() const {
  std::uint64_t n = 0;
  for (const TargetResult& r : targets) n += r.total.mismatches;
  return n;
}

ConformReport run_conformance(Device& device, const ConformOptions& o) {
  if (o.data.empty()) throw std::invalid_argument("no data set selected");
  if (o.cases && *o.cases == 0) throw std::invalid_argument("--cases must be at least 1");
  ConformReport report;
  report.device = device.describe();
  report.date = utc_now();
  report.seed = o.seed;
  report.pattern = o.pattern;
  report.data = o.data;
  const auto start = Clock::now();
  std::vector<Target> targets = select_targets(device, o.pattern);
  apply_model_overrides(targets, o.model_overrides);
  const std::size_t runnable = static_cast<std::size_t>(
      std::count_if(targets.begin(), targets.end(), [](const Target& t) { return t.skip_reason.empty(); }));
  Progress prog;
  prog.targets = runnable;
  for (const Target& t : targets) {
    TargetResult r;
    r.target = t;
    if (t.kind == TargetKind::gemm) r.output = OutputFormat::f32;
    if (t.skip_reason.empty()) {
      prog.target = t.name();
      const auto t0 = Clock::now();
      try {
        if (t.kind == TargetKind::instruction) {
          run_instruction(device, t.instruction, o, prog, r, t0);
        } else {
          run_gemm(device, t.gemm, o, prog, r, t0);
        }
      } catch (const std::exception& e) {
        r.error = e.what();
      }
      ++prog.target_index;
    }
    report.targets.push_back(std::move(r));
  }
  report.seconds = since(start);
  return report;
}

}  // namespace blockscale::harness
