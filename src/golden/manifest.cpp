// SPDX-License-Identifier: Apache-2.0
#include "blockscale/golden/manifest.h"

#include <charconv>

#include "blockscale/golden/file.h"
#include "blockscale/golden/json_text.h"
#include "json.h"

namespace blockscale::golden {

using detail::Json;

std::string format_manifest(const Manifest& m) {
  std::string s = "{\n";
  s += "  \"format\": \"blockscale-golden-manifest\",\n";
  s += "  \"format_version\": " + std::to_string(kFormatVersion) + ",\n";
  s += "  \"generator\": " + json_string(m.generator) + ",\n";
  s += "  \"operation\": " + json_string(m.operation) + ",\n";
  s += "  \"seed\": " + (m.seed ? std::to_string(*m.seed) : std::string("null")) + ",\n";
  s += "  \"data\": " + json_string(m.data) + ",\n";
  s += "  \"cases\": " + std::to_string(m.cases) + ",\n";
  s += "  \"files\": [";
  for (std::size_t i = 0; i < m.files.size(); ++i) {
    const ManifestFile& f = m.files[i];
    s += i ? ",\n" : "\n";
    s += "    {\"path\": " + json_string(f.path) + ", \"kind\": " + json_string(f.kind);
    if (!f.operation.empty()) s += ", \"operation\": " + json_string(f.operation);
    if (!f.companion_of.empty()) s += ", \"companion_of\": " + json_string(f.companion_of);
    s += ", \"cases\": " + std::to_string(f.cases) + ", \"sha256\": " + json_string(f.sha256) + "}";
  }
  s += m.files.empty() ? "]\n" : "\n  ]\n";
  s += "}\n";
  return s;
}

namespace {

struct ManifestReader {
  const std::string& name;

  [[noreturn]] void fail(std::size_t line, const std::string& m) const { throw GoldenError(name, line, m); }

  const Json& need(const Json& obj, std::string_view key, Json::Type type, const char* type_name) const {
    const Json* v = obj.find(key);
    if (!v) fail(obj.line, "manifest: missing key \"" + std::string(key) + "\"");
    if (v->type != type) fail(v->line, "manifest: \"" + std::string(key) + "\" must be " + type_name);
    return *v;
  }
  std::string str(const Json& obj, std::string_view key) const {
    return need(obj, key, Json::Type::string, "a string").text;
  }
  std::uint64_t u64(const Json& v, std::string_view key) const {
    if (v.type != Json::Type::number) fail(v.line, "manifest: \"" + std::string(key) + "\" must be a number");
    std::uint64_t n = 0;
    const auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
    if (ec != std::errc() || p != v.text.data() + v.text.size()) {
      fail(v.line, "manifest: \"" + std::string(key) + "\" must be a non-negative integer below 2^64, got " +
                       quote(v.text));
    }
    return n;
  }
  void check_keys(const Json& obj, std::initializer_list<std::string_view> known) const {
    for (std::size_t i = 0; i < obj.keys.size(); ++i) {
      bool ok = false;
      for (std::string_view kk : known) ok |= obj.keys[i] == kk;
      if (!ok) fail(obj.values[i].line, "manifest: unknown key " + quote(obj.keys[i]));
    }
  }
  void check_path(const std::string& p, std::size_t line) const {
    if (p.empty() || p[0] == '/' || p.find('\\') != std::string::npos || p.find('\0') != std::string::npos) {
      fail(line, "manifest: path " + quote(p) + " must be relative and '/'-separated");
    }
    std::size_t pos = 0;
    while (pos <= p.size()) {
      const std::size_t e = std::min(p.find('/', pos), p.size());
      const std::string seg = p.substr(pos, e - pos);
      if (seg.empty() || seg == "." || seg == "..")
        fail(line, "manifest: path " + quote(p) + " must stay inside the set's directory");
      pos = e + 1;
    }
  }

  Manifest run(std::string_view text) const {
    Json root;
    try {
      root = detail::parse_json(text);
    } catch (const std::invalid_argument& e) {
      // "line N: what": move the line number into the error's place.
      const std::string w = e.what();
      std::size_t line = 0;
      const std::size_t colon = w.find(':');
      std::from_chars(w.data() + 5, w.data() + colon, line);
      fail(line, "malformed JSON: " + w.substr(colon + 2));
    }
    if (root.type != Json::Type::object) fail(root.line, "manifest: the top level must be an object");
    check_keys(root,
               {"format", "format_version", "generator", "operation", "seed", "data", "cases", "files"});
    if (str(root, "format") != "blockscale-golden-manifest") {
      fail(root.line, "manifest: \"format\" must be \"blockscale-golden-manifest\"");
    }
    const Json* ver = root.find("format_version");
    if (!ver) fail(root.line, "manifest: missing key \"format_version\"");
    if (u64(*ver, "format_version") != static_cast<std::uint64_t>(kFormatVersion)) {
      fail(ver->line, "manifest: unsupported format_version " + ver->text);
    }
    Manifest m;
    m.generator = str(root, "generator");
    m.operation = str(root, "operation");
    m.data = str(root, "data");
    const Json* seed = root.find("seed");
    if (!seed) fail(root.line, "manifest: missing key \"seed\"");
    if (seed->type != Json::Type::null) m.seed = u64(*seed, "seed");
    const Json* cases = root.find("cases");
    if (!cases) fail(root.line, "manifest: missing key \"cases\"");
    m.cases = u64(*cases, "cases");
    const Json& files = need(root, "files", Json::Type::array, "an array");
    std::uint64_t total = 0;
    for (const Json& f : files.items) {
      if (f.type != Json::Type::object) fail(f.line, "manifest: each entry of \"files\" must be an object");
      check_keys(f, {"path", "kind", "operation", "companion_of", "cases", "sha256"});
      ManifestFile mf;
      mf.path = str(f, "path");
      check_path(mf.path, f.line);
      mf.kind = str(f, "kind");
      if (mf.kind != "npy" && !parse_set_kind(mf.kind))
        fail(f.line, "manifest: unknown file kind " + quote(mf.kind));
      if (const Json* op = f.find("operation")) {
        if (op->type != Json::Type::string) fail(op->line, "manifest: \"operation\" must be a string");
        mf.operation = op->text;
      }
      if (const Json* c = f.find("companion_of")) {
        if (c->type != Json::Type::string) fail(c->line, "manifest: \"companion_of\" must be a string");
        mf.companion_of = c->text;
        check_path(mf.companion_of, c->line);
      }
      if ((mf.kind == "npy") != !mf.companion_of.empty()) {
        fail(f.line, "manifest: a file has \"companion_of\" exactly when its kind is \"npy\"");
      }
      const Json* c = f.find("cases");
      if (!c) fail(f.line, "manifest: missing key \"cases\"");
      mf.cases = u64(*c, "cases");
      mf.sha256 = str(f, "sha256");
      if (mf.sha256.size() != 64 || mf.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
        fail(f.line, "manifest: \"sha256\" must be 64 lower-case hex digits");
      }
      for (const ManifestFile& g : m.files) {
        if (g.path == mf.path) fail(f.line, "manifest: " + quote(mf.path) + " is listed twice");
      }
      if (mf.kind != "npy") total += mf.cases;
      m.files.push_back(std::move(mf));
    }
    if (total != m.cases) {
      fail(cases->line, "manifest: \"cases\" is " + std::to_string(m.cases) + " but the files list " +
                            std::to_string(total));
    }
    return m;
  }
};

}  // namespace

Manifest parse_manifest(std::string_view text, const std::string& name) {
  return ManifestReader{name}.run(text);
}

Manifest read_manifest(const std::filesystem::path& path) {
  return parse_manifest(read_text_file(path), path.string());
}

}  // namespace blockscale::golden
