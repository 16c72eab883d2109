// SPDX-License-Identifier: Apache-2.0
#include "blockscale/golden/km.h"

#include <bit>
#include <cmath>

#include "blockscale/emulator/instruction.h"
#include "blockscale/formats/presets.h"
#include "blockscale/golden/operation.h"

namespace blockscale::golden {
namespace fs = std::filesystem;

const std::vector<KmSet>& km_sets() {
  using C = KmSet::C;
  // data/km-tensor-core-vectors/README.md, "Which instruction produced each file".
  static const std::vector<KmSet> sets = {
      {"H100", "E4M3", "fp32", "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", C::zero},
      {"H100", "E5M2", "fp32", "sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e5m2", C::zero},
      {"H200", "E4M3", "fp32", "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", C::zero},
      {"H200", "E5M2", "fp32", "sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e5m2", C::zero},
      {"H100", "E4M3", "fp16", "sm_90a mma.sync.aligned m16n8k32 f16 e4m3 e4m3", C::fp16},
      {"H100", "E5M2", "fp16", "sm_90a mma.sync.aligned m16n8k32 f16 e5m2 e5m2", C::fp16},
      {"H200", "E4M3", "fp16", "sm_90a mma.sync.aligned m16n8k32 f16 e4m3 e4m3", C::fp16},
      {"H200", "E5M2", "fp16", "sm_90a mma.sync.aligned m16n8k32 f16 e5m2 e5m2", C::fp16},
      {"B200", "E4M3", "fp32", "sm_100a mma.sync.aligned m16n8k32 f32 e4m3 e4m3", C::fp32},
      {"B200", "E5M2", "fp32", "sm_100a mma.sync.aligned m16n8k32 f32 e5m2 e5m2", C::fp32},
      {"B200", "E4M3", "fp16", "sm_100a mma.sync.aligned m16n8k32 f16 e4m3 e4m3", C::fp16},
      {"B200", "E5M2", "fp16", "sm_100a mma.sync.aligned m16n8k32 f16 e5m2 e5m2", C::fp16},
      {"H100", "fp16", "fp32", "sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", C::fp32},
      {"H200", "fp16", "fp32", "sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", C::fp32},
      {"B200", "fp16", "fp32", "sm_100a mma.sync.aligned m16n8k16 f32 f16 f16", C::fp32},
      {"H100", "fp16", "fp16", "sm_90a mma.sync.aligned m16n8k16 f16 f16 f16", C::fp16},
      {"H200", "fp16", "fp16", "sm_90a mma.sync.aligned m16n8k16 f16 f16 f16", C::fp16},
      {"B200", "fp16", "fp16", "sm_100a mma.sync.aligned m16n8k16 f16 f16 f16", C::fp16},
      {"H100", "bf16", "fp32", "sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16", C::fp32},
      {"H200", "bf16", "fp32", "sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16", C::fp32},
      {"B200", "bf16", "fp32", "sm_100a mma.sync.aligned m16n8k16 f32 bf16 bf16", C::fp32},
      {"H100", "tf32", "fp32", "sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32", C::fp32},
      {"H200", "tf32", "fp32", "sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32", C::fp32},
      {"B200", "tf32", "fp32", "sm_100a mma.sync.aligned m16n8k8 f32 tf32 tf32", C::fp32},
      {"Ada", "E4M3", "fp32", "sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3", C::fp32},
      {"Ada", "E5M2", "fp32", "sm_89 mma.sync.aligned m16n8k32 f32 e5m2 e5m2", C::fp32},
      {"Ada", "E4M3", "fp16", "sm_89 mma.sync.aligned m16n8k32 f16 e4m3 e4m3", C::fp16},
      {"Ada", "E5M2", "fp16", "sm_89 mma.sync.aligned m16n8k32 f16 e5m2 e5m2", C::fp16},
      {"Ada", "fp16", "fp32", "sm_89 mma.sync.aligned m16n8k16 f32 f16 f16", C::fp32},
      {"Ada", "fp16", "fp16", "sm_89 mma.sync.aligned m16n8k16 f16 f16 f16", C::fp16},
      {"Ada", "bf16", "fp32", "sm_89 mma.sync.aligned m16n8k16 f32 bf16 bf16", C::fp32},
      {"Ada", "tf32", "fp32", "sm_89 mma.sync.aligned m16n8k8 f32 tf32 tf32", C::fp32},
  };
  return sets;
}

namespace {

constexpr std::size_t kVectors = 5000;  // every K&M file has exactly 5000 lines (README)

// Values per a_ / b_ line, the products of one dot product (README, "a_ and b_": fp8 32; fp16 and
// bf16 16, on Ada 8; tf32 4). A line with fewer would import as zeros and then read as the
// hardware disagreeing with the model.
std::size_t values_per_line(const KmSet& s) {
  const std::string format = s.format;
  if (format == "E4M3" || format == "E5M2") return 32;
  if (format == "tf32") return 4;
  return std::string(s.gpu) == "Ada" ? 8 : 16;
}

struct Lines {
  std::string path;
  std::string text;
  std::vector<std::string_view> lines;
};

Lines read_lines(const fs::path& p) {
  Lines l{p.string(), read_text_file(p), {}};
  std::string_view s = l.text;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t e = s.find('\n', pos);
    if (e == std::string_view::npos) e = s.size();
    l.lines.push_back(s.substr(pos, e - pos));
    pos = e + 1;
  }
  if (l.lines.size() != kVectors) {
    throw GoldenError(
        l.path, 0, "expected " + std::to_string(kVectors) + " lines, got " + std::to_string(l.lines.size()));
  }
  return l;
}

// An a_/b_ line: fp32 patterns as 8 hex digits, each followed by one space.
std::vector<std::uint32_t> hex_words(const Lines& l, std::size_t i) {
  std::vector<std::uint32_t> out;
  const std::string_view s = l.lines[i];
  if (s.size() % 9 != 0 || s.empty())
    throw GoldenError(l.path, i + 1, "expected 8-hex-digit words each followed by a space");
  for (std::size_t p = 0; p < s.size(); p += 9) {
    std::uint32_t v = 0;
    for (std::size_t d = 0; d < 8; ++d) {
      const char c = s[p + d];
      int h = -1;
      if (c >= '0' && c <= '9') h = c - '0';
      if (c >= 'a' && c <= 'f') h = c - 'a' + 10;
      if (h < 0) throw GoldenError(l.path, i + 1, "bad hex digit " + quote(std::string_view(&s[p + d], 1)));
      v = (v << 4) | static_cast<std::uint32_t>(h);
    }
    if (s[p + 8] != ' ') throw GoldenError(l.path, i + 1, "expected a space after each word");
    out.push_back(v);
  }
  return out;
}

// A c_/d_ line: 32 binary digits of an fp32 pattern.
std::uint32_t binary_word(const Lines& l, std::size_t i) {
  const std::string_view s = l.lines[i];
  if (s.size() != 32) throw GoldenError(l.path, i + 1, "expected 32 binary digits, got " + quote(s));
  std::uint32_t v = 0;
  for (char c : s) {
    if (c != '0' && c != '1') throw GoldenError(l.path, i + 1, "expected 32 binary digits, got " + quote(s));
    v = (v << 1) | static_cast<std::uint32_t>(c - '0');
  }
  return v;
}

// An input the README guarantees exact in `f`, as its code (tf32: the fp32 word itself).
std::uint32_t operand_code(Format f, std::uint32_t fp32, const Lines& l, std::size_t i) {
  if (f == Format::tfloat32) {
    if (fp32 & 0x1FFFu) throw GoldenError(l.path, i + 1, "a tf32 input with nonzero low 13 bits");
    return fp32;
  }
  const std::uint32_t code = convert(f, std::bit_cast<float>(fp32), presets::ieee());
  if (std::bit_cast<std::uint32_t>(to_float(f, code)) != fp32) {
    throw GoldenError(
        l.path, i + 1,
        "input 0x" +
            [&] {
              char b[16];
              std::snprintf(b, sizeof b, "%08x", fp32);
              return std::string(b);
            }() +
            " is not exact in " + to_string(f));
  }
  return code;
}

}  // namespace

std::vector<GoldenFile> import_km(const fs::path& dir, std::size_t max_cases) {
  std::vector<GoldenFile> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw GoldenError(dir.string(), 0, "not a directory (the extracted km-tensor-core-vectors folder, which holds H100/ ...)");
  }
  // Every result file present must be one the table names.
  for (const char* gpu : {"H100", "H200", "B200", "Ada"}) {
    for (const char* fmt : {"E4M3", "E5M2", "fp16", "bf16", "tf32"}) {
      const fs::path folder = dir / gpu / fmt;
      if (!fs::is_directory(folder, ec)) continue;
      for (const auto& e : fs::directory_iterator(folder, ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("d_", 0) != 0) continue;
        bool known = false;
        for (const KmSet& s : km_sets()) {
          known |= n == std::string("d_") + s.gpu + "_" + s.output + ".txt" && std::string(fmt) == s.format &&
                   std::string(gpu) == s.gpu;
        }
        if (!known)
          throw GoldenError(e.path().string(), 0,
                            "a result file that the K&M README does not attribute to an instruction");
      }
    }
  }
  for (const KmSet& s : km_sets()) {
    const fs::path folder = dir / s.gpu / s.format;
    const std::string tag = std::string(s.gpu) + "_";
    const fs::path dpath = folder / ("d_" + tag + s.output + ".txt");
    if (!fs::exists(dpath, ec))
      throw GoldenError(dpath.string(), 0, "missing: every K&M result file is expected");
    const Lines a = read_lines(folder / ("a_" + tag + s.format + ".txt"));
    const Lines b = read_lines(folder / ("b_" + tag + s.format + ".txt"));
    const Lines c = read_lines(folder / ("c_" + tag + "fp32.txt"));
    const Lines d = read_lines(dpath);
    const emulator::Instruction ins = emulator::parse_instruction(s.instruction);
    const Format fa = *emulator::format_of(ins.a), fb = *emulator::format_of(ins.b);
    const bool f16_out = ins.d == emulator::Type::f16;
    const std::size_t k = static_cast<std::size_t>(ins.k);
    const std::size_t n = max_cases > 0 ? std::min(max_cases, kVectors) : kVectors;

    GoldenFile f;
    f.name = std::string("km_") + s.gpu + "_" + s.format + "_d_" + s.output + ".txt";
    Header& h = f.header;
    h.generator = generator_version();
    h.kind = SetKind::instruction;
    h.ops = {ins.name()};
    h.data = "hardware";
    h.sources = {
        std::string(
            "Khattak & Mikaitis hardware vectors, north-numerical-computing/MATLAB-tensor-core commit "
            "b12b5a700957655375a1b0c1d0c26e76065da015, model_validation/") +
            s.gpu + "/" + s.format + "/{a_" + tag + s.format + ", b_" + tag + s.format + ", c_" + tag +
            "fp32, d_" + tag + s.output + "}.txt, vectors 1-" + std::to_string(n) + " of " +
            std::to_string(kVectors) + " (BSD 2-Clause, Copyright (c) 2025 F. A. Khattak and M. Mikaitis)",
        std::string("measured on ") + s.gpu +
            "; instruction as tests/data/km-tensor-core-vectors README attributes it",
    };
    const std::string c_how = s.c == KmSet::C::zero ? "c = 0 (the c_ file is not used by the wgmma program)"
                              : s.c == KmSet::C::fp16
                                  ? "c = fp16(c_ value), round to nearest even (__float2half)"
                                  : "c = the c_ value";
    h.notes = {
        "one dot product per case: a (A row) and b (B column) as the hardware saw them, " + c_how,
        std::string("d: the hardware result") +
            (f16_out ? " (the d_ file's fp32 widening narrowed to fp16, exactly)" : ""),
        "the K&M vectors hold fewer products than K for some folders: the remaining k positions are zero"};
    f.header.fields = {{"a", ElementType::of(fa), k, false},
                       {"b", ElementType::of(fb), k, false},
                       {"c", ElementType::of(f16_out ? Format::float16 : Format::float32), 1, false},
                       {"d", ElementType::of(f16_out ? Format::float16 : Format::float32), 1, true}};
    f.words_per_case = 2 * k + 2;
    const std::size_t values = values_per_line(s);
    for (std::size_t v = 0; v < n; ++v) {
      const auto aw = hex_words(a, v), bw = hex_words(b, v);
      if (aw.size() != values || bw.size() != values || values > k) {
        throw GoldenError(aw.size() != values ? a.path : b.path, v + 1,
                          "a_ and b_ lines hold " + std::to_string(aw.size()) + " and " + std::to_string(bw.size()) +
                              " values; the K&M README gives " + std::to_string(values) + " per line for " + s.format +
                              " on " + s.gpu + " (K is " + std::to_string(k) + ")");
      }
      std::vector<std::uint64_t> w(f.words_per_case, 0);
      for (std::size_t i = 0; i < aw.size(); ++i) {
        w[i] = operand_code(fa, aw[i], a, v);
        w[k + i] = operand_code(fb, bw[i], b, v);
      }
      const std::uint32_t cbits = binary_word(c, v);
      std::uint32_t cw = 0;
      if (s.c == KmSet::C::fp32) cw = cbits;
      if (s.c == KmSet::C::fp16) cw = convert(Format::float16, std::bit_cast<float>(cbits), presets::ieee());
      w[2 * k] = cw;
      const std::uint32_t dbits = binary_word(d, v);
      w[2 * k + 1] = f16_out ? operand_code(Format::float16, dbits, d, v) : dbits;
      f.words.insert(f.words.end(), w.begin(), w.end());
      f.case_lines.push_back(v + 1);
    }
    h.cases = n;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace blockscale::golden
