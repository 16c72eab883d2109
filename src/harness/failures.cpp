// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/failures.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "blockscale/emulator/mma.h"

namespace blockscale::harness {

namespace {

std::string hex_word(std::uint32_t w, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*X", digits, w);
  return buf;
}

int digits_of(Format f) { return f == Format::tfloat32 || f == Format::float32 ? 8 : (width(f) + 3) / 4; }

std::string fma_name(emulator::PromotionFma f) {
  switch (f) {
    case emulator::PromotionFma::scale_product: return "scale_product";
    case emulator::PromotionFma::scale_b_first: return "scale_b_first";
    case emulator::PromotionFma::mul_then_add: return "mul_then_add";
  }
  return "?";
}

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
  return o;
}

}  // namespace

std::vector<FailureCase> failure_cases(const TargetResult& r, const ConformOptions& o, const DeviceDescription& dev) {
  std::vector<FailureCase> out;
  const Target& t = r.target;
  const std::string device = dev.name + (dev.compute_capability.empty() ? "" : " (compute capability " +
                                                                                   dev.compute_capability + ")") +
                             (dev.driver.empty() ? "" : ", driver " + dev.driver) +
                             (dev.cuda_driver.empty() ? "" : ", CUDA " + dev.cuda_driver);
  for (const DataResult& dr : r.data) {
    for (const Mismatch& m : dr.stats.examples) {
      FailureCase f;
      f.kind = t.kind;
      f.target = t.name();
      f.device = device;
      f.data = dr.data;
      f.seed = o.seed;
      f.case_index = m.case_index;
      f.row = m.row;
      f.col = m.col;
      f.device_d = m.device;
      f.model_d = m.model;
      if (t.kind == TargetKind::instruction) {
        const InstructionTarget& it = t.instruction;
        const TileBatch b = make_tiles(it, dr.data, o.seed, m.case_index, 1);
        const std::size_t K = static_cast<std::size_t>(it.k);
        f.a.assign(b.a.begin() + static_cast<std::ptrdiff_t>(m.row * K), b.a.begin() + static_cast<std::ptrdiff_t>((m.row + 1) * K));
        f.b.assign(b.b.begin() + static_cast<std::ptrdiff_t>(m.col * K), b.b.begin() + static_cast<std::ptrdiff_t>((m.col + 1) * K));
        f.c = b.c[m.row * static_cast<std::size_t>(it.n) + m.col];
        if (it.block_scaled) {
          const std::size_t blocks = K / static_cast<std::size_t>(it.block);
          f.sa.assign(b.sfa.begin() + static_cast<std::ptrdiff_t>(m.row * blocks),
                      b.sfa.begin() + static_cast<std::ptrdiff_t>((m.row + 1) * blocks));
          f.sb.assign(b.sfb.begin() + static_cast<std::ptrdiff_t>(m.col * blocks),
                      b.sfb.begin() + static_cast<std::ptrdiff_t>((m.col + 1) * blocks));
        }
      } else {
        f.gemm = t.gemm;
        const GemmProblem p = make_gemm_problem(t.gemm, dr.data, o.seed, m.case_index, o.gemm_sizes);
        const std::size_t K = static_cast<std::size_t>(p.k), blocks = K / static_cast<std::size_t>(t.gemm.block);
        f.bf16_output = p.bf16_output;
        for (std::size_t k = 0; k < K; ++k) {
          f.a.push_back(p.a[m.row * K + k]);
          f.b.push_back(p.b[m.col * K + k]);
        }
        f.sa.assign(p.sfa.begin() + static_cast<std::ptrdiff_t>(m.row * blocks),
                    p.sfa.begin() + static_cast<std::ptrdiff_t>((m.row + 1) * blocks));
        f.sb.assign(p.sfb.begin() + static_cast<std::ptrdiff_t>(m.col * blocks),
                    p.sfb.begin() + static_cast<std::ptrdiff_t>((m.col + 1) * blocks));
        f.has_c = !p.c.empty();
        if (f.has_c) f.c = p.c[m.row * static_cast<std::size_t>(p.n) + m.col];
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::string format_failure(const FailureCase& f) {
  std::ostringstream s;
  s << "blockscale-conformance-failure 1\n"
    << "# One output on which the device and the emulator model disagree (docs/conformance.md).\n"
    << "# Reproduce on any machine: blockscale conform --replay <this file>\n"
    << "kind " << to_string(f.kind) << "\n"
    << "target " << f.target << "\n";
  Format fa, fb, facc = Format::float32, fs = Format::float8_e8m0fnu;
  if (f.kind == TargetKind::instruction) {
    const InstructionTarget t = instruction_target(f.target);
    fa = t.a, fb = t.b, facc = t.acc, fs = t.scale;
  } else {
    const GemmTarget& g = f.gemm;
    fa = g.a, fb = g.b, fs = g.scale;
    s << "gemm " << to_string(g.recipe) << " " << info(g.a).short_name << " " << info(g.b).short_name << " "
      << info(g.scale).short_name << " " << g.block << " "
      << (g.schedule_kind == GemmSchedule::hopper_promotion ? "hopper_promotion" : "tcgen05_chain") << " "
      << g.promotion_interval << " " << fma_name(g.fma) << " " << (f.bf16_output ? "bf16" : "f32") << "\n";
  }
  s << "device " << f.device << "\n"
    << "data " << to_string(f.data) << " seed " << f.seed << " case " << f.case_index << " position " << f.row << " "
    << f.col << "\n";
  auto words = [&](const char* key, const std::vector<std::uint32_t>& v, Format fmt) {
    s << key;
    for (std::uint32_t w : v) s << " " << hex_word(w, digits_of(fmt));
    s << "\n";
  };
  words("a", f.a, fa);
  words("b", f.b, fb);
  s << "c " << (f.has_c ? hex_word(f.c, digits_of(facc)) : std::string("none")) << "\n";
  auto bytes = [&](const char* key, const std::vector<std::uint8_t>& v) {
    s << key;
    for (std::uint8_t w : v) s << " " << hex_word(w, 2);
    s << "\n";
  };
  (void)fs;
  bytes("sa", f.sa);
  bytes("sb", f.sb);
  const int dd = f.kind == TargetKind::gemm ? (f.bf16_output ? 4 : 8) : digits_of(facc);
  s << "device_d " << hex_word(f.device_d, dd) << "\n"
    << "model_d " << hex_word(f.model_d, dd) << "\n";
  return s.str();
}

FailureCase parse_failure(const std::string& text, const std::string& name) {
  FailureCase f;
  std::istringstream in(text);
  std::string line;
  std::size_t ln = 0;
  auto fail = [&](const std::string& what) -> void {
    throw std::invalid_argument(name + ":" + std::to_string(ln) + ": " + what);
  };
  auto hex_value = [&](const std::string& w) -> std::uint32_t {
    if (w.empty() || w.size() > 8 || w.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      fail("'" + w + "' is not a hexadecimal word of at most 8 digits");
    }
    return static_cast<std::uint32_t>(std::stoul(w, nullptr, 16));
  };
  bool header = false, have_target = false, have_d = false, have_m = false;
  while (std::getline(in, line)) {
    ++ln;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (!header) {
      int version = 0;
      if (key != "blockscale-conformance-failure" || !(ls >> version) || version != 1) {
        fail("the first line must be 'blockscale-conformance-failure 1'");
      }
      header = true;
      continue;
    }
    std::string rest;
    std::getline(ls, rest);
    if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
    std::istringstream rs(rest);
    if (key == "kind") {
      if (rest == "instruction") {
        f.kind = TargetKind::instruction;
      } else if (rest == "gemm") {
        f.kind = TargetKind::gemm;
      } else {
        fail("kind must be 'instruction' or 'gemm'");
      }
    } else if (key == "target") {
      f.target = rest;
      have_target = !rest.empty();
    } else if (key == "gemm") {
      std::string recipe, a, b, scale, sched, fma, out;
      int block = 0, P = 0;
      if (!(rs >> recipe >> a >> b >> scale >> block >> sched >> P >> fma >> out)) fail("incomplete 'gemm' line");
      GemmTarget& g = f.gemm;
      if (recipe == "mxfp8") {
        g.recipe = GemmRecipe::mxfp8;
      } else if (recipe == "mxfp4") {
        g.recipe = GemmRecipe::mxfp4;
      } else if (recipe == "nvfp4") {
        g.recipe = GemmRecipe::nvfp4;
      } else {
        fail("unknown recipe '" + recipe + "'");
      }
      const auto pa = parse_format(a), pb = parse_format(b), ps = parse_format(scale);
      if (!pa || !pb || !ps) fail("unknown format in the 'gemm' line");
      g.a = *pa, g.b = *pb, g.scale = *ps;
      if (block != 16 && block != 32) fail("block must be 16 or 32");
      g.block = block;
      if (sched == "hopper_promotion") {
        g.schedule_kind = GemmSchedule::hopper_promotion;
      } else if (sched == "tcgen05_chain") {
        g.schedule_kind = GemmSchedule::tcgen05_chain;
      } else {
        fail("unknown schedule '" + sched + "'");
      }
      g.promotion_interval = P;
      if (fma == "scale_product") {
        g.fma = emulator::PromotionFma::scale_product;
      } else if (fma == "scale_b_first") {
        g.fma = emulator::PromotionFma::scale_b_first;
      } else if (fma == "mul_then_add") {
        g.fma = emulator::PromotionFma::mul_then_add;
      } else {
        fail("unknown promotion FMA '" + fma + "'");
      }
      if (out != "f32" && out != "bf16") fail("output must be f32 or bf16");
      f.bf16_output = out == "bf16";
    } else if (key == "device") {
      f.device = rest;
    } else if (key == "data") {
      std::string d, k1, k2, k3;
      if (!(rs >> d >> k1 >> f.seed >> k2 >> f.case_index >> k3 >> f.row >> f.col) || k1 != "seed" || k2 != "case" ||
          k3 != "position") {
        fail("expected 'data <set> seed <S> case <i> position <row> <col>'");
      }
      const auto dk = parse_data_kind(d);
      if (!dk) fail("unknown data set '" + d + "'");
      f.data = *dk;
    } else if (key == "a" || key == "b") {
      auto& v = key == "a" ? f.a : f.b;
      std::string w;
      while (rs >> w) v.push_back(hex_value(w));
    } else if (key == "c") {
      f.has_c = rest != "none";
      if (f.has_c) f.c = hex_value(rest);
    } else if (key == "sa" || key == "sb") {
      auto& v = key == "sa" ? f.sa : f.sb;
      std::string w;
      while (rs >> w) {
        const std::uint32_t x = hex_value(w);
        if (x > 0xFF) fail("scale codes are bytes");
        v.push_back(static_cast<std::uint8_t>(x));
      }
    } else if (key == "device_d") {
      f.device_d = hex_value(rest);
      have_d = true;
    } else if (key == "model_d") {
      f.model_d = hex_value(rest);
      have_m = true;
    } else {
      fail("unknown key '" + key + "'");
    }
  }
  ln = 0;
  if (!header) fail("empty file");
  if (!have_target) fail("no 'target' line");
  if (!have_d || !have_m) fail("'device_d' and 'model_d' lines are required");
  if (f.a.empty() || f.a.size() != f.b.size()) fail("'a' and 'b' must hold the same, nonzero number of words");
  if (f.sa.size() != f.sb.size()) fail("'sa' and 'sb' must hold the same number of scales");
  f.gemm.name = f.target;
  return f;
}

std::uint32_t replay_model(const FailureCase& f) {
  if (f.kind == TargetKind::instruction) {
    const InstructionTarget t = instruction_target(f.target);
    if (f.a.size() != static_cast<std::size_t>(t.k)) {
      throw std::invalid_argument("'" + f.target + "' takes K = " + std::to_string(t.k) + " codes per operand, the file has " +
                                  std::to_string(f.a.size()));
    }
    std::vector<std::uint32_t> sa(f.sa.begin(), f.sa.end()), sb(f.sb.begin(), f.sb.end());
    return emulator::dot(t.model, f.a, f.b, f.c, sa, sb);
  }
  GemmProblem p;
  p.m = p.n = 1;
  p.k = static_cast<int>(f.a.size());
  p.bf16_output = f.bf16_output;
  for (std::uint32_t w : f.a) p.a.push_back(static_cast<std::uint8_t>(w));
  for (std::uint32_t w : f.b) p.b.push_back(static_cast<std::uint8_t>(w));
  p.sfa = f.sa;
  p.sfb = f.sb;
  if (f.has_c) p.c = {f.c};
  if (p.k % f.gemm.block != 0 || f.sa.size() != static_cast<std::size_t>(p.k / f.gemm.block)) {
    throw std::invalid_argument("the GEMM case needs K / block = " + std::to_string(p.k / f.gemm.block) + " scales per side");
  }
  return emulate_gemm(f.gemm, p).at(0);
}

std::vector<std::filesystem::path> save_failures(const std::filesystem::path& dir, const ConformReport& report,
                                                 const ConformOptions& o) {
  std::vector<std::filesystem::path> written;
  bool made = false;
  for (const TargetResult& r : report.targets) {
    if (r.total.mismatches == 0) continue;
    if (!made) {
      std::filesystem::create_directories(dir);
      made = true;
    }
    std::size_t i = 0;
    for (const FailureCase& f : failure_cases(r, o, report.device)) {
      const std::filesystem::path p =
          dir / (safe_name(f.target) + "." + to_string(f.data) + "." + std::to_string(i++) + ".failure");
      std::ofstream out(p);
      out << format_failure(f);
      if (!out) throw std::runtime_error("cannot write " + p.string());
      written.push_back(p);
    }
  }
  return written;
}

}  // namespace blockscale::harness
