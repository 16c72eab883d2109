// SPDX-License-Identifier: Apache-2.0
// `blockscale golden gen|verify|show|import-km`: golden vectors (golden/FORMAT.md).
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "blockscale/formats/convert.h"
#include "blockscale/golden/file.h"
#include "blockscale/golden/km.h"
#include "blockscale/golden/manifest.h"
#include "blockscale/golden/operation.h"
#include "blockscale/golden/set.h"
#include "blockscale/golden/verify.h"
#include "cli.h"

namespace blockscale::cli {
namespace {

namespace fs = std::filesystem;
using namespace blockscale::golden;

const char* kUsage =
    "blockscale golden <subcommand> ...   golden vectors: portable hex test cases (golden/FORMAT.md)\n"
    "\n"
    "  gen --op OP [--cases N] [--seed S] [--data mixed|edge|random|realistic] --out DIR [--npy] [--json]\n"
    "      Generate a set into DIR (files, manifest.json, and .npy companions with --npy); each file is\n"
    "      built in memory, so --cases is limited to 2^25 words per file (cases x words per case). OP is a family\n"
    "      (conversions, quantization, layouts, instructions, gemms), 'all' (every family, one\n"
    "      subdirectory each: what golden/ holds besides km/), or one operation id:\n"
    "        convert:<src>:<dst>[:stochastic]   e.g. convert:f32:e4m3, convert:f64:e2m1\n"
    "        quantize:<block format>:<recipe>   e.g. quantize:mxfp8_e4m3:ocp, quantize:nvfp4:nvfp4_te,\n"
    "                                           quantize:fp8_e4m3:deepgemm (fp8 with fp32 scales)\n"
    "        layout:<scale layout>              e.g. layout:tiled_128x4\n"
    "        grouped_layout:<rows|cols>:<ends>  e.g. grouped_layout:rows:0,5,133,133,300\n"
    "        weight_interleave:<interleave>     e.g. weight_interleave:flashinfer_sm90_fp4\n"
    "        pack:<packing>:<format>            e.g. pack:fp6_dense:e2m3\n"
    "        instruction:<instruction name>     e.g. 'instruction:sm_90a wgmma.mma_async m64n8k32 f32 e4m3 "
    "e4m3'\n"
    "        gemm:<schedule>                    e.g. gemm:sm_100a_nvfp4_chain, gemm:cublaslt_1x128_x_128x128\n"
    "      --seed (default 1) makes the set reproducible: the same seed gives the same bytes.\n"
    "      --data (default: edge for conversions, mixed otherwise) picks the inputs.\n"
    "\n"
    "  verify PATH... [--max-report N] [--json] [--quiet]\n"
    "      Recompute every case with blockscale. PATH: golden files, manifests, or directories (every\n"
    "      manifest below them and every .txt no manifest lists). Reports cases, mismatches and the first\n"
    "      mismatching lines per file. Exit 0: all match; 1: mismatches; 2: a malformed or inconsistent "
    "file.\n"
    "\n"
    "  show FILE [--case I] [--json]\n"
    "      Decode one case (default 0) into readable values, with blockscale's result beside the file's.\n"
    "\n"
    "  import-km DIR [--out OUTDIR] [--cases N] [--npy] [--json]\n"
    "      Convert the Khattak & Mikaitis hardware vectors (the extracted km-tensor-core-vectors folder)\n"
    "      into golden instruction files, one per result file, mapped to the instruction its README\n"
    "      names (default OUTDIR: ./km; --cases N keeps the first N vectors of each file).";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string manifest_json_summary(const std::string& dir, const Manifest& m) {
  std::string s = "{\"dir\": \"" + json_escape(dir) + "\", \"operation\": \"" + json_escape(m.operation) +
                  "\", \"cases\": " + std::to_string(m.cases) + ", \"files\": [";
  for (std::size_t i = 0; i < m.files.size(); ++i) {
    const ManifestFile& f = m.files[i];
    s += (i ? ", " : "") + std::string("{\"path\": \"") + json_escape(f.path) + "\", \"kind\": \"" +
         json_escape(f.kind) + "\", \"cases\": " + std::to_string(f.cases) + ", \"sha256\": \"" + f.sha256 +
         "\"}";
  }
  return s + "]}";
}

int run_gen(const std::vector<std::string>& argv) {
  Args args(argv, {"op", "cases", "seed", "data", "out"}, {"npy", "json"});
  if (!args.positional().empty())
    throw UsageError("gen takes no positional arguments (got '" + args.positional()[0] + "')");
  const auto op = args.get("op");
  if (!op)
    throw UsageError("gen needs --op (a family, 'all', or an operation id; see: blockscale help golden)");
  const auto out = args.get("out");
  if (!out) throw UsageError("gen needs --out DIR");
  const std::uint64_t seed = args.get_u64("seed", 1);
  std::optional<DataKind> data;
  if (const auto d = args.get("data")) {
    data = parse_data_kind(*d);
    if (!data) throw UsageError("--data must be mixed, edge, random or realistic, got '" + *d + "'");
  }
  std::optional<std::size_t> cases;
  if (args.get("cases")) cases = static_cast<std::size_t>(args.get_int("cases", 0, 1, 10'000'000));
  const bool json = args.flag("json");
  const bool tty = isatty(2) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> families;
  if (*op == "all") {
    families = family_names();
  } else {
    families = {*op};
  }
  std::vector<std::string> summaries;
  std::uint64_t total = 0;
  for (const std::string& fam : families) {
    const fs::path dir = *op == "all" ? fs::path(*out) / fam : fs::path(*out);
    std::vector<GoldenFile> files;
    try {
      files = generate_set(fam, seed, data, cases, [&](std::size_t i, std::size_t n, const GoldenFile& f) {
        // A live line on a terminal; in logs a line per quarter of the set.
        if (tty) {
          std::fprintf(stderr, "\r[%s %zu/%zu] %-70.70s", fam.c_str(), i + 1, n, f.name.c_str());
        } else if ((i + 1) * 4 / n != i * 4 / n) {
          std::fprintf(stderr, "[%s %zu/%zu files]\n", fam.c_str(), i + 1, n);
        }
        std::fflush(stderr);
      });
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (tty) std::fprintf(stderr, "\n");
    const std::string data_name = to_string(data.value_or(default_data(fam)));
    Manifest m;
    try {
      m = write_set(dir, files, fam, seed, data_name, args.flag("npy"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    total += m.cases;
    if (json) {
      summaries.push_back(manifest_json_summary(dir.string(), m));
    } else {
      std::printf("%s: %zu files, %llu cases -> %s\n", fam.c_str(), files.size(),
                  static_cast<unsigned long long>(m.cases), dir.string().c_str());
    }
  }
  if (json) {
    std::printf("{\"sets\": [");
    for (std::size_t i = 0; i < summaries.size(); ++i)
      std::printf("%s%s", i ? ", " : "", summaries[i].c_str());
    std::printf("], \"cases\": %llu, \"seconds\": %.3f}\n", static_cast<unsigned long long>(total),
                seconds_since(t0));
  } else {
    std::printf("%llu cases in %.1f s\n", static_cast<unsigned long long>(total), seconds_since(t0));
  }
  return kExitOk;
}

int run_verify(const std::vector<std::string>& argv) {
  Args args(argv, {"max-report"}, {"json", "quiet"});
  if (args.positional().empty())
    throw UsageError("verify needs at least one PATH (file, manifest or directory)");
  const bool json = args.flag("json"), quiet = args.flag("quiet");
  VerifyOptions o;
  o.max_report = static_cast<std::size_t>(args.get_int("max-report", 5, 0, 1'000'000));
  std::uint64_t done_before = 0;
  const bool tty = isatty(2) != 0;
  std::uint64_t files_done = 0;
  o.progress = [&](const std::string& path, std::uint64_t done, std::uint64_t total) {
    if (quiet) return;
    if (tty) {
      std::fprintf(stderr, "\r%llu cases verified  %-60.60s %llu/%llu",
                   static_cast<unsigned long long>(done_before + done),
                   fs::path(path).filename().string().c_str(), static_cast<unsigned long long>(done),
                   static_cast<unsigned long long>(total));
      std::fflush(stderr);
    }
    if (done == total) {
      done_before += total;
      // In logs: a line every 50 files.
      if (!tty && ++files_done % 50 == 0) {
        std::fprintf(stderr, "[%llu files, %llu cases verified]\n",
                     static_cast<unsigned long long>(files_done),
                     static_cast<unsigned long long>(done_before));
      }
    }
  };
  std::vector<fs::path> paths;
  for (const auto& p : args.positional()) paths.emplace_back(p);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<FileReport> reports = verify_paths(paths, o);
  if (!quiet && tty) std::fprintf(stderr, "\n");
  std::uint64_t cases = 0, mismatches = 0, failed_files = 0, malformed = 0;
  for (const FileReport& r : reports) {
    cases += r.kind == "npy" ? 0 : r.cases;  // a companion repeats its text file's cases
    mismatches += r.mismatches;
    failed_files += r.ok() ? 0 : 1;
    malformed += r.error.empty() ? 0 : 1;
  }
  if (json) {
    std::printf("{\"files\": [");
    for (std::size_t i = 0; i < reports.size(); ++i)
      std::printf("%s%s", i ? ",\n  " : "\n  ", to_json(reports[i]).c_str());
    std::printf(
        "\n], \"file_count\": %zu, \"cases\": %llu, \"mismatches\": %llu, \"failed_files\": %llu, "
        "\"errors\": %llu, "
        "\"seconds\": %.3f}\n",
        reports.size(), static_cast<unsigned long long>(cases), static_cast<unsigned long long>(mismatches),
        static_cast<unsigned long long>(failed_files), static_cast<unsigned long long>(malformed),
        seconds_since(t0));
  } else {
    for (const FileReport& r : reports) {
      if (!r.error.empty()) {
        std::printf("ERROR  %s\n       %s\n", r.path.c_str(), r.error.c_str());
        continue;
      }
      if (quiet && r.ok()) continue;
      std::printf("%-5s %8llu cases %6llu mismatches  %s\n", r.ok() ? "ok" : "FAIL",
                  static_cast<unsigned long long>(r.cases), static_cast<unsigned long long>(r.mismatches),
                  r.path.c_str());
      for (const Mismatch& m : r.first) {
        std::printf("       line %zu (case %zu): %s\n         file:       %.200s\n", m.line, m.index,
                    m.detail.c_str(), m.expected_line.c_str());
        if (!m.computed_line.empty()) std::printf("         blockscale: %.200s\n", m.computed_line.c_str());
      }
    }
    std::printf(
        "%zu files, %llu cases, %llu mismatches, %llu files failed (%llu malformed or inconsistent), %.1f "
        "s\n",
        reports.size(), static_cast<unsigned long long>(cases), static_cast<unsigned long long>(mismatches),
        static_cast<unsigned long long>(failed_files), static_cast<unsigned long long>(malformed),
        seconds_since(t0));
  }
  if (malformed) return kExitUsage;
  return failed_files ? kExitMismatch : kExitOk;
}

// A readable value of one element.
std::string element_value(ElementType t, std::uint64_t w) {
  double v = 0;
  switch (t.word) {
    case WordType::u8:
    case WordType::u32:
    case WordType::u64: return std::to_string(w);
    case WordType::f64: v = std::bit_cast<double>(w); break;
    case WordType::code:
      if (t.format == Format::tfloat32 || t.format == Format::float32) {
        v = std::bit_cast<float>(static_cast<std::uint32_t>(w));
      } else {
        v = to_double(t.format, static_cast<std::uint32_t>(w) & code_mask(t.format));
      }
      break;
  }
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, t.word == WordType::f64 ? "%.17g" : "%.9g", v);
  return buf;
}

std::string values_text(const FieldSpec& f, std::span<const std::uint64_t> w) {
  std::string s;
  for (std::size_t i = 0; i < f.count; ++i) {
    if (i) s += ' ';
    s += element_value(f.type, w[i]);
  }
  return s;
}

int run_show(const std::vector<std::string>& argv) {
  Args args(argv, {"case"}, {"json"});
  if (args.positional().size() != 1) throw UsageError("show needs exactly one FILE");
  const GoldenFile f = read_golden(args.positional()[0]);
  if (f.cases() == 0) throw UsageError(f.name + " holds no cases");
  const auto index =
      static_cast<std::size_t>(args.get_int("case", 0, 0, static_cast<std::int64_t>(f.cases()) - 1));
  const auto op = make_operation(f);
  const auto& fields = f.header.fields;
  const auto w = f.case_words(index);
  const std::size_t ni = input_words(fields);
  std::vector<std::uint64_t> out(f.words_per_case - ni);
  std::string error;
  try {
    op->compute(w.subspan(0, ni), out);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const bool match =
      error.empty() && std::equal(out.begin(), out.end(), w.begin() + static_cast<std::ptrdiff_t>(ni));
  if (args.flag("json")) {
    std::printf(
        "{\"file\": \"%s\", \"kind\": \"%s\", \"operation\": \"%s\", \"case\": %zu, \"line\": %zu, "
        "\"fields\": [",
        json_escape(f.name).c_str(), to_string(f.header.kind).c_str(), json_escape(op->id()).c_str(), index,
        f.case_lines[index]);
    std::size_t at = 0;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const FieldSpec& s = fields[i];
      const auto fw = w.subspan(at, s.count);
      std::printf("%s{\"name\": \"%s\", \"type\": \"%s\", \"output\": %s, \"hex\": \"%s\", \"values\": [",
                  i ? ", " : "", s.name.c_str(), to_string(s.type).c_str(), s.output ? "true" : "false",
                  format_case(std::span<const FieldSpec>(&s, 1), fw).c_str());
      for (std::size_t e = 0; e < s.count; ++e)
        std::printf("%s\"%s\"", e ? ", " : "", element_value(s.type, fw[e]).c_str());
      std::printf("]");
      if (s.output && error.empty()) {
        const auto mine = std::span<const std::uint64_t>(out).subspan(at - ni, s.count);
        std::printf(", \"blockscale_hex\": \"%s\"",
                    format_case(std::span<const FieldSpec>(&s, 1), mine).c_str());
      }
      std::printf("}");
      at += s.count;
    }
    std::printf("], \"match\": %s%s}\n", match ? "true" : "false",
                error.empty() ? "" : (", \"error\": \"" + json_escape(error) + "\"").c_str());
    return kExitOk;
  }
  std::printf("%s: case %zu of %zu (line %zu)\n", f.name.c_str(), index, f.cases(), f.case_lines[index]);
  std::printf("kind       %s\n", to_string(f.header.kind).c_str());
  for (const std::string& o : f.header.ops) std::printf("op         %s\n", o.c_str());
  for (const std::string& s : f.header.sources) std::printf("source     %s\n", s.c_str());
  std::size_t at = 0;
  for (const FieldSpec& s : fields) {
    const auto fw = w.subspan(at, s.count);
    const std::string count = s.count > 1 ? "[" + std::to_string(s.count) + "]" : std::string();
    std::printf("%s %-6s %s%s = %s\n", s.output ? "->" : "  ", s.name.c_str(), to_string(s.type).c_str(), count.c_str(),
                values_text(s, fw).c_str());
    std::printf("           hex %s\n", format_case(std::span<const FieldSpec>(&s, 1), fw).c_str());
    if (s.output && error.empty()) {
      const auto mine = std::span<const std::uint64_t>(out).subspan(at - ni, s.count);
      if (!std::equal(mine.begin(), mine.end(), fw.begin())) {
        std::printf("           blockscale gives %s (= %s)\n",
                    format_case(std::span<const FieldSpec>(&s, 1), mine).c_str(),
                    values_text(s, mine).c_str());
      }
    }
    at += s.count;
  }
  if (!error.empty()) std::printf("blockscale cannot compute this case: %s\n", error.c_str());
  std::printf("%s\n",
              match ? "blockscale reproduces this case" : "MISMATCH: blockscale differs from the file");
  return match ? kExitOk : kExitMismatch;
}

int run_import_km(const std::vector<std::string>& argv) {
  Args args(argv, {"out", "cases"}, {"npy", "json"});
  if (args.positional().size() != 1)
    throw UsageError("import-km needs exactly one DIR (the extracted km-tensor-core-vectors folder)");
  const fs::path out = args.get_or("out", "km");
  const auto cases = static_cast<std::size_t>(args.get_int("cases", 0, 0, 5000));
  const auto t0 = std::chrono::steady_clock::now();
  std::fprintf(stderr, "reading %s ...\n", args.positional()[0].c_str());
  const std::vector<GoldenFile> files = import_km(args.positional()[0], cases);
  const Manifest m = write_set(out, files, "import-km", std::nullopt, "hardware", args.flag("npy"));
  if (args.flag("json")) {
    std::printf("%s\n", manifest_json_summary(out.string(), m).c_str());
  } else {
    for (const GoldenFile& f : files)
      std::printf("%-36s %5zu cases  %s\n", f.name.c_str(), f.cases(), f.header.ops[0].c_str());
    std::printf("%zu files, %llu cases -> %s (%.1f s)\n", files.size(),
                static_cast<unsigned long long>(m.cases), out.string().c_str(), seconds_since(t0));
  }
  return kExitOk;
}

int run_golden(const std::vector<std::string>& argv) {
  if (argv.empty())
    throw UsageError("a subcommand is needed: gen, verify, show or import-km (see: blockscale help golden)");
  const std::string sub = argv[0];
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  try {
    if (sub == "gen") return run_gen(rest);
    if (sub == "verify") return run_verify(rest);
    if (sub == "show") return run_show(rest);
    if (sub == "import-km") return run_import_km(rest);
  } catch (const GoldenError& e) {
    std::fprintf(stderr, "blockscale golden %s: %s\n", sub.c_str(), e.what());
    return kExitUsage;
  }
  throw UsageError("unknown subcommand '" + sub + "' (gen, verify, show, import-km)");
}

const Registrar kRegistrar({"golden", "golden vectors: gen, verify, show, import-km (golden/FORMAT.md)",
                            kUsage, run_golden});

}  // namespace
}  // namespace blockscale::cli
