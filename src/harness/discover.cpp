// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/discover.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>

#include "blockscale/harness/compare.h"
#include "blockscale/harness/probes.h"

namespace blockscale::harness {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::agrees: return "agrees";
    case Verdict::disagrees: return "DISAGREES";
    case Verdict::consistent: return "consistent";
    case Verdict::undetermined: return "undetermined";
  }
  return "?";
}

bool Discovery::disagrees() const {
  return std::any_of(items.begin(), items.end(), [](const DiscoveryItem& i) { return i.verdict == Verdict::disagrees; });
}

namespace {

using emulator::Algorithm;
using emulator::OutputRounding;

double pow2(int e) { return std::ldexp(1.0, e); }

class Prober {
 public:
  Prober(Device& d, const InstructionTarget& t, Discovery& out) : dev_(d), t_(t), out_(out) {}

  // Device outputs of the dots (D[i][i] of the packed tiles).
  std::vector<std::uint32_t> run(const std::vector<DotCase>& dots) {
    if (dots.empty()) return {};
    out_.probes += dots.size();
    return unpack_dots(t_, dev_.run(t_, pack_dots(t_, dots)), dots.size());
  }
  // The table model's outputs of the same dots.
  std::vector<std::uint32_t> model(const std::vector<DotCase>& dots) {
    if (dots.empty()) return {};
    return unpack_dots(t_, emulate_tiles(t_, pack_dots(t_, dots)), dots.size());
  }
  double value(std::uint32_t code) const { return acc_value(t_.acc, code); }
  // The smallest power of two every output format of this accumulator keeps exactly (normal
  // range only: the output format is what is being discovered).
  int out_min_exp() const { return t_.acc == Format::float16 ? -14 : -126; }
  int out_max_exp() const { return t_.acc == Format::float16 ? 15 : 127; }

 private:
  Device& dev_;
  const InstructionTarget& t_;
  Discovery& out_;
};

struct Sweep {
  std::optional<int> cut;  // F: the number of binades below e_max that still survive
  int lowest_tested = 0;   // 2^t tested down to here (t relative to the pair's 2^X)
};

// The fused set and F: pair +-2^X in slots 0 and 1; 2^t in slot k (or in C for slot -1).
struct StructureResult {
  int X = 0;
  bool ok = false;
  std::vector<int> fused;           // slots fused with 0 and 1 (0 and 1 included)
  std::map<int, int> f_by_slot;     // F seen in each fused slot (2..K-1)
  std::optional<int> f_c;           // F seen for C, when C is truncated
  int c_lowest = 0;                 // C tested down to 2^c_lowest
  int slot_lowest = 0;
};

StructureResult structure(Prober& pr, const InstructionTarget& t) {
  StructureResult r;
  // The largest pair exponent X <= 14 both formats can form (and the output can hold).
  for (int X = 14; X >= -4; --X) {
    DotBuilder d(t, "pair");
    d.product(0, pow2(X));
    d.product(1, -pow2(X));
    if (d.ok() && X <= pr.out_max_exp()) {
      r.X = X;
      r.ok = true;
      break;
    }
  }
  if (!r.ok) return r;
  const int X = r.X;
  std::vector<DotCase> dots;
  std::vector<std::pair<int, int>> meta;  // (slot or -1 for C, t)
  r.slot_lowest = X, r.c_lowest = X;
  for (int k = -1; k < t.k; ++k) {
    if (k == 0 || k == 1) continue;
    for (int tt = X - 1; tt >= X - 48; --tt) {
      if (tt < pr.out_min_exp()) break;
      DotBuilder d(t, "sweep");
      d.product(0, pow2(X));
      d.product(1, -pow2(X));
      if (k < 0) {
        d.c(pow2(tt));
      } else {
        d.product(k, pow2(tt));
      }
      if (!d.ok()) break;
      dots.push_back(d.dot());
      meta.emplace_back(k, tt);
      if (k < 0) {
        r.c_lowest = std::min(r.c_lowest, tt);
      } else {
        r.slot_lowest = std::min(r.slot_lowest, tt);
      }
    }
  }
  const std::vector<std::uint32_t> got = pr.run(dots);
  std::map<int, int> highest_lost;  // per slot: the largest t whose term did not survive
  for (std::size_t i = 0; i < dots.size(); ++i) {
    const auto [k, tt] = meta[i];
    if (pr.value(got[i]) != pow2(tt)) {
      auto it = highest_lost.find(k);
      if (it == highest_lost.end() || it->second < tt) highest_lost[k] = tt;
    }
  }
  r.fused = {0, 1};
  for (const auto& [k, tt] : highest_lost) {
    const int F = X - tt - 1;
    if (k < 0) {
      r.f_c = F;
    } else {
      r.fused.push_back(k);
      r.f_by_slot[k] = F;
    }
  }
  std::sort(r.fused.begin(), r.fused.end());
  return r;
}

std::string slots_text(const std::vector<int>& s, int K) {
  const int n = static_cast<int>(s.size());
  bool prefix = true, interleaved = true;
  for (int i = 0; i < n; ++i) prefix &= s[static_cast<std::size_t>(i)] == i;
  std::vector<int> want;
  for (int k = 0; k < K; ++k)
    if (k % 4 < 2) want.push_back(k);
  interleaved = s == want;
  std::string t = "L = ";
  t += std::to_string(n);
  if (prefix && n == K) {
    t += " (all of K fused)";
  } else if (prefix) {
    t += " (k = 0..";
    t += std::to_string(n - 1);
    t += ", then chained)";
  } else if (interleaved) {
    t += " (k mod 4 in {0,1} fused; k mod 4 in {2,3} chained after)";
  } else {
    t += " (k in {";
    for (int i = 0; i < n; ++i) {
      if (i) t += ",";
      t += std::to_string(s[static_cast<std::size_t>(i)]);
    }
    t += "})";
  }
  return t;
}

// The parameters discovery compares with: the table row's, or the candidate under test.
emulator::FdpaParams model_params(const InstructionTarget& t) { return t.model_params.value_or(t.model.params()); }

std::vector<int> table_fused(const InstructionTarget& t) {
  const emulator::FdpaParams p = model_params(t);
  std::vector<int> s;
  for (int k = 0; k < t.k; ++k) {
    if (p.algorithm == Algorithm::fp8_via_f16 ? k % 4 < 2 : k < std::min(p.L, t.k)) s.push_back(k);
  }
  return s;
}

std::string hex(const InstructionTarget& t, std::uint32_t code) { return hex_code(output_format(t.acc), code); }

}  // namespace

Discovery discover(Device& device, const InstructionTarget& t) {
  if (t.f64) {
    throw std::invalid_argument("'" + t.name + "': discovery measures FDPA parameters (L, F, rounding, e_zero); "
                                "an f64 fma chain has none: run it as a conformance target");
  }
  if (t.sparse) {
    // The probes are dense dot products packed on a tile's diagonal (pack_dots); a sparse form is
    // its dense form of K/2 on the stored values (docs/emulator.md, "Sparse MMA").
    throw std::invalid_argument("'" + t.name + "': discovery probes dense dot products; discover the dense form '" +
                                t.model.dense_form().name() + "' and run the sparse form as a conformance target");
  }
  Discovery out;
  out.instruction = t.name;
  out.row = std::string(t.model.row->id);
  out.model_override = t.model_override;
  Prober pr(device, t, out);
  const emulator::FdpaParams p = model_params(t);
  const bool emulated = p.algorithm == Algorithm::fp8_via_f16;
  auto add = [&](std::string param, std::string found, std::string table, Verdict v, std::string evidence) {
    out.items.push_back({std::move(param), std::move(found), std::move(table), v, std::move(evidence)});
  };

  // ---- Structure and F.
  const StructureResult st = structure(pr, t);
  std::optional<int> F;
  if (!st.ok) {
    add("fused width L", "-", slots_text(table_fused(t), t.k), Verdict::undetermined,
        "no cancelling pair +-2^X can be formed in these operand formats");
  } else {
    std::map<int, int> votes;
    for (const auto& [k, f] : st.f_by_slot) ++votes[f];
    if (!votes.empty()) {
      F = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    }
    const std::vector<int> want = table_fused(t);
    const bool fused_ok = st.fused == want;
    add("fused width L", slots_text(st.fused, t.k), slots_text(want, t.k),
        fused_ok ? Verdict::agrees : Verdict::disagrees,
        "slots whose 2^t is truncated against +-2^" + std::to_string(st.X) + " in slots 0 and 1");
    if (F) {
      const bool same = votes.size() == 1;
      std::string found = std::to_string(*F) + (same ? "" : " (position-dependent!)");
      add("fraction bits F", found, std::to_string(p.F), same && *F == p.F ? Verdict::agrees : Verdict::disagrees,
          "2^t survives down to t = " + std::to_string(st.X - *F) + " with e_max = " + std::to_string(st.X) + " in " +
              std::to_string(st.f_by_slot.size()) + " slots");
    } else {
      add("fraction bits F", "> " + std::to_string(st.X - st.slot_lowest - 1), std::to_string(p.F),
          Verdict::undetermined,
          "no product was truncated down to 2^" + std::to_string(st.slot_lowest) + " (operand range exhausted)");
    }
    // C: fused (truncated like a product) or added after.
    const std::string table_c = emulated ? "added after the products (RNE add)" : "fused (aligned with the products)";
    if (st.f_c) {
      const std::string found = "fused (aligned with the products), F_C = " + std::to_string(*st.f_c);
      add("C placement", found, table_c, !emulated && (!F || *st.f_c == *F) ? Verdict::agrees : Verdict::disagrees,
          "C = 2^t is truncated below 2^" + std::to_string(st.X - *st.f_c));
    } else {
      // The emulation probe (d.3-1): C = 2^7 and 0.75 ulp of it in one product.
      const int ulp_exp = 7 - (t.acc == Format::float16 ? 10 : 23);
      DotBuilder d(t, "emulation probe");
      d.c(128.0);
      d.product(0, 0.75 * pow2(ulp_exp));
      std::string found = "added after the products (never truncated down to 2^" + std::to_string(st.c_lowest) + ")";
      Verdict v = emulated ? Verdict::agrees : Verdict::disagrees;
      std::string ev = "C = 2^t survives every alignment";
      if (d.ok()) {
        const double r = pr.value(pr.run({d.dot()}).at(0));
        if (r == 128.0 + pow2(ulp_exp)) {
          found = "added after the products, rounded to nearest (FADD/HADD)";
        } else if (r == 128.0) {
          found = "added after the products, truncated";
          v = Verdict::disagrees;
        }
        ev += "; C = 128 with 0.75 ulp(128) in a product gives " + std::to_string(r);
      }
      add("C placement", found, table_c, v, ev);
    }
  }

  // ---- Product normalisation (needs F and three fused slots).
  if (F && st.fused.size() >= 3) {
    std::optional<std::string> found;
    for (int s = 0; s <= 24 && !found; ++s) {
      const int s1 = s / 2, s2 = s - s1;
      const auto a1 = exact_code(t.a, 1.5 * pow2(s1)), a2 = exact_code(t.a, -1.5 * pow2(s1));
      const auto b1 = exact_code(t.b, 1.5 * pow2(s2));
      if (!a1 || !a2 || !b1 || s - *F < pr.out_min_exp()) continue;
      std::vector<DotCase> dots;
      for (int e : {s - *F, s + 1 - *F}) {
        DotBuilder d(t, "normalisation");
        d.operands(st.fused[0], *a1, *b1);
        d.operands(st.fused[1], *a2, *b1);
        d.product(st.fused[2], pow2(e));
        if (d.ok()) dots.push_back(d.dot());
      }
      if (dots.size() != 2) continue;
      const std::vector<std::uint32_t> r = pr.run(dots);
      if (pr.value(r[0]) == pow2(s - *F)) {
        found = "not normalised (alignment on e_a + e_b; 1.5 x 1.5 = 2.25 keeps exponent 0)";
      } else if (pr.value(r[0]) == 0 && pr.value(r[1]) == pow2(s + 1 - *F)) {
        found = "normalised before alignment";
      } else {
        found = "unexpected: " + hex(t, r[0]) + ", " + hex(t, r[1]);
      }
    }
    if (found) {
      add("product normalisation", *found, "not normalised (b.2)",
          found->rfind("not", 0) == 0 ? Verdict::agrees : Verdict::disagrees,
          "(1.5)(1.5) - (1.5)(1.5) + 2^-F: the last term survives only on the e_a + e_b grid");
    } else {
      add("product normalisation", "-", "not normalised (b.2)", Verdict::undetermined,
          "1.5 x 1.5 products are not formable in these operand formats");
    }
  }

  // ---- Output precision and rounding (needs five fused slots).
  if (st.fused.size() >= 5) {
    const int jmax = F ? *F + 2 : 30;
    int best_s = 0, best_j = 0;
    for (int s = -12; s <= 24; ++s) {
      if (s + 2 > pr.out_max_exp() - 1) break;
      int j = 0;
      for (; j < jmax; ++j) {
        if (s + 2 - (j + 1) < pr.out_min_exp() || !product_codes(t.a, t.b, pow2(s + 2 - (j + 1)))) break;
      }
      if (!product_codes(t.a, t.b, pow2(s))) continue;
      if (j > best_j) best_j = j, best_s = s;
      if (j == jmax) break;
    }
    const int s = best_s;
    const double V0 = pow2(s + 2);
    auto build = [&](double delta, double sign) {
      DotBuilder d(t, "output");
      for (int i = 0; i < 4; ++i) d.product(st.fused[static_cast<std::size_t>(i)], sign * pow2(s));
      d.product(st.fused[4], sign * delta);
      return d;
    };
    std::vector<DotCase> dots;
    for (int j = 1; j <= best_j; ++j) dots.push_back(build(pow2(s + 2 - j), 1).dot());
    const std::vector<std::uint32_t> r = pr.run(dots);
    int pbits = 0;
    while (pbits < best_j && pr.value(r[static_cast<std::size_t>(pbits)]) == V0 + pow2(s + 2 - (pbits + 1))) ++pbits;
    const int table_p = p.rounding == OutputRounding::rz_e8m13 ? 13 : p.rounding == OutputRounding::rne_fp16 ? 10 : 23;
    if (pbits == best_j) {
      add("output fraction bits", ">= " + std::to_string(pbits), std::to_string(table_p),
          table_p >= pbits ? Verdict::consistent : Verdict::disagrees,
          "V = 4 + 2^-j kept for every j the formats can express");
    } else {
      add("output fraction bits", std::to_string(pbits), std::to_string(table_p),
          pbits == table_p ? Verdict::agrees : Verdict::disagrees,
          "4 + 2^-" + std::to_string(pbits) + " kept, 4 + 2^-" + std::to_string(pbits + 1) + " not");
      // Rounding direction and ties.
      const double ulp = pow2(s + 2 - pbits);
      std::map<std::pair<double, int>, double> steps;  // (fraction of an ulp, sign) -> ulps moved
      std::vector<DotCase> rd;
      std::vector<std::pair<double, int>> meta;
      for (double f : {0.25, 0.5, 0.75, 1.5})
        for (int sign : {1, -1}) {
          DotBuilder d = build(f * ulp, sign);
          if (!d.ok() || (F && f * ulp < pow2(s - *F))) continue;
          rd.push_back(d.dot());
          meta.emplace_back(f, sign);
        }
      const std::vector<std::uint32_t> rr = pr.run(rd);
      for (std::size_t i = 0; i < rd.size(); ++i) steps[meta[i]] = (std::fabs(pr.value(rr[i])) - V0) / ulp;
      auto at = [&](double f, int sign) -> std::optional<double> {
        auto it = steps.find({f, sign});
        if (it == steps.end()) return std::nullopt;
        return it->second;
      };
      std::string mode = "undetermined";
      const auto p75 = at(0.75, 1), n75 = at(0.75, -1), p25 = at(0.25, 1), n25 = at(0.25, -1);
      const auto p50 = at(0.5, 1), p150 = at(1.5, 1);
      if (p75 && n75 && p25 && n25) {
        if (*p75 == 0 && *n75 == 0) {
          mode = "RZ";
        } else if (*p75 == 0 && *n75 == 1) {
          mode = "RD";
        } else if (*p75 == 1 && *n75 == 0) {
          mode = "RU";
        } else if (*p25 == 1 && *n25 == 1) {
          mode = "RA";
        } else if (*p25 == 0 && *n25 == 0 && *p75 == 1 && *n75 == 1 && p50 && p150) {
          mode = *p50 == 0 && *p150 == 2 ? "RNE" : *p50 == 1 && *p150 == 2 ? "RNA" : *p50 == 0 && *p150 == 1 ? "RNZ" : "RN?";
        }
      }
      std::string fmt = t.acc == Format::float16 ? (pbits == 10 ? "FP16" : "p" + std::to_string(pbits))
                                                 : (pbits == 23 ? "FP32" : pbits == 13 ? "E8M13" : "p" + std::to_string(pbits));
      const std::string found = mode + "-" + fmt;
      const std::string table(emulator::to_string(p.rounding));
      char ev[160];
      std::snprintf(ev, sizeof ev, "+0.25/0.75 ulp -> %g/%g, -0.25/0.75 -> %g/%g, ties 0.5/1.5 -> %g/%g",
                    p25.value_or(-1), p75.value_or(-1), n25.value_or(-1), n75.value_or(-1), p50.value_or(-1),
                    p150.value_or(-1));
      // With F below the output's fraction bits the sum cannot hold a quarter ulp, so the probes
      // that tell the modes apart do not exist: that says nothing against the table.
      add("output rounding", found, table,
          mode == "undetermined" ? Verdict::undetermined
          : found == table       ? Verdict::agrees
                                 : Verdict::disagrees,
          ev);
    }
  }

  // ---- e_zero: the floor under e_max when C = 0.
  if (F) {
    std::vector<DotCase> dots;
    std::vector<int> Es;
    const bool tie = t.acc == Format::float16;
    // The tie probe needs 2^(E-F) <= 2^-26, so that the sum stays inside (2^-25, 2^-24).
    for (int E = tie ? std::min(10, *F - 26) : 10; E >= -200; --E) {
      DotBuilder d(t, "e_zero");
      if (tie) {
        if (E < -25) break;
        d.product(st.fused[0], pow2(-25));
        d.product(st.fused[1], pow2(E - *F));
      } else {
        if (E - *F < pr.out_min_exp()) break;
        d.product(st.fused[0], pow2(E - *F));
      }
      if (!d.ok()) break;
      dots.push_back(d.dot());
      Es.push_back(E);
    }
    const std::vector<std::uint32_t> r = pr.run(dots);
    std::optional<int> floor_at;
    for (std::size_t i = 0; i < dots.size(); ++i) {
      const double want = tie ? pow2(-24) : pow2(Es[i] - *F);
      if (pr.value(r[i]) != want) {
        floor_at = Es[i] + 1;
        break;
      }
    }
    const std::string how = tie ? "a tie at 2^-25 broken by 2^(E-F)" : "2^(E-F) alone with C = 0";
    if (dots.empty()) {
      add("e_zero (floor of e_max)", "-", std::to_string(p.e_zero), Verdict::undetermined, "no probe is formable");
    } else if (floor_at) {
      add("e_zero (floor of e_max)", std::to_string(*floor_at), std::to_string(p.e_zero),
          *floor_at == p.e_zero ? Verdict::agrees : Verdict::disagrees,
          how + ": survives for E >= " + std::to_string(*floor_at));
    } else {
      const int lowest = Es.back();
      add("e_zero (floor of e_max)", "<= " + std::to_string(lowest), std::to_string(p.e_zero),
          p.e_zero <= lowest ? Verdict::consistent : Verdict::disagrees,
          how + ": survives down to E = " + std::to_string(lowest) + ", the lowest the formats can express");
    }
  }

  // ---- Special values: the device's bits next to the table model's.
  {
    std::vector<DotCase> dots;
    std::vector<std::string> what;
    const auto one_b = exact_code(t.b, 1.0), zero_b = exact_code(t.b, 0.0);
    auto push = [&](const DotBuilder& d, std::string w) {
      if (d.ok()) {
        dots.push_back(d.dot());
        what.push_back(std::move(w));
      }
    };
    const std::uint32_t a_sign = to_storage(t.a, sign_mask(t.a));
    if (has_nan(t.a) && one_b) {
      DotBuilder d(t, "");
      d.operands(0, to_storage(t.a, quiet_nan_code(t.a)) | a_sign, *one_b);
      push(d, "NaN operand (negative)");
    }
    {
      DotBuilder d(t, "");
      d.product(0, 1.0);
      d.c_code(inf_code(t.acc) | 1u);
      push(d, "NaN in C (payload 1)");
    }
    if (has_inf(t.a) && zero_b && one_b) {
      const std::uint32_t inf = to_storage(t.a, inf_code(t.a));
      DotBuilder d(t, "");
      d.operands(0, inf, *zero_b);
      push(d, "Inf * 0");
      DotBuilder e(t, "");
      e.operands(0, inf, *one_b);
      e.operands(1, inf | a_sign, *one_b);
      push(e, "+Inf and -Inf products");
      DotBuilder f(t, "");
      f.operands(0, inf | a_sign, *one_b);
      f.c(1.0);
      push(f, "-Inf product, C = 1");
    }
    {
      DotBuilder d(t, "");
      for (int i = 0; i < std::min(t.k, 32); ++i) {
        d.operands(i, to_storage(t.a, max_finite_code(t.a)), to_storage(t.b, max_finite_code(t.b)));
      }
      push(d, "largest products (overflow)");
    }
    {
      DotBuilder d(t, "");
      d.product(0, -0.0);
      d.product(1, -0.0);
      d.c(-0.0);
      push(d, "-0 products, C = -0");
    }
    for (int e = -150; e <= 0; ++e) {
      // The smallest negative product the formats form: where it lies below the output's range it
      // shows the sign of an underflowed zero (numerics.md e.3).
      DotBuilder d(t, "");
      d.product(0, -pow2(e));
      if (d.ok()) {
        push(d, "smallest negative product -2^" + std::to_string(e));
        break;
      }
    }
    const std::vector<std::uint32_t> got = pr.run(dots), want = pr.model(dots);
    for (std::size_t i = 0; i < dots.size(); ++i) {
      add(what[i], hex(t, got[i]), hex(t, want[i]), got[i] == want[i] ? Verdict::agrees : Verdict::disagrees,
          "device bits next to the model's");
    }
  }
  return out;
}

}  // namespace blockscale::harness
