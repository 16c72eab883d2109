// SPDX-License-Identifier: Apache-2.0
// `blockscale conform`: the conformance harness (issue 8, docs/conformance.md). Diffs the GPU's
// kernels against the emulator bit for bit, discovers an instruction's arithmetic from targeted
// probes, studies cuBLASLt / torch._scaled_mm schedules, and saves every mismatch as a golden-vector
// file that `blockscale golden verify` reproduces on a CPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>  // access: the output paths are checked before a run

#include "blockscale/harness.h"
#include "cli.h"

namespace blockscale::cli {
namespace {

using namespace blockscale::harness;

const char* kUsage =
    "usage: blockscale conform [options]\n"
    "\n"
    "Runs every kernel and tensor-core instruction the GPU can run on generated inputs, runs the\n"
    "emulator's model of it on the same inputs, and compares the output bits.\n"
    "\n"
    "selection and cases:\n"
    "  --kernels PATTERN     targets whose name matches this ECMAScript regular expression\n"
    "                        (searched; e.g. 'wgmma.*e4m3', 'mma.sync', 'gemm'); default all\n"
    "  --cases N             cases per target and data set (a case is one instruction tile or one\n"
    "                        GEMM problem); default: enough cases for --outputs\n"
    "  --outputs N           outputs per target over all data sets when --cases is not given\n"
    "                        (default 1048576); the probes run once, the rest is split evenly\n"
    "  --seed S              generator seed (default 1); every case is a function of (seed,\n"
    "                        target, data set, case index)\n"
    "  --data SETS           random, realistic, probes, tiny, all (the four), or a comma list;\n"
    "                        default random,realistic,probes; tiny puts products below the\n"
    "                        accumulator's zero floor\n"
    "  --list                list the GPU's targets (runnable or skipped, with the reason) and exit;\n"
    "                        without a GPU, exit 3 (--list --self-test lists the emulator's)\n"
    "modes (the conformance sweep runs when no other mode is named, or with --conform):\n"
    "  --conform             run the conformance sweep together with the modes below\n"
    "  --discover NAME       infer the parameters of an instruction from probes on the device and\n"
    "                        set them next to its table row; NAME is an instruction name or a\n"
    "                        regular expression over the device's instruction targets\n"
    "  --external            cuBLASLt fp8 GEMMs (per-tensor with and without FAST_ACCUM,\n"
    "                        VEC128_32F, BLK128x128_32F) fitted to emulator schedules, and calls\n"
    "                        with its epilogue (alpha, beta C, bias, bf16/f16/e4m3 D, D scale,\n"
    "                        AMAX_D) checked against the cuBLASLt model (exit 1 on a mismatch)\n"
    "  --external-dir DIR    runs written on the GPU machine: torch._scaled_mm (*.scaled_mm, by\n"
    "                        scripts/conform_scaled_mm.py), fitted like --external; torch._cslt_sparse_mm\n"
    "                        (*.sparse_mm, by scripts/probe_sparse_mm.py), each checked against the\n"
    "                        emulator's cuSPARSELt model with every split-K slice count S up to 64\n"
    "  --self-test           run against the emulator itself (no GPU needed): CI's check of case\n"
    "                        generation, comparison and reporting\n"
    "  --perturb KIND        with --self-test: perturb the self-test device so that it must be\n"
    "                        caught: fraction-bits, output-rounding, c-placement, promotion-fma,\n"
    "                        output-lsb, zero-floor (needs --data tiny to show) (default none)\n"
    "  --model-override 'REGEX@key=value,...[;...]'\n"
    "                        test a candidate table row: instructions matching REGEX are modelled\n"
    "                        with these parameters (F, L, e_zero, underflow=positive|negative,\n"
    "                        rounding=rz_fp32|rz_e8m13|rne_fp16) instead of the table's, in the\n"
    "                        sweep and in discovery; e.g. 'sm_90a@underflow=positive'\n"
    "output:\n"
    "  --json FILE           everything measured, as JSON\n"
    "  --markdown FILE       the results tables as Markdown (for docs/conformance.md)\n"
    "  --save-failures DIR   write the kept mismatch examples (16 per target and data set) as\n"
    "                        golden-vector files whose expected outputs are the device's bits;\n"
    "                        `blockscale golden verify DIR` reproduces them on any machine (exit 1\n"
    "                        while the device and the emulator still disagree)\n"
    "  --quiet               no progress lines\n"
    "\n"
    "exit status: 0 all outputs agree (and discovery agrees with the table); 1 a mismatch, a\n"
    "disagreement, a kernel error or a modelled .sparse_mm run that no S reproduces; 2 bad usage or\n"
    "input; 3 no GPU (use --self-test).";

// The data sets of a comma list, each once, in the order first named ("all" names the four).
std::vector<DataKind> parse_data(const std::string& s) {
  std::vector<DataKind> v;
  const auto add = [&v](DataKind d) {
    if (std::find(v.begin(), v.end(), d) == v.end()) v.push_back(d);
  };
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = s.find(',', start);
    const std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (part == "all") {
      for (DataKind d : {DataKind::random, DataKind::realistic, DataKind::probes, DataKind::tiny}) add(d);
    } else if (const auto d = parse_data_kind(part)) {
      add(*d);
    } else {
      throw UsageError("--data: '" + part + "' is not random, realistic, probes, tiny or all");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return v;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

// The output paths, checked before the run: a sweep of minutes (and its mismatch status) should not
// be lost to a path that cannot be written at the end.
void check_output_paths(const Args& args) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* option : {"json", "markdown"}) {
    const std::optional<std::string> path = args.get(option);
    if (!path) continue;
    const fs::path p(*path);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (path->empty() || fs::is_directory(p, ec)) {
      throw UsageError(std::string("--") + option + " '" + *path + "' is not a file name");
    }
    if (!fs::is_directory(dir, ec)) {
      throw UsageError(std::string("--") + option + " " + *path + ": the directory " + dir.string() + " does not exist");
    }
    if (::access((fs::exists(p, ec) ? p : dir).c_str(), W_OK) != 0) {
      throw UsageError(std::string("--") + option + " " + *path + ": not writable");
    }
  }
  if (const std::optional<std::string> dir = args.get("save-failures")) {
    if (dir->empty() || (fs::exists(*dir, ec) && !fs::is_directory(*dir, ec))) {
      throw UsageError("--save-failures '" + *dir + "' is not a directory");
    }
  }
}

std::string command_line(const std::vector<std::string>& args) {
  std::string s = "blockscale conform";
  for (const std::string& a : args) {
    const bool quote = a.find_first_of(" '*|()[]\\$") != std::string::npos;
    s += " " + (quote ? "'" + a + "'" : a);
  }
  return s;
}

int run(const std::vector<std::string>& argv) {
  const Args args(argv,
                  {"kernels", "cases", "outputs", "seed", "data", "json", "markdown", "save-failures", "discover",
                   "external-dir", "perturb", "model-override"},
                  {"self-test", "list", "conform", "external", "quiet"});
  args.no_positional();

  const bool self_test = args.flag("self-test");
  const auto perturb = parse_perturbation(args.get_or("perturb", "none"));
  if (!perturb) throw UsageError("--perturb: unknown kind '" + *args.get("perturb") + "'");
  if (*perturb != Perturbation::none && !self_test) throw UsageError("--perturb needs --self-test");
  const bool want_discover = args.get("discover").has_value();
  const bool want_external = args.flag("external") || args.get("external-dir").has_value();
  const bool want_conform = args.flag("conform") || (!want_discover && !want_external);

  ConformOptions o;
  o.pattern = args.get_or("kernels", "");
  o.seed = args.get_u64("seed", 1);
  if (args.get("cases")) o.cases = static_cast<std::uint64_t>(args.get_int("cases", 1, 1, 1ll << 40));
  o.outputs = static_cast<std::uint64_t>(args.get_int("outputs", std::int64_t(1) << 20, 1, 1ll << 40));
  o.data = parse_data(args.get_or("data", "random,realistic,probes"));
  if (self_test) o.gemm_sizes = GemmSizes::small;
  if (const auto mo = args.get("model-override")) {
    if (mo->empty()) throw UsageError("--model-override is empty: give 'REGEX@key=value,...[;...]'");
    try {
      o.model_overrides = parse_model_overrides(*mo);
      // Check every parameter now, not in the middle of a run.
      for (const auto& [pattern, spec] : o.model_overrides) {
        emulator::FdpaParams probe_params;
        apply_param_override(probe_params, spec);
      }
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  const bool quiet = args.flag("quiet");
  check_output_paths(args);

  std::unique_ptr<Device> device;
  std::string why_not;
  if (self_test) {
    device = make_emulator_device(*perturb);
  } else {
    device = make_gpu_device(why_not);
    const bool files_only = !want_conform && !want_discover && !args.flag("external");
    if (!device && !files_only) {
      std::fprintf(stderr,
                   "blockscale conform: no GPU to test: %s.\n"
                   "  (`blockscale conform --self-test` runs the harness against the emulator on any machine.)\n",
                   why_not.c_str());
      return kExitNoDevice;
    }
  }

  Session ses;
  ses.date = utc_now();
  ses.command = command_line(argv);
  if (device) ses.device = device->describe();
  if (device) {
    const DeviceDescription& d = ses.device;
    std::printf("device: %s%s%s%s\n", d.name.c_str(),
                d.compute_capability.empty() ? "" : (", compute capability " + d.compute_capability).c_str(),
                d.driver.empty() ? "" : (", driver " + d.driver).c_str(),
                d.cuda_driver.empty() ? "" : (", CUDA " + d.cuda_driver + " (runtime " + d.cuda_runtime + ")").c_str());
    const std::vector<Target> targets = select_targets(*device, o.pattern);
    // A pattern that matches nothing (a typo) would otherwise be a sweep of nothing that passes.
    if (targets.empty() && (want_conform || args.flag("list"))) {
      throw UsageError("--kernels '" + o.pattern + "' matches no target (blockscale conform --list names them)");
    }
    std::size_t runnable = 0;
    for (const Target& t : targets) runnable += t.skip_reason.empty();
    std::printf("targets: %zu selected, %zu can run here, %zu skipped\n", targets.size(), runnable,
                targets.size() - runnable);
    std::fflush(stdout);
    if (args.flag("list")) {
      for (const Target& t : targets) {
        std::printf("  %-8s %s%s\n", t.skip_reason.empty() ? "run" : "skip", t.name().c_str(),
                    t.skip_reason.empty() ? "" : ("\n           " + t.skip_reason).c_str());
      }
      return kExitOk;
    }
  }

  int status = kExitOk;
  if (want_conform) {
    auto last = std::chrono::steady_clock::now() - std::chrono::seconds(10);
    o.progress = [&](const Progress& p) {
      const auto now = std::chrono::steady_clock::now();
      const bool done = p.outputs_done == p.outputs_planned;
      if (quiet || (!done && now - last < std::chrono::seconds(2))) return;
      last = now;
      std::fprintf(stderr, "[%zu/%zu] %s, %s: %llu/%llu outputs, %llu mismatches, %.1f s\n", p.target_index + 1,
                   p.targets, p.target.c_str(), to_string(p.data).c_str(),
                   static_cast<unsigned long long>(p.outputs_done), static_cast<unsigned long long>(p.outputs_planned),
                   static_cast<unsigned long long>(p.mismatches), p.seconds);
    };
    try {
      ses.conform = run_conformance(*device, o);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::printf("\n%s", conform_table(*ses.conform).c_str());
    if (ses.conform->failed()) status = kExitMismatch;
    if (const auto dir = args.get("save-failures")) {
      const auto written = save_failures(*dir, *ses.conform, o);
      std::printf("%zu failure files (golden vectors) written to %s%s\n", written.size(), dir->c_str(),
                  written.empty() ? "" : ("; reproduce them with: blockscale golden verify " + *dir).c_str());
    }
  }

  if (want_discover) {
    const std::string name = *args.get("discover");
    std::vector<Target> all = device->targets();
    apply_model_overrides(all, o.model_overrides);
    std::vector<InstructionTarget> todo;
    std::string parse_error;
    try {
      const InstructionTarget t = instruction_target(name);
      for (const Target& dt : all) {
        if (dt.kind == TargetKind::instruction && dt.instruction.name == t.name) {
          if (!dt.skip_reason.empty()) {
            std::fprintf(stderr, "blockscale conform: cannot discover %s here: %s\n", t.name.c_str(),
                         dt.skip_reason.c_str());
            return kExitNoDevice;
          }
          todo.push_back(dt.instruction);
        }
      }
      if (todo.empty()) throw UsageError("'" + t.name + "' is not one of this device's probe instructions (see --list)");
    } catch (const std::invalid_argument& e) {
      parse_error = e.what();
    }
    if (todo.empty()) {
      std::regex re;
      try {
        re = std::regex(name, std::regex::ECMAScript);
      } catch (const std::regex_error&) {
        throw UsageError("--discover: '" + name + "' is neither an instruction (" + parse_error +
                         ") nor a regular expression");
      }
      for (const Target& dt : all) {
        // f64 fma chains have no FDPA parameters to discover (named alone, discover() says so).
        if (dt.kind == TargetKind::instruction && dt.skip_reason.empty() && !dt.instruction.f64 &&
            std::regex_search(dt.instruction.name, re)) {
          todo.push_back(dt.instruction);
        }
      }
      if (todo.empty()) {
        throw UsageError("--discover: no runnable instruction matches '" + name + "' (" + parse_error + ")");
      }
    }
    for (const InstructionTarget& t : todo) {
      if (!quiet) std::fprintf(stderr, "discovering %s ...\n", t.name.c_str());
      try {
        ses.discoveries.push_back(discover(*device, t));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "blockscale conform: discovery of %s failed: %s\n", t.name.c_str(), e.what());
        status = kExitMismatch;
        continue;
      }
      std::printf("\n%s", discovery_table(ses.discoveries.back()).c_str());
      if (ses.discoveries.back().disagrees()) status = kExitMismatch;
    }
  }

  if (want_external) {
    std::vector<ExternalRun> runs;
    if (args.flag("external")) {
      std::string why;
      runs = run_cublaslt(o.seed, why);
      if (runs.empty()) ses.external_note = "cuBLASLt study not run: " + why;
    }
    std::vector<SparseMmRun> sparse_runs;
    if (const auto dir = args.get("external-dir")) {
      // A bad directory spoils only its own part of the study (the cuBLASLt runs are still fitted).
      try {
        for (ExternalRun& r : read_scaled_mm_runs(*dir)) runs.push_back(std::move(r));
        sparse_runs = read_sparse_mm_runs(*dir);
        if (runs.empty() && sparse_runs.empty()) {
          throw std::invalid_argument("no .scaled_mm or .sparse_mm files (scripts/conform_scaled_mm.py, scripts/probe_sparse_mm.py)");
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "blockscale conform: --external-dir %s: %s\n", dir->c_str(), e.what());
        ses.external_note += (ses.external_note.empty() ? "" : "; ") + std::string("torch runs not read: ") + e.what();
        sparse_runs.clear();
        status = kExitUsage;
      }
    }
    for (ExternalRun& r : runs) {
      if (!quiet) std::fprintf(stderr, "fitting %s: %s ...\n", r.library.c_str(), r.config.c_str());
      ses.external.push_back(fit_schedules(std::move(r)));
      // A run with cuBLASLt's epilogue checks a committed model (cublaslt_fp8_gemm): a mismatch
      // is a failure, as for the sparse runs below.
      const ExternalStudy& st = ses.external.back();
      if (st.run.epilogue && st.run.error.empty() && !st.table.row.empty() && !st.table.bit_exact() && status == kExitOk)
        status = kExitMismatch;
    }
    std::printf("\n%s%s\n", ses.external_note.c_str(), external_table(ses.external).c_str());
    // The sparse runs are checked against a committed model (the cuSPARSELt rows of
    // emulator/sparse_gemm.h): a modelled run that no slice count reproduces is a mismatch.
    for (std::size_t i = 0; i < sparse_runs.size(); ++i) {
      if (!quiet) std::fprintf(stderr, "[%zu/%zu] fitting %s ...\n", i + 1, sparse_runs.size(), sparse_runs[i].file.c_str());
      ses.sparse_mm.push_back(fit_sparse_mm(std::move(sparse_runs[i])));
      const SparseMmStudy& st = ses.sparse_mm.back();
      if (st.run.error.empty() && st.why_not.empty() && !st.bit_exact() && status == kExitOk) status = kExitMismatch;
    }
    if (!ses.sparse_mm.empty()) std::printf("%s\n", sparse_mm_table(ses.sparse_mm).c_str());
  }

  if (const auto path = args.get("json")) write_file(*path, to_json(ses));
  if (const auto path = args.get("markdown")) write_file(*path, to_markdown(ses));
  return status;
}

const Registrar reg({"conform", "diff GPU kernels against the emulator bit for bit (and discover, self-test)", kUsage,
                     run});

}  // namespace
}  // namespace blockscale::cli
