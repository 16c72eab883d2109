// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/failures.h"

#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

namespace blockscale::harness {

namespace {

std::string safe_name(const std::string& s) {
  // Letters, digits, '.' and '-' kept; every other run of characters becomes one '_'.
  std::string o;
  for (char ch : s) {
    const bool keep = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-';
    if (keep) {
      o.push_back(ch);
    } else if (o.empty() || o.back() != '_') {
      o.push_back('_');
    }
  }
  while (!o.empty() && o.back() == '_') o.pop_back();
  return o;
}

std::string device_line(const ConformReport& r) {
  const DeviceDescription& d = r.device;
  std::string s = "blockscale conform, device " + d.name;
  std::string detail;
  if (!d.compute_capability.empty()) detail += "compute capability " + d.compute_capability;
  if (d.multiprocessors > 0)
    detail += (detail.empty() ? "" : ", ") + std::to_string(d.multiprocessors) + " SMs";
  if (!detail.empty()) s += " (" + detail + ")";
  if (!d.driver.empty()) s += ", driver " + d.driver;
  if (!d.cuda_driver.empty()) s += ", CUDA " + d.cuda_driver;
  if (!d.cuda_runtime.empty()) s += " (runtime " + d.cuda_runtime + ")";
  if (!r.date.empty()) s += ", " + r.date;
  return s;
}

// The distance as compare.h measures it; 0 ulps is a zero of the other sign or a NaN of another
// payload.
std::string distance(const Mismatch& m, OutputFormat f) {
  if (!m.ulps) return "NaN on one side";
  if (*m.ulps == 0) {
    const std::uint64_t magnitude = f == OutputFormat::f64   ? 0x7FFFFFFFFFFFFFFFull
                                    : f == OutputFormat::f32 ? 0x7FFFFFFFull
                                                             : 0x7FFFull;
    return ((m.device | m.model) & magnitude) == 0 ? "+0 against -0" : "NaNs of other payloads";
  }
  return std::to_string(*m.ulps) + " ulp" + (*m.ulps == 1 ? "" : "s");
}

std::string case_note(std::size_t i, const std::string& where, const Mismatch& m, OutputFormat f) {
  return "case " + std::to_string(i) + ": " + where + ": device " + hex_code(f, m.device) +
         ", emulator model " + hex_code(f, m.model) + " (" + distance(m, f) + ")";
}

// What every failure file says first, then the target's own lines.
golden::Header failure_header(const golden::Operation& op, const ConformReport& report,
                              const std::string& target_line) {
  golden::Header h;
  h.generator = golden::generator_version();
  h.kind = op.kind();
  h.ops = op.op_lines();
  h.sources = {device_line(report), target_line};
  h.data = report.device.kind == "gpu" ? "hardware" : "self-test";
  h.fields = op.fields();
  h.notes = {
      "conformance failures (docs/conformance.md): d is the DEVICE's output; `blockscale golden verify` "
      "recomputes the emulator model and reports every case where the two differ"};
  return h;
}

void add_case(FailureFile& f, std::vector<std::uint64_t> inputs, std::uint64_t device_d, const Mismatch& m) {
  golden::GoldenFile& g = f.golden;
  inputs.push_back(device_d);
  g.words_per_case = golden::words_per_case(g.header.fields);
  if (inputs.size() != g.words_per_case) {
    throw std::logic_error("failure file " + f.name + ": a case of " + std::to_string(inputs.size()) +
                           " words where the fields take " + std::to_string(g.words_per_case));
  }
  g.words.insert(g.words.end(), inputs.begin(), inputs.end());
  g.case_lines.push_back(g.case_lines.size() + 1);
  g.header.cases = g.case_lines.size();
  f.examples.push_back(m);
}

std::vector<FailureFile> instruction_files(const TargetResult& r, const ConformOptions& o,
                                           const ConformReport& report) {
  const InstructionTarget& t = r.target.instruction;
  const std::size_t K = static_cast<std::size_t>(t.k), N = static_cast<std::size_t>(t.n);
  const std::size_t blocks = t.block_scaled ? K / static_cast<std::size_t>(t.block) : 0;
  const OutputFormat of = output_format(t);
  const std::unique_ptr<golden::Operation> op = golden::instruction_operation(t.model.name());
  std::vector<FailureFile> out;
  for (const DataResult& dr : r.data) {
    if (dr.stats.examples.empty()) continue;
    FailureFile f;
    f.name = safe_name(t.name) + "." + to_string(dr.data) + ".txt";
    f.target = t.name;
    f.data = dr.data;
    f.golden.name = f.name;
    f.golden.header = failure_header(*op, report,
                                     "instruction target '" + t.name + "', data set " + to_string(dr.data) +
                                         ", seed " + std::to_string(o.seed) + " (tiles of " +
                                         std::to_string(t.m) + " x " + std::to_string(t.n) + " outputs)");
    auto& notes = f.golden.header.notes;
    if (t.model_params) {
      notes.push_back(
          "the run modelled this target with candidate parameters (--model-override " + t.model_override +
          "): the model bits below are the candidate's, verification recomputes the emulator table's row");
    }
    for (const std::string& n : op->notes()) notes.push_back(n);
    for (const Mismatch& m : dr.stats.examples) {
      const TileBatch b = make_tiles(t, dr.data, o.seed, m.case_index, 1);
      // One golden word per element: an f64 target's two batch words make one binary64 word.
      const auto element = [&](const std::vector<std::uint32_t>& v, std::size_t i) -> std::uint64_t {
        return t.f64 ? f64_bits(&v[2 * i]) : v[i];
      };
      std::vector<std::uint64_t> in;
      // Sparse targets: the row's stored values and their positions (the golden fields a and i).
      const std::size_t S = stored_k(t);
      for (std::size_t s = 0; s < S; ++s) in.push_back(element(b.a, m.row * S + s));
      if (t.sparse)
        for (std::size_t s = 0; s < S; ++s) in.push_back(b.a_index[m.row * S + s]);
      for (std::size_t k = 0; k < K; ++k) in.push_back(element(b.b, m.col * K + k));
      in.push_back(element(b.c, m.row * N + m.col));
      for (std::size_t s = 0; s < blocks; ++s) in.push_back(b.sfa[m.row * blocks + s]);
      for (std::size_t s = 0; s < blocks; ++s) in.push_back(b.sfb[m.col * blocks + s]);
      notes.push_back(case_note(f.examples.size(),
                                "tile " + std::to_string(m.case_index) + ", output D[" +
                                    std::to_string(m.row) + "][" + std::to_string(m.col) + "]",
                                m, of));
      add_case(f, std::move(in), m.device, m);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<FailureFile> gemm_files(const TargetResult& r, const ConformOptions& o,
                                    const ConformReport& report) {
  const GemmTarget& t = r.target.gemm;
  const bool promotion = t.schedule_kind == GemmSchedule::hopper_promotion;
  std::string operands;
  if (promotion) {
    const bool fp4 = t.recipe != GemmRecipe::mxfp8;
    operands = "the kernel's operands as the emulator's promotion schedule takes them: " +
               std::string(fp4 ? "e2m1 codes expanded exactly to e4m3, " : "") + "each " +
               std::to_string(t.block) + "-element scale block in its own k32 slot" +
               (t.block < 32 ? " followed by zero codes" : "") + ", " + info(t.scale).short_name +
               " scales decoded to fp32" + (t.scale == Format::float8_ue4m3 ? " (bit 7 ignored)" : "") +
               "; c = +0 where the problem has no C";
  } else {
    operands = "the kernel's element and scale codes as they are; c = +0 where the problem has no C";
  }
  std::vector<FailureFile> out;
  for (const DataResult& dr : r.data) {
    // One file per (K, output format) in order of first appearance: a golden gemm file has one shape.
    std::map<std::pair<int, bool>, std::size_t> index;
    std::vector<FailureFile> files;
    std::optional<std::uint64_t> problem_index;
    GemmProblem p;
    for (const Mismatch& m : dr.stats.examples) {
      if (problem_index != m.case_index) {
        p = make_gemm_problem(t, dr.data, o.seed, m.case_index, o.gemm_sizes);
        problem_index = m.case_index;
      }
      const auto key = std::make_pair(p.k, p.bf16_output);
      auto it = index.find(key);
      if (it == index.end()) {
        FailureFile f;
        f.name = safe_name(t.name) + "." + to_string(dr.data) + ".k" + std::to_string(p.k) + "." +
                 (p.bf16_output ? "bf16" : "f32") + ".txt";
        f.target = t.name;
        f.data = dr.data;
        f.golden.name = f.name;
        const auto op = gemm_failure_operation(t, p.k, p.bf16_output, f.name.substr(0, f.name.size() - 4));
        f.golden.header = failure_header(*op, report,
                                         "GEMM target '" + t.name + "', data set " + to_string(dr.data) +
                                             ", seed " + std::to_string(o.seed) + ", " +
                                             (o.gemm_sizes == GemmSizes::small ? "small" : "full") +
                                             " problem sizes, K = " + std::to_string(p.k) + ", " +
                                             (p.bf16_output ? "bf16" : "f32") + " output");
        f.golden.header.notes.push_back(operands);
        for (const std::string& n : op->notes()) f.golden.header.notes.push_back(n);
        it = index.emplace(key, files.size()).first;
        files.push_back(std::move(f));
      }
      FailureFile& f = files[it->second];
      f.golden.header.notes.push_back(
          case_note(f.examples.size(),
                    "problem " + std::to_string(m.case_index) + " (" + std::to_string(p.m) + " x " +
                        std::to_string(p.n) + " x " + std::to_string(p.k) + (p.c.empty() ? ", no C" : "") +
                        "), output D[" + std::to_string(m.row) + "][" + std::to_string(m.col) + "]",
                    m, p.bf16_output ? OutputFormat::bf16 : OutputFormat::f32));
      add_case(f, gemm_failure_inputs(t, p, m.row, m.col), m.device, m);
    }
    for (FailureFile& f : files) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::unique_ptr<golden::Operation> gemm_failure_operation(const GemmTarget& t, int k, bool bf16_output,
                                                          std::string name) {
  if (k <= 0 || k % t.block != 0) {
    throw std::invalid_argument("GEMM '" + t.name + "': K = " + std::to_string(k) +
                                " is not a multiple of the block");
  }
  if (t.schedule_kind == GemmSchedule::hopper_promotion && t.promotion_interval != 1) {
    throw std::invalid_argument("GEMM '" + t.name + "': per-block scales need promotion interval P = 1");
  }
  const int golden_k = t.schedule_kind == GemmSchedule::hopper_promotion ? 32 * (k / t.block) : k;
  return golden::gemm_operation(std::move(name), 1, 1, golden_k, gemm_schedule(t),
                                bf16_output ? golden::GemmOutput::bf16 : golden::GemmOutput::accumulator);
}

std::vector<std::uint64_t> gemm_failure_inputs(const GemmTarget& t, const GemmProblem& p, std::size_t row,
                                               std::size_t col) {
  const std::size_t K = static_cast<std::size_t>(p.k), blocks = K / static_cast<std::size_t>(t.block);
  const std::span<const std::uint8_t> a(p.a.data() + row * K, K), b(p.b.data() + col * K, K);
  const std::span<const std::uint8_t> sa(p.sfa.data() + row * blocks, blocks),
      sb(p.sfb.data() + col * blocks, blocks);
  const std::uint64_t c = p.c.empty() ? 0 : p.c[row * static_cast<std::size_t>(p.n) + col];
  std::vector<std::uint64_t> in;
  if (t.schedule_kind == GemmSchedule::hopper_promotion) {
    for (std::uint8_t e : promotion_elements(t, a, 1, p.k)) in.push_back(e);
    for (std::uint8_t e : promotion_elements(t, b, 1, p.k)) in.push_back(e);
    in.push_back(c);
    for (std::uint32_t s : promotion_scales(t, sa)) in.push_back(s);
    for (std::uint32_t s : promotion_scales(t, sb)) in.push_back(s);
  } else {
    in.insert(in.end(), a.begin(), a.end());
    in.insert(in.end(), b.begin(), b.end());
    in.push_back(c);
    in.insert(in.end(), sa.begin(), sa.end());
    in.insert(in.end(), sb.begin(), sb.end());
  }
  return in;
}

std::vector<FailureFile> failure_files(const ConformReport& report, const ConformOptions& o) {
  std::vector<FailureFile> out;
  for (const TargetResult& r : report.targets) {
    std::vector<FailureFile> files =
        r.target.kind == TargetKind::instruction ? instruction_files(r, o, report) : gemm_files(r, o, report);
    for (FailureFile& f : files) out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::filesystem::path> save_failures(const std::filesystem::path& dir,
                                                 const ConformReport& report, const ConformOptions& o) {
  std::vector<std::filesystem::path> written;
  const std::vector<FailureFile> files = failure_files(report, o);
  if (files.empty()) return written;
  std::filesystem::create_directories(dir);
  for (const FailureFile& f : files) {
    const std::filesystem::path p = dir / f.name;
    std::ofstream out(p, std::ios::binary);
    out << golden::format_golden(f.golden);
    if (!out) throw std::runtime_error("cannot write " + p.string());
    written.push_back(p);
  }
  return written;
}

}  // namespace blockscale::harness
