// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness for the golden-vector readers: the text format (parse, the operation behind the
// header, every case recomputed) and the JSON manifest. Malformed input must end in a GoldenError
// (never a crash, a sanitizer report, or another exception type), and every file that parses must
// survive a write/parse round trip unchanged. Built as the real fuzzer by tests/fuzz/run_fuzzer.sh
// (clang, -fsanitize=fuzzer,address,undefined) and, with replay_main.cpp, as a plain program that
// replays the committed corpus in CI.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "blockscale/golden/file.h"
#include "blockscale/golden/manifest.h"
#include "blockscale/golden/verify.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void text_file(std::string_view text) {
  using namespace blockscale::golden;
  GoldenFile f;
  try {
    f = parse_golden(text, "fuzz.txt");
  } catch (const GoldenError&) {
    return;
  }
  // Round trip: what the writer makes of a parsed file parses to the same header and cases.
  const std::string again = format_golden(f);
  const GoldenFile g = parse_golden(again, "fuzz.txt");
  check(g.words == f.words && g.header.fields == f.header.fields && g.header.ops == f.header.ops &&
        g.header.modes == f.header.modes && g.cases() == f.cases());
  check(format_golden(g) == again);
  // Semantics: a bad @op or inconsistent @fields is reported in the FileReport, a case that cannot
  // be computed as a mismatch; nothing may escape.
  VerifyOptions o;
  o.max_report = 2;
  const FileReport r = verify_golden(f, o);
  check(r.error.empty() || r.cases == 0);
}

void manifest(std::string_view text) {
  using namespace blockscale::golden;
  try {
    const Manifest m = parse_manifest(text, "manifest.json");
    // Round trip through the writer.
    const Manifest n = parse_manifest(format_manifest(m), "manifest.json");
    check(n.files.size() == m.files.size() && n.cases == m.cases && n.operation == m.operation);
  } catch (const GoldenError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  text_file(text);
  manifest(text);
  (void)blockscale::golden::sha256_hex(text);
  return 0;
}
