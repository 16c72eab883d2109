// SPDX-License-Identifier: Apache-2.0
// The probe catalogue, input validation, and packing of codes into the images the kernels read.
#include "blockscale/gpu/probe.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "cuda_check.h"
#include "probe_launch.h"

namespace blockscale::gpu {

std::string to_string(ProbeFamily f) {
  switch (f) {
    case ProbeFamily::mma_sync: return "mma.sync";
    case ProbeFamily::wgmma: return "wgmma";
    case ProbeFamily::tcgen05: return "tcgen05";
  }
  return "?";
}

namespace {

using desc::Tcgen05Kind;

std::string sname(Format f) { return info(f).short_name; }
std::string shape(int m, int n, int k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "m%dn%dk%d", m, n, k);
  return buf;
}

const Format kFp8[] = {Format::float8_e4m3fn, Format::float8_e5m2};
const Format kF8f6f4[] = {Format::float8_e4m3fn, Format::float8_e5m2, Format::float6_e2m3fn, Format::float6_e3m2fn,
                          Format::float4_e2m1fn};

void add_mma_sync(std::vector<ProbeKernel>& v) {
  auto add = [&](int k, Format a, Format b, Format d, const std::string& note) {
    ProbeKernel p;
    p.family = ProbeFamily::mma_sync;
    p.arch = Arch::sm_90a;
    p.m = 16, p.n = 8, p.k = k;
    p.a = a, p.b = b, p.c = d, p.d = d;
    p.ptx = "mma.sync.aligned." + shape(16, 8, k) + ".row.col." + sname(d) + "." + sname(a) + "." + sname(b) + "." +
            sname(d);
    p.name = "sm_90a mma.sync.aligned " + shape(16, 8, k) + " " + sname(d) + " " + sname(a) + " " + sname(b);
    p.note = note;
    v.push_back(p);
  };
  const std::string emulated =
      "compiler-emulated on sm_90a: fp8 -> f16 unpack (F2FP), two HMMA.16816 over k mod 4 in {0,1} then {2,3}, "
      "then C added by FADD / HADD2 (numerics.md b.9); one warp per tile, fragments per PTX ISA 9.7.14.5";
  const std::string emulated_k16 =
      "compiler-emulated on sm_90a: fp8 -> f16 unpack (F2FP), two HMMA.1688 over k mod 4 in {0,1} then {2,3}, "
      "then C added by FADD / HADD2 (gpu.md 3.4); one warp per tile, fragments per PTX ISA 9.7.14.5 (the 8-bit "
      "m16n8k16 layout: two A registers, one B register)";
  for (Format a : kFp8)
    for (Format b : kFp8)
      for (Format d : {Format::float32, Format::float16}) add(32, a, b, d, emulated);
  for (Format a : kFp8)
    for (Format b : kFp8)
      for (Format d : {Format::float32, Format::float16}) add(16, a, b, d, emulated_k16);
  const std::string native = "one warp per tile, fragments per PTX ISA 9.7.14.5";
  add(16, Format::float16, Format::float16, Format::float32, native);
  add(16, Format::bfloat16, Format::bfloat16, Format::float32, native);
  add(16, Format::float16, Format::float16, Format::float16, native);
  add(8, Format::tfloat32, Format::tfloat32, Format::float32, native);
  // The half-K shapes the same rows allow: two A registers and one B register (PTX ISA 9.7.14.5.7-8).
  add(8, Format::float16, Format::float16, Format::float32, native);
  add(8, Format::bfloat16, Format::bfloat16, Format::float32, native);
  add(8, Format::float16, Format::float16, Format::float16, native);
  add(4, Format::tfloat32, Format::tfloat32, Format::float32, native);
}

void add_wgmma(std::vector<ProbeKernel>& v) {
  const std::string note =
      "one warpgroup per tile; A and B from shared memory (no-swizzle K-major core matrices, LBO 128 B, SBO 256 B); "
      "C loaded into the accumulator registers and issued with scale-d = 1, so D = A*B + C (ProbeInputs::accumulate "
      "= false: scale-d = 0, D = A*B)";
  for (int n : {8, 64, 256}) {
    auto add = [&](int k, Format a, Format b, Format d) {
      ProbeKernel p;
      p.family = ProbeFamily::wgmma;
      p.arch = Arch::sm_90a;
      p.m = 64, p.n = n, p.k = k;
      p.a = a, p.b = b, p.c = d, p.d = d;
      p.ptx = "wgmma.mma_async.sync.aligned." + shape(64, n, k) + "." + sname(d) + "." + sname(a) + "." + sname(b);
      p.name = "sm_90a wgmma.mma_async " + shape(64, n, k) + " " + sname(d) + " " + sname(a) + " " + sname(b);
      p.note = note;
      v.push_back(p);
    };
    for (Format a : kFp8)
      for (Format b : kFp8)
        for (Format d : {Format::float32, Format::float16}) add(32, a, b, d);
    add(16, Format::float16, Format::float16, Format::float32);
    add(16, Format::bfloat16, Format::bfloat16, Format::float32);
    add(16, Format::float16, Format::float16, Format::float16);
    add(8, Format::tfloat32, Format::tfloat32, Format::float32);
  }
}

void add_tcgen05(std::vector<ProbeKernel>& v) {
  const std::string plain_note =
      "sm_100a, compile-verified only. One CTA of 4 warps per tile loop; A, B in shared memory (no-swizzle K-major, "
      "LBO 128 B, SBO 256 B); C stored to TMEM with tcgen05.st, then one thread issues the MMA with "
      "enable_input_d = 1, commits to an mbarrier, and the 4 warps read D with tcgen05.ld.32x32b";
  const std::string scaled_note =
      plain_note + "; scales staged in shared memory as 128x4 atoms and copied to TMEM with tcgen05.cp.32x128b.warpx4, "
                   "SF IDs 0";
  auto add = [&](Tcgen05Kind kind, const std::string& qual, int n, int k, Format a, Format b, bool scaled,
                 Format scale, int block) {
    ProbeKernel p;
    p.family = ProbeFamily::tcgen05;
    p.arch = Arch::sm_100a;
    p.tcgen05_kind = kind;
    p.m = 128, p.n = n, p.k = k;
    p.a = a, p.b = b, p.c = Format::float32, p.d = Format::float32;
    p.block_scaled = scaled;
    p.scale = scale;
    p.scale_block = scaled ? block : 0;
    p.ptx = std::string("tcgen05.mma.cta_group::1.kind::");
    p.ptx += desc::to_string(kind);
    p.ptx += qual;
    p.name = std::string("sm_100a ");
    for (const std::string& part : {p.ptx, shape(128, n, k), std::string("f32"), sname(a), sname(b)}) {
      p.name += part;
      p.name += ' ';
    }
    if (scaled) p.name += sname(scale);
    if (p.name.back() == ' ') p.name.pop_back();
    p.note = scaled ? scaled_note : plain_note;
    v.push_back(p);
  };
  for (int n : {8, 256}) {
    add(Tcgen05Kind::f16, "", n, 16, Format::float16, Format::float16, false, Format::float32, 0);
    add(Tcgen05Kind::f16, "", n, 16, Format::bfloat16, Format::bfloat16, false, Format::float32, 0);
    add(Tcgen05Kind::tf32, "", n, 8, Format::tfloat32, Format::tfloat32, false, Format::float32, 0);
  }
  // kind::f8f6f4 at M = 128: N in steps of 16 (the conservative reading of PTX Table 42, which
  // CUTLASS and DeepGEMM assert), so the small shape is N = 16.
  for (int n : {16, 256})
    for (Format a : kF8f6f4)
      for (Format b : kF8f6f4) add(Tcgen05Kind::f8f6f4, "", n, 32, a, b, false, Format::float32, 0);
  for (int n : {8, 256}) {
    for (Format a : kF8f6f4)
      for (Format b : kF8f6f4)
        add(Tcgen05Kind::mxf8f6f4, ".block_scale.block32", n, 32, a, b, true, Format::float8_e8m0fnu, 32);
    add(Tcgen05Kind::mxf4, ".block_scale.block32", n, 64, Format::float4_e2m1fn, Format::float4_e2m1fn, true,
        Format::float8_e8m0fnu, 32);
    add(Tcgen05Kind::mxf4nvf4, ".block_scale.block16", n, 64, Format::float4_e2m1fn, Format::float4_e2m1fn, true,
        Format::float8_e8m0fnu, 16);
    add(Tcgen05Kind::mxf4nvf4, ".block_scale.block16", n, 64, Format::float4_e2m1fn, Format::float4_e2m1fn, true,
        Format::float8_ue4m3, 16);
    add(Tcgen05Kind::mxf4nvf4, ".block_scale.block32", n, 64, Format::float4_e2m1fn, Format::float4_e2m1fn, true,
        Format::float8_e8m0fnu, 32);
  }
}

// The f64 DMMA shapes of mma.sync (PTX ISA 9.7.14.5: m8n8k4 from sm_80, m16n8k4 / k8 / k16 from
// sm_90), the operands of the table's fma-chain rows.
void add_mma_sync_f64(std::vector<ProbeKernel>& v) {
  for (const auto& [m, k] : {std::pair{8, 4}, std::pair{16, 4}, std::pair{16, 8}, std::pair{16, 16}}) {
    ProbeKernel p;
    p.family = ProbeFamily::mma_sync;
    p.arch = Arch::sm_90a;
    p.m = m, p.n = 8, p.k = k;
    p.f64 = true;
    p.ptx = "mma.sync.aligned." + shape(m, 8, k) + ".row.col.f64.f64.f64.f64";
    p.name = "sm_90a mma.sync.aligned " + shape(m, 8, k) + " f64 f64 f64";
    p.note = "one warp per tile, fragments per PTX ISA 9.7.14.5 (.f64); operands read from global memory as "
             "binary64";
    v.push_back(p);
  }
}

// The sparse forms of sm_90a (PTX ISA 9.7.14.6 mma.sp::ordered_metadata, 9.7.15.5.2
// wgmma.mma_async.sp), every operand mix the emulator table has a sparse form for.
void add_sparse(std::vector<ProbeKernel>& v) {
  const std::string metadata =
      "metadata registers with sparsity selector 0 in the layout docs/emulator.md \"Sparse MMA\" gives; the "
      "threads that selector leaves out hold 0xEEEEEEEE, a valid pattern the model would notice if they were read";
  auto add = [&](ProbeFamily family, int m, int n, int k, Format a, Format b, Format d, const std::string& note) {
    ProbeKernel p;
    p.family = family;
    p.arch = Arch::sm_90a;
    p.m = m, p.n = n, p.k = k;
    p.a = a, p.b = b, p.c = d, p.d = d;
    p.sparse = true;
    p.sparse_group = a == Format::tfloat32 ? 2 : 4;
    if (family == ProbeFamily::mma_sync) {
      p.ptx = "mma.sp::ordered_metadata.sync.aligned." + shape(m, n, k) + ".row.col." + sname(d) + "." + sname(a) +
              "." + sname(b) + "." + sname(d);
      p.name = "sm_90a mma.sp::ordered_metadata.sync.aligned " + shape(m, n, k) + " " + sname(d) + " " + sname(a) +
               " " + sname(b);
    } else {
      p.ptx = "wgmma.mma_async.sp.sync.aligned." + shape(m, n, k) + "." + sname(d) + "." + sname(a) + "." + sname(b);
      p.name = "sm_90a wgmma.mma_async.sp " + shape(m, n, k) + " " + sname(d) + " " + sname(a) + " " + sname(b);
    }
    p.note = note + "; " + metadata;
    v.push_back(p);
  };
  const std::string mma_note =
      "one warp per tile; compressed A fragment = the dense fragment of K/2, B and C/D fragments of the logical K "
      "(PTX ISA 9.7.14.6)";
  const std::string mma_fp8_note =
      mma_note + "; compiler-emulated on sm_90a (F2FP unpack, two HMMA.SP.16832.F32, then C added by FADD)";
  for (int k : {32, 16}) {
    add(ProbeFamily::mma_sync, 16, 8, k, Format::float16, Format::float16, Format::float32, mma_note);
    add(ProbeFamily::mma_sync, 16, 8, k, Format::bfloat16, Format::bfloat16, Format::float32, mma_note);
    add(ProbeFamily::mma_sync, 16, 8, k, Format::float16, Format::float16, Format::float16, mma_note);
  }
  add(ProbeFamily::mma_sync, 16, 8, 16, Format::tfloat32, Format::tfloat32, Format::float32, mma_note);
  add(ProbeFamily::mma_sync, 16, 8, 8, Format::tfloat32, Format::tfloat32, Format::float32, mma_note);
  // ptxas refuses the f16 accumulator of fp8 mma.sp on sm_90a.
  for (Format a : kFp8)
    for (Format b : kFp8) add(ProbeFamily::mma_sync, 16, 8, 64, a, b, Format::float32, mma_fp8_note);
  const std::string wgmma_note =
      "one warpgroup per tile; A (K/2 stored values) and B from shared memory, no-swizzle K-major core matrices "
      "(A: LBO 128 B, SBO 256 B; B: LBO 128 B, SBO 512 B); C loaded into the accumulator and issued with scale-d = "
      "1 (ProbeInputs::accumulate = false: scale-d = 0)";
  for (int n : {8, 64, 256}) {
    for (Format a : kFp8)
      for (Format b : kFp8)
        for (Format d : {Format::float32, Format::float16}) add(ProbeFamily::wgmma, 64, n, 64, a, b, d, wgmma_note);
    add(ProbeFamily::wgmma, 64, n, 32, Format::float16, Format::float16, Format::float32, wgmma_note);
    add(ProbeFamily::wgmma, 64, n, 32, Format::bfloat16, Format::bfloat16, Format::float32, wgmma_note);
    add(ProbeFamily::wgmma, 64, n, 32, Format::float16, Format::float16, Format::float16, wgmma_note);
    add(ProbeFamily::wgmma, 64, n, 16, Format::tfloat32, Format::tfloat32, Format::float32, wgmma_note);
  }
}

std::vector<ProbeKernel> build_catalogue() {
  std::vector<ProbeKernel> v;
  add_mma_sync(v);
  add_mma_sync_f64(v);
  add_wgmma(v);
  add_sparse(v);
  add_tcgen05(v);
  return v;
}


// Bits of a code the format uses; anything above is an input error.
int code_bits(Format f) { return f == Format::tfloat32 ? 32 : width(f); }

void check_codes(const char* what, const std::vector<std::uint32_t>& codes, Format f) {
  const int bits = code_bits(f);
  if (bits >= 32) return;
  const std::uint32_t limit = 1u << bits;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] >= limit) {
      throw std::invalid_argument(std::string("probe input ") + what + "[" + std::to_string(i) + "] = " +
                                  std::to_string(codes[i]) + " is not a " + info(f).short_name + " code (" +
                                  std::to_string(bits) + " bits)");
    }
  }
}

// One operand row (`count` codes: k, or a sparse A row's k / 2) as the `row_bytes` bytes the
// instruction reads (32; a sparse B row 64).
void pack_row(const ProbeKernel& p, Format f, const std::uint32_t* codes, int count, std::uint8_t* out,
              int row_bytes) {
  std::memset(out, 0, static_cast<std::size_t>(row_bytes));
  const bool packed_fp4 = p.family == ProbeFamily::tcgen05 &&
                          (p.tcgen05_kind == Tcgen05Kind::mxf4 || p.tcgen05_kind == Tcgen05Kind::mxf4nvf4);
  switch (f) {
    case Format::float8_e4m3fn:
    case Format::float8_e5m2:
      for (int i = 0; i < count; ++i) out[i] = static_cast<std::uint8_t>(codes[i]);
      return;
    case Format::float16:
    case Format::bfloat16:
      for (int i = 0; i < count; ++i) {
        out[2 * i] = static_cast<std::uint8_t>(codes[i]);
        out[2 * i + 1] = static_cast<std::uint8_t>(codes[i] >> 8);
      }
      return;
    case Format::tfloat32:
      for (int i = 0; i < count; ++i)
        for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<std::uint8_t>(codes[i] >> (8 * b));
      return;
    case Format::float4_e2m1fn:
      if (packed_fp4) {
        // kind::mxf4 / mxf4nvf4: two per byte, element 2i in the low nibble, no padding (PTX
        // 9.7.16.10.4.5-6; layouts.md P1).
        for (int i = 0; i < count / 2; ++i) out[i] = static_cast<std::uint8_t>(codes[2 * i] | (codes[2 * i + 1] << 4));
      } else {
        // kind::f8f6f4 / mxf8f6f4: each 16 elements packed into 8 bytes, then 8 bytes of padding
        // (PTX 9.7.16.10.4.4; layouts.md P2).
        for (int g = 0; g < count / 16; ++g)
          for (int i = 0; i < 8; ++i)
            out[16 * g + i] = static_cast<std::uint8_t>(codes[16 * g + 2 * i] | (codes[16 * g + 2 * i + 1] << 4));
      }
      return;
    case Format::float6_e2m3fn:
    case Format::float6_e3m2fn:
      // Each 16 elements packed LSB-first into 12 bytes (element i at bits [6i, 6i+6)), then 4
      // bytes of padding (PTX 9.7.16.10.4.4; layouts.md P3).
      for (int g = 0; g < count / 16; ++g) {
        for (int i = 0; i < 16; ++i) {
          const int bit = 6 * i;
          const std::uint32_t c = codes[16 * g + i];
          out[16 * g + bit / 8] |= static_cast<std::uint8_t>(c << (bit % 8));
          if (bit % 8 > 2) out[16 * g + bit / 8 + 1] |= static_cast<std::uint8_t>(c >> (8 - bit % 8));
        }
      }
      return;
    default: throw std::logic_error("probe operand format " + to_string(f) + " has no packing");
  }
}

// Scale bytes of `rows` rows into 128x4 atoms (byte (r % 32) * 16 + (r / 32) * 4 + j within the
// atom of rows [128q, 128q + 128)); bytes no row uses hold the format's 1.0.
void pack_scale_atoms(const std::uint8_t* scales, int rows, int per_row, Format scale, std::uint8_t* out,
                      int atoms) {
  const std::uint8_t one = scale == Format::float8_e8m0fnu ? 127 : 0x38;
  std::memset(out, one, static_cast<std::size_t>(atoms) * detail::kScaleAtomBytes);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < per_row; ++j)
      out[(r / 128) * detail::kScaleAtomBytes + (r % 32) * 16 + ((r % 128) / 32) * 4 + j] = scales[r * per_row + j];
}

}  // namespace

namespace {

// The metadata rules (PTX ISA 9.7.14.6.1): a position inside its group, increasing within a 2:4
// group (::ordered_metadata; equal indices are undefined).
void check_positions(const ProbeKernel& p, const ProbeInputs& in) {
  const std::size_t per_group = static_cast<std::size_t>(p.sparse_group) / 2, stored = probe_stored_k(p);
  for (std::size_t i = 0; i < in.a_index.size(); ++i) {
    const std::size_t row = i / stored, s = i % stored;
    const auto where = [&] {
      return "probe '" + p.name + "': a_index of tile " + std::to_string(row / std::size_t(p.m)) + ", A row " +
             std::to_string(row % std::size_t(p.m)) + ", group " + std::to_string(s / per_group);
    };
    if (in.a_index[i] >= p.sparse_group) {
      throw std::invalid_argument(where() + " is " + std::to_string(in.a_index[i]) + ", outside a group of " +
                                  std::to_string(p.sparse_group) + " K positions");
    }
    if (per_group == 2 && s % 2 == 1 && in.a_index[i] <= in.a_index[i - 1]) {
      throw std::invalid_argument(where() + ": positions " + std::to_string(in.a_index[i - 1]) + ", " +
                                  std::to_string(in.a_index[i]) +
                                  " are not increasing (mma.sp::ordered_metadata; equal positions are undefined)");
    }
  }
}

// A group's metadata nibble: 2:4 i0 | i1 << 2; tf32 1:2 0x4 for position 0 and 0xE for position 1
// (PTX ISA 9.7.14.6.1).
std::uint32_t metadata_nibble(const ProbeKernel& p, const std::uint8_t* pos) {
  if (p.sparse_group == 2) return pos[0] == 0 ? 0x4u : 0xEu;
  return std::uint32_t(pos[0]) | std::uint32_t(pos[1]) << 2;
}

// Every thread's metadata register for one tile (sparsity selector 0), in the layout measured on
// an H100 (docs/emulator.md, "Sparse MMA"); lane = 4g + t of warp w covers A rows 16w + g and
// 16w + g + 8:
//   16 groups per row (fp8 k64): thread t holds row g + 8 (t % 2), groups 8 (t / 2) + j in nibble j;
//    8 groups per row (16-bit k32, tf32 k16): threads t = 0, 1 hold groups 4t + j, row g in nibble j
//      and row g + 8 in nibble 4 + j;
//    4 groups per row (16-bit k16, tf32 k8): thread 0 holds group j, row g in nibble j and row
//      g + 8 in nibble 4 + j.
// The other threads get kUnusedMetadata.
constexpr std::uint32_t kUnusedMetadata = 0xEEEEEEEEu;
void pack_metadata(const ProbeKernel& p, const std::uint8_t* index, std::uint32_t* words) {
  const int per_group = p.sparse_group / 2, stored = p.k / 2, groups = p.k / p.sparse_group;
  const auto nibble = [&](int row, int group) {
    return metadata_nibble(p, index + std::size_t(row) * std::size_t(stored) + std::size_t(group * per_group));
  };
  for (int w = 0; w < p.m / 16; ++w) {
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4, t = lane % 4, r0 = 16 * w + g, r1 = r0 + 8;
      std::uint32_t word = kUnusedMetadata;
      if (groups == 16) {
        word = 0;
        for (int j = 0; j < 8; ++j) word |= nibble(t % 2 ? r1 : r0, 8 * (t / 2) + j) << (4 * j);
      } else if (groups == 8 && t < 2) {
        word = 0;
        for (int j = 0; j < 4; ++j) word |= nibble(r0, 4 * t + j) << (4 * j) | nibble(r1, 4 * t + j) << (16 + 4 * j);
      } else if (groups == 4 && t == 0) {
        word = 0;
        for (int j = 0; j < 4; ++j) word |= nibble(r0, j) << (4 * j) | nibble(r1, j) << (16 + 4 * j);
      }
      words[32 * w + lane] = word;
    }
  }
}

}  // namespace

const std::vector<ProbeKernel>& probe_kernels() {
  static const std::vector<ProbeKernel> all = build_catalogue();
  return all;
}

const ProbeKernel& find_probe(std::string_view name) {
  for (const ProbeKernel& p : probe_kernels())
    if (p.name == name) return p;
  throw std::invalid_argument("no probe kernel named '" + std::string(name) +
                              "' (blockscale::gpu::probe_kernels() lists them)");
}

namespace {

bool same_probe(const ProbeKernel& x, const ProbeKernel& y) {
  return x.name == y.name && x.ptx == y.ptx && x.arch == y.arch && x.family == y.family && x.m == y.m &&
         x.n == y.n && x.k == y.k && x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d &&
         x.block_scaled == y.block_scaled && x.scale == y.scale && x.scale_block == y.scale_block &&
         x.tcgen05_kind == y.tcgen05_kind && x.note == y.note && x.f64 == y.f64 && x.sparse == y.sparse &&
         x.sparse_group == y.sparse_group;
}

}  // namespace

void validate_probe_inputs(const ProbeKernel& p, const ProbeInputs& in) {
  // Only the catalogue's rows have kernels behind them, and the row images, the metadata and the
  // launch take their sizes from these fields: a caller's struct with another K or scale block
  // would divide by zero or write past the 32-byte row images.
  // A reference into the catalogue is found by address; only a copy is compared field by field
  // (as gemm.cpp's check of a GEMM kernel does).
  const std::vector<ProbeKernel>& all = probe_kernels();
  const bool listed =
      std::any_of(all.begin(), all.end(), [&](const ProbeKernel& c) { return &c == &p || same_probe(c, p); });
  if (!listed) {
    throw std::invalid_argument("probe '" + p.name +
                                "': not a probe of blockscale::gpu::probe_kernels() with the fields listed there "
                                "(take it from probe_kernels() or find_probe)");
  }
  auto need = [&](const char* what, std::size_t have, std::size_t per_tile) {
    // tiles * per_tile must not wrap: 2^58 tiles of 512 words would "need" 0 and pass empty inputs.
    if (per_tile != 0 && in.tiles > std::numeric_limits<std::size_t>::max() / per_tile) {
      throw std::invalid_argument(std::string("probe '") + p.name + "': " + std::to_string(in.tiles) +
                                  " tiles of " + std::to_string(per_tile) + " " + what +
                                  " elements each overflow the size of an array");
    }
    if (have != in.tiles * per_tile) {
      throw std::invalid_argument(std::string("probe '") + p.name + "': " + what + " has " + std::to_string(have) +
                                  " elements; " + std::to_string(in.tiles) + " tiles need " +
                                  std::to_string(in.tiles * per_tile));
    }
  };
  if (in.tiles == 0) throw std::invalid_argument("probe '" + p.name + "': no tiles");
  need("a", in.a.size(), probe_a_size(p));
  need("b", in.b.size(), probe_b_size(p));
  need("c", in.c.size(), probe_c_size(p));
  need("sfa", in.sfa.size(), probe_sfa_size(p));
  need("sfb", in.sfb.size(), probe_sfb_size(p));
  need("a_index", in.a_index.size(), probe_a_index_size(p));
  if (p.sparse) check_positions(p, in);
  if (!p.f64) {  // every pair of words is a binary64 pattern
    check_codes("a", in.a, p.a);
    check_codes("b", in.b, p.b);
    check_codes("c", in.c, p.c);
  }
  if (!in.accumulate && p.family != ProbeFamily::wgmma) {
    throw std::invalid_argument("probe '" + p.name + "': accumulate = false (scale-d = 0) is a wgmma operand; " +
                                to_string(p.family) + " probes always add C");
  }
}

namespace {

// f64 probes: the words go to the device as they are (two per element, low word first, is the
// little-endian layout of a binary64 array), and D comes back the same way.
std::vector<std::uint32_t> run_probe_f64(const ProbeKernel& p, const ProbeInputs& in, int device) {
  detail::DeviceBuffer da(in.a.size() * 4), db(in.b.size() * 4), dc(in.c.size() * 4), dd(in.c.size() * 4);
  da.upload(in.a.data(), da.bytes());
  db.upload(in.b.data(), db.bytes());
  dc.upload(in.c.data(), dc.bytes());
  BLOCKSCALE_CUDA(cudaMemset(dd.get(), 0xFF, dd.bytes()));  // poison: every output must be written
  detail::ProbeDeviceArgs args;
  args.a_f64 = da.as<double>();
  args.b_f64 = db.as<double>();
  args.c = dc.get();
  args.d = dd.get();
  args.tiles = in.tiles;
  BLOCKSCALE_CUDA(cudaDeviceGetAttribute(&args.multiprocessors, cudaDevAttrMultiProcessorCount, device));
  detail::launch_probe_sm90(p, args);
  BLOCKSCALE_CUDA(cudaDeviceSynchronize());
  std::vector<std::uint32_t> out(in.c.size());
  dd.download(out.data(), dd.bytes());
  return out;
}

}  // namespace

std::vector<std::uint32_t> run_probe(const ProbeKernel& p, const ProbeInputs& in, int device) {
  validate_probe_inputs(p, in);
  require(p.name, p.arch, device);
  detail::DeviceScope scope(device);
  if (p.f64) return run_probe_f64(p, in, device);

  const std::size_t T = in.tiles;
  const int rb = detail::kProbeRowBytes, brb = p.sparse ? detail::kSparseBRowBytes : rb;
  const int stored = static_cast<int>(probe_stored_k(p));
  std::vector<std::uint8_t> a_img(T * p.m * rb), b_img(T * p.n * brb);
  for (std::size_t r = 0; r < T * p.m; ++r) pack_row(p, p.a, &in.a[r * stored], stored, &a_img[r * rb], rb);
  for (std::size_t r = 0; r < T * p.n; ++r) pack_row(p, p.b, &in.b[r * p.k], p.k, &b_img[r * brb], brb);
  std::vector<std::uint32_t> meta;
  if (p.sparse) {
    const int words = detail::probe_metadata_words(p.m);
    meta.resize(T * words);
    for (std::size_t t = 0; t < T; ++t) pack_metadata(p, &in.a_index[t * probe_a_index_size(p)], &meta[t * words]);
  }

  const std::size_t cbytes = p.c == Format::float16 ? 2 : 4;
  std::vector<std::uint8_t> c_img(T * probe_c_size(p) * cbytes);
  for (std::size_t i = 0; i < in.c.size(); ++i) std::memcpy(&c_img[i * cbytes], &in.c[i], cbytes);  // little-endian

  std::vector<std::uint8_t> sfa_img, sfb_img;
  const int sfb_atoms = detail::probe_sfb_atoms(p.n);
  if (p.block_scaled) {
    const int per_row = p.k / p.scale_block;
    sfa_img.resize(T * detail::kScaleAtomBytes);
    sfb_img.resize(T * detail::kScaleAtomBytes * sfb_atoms);
    for (std::size_t t = 0; t < T; ++t) {
      pack_scale_atoms(&in.sfa[t * probe_sfa_size(p)], p.m, per_row, p.scale, &sfa_img[t * detail::kScaleAtomBytes],
                       1);
      pack_scale_atoms(&in.sfb[t * probe_sfb_size(p)], p.n, per_row, p.scale,
                       &sfb_img[t * detail::kScaleAtomBytes * sfb_atoms], sfb_atoms);
    }
  }

  detail::DeviceBuffer da(a_img.size()), db(b_img.size()), dc(c_img.size()), dd(c_img.size());
  detail::DeviceBuffer dsfa(sfa_img.size()), dsfb(sfb_img.size()), dmeta(meta.size() * 4);
  if (p.sparse) dmeta.upload(meta.data(), dmeta.bytes());
  da.upload(a_img.data(), a_img.size());
  db.upload(b_img.data(), b_img.size());
  dc.upload(c_img.data(), c_img.size());
  if (p.block_scaled) {
    dsfa.upload(sfa_img.data(), sfa_img.size());
    dsfb.upload(sfb_img.data(), sfb_img.size());
  }
  BLOCKSCALE_CUDA(cudaMemset(dd.get(), 0xFF, dd.bytes()));  // poison: every output must be written

  detail::ProbeDeviceArgs args;
  args.a_rows = da.as<std::uint8_t>();
  args.b_rows = db.as<std::uint8_t>();
  args.c = dc.get();
  args.d = dd.get();
  args.sfa = dsfa.as<std::uint8_t>();
  args.sfb = dsfb.as<std::uint8_t>();
  args.metadata = dmeta.as<std::uint32_t>();
  args.tiles = T;
  args.scale_d = in.accumulate ? 1u : 0u;
  BLOCKSCALE_CUDA(cudaDeviceGetAttribute(&args.multiprocessors, cudaDevAttrMultiProcessorCount, device));
  if (p.family == ProbeFamily::tcgen05) {
    desc::Tcgen05Instr instr;
    instr.kind = p.tcgen05_kind;
    instr.a = p.a, instr.b = p.b, instr.d = p.d;
    instr.m = p.m, instr.n = p.n;
    instr.scale = p.scale;
    args.idesc = desc::encode_tcgen05_idesc(instr);
    detail::launch_probe_sm100(p, args);
  } else {
    detail::launch_probe_sm90(p, args);
  }
  BLOCKSCALE_CUDA(cudaDeviceSynchronize());

  std::vector<std::uint8_t> d_img(dd.bytes());
  dd.download(d_img.data(), d_img.size());
  std::vector<std::uint32_t> out(T * probe_c_size(p), 0);
  for (std::size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], &d_img[i * cbytes], cbytes);
  return out;
}

}  // namespace blockscale::gpu
