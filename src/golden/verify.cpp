// SPDX-License-Identifier: Apache-2.0
#include "blockscale/golden/verify.h"

#include <algorithm>
#include <map>
#include <set>

#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/golden/json_text.h"
#include "blockscale/golden/manifest.h"
#include "blockscale/golden/npy.h"
#include "blockscale/golden/operation.h"

namespace blockscale::golden {
namespace fs = std::filesystem;

namespace {

std::string field_values(const FieldSpec& f, std::span<const std::uint64_t> w) {
  std::vector<FieldSpec> one = {f};
  return format_case(one, w);
}

constexpr std::uint64_t kProgressEvery = 4096;

}  // namespace

FileReport verify_golden(const GoldenFile& f, const VerifyOptions& o) {
  const blockscale::detail::IeeeMode ieee;  // the outputs are recomputed in IEEE mode
  FileReport r;
  r.path = f.name;
  r.kind = to_string(f.header.kind);
  std::unique_ptr<Operation> op;
  try {
    op = make_operation(f);
  } catch (const GoldenError& e) {
    r.error = e.what();
    return r;
  }
  r.operation = op->id();
  r.cases = f.cases();
  const auto& fields = f.header.fields;
  const std::size_t ni = input_words(fields), no = f.words_per_case - ni;
  std::vector<std::uint64_t> out(no);
  for (std::size_t i = 0; i < f.cases(); ++i) {
    const auto w = f.case_words(i);
    std::string why;
    bool computed = true;
    try {
      op->compute(w.subspan(0, ni), out);
    } catch (const std::exception& e) {
      computed = false;
      why = std::string("cannot compute: ") + e.what();
    }
    bool same = computed && std::equal(out.begin(), out.end(), w.begin() + static_cast<std::ptrdiff_t>(ni));
    if (!same) {
      ++r.mismatches;
      if (r.first.size() < o.max_report) {
        Mismatch m;
        m.index = i;
        m.line = f.case_lines[i];
        m.expected_line = format_case(fields, w);
        if (computed) {
          std::vector<std::uint64_t> mine(w.begin(), w.end());
          std::copy(out.begin(), out.end(), mine.begin() + static_cast<std::ptrdiff_t>(ni));
          m.computed_line = format_case(fields, mine);
          std::size_t at = ni;
          for (const FieldSpec& s : fields) {
            if (!s.output) continue;
            const auto exp = w.subspan(at, s.count);
            const auto got = std::span<const std::uint64_t>(out).subspan(at - ni, s.count);
            if (!std::equal(exp.begin(), exp.end(), got.begin())) {
              why += (why.empty() ? "" : "; ") + s.name + ": expected " + field_values(s, exp) +
                     ", blockscale gives " + field_values(s, got);
            }
            at += s.count;
          }
        }
        m.detail = why;
        r.first.push_back(std::move(m));
      }
    }
    if (o.progress && (i + 1) % kProgressEvery == 0) o.progress(r.path, i + 1, f.cases());
  }
  if (o.progress) o.progress(r.path, f.cases(), f.cases());
  return r;
}

FileReport verify_file(const fs::path& path, const VerifyOptions& o) {
  // A file that cannot be read is that file's error: the other files of the run are still verified.
  FileReport r;
  r.path = path.string();
  try {
    return verify_golden(read_golden(path), o);
  } catch (const GoldenError& e) {
    r.error = e.what();
  } catch (const std::exception& e) {
    r.error = path.string() + ": cannot be read: " + e.what();
  }
  return r;
}

std::vector<FileReport> verify_manifest(const fs::path& path, const VerifyOptions& o) {
  std::vector<FileReport> out;
  Manifest m;
  try {
    m = read_manifest(path);
  } catch (const GoldenError& e) {
    FileReport r;
    r.path = path.string();
    r.kind = "manifest";
    r.error = e.what();
    out.push_back(std::move(r));
    return out;
  }
  const fs::path dir = path.parent_path();
  std::map<std::string, GoldenFile> parsed;  // text files by manifest path, for their companions
  std::set<std::string> listed;
  for (const ManifestFile& mf : m.files) {
    const fs::path p = dir / mf.path;
    listed.insert(fs::path(mf.path).lexically_normal().generic_string());
    FileReport r;
    r.path = p.string();
    r.kind = mf.kind;
    r.operation = mf.operation;
    const auto manifest_error = [&](const std::string& what) {
      r.error = path.string() + ": " + mf.path + ": " + what;
      out.push_back(r);
    };
    std::string bytes;
    try {
      bytes = read_file_bytes(p);
    } catch (const GoldenError&) {
      manifest_error("listed in the manifest but cannot be read");
      continue;
    }
    const std::string sha = sha256_hex(bytes);
    if (sha != mf.sha256) {
      manifest_error("SHA-256 mismatch: the manifest records " + mf.sha256 + ", the file has " + sha);
      continue;
    }
    if (mf.kind == "npy") {
      const auto it = parsed.find(mf.companion_of);
      if (it == parsed.end()) {
        manifest_error("companion of " + quote(mf.companion_of) + ", which is not listed before it");
        continue;
      }
      try {
        check_npy_companion(bytes, p.string(), it->second);
        r.cases = it->second.cases();
      } catch (const GoldenError& e) {
        r.error = e.what();
      }
      out.push_back(std::move(r));
      continue;
    }
    GoldenFile f;
    try {
      f = parse_golden(bytes, p.string());
    } catch (const GoldenError& e) {
      r.error = e.what();
      out.push_back(std::move(r));
      continue;
    }
    if (to_string(f.header.kind) != mf.kind) {
      manifest_error("the manifest says kind " + quote(mf.kind) + ", the file has @kind " +
                     to_string(f.header.kind));
      continue;
    }
    if (f.cases() != mf.cases) {
      manifest_error("the manifest records " + std::to_string(mf.cases) + " cases, the file has " +
                     std::to_string(f.cases()));
      continue;
    }
    FileReport v = verify_golden(f, o);
    if (v.error.empty() && v.operation != mf.operation) {
      v.error = path.string() + ": " + mf.path + ": the manifest records operation " +
                quote(mf.operation, 200) + ", the file holds " + quote(v.operation, 200);
    }
    parsed.emplace(mf.path, std::move(f));
    out.push_back(std::move(v));
  }
  // Every golden text file in the set's directory must be listed (a stray file would go unverified).
  std::error_code ec;
  std::vector<fs::path> present;
  for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
    if (e.is_regular_file() && (e.path().extension() == ".txt" || e.path().extension() == ".npy"))
      present.push_back(e.path());
  }
  std::sort(present.begin(), present.end());
  for (const fs::path& p : present) {
    if (!listed.count(p.filename().generic_string())) {
      FileReport r;
      r.path = p.string();
      r.error =
          path.string() + ": " + p.filename().string() + " is in the set's directory but not in its manifest";
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<FileReport> verify_paths(const std::vector<fs::path>& paths, const VerifyOptions& o) {
  std::vector<FileReport> out;
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> manifests, texts;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (!it->is_regular_file()) continue;
        if (it->path().filename() == "manifest.json")
          manifests.push_back(it->path());
        else if (it->path().extension() == ".txt")
          texts.push_back(it->path());
      }
      if (manifests.empty() && texts.empty()) {
        // A directory without a golden file is a wrong path, not a successful verification.
        FileReport r;
        r.path = p.string();
        r.error = p.string() + ": no golden files here (no manifest.json and no .txt file, searched recursively)";
        out.push_back(std::move(r));
        continue;
      }
      std::sort(manifests.begin(), manifests.end());
      std::sort(texts.begin(), texts.end());
      std::set<fs::path> covered;
      for (const fs::path& m : manifests) covered.insert(m.parent_path());
      for (const fs::path& m : manifests) {
        auto r = verify_manifest(m, o);
        out.insert(out.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
      }
      for (const fs::path& t : texts) {
        if (!covered.count(t.parent_path())) out.push_back(verify_file(t, o));
      }
      continue;
    }
    if (p.extension() == ".json") {
      auto r = verify_manifest(p, o);
      out.insert(out.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
    } else {
      out.push_back(verify_file(p, o));
    }
  }
  return out;
}

std::string to_json(const FileReport& r) {
  std::string s =
      "{\"path\": \"" + json_escape(r.path) + "\", \"kind\": \"" + json_escape(r.kind) +
      "\", \"operation\": \"" + json_escape(r.operation) + "\", \"cases\": " + std::to_string(r.cases) +
      ", \"mismatches\": " + std::to_string(r.mismatches) + ", \"ok\": " + (r.ok() ? "true" : "false");
  if (!r.error.empty()) s += ", \"error\": \"" + json_escape(r.error) + "\"";
  s += ", \"first_mismatches\": [";
  for (std::size_t i = 0; i < r.first.size(); ++i) {
    const Mismatch& m = r.first[i];
    s += (i ? ", " : "") + std::string("{\"case\": ") + std::to_string(m.index) +
         ", \"line\": " + std::to_string(m.line) + ", \"detail\": \"" + json_escape(m.detail) +
         "\", \"expected\": \"" + json_escape(m.expected_line) + "\", \"computed\": \"" +
         json_escape(m.computed_line) + "\"}";
  }
  return s + "]}";
}

}  // namespace blockscale::golden
