// SPDX-License-Identifier: Apache-2.0
// Layout sets: scale-factor layouts (logical index -> storage offset) and sub-byte packing
// (codes -> bytes).
//
//   @op scale_layout tiled_128x4
//   @fields rows:u64 cols:u64 r:u64 c:u64 -> size:u64 offset:u64
//
//   @op grouped_scale_layout rows:0,5,133,133,300
//   @fields rows:u64 cols:u64 r:u64 c:u64 -> size:u64 offset:u64
//
//   @op weight_interleave flashinfer_sm90_fp4
//   @fields rows:u64 cols:u64 r:u64 k:u64 -> size:u64 bit0:u64 bit1:u64 bit2:u64 bit3:u64
//
//   @op pack fp6_dense e2m3
//   @fields codes:e2m3[16] -> bytes:u8[12]
#include <algorithm>
#include <set>

#include "blockscale/layout/grouped_scales.h"
#include "blockscale/layout/packing.h"
#include "blockscale/layout/scale_layout.h"
#include "blockscale/layout/weight_interleave.h"
#include "common.h"

namespace blockscale::golden::detail {
namespace {

constexpr ElementType kU64{WordType::u64, Format::float32};
constexpr ElementType kU8{WordType::u8, Format::float32};

// The fields of both offset maps (ScaleLayout and GroupedScaleLayout): an R x C matrix and an
// index in, the storage size and the index's offset out.
std::vector<FieldSpec> offset_fields() {
  return {{"rows", kU64, 1, false}, {"cols", kU64, 1, false}, {"r", kU64, 1, false},
          {"c", kU64, 1, false},    {"size", kU64, 1, true},  {"offset", kU64, 1, true}};
}

// The four inputs every layout case starts with (two extents, a two-part index) stay below 2^40,
// the library's extent limit, so they convert to int64 safely.
void check_extents_and_index(std::span<const std::uint64_t> in) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 40;
  for (int i = 0; i < 4; ++i) {
    if (in[i] >= kMax) invalid("index or extent 0x" + hex(in[i]) + " is beyond 2^40");
  }
}

// One case of an offset map. The inverse map must give the index back (a case checks both
// directions).
template <class Layout>
void compute_offset_case(const Layout& layout, std::span<const std::uint64_t> in, std::span<std::uint64_t> out) {
  check_extents_and_index(in);
  const auto R = static_cast<std::int64_t>(in[0]), C = static_cast<std::int64_t>(in[1]);
  const auto r = static_cast<std::int64_t>(in[2]), c = static_cast<std::int64_t>(in[3]);
  const std::int64_t size = storage_size(layout, R, C);
  const std::int64_t off = offset(layout, R, C, r, c);
  const auto back = logical_index(layout, R, C, off);
  if (!back || (*back)[0] != r || (*back)[1] != c) {
    invalid("logical_index(offset(" + std::to_string(r) + ", " + std::to_string(c) + ")) does not give the index back");
  }
  out[0] = static_cast<std::uint64_t>(size);
  out[1] = static_cast<std::uint64_t>(off);
}

// Shapes (R, C) that a layout takes, padded and unpadded: the seed shapes of layouts.md (128 x 4,
// 500 x 20), tiny ones, and shapes just past each padding boundary.
std::vector<std::array<std::int64_t, 2>> layout_shapes(const ScaleLayout& l) {
  const std::vector<std::array<std::int64_t, 2>> candidates = {{1, 1},    {3, 5},   {7, 2},   {32, 8},
                                                               {100, 3},  {128, 4}, {129, 5}, {256, 12},
                                                               {500, 20}, {64, 16}, {384, 8}, {9, 33}};
  std::vector<std::array<std::int64_t, 2>> out;
  for (const auto& s : candidates) {
    try {
      check_shape(l, s[0], s[1]);
      out.push_back(s);
    } catch (const std::invalid_argument&) {
    }
  }
  // Layouts with divisibility rules (gluon_contiguous, cutile_swizzle_32_4_4, block_major_k) take
  // few or none of the shapes above: add multiples of their tiles.
  if (out.size() < 4) {
    for (std::int64_t r : {128, 256, 512}) {
      for (std::int64_t c : {4, 8, 16}) {
        std::int64_t rr = r, cc = c;
        if (l.kind == ScaleLayoutKind::gluon_contiguous) {
          rr = l.block_mn * (r / 128);
          cc = l.block_k_scales * (c / 4);
        }
        if (l.kind == ScaleLayoutKind::block_major_k) cc = l.block_k * (c / 4);
        try {
          check_shape(l, rr, cc);
          if (std::find(out.begin(), out.end(), std::array<std::int64_t, 2>{rr, cc}) == out.end())
            out.push_back({rr, cc});
        } catch (const std::invalid_argument&) {
        }
      }
    }
  }
  return out;
}

// A layout's file name: its text form with the separators (':', ',', '=') as '_'.
std::string layout_file_stem(const char* prefix, std::string text) {
  for (char& c : text) {
    if (c == ':' || c == ',' || c == '=') c = '_';
  }
  return prefix + text;
}

class ScaleLayoutOp final : public Operation {
 public:
  explicit ScaleLayoutOp(ScaleLayout l) : layout_(l) { validate(layout_); }
  SetKind kind() const override { return SetKind::layout; }
  std::string id() const override { return "layout:" + to_string(layout_); }
  std::string file_stem() const override { return layout_file_stem("scale_", to_string(layout_)); }
  std::vector<std::string> op_lines() const override { return {"scale_layout " + to_string(layout_)}; }
  std::vector<std::string> notes() const override {
    if (layout_.kind == ScaleLayoutKind::block_major_k) {
      return {"rows x cols byte matrix (rows of element data along M or N, cols = bytes per row); (r, c) -> storage",
              "offset in bytes; size = bytes per matrix (layout/scale_layout.h)"};
    }
    return {
        "rows x cols logical scale matrix (rows along M or N, cols = K blocks); (r, c) -> storage offset in",
        std::string("elements of the layout's storage (") +
            (info(layout_.kind).element == ScaleElement::fp32 ? "fp32 scales" : "bytes") +
            "); size = storage elements per matrix, padding included (layout/scale_layout.h)"};
  }
  std::vector<FieldSpec> fields() const override { return offset_fields(); }
  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    compute_offset_case(layout_, in, out);
  }
  std::size_t default_cases() const override { return 384; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override {
    Rng rng(operation_seed(o.seed, id()));
    const auto shapes = layout_shapes(layout_);
    if (shapes.empty()) invalid(id() + ": no test shape fits this layout");
    std::vector<std::uint64_t> in;
    auto push = [&](std::int64_t R, std::int64_t C, std::int64_t r, std::int64_t c) {
      for (std::int64_t v : {R, C, r, c}) in.push_back(static_cast<std::uint64_t>(v));
    };
    const std::size_t total = case_count(o, default_cases());
    // Edge: the corners and the tile boundaries of every shape (indices 0, 1, 3, 4, 7, 8, 31,
    // 32, 127, 128 and the last ones, where they exist).
    if (o.data == DataKind::edge || o.data == DataKind::mixed) {
      for (const auto& [R, C] : shapes) {
        std::set<std::int64_t> rs, cs;
        for (std::int64_t v : {0, 1, 3, 4, 7, 8, 31, 32, 127, 128}) {
          if (v < R) rs.insert(v);
          if (v < C) cs.insert(v);
        }
        rs.insert(R - 1);
        cs.insert(C - 1);
        for (std::int64_t r : rs) {
          for (std::int64_t c : cs) {
            if (in.size() / 4 < total) push(R, C, r, c);
          }
        }
      }
    }
    while (in.size() / 4 < total) {
      const auto& [R, C] = shapes[rng.below(shapes.size())];
      const auto col = rng.range(0, C - 1);
      const auto row = rng.range(0, R - 1);
      push(R, C, row, col);
    }
    return in;
  }

 private:
  ScaleLayout layout_;
};

// Grouped (ragged MoE) scales: the group list fixes the extent along its axis; the other extent is
// one of a few values per case. A case outside the groups' extent cannot be computed.
class GroupedLayoutOp final : public Operation {
 public:
  explicit GroupedLayoutOp(GroupedScaleLayout l) : layout_(std::move(l)) {
    if (layout_.group_ends.empty()) invalid("grouped scale layout " + to_string(layout_) + ": a set needs groups");
  }
  SetKind kind() const override { return SetKind::layout; }
  std::string id() const override { return "grouped_layout:" + to_string(layout_); }
  std::string file_stem() const override { return layout_file_stem("grouped_", to_string(layout_)); }
  std::vector<std::string> op_lines() const override { return {"grouped_scale_layout " + to_string(layout_)}; }
  std::vector<std::string> notes() const override {
    const bool rows = layout_.axis == GroupAxis::rows;
    std::string storage;
    if (layout_.family == GroupedScaleFamily::torchao) {
      storage = "stored as the 128x4 layout of its submatrix";
    } else if (layout_.family == GroupedScaleFamily::triton_kernels) {
      storage = "from a 128-aligned row of one padded matrix, stored as tiled_128x4_k8 (triton_kernels ragged)";
    } else if (rows) {
      storage = "from an aligned row of one padded matrix, stored as deepgemm_sm100_packed (DeepGEMM m-grouped)";
    } else {
      storage = "stored as deepgemm_sm100_packed of its submatrix, end to end (DeepGEMM k-grouped)";
    }
    return {"rows x cols logical scale matrix cut into the listed groups along " +
                std::string(rows ? "rows (M groups); rows = the last end" : "cols (K groups); cols = the last end") +
                "; each group",
            storage + " (layout/grouped_scales.h); (r, c) -> byte offset; size = the buffer's bytes"};
  }
  std::vector<FieldSpec> fields() const override { return offset_fields(); }
  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    compute_offset_case(layout_, in, out);
  }
  std::size_t default_cases() const override { return 384; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override {
    Rng rng(operation_seed(o.seed, id()));
    const bool rows = layout_.axis == GroupAxis::rows;
    const std::int64_t extent = layout_.group_ends.back();
    // The free extent: block counts that M groups accept (torchao: C % 4 == 0; DeepGEMM pads C to
    // 4), or row counts around the 128-row atom for K groups (DeepGEMM: R % 4 == 0).
    // triton_kernels pads C to 8.
    const bool deepgemm = layout_.family == GroupedScaleFamily::deepgemm_sm100;
    const bool triton = layout_.family == GroupedScaleFamily::triton_kernels;
    const std::vector<std::int64_t> others = rows ? (deepgemm || triton ? std::vector<std::int64_t>{1, 3, 4, 7, 20}
                                                              : std::vector<std::int64_t>{4, 8, 12, 20})
                                                  : (deepgemm ? std::vector<std::int64_t>{4, 100, 128, 132, 300}
                                                              : std::vector<std::int64_t>{1, 100, 128, 130, 300});
    std::vector<std::uint64_t> in;
    const std::size_t total = case_count(o, default_cases());
    auto push = [&](std::int64_t other, std::int64_t along, std::int64_t across) {
      if (in.size() / 4 >= total) return;
      const std::int64_t R = rows ? extent : other, C = rows ? other : extent;
      const std::int64_t r = rows ? along : across, c = rows ? across : along;
      for (std::int64_t v : {R, C, r, c}) in.push_back(static_cast<std::uint64_t>(v));
    };
    // Edge: the first and last index of every non-empty group along the axis, against the atom
    // edges across it.
    if (o.data == DataKind::edge || o.data == DataKind::mixed) {
      std::set<std::int64_t> along;
      std::int64_t begin = 0;
      for (std::int64_t end : layout_.group_ends) {
        if (end > begin) along.insert({begin, end - 1});
        begin = end;
      }
      for (std::int64_t other : others) {
        std::set<std::int64_t> across;
        for (std::int64_t v : {0, 1, 3, 4, 31, 32, 127, 128}) {
          if (v < other) across.insert(v);
        }
        across.insert(other - 1);
        for (std::int64_t a : along) {
          for (std::int64_t x : across) push(other, a, x);
        }
      }
    }
    while (in.size() / 4 < total) {
      // Drawn in separate statements: the order of function arguments is unspecified.
      const std::int64_t other = others[rng.below(others.size())];
      const std::int64_t across = rng.range(0, other - 1);
      const std::int64_t along = rng.range(0, extent - 1);
      push(other, along, across);
    }
    return in;
  }

 private:
  GroupedScaleLayout layout_;
};

// The SM90 mixed-input weight interleaves: code (r, k) of a rows x cols matrix of 4-bit codes ->
// the bit index of each of its four bits in the interleaved buffer.
class WeightInterleaveOp final : public Operation {
 public:
  explicit WeightInterleaveOp(WeightInterleave v) : variant_(v) {}
  SetKind kind() const override { return SetKind::layout; }
  std::string id() const override { return "weight_interleave:" + to_string(variant_); }
  std::string file_stem() const override { return "weights_" + to_string(variant_); }
  std::vector<std::string> op_lines() const override { return {"weight_interleave " + to_string(variant_)}; }
  std::vector<std::string> notes() const override {
    return {std::string(info(variant_).source) + ":",
            "rows x cols 4-bit codes stored fp4_dense (code 2j in the low nibble of byte j); (r, k) -> the bit index",
            "(8 * byte + bit) of code bits 0..3 (bit 3 = sign) in the interleaved buffer of size bytes "
            "(layout/weight_interleave.h)"};
  }
  std::vector<FieldSpec> fields() const override {
    return {{"rows", kU64, 1, false}, {"cols", kU64, 1, false}, {"r", kU64, 1, false},
            {"k", kU64, 1, false},    {"size", kU64, 1, true},  {"bit0", kU64, 1, true},
            {"bit1", kU64, 1, true},  {"bit2", kU64, 1, true},  {"bit3", kU64, 1, true}};
  }
  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    check_extents_and_index(in);
    const auto rows = static_cast<std::int64_t>(in[0]), cols = static_cast<std::int64_t>(in[1]);
    const auto r = static_cast<std::int64_t>(in[2]), k = static_cast<std::int64_t>(in[3]);
    out[0] = static_cast<std::uint64_t>(weight_bytes(variant_, rows, cols));
    const auto bits = weight_code_bits(variant_, rows, cols, r, k);
    for (std::int64_t j = 0; j < 4; ++j) {
      if (weight_bit_source(variant_, rows, cols, bits[static_cast<std::size_t>(j)]) != std::array<std::int64_t, 3>{r, k, j})
        invalid("weight_bit_source(weight_code_bits(...)) does not give the code bit back");
      out[static_cast<std::size_t>(1 + j)] = static_cast<std::uint64_t>(bits[static_cast<std::size_t>(j)]);
    }
  }
  std::size_t default_cases() const override { return 384; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override {
    Rng rng(operation_seed(o.seed, id()));
    // One tile, a tile pair each way, a wide and a tall matrix.
    const std::array<std::int64_t, 2> shapes[] = {{16, 64}, {32, 128}, {48, 192}, {128, 256}, {16, 512}};
    std::vector<std::uint64_t> in;
    const std::size_t total = case_count(o, default_cases());
    auto push = [&](std::int64_t rows, std::int64_t cols, std::int64_t r, std::int64_t k) {
      if (in.size() / 4 < total)
        for (std::int64_t v : {rows, cols, r, k}) in.push_back(static_cast<std::uint64_t>(v));
    };
    // Edge: the rows of each half tile and tile ends; codes at the word, 4-byte and 32-byte edges.
    if (o.data == DataKind::edge || o.data == DataKind::mixed) {
      for (const auto& [rows, cols] : shapes) {
        for (std::int64_t r : {std::int64_t{0}, std::int64_t{7}, std::int64_t{8}, std::int64_t{15}, rows - 1}) {
          for (std::int64_t k : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{8},
                                 std::int64_t{9}, std::int64_t{16}, std::int64_t{63}, cols - 1})
            push(rows, cols, r, k);
        }
      }
    }
    while (in.size() / 4 < total) {
      const auto& [rows, cols] = shapes[rng.below(std::size(shapes))];
      const std::int64_t k = rng.range(0, cols - 1);
      const std::int64_t r = rng.range(0, rows - 1);
      push(rows, cols, r, k);
    }
    return in;
  }

 private:
  WeightInterleave variant_;
};

constexpr std::size_t kPackGroup = 16;  // codes per case: one whole unit of every packing

class PackingOp final : public Operation {
 public:
  PackingOp(Packing p, Format f) : packing_(p), format_(f), bytes_(packed_bytes(p, f, kPackGroup)) {}
  SetKind kind() const override { return SetKind::layout; }
  std::string id() const override { return "pack:" + to_string(packing_) + ":" + info(format_).short_name; }
  std::string file_stem() const override {
    return "pack_" + to_string(packing_) + "_" + info(format_).short_name;
  }
  std::vector<std::string> op_lines() const override {
    return {"pack " + to_string(packing_) + " " + info(format_).short_name};
  }
  std::vector<std::string> notes() const override {
    return {
        "16 element codes along K (element 0 first) -> their packed bytes, byte 0 first (layout/packing.h)"};
  }
  std::vector<FieldSpec> fields() const override {
    return {{"codes", ElementType::of(format_), kPackGroup, false}, {"bytes", kU8, bytes_, true}};
  }
  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    std::vector<std::uint8_t> codes(kPackGroup), packed(bytes_), back(kPackGroup);
    for (std::size_t i = 0; i < kPackGroup; ++i) codes[i] = static_cast<std::uint8_t>(in[i]);
    pack(packing_, format_, codes, packed);
    unpack(packing_, format_, packed, back);
    if (back != codes) invalid("unpack(pack(codes)) does not give the codes back");
    for (std::size_t i = 0; i < bytes_; ++i) out[i] = packed[i];
  }
  std::size_t default_cases() const override { return 64; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override {
    Rng rng(operation_seed(o.seed, id()));
    const std::uint32_t mask = code_mask(format_);
    std::vector<std::uint64_t> in;
    const std::size_t total = case_count(o, default_cases());
    // Edge: all zeros, all ones, one code set per position (shows where each element lands), and
    // alternating patterns.
    if (o.data == DataKind::edge || o.data == DataKind::mixed) {
      for (std::uint32_t fill : {0u, mask}) {
        for (std::size_t i = 0; i < kPackGroup; ++i) in.push_back(fill);
      }
      for (std::size_t pos = 0; pos < kPackGroup; ++pos) {
        for (std::size_t i = 0; i < kPackGroup; ++i) in.push_back(i == pos ? mask : 0u);
      }
      for (std::size_t i = 0; i < kPackGroup; ++i) in.push_back(i % (mask + 1));
    }
    // The edge patterns come first; a smaller count keeps the first of them.
    in.resize(std::min(in.size(), total * kPackGroup));
    while (in.size() < total * kPackGroup) in.push_back(rng.next() & mask);
    return in;
  }

 private:
  Packing packing_;
  Format format_;
  std::size_t bytes_;
};

}  // namespace

std::unique_ptr<Operation> scale_layout_from_id(std::string_view rest) {
  return std::make_unique<ScaleLayoutOp>(scale_layout_from_string(rest));
}

std::unique_ptr<Operation> grouped_layout_from_id(std::string_view rest) {
  return std::make_unique<GroupedLayoutOp>(grouped_scale_layout_from_string(rest));
}

std::unique_ptr<Operation> weight_interleave_from_id(std::string_view rest) {
  return std::make_unique<WeightInterleaveOp>(weight_interleave_from_string(rest));
}

std::unique_ptr<Operation> packing_from_id(std::string_view rest) {
  const auto parts = split(rest, ':');
  if (parts.size() != 2) invalid("packing id " + quote(rest) + " is not <packing>:<format>");
  const auto p = parse_packing(parts[0]);
  if (!p) invalid("unknown packing " + quote(parts[0]));
  const auto t = parse_element_type(parts[1]);
  if (!t || t->word != WordType::code) invalid("unknown format " + quote(parts[1]));
  return std::make_unique<PackingOp>(*p, t->format);
}

std::unique_ptr<Operation> layout_from_file(const GoldenFile& f) {
  const Header& h = f.header;
  if (h.ops.size() != 1) fail_op(f, 1, "a layout file has exactly one @op line");
  if (!h.modes.empty()) throw GoldenError(f.name, h.mode_lines[0], "@mode lines belong to conversion files");
  const auto parts = split(h.ops[0], ' ');
  std::unique_ptr<Operation> op;
  try {
    if (parts.size() == 2 && parts[0] == "scale_layout") {
      op = std::make_unique<ScaleLayoutOp>(scale_layout_from_string(parts[1]));
    } else if (parts.size() == 2 && parts[0] == "grouped_scale_layout") {
      op = grouped_layout_from_id(parts[1]);
    } else if (parts.size() == 2 && parts[0] == "weight_interleave") {
      op = weight_interleave_from_id(parts[1]);
    } else if (parts.size() == 3 && parts[0] == "pack") {
      op = packing_from_id(parts[1] + ":" + parts[2]);
    } else {
      fail_op(
          f, 0,
          "expected '@op scale_layout <layout>', '@op grouped_scale_layout <family_axis>:<ends>', '@op weight_interleave "
          "<interleave>' or '@op pack <packing> <format>', got " +
              quote(h.ops[0]));
    }
  } catch (const std::invalid_argument& e) {
    fail_op(f, 0, e.what());
  }
  check_fields(f, op->fields());
  return op;
}

std::vector<std::unique_ptr<Operation>> layout_family() {
  std::vector<std::unique_ptr<Operation>> out;
  std::vector<ScaleLayout> layouts;
  for (const ScaleLayoutKindInfo& k : kScaleLayoutKindTable) {
    switch (k.kind) {
      case ScaleLayoutKind::gluon_contiguous:
        layouts.push_back(ScaleLayout::gluon_contiguous(128, 128, 32));
        layouts.push_back(ScaleLayout::gluon_contiguous(64, 256, 16));
        break;
      case ScaleLayoutKind::triton_hopper:
        layouts.push_back(ScaleLayout::triton_hopper(4));
        layouts.push_back(ScaleLayout::triton_hopper(8));
        break;
      case ScaleLayoutKind::deepgemm_sm90_sfb:
        layouts.push_back(ScaleLayout::deepgemm_sm90_sfb(ScaleMajor::k_major));
        layouts.push_back(ScaleLayout::deepgemm_sm90_sfb(ScaleMajor::mn_major));
        break;
      case ScaleLayoutKind::cutlass_blockwise:
        layouts.push_back(ScaleLayout::cutlass_blockwise(ScaleMajor::mn_major));
        layouts.push_back(ScaleLayout::cutlass_blockwise(ScaleMajor::k_major));
        break;
      case ScaleLayoutKind::cublaslt_blk128x128:
        layouts.push_back(ScaleLayout::cublaslt_blk128x128(1));
        layouts.push_back(ScaleLayout::cublaslt_blk128x128(4));
        break;
      case ScaleLayoutKind::gfx1250_mx:
        layouts.push_back(ScaleLayout::of(k.kind));
        layouts.push_back(ScaleLayout::gfx1250_mx(8));
        layouts.push_back(ScaleLayout::gfx1250_mx(16));
        break;
      case ScaleLayoutKind::block_major_k:
        // FlashInfer's BlockMajorK fp8 weights: 128-byte blocks, rows shuffled for epilogue_tile_m 64.
        layouts.push_back(ScaleLayout::block_major_k(128));
        layouts.push_back(ScaleLayout::block_major_k(128, RowOrder::trtllm_shuffle16));
        break;
      case ScaleLayoutKind::sm90_mixed_folded:
        // MXFP4 weight scales (group 32), and the widest fold (group 128: one block per K128 chunk).
        layouts.push_back(ScaleLayout::sm90_mixed_folded(32));
        layouts.push_back(ScaleLayout::sm90_mixed_folded(128));
        break;
      default: layouts.push_back(ScaleLayout::of(k.kind));
    }
  }
  // The trtllm-gen row orders, on the two kinds that take them.
  for (ScaleLayoutKind k : {ScaleLayoutKind::linear, ScaleLayoutKind::tiled_128x4}) {
    for (const RowOrderInfo& o : kRowOrderTable) {
      if (o.order != RowOrder::natural) layouts.push_back(ScaleLayout::row_ordered(k, o.order));
    }
  }
  for (const ScaleLayout& l : layouts) out.push_back(std::make_unique<ScaleLayoutOp>(l));
  // Grouped scales: empty groups first and inside, sizes off and on the atom, one group; DeepGEMM's
  // default alignment, a small one with an upper-bound M; triton_kernels' slices with and without
  // padded tokens (the second: the worst case its scratchpad is sized for).
  for (const char* groups : {"rows:0,5,133,133,300", "rows:128,256,384", "rows:1", "cols:0,3,4,4,13", "cols:4,8",
                             "cols:7", "deepgemm_sm100_rows:alignment=128:0,5,133,133,300",
                             "deepgemm_sm100_rows:alignment=32,padded_rows=200:7,7,100", "deepgemm_sm100_cols:0,3,4,4,13",
                             "deepgemm_sm100_cols:4,8", "triton_kernels_rows:0,5,133,133,300",
                             "triton_kernels_rows:tokens=400:1,130"})
    out.push_back(grouped_layout_from_id(groups));
  for (const WeightInterleaveInfo& v : kWeightInterleaveTable) out.push_back(std::make_unique<WeightInterleaveOp>(v.kind));
  const std::pair<Packing, Format> packings[] = {
      {Packing::byte_per_element, Format::float8_e4m3fn}, {Packing::fp4_dense, Format::float4_e2m1fn},
      {Packing::fp6_dense, Format::float6_e2m3fn},        {Packing::fp6_dense, Format::float6_e3m2fn},
      {Packing::fp4_padded16, Format::float4_e2m1fn},     {Packing::fp6_padded16, Format::float6_e2m3fn},
      {Packing::fp6_padded16, Format::float6_e3m2fn},
  };
  for (const auto& [p, f] : packings) out.push_back(std::make_unique<PackingOp>(p, f));
  return out;
}

}  // namespace blockscale::golden::detail
