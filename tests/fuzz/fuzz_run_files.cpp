// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness for the readers of files that come from outside: the library runs written on a
// GPU machine (`*.scaled_mm`, `*.sparse_mm`: blockscale::harness) and the NumPy matrices of
// `blockscale gemm` (tools/npy.cpp). Every input is written to one scratch file and given to all
// three readers, each of which checks its own magic. A malformed file must end in the reader's
// documented exception (std::invalid_argument, cli::UsageError), never a crash, a sanitizer report
// or another exception type; a file that is read must hold arrays of the sizes its header gives,
// and small runs are fitted (the emulator on arbitrary codes: NaN, Inf, any scale) without a
// failure. Built as the real fuzzer by tests/fuzz/run_fuzzer.sh and, with replay_main.cpp, as a
// plain program that replays the committed corpus in CI.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "blockscale/harness/external.h"
#include "blockscale/harness/sparse_mm.h"
#include "npy.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// Fits are run on runs of at most this many multiply-adds (the fitter tries hundreds of
// schedules; a fuzzer input must stay fast).
constexpr std::size_t kMaxFitMacs = 1 << 12;

void scaled_mm(const std::filesystem::path& path) {
  using namespace blockscale::harness;
  ExternalRun r;
  try {
    r = read_scaled_mm_file(path);
  } catch (const std::invalid_argument&) {
    return;
  }
  if (!r.error.empty()) return check(r.a.empty() && r.d.empty());
  const auto m = static_cast<std::size_t>(r.m), n = static_cast<std::size_t>(r.n), k = static_cast<std::size_t>(r.k);
  check(r.a.size() == m * k && r.b.size() == n * k && r.d.size() == m * n && !r.sa.empty() && !r.sb.empty());
  if (m * n * k <= kMaxFitMacs) {
    const ExternalStudy st = fit_schedules(r);
    for (const ScheduleFit& f : st.fits) check(f.outputs == m * n && f.matches <= f.outputs);
  }
}

void sparse_mm(const std::filesystem::path& path) {
  using namespace blockscale::harness;
  SparseMmRun r;
  try {
    r = read_sparse_mm_file(path);
  } catch (const std::invalid_argument&) {
    return;
  }
  if (!r.error.empty()) return check(r.a.empty() && r.d.empty());
  const auto m = static_cast<std::size_t>(r.m), n = static_cast<std::size_t>(r.n), k = static_cast<std::size_t>(r.k);
  check(r.a.size() == m * k && r.b_t.size() == n * k && r.d.size() == m * n);
  if (m * n * k <= kMaxFitMacs) {
    // A that is not 2:4 sparse, or codes outside the model, come back as why_not; nothing throws.
    const SparseMmStudy st = fit_sparse_mm(r, 4);
    check(st.matches <= st.outputs);
  }
}

void npy(const std::filesystem::path& path) {
  using namespace blockscale::cli;
  try {
    const NpyMatrix mat = read_npy_matrix(path.string());
    check(mat.rows >= 1 && mat.cols >= 1 && mat.values.size() == static_cast<std::size_t>(mat.rows * mat.cols));
  } catch (const UsageError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One scratch file per process (libFuzzer's -jobs runs processes), written for every input and
  // removed after it, so that no run leaves it behind.
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("blockscale_fuzz_run_file_" + std::to_string(::getpid()));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    check(static_cast<bool>(out.flush()));
  }
  scaled_mm(path);
  sparse_mm(path);
  npy(path);
  std::filesystem::remove(path);
  return 0;
}
