// SPDX-License-Identifier: Apache-2.0
// `blockscale layout`: the scale-factor layouts of blockscale::layout (docs/layouts.md) from the
// command line: the catalogue, one layout's geometry and offset map, where one element lives,
// conversion of raw scale buffers (a GPU dump, a checkpoint tensor) between layouts, and the SM90
// mixed-input weight interleaves of packed 4-bit weights.
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "blockscale/layout.h"
#include "cli.h"

namespace blockscale::cli {
namespace {

const char* kUsage =
    "usage: blockscale layout list [--json]\n"
    "       blockscale layout show <layout> --rows R --cols C [--map] [--json]\n"
    "       blockscale layout where <layout> --rows R --cols C (--index r,c | --offset N) [--json]\n"
    "       blockscale layout convert --from <layout> --to <layout> --rows R --cols C --in FILE --out FILE\n"
    "                                 [--batch N] [--element byte|fp32] [--pad V] [--strict-padding] [--json]\n"
    "       blockscale layout weights <interleave> --rows R --cols K\n"
    "                                 [--in FILE --out FILE [--batch N] [--undo] | --index r,k | --bit N] [--json]\n"
    "\n"
    "The scale layouts of docs/layouts.md. A layout is written as `blockscale layout list` shows it:\n"
    "the kind, then its parameters (tiled_128x4, gluon_contiguous:block_mn=128,block_k_scales=4,\n"
    "tiled_128x4:rows=trtllm_shuffle32, block_major_k:block_k=128), or a grouped (ragged MoE) layout:\n"
    "family and axis, then the groups' cumulative ends (rows:0,5,133 and cols:4,8 for torchao;\n"
    "deepgemm_sm100_rows:alignment=128:5,133 and deepgemm_sm100_cols:4,8 for DeepGEMM;\n"
    "triton_kernels_rows:tokens=400:5,133 for triton_kernels). The logical\n"
    "matrix is R x C: rows along M or N, columns the K blocks (bytes per row for block_major_k);\n"
    "`linear` is its row-major form. Grouped layouts store bytes; show lists where each group starts.\n"
    "\n"
    "  list     every kind: catalogue ID, stored element, parameters ([optional])\n"
    "  show     storage size, stored shape and padding of an R x C matrix; --map prints the offset of\n"
    "           every element (R x C up to 65536)\n"
    "  where    the storage offset of S[r][c] (--index r,c), or what offset N holds (--offset N)\n"
    "  convert  a raw little-endian file of --batch matrices (default 1) stored in --from, rewritten in\n"
    "           --to. --element: bytes (ue8m0 / ue4m3 codes) or fp32 scales; by default the element\n"
    "           the layouts store (linear takes the other side's). --pad: the value written to the\n"
    "           padding of --to (default 0; 0xFF, a NaN in ue8m0 and e4m3, and NaN floats are\n"
    "           refused). --strict-padding: the padding of --in must hold the pad value too, else\n"
    "           exit 1 naming the first offset that does not.\n"
    "  weights  the bit interleaves of 4-bit weights for the SM90 mixed-input MoE GEMMs of TRT-LLM and\n"
    "           FlashInfer (listed by `list`): R x K codes stored fp4_dense (code 2j in the low nibble of\n"
    "           byte j), R % 16 == 0, K % 64 == 0. --in/--out: interleave --batch experts stored end to\n"
    "           end (--undo: back to fp4_dense); --index r,k: where the four bits of code (r, k) go;\n"
    "           --bit N: which code bit bit N of the interleaved buffer holds; neither: the geometry.\n"
    "\n"
    "Exit status: 0 done; 1 --strict-padding found padding that differs; 2 bad arguments or input.";

constexpr std::int64_t kMaxExtent = std::int64_t{1} << 40;
constexpr std::int64_t kMapLimit = 65536;

std::string element_name(ScaleElement e) { return e == ScaleElement::fp32 ? "fp32" : "byte"; }
std::int64_t element_bytes(ScaleElement e) { return e == ScaleElement::fp32 ? 4 : 1; }

// A layout argument: one of scale_layout.h's kinds, or a grouped (ragged MoE) layout of
// grouped_scales.h, whose text starts with its family and axis. The subcommands see one interface;
// a batch of grouped matrices is that many buffers end to end.
class AnyLayout {
 public:
  explicit AnyLayout(const std::string& text) {
    for (const char* head : {"rows:", "cols:", "deepgemm_sm100_rows:", "deepgemm_sm100_cols:", "triton_kernels_rows:",
                             "triton_kernels_cols:"}) {
      if (text.starts_with(head)) {
        layout_ = grouped_scale_layout_from_string(text);
        return;
      }
    }
    layout_ = scale_layout_from_string(text);
  }
  const ScaleLayout* single() const { return std::get_if<ScaleLayout>(&layout_); }
  const GroupedScaleLayout* grouped() const { return std::get_if<GroupedScaleLayout>(&layout_); }
  bool is_linear() const { return single() && single()->kind == ScaleLayoutKind::linear; }
  ScaleElement element() const { return single() ? info(single()->kind).element : ScaleElement::byte; }
  std::string name() const { return std::visit([](const auto& l) { return to_string(l); }, layout_); }
  std::int64_t size(std::int64_t R, std::int64_t C) const {
    return std::visit([&](const auto& l) { return storage_size(l, R, C); }, layout_);
  }
  // The stored shape: the single layouts' own, a grouped buffer's byte count.
  std::vector<std::int64_t> shape(std::int64_t R, std::int64_t C) const {
    return single() ? storage_shape(*single(), R, C) : std::vector<std::int64_t>{size(R, C)};
  }
  std::int64_t offset_of(std::int64_t R, std::int64_t C, std::int64_t r, std::int64_t c) const {
    return std::visit([&](const auto& l) { return offset(l, R, C, r, c); }, layout_);
  }
  std::optional<std::array<std::int64_t, 2>> index_at(std::int64_t R, std::int64_t C, std::int64_t off) const {
    return std::visit([&](const auto& l) { return logical_index(l, R, C, off); }, layout_);
  }
  // Whole batches in element type T; grouped layouts take bytes only (conversion_element sees to
  // it), one buffer after another.
  template <class T>
  std::optional<std::int64_t> padding_mismatch(std::int64_t batch, std::int64_t R, std::int64_t C,
                                               std::span<const T> in, T pad) const {
    if (single()) return find_padding_mismatch(*single(), batch, R, C, in, pad);
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      const std::int64_t per = size(R, C);
      for (std::int64_t m = 0; m < batch; ++m) {
        if (const auto bad = find_padding_mismatch(*grouped(), R, C, in.subspan(at(m, per), at(1, per)), pad))
          return m * per + *bad;
      }
      return std::nullopt;
    } else {
      throw UsageError(kGroupedBytesOnly);
    }
  }
  template <class T>
  void from(std::int64_t batch, std::int64_t R, std::int64_t C, std::span<const T> in, std::span<T> logical) const {
    if (single()) return from_layout(*single(), batch, R, C, in, logical);
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      const std::int64_t per = size(R, C);
      for (std::int64_t m = 0; m < batch; ++m)
        from_layout(*grouped(), R, C, in.subspan(at(m, per), at(1, per)), logical.subspan(at(m, R * C), at(1, R * C)));
    } else {
      throw UsageError(kGroupedBytesOnly);
    }
  }
  template <class T>
  void to(std::int64_t batch, std::int64_t R, std::int64_t C, std::span<const T> logical, std::span<T> out, T pad) const {
    if (single()) return to_layout(*single(), batch, R, C, logical, out, pad);
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      const std::int64_t per = size(R, C);
      for (std::int64_t m = 0; m < batch; ++m)
        to_layout(*grouped(), R, C, logical.subspan(at(m, R * C), at(1, R * C)), out.subspan(at(m, per), at(1, per)), pad);
    } else {
      throw UsageError(kGroupedBytesOnly);
    }
  }

 private:
  static constexpr const char* kGroupedBytesOnly = "grouped layouts store byte scales, not fp32";
  static std::size_t at(std::int64_t m, std::int64_t per) { return static_cast<std::size_t>(m * per); }

  std::variant<ScaleLayout, GroupedScaleLayout> layout_;
};

// `what`: the option that gave the text (--from, --to), or "" for the positional layout, whose
// message ("scale layout '...': ...") names it already.
AnyLayout layout_arg(const std::string& text, const char* what) {
  try {
    return AnyLayout(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(*what ? std::string(what) + ": " + e.what() : std::string(e.what()));
  }
}

std::string shape_text(const std::vector<std::int64_t>& shape, const char* open, const char* close) {
  std::string s = open;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + close;
}

struct Extents {
  std::int64_t R, C;
};

Extents extents(const Args& args) {
  if (!args.get("rows") || !args.get("cols")) throw UsageError("--rows and --cols are required");
  return {args.get_int("rows", 0, 0, kMaxExtent), args.get_int("cols", 0, 0, kMaxExtent)};
}

// Calls fn and turns the library's std::invalid_argument (a shape the layout does not take, an
// index outside the matrix) into a usage error carrying its message.
template <class F>
auto checked(F&& fn) {
  try {
    return fn();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// The grouped (ragged MoE) layouts' text heads (grouped_scales.h): what `list` shows beside the kinds.
struct GroupedHead {
  const char* head;
  const char* what;
  const char* parameters;
};
constexpr std::array<GroupedHead, 5> kGroupedHeads = {{
    {"rows", "torchao M groups, each group's 128x4 image", ""},
    {"cols", "torchao K groups, each group's 128x4 image", ""},
    {"deepgemm_sm100_rows", "DeepGEMM M groups (psum / contiguous), one padded packed matrix", "[alignment] [padded_rows]"},
    {"deepgemm_sm100_cols", "DeepGEMM K groups, packed images end to end", ""},
    {"triton_kernels_rows", "triton_kernels ragged activations, one padded tiled_128x4_k8 matrix", "[tokens]"},
}};

int run_list(const Args& args) {
  if (args.positional().size() > 1) throw UsageError("list takes no arguments, got '" + args.positional()[1] + "'");
  if (args.flag("json")) {
    std::printf("[\n");
    for (const ScaleLayoutKindInfo& k : kScaleLayoutKindTable) {
      std::printf("  {\"kind\": \"%s\", \"catalogue_id\": \"%s\", \"element\": \"%s\", \"parameters\": \"%s\", "
                  "\"grouped\": false},\n",
                  k.name, k.catalogue_id, element_name(k.element).c_str(), k.parameters);
    }
    for (const GroupedHead& g : kGroupedHeads) {
      std::printf("  {\"kind\": \"%s\", \"catalogue_id\": \"\", \"element\": \"byte\", \"parameters\": \"%s\", "
                  "\"grouped\": true, \"description\": \"%s\"},\n",
                  g.head, g.parameters, g.what);
    }
    for (std::size_t i = 0; i < kWeightInterleaveTable.size(); ++i) {
      const WeightInterleaveInfo& v = kWeightInterleaveTable[i];
      std::printf("  {\"kind\": \"%s\", \"catalogue_id\": \"\", \"element\": \"fp4_dense\", \"parameters\": \"\", "
                  "\"grouped\": false, \"weight_interleave\": true, \"description\": \"%s\"}%s\n",
                  v.name, json_escape(v.source).c_str(), i + 1 < kWeightInterleaveTable.size() ? "," : "");
    }
    std::printf("]\n");
    return kExitOk;
  }
  std::printf("%-24s %-4s %-7s %s\n", "kind", "ID", "element", "parameters ([optional])");
  for (const ScaleLayoutKindInfo& k : kScaleLayoutKindTable)
    std::printf("%-24s %-4s %-7s %s\n", k.name, k.catalogue_id, element_name(k.element).c_str(), k.parameters);
  std::printf("\nrow orders (rows=):");
  for (const RowOrderInfo& o : kRowOrderTable) std::printf(" %s", o.name);
  std::printf("\n\ngrouped (ragged MoE) layouts, <head>:[<parameters>:]<group ends>, byte elements:\n");
  for (const GroupedHead& g : kGroupedHeads)
    std::printf("%-24s %-26s %s\n", g.head, g.parameters, g.what);
  std::printf("\nweight interleaves (blockscale layout weights), 4-bit codes:\n");
  for (const WeightInterleaveInfo& v : kWeightInterleaveTable) std::printf("%-24s %s\n", v.name, v.source);
  return kExitOk;
}

const std::string& layout_positional(const Args& args, const char* sub) {
  if (args.positional().size() < 2) throw UsageError(std::string(sub) + " needs a layout, e.g. tiled_128x4");
  if (args.positional().size() > 2) throw UsageError("unexpected argument '" + args.positional()[2] + "'");
  return args.positional()[1];
}

int run_show(const Args& args) {
  const AnyLayout l = layout_arg(layout_positional(args, "show"), "");
  const Extents extent = extents(args);
  const std::int64_t R = extent.R, C = extent.C;
  const std::int64_t size = checked([&] { return l.size(R, C); });
  const std::vector<std::int64_t> shape = l.shape(R, C);
  const ScaleElement e = l.element();
  const bool map = args.flag("map");
  if (map && R * C > kMapLimit)
    throw UsageError("--map prints at most " + std::to_string(kMapLimit) + " offsets; R x C = " + std::to_string(R * C));
  // The offsets: the single layouts' precomputed table, a grouped layout's map one element at a time.
  std::optional<ScaleOffsets> table;
  if (map && l.single()) table.emplace(*l.single(), R, C);
  const auto offset_at = [&](std::int64_t r, std::int64_t c) {
    return table ? (*table)(r, c) : l.offset_of(R, C, r, c);
  };
  // Grouped layouts: where each group starts along its axis, and DeepGEMM's psum layout.
  std::vector<std::int64_t> starts, psum;
  if (const GroupedScaleLayout* g = l.grouped()) {
    starts = group_starts(*g, R, C);
    if (g->family == GroupedScaleFamily::deepgemm_sm100 && g->axis == GroupAxis::rows) psum = deepgemm_psum(*g, R, C);
  }
  if (args.flag("json")) {
    std::printf("{\"layout\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"element\": \"%s\", \"storage_elements\": %lld, "
                "\"storage_bytes\": %lld, \"stored_shape\": %s, \"padding_elements\": %lld",
                json_escape(l.name()).c_str(), static_cast<long long>(R), static_cast<long long>(C),
                element_name(e).c_str(), static_cast<long long>(size),
                static_cast<long long>(size * element_bytes(e)), shape_text(shape, "[", "]").c_str(),
                static_cast<long long>(size - R * C));
    if (l.grouped()) std::printf(", \"group_starts\": %s", shape_text(starts, "[", "]").c_str());
    if (!psum.empty()) std::printf(", \"deepgemm_psum\": %s", shape_text(psum, "[", "]").c_str());
    if (map) {
      std::printf(", \"offsets\": [");
      for (std::int64_t r = 0; r < R; ++r) {
        std::printf("%s[", r ? ", " : "");
        for (std::int64_t c = 0; c < C; ++c) std::printf("%s%lld", c ? ", " : "", static_cast<long long>(offset_at(r, c)));
        std::printf("]");
      }
      std::printf("]");
    }
    std::printf("}\n");
    return kExitOk;
  }
  std::printf("%s, R = %lld, C = %lld (%s elements)\n", l.name().c_str(), static_cast<long long>(R),
              static_cast<long long>(C), element_name(e).c_str());
  std::printf("  storage      %lld elements (%lld bytes) per matrix, the batch stride\n", static_cast<long long>(size),
              static_cast<long long>(size * element_bytes(e)));
  std::printf("  stored shape %s\n", shape_text(shape, "(", ")").c_str());
  std::printf("  padding      %lld elements\n", static_cast<long long>(size - R * C));
  if (const GroupedScaleLayout* g = l.grouped()) {
    std::printf("  group starts %s (%s; the last: the padded total)\n", shape_text(starts, "", "").c_str(),
                g->axis == GroupAxis::rows ? "rows" : "block columns");
  }
  if (!psum.empty()) std::printf("  DeepGEMM psum layout %s\n", shape_text(psum, "", "").c_str());
  if (map) {
    std::printf("  offsets (row r: the offsets of S[r][0], S[r][1], ...):\n");
    for (std::int64_t r = 0; r < R; ++r) {
      std::printf("  %6lld:", static_cast<long long>(r));
      for (std::int64_t c = 0; c < C; ++c) std::printf(" %lld", static_cast<long long>(offset_at(r, c)));
      std::printf("\n");
    }
  }
  return kExitOk;
}

// "r,c" -> {r, c}.
std::array<std::int64_t, 2> index_arg(const std::string& text) {
  const std::size_t comma = text.find(',');
  std::array<std::int64_t, 2> rc{};
  bool ok = comma != std::string::npos;
  for (int i = 0; ok && i < 2; ++i) {
    const std::string part = i == 0 ? text.substr(0, comma) : text.substr(comma + 1);
    const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), rc[static_cast<std::size_t>(i)]);
    ok = !part.empty() && ec == std::errc() && p == part.data() + part.size();
  }
  if (!ok) throw UsageError("--index expects r,c (two integers), got '" + text + "'");
  return rc;
}

int run_where(const Args& args) {
  const AnyLayout l = layout_arg(layout_positional(args, "where"), "");
  const Extents extent = extents(args);
  const std::int64_t R = extent.R, C = extent.C;
  const bool json = args.flag("json");
  if (args.get("index").has_value() == args.get("offset").has_value())
    throw UsageError("give one of --index r,c and --offset N");
  const std::string name = l.name();
  if (const auto idx = args.get("index")) {
    const std::array<std::int64_t, 2> rc_in = index_arg(*idx);
    const std::int64_t r = rc_in[0], c = rc_in[1];
    const std::int64_t off = checked([&] { return l.offset_of(R, C, r, c); });
    if (json)
      std::printf("{\"layout\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"index\": [%lld, %lld], \"offset\": %lld}\n",
                  json_escape(name).c_str(), static_cast<long long>(R), static_cast<long long>(C),
                  static_cast<long long>(r), static_cast<long long>(c), static_cast<long long>(off));
    else
      std::printf("%s, R = %lld, C = %lld: S[%lld][%lld] is at offset %lld\n", name.c_str(), static_cast<long long>(R),
                  static_cast<long long>(C), static_cast<long long>(r), static_cast<long long>(c),
                  static_cast<long long>(off));
    return kExitOk;
  }
  const auto off = static_cast<std::int64_t>(args.get_int("offset", 0, 0, INT64_MAX));
  const auto rc = checked([&] { return l.index_at(R, C, off); });
  if (json) {
    std::printf("{\"layout\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"offset\": %lld, \"index\": ",
                json_escape(name).c_str(), static_cast<long long>(R), static_cast<long long>(C),
                static_cast<long long>(off));
    if (rc) std::printf("[%lld, %lld]}\n", static_cast<long long>((*rc)[0]), static_cast<long long>((*rc)[1]));
    else std::printf("null}\n");
  } else if (rc) {
    std::printf("%s, R = %lld, C = %lld: offset %lld holds S[%lld][%lld]\n", name.c_str(), static_cast<long long>(R),
                static_cast<long long>(C), static_cast<long long>(off), static_cast<long long>((*rc)[0]),
                static_cast<long long>((*rc)[1]));
  } else {
    std::printf("%s, R = %lld, C = %lld: offset %lld is padding\n", name.c_str(), static_cast<long long>(R),
                static_cast<long long>(C), static_cast<long long>(off));
  }
  return kExitOk;
}

// The element the conversion moves: --element, else what the layouts store (linear, the logical
// form, takes the other side's).
ScaleElement conversion_element(const Args& args, const AnyLayout& from, const AnyLayout& to) {
  if (const auto e = args.get("element")) {
    if (*e == "byte") return ScaleElement::byte;
    if (*e == "fp32") {
      if (from.grouped() || to.grouped()) throw UsageError("--element fp32: grouped layouts store byte scales");
      return ScaleElement::fp32;
    }
    throw UsageError("--element must be byte or fp32, got '" + *e + "'");
  }
  const ScaleElement ef = from.element(), et = to.element();
  if (from.is_linear()) return et;
  if (to.is_linear() || ef == et) return ef;
  throw UsageError("--from " + from.name() + " stores " + element_name(ef) + " scales and --to " + to.name() + " " +
                   element_name(et) + " scales: say which with --element byte|fp32");
}

// Reads `path`, which must hold exactly `count` little-endian elements of T (x86-64 and AArch64
// hosts store them so), straight into the vector the conversion works on.
template <class T>
std::vector<T> read_elements(const std::string& path, std::int64_t count, const std::string& what) {
  // The size comes from the file's end: a directory (whose "end" read as 2^63 - 1 bytes) or a device
  // has none.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw UsageError("--in " + path + " is not a regular file (a directory or a device)");
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw UsageError("cannot open --in " + path + ": " + std::strerror(errno));
  const std::int64_t have = static_cast<std::int64_t>(f.tellg());
  const std::int64_t want = count * static_cast<std::int64_t>(sizeof(T));
  if (have != want)
    throw UsageError("--in " + path + " has " + std::to_string(have) + " bytes; " + what + " needs " +
                     std::to_string(want));
  std::vector<T> data(static_cast<std::size_t>(count));
  f.seekg(0);
  if (want > 0 && !f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(want)))
    throw UsageError("cannot read --in " + path);
  return data;
}

template <class T>
void write_elements(const std::string& path, const std::vector<T>& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f || !f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(T))) ||
      !f.flush())
    throw UsageError("cannot write --out " + path);
}

// One conversion in element type T (bytes or fp32): from --from through the row-major form into
// --to. Returns the first padding element of the input that does not hold `pad` when
// `strict_padding` asks for the check (nothing is written then).
template <class T>
std::optional<std::int64_t> convert_elements(const AnyLayout& from, const AnyLayout& to, std::int64_t batch,
                                             std::int64_t R, std::int64_t C, const std::string& in_path,
                                             const std::string& out_path, const std::string& what, T pad,
                                             bool strict_padding) {
  const std::vector<T> in = read_elements<T>(in_path, batch * from.size(R, C), what);
  if (strict_padding)
    if (const auto bad = from.padding_mismatch(batch, R, C, std::span<const T>(in), pad)) return bad;
  std::vector<T> logical(static_cast<std::size_t>(batch * R * C));
  from.from(batch, R, C, std::span<const T>(in), std::span<T>(logical));
  std::vector<T> stored(static_cast<std::size_t>(batch * to.size(R, C)));
  to.to(batch, R, C, std::span<const T>(logical), std::span<T>(stored), pad);
  write_elements(out_path, stored);
  return std::nullopt;
}

int run_convert(const Args& args) {
  if (args.positional().size() > 1) throw UsageError("unexpected argument '" + args.positional()[1] + "'");
  for (const char* required : {"from", "to", "in", "out"})
    if (!args.get(required)) throw UsageError(std::string("--") + required + " is required");
  const AnyLayout from = layout_arg(*args.get("from"), "--from");
  const AnyLayout to = layout_arg(*args.get("to"), "--to");
  const Extents extent = extents(args);
  const std::int64_t R = extent.R, C = extent.C;
  const std::int64_t batch = args.get_int("batch", 1, 0, kMaxExtent);
  const ScaleElement e = conversion_element(args, from, to);
  const std::int64_t esize = element_bytes(e);
  const std::int64_t in_size = checked([&] { return from.size(R, C); });
  const std::int64_t out_size = checked([&] { return to.size(R, C); });
  for (std::int64_t per : {in_size, out_size, R * C})
    if (per != 0 && batch > (std::int64_t{1} << 40) / (per * esize))
      throw UsageError("--batch " + std::to_string(batch) + " matrices of that size exceed 2^40 bytes");
  const std::string what = "--from " + from.name() + " with R = " + std::to_string(R) + ", C = " +
                           std::to_string(C) + " and --batch " + std::to_string(batch) + " (" + std::to_string(in_size) +
                           " " + element_name(e) + " elements each)";
  std::uint8_t pad_byte = 0;
  float pad_float = 0.0f;
  if (const auto p = args.get("pad")) {
    if (e == ScaleElement::byte) {
      const std::uint64_t v = args.get_u64("pad", 0);
      if (v > 0xFF) throw UsageError("--pad must be a byte (0..0xFE) for byte scales, got " + *p);
      pad_byte = static_cast<std::uint8_t>(v);
    } else {
      char* end = nullptr;
      errno = 0;
      pad_float = std::strtof(p->c_str(), &end);
      if (p->empty() || *end != '\0') throw UsageError("--pad must be a float for fp32 scales, got '" + *p + "'");
      if (errno == ERANGE) throw UsageError("--pad " + *p + " is out of float32's range (it would not be the value given)");
    }
  }

  const bool strict = args.flag("strict-padding");
  // Matrices with no element and no storage: any batch of them is the empty file in and out (the
  // size guard above cannot bound such a batch, and converting it one empty matrix at a time would
  // loop up to 2^40 times for nothing).
  const std::int64_t work_batch = in_size == 0 && out_size == 0 ? 0 : batch;
  const std::optional<std::int64_t> bad_pad = checked([&] {
    return e == ScaleElement::byte
               ? convert_elements(from, to, work_batch, R, C, *args.get("in"), *args.get("out"), what, pad_byte, strict)
               : convert_elements(from, to, work_batch, R, C, *args.get("in"), *args.get("out"), what, pad_float, strict);
  });
  if (bad_pad) {
    const std::int64_t m = in_size ? *bad_pad / in_size : 0, off = in_size ? *bad_pad % in_size : 0;
    std::fprintf(stderr,
                 "blockscale layout: --strict-padding: padding element %lld of --in (matrix %lld, offset %lld) does not "
                 "hold the pad value; nothing written\n",
                 static_cast<long long>(*bad_pad), static_cast<long long>(m), static_cast<long long>(off));
    return kExitMismatch;
  }
  if (args.flag("json")) {
    std::printf("{\"from\": \"%s\", \"to\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"batch\": %lld, \"element\": \"%s\", "
                "\"in_bytes\": %lld, \"out_bytes\": %lld, \"out\": \"%s\"}\n",
                json_escape(from.name()).c_str(), json_escape(to.name()).c_str(), static_cast<long long>(R),
                static_cast<long long>(C), static_cast<long long>(batch), element_name(e).c_str(),
                static_cast<long long>(batch * in_size * esize), static_cast<long long>(batch * out_size * esize),
                json_escape(*args.get("out")).c_str());
  } else {
    std::printf("%lld matrices of %lld x %lld %s scales: %s (%lld bytes each) -> %s (%lld bytes each), %s\n",
                static_cast<long long>(batch), static_cast<long long>(R), static_cast<long long>(C),
                element_name(e).c_str(), from.name().c_str(), static_cast<long long>(in_size * esize),
                to.name().c_str(), static_cast<long long>(out_size * esize), args.get("out")->c_str());
  }
  return kExitOk;
}

// `weights`: the SM90 mixed-input weight interleaves (weight_interleave.h).
int run_weights(const Args& args) {
  if (args.positional().size() < 2) throw UsageError("weights needs an interleave, e.g. flashinfer_sm90_fp4");
  if (args.positional().size() > 2) throw UsageError("unexpected argument '" + args.positional()[2] + "'");
  const WeightInterleave v = checked([&] { return weight_interleave_from_string(args.positional()[1]); });
  const Extents extent = extents(args);
  const std::int64_t R = extent.R, K = extent.C;
  const std::int64_t per = checked([&] { return weight_bytes(v, R, K); });
  const std::string name = to_string(v);
  const bool json = args.flag("json");
  const bool files = args.get("in") || args.get("out");
  if (int(files) + int(args.get("index").has_value()) + int(args.get("bit").has_value()) > 1)
    throw UsageError("give at most one of --in/--out, --index r,k and --bit N");
  if (!files && (args.get("batch") || args.flag("undo")))
    throw UsageError("--batch and --undo apply to a conversion (--in and --out)");
  if (const auto idx = args.get("index")) {
    const std::array<std::int64_t, 2> rk = index_arg(*idx);
    const auto bits = checked([&] { return weight_code_bits(v, R, K, rk[0], rk[1]); });
    if (json) {
      std::printf("{\"interleave\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"index\": [%lld, %lld], \"bits\": [%lld, %lld, "
                  "%lld, %lld]}\n",
                  name.c_str(), static_cast<long long>(R), static_cast<long long>(K), static_cast<long long>(rk[0]),
                  static_cast<long long>(rk[1]), static_cast<long long>(bits[0]), static_cast<long long>(bits[1]),
                  static_cast<long long>(bits[2]), static_cast<long long>(bits[3]));
      return kExitOk;
    }
    std::printf("%s, R = %lld, K = %lld: code (%lld, %lld), bits 0..3 (bit 3 = sign) at", name.c_str(),
                static_cast<long long>(R), static_cast<long long>(K), static_cast<long long>(rk[0]),
                static_cast<long long>(rk[1]));
    for (std::int64_t b : bits)
      std::printf(" byte %lld bit %lld%s", static_cast<long long>(b / 8), static_cast<long long>(b % 8),
                  b == bits[3] ? "\n" : ",");
    return kExitOk;
  }
  if (args.get("bit")) {
    const auto bit = static_cast<std::int64_t>(args.get_int("bit", 0, 0, INT64_MAX));
    const auto src = checked([&] { return weight_bit_source(v, R, K, bit); });
    if (json)
      std::printf("{\"interleave\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"bit\": %lld, \"index\": [%lld, %lld], "
                  "\"code_bit\": %lld}\n",
                  name.c_str(), static_cast<long long>(R), static_cast<long long>(K), static_cast<long long>(bit),
                  static_cast<long long>(src[0]), static_cast<long long>(src[1]), static_cast<long long>(src[2]));
    else
      std::printf("%s, R = %lld, K = %lld: bit %lld (byte %lld bit %lld) holds bit %lld of code (%lld, %lld)\n",
                  name.c_str(), static_cast<long long>(R), static_cast<long long>(K), static_cast<long long>(bit),
                  static_cast<long long>(bit / 8), static_cast<long long>(bit % 8), static_cast<long long>(src[2]),
                  static_cast<long long>(src[0]), static_cast<long long>(src[1]));
    return kExitOk;
  }
  if (!files) {
    if (json)
      std::printf("{\"interleave\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"bytes\": %lld, \"tiles\": %lld, "
                  "\"source\": \"%s\"}\n",
                  name.c_str(), static_cast<long long>(R), static_cast<long long>(K), static_cast<long long>(per),
                  static_cast<long long>(per / 512), json_escape(info(v).source).c_str());
    else
      std::printf("%s, R = %lld, K = %lld 4-bit codes\n  defined by   %s\n  storage      %lld bytes per expert, the batch "
                  "stride\n  tiles        %lld of 16 rows x 64 codes (512 bytes), each rearranged in place\n",
                  name.c_str(), static_cast<long long>(R), static_cast<long long>(K), info(v).source,
                  static_cast<long long>(per), static_cast<long long>(per / 512));
    return kExitOk;
  }
  if (!args.get("in") || !args.get("out")) throw UsageError("a conversion needs both --in and --out");
  const std::int64_t batch = args.get_int("batch", 1, 0, kMaxExtent);
  if (per != 0 && batch > (std::int64_t{1} << 40) / per)
    throw UsageError("--batch " + std::to_string(batch) + " experts of that size exceed 2^40 bytes");
  const bool undo = args.flag("undo");
  const std::vector<std::uint8_t> in =
      read_elements<std::uint8_t>(*args.get("in"), batch * per,
                                  name + " with R = " + std::to_string(R) + ", K = " + std::to_string(K) + " and --batch " +
                                      std::to_string(batch) + " (" + std::to_string(per) + " bytes each)");
  std::vector<std::uint8_t> out(in.size());
  checked([&] {
    if (undo) deinterleave_weights(v, batch, R, K, in, out);
    else interleave_weights(v, batch, R, K, in, out);
    return 0;
  });
  write_elements(*args.get("out"), out);
  const char* direction = undo ? "interleaved -> fp4_dense" : "fp4_dense -> interleaved";
  if (json)
    std::printf("{\"interleave\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"batch\": %lld, \"undo\": %s, \"bytes\": "
                "%lld, \"out\": \"%s\"}\n",
                name.c_str(), static_cast<long long>(R), static_cast<long long>(K), static_cast<long long>(batch),
                undo ? "true" : "false", static_cast<long long>(batch * per), json_escape(*args.get("out")).c_str());
  else
    std::printf("%lld experts of %lld x %lld 4-bit codes (%lld bytes each), %s: %s, %s\n",
                static_cast<long long>(batch), static_cast<long long>(R), static_cast<long long>(K),
                static_cast<long long>(per), name.c_str(), direction, args.get("out")->c_str());
  return kExitOk;
}

int run_layout(const std::vector<std::string>& argv) {
  const std::vector<std::string> value_options = {"rows", "cols",  "index",   "offset", "from", "to",
                                                  "in",   "out",   "batch",   "element", "pad", "bit"};
  const std::vector<std::string> flags = {"json", "map", "strict-padding", "undo"};
  const Args args(argv, value_options, flags);
  const std::string sub = args.positional().empty() ? "list" : args.positional()[0];
  // Each subcommand's options (--json applies to all): any other one given is an error.
  auto only = [&](const std::vector<std::string>& allowed) {
    auto refuse_unless_allowed = [&](const std::string& o, bool given) {
      if (given && o != "json" && std::find(allowed.begin(), allowed.end(), o) == allowed.end())
        throw UsageError("option --" + o + " does not apply to '" + sub + "'");
    };
    for (const std::string& o : value_options) refuse_unless_allowed(o, args.get(o).has_value());
    for (const std::string& f : flags) refuse_unless_allowed(f, args.flag(f));
  };
  if (sub == "list") {
    only({});
    return run_list(args);
  }
  if (sub == "show") {
    only({"rows", "cols", "map"});
    return run_show(args);
  }
  if (sub == "where") {
    only({"rows", "cols", "index", "offset"});
    return run_where(args);
  }
  if (sub == "convert") {
    only({"rows", "cols", "from", "to", "in", "out", "batch", "element", "pad", "strict-padding"});
    return run_convert(args);
  }
  if (sub == "weights") {
    only({"rows", "cols", "in", "out", "batch", "undo", "index", "bit"});
    return run_weights(args);
  }
  throw UsageError("unknown subcommand '" + sub + "' (list, show, where, convert, weights)");
}

const Registrar layout_cmd({"layout",
                            "scale layouts: list, show one's geometry and offsets, where, convert raw buffers; "
                            "weight interleaves",
                            kUsage, run_layout});

}  // namespace
}  // namespace blockscale::cli
