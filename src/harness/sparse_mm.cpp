// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/sparse_mm.h"

#include <algorithm>
#include <locale>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "blockscale/emulator/code_matrix.h"
#include "blockscale/emulator/sparse_gemm.h"
#include "blockscale/harness/external.h"
#include "run_file.h"

namespace blockscale::harness {

namespace em = blockscale::emulator;

namespace {

// A format name of a probe file's header (sparse_mm_format), or an error naming the key.
Format format_named(const std::string& file, const std::string& key, const std::string& name) {
  if (const std::optional<Format> f = sparse_mm_format(name)) return *f;
  throw std::invalid_argument(file + ": " + key + "=" + name + " is not a format of the probe (f16, bf16, e4m3, f32)");
}

std::size_t code_bytes(Format f) { return static_cast<std::size_t>(info(f).storage_bits / 8); }

std::uint64_t count_matches(const std::vector<std::uint32_t>& got, const std::vector<std::uint32_t>& want,
                            std::size_t outputs) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < outputs; ++i) n += got[i] == want[i];
  return n;
}

// "1-4, 6, 10-64": ascending counts with runs of consecutive ones joined.
std::string ranges(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    // Appends, not a literal plus a string: GCC 12 warns falsely (-Wrestrict) on those.
    if (!s.empty()) s.append(", ");
    s.append(std::to_string(v[i]));
    if (j > i) s.append("-").append(std::to_string(v[j]));
    i = j + 1;
  }
  return s;
}

}  // namespace

std::optional<Format> sparse_mm_format(std::string_view name) {
  if (name == "f16") return Format::float16;
  if (name == "bf16") return Format::bfloat16;
  if (name == "f32") return Format::float32;
  if (name == "e4m3") return Format::float8_e4m3fn;
  return std::nullopt;
}

const char* sparse_mm_format_name(Format f) {
  switch (f) {
    case Format::float16: return "f16";
    case Format::bfloat16: return "bf16";
    case Format::float32: return "f32";
    case Format::float8_e4m3fn: return "e4m3";
    default: return "?";
  }
}

std::string SparseMmStudy::exact_text() const { return ranges(exact); }

bool SparseMmStudy::header_slices_fit() const {
  return run.slices > 0 && std::find(exact.begin(), exact.end(), run.slices) != exact.end();
}

SparseMmRun read_sparse_mm_file(const std::filesystem::path& path) {
  detail::RunFile f(path, "blockscale-sparse-mm");
  const std::string& file = f.file();
  // The sizes: 1 .. 2^20 each, so that the byte counts below cannot overflow.
  const auto count = [&](const std::string& key) { return static_cast<int>(f.count(key, 1 << 20)); };

  SparseMmRun r;
  r.file = path.filename().string();
  r.library = f.get("library");
  r.backend = f.get("backend");
  r.gpu = f.has("gpu") ? f.get("gpu") : "";
  r.kernel = f.has("kernel") ? f.get("kernel") : "";
  r.input = format_named(file, "a", f.get("a"));
  if (format_named(file, "b", f.get("b")) != r.input) {
    throw std::invalid_argument(file + ": a=" + f.get("a") + " and b=" + f.get("b") +
                                ": torch._cslt_sparse_mm takes one format for A and B");
  }
  r.m = count("m"), r.n = count("n"), r.k = count("k");
  if (f.has("error")) {
    r.error = f.text("error");
    if (f.body_size() != 0) throw std::invalid_argument(file + ": a refused call (error=) carries no arrays");
    return r;
  }
  r.output = format_named(file, "out", f.get("out"));
  if (f.has("slices")) r.slices = count("slices");
  if (f.has("repeats_identical")) r.repeats_identical = f.choice("repeats_identical", {"0", "1"}) == 1;
  const std::size_t m = static_cast<std::size_t>(r.m), n = static_cast<std::size_t>(r.n), k = static_cast<std::size_t>(r.k);
  const std::size_t in_bytes = code_bytes(r.input), out_bytes = code_bytes(r.output);
  f.expect_body((m * k + n * k) * in_bytes + m * n * out_bytes,
                "A (" + std::to_string(m) + " x " + std::to_string(k) + "), B^T (" + std::to_string(n) + " x " +
                    std::to_string(k) + ") and D (" + std::to_string(m) + " x " + std::to_string(n) + ")");
  r.a = f.codes(m * k, in_bytes);
  r.b_t = f.codes(n * k, in_bytes);
  r.d = f.codes(m * n, out_bytes);
  return r;
}

std::vector<SparseMmRun> read_sparse_mm_runs(const std::filesystem::path& dir) {
  std::vector<SparseMmRun> runs;
  for (const auto& path : files_with_extension(dir, ".sparse_mm")) runs.push_back(read_sparse_mm_file(path));
  return runs;
}

SparseMmStudy fit_sparse_mm(SparseMmRun run, int max_slices) {
  if (max_slices < 1) throw std::invalid_argument("fit_sparse_mm: max_slices must be >= 1, got " + std::to_string(max_slices));
  SparseMmStudy st;
  st.run = std::move(run);
  const auto finish = [&st] {
    st.run.a.clear();
    st.run.b_t.clear();
    st.run.d.clear();
    return std::move(st);
  };
  const SparseMmRun& r = st.run;
  if (!r.error.empty()) return finish();
  em::SparseGemmSchedule schedule;
  try {
    schedule = em::cusparselt_schedule(r.input, r.output, 1);
  } catch (const std::invalid_argument& e) {
    st.why_not = e.what();
    return finish();
  }
  st.model = schedule.name() + ", split-K S of tiles of " + std::to_string(schedule.tile_k) + " added pairwise, D " +
             sparse_mm_format_name(r.output) + (r.output == Format::float8_e4m3fn ? " (RNE, saturating)" : r.output == Format::float32 ? "" : " (RNE)");
  if (em::cusparselt_kernel(r.input, r.output).a_rounding == em::CusparseltRounding::tf32_cusparselt_sparse) {
    st.model += "; A rounded to tf32 as cuSPARSELt's sparse operand, B to nearest even";
  }
  if (r.k % schedule.tile_k != 0) {
    st.why_not = "K = " + std::to_string(r.k) + " is not a multiple of the kernel's K tile of " + std::to_string(schedule.tile_k);
    return finish();
  }
  st.tiles = r.k / schedule.tile_k;
  st.tried = std::min(st.tiles, max_slices);
  std::vector<int> candidates;
  for (int s = 1; s <= st.tried; ++s) candidates.push_back(s);
  if (r.slices > st.tried && r.slices <= st.tiles) candidates.push_back(r.slices);

  const std::size_t m = static_cast<std::size_t>(r.m), n = static_cast<std::size_t>(r.n), k = static_cast<std::size_t>(r.k);
  const em::CodeMatrix b(r.input, k, n, std::span<const std::uint32_t>(r.b_t), em::Order::col_major);
  // Each output depends on its row of A only, so D is checked in blocks of rows, 1, 3, 12, 48, ...
  // (each block three times the rows before it), and an S leaves at the first block where it
  // misses an output: a wrong S costs only the rows up to its first miss. When every S has left,
  // those that left last (they matched every row before that block) are run on the whole matrix,
  // and the best is the one with the most matching outputs (the smallest S among equals).
  st.outputs = m * n;
  // The whole of A first: an element or group the model refuses is named by its row in A.
  em::SparseOperand whole;
  try {
    whole = em::cusparselt_compress(em::CodeMatrix(r.input, m, k, std::span<const std::uint32_t>(r.a)));
  } catch (const std::invalid_argument& e) {
    st.why_not = std::string("A of this run is outside the model: ") + e.what();
    return finish();
  }
  std::size_t r0 = 0;
  std::vector<int> left_last;
  while (r0 < m && !candidates.empty()) {
    const std::size_t r1 = std::min(m, r0 == 0 ? 1 : 4 * r0);
    // Rows r0 .. r1 of the compressed A, sharing its words (no second rounding or compression).
    const std::size_t half = k / 2;
    em::SparseOperand a;
    a.storage = whole.storage;
    a.values = em::CodeMatrix(whole.values.format(), r1 - r0, half,
                              std::span<const std::uint32_t>(*whole.storage).subspan(r0 * half, (r1 - r0) * half));
    a.index.assign(whole.index.begin() + static_cast<std::ptrdiff_t>(r0 * half),
                   whole.index.begin() + static_cast<std::ptrdiff_t>(r1 * half));
    const std::vector<std::uint32_t> want(r.d.begin() + static_cast<std::ptrdiff_t>(r0 * n),
                                          r.d.begin() + static_cast<std::ptrdiff_t>(r1 * n));
    std::vector<int> stay;
    for (int s : candidates) {
      if (count_matches(em::cusparselt_sparse_mm(r.output, a, b, s), want, want.size()) == want.size()) stay.push_back(s);
    }
    left_last = std::move(candidates);
    candidates = std::move(stay);
    r0 = r1;
  }
  if (!candidates.empty()) {
    st.exact = candidates;
    st.best = candidates.front();
    st.matches = st.outputs;
    return finish();
  }
  for (int s : left_last) {
    const std::uint64_t matches = count_matches(em::cusparselt_sparse_mm(r.output, whole, b, s), r.d, st.outputs);
    if (st.best == 0 || matches > st.matches) st.best = s, st.matches = matches;
  }
  return finish();
}

std::string sparse_mm_table(const std::vector<SparseMmStudy>& studies) {
  // The classic locale, whatever the program's global one (which may group digits).
  std::ostringstream s;
  s.imbue(std::locale::classic());
  for (const SparseMmStudy& st : studies) {
    const SparseMmRun& r = st.run;
    s << r.file << ": " << r.backend << " " << sparse_mm_format_name(r.input);
    if (r.error.empty()) s << " -> " << sparse_mm_format_name(r.output);
    s << ", " << r.m << " x " << r.n << " x " << r.k << " (" << r.library << ")\n";
    if (!r.error.empty()) {
      s << "    not run: " << r.error << "\n";
      continue;
    }
    if (!st.why_not.empty()) {
      s << "    no model: " << st.why_not << "\n";
      continue;
    }
    s << "    model: " << st.model << "\n";
    if (st.bit_exact()) {
      s << "    BIT-EXACT " << st.outputs << " outputs with S = " << st.exact_text()
        << (st.exact.size() > 1 ? " (the data do not tell these apart)" : "");
    } else {
      s << "    MISMATCH: best S = " << st.best << ", " << st.matches << "/" << st.outputs << " outputs match";
    }
    s << " (S = 1.." << st.tried << (r.slices > st.tried && r.slices <= st.tiles ? " and " + std::to_string(r.slices) : "")
      << " tried of " << st.tiles << " tiles";
    if (r.slices > 0) s << "; the header's slices=" << r.slices << (st.header_slices_fit() ? " fits" : " does not fit");
    s << ")\n";
    if (!r.repeats_identical) s << "    note: the library's repeated calls gave different bits\n";
  }
  return s.str();
}

}  // namespace blockscale::harness
