// SPDX-License-Identifier: Apache-2.0
#include "blockscale/golden/set.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "blockscale/golden/npy.h"

namespace blockscale::golden {
namespace fs = std::filesystem;

DataKind default_data(std::string_view op) {
  return op == "conversions" || op.rfind("convert:", 0) == 0 ? DataKind::edge : DataKind::mixed;
}

std::vector<GoldenFile> generate_set(
    std::string_view op_or_family, std::uint64_t seed, std::optional<DataKind> data,
    std::optional<std::size_t> cases,
    const std::function<void(std::size_t, std::size_t, const GoldenFile&)>& done) {
  std::vector<std::unique_ptr<Operation>> ops;
  const auto names = family_names();
  if (std::find(names.begin(), names.end(), op_or_family) != names.end()) {
    ops = family(op_or_family);
  } else {
    ops.push_back(operation_from_id(op_or_family));
  }
  GenerateOptions o;
  o.seed = seed;
  o.data = data.value_or(default_data(op_or_family));
  o.cases = cases;
  std::vector<GoldenFile> out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    out.push_back(generate(*ops[i], o));
    if (done) done(i, ops.size(), out.back());
  }
  return out;
}

namespace {

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

}  // namespace

Manifest write_set(const fs::path& dir, const std::vector<GoldenFile>& files, const std::string& operation,
                   std::optional<std::uint64_t> seed, const std::string& data, bool npy) {
  // verify takes every .txt and .npy beside a manifest as the set's (verify.cpp): a file there that
  // this set does not write (another set's, or an earlier --npy run's companion) would make the set
  // just written fail its own verification, so it is refused before anything is written.
  std::set<std::string> written;
  for (const GoldenFile& f : files) {
    written.insert(f.name);
    if (npy) written.insert(f.name.substr(0, f.name.size() - 4) + ".npy");
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path name = e.path().filename();
    if ((name.extension() == ".txt" || name.extension() == ".npy") && !written.count(name.string())) {
      throw std::invalid_argument(dir.string() + " holds " + name.string() +
                                  ", which this set does not write: its manifest would not list it and golden verify "
                                  "would refuse the set (give a new or empty directory, or remove the file)");
    }
  }
  fs::create_directories(dir);
  Manifest m;
  m.generator = generator_version();
  m.operation = operation;
  m.seed = seed;
  m.data = data;
  for (const GoldenFile& f : files) {
    const std::string text = format_golden(f);
    // Read back what is about to be written: the file must parse and match its operation.
    const GoldenFile back = parse_golden(text, f.name);
    const auto op = make_operation(back);
    write_bytes(dir / f.name, text);
    m.files.push_back({f.name, op->id(), to_string(f.header.kind), f.cases(), sha256_hex(text), ""});
    m.cases += f.cases();
    if (npy) {
      const std::string bin = npy_companion(back);
      std::string name = f.name.substr(0, f.name.size() - 4) + ".npy";
      write_bytes(dir / name, bin);
      m.files.push_back({name, "", "npy", f.cases(), sha256_hex(bin), f.name});
    }
  }
  write_bytes(dir / "manifest.json", format_manifest(m));
  return m;
}

}  // namespace blockscale::golden
