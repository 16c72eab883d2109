// SPDX-License-Identifier: Apache-2.0
#include "blockscale/emulator/instruction.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <vector>

namespace blockscale::emulator {

namespace {

[[noreturn]] void fail(const std::string& m) { throw std::invalid_argument(m); }

std::vector<std::string> split(std::string_view s, bool (*is_sep)(char)) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    if (is_sep(ch)) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// "m128n256k32" -> {128, 256, 32}.
std::optional<std::array<int, 3>> parse_shape(const std::string& t) {
  if (t.size() < 6 || t[0] != 'm') return std::nullopt;
  std::array<int, 3> v{};
  std::size_t i = 1;
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (i >= t.size() || t[i] != (part == 1 ? 'n' : 'k')) return std::nullopt;
      ++i;
    }
    const std::size_t start = i;
    long long x = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) && i - start < 6) x = x * 10 + (t[i++] - '0');
    if (i == start || (t[start] == '0' && i - start > 1)) return std::nullopt;  // m0016n8k32 is no shape
    v[part] = static_cast<int>(x);
  }
  if (i != t.size()) return std::nullopt;
  return v;
}

struct ArchToken {
  Arch arch;
  bool specific;  // the "a" target: needed for wgmma, tcgen05 and the sm_120a kinds
};

std::optional<ArchToken> parse_arch(const std::string& t) {
  if (t == "sm_70") return ArchToken{Arch::sm_70, false};
  if (t == "sm_75") return ArchToken{Arch::sm_75, false};
  if (t == "sm_80") return ArchToken{Arch::sm_80, false};
  if (t == "sm_89") return ArchToken{Arch::sm_89, false};
  if (t == "sm_90") return ArchToken{Arch::sm_90a, false};
  if (t == "sm_90a") return ArchToken{Arch::sm_90a, true};
  if (t == "sm_100") return ArchToken{Arch::sm_100a, false};
  if (t == "sm_100a") return ArchToken{Arch::sm_100a, true};
  if (t == "sm_120") return ArchToken{Arch::sm_120a, false};
  if (t == "sm_120a") return ArchToken{Arch::sm_120a, true};
  return std::nullopt;
}

std::optional<Kind> parse_kind(const std::string& t) {
  if (t == "kind::f16") return Kind::f16;
  if (t == "kind::tf32") return Kind::tf32;
  if (t == "kind::f8f6f4") return Kind::f8f6f4;
  if (t == "kind::mxf8f6f4") return Kind::mxf8f6f4;
  if (t == "kind::mxf4") return Kind::mxf4;
  if (t == "kind::mxf4nvf4") return Kind::mxf4nvf4;
  return std::nullopt;
}

bool is_block_scaled(Kind k) { return k == Kind::mxf8f6f4 || k == Kind::mxf4 || k == Kind::mxf4nvf4; }

// The vector-size qualifiers of PTX (gpu.md 1.3): scale_vec::1X = block32 for mxf8f6f4, 2X = block32
// for mxf4/mxf4nvf4, 4X = block16 for mxf4nvf4.
int block_of_scale_vec(Kind kind, const std::string& q) {
  const std::string k(to_string(kind));
  if (kind == Kind::mxf8f6f4) {
    if (q == "scale_vec::1X") return 32;
    fail(k + " takes scale_vec::1X (block32), got " + q);
  }
  if (q == "scale_vec::2X") return 32;
  if (q == "scale_vec::4X") {
    if (kind == Kind::mxf4nvf4) return 16;
    fail(k + " takes scale_vec::2X (block32), got " + q);
  }
  fail("unknown vector size " + q + " (scale_vec::1X, 2X, 4X)");
}

std::string shape_rule_text(std::span<const ShapeRule> rules, int m) {
  std::string s;
  for (const ShapeRule& r : rules) {
    if (r.m != m) continue;
    if (!s.empty()) s += " or ";
    s += r.n_min == r.n_max ? "N=" + std::to_string(r.n_min)
                            : "N in " + std::to_string(r.n_min) + ".." + std::to_string(r.n_max) + " in steps of " +
                                  std::to_string(r.n_step);
  }
  return s;
}

// `rules` are the row's dense shapes or its sparse ones; `family` and `form` name them in a
// message, which is built only when a check fails (validate() runs on every dot and mma call).
void validate_shape(std::span<const ShapeRule> rules, std::string_view family, std::string_view form, int m, int n,
                    int k) {
  const auto who = [&] { return std::string(family) + std::string(form); };
  if (std::none_of(rules.begin(), rules.end(), [&](const ShapeRule& r) { return r.m == m; })) {
    std::string ms;
    for (const ShapeRule& r : rules) {
      if (ms.find("M=" + std::to_string(r.m)) != std::string::npos) continue;
      ms += (ms.empty() ? "M=" : " or M=") + std::to_string(r.m);
    }
    fail(who() + " requires " + ms + ", got " + std::to_string(m));
  }
  if (std::none_of(rules.begin(), rules.end(), [&](const ShapeRule& r) { return r.m == m && r.k == k; })) {
    std::string ks;
    for (const ShapeRule& r : rules) {
      if (r.m != m) continue;
      ks += (ks.empty() ? "K=" : " or K=") + std::to_string(r.k);
    }
    fail(who() + " with M=" + std::to_string(m) + " requires " + ks + ", got " + std::to_string(k));
  }
  if (std::none_of(rules.begin(), rules.end(), [&](const ShapeRule& r) { return r.accepts(m, n, k); })) {
    fail(who() + " with M=" + std::to_string(m) + " requires " + shape_rule_text(rules, m) + ", got " + std::to_string(n));
  }
}

// PTX spells the sparse forms mma.sp::ordered_metadata.sync.aligned and wgmma.mma_async.sp.sync.aligned.
std::string sparse_qualified(const InstructionRow& row) {
  return row.opcode == Opcode::wgmma ? "wgmma.mma_async.sp" : "mma.sp::ordered_metadata.sync.aligned";
}

void validate_types(const InstructionRow& row, Type a, Type b) {
  if (!row.a_types.contains(a)) {
    fail(std::string(row.family) + " takes A of type " + row.a_types.to_string() + ", got " + std::string(to_string(a)));
  }
  if (!row.b_types.contains(b)) {
    fail(std::string(row.family) + " takes B of type " + row.b_types.to_string() + ", got " + std::string(to_string(b)));
  }
}

}  // namespace

const InstructionRow& Instruction::table_row() const {
  if (row == nullptr)
    throw std::invalid_argument("no instruction: a default-constructed Instruction names none (use parse_instruction or "
                                "make_instruction)");
  return *row;
}

std::string Instruction::name() const {
  (void)table_row();
  std::string s(to_string(row->arch));
  s += ' ';
  s += sparse ? sparse_qualified(*row) : std::string(row->qualified);
  s += " m" + std::to_string(m) + 'n' + std::to_string(n) + 'k' + std::to_string(k);
  for (Type t : {d, a, b}) {
    s += ' ';
    s += to_string(t);
  }
  if (row->block_scaled) {
    s += ' ';
    s += to_string(row->scale_type);
  }
  return s;
}

int Instruction::sparse_group() const {
  if (!sparse) throw std::invalid_argument(name() + " is not a sparse instruction");
  // PTX ISA 9.7.14.6.1: tf32 is 1:2 (one value in each pair), the 16- and 8-bit types 2:4.
  return a == Type::tf32 ? 2 : 4;
}

Instruction Instruction::dense_form() const {
  if (!sparse) throw std::invalid_argument(name() + " is not a sparse instruction");
  return make_instruction(*row, m, n, k / 2, a, b);
}

void validate(const Instruction& ins) {
  const InstructionRow& row = ins.table_row();
  validate_types(row, ins.a, ins.b);
  if (ins.sparse) {
    if (row.sparse_shapes.empty()) fail(std::string(row.family) + " (" + std::string(row.id) + ") has no sparse form");
    validate_shape(row.sparse_shapes, row.family, " sparse form", ins.m, ins.n, ins.k);
  } else {
    validate_shape(row.shapes, row.family, "", ins.m, ins.n, ins.k);
  }
  if (ins.d != row.d_type) {
    fail(std::string(row.family) + " has D of type " + std::string(to_string(row.d_type)) + ", got " +
         std::string(to_string(ins.d)));
  }
}

Instruction make_instruction(const InstructionRow& row, int m, int n, int k, Type a, Type b) {
  validate_types(row, a, b);
  validate_shape(row.shapes, row.family, "", m, n, k);
  return Instruction{&row, m, n, k, a, b, row.d_type};
}

Instruction make_sparse_instruction(const InstructionRow& row, int m, int n, int k, Type a, Type b) {
  if (row.sparse_shapes.empty()) {
    fail(std::string(row.family) + " (" + std::string(row.id) +
         ") has no modelled sparse form: sparse MMA is modelled for sm_90a mma.sync and wgmma (numerics.md e.7)");
  }
  validate_types(row, a, b);
  validate_shape(row.sparse_shapes, row.family, " sparse form", m, n, k);
  Instruction ins{&row, m, n, k, a, b, row.d_type};
  ins.sparse = true;
  return ins;
}

Instruction smallest_instruction(const InstructionRow& row, Type a, Type b) {
  const ShapeRule& s = row.shapes.front();
  return make_instruction(row, s.m, s.n_min, s.k, a, b);
}

Instruction smallest_instruction(const InstructionRow& row) {
  Type a = Type::f32, b = Type::f32;
  for (int t = kTypeCount - 1; t >= 0; --t) {
    if (row.a_types.contains(static_cast<Type>(t))) a = static_cast<Type>(t);
    if (row.b_types.contains(static_cast<Type>(t))) b = static_cast<Type>(t);
  }
  return smallest_instruction(row, a, b);
}

Instruction parse_instruction(std::string_view name) {
  std::string quoted(1, '\'');  // built by appends: GCC 12 warns falsely (-Wrestrict) on "'" + string
  quoted.append(name).push_back('\'');
  const auto words = split(name, [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
  if (words.empty()) fail("empty instruction name");
  const auto arch = parse_arch(words[0]);
  if (!arch) {
    fail("unknown architecture '" + words[0] + "' in " + quoted +
         " (sm_70, sm_75, sm_80, sm_89, sm_90a, sm_100a, sm_120a)");
  }

  std::vector<std::string> tokens;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.front() == '.' || w.back() == '.' || w.find("..") != std::string::npos) {
      fail("an empty qualifier (two dots, or a dot at the start or end of '" + w + "') in " + quoted);
    }
    for (auto& t : split(w, [](char c) { return c == '.'; })) tokens.push_back(t);
  }
  bool has_mma = false, has_sync = false, has_wgmma = false, has_async = false, has_tcgen05 = false;
  bool block_scale = false;
  std::string sparse_token;  // "sp" (wgmma) or "sp::ordered_metadata" (mma)
  std::optional<Kind> kind;
  int block = 0;
  std::optional<std::array<int, 3>> shape;
  std::vector<Type> types;
  std::optional<Type> scale;
  // Every token but the types ("f32 e4m3 e4m3") and the layouts (m8n8k4 takes .row.row) at most once.
  std::vector<std::string> qualifiers;
  std::vector<std::string> layouts;  // A's, then B's
  for (const std::string& t : tokens) {
    if (t == "row" || t == "col") {
      layouts.push_back(t);
      if (layouts.size() > 2) fail("more than two layouts (.row / .col: A's and B's) in " + quoted);
    } else if (!parse_type(t)) {
      if (std::find(qualifiers.begin(), qualifiers.end(), t) != qualifiers.end())
        fail("'." + t + "' appears twice in " + quoted);
      qualifiers.push_back(t);
    }
    if (t == "mma") has_mma = true;
    else if (t == "sync") has_sync = true;
    else if (t == "wgmma") has_wgmma = true;
    else if (t == "mma_async") has_async = true;
    else if (t == "tcgen05") has_tcgen05 = true;
    else if (t == "aligned" || t == "row" || t == "col" || t == "cta_group::1") continue;
    else if (t == "cta_group::2") fail("cta_group::2 is not modelled (numerics.md e.7)");
    else if (t == "ws") fail(".ws is not modelled (numerics.md e.7)");
    else if (t == "sp" || t == "sp::ordered_metadata") {
      if (!sparse_token.empty()) fail("more than one sparse qualifier (." + sparse_token + ", ." + t + ") in " + quoted);
      sparse_token = t;
    }
    else if (t == "block_scale") block_scale = true;
    else if (t.rfind("kind::", 0) == 0) {
      if (kind) fail("more than one .kind in " + quoted);
      kind = parse_kind(t);
      if (!kind) fail(t + " is not modelled (integer kinds and others are outside numerics.md (a))");
    } else if (t == "block16" || t == "block32") {
      if (block != 0) fail("more than one block size in " + quoted);
      block = t == "block16" ? 16 : 32;
    } else if (t.rfind("scale_vec::", 0) == 0) {
      if (!kind) fail(t + " must follow a block-scaled .kind in " + quoted);
      if (block != 0) fail("more than one block size in " + quoted);
      block = block_of_scale_vec(*kind, t);
    } else if (auto s = parse_shape(t)) {
      if (shape) fail("more than one shape in " + quoted);
      shape = s;
    } else if (auto ty = parse_type(t)) {
      if (*ty == Type::ue8m0 || *ty == Type::ue4m3) {
        if (scale) fail("more than one scale type in " + quoted);
        scale = ty;
      } else {
        types.push_back(*ty);
      }
    } else {
      fail("unknown qualifier or type '" + t + "' in " + quoted);
    }
  }

  // One opcode family: tcgen05.mma, wgmma.mma_async (PTX spells it wgmma.mma_async.sync) or
  // mma.sync, not pieces of two.
  const bool mma_sync_family = has_mma && !has_tcgen05;
  if (static_cast<int>(has_tcgen05) + static_cast<int>(has_wgmma || has_async) + static_cast<int>(mma_sync_family) > 1 ||
      (has_tcgen05 && has_sync))
    fail("more than one opcode (tcgen05.mma, wgmma.mma_async, mma.sync) in " + quoted);
  Opcode opcode;
  if (has_tcgen05) {
    if (!has_mma) fail("tcgen05 without .mma in " + quoted);
    opcode = Opcode::tcgen05_mma;
  } else if (has_wgmma) {
    if (!has_async) fail("wgmma without .mma_async in " + quoted);
    opcode = Opcode::wgmma;
  } else if (has_mma) {
    if (!has_sync) fail("mma without .sync in " + quoted);
    opcode = Opcode::mma_sync;
  } else {
    fail("no instruction (mma.sync, wgmma.mma_async or tcgen05.mma) in " + quoted);
  }
  const std::string op(to_string(opcode));
  const bool sparse = !sparse_token.empty();
  if (sparse && opcode == Opcode::tcgen05_mma) fail("tcgen05.mma.sp is not modelled (numerics.md e.7; sparse forms are modelled on sm_90a)");
  // mma.sp without ::ordered_metadata lets the metadata indices come in either order and is
  // deprecated from PTX 8.5; only the ordered form is measured (docs/emulator.md, "Sparse MMA").
  if (opcode == Opcode::mma_sync && sparse_token == "sp")
    fail("mma.sp without ::ordered_metadata is not modelled: use mma.sp::ordered_metadata in " + quoted);
  if (opcode == Opcode::wgmma && sparse_token == "sp::ordered_metadata")
    fail("wgmma takes .sp, not .sp::ordered_metadata, in " + quoted);
  if (sparse && arch->arch != Arch::sm_90a) {
    fail("sparse " + op + " is modelled on sm_90a only (measured on an H100; numerics.md e.7), got " + words[0]);
  }
  if (opcode == Opcode::tcgen05_mma && !kind) fail("tcgen05.mma needs a .kind qualifier in " + quoted);
  if ((opcode != Opcode::mma_sync || kind) && !arch->specific) {
    fail(op + (kind ? " ." + std::string(to_string(*kind)) : std::string()) + " requires the architecture-specific target " +
         std::string(to_string(arch->arch)) + ", got " + words[0]);
  }
  const Kind k = kind.value_or(Kind::none);
  const std::string kname(to_string(k));
  if (is_block_scaled(k) && !block_scale) fail(kname + " requires .block_scale");
  if (!is_block_scaled(k) && block_scale) fail(".block_scale requires kind::mxf8f6f4, kind::mxf4 or kind::mxf4nvf4");
  if (!is_block_scaled(k) && block != 0) fail("a scale vector size requires a block-scaled kind");
  if (!is_block_scaled(k) && scale) fail("scale type " + std::string(to_string(*scale)) + " requires a block-scaled kind");
  if (is_block_scaled(k) && block == 0) {
    // Defaults (gpu.md 1.3): mxf8f6f4 -> 1X (block32), mxf4 -> 2X (block32); mxf4nvf4 must name it.
    if (k == Kind::mxf4nvf4) fail("kind::mxf4nvf4 must name its scale vector size (block32/scale_vec::2X or block16/scale_vec::4X)");
    block = 32;
  }
  if (is_block_scaled(k) && !scale) {
    if (k == Kind::mxf4nvf4 && block == 16) fail("kind::mxf4nvf4 block16 must name its scale type (ue8m0 or ue4m3)");
    scale = Type::ue8m0;
  }
  if (is_block_scaled(k) && *scale == Type::ue4m3 && !(k == Kind::mxf4nvf4 && block == 16)) {
    fail("ue4m3 scales require kind::mxf4nvf4 with block16 (scale_vec::4X), got " + kname + " block" + std::to_string(block));
  }
  if (!shape) fail("no shape (m<M>n<N>k<K>) in " + quoted);
  // The layouts name no numerics (the canonical name leaves them out), but a spelling PTX rejects
  // is refused rather than read as another instruction (PTX ISA 9.7.14.5.14, mma.sync's .alayout
  // and .blayout: .row.col for every shape but m8n8k4 with f16 operands, which takes all four).
  if (!layouts.empty()) {
    if (opcode != Opcode::mma_sync) fail(".row / .col are mma.sync qualifiers; " + op + " takes none, in " + quoted);
    if (layouts.size() != 2) fail("mma.sync takes two layouts (A's and B's, .row.col) or none, in " + quoted);
    const bool m8n8k4_f16 = (*shape)[0] == 8 && (*shape)[1] == 8 && (*shape)[2] == 4 &&
                            std::find(types.begin(), types.end(), Type::f16) != types.end() &&
                            std::find(types.begin(), types.end(), Type::f64) == types.end();
    if (!m8n8k4_f16 && (layouts[0] != "row" || layouts[1] != "col")) {
      fail("mma.sync takes ." + layouts[0] + "." + layouts[1] +
           " only for m8n8k4 with f16 operands; every other shape is .row.col, in " + quoted);
    }
  }
  if (types.size() < 3 || types.size() > 4) {
    fail("expected the types D A B (and optionally C) in " + quoted + ", got " + std::to_string(types.size()));
  }
  if (types.size() == 4 && types[3] != types[0]) {
    fail("C type " + std::string(to_string(types[3])) + " must equal D type " + std::string(to_string(types[0])));
  }
  const Type d = types[0], a = types[1], b = types[2];

  // Candidate rows: same architecture, instruction, kind, vector size and scale type.
  std::vector<const InstructionRow*> rows;
  bool arch_has_opcode = false, arch_has_kind = false;
  for (const InstructionRow& r : instruction_table()) {
    if (r.arch != arch->arch || r.opcode != opcode) continue;
    arch_has_opcode = true;
    if (r.kind != k) continue;
    arch_has_kind = true;
    if (r.block != (is_block_scaled(k) ? block : 0)) continue;
    if (r.block_scaled && r.scale_type != *scale) continue;
    if (sparse && r.sparse_shapes.empty()) continue;
    rows.push_back(&r);
  }
  const std::string where = std::string(to_string(arch->arch));
  if (!arch_has_opcode) fail(op + " is not available on " + where + " (see: blockscale models)");
  if (!arch_has_kind) fail(op + (k == Kind::none ? " without .kind" : " ." + kname) + " is not available on " + where);
  if (rows.empty() && sparse) fail("sparse " + op + " on " + where + " has no modelled form of this kind");
  if (rows.empty()) {
    fail(op + " ." + kname + " on " + where + " has no block" + std::to_string(block) + " form with " +
         std::string(to_string(*scale)) + " scales");
  }
  // Rows that differ only in K (the b.9 emulation of m16n8k16 and of m16n8k32) are told apart by
  // the shape; when none has it, the error names every K those rows accept.
  const InstructionRow* match = nullptr;
  std::vector<int> ks;
  bool shaped_match = false;
  const auto rules_of = [&](const InstructionRow* r) { return sparse ? r->sparse_shapes : r->shapes; };
  for (const InstructionRow* r : rows) {
    if (r->d_type != d || !r->a_types.contains(a) || !r->b_types.contains(b)) continue;
    const auto rules = rules_of(r);
    const bool shaped = std::any_of(rules.begin(), rules.end(),
                                    [&](const ShapeRule& s) { return s.m == (*shape)[0] && s.k == (*shape)[2]; });
    for (const ShapeRule& s : rules) {
      if (s.m == (*shape)[0] && std::find(ks.begin(), ks.end(), s.k) == ks.end()) ks.push_back(s.k);
    }
    if (match == nullptr || shaped) match = r;
    shaped_match = shaped_match || shaped;
  }
  if (match != nullptr && !shaped_match && ks.size() > 1) {
    std::sort(ks.begin(), ks.end());
    std::string accepted;
    for (int kk : ks) accepted += (accepted.empty() ? "K=" : " or K=") + std::to_string(kk);
    fail(std::string(match->family) + (sparse ? " sparse form" : "") + " with M=" + std::to_string((*shape)[0]) +
         " requires " + accepted + ", got " + std::to_string((*shape)[2]));
  }
  if (match == nullptr) {
    // Name the first operand that no candidate accepts.
    std::string ds;
    for (const InstructionRow* r : rows) {
      if (ds.find(to_string(r->d_type)) == std::string::npos) ds += (ds.empty() ? "" : "|") + std::string(to_string(r->d_type));
    }
    // Name the row family when every candidate shares it, else the instruction.
    std::string who(rows.front()->family);
    for (const InstructionRow* r : rows) {
      if (r->family != rows.front()->family) who = op + (k == Kind::none ? "" : " " + kname);
    }
    if (sparse) who = "sparse " + who;
    if (std::none_of(rows.begin(), rows.end(), [&](const InstructionRow* r) { return r->d_type == d; })) {
      fail(who + " on " + where + " produces D of type " + ds + ", got " + std::string(to_string(d)));
    }
    std::string accepted;
    for (const InstructionRow* r : rows) {
      if (r->d_type != d) continue;
      if (!accepted.empty()) accepted += "; ";
      accepted += "A " + r->a_types.to_string() + " with B " + r->b_types.to_string();
    }
    fail(who + " on " + where + " with D " + std::string(to_string(d)) + " takes " + accepted + ", got A " +
         std::string(to_string(a)) + " and B " + std::string(to_string(b)));
  }
  if (sparse) return make_sparse_instruction(*match, (*shape)[0], (*shape)[1], (*shape)[2], a, b);
  return make_instruction(*match, (*shape)[0], (*shape)[1], (*shape)[2], a, b);
}

}  // namespace blockscale::emulator
