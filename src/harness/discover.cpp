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

// Scale codes (SFA, SFB) whose product is 2^s, split as evenly as the sign allows; nullopt where
// the scale format cannot hold a half (ue4m3: 2^-9 .. 2^8 each).
std::optional<std::pair<std::uint8_t, std::uint8_t>> scale_pair(const InstructionTarget& t, int s) {
  const auto sa = exact_code(t.scale, pow2(s / 2)), sb = exact_code(t.scale, pow2(s - s / 2));
  if (!sa || !sb) return std::nullopt;
  return std::pair{static_cast<std::uint8_t>(*sa), static_cast<std::uint8_t>(*sb)};
}

// Puts a product of value v in `slot`. Block-scaled targets: operands times a power-of-two scale of
// the slot's block, split between SFA and SFB, every slot of that block sharing it (so callers put
// no other nonzero product in that block). With `aligned` (v a power of two) the operands are
// +-1 * 1, so that the alignment exponent is v's under ST-FDPA and GST-FDPA alike (GST aligns a
// group on its scales alone, b.5); otherwise that placement is tried first, then the scale nearest
// to 1. Other targets: the operands alone.
bool scaled_product(DotBuilder& d, const InstructionTarget& t, int slot, double v, bool aligned = false) {
  if (!t.block_scaled) return d.product(slot, v);
  int e = 0;
  std::vector<int> exponents;  // of the scale
  if (std::frexp(std::fabs(v), &e) == 0.5) exponents.push_back(e - 1);
  if (!aligned) {
    for (int k = 0; k <= 120; ++k) {
      exponents.push_back(-k);
      if (k) exponents.push_back(k);
    }
  }
  for (int s : exponents) {
    const auto codes = scale_pair(t, s);
    if (!codes || !product_codes(t.a, t.b, v / pow2(s))) continue;
    d.scales(slot / t.block, codes->first, codes->second);
    return d.product(slot, v / pow2(s));
  }
  d.fail();
  return false;
}

// Block-scaled kinds (b.4, b.5): C = 2^t against a cancelling pair in slots 0 and 1 of block 0.
// Their operands span too few binades for the slot sweep to see F (e2m1 products lie in
// [2^-2, 36]), but C spans fp32's. With the pair +-1 * 1 at unit scales e_max = 0 under both
// algorithms, so C survives down to 2^-F. Scales of 2^S on the pair move the cut by S in both;
// a pair of +-2^X at unit scales moves it by X where the alignment exponent is the products'
// (ST-FDPA) and not at all where it is the group's scales alone (GST-FDPA, whose cancelled group
// keeps its scale exponent, b.5 step 5).
struct BlockAlignment {
  std::optional<int> unit, scaled, product;  // the largest t whose C = 2^t was lost, per pair
  int S = 0, X = 0;
};

BlockAlignment block_alignment(Prober& pr, const InstructionTarget& t) {
  BlockAlignment r;
  r.S = t.scale == Format::float8_e8m0fnu ? 16 : 8;  // ue4m3 holds 2^4 on each side, e8m0 2^8
  for (int X = 8; X >= 1 && !r.X; --X) {
    if (product_codes(t.a, t.b, pow2(X)) && product_codes(t.a, t.b, -pow2(X))) r.X = X;
  }
  const auto codes = scale_pair(t, r.S);
  struct Pair {
    std::optional<int>* cut;
    double value;
    bool scaled;
    // C sweeps down from 2^(top - 1): the pair's alignment exponent under ST-FDPA, at or above
    // GST-FDPA's.
    int top;
  };
  std::vector<Pair> pairs = {{&r.unit, 1.0, false, 0}, {&r.scaled, 1.0, true, r.S}};
  if (r.X) pairs.push_back({&r.product, pow2(r.X), false, r.X});
  std::vector<DotCase> dots;
  std::vector<std::pair<std::size_t, int>> meta;  // (pair, t)
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].scaled && !codes) continue;
    for (int tt = pairs[i].top - 1; tt >= pairs[i].top - 60 && tt >= pr.out_min_exp(); --tt) {
      DotBuilder d(t, "C against a block-0 pair");
      d.product(0, pairs[i].value);
      d.product(1, -pairs[i].value);
      if (pairs[i].scaled) d.scales(0, codes->first, codes->second);
      d.c(pow2(tt));
      if (!d.ok()) break;
      dots.push_back(d.dot());
      meta.emplace_back(i, tt);
    }
  }
  const std::vector<std::uint32_t> got = pr.run(dots);
  for (std::size_t i = 0; i < dots.size(); ++i) {
    const auto [which, tt] = meta[i];
    std::optional<int>& cut = *pairs[which].cut;
    if (pr.value(got[i]) != pow2(tt) && (!cut || *cut < tt)) cut = tt;
  }
  return r;
}

// Blocks fused with block 0, for block-scaled kinds with two or more scale blocks along K: the pair
// +-1 * 1 in block 0 at unit scales fixes e_max = 0, and 1 * 1 in the first slot of block b under
// scales of 2^-F survives and under 2^-(F+1) is lost when block b is aligned with block 0 (one
// T-FDPA over its products or group sums); a block summed apart (a later chunk) keeps both. Empty
// where the scale format cannot reach 2^-(F+1) (ue4m3: 2^-18 at least).
std::string blocks_text(const std::vector<int>& b, int blocks, int block) {
  std::string s = "blocks {";
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(b[i]);
  }
  s += "} of " + std::to_string(blocks) + " fused";
  if (static_cast<int>(b.size()) == blocks) s += " (L = " + std::to_string(blocks * block) + ")";
  return s;
}

std::optional<std::string> fused_blocks(Prober& pr, const InstructionTarget& t, int F) {
  const int blocks = t.k / t.block;
  std::vector<DotCase> dots;
  for (int b = 1; b < blocks; ++b) {
    for (int D : {F, F + 1}) {
      const auto codes = scale_pair(t, -D);
      if (!codes) return std::nullopt;
      DotBuilder d(t, "block sweep");
      d.product(0, 1.0);
      d.product(1, -1.0);
      d.scales(b, codes->first, codes->second);
      d.product(b * t.block, 1.0);
      if (!d.ok()) return std::nullopt;
      dots.push_back(d.dot());
    }
  }
  const std::vector<std::uint32_t> got = pr.run(dots);
  std::vector<int> fused = {0};
  for (int b = 1; b < blocks; ++b) {
    const double at_f = pr.value(got[2 * std::size_t(b - 1)]), past = pr.value(got[2 * std::size_t(b - 1) + 1]);
    if (at_f != pow2(-F)) return "unexpected: block " + std::to_string(b) + " under 2^-F gives " + std::to_string(at_f);
    if (past != pow2(-F - 1)) fused.push_back(b);
  }
  return blocks_text(fused, blocks, t.block);
}

// The output's fraction bits and rounding, read from sums V0 + delta built by build(delta, sign)
// (V0 a power of two; build must form V0 + V0 * 2^-j for every j <= best_j, and deltas under
// `grid`, the truncation grid, are not asked).
struct OutputReading {
  int pbits = 0;
  bool all_kept = false;
  std::string mode = "undetermined";
  std::string evidence;
};

template <class Build>
OutputReading read_output(Prober& pr, double V0, int best_j, double grid, Build&& build) {
  OutputReading out;
  std::vector<DotCase> dots;
  for (int j = 1; j <= best_j; ++j) dots.push_back(build(V0 * pow2(-j), 1).dot());
  const std::vector<std::uint32_t> r = pr.run(dots);
  while (out.pbits < best_j && pr.value(r[static_cast<std::size_t>(out.pbits)]) == V0 + V0 * pow2(-(out.pbits + 1))) {
    ++out.pbits;
  }
  out.all_kept = out.pbits == best_j;
  if (out.all_kept) return out;
  const double ulp = V0 * pow2(-out.pbits);
  std::map<std::pair<double, int>, double> steps;  // (fraction of an ulp, sign) -> ulps moved
  std::vector<DotCase> rd;
  std::vector<std::pair<double, int>> meta;
  for (double f : {0.25, 0.5, 0.75, 1.5})
    for (int sign : {1, -1}) {
      const DotBuilder d = build(f * ulp, sign);
      if (!d.ok() || f * ulp < grid) continue;
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
  const auto p75 = at(0.75, 1), n75 = at(0.75, -1), p25 = at(0.25, 1), n25 = at(0.25, -1);
  const auto p50 = at(0.5, 1), p150 = at(1.5, 1);
  if (p75 && n75 && p25 && n25) {
    if (*p75 == 0 && *n75 == 0) {
      out.mode = "RZ";
    } else if (*p75 == 0 && *n75 == 1) {
      out.mode = "RD";
    } else if (*p75 == 1 && *n75 == 0) {
      out.mode = "RU";
    } else if (*p25 == 1 && *n25 == 1) {
      out.mode = "RA";
    } else if (*p25 == 0 && *n25 == 0 && *p75 == 1 && *n75 == 1 && p50 && p150) {
      out.mode = *p50 == 0 && *p150 == 2   ? "RNE"
                 : *p50 == 1 && *p150 == 2 ? "RNA"
                 : *p50 == 0 && *p150 == 1 ? "RNZ"
                                           : "RN?";
    }
  }
  char ev[160];
  std::snprintf(ev, sizeof ev, "+0.25/0.75 ulp -> %g/%g, -0.25/0.75 -> %g/%g, ties 0.5/1.5 -> %g/%g", p25.value_or(-1),
                p75.value_or(-1), n25.value_or(-1), n75.value_or(-1), p50.value_or(-1), p150.value_or(-1));
  out.evidence = ev;
  return out;
}

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
  // Block-scaled kinds: C's cut against a block-0 pair (empty cuts elsewhere).
  const BlockAlignment ba = t.block_scaled ? block_alignment(pr, t) : BlockAlignment{};
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
    // F from C where no product slot was truncated: exact for block-scaled kinds (pair +-1 at unit
    // scales, block_alignment); anywhere else C's own cut, which the C placement item then checks.
    const std::optional<int> f_c =
        t.block_scaled ? (ba.unit ? std::optional<int>(-*ba.unit - 1) : std::nullopt) : st.f_c;
    const std::vector<int> want = table_fused(t);
    // Slots that were never truncated are outside the fused set only if the sweep went deep
    // enough to truncate them: at least F + 1 binades under the pair.
    const int swept = st.X - st.slot_lowest - 1;
    const std::optional<std::string> by_blocks =
        st.f_by_slot.empty() && t.block_scaled && f_c && t.k / t.block >= 2 ? fused_blocks(pr, t, *f_c) : std::nullopt;
    if (by_blocks) {
      std::vector<int> table_blocks;
      for (int b = 0; b < t.k / t.block; ++b)
        if (std::find(want.begin(), want.end(), b * t.block) != want.end()) table_blocks.push_back(b);
      const std::string table = blocks_text(table_blocks, t.k / t.block, t.block);
      add("fused width L", *by_blocks, table, *by_blocks == table ? Verdict::agrees : Verdict::disagrees,
          "1 * 1 in each block under scales 2^-F (kept) and 2^-(F+1) (lost where aligned with block 0's +-1 pair)");
    } else if (st.f_by_slot.empty() && (!f_c || swept < *f_c)) {
      add("fused width L", "-", slots_text(want, t.k), Verdict::undetermined,
          "no product was truncated against +-2^" + std::to_string(st.X) + " down to 2^" +
              std::to_string(st.slot_lowest) + " (operand range exhausted)");
    } else {
      add("fused width L", slots_text(st.fused, t.k), slots_text(want, t.k),
          st.fused == want ? Verdict::agrees : Verdict::disagrees,
          "slots whose 2^t is truncated against +-2^" + std::to_string(st.X) + " in slots 0 and 1");
    }
    if (F) {
      const bool same = votes.size() == 1;
      std::string found = std::to_string(*F) + (same ? "" : " (position-dependent!)");
      add("fraction bits F", found, std::to_string(p.F), same && *F == p.F ? Verdict::agrees : Verdict::disagrees,
          "2^t survives down to t = " + std::to_string(st.X - *F) + " with e_max = " + std::to_string(st.X) + " in " +
              std::to_string(st.f_by_slot.size()) + " slots");
    } else if (f_c) {
      // No product slot is aligned with the pair (block-scaled operands too narrow, or a fused
      // width of 2), but C is: its cut is F.
      F = f_c;
      add("fraction bits F", std::to_string(*F), std::to_string(p.F), *F == p.F ? Verdict::agrees : Verdict::disagrees,
          t.block_scaled ? "C = 2^t against +-1 * 1 at unit scales in block 0 survives down to t = " + std::to_string(-*F)
                         : "C = 2^t against +-2^" + std::to_string(st.X) + " survives down to t = " +
                               std::to_string(st.X - *F) + " (no product slot was truncated)");
    } else {
      add("fraction bits F", "> " + std::to_string(swept), std::to_string(p.F), Verdict::undetermined,
          "no product was truncated down to 2^" + std::to_string(st.slot_lowest) + " (operand range exhausted)");
    }
    // C: fused (truncated like a product) or added after.
    const std::string table_c = emulated ? "added after the products (RNE add)" : "fused (aligned with the products)";
    if (f_c) {
      const std::string found = "fused (aligned with the products), F_C = " + std::to_string(*f_c);
      add("C placement", found, table_c, !emulated && (!F || *f_c == *F) ? Verdict::agrees : Verdict::disagrees,
          t.block_scaled ? "C = 2^t is truncated below 2^" + std::to_string(-*f_c) + " against +-1 * 1 at unit scales"
             : "C = 2^t is truncated below 2^" + std::to_string(st.X - *f_c));
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

  // ---- Block scales in the alignment exponent (block-scaled kinds, b.4 and b.5).
  if (ba.unit) {
    const int u = *ba.unit;
    if (ba.scaled) {
      const int moved = *ba.scaled - u;
      add("scales in the alignment exponent",
          moved == ba.S ? "added (2^" + std::to_string(ba.S) + " scales move e_max by " + std::to_string(ba.S) + ")"
                         : "2^" + std::to_string(ba.S) + " scales move e_max by " + std::to_string(moved),
          "added (2^" + std::to_string(ba.S) + " scales move e_max by " + std::to_string(ba.S) + ")",
          moved == ba.S ? Verdict::agrees : Verdict::disagrees,
          "C's cut against +-1 * 1 under SFA * SFB = 2^" + std::to_string(ba.S) + " and at unit scales");
    }
    if (ba.product) {
      const int moved = *ba.product - u;
      const std::string products = "scale and product exponents (ST-FDPA, b.4)";
      const std::string groups = "scale exponents alone, group sums exact (GST-FDPA, b.5)";
      const std::string found = moved == ba.X ? products
                                : moved == 0   ? groups
                                               : "products of 2^" + std::to_string(ba.X) + " move e_max by " +
                                                   std::to_string(moved);
      const std::string table = p.algorithm == Algorithm::gst_fdpa ? groups : products;
      add("alignment exponent", found, table, found == table ? Verdict::agrees : Verdict::disagrees,
          "C's cut against the pair +-2^" + std::to_string(ba.X) + " (a cancelled group) and against +-1, unit scales");
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

  // ---- Output precision and rounding: four unit products in fused slots plus a fifth term, or
  // (block-scaled kinds, whose operands are too narrow for that) C = 2^20 plus one scaled product.
  std::optional<OutputReading> out_read;
  std::string output_how;
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
    out_read = read_output(pr, pow2(s + 2), best_j, F ? pow2(s - *F) : 0.0, [&](double delta, int sign) {
      DotBuilder d(t, "output");
      for (int i = 0; i < 4; ++i) d.product(st.fused[static_cast<std::size_t>(i)], sign * pow2(s));
      d.product(st.fused[4], sign * delta);
      return d;
    });
    output_how = "V = 4 + 2^-j";
  } else if (t.block_scaled && F && t.acc == Format::float32) {
    const int s = 20;  // C = 2^20 lies above every group's or product's alignment used below
    auto build = [&](double delta, int sign) {
      DotBuilder d(t, "output");
      d.c(sign * pow2(s));
      scaled_product(d, t, 0, sign * delta);
      return d;
    };
    int best_j = 0;
    while (best_j < std::min(*F, 30) && build(pow2(s - best_j - 1), 1).ok()) ++best_j;
    out_read = read_output(pr, pow2(s), best_j, pow2(s - *F), build);
    output_how = "C = 2^20 plus 2^(20-j) in one scaled product";
  }
  if (out_read) {
    const int table_p = p.rounding == OutputRounding::rz_e8m13 ? 13 : p.rounding == OutputRounding::rne_fp16 ? 10 : 23;
    const int pbits = out_read->pbits;
    if (out_read->all_kept) {
      add("output fraction bits", ">= " + std::to_string(pbits), std::to_string(table_p),
          table_p >= pbits ? Verdict::consistent : Verdict::disagrees,
          output_how + " kept for every j the formats can express");
    } else {
      add("output fraction bits", std::to_string(pbits), std::to_string(table_p),
          pbits == table_p ? Verdict::agrees : Verdict::disagrees,
          output_how + ": j = " + std::to_string(pbits) + " kept, j = " + std::to_string(pbits + 1) + " not");
      std::string fmt = t.acc == Format::float16 ? (pbits == 10 ? "FP16" : "p" + std::to_string(pbits))
                                                 : (pbits == 23 ? "FP32" : pbits == 13 ? "E8M13" : "p" + std::to_string(pbits));
      const std::string found = out_read->mode + "-" + fmt;
      const std::string table(emulator::to_string(p.rounding));
      // With F below the output's fraction bits the sum cannot hold a quarter ulp, so the probes
      // that tell the modes apart do not exist: that says nothing against the table.
      add("output rounding", found, table,
          out_read->mode == "undetermined" ? Verdict::undetermined
          : found == table                 ? Verdict::agrees
                                           : Verdict::disagrees,
          out_read->evidence);
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
        scaled_product(d, t, st.fused[0], pow2(E - *F), true);
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
    // Block scales (d.3-9): a NaN scale on either side; e8m0's smallest code (2^-127); ue4m3's sign
    // bit, ignored (b.5 step 3), its zero and its smallest subnormal; for GST-FDPA a cancelled group
    // under a large scale, which keeps its scale exponent (b.5 step 5) and so truncates C.
    if (t.block_scaled) {
      const bool e8m0 = t.scale == Format::float8_e8m0fnu;
      const std::uint8_t unit = unit_scale(t.scale);
      auto scaled = [&](std::uint8_t sa, std::uint8_t sb, std::string w) {
        DotBuilder d(t, "");
        d.product(0, 1.0);
        d.c(0.75);
        d.scales(0, sa, sb);
        push(d, std::move(w) + ", 1 * 1 + 0.75");
      };
      scaled(e8m0 ? 0xFF : 0x7F, unit, "NaN scale in SFA");
      scaled(unit, e8m0 ? 0xFF : 0x7F, "NaN scale in SFB");
      if (e8m0) {
        scaled(0x00, unit, "scale 2^-127 (code 0) in SFA");
      } else {
        scaled(0xB8, unit, "scale 0xB8 (0x38 = 1 with bit 7 set) in SFA");
        scaled(0x00, unit, "zero scale in SFA");
        scaled(0x01, unit, "scale 2^-9 (smallest subnormal) in SFA");
      }
      if (p.algorithm == Algorithm::gst_fdpa) {
        for (const double c : {1.0, 1 + pow2(-23)}) {
          DotBuilder d(t, "");
          d.product(0, 6.0);
          d.product(1, -6.0);
          d.c(c);
          d.scales(0, e8m0 ? 187 : 0x7E, unit);  // 2^60 or 448
          push(d, std::string("group 0 cancelling (+-6) under a large scale, C = ") + (c == 1.0 ? "1" : "1 + 2^-23"));
        }
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
