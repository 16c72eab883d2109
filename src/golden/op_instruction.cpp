// SPDX-License-Identifier: Apache-2.0
// Single-instruction sets: one output element of a tensor-core instruction per case, i.e. one row of
// A, one column of B, the C element and (block-scaled instructions) the row's and column's scales
// -> the D element (emulator/mma.h dot()). Every element of D is such a dot product, so a case is
// what any test bench can feed to an M x N x K instruction by placing it in row 0 / column 0.
//
//   @op sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e4m3 e2m1 ue8m0
//   @fields a:e4m3[32] b:e2m1[32] c:f32 sa:ue8m0 sb:ue8m0 -> d:f32
//
// Sparse forms (mma.sp::ordered_metadata, wgmma.mma_async.sp; emulator/mma.h dot_sparse) hold the
// row's K/2 stored values, their positions inside their groups and the whole B column:
//
//   @op sm_90a wgmma.mma_async.sp m64n8k64 f32 e4m3 e4m3
//   @fields a:e4m3[32] i:u8[32] b:e4m3[64] c:f32 -> d:f32
//
// Instructions that the emulator computes with the same model (same algorithm parameters, K,
// operand, accumulator and scale types, dense or sparse) share one file: it lists each of them in an
// @op line, and verification computes every listed instruction.
#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <set>

#include "blockscale/emulator/instruction.h"
#include "blockscale/emulator/mma.h"
#include "blockscale/formats/presets.h"
#include "common.h"

namespace blockscale::golden::detail {
namespace {

using emulator::Instruction;
using emulator::InstructionRow;
using emulator::Type;

// The per-row budget of committed cases, shared by the row's concrete instructions (K values x
// operand-type pairs), with a floor per instruction.
constexpr std::size_t kRowBudget = 1024;
constexpr std::size_t kInstructionFloor = 64;
// A row's sparse forms compute its dense form on gathered B rows (docs/emulator.md, "Sparse MMA"),
// whose arithmetic the dense sets cover; their sets test the gather (positions, pruned rows) and
// keep the committed tree small (golden/FORMAT.md, section 8).
constexpr std::size_t kSparseRowBudget = 256;

ElementType element_type(Type t) {
  if (t == Type::f64) return {WordType::f64, Format::float32};
  return ElementType::of(*emulator::format_of(t));
}

// Everything that decides the function an instruction computes on one dot product.
std::string model_key(const Instruction& ins) {
  const auto& p = ins.params();
  std::string key = std::to_string(static_cast<int>(p.algorithm)) + "/" + std::to_string(p.L) + "/" +
                    std::to_string(p.F) + "/" + std::to_string(static_cast<int>(p.rounding)) + "/" +
                    std::to_string(p.e_zero) + "/" + std::to_string(p.group) + "/" +
                    std::to_string(static_cast<int>(p.underflow_zero)) + "/k" + std::to_string(ins.k) + "/" +
                    std::string(emulator::to_string(ins.a)) + "/" + std::string(emulator::to_string(ins.b)) +
                    "/" + std::string(emulator::to_string(ins.d));
  if (ins.block_scaled())
    key += "/" + std::string(emulator::to_string(ins.scale_type())) + "/" + std::to_string(ins.block());
  if (ins.sparse) key += "/sparse";
  return key;
}

struct ModelClass {
  std::vector<Instruction> members;
  std::size_t cases = 0;
};

// The concrete instructions of one row's shapes (dense: row.shapes, sparse: row.sparse_shapes):
// K x operand types, smallest M and N of that K.
std::vector<Instruction> concrete_instructions(const InstructionRow& row, bool sparse) {
  const std::span<const emulator::ShapeRule> shapes = sparse ? row.sparse_shapes : row.shapes;
  std::set<int> ks;
  for (const auto& s : shapes) ks.insert(s.k);
  std::vector<Instruction> concrete;
  for (int k : ks) {
    const auto shape = std::find_if(shapes.begin(), shapes.end(), [&](const auto& s) { return s.k == k; });
    for (int ta = 0; ta < emulator::kTypeCount; ++ta) {
      for (int tb = 0; tb < emulator::kTypeCount; ++tb) {
        const auto a = static_cast<Type>(ta), b = static_cast<Type>(tb);
        if (!row.a_types.contains(a) || !row.b_types.contains(b)) continue;
        try {
          concrete.push_back(sparse ? emulator::make_sparse_instruction(row, shape->m, shape->n_min, k, a, b)
                                    : emulator::make_instruction(row, shape->m, shape->n_min, k, a, b));
        } catch (const std::invalid_argument&) {
          // A pair the row's rules refuse (e.g. mixed f16 x bf16 where PTX forbids it).
        }
      }
    }
  }
  return concrete;
}

// Every concrete instruction of the table, dense forms then sparse forms of each row, grouped by
// model, in table order. A row's dense forms and its sparse forms each get the row budget.
const std::vector<ModelClass>& model_classes() {
  static const std::vector<ModelClass> classes = [] {
    std::vector<ModelClass> out;
    std::map<std::string, std::size_t> index;
    for (const InstructionRow& row : emulator::instruction_table()) {
      for (bool sparse : {false, true}) {
        const std::vector<Instruction> concrete = concrete_instructions(row, sparse);
        if (concrete.empty()) continue;
        const std::size_t budget = sparse ? kSparseRowBudget : kRowBudget;
        const std::size_t per = std::max(kInstructionFloor, (budget + concrete.size() - 1) / concrete.size());
        const std::size_t cases = (per + 7) / 8 * 8;
        for (const Instruction& ins : concrete) {
          const std::string key = model_key(ins);
          const auto [it, fresh] = index.emplace(key, out.size());
          if (fresh) out.push_back({});
          ModelClass& c = out[it->second];
          c.members.push_back(ins);
          c.cases = std::max(c.cases, cases);
        }
      }
    }
    return out;
  }();
  return classes;
}

std::string type_name(Type t) { return std::string(emulator::to_string(t)); }

class InstructionOp final : public Operation {
 public:
  InstructionOp(std::vector<Instruction> members, std::size_t default_cases)
      : members_(std::move(members)), default_cases_(default_cases) {
    const Instruction& i0 = members_.front();
    for (const Instruction& ins : members_) {
      if (ins.k != i0.k || ins.a != i0.a || ins.b != i0.b || ins.d != i0.d || ins.sparse != i0.sparse ||
          ins.block_scaled() != i0.block_scaled() ||
          (ins.block_scaled() && (ins.scale_type() != i0.scale_type() || ins.block() != i0.block()))) {
        invalid("instructions '" + i0.name() + "' and '" + ins.name() +
                "' take different operands and cannot share a file (K, operand, accumulator and scale types, "
                "and dense or sparse, must agree)");
      }
    }
    f64_ = i0.params().algorithm == emulator::Algorithm::fma_chain;
    k_ = static_cast<std::size_t>(i0.k);
    sparse_ = i0.sparse;
    stored_ = sparse_ ? k_ / 2 : k_;
    scales_ = i0.block_scaled() ? k_ / static_cast<std::size_t>(i0.block()) : 0;
  }

  SetKind kind() const override { return SetKind::instruction; }
  std::string id() const override { return "instruction:" + members_.front().name(); }
  std::string file_stem() const override {
    const Instruction& i = members_.front();
    return std::string(i.row->id) + (i.sparse ? ".sp" : "") + ".k" + std::to_string(i.k) + "." + type_name(i.a) +
           "." + type_name(i.b);
  }
  std::vector<std::string> op_lines() const override {
    std::vector<std::string> out;
    for (const Instruction& i : members_) out.push_back(i.name());
    return out;
  }
  std::vector<std::string> notes() const override {
    const Instruction& i = members_.front();
    const auto& p = i.params();
    std::vector<std::string> n = {
        "one output element per case: d = the instruction's D[i][j] for A row a, B column b, C element c" +
            std::string(scales_ ? " and the scales sa (A row, one per block) and sb (B column)" : ""),
        // "docs/numerics.md" names the design notes (../shared/docs/numerics.md, outside the
        // repository), as the committed files have always spelled it: a new spelling would change
        // the bytes, and so the SHA-256s, of every committed instruction file.
        "model (docs/numerics.md): " + std::string(emulator::to_string(p.algorithm)) +
            " L=" + std::to_string(p.L) + " F=" + std::to_string(p.F) + " " +
            std::string(emulator::to_string(p.rounding)) + " e_zero=" + std::to_string(p.e_zero)};
    if (sparse_) {
      const int group = i.sparse_group();
      n.push_back("sparse (docs/emulator.md \"Sparse MMA\"): a = the A row's " + std::to_string(stored_) +
                  " stored values, i = the position of each inside its group of " + std::to_string(group) +
                  " K positions (stored value s multiplies B row (s / " + std::to_string(group / 2) + ") * " +
                  std::to_string(group) + " + i[s]), b = the B column's " + std::to_string(k_) +
                  " codes; d = the dense form of K/2 (" + i.dense_form().name() +
                  ") on a and the selected B rows; pruned B rows (often NaN or Inf here) take no part");
    }
    if (i.a == Type::tf32 || i.b == Type::tf32)
      n.push_back("tf32 operands are fp32 words; the instruction truncates their low 13 bits");
    for (const Instruction& m : members_) {
      n.push_back("provenance of " + m.name() + ": " + std::string(emulator::to_string(m.provenance())));
    }
    return n;
  }
  std::vector<FieldSpec> fields() const override {
    const Instruction& i = members_.front();
    std::vector<FieldSpec> f = {{"a", element_type(i.a), stored_, false}};
    if (sparse_) f.push_back({"i", ElementType{WordType::u8, Format::float32}, stored_, false});
    f.push_back({"b", element_type(i.b), k_, false});
    f.push_back({"c", element_type(i.d), 1, false});
    if (scales_) {
      f.push_back({"sa", element_type(i.scale_type()), scales_, false});
      f.push_back({"sb", element_type(i.scale_type()), scales_, false});
    }
    f.push_back({"d", element_type(i.d), 1, true});
    return f;
  }

  std::uint64_t compute_one(const Instruction& ins, std::span<const std::uint64_t> in) const {
    if (f64_) {
      std::vector<double> a(k_), b(k_);
      for (std::size_t k = 0; k < k_; ++k) {
        a[k] = std::bit_cast<double>(in[k]);
        b[k] = std::bit_cast<double>(in[k_ + k]);
      }
      return std::bit_cast<std::uint64_t>(emulator::dot_f64(ins, a, b, std::bit_cast<double>(in[2 * k_])));
    }
    if (sparse_) {
      std::vector<std::uint32_t> a(stored_), b(k_);
      std::vector<std::uint8_t> index(stored_);
      for (std::size_t s = 0; s < stored_; ++s) {
        a[s] = static_cast<std::uint32_t>(in[s]);
        index[s] = static_cast<std::uint8_t>(in[stored_ + s]);
      }
      for (std::size_t k = 0; k < k_; ++k) b[k] = static_cast<std::uint32_t>(in[2 * stored_ + k]);
      return emulator::dot_sparse(ins, a, index, b, static_cast<std::uint32_t>(in[2 * stored_ + k_]));
    }
    std::vector<std::uint32_t> a(k_), b(k_), sa(scales_), sb(scales_);
    for (std::size_t k = 0; k < k_; ++k) {
      a[k] = static_cast<std::uint32_t>(in[k]);
      b[k] = static_cast<std::uint32_t>(in[k_ + k]);
    }
    for (std::size_t s = 0; s < scales_; ++s) {
      sa[s] = static_cast<std::uint32_t>(in[2 * k_ + 1 + s]);
      sb[s] = static_cast<std::uint32_t>(in[2 * k_ + 1 + scales_ + s]);
    }
    return emulator::dot(ins, a, b, static_cast<std::uint32_t>(in[2 * k_]), sa, sb);
  }

  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    out[0] = compute_one(members_.front(), in);
    for (std::size_t m = 1; m < members_.size(); ++m) {
      const std::uint64_t d = compute_one(members_[m], in);
      if (d != out[0]) {
        invalid("'" + members_[m].name() + "' gives 0x" + hex(d) + " but '" + members_.front().name() +
                "' gives 0x" + hex(out[0]) + ": the instructions of this file no longer share a model");
      }
    }
  }

  std::size_t default_cases() const override { return default_cases_; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override;

  const Instruction& first() const { return members_.front(); }

 private:
  std::vector<Instruction> members_;
  std::size_t default_cases_;
  bool f64_ = false;
  bool sparse_ = false;
  std::size_t k_ = 0, stored_ = 0, scales_ = 0;  // stored_: A values per row (K/2 when sparse)
};

// ---- Case generation.

// One case under construction; values are set from exact reals and the case is dropped when one
// is not representable in its format.
struct Dot {
  std::vector<std::uint64_t> a, b, sa, sb;
  std::uint64_t c = 0;
  bool ok = true;
};

class Generator {
 public:
  Generator(const Instruction& ins, Rng& rng) : ins_(ins), rng_(rng) {
    k_ = static_cast<std::size_t>(ins.k);
    scales_ = ins.block_scaled() ? k_ / static_cast<std::size_t>(ins.block()) : 0;
  }

  // The word of value v in operand type t, if v is exact there.
  static std::optional<std::uint64_t> encode(Type t, double v) {
    if (t == Type::f64) return std::bit_cast<std::uint64_t>(v);
    const Format f = *emulator::format_of(t);
    if (std::isnan(v)) {
      if (!has_nan(f)) return std::nullopt;
      return to_storage(f, quiet_nan_code(f));
    }
    if (std::isinf(v)) {
      if (!has_inf(f)) return std::nullopt;
      return to_storage(f, inf_code(f) | (v < 0 ? sign_mask(f) : 0u));
    }
    const auto code = exact_code(f, v);
    if (!code) return std::nullopt;
    return to_storage(f, *code);
  }

  Dot zero_case() const {
    Dot d;
    d.a.assign(k_, *encode(ins_.a, 0.0));
    d.b.assign(k_, *encode(ins_.b, 0.0));
    d.c = *encode(ins_.d, 0.0);
    if (scales_) {
      d.sa.assign(scales_, *encode(ins_.scale_type(), 1.0));
      d.sb.assign(scales_, *encode(ins_.scale_type(), 1.0));
    }
    return d;
  }
  void set(Dot& d, char which, std::size_t k, double v) const {
    const Type t = which == 'a' ? ins_.a : which == 'b' ? ins_.b : which == 'c' ? ins_.d : ins_.scale_type();
    const auto w = encode(t, v);
    if (!w) {
      d.ok = false;
      return;
    }
    switch (which) {
      case 'a': d.a[k] = *w; break;
      case 'b': d.b[k] = *w; break;
      case 'c': d.c = *w; break;
      case 's': d.sa[k] = *w; break;
      case 't': d.sb[k] = *w; break;
    }
  }

  // numerics.md (d.3) probes, adapted to the operand formats (a probe whose values a format cannot
  // hold is left out).
  std::vector<Dot> probes() const {
    std::vector<Dot> out;
    const auto keep = [&](Dot d) {
      if (d.ok) out.push_back(std::move(d));
    };
    const std::size_t last = k_ - 1;
    // F sweep (d.3 item 3): C = 1 and one product 2^-j (and -2^-j, and 2.25 * 2^-j, whose significand
    // is >= 2 and is not renormalised, b.2), in slot 0 and in the last slot (another L-chunk when K > L).
    for (int j = 1; j <= 44; ++j) {
      for (std::size_t slot : {std::size_t{0}, last}) {
        for (int variant = 0; variant < 3; ++variant) {
          if (slot == last && variant > 0) continue;
          Dot d = zero_case();
          set(d, 'c', 0, 1.0);
          const int ja = j / 2, jb = j - ja;
          const double a = variant == 2 ? 1.5 : 1.0, b = variant == 2 ? 1.5 : 1.0;
          set(d, 'a', slot, (variant == 1 ? -a : a) * std::ldexp(1.0, -ja));
          set(d, 'b', slot, b * std::ldexp(1.0, -jb));
          if (!d.ok && scales_) {
            // Out of the element range: reach 2^-j through the A scale of the slot's block.
            d = zero_case();
            set(d, 'c', 0, 1.0);
            set(d, 'a', slot, variant == 1 ? -a : a);
            set(d, 'b', slot, b);
            set(d, 's', slot / static_cast<std::size_t>(ins_.block()), std::ldexp(1.0, -j));
          }
          keep(std::move(d));
        }
      }
    }
    // The "Table 8" F discriminator (d.3 item 2): c = 2^23, a = [-2^13, -0.5, -0.25, -0.125],
    // b = [2^10, 1, 1, 1].
    if (k_ >= 4) {
      Dot d = zero_case();
      set(d, 'c', 0, 0x1p23);
      const double av[4] = {-0x1p13, -0.5, -0.25, -0.125}, bv[4] = {0x1p10, 1, 1, 1};
      for (int i = 0; i < 4; ++i) {
        set(d, 'a', static_cast<std::size_t>(i), av[i]);
        set(d, 'b', static_cast<std::size_t>(i), bv[i]);
      }
      keep(std::move(d));
    }
    // Output rounding (d.3 item 4): C = 1 + 2^-13 plus 1*1; and for f16 output the ties at 0.5 and
    // 1.5 ulp of 1.0 (2^-11, 3 * 2^-11), positive and negative.
    {
      Dot d = zero_case();
      set(d, 'c', 0, 1 + 0x1p-13);
      set(d, 'a', 0, 1.0);
      set(d, 'b', 0, 1.0);
      keep(std::move(d));
      for (double tie : {0x1p-11, 3 * 0x1p-11, -0x1p-11, -3 * 0x1p-11, 0x1p-12, 5 * 0x1p-12}) {
        Dot e = zero_case();
        set(e, 'c', 0, 1.0);
        set(e, 'a', 0, tie);
        set(e, 'b', 0, 1.0);
        keep(std::move(e));
      }
    }
    // Emulation probe (d.3 item 1): C = 128 and the product (3 * 2^-9)(2^-9) = 0.75 ulp(128).
    {
      Dot d = zero_case();
      set(d, 'c', 0, 128.0);
      set(d, 'a', 0, 3 * 0x1p-9);
      set(d, 'b', 0, 0x1p-9);
      keep(std::move(d));
    }
    // C in the alignment (d.3 item 5): C = (2 - 2^-10) * 2^-14 against a cancelling pair of growing
    // magnitude.
    for (int e = 0; e <= 24; e += 3) {
      Dot d = zero_case();
      set(d, 'c', 0, (2 - 0x1p-10) * 0x1p-14);
      set(d, 'a', 0, std::ldexp(1.0, e / 2));
      set(d, 'b', 0, std::ldexp(1.0, e - e / 2));
      set(d, 'a', 1, -std::ldexp(1.0, e / 2));
      set(d, 'b', 1, std::ldexp(1.0, e - e / 2));
      keep(std::move(d));
    }
    // e_zero floors (d.3 item 7): A = [2^-14, 2^-24, 0], B = [2^-11, 2^-23 or 2^-21, 1], C = 0; and
    // every product the smallest normal times the smallest normal, with C = 0 and C = the smallest
    // fp32 subnormal.
    if (k_ >= 3) {
      for (double b1 : {0x1p-23, 0x1p-21}) {
        Dot d = zero_case();
        set(d, 'a', 0, 0x1p-14);
        set(d, 'a', 1, 0x1p-24);
        set(d, 'b', 0, 0x1p-11);
        set(d, 'b', 1, b1);
        set(d, 'b', 2, 1.0);
        keep(std::move(d));
      }
    }
    if (ins_.a != Type::f64) {
      for (double c : {0.0, 0x1p-149}) {
        Dot d = zero_case();
        const Format fa = *emulator::format_of(ins_.a), fb = *emulator::format_of(ins_.b);
        for (std::size_t k = 0; k < k_; ++k) {
          set(d, 'a', k, to_double(fa, min_positive_code(fa)));
          set(d, 'b', k, to_double(fb, min_positive_code(fb)) * (k % 2 ? -1 : 1) * (k % 3 ? 1 : 3));
        }
        set(d, 'c', 0, c);
        if (scales_) {
          for (std::size_t s = 0; s < scales_; ++s) {
            set(d, 's', s, ins_.scale_type() == Type::ue8m0 ? 0x1p-127 : 0x1p-9);
            set(d, 't', s, ins_.scale_type() == Type::ue8m0 ? 0x1p-20 : 0x1p-9);
          }
        }
        keep(std::move(d));
      }
    }
    // Special values (d.3 item 8): NaN in A; Inf * 0; +Inf and -Inf; all products -0 with C = -0;
    // overflow to Inf and the largest finite sums.
    {
      Dot d = zero_case();
      set(d, 'a', 0, std::nan(""));
      set(d, 'b', 0, 1.0);
      keep(std::move(d));
      Dot e = zero_case();
      set(e, 'a', 0, kInf);
      keep(std::move(e));
      Dot f = zero_case();
      set(f, 'a', 0, kInf);
      set(f, 'b', 0, 1.0);
      set(f, 'a', 1, -kInf);
      set(f, 'b', 1, 1.0);
      keep(std::move(f));
      Dot g = zero_case();
      set(g, 'a', 0, kInf);
      set(g, 'b', 0, 2.0);
      set(g, 'c', 0, -1.0);
      keep(std::move(g));
      Dot h = zero_case();
      for (std::size_t k = 0; k < k_; ++k) {
        set(h, 'a', k, -0.0);
        set(h, 'b', k, 1.0);
      }
      set(h, 'c', 0, -0.0);
      keep(std::move(h));
      Dot i = zero_case();
      set(i, 'c', 0, kInf);
      set(i, 'a', 0, 1.0);
      set(i, 'b', 0, -1.0);
      keep(std::move(i));
    }
    if (ins_.a != Type::f64) {
      const Format fa = *emulator::format_of(ins_.a), fb = *emulator::format_of(ins_.b),
                   fd = *emulator::format_of(ins_.d);
      const double amax = to_double(fa, max_finite_code(fa)), bmax = to_double(fb, max_finite_code(fb));
      const double dmax = to_double(fd, max_finite_code(fd));
      for (double c : {0.0, dmax, -dmax}) {
        for (double big_scale : {1.0, 0x1p127}) {
          Dot d = zero_case();
          for (std::size_t k = 0; k < k_; ++k) {
            set(d, 'a', k, amax);
            set(d, 'b', k, bmax);
          }
          set(d, 'c', 0, c);
          if (big_scale != 1.0) {
            if (!scales_ || ins_.scale_type() != Type::ue8m0) continue;
            for (std::size_t s = 0; s < scales_; ++s) set(d, 's', s, big_scale);
          }
          keep(std::move(d));
        }
      }
      // Largest finite sum kept: C = FLT_MAX / F16 max plus a product too small to carry it over.
      Dot d = zero_case();
      set(d, 'c', 0, dmax);
      set(d, 'a', 0, 1.0);
      set(d, 'b', 0, 1.0);
      keep(std::move(d));
    }
    // Underflow sign (e.3): a tiny negative exact sum that truncates or rounds to zero.
    if (ins_.a != Type::f64) {
      Dot d = zero_case();
      const Format fa = *emulator::format_of(ins_.a), fb = *emulator::format_of(ins_.b);
      set(d, 'a', 0, -to_double(fa, min_positive_code(fa)));
      set(d, 'b', 0, to_double(fb, min_positive_code(fb)));
      if (scales_ && ins_.scale_type() == Type::ue8m0) set(d, 's', 0, 0x1p-127);
      keep(std::move(d));
    }
    // Block-scale probes (d.3 item 9).
    if (scales_) {
      const Type st = ins_.scale_type();
      // NaN scale on either side.
      for (char side : {'s', 't'}) {
        Dot d = zero_case();
        set(d, 'a', 0, 1.0);
        set(d, 'b', 0, 1.0);
        set(d, side, 0, std::nan(""));
        keep(std::move(d));
      }
      // e8m0 code 0 (2^-127); ue4m3 zero, smallest subnormal, bit 7 set (ignored: equal to without).
      if (st == Type::ue8m0) {
        Dot d = zero_case();
        set(d, 'a', 0, 1.0);
        set(d, 'b', 0, 1.0);
        set(d, 's', 0, 0x1p-127);
        set(d, 'c', 0, 0x1p-140);
        keep(std::move(d));
      } else {
        for (double s : {0.0, 0x1p-9}) {
          Dot d = zero_case();
          set(d, 'a', 0, 1.5);
          set(d, 'b', 0, 1.0);
          set(d, 's', 0, s);
          set(d, 'c', 0, 0x1p-20);
          keep(std::move(d));
        }
        Dot d = zero_case();
        set(d, 'a', 0, 1.5);
        set(d, 'b', 0, 1.0);
        set(d, 's', 0, 3.0);
        if (d.ok) {
          Dot e = d;
          e.sa[0] |= 0x80;  // the sign bit of ue4m3 is ignored
          keep(std::move(d));
          keep(std::move(e));
        }
      }
      // Group-of-16 probe: a cancelling (6 * 1) - (6 * 1) pair in group 0 under a large scale, other
      // groups zero, C = 1; and the pair across the k = 15/16 boundary. C truncation under GST: the
      // pair under 2^13 with C = 1 + 2^-23.
      if (k_ >= 32) {
        const double big = st == Type::ue8m0 ? 0x1p60 : 448.0;
        for (std::size_t second : {std::size_t{1}, std::size_t{16}}) {
          Dot d = zero_case();
          set(d, 'a', 0, 6.0);
          set(d, 'b', 0, 1.0);
          set(d, 'a', second, -6.0);
          set(d, 'b', second, 1.0);
          for (std::size_t s = 0; s < scales_; ++s) set(d, 's', s, big);
          set(d, 'c', 0, 1.0);
          keep(std::move(d));
        }
        Dot d = zero_case();
        set(d, 'a', 0, 6.0);
        set(d, 'b', 0, 1.0);
        set(d, 'a', 1, -6.0);
        set(d, 'b', 1, 1.0);
        set(d, 's', 0, st == Type::ue8m0 ? 0x1p13 : 256.0);
        set(d, 'c', 0, 1 + 0x1p-23);
        keep(std::move(d));
      }
    }
    return out;
  }

  // ---- Random strata.

  std::uint64_t random_word(Type t) {
    if (t == Type::f64) return rng_.next();
    const Format f = *emulator::format_of(t);
    if (info(f).code_shift) return rng_.u32();  // tf32: any fp32 word
    if (f == Format::float8_ue4m3) return rng_.next() & 0xFF;
    return rng_.next() & code_mask(f);
  }
  // A finite code of t drawn uniformly.
  std::uint64_t random_finite(Type t) {
    for (;;) {
      const std::uint64_t w = random_word(t);
      if (t == Type::f64) {
        if (std::isfinite(std::bit_cast<double>(w))) return w;
        continue;
      }
      const Format f = *emulator::format_of(t);
      const ValueClass c = classify(f, from_storage(f, static_cast<std::uint32_t>(w)));
      if (c != ValueClass::nan && c != ValueClass::infinite) return w;
    }
  }
  // A value of about normal shape with spread 2^scale, rounded to t.
  std::uint64_t realistic_word(Type t, int scale) {
    const double v = std::ldexp(rng_.normalish(), scale);
    if (t == Type::f64) return std::bit_cast<std::uint64_t>(v);
    const Format f = *emulator::format_of(t);
    if (f == Format::tfloat32) {
      // A full fp32 value: the instruction truncates it.
      return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    }
    ConvertOptions o = presets::ieee();
    o.overflow = Overflow::saturate;
    return to_storage(f, convert(f, v, o));
  }
  int typical_scale(Type t) const {
    if (t == Type::f64 || t == Type::f16 || t == Type::bf16 || t == Type::tf32 || t == Type::f32) return 0;
    const Format f = *emulator::format_of(t);
    return emax(f) - 2;  // quantized data fills the top of the range
  }

  // The inputs of a sparse case (a, i, b, c) from a case `d` of the dense form (K/2 products): the
  // position of each stored value inside its group is drawn (2:4: one of the six increasing pairs;
  // tf32 1:2: either position), the selected B rows hold d's B codes and the pruned rows random
  // codes of every class, NaN and Inf included (they must take no part in the result).
  void append_sparse(std::vector<std::uint64_t>& in, const Dot& d, int group) {
    const std::size_t stored = d.a.size(), per_group = static_cast<std::size_t>(group) / 2;
    std::vector<std::uint64_t> index(stored), b(2 * stored);
    for (auto& w : b) w = random_word(ins_.b);
    for (std::size_t first = 0; first < stored; first += per_group) {
      if (per_group == 1) {
        index[first] = rng_.below(2);
      } else {
        const auto& pair = emulator::kOrderedPairs[rng_.below(6)];
        index[first] = pair[0];
        index[first + 1] = pair[1];
      }
      const std::size_t base = first / per_group * static_cast<std::size_t>(group);
      for (std::size_t s = first; s < first + per_group; ++s) b[base + index[s]] = d.b[s];
    }
    in.insert(in.end(), d.a.begin(), d.a.end());
    in.insert(in.end(), index.begin(), index.end());
    in.insert(in.end(), b.begin(), b.end());
    in.push_back(d.c);
  }

  Dot random_case() {
    Dot d = zero_case();
    for (auto& w : d.a) w = random_word(ins_.a);
    for (auto& w : d.b) w = random_word(ins_.b);
    d.c = random_word(ins_.d);
    for (auto& w : d.sa) w = random_word(ins_.scale_type());
    for (auto& w : d.sb) w = random_word(ins_.scale_type());
    return d;
  }

  Dot realistic_case() {
    Dot d = zero_case();
    const int sa = typical_scale(ins_.a), sb = typical_scale(ins_.b);
    for (auto& w : d.a) w = realistic_word(ins_.a, sa);
    for (auto& w : d.b) w = realistic_word(ins_.b, sb);
    d.c = realistic_word(ins_.d, static_cast<int>(rng_.range(-4, sa + sb + 4)));
    if (scales_) {
      for (std::size_t s = 0; s < scales_; ++s) {
        if (ins_.scale_type() == Type::ue8m0) {
          d.sa[s] = static_cast<std::uint64_t>(rng_.range(127 - 6, 127 + 3));
          d.sb[s] = static_cast<std::uint64_t>(rng_.range(127 - 6, 127 + 3));
        } else {
          // ue4m3 block scales of NVFP4 data: normal codes around 1 (0x30 = 0.5 .. 0x50 = 8).
          d.sa[s] = static_cast<std::uint64_t>(rng_.range(0x30, 0x50));
          d.sb[s] = static_cast<std::uint64_t>(rng_.range(0x30, 0x50));
        }
      }
    }
    return d;
  }

  // Special value words of a type: NaN, +-Inf, +-max, +-smallest subnormal, +-0.
  std::vector<std::uint64_t> specials(Type t) const {
    std::vector<std::uint64_t> out;
    if (t == Type::f64) {
      for (double v : {std::nan(""), kInf, -kInf, 1.7976931348623157e308, -1.7976931348623157e308, 4.9e-324,
                       0.0, -0.0}) {
        out.push_back(std::bit_cast<std::uint64_t>(v));
      }
      return out;
    }
    const Format f = *emulator::format_of(t);
    const std::uint32_t s = sign_mask(f);
    std::vector<std::uint32_t> codes = {
        max_finite_code(f), s | max_finite_code(f), min_positive_code(f), s | min_positive_code(f), 0u, s};
    if (has_nan(f)) codes.push_back(quiet_nan_code(f));
    if (has_inf(f)) {
      codes.push_back(inf_code(f));
      codes.push_back(s | inf_code(f));
    }
    for (std::uint32_t c : codes) out.push_back(to_storage(f, c));
    if (f == Format::tfloat32) {
      out.push_back(0x7F800001u);  // a NaN whose payload is only in the low 13 bits: Inf after truncation
      out.push_back(0x3F801FFFu);  // 1 + low bits that truncation drops
    }
    return out;
  }

  Dot edge_case() {
    const int recipe = static_cast<int>(rng_.below(8));
    Dot d = realistic_case();
    const auto pick = [&](const std::vector<std::uint64_t>& v) { return v[rng_.below(v.size())]; };
    switch (recipe) {
      case 0: {  // one or two special operands, maybe a special C or scale
        const std::size_t n = 1 + rng_.below(2);
        for (std::size_t i = 0; i < n; ++i) {
          if (rng_.chance(1, 2))
            d.a[rng_.below(k_)] = pick(specials(ins_.a));
          else
            d.b[rng_.below(k_)] = pick(specials(ins_.b));
        }
        if (rng_.chance(1, 3)) d.c = pick(specials(ins_.d));
        if (scales_ && rng_.chance(1, 3)) {
          const std::vector<std::uint64_t> s =
              ins_.scale_type() == Type::ue8m0
                  ? std::vector<std::uint64_t>{0x00, 0x01, 0xFE, 0xFF, 0x7F}
                  : std::vector<std::uint64_t>{0x00, 0x01, 0x7E, 0x7F, 0x80, 0xB8, 0xFF};
          (rng_.chance(1, 2) ? d.sa : d.sb)[rng_.below(scales_)] = pick(s);
        }
        break;
      }
      case 1: {  // every product zero (either operand, either sign), C +-0 or tiny
        for (std::size_t k = 0; k < k_; ++k) {
          const bool neg = rng_.chance(1, 2);
          if (rng_.chance(1, 2))
            d.a[k] = *encode(ins_.a, neg ? -0.0 : 0.0);
          else
            d.b[k] = *encode(ins_.b, neg ? -0.0 : 0.0);
        }
        d.c = rng_.chance(1, 2) ? *encode(ins_.d, rng_.chance(1, 2) ? -0.0 : 0.0) : random_finite(ins_.d);
        break;
      }
      case 2: {  // exact cancellation in pairs: a_j = -a_i, b_j = b_i
        for (std::size_t k = 0; k + 1 < k_; k += 2) {
          d.a[k + 1] = negate(ins_.a, d.a[k]);
          d.b[k + 1] = d.b[k];
        }
        // (Pairs never straddle a scale block: blocks are 16 or 32 wide.)
        if (rng_.chance(1, 2)) d.c = *encode(ins_.d, 0.0);
        break;
      }
      case 3: {  // wide exponent spread: uniformly random finite codes, C near the largest product
        for (auto& w : d.a) w = random_finite(ins_.a);
        for (auto& w : d.b) w = random_finite(ins_.b);
        d.c = random_finite(ins_.d);
        break;
      }
      case 4: {  // C dominates, or is negligible
        const int e = rng_.chance(1, 2) ? 24 : -40;
        d.c = realistic_word(ins_.d, typical_scale(ins_.a) + typical_scale(ins_.b) + e);
        break;
      }
      case 5: {  // tiny: subnormal operands (smallest codes with random mantissas)
        for (auto& w : d.a) w = small_word(ins_.a);
        for (auto& w : d.b) w = small_word(ins_.b);
        d.c = rng_.chance(1, 2) ? *encode(ins_.d, 0.0) : small_word(ins_.d);
        break;
      }
      case 6: {  // large: the top codes, same signs, C large
        const bool neg = rng_.chance(1, 2);
        for (auto& w : d.a) w = large_word(ins_.a, neg);
        for (auto& w : d.b) w = large_word(ins_.b, false);
        d.c = large_word(ins_.d, rng_.chance(1, 2));
        break;
      }
      default: {  // extreme scales
        if (scales_) {
          for (std::size_t s = 0; s < scales_; ++s) {
            if (ins_.scale_type() == Type::ue8m0) {
              d.sa[s] = rng_.chance(1, 2) ? static_cast<std::uint64_t>(rng_.range(0, 8))
                                          : static_cast<std::uint64_t>(rng_.range(240, 254));
              d.sb[s] = static_cast<std::uint64_t>(rng_.range(0, 254));
            } else {
              d.sa[s] = static_cast<std::uint64_t>(rng_.range(0, 0x7E));
              d.sb[s] = static_cast<std::uint64_t>(rng_.range(0, 0xFE));
              if (d.sb[s] == 0x7F) d.sb[s] = 0x7E;
            }
          }
        } else {
          for (auto& w : d.a) w = random_finite(ins_.a);
          d.c = *encode(ins_.d, 0.0);
        }
        break;
      }
    }
    return d;
  }

  std::uint64_t negate(Type t, std::uint64_t w) const {
    if (t == Type::f64) return w ^ (1ull << 63);
    const Format f = *emulator::format_of(t);
    return w ^ to_storage(f, sign_mask(f));
  }
  std::uint64_t small_word(Type t) {
    if (t == Type::f64) return rng_.next() & 0x000FFFFFFFFFFFFFull;  // subnormal doubles
    const Format f = *emulator::format_of(t);
    const int m = info(f).mantissa_bits;
    std::uint32_t code = static_cast<std::uint32_t>(rng_.next()) & ((2u << m) - 1u);  // exponent field 0 or 1
    if (rng_.chance(1, 2)) code |= sign_mask(f);
    if (f == Format::tfloat32) return to_storage(f, code) | (rng_.u32() & 0x1FFFu);
    return to_storage(f, code);
  }
  std::uint64_t large_word(Type t, bool negative) {
    if (t == Type::f64) return std::bit_cast<std::uint64_t>(negative ? -0x1p1000 : 0x1p1000);
    const Format f = *emulator::format_of(t);
    const std::uint32_t top = max_finite_code(f);
    std::uint32_t code = top - static_cast<std::uint32_t>(rng_.below(std::min<std::uint32_t>(top, 4) + 1));
    if (negative) code |= sign_mask(f);
    return to_storage(f, code);
  }

 private:
  const Instruction& ins_;
  Rng& rng_;
  std::size_t k_ = 0, scales_ = 0;
};

void append(std::vector<std::uint64_t>& in, const Dot& d) {
  in.insert(in.end(), d.a.begin(), d.a.end());
  in.insert(in.end(), d.b.begin(), d.b.end());
  in.push_back(d.c);
  in.insert(in.end(), d.sa.begin(), d.sa.end());
  in.insert(in.end(), d.sb.begin(), d.sb.end());
}

std::vector<std::uint64_t> InstructionOp::generate_inputs(const GenerateOptions& o) const {
  Rng rng(operation_seed(o.seed, id()));
  // Sparse sets: the dense form's cases (probes included, over the K/2 stored values), each spread
  // over K positions by Generator::append_sparse.
  const Instruction dense = sparse_ ? first().dense_form() : first();
  Generator g(dense, rng);
  const auto add_case = [&](std::vector<std::uint64_t>& in, const Dot& d) {
    if (sparse_) {
      g.append_sparse(in, d, first().sparse_group());
    } else {
      append(in, d);
    }
  };
  const std::size_t total = case_count(o, default_cases_);
  std::vector<std::uint64_t> in;
  std::size_t n = 0;
  if (o.data == DataKind::edge || o.data == DataKind::mixed) {
    // Probes first; at most half the set (an even subsample when there are more).
    std::vector<Dot> probes = g.probes();
    const std::size_t cap = o.data == DataKind::edge ? total : total / 2;
    const std::size_t take = std::min(cap, probes.size());
    for (std::size_t i = 0; i < take; ++i) {
      add_case(in, probes[i * probes.size() / take]);
      ++n;
    }
  }
  for (; n < total; ++n) {
    DataKind kind = o.data;
    if (kind == DataKind::mixed) {
      const DataKind rotation[] = {DataKind::edge, DataKind::random, DataKind::realistic};
      kind = rotation[n % 3];
    }
    switch (kind) {
      case DataKind::random: add_case(in, g.random_case()); break;
      case DataKind::realistic: add_case(in, g.realistic_case()); break;
      default: add_case(in, g.edge_case()); break;
    }
  }
  return in;
}

std::unique_ptr<InstructionOp> class_of(const Instruction& ins) {
  for (const ModelClass& c : model_classes()) {
    for (const Instruction& m : c.members) {
      if (m.row == ins.row && m.k == ins.k && m.a == ins.a && m.b == ins.b && m.sparse == ins.sparse) {
        return std::make_unique<InstructionOp>(c.members, c.cases);
      }
    }
  }
  // Not a smallest-shape member of the table's enumeration (e.g. another N): a set of its own.
  return std::make_unique<InstructionOp>(std::vector<Instruction>{ins}, kRowBudget);
}

}  // namespace

std::unique_ptr<Operation> instruction_from_id(std::string_view rest) {
  return class_of(emulator::parse_instruction(rest));
}

std::unique_ptr<Operation> instruction_from_file(const GoldenFile& f) {
  const Header& h = f.header;
  if (!h.modes.empty()) throw GoldenError(f.name, h.mode_lines[0], "@mode lines belong to conversion files");
  std::vector<Instruction> members;
  for (std::size_t i = 0; i < h.ops.size(); ++i) {
    try {
      members.push_back(emulator::parse_instruction(h.ops[i]));
    } catch (const std::invalid_argument& e) {
      fail_op(f, i, std::string("not an instruction of the emulator table: ") + e.what());
    }
  }
  std::unique_ptr<InstructionOp> op;
  try {
    op = std::make_unique<InstructionOp>(std::move(members), h.cases);
  } catch (const std::invalid_argument& e) {
    fail_op(f, 0, e.what());
  }
  check_fields(f, op->fields());
  return op;
}

std::vector<std::unique_ptr<Operation>> instruction_family() {
  std::vector<std::unique_ptr<Operation>> out;
  for (const ModelClass& c : model_classes())
    out.push_back(std::make_unique<InstructionOp>(c.members, c.cases));
  return out;
}

}  // namespace blockscale::golden::detail

namespace blockscale::golden {

std::unique_ptr<Operation> instruction_operation(std::string_view instruction_name) {
  return std::make_unique<detail::InstructionOp>(
      std::vector<emulator::Instruction>{emulator::parse_instruction(instruction_name)}, detail::kRowBudget);
}

}  // namespace blockscale::golden
