// SPDX-License-Identifier: Apache-2.0
// Validating descriptor encoders (the field packing itself is in descriptors.h).
#include "blockscale/gpu/descriptors.h"

#include <stdexcept>
#include <string>

namespace blockscale::gpu::desc {

std::string to_string(Tcgen05Kind k) {
  switch (k) {
    case Tcgen05Kind::f16: return "f16";
    case Tcgen05Kind::tf32: return "tf32";
    case Tcgen05Kind::f8f6f4: return "f8f6f4";
    case Tcgen05Kind::mxf8f6f4: return "mxf8f6f4";
    case Tcgen05Kind::mxf4: return "mxf4";
    case Tcgen05Kind::mxf4nvf4: return "mxf4nvf4";
  }
  return "?";
}

namespace {

[[noreturn]] void bad(const Tcgen05Instr& in, const std::string& rule) {
  throw std::invalid_argument("tcgen05 instruction descriptor (kind::" + to_string(in.kind) + " m" +
                              std::to_string(in.m) + "n" + std::to_string(in.n) + " " +
                              blockscale::to_string(in.a) + " x " + blockscale::to_string(in.b) + "): " + rule);
}

bool is_f8f6f4_type(Format f) { return f8f6f4_type_code(f) != 7; }
bool is_sub_byte(Format f) {
  return f == Format::float4_e2m1fn || f == Format::float6_e2m3fn || f == Format::float6_e3m2fn;
}

void check_n(const Tcgen05Instr& in, int step) {
  if (in.n < step || in.n > 256 || in.n % step != 0) {
    bad(in, "N must be in [" + std::to_string(step) + ", 256] in steps of " + std::to_string(step) +
                " (PTX ISA Table 42, cta_group::1)");
  }
}

// An 8-bit B stored MN-major is read in 16-column units at cta_group::1 (PTX ISA Table 50).
void check_mn_major_b(const Tcgen05Instr& in) {
  const bool eight_bit_b = in.b == Format::float8_e4m3fn || in.b == Format::float8_e5m2;
  if (in.b_mn_major && eight_bit_b && in.n % 16 != 0) {
    bad(in, "an 8-bit B stored MN-major needs N to be a multiple of 16 (PTX ISA Table 50, cta_group::1)");
  }
}

}  // namespace

std::uint32_t encode_tcgen05_idesc(const Tcgen05Instr& in) {
  const bool block_scaled =
      in.kind == Tcgen05Kind::mxf8f6f4 || in.kind == Tcgen05Kind::mxf4 || in.kind == Tcgen05Kind::mxf4nvf4;
  if (!block_scaled) {
    std::uint32_t a = 0, b = 0;
    switch (in.kind) {
      case Tcgen05Kind::f16:
        if ((in.a != Format::float16 && in.a != Format::bfloat16) || in.b != in.a) {
          bad(in, "kind::f16 takes f16 x f16 or bf16 x bf16 operands");
        }
        a = b = (in.a == Format::bfloat16) ? 1 : 0;
        if (in.d == Format::float16 && in.a == Format::bfloat16) bad(in, "bf16 operands need an f32 D");
        break;
      case Tcgen05Kind::tf32:
        if (in.a != Format::tfloat32 || in.b != Format::tfloat32) bad(in, "kind::tf32 takes tf32 x tf32 operands");
        a = b = 2;
        if (in.d != Format::float32) bad(in, "kind::tf32 needs an f32 D");
        break;
      case Tcgen05Kind::f8f6f4:
        if (!is_f8f6f4_type(in.a) || !is_f8f6f4_type(in.b)) {
          bad(in, "kind::f8f6f4 operands must be e4m3, e5m2, e2m3, e3m2 or e2m1");
        }
        a = f8f6f4_type_code(in.a);
        b = f8f6f4_type_code(in.b);
        if ((in.a_mn_major && is_sub_byte(in.a)) || (in.b_mn_major && is_sub_byte(in.b))) {
          bad(in, "4-bit and 6-bit operands must be K-major (PTX ISA Table 52)");
        }
        break;
      default:
        throw std::invalid_argument("tcgen05 instruction descriptor: kind value " + std::to_string(int(in.kind)) +
                                    " is not a Tcgen05Kind");
    }
    if (in.d != Format::float32 && in.d != Format::float16) bad(in, "D must be f32 or f16");
    if (in.m != 64 && in.m != 128) bad(in, "M must be 64 or 128 (cta_group::1)");
    // kind::f8f6f4 with M = 128: N in steps of 16, the conservative reading of PTX Table 42's
    // "step 8 or step 16" that CUTLASS and DeepGEMM assert.
    check_n(in, in.kind == Tcgen05Kind::f8f6f4 && in.m == 128 ? 16 : 8);
    check_mn_major_b(in);
    if (in.kind == Tcgen05Kind::tf32 && (in.a_mn_major || in.b_mn_major)) {
      bad(in, "MN-major tf32 operands need the 128B-with-32B-atom swizzle; this encoder supports K-major tf32 only");
    }
    return pack_tcgen05_idesc(in.d == Format::float32 ? 1u : 0u, a, b, in.negate_a, in.negate_b, in.a_mn_major,
                              in.b_mn_major, in.m, in.n);
  }

  if (in.m != 128) bad(in, "block-scaled kinds need M = 128 with cta_group::1 (PTX ISA Table 42)");
  check_n(in, 8);
  check_mn_major_b(in);
  if (in.d != Format::float32) bad(in, "block-scaled kinds accumulate in f32");
  if (in.sfa_id < 0 || in.sfa_id > 3 || in.sfb_id < 0 || in.sfb_id > 3) bad(in, "SF IDs are 0..3");
  std::uint32_t a = 0, b = 0;
  bool ue8m0 = true;
  if (in.kind == Tcgen05Kind::mxf8f6f4) {
    if (!is_f8f6f4_type(in.a) || !is_f8f6f4_type(in.b)) {
      bad(in, "kind::mxf8f6f4 operands must be e4m3, e5m2, e2m3, e3m2 or e2m1");
    }
    if (in.scale != Format::float8_e8m0fnu) bad(in, "kind::mxf8f6f4 scales are ue8m0");
    if ((in.a_mn_major && is_sub_byte(in.a)) || (in.b_mn_major && is_sub_byte(in.b))) {
      bad(in, "4-bit and 6-bit operands must be K-major (PTX ISA Table 52)");
    }
    a = f8f6f4_type_code(in.a);
    b = f8f6f4_type_code(in.b);
  } else {
    if (in.a != Format::float4_e2m1fn || in.b != Format::float4_e2m1fn) {
      bad(in, "kind::mxf4 / kind::mxf4nvf4 operands are e2m1");
    }
    if (in.a_mn_major || in.b_mn_major) bad(in, "kind::mxf4 / kind::mxf4nvf4 do not transpose (PTX ISA Table 49)");
    if (in.sfa_id % 2 != 0 || in.sfb_id % 2 != 0) bad(in, "kind::mxf4 / kind::mxf4nvf4 SF IDs are 0 or 2");
    if (in.kind == Tcgen05Kind::mxf4 && in.scale != Format::float8_e8m0fnu) bad(in, "kind::mxf4 scales are ue8m0");
    if (in.scale != Format::float8_e8m0fnu && in.scale != Format::float8_ue4m3) {
      bad(in, "kind::mxf4nvf4 scales are ue8m0 or ue4m3");
    }
    ue8m0 = in.scale == Format::float8_e8m0fnu;
    // ue4m3 scales exist only with block16 (scale_vec::4X), whose scale is the whole 32-bit TMEM
    // word: the SF ID must be 0 (PTX ISA "Block Scaling"; gpu.md, the TMEM scale layout).
    if (!ue8m0 && (in.sfa_id != 0 || in.sfb_id != 0)) {
      bad(in, "ue4m3 scales are block16 (scale_vec::4X): SF IDs must be 0");
    }
    a = b = 1;  // E2M1 is code 1 for these kinds
  }
  return pack_tcgen05_idesc_block_scaled(a, b, in.negate_a, in.negate_b, in.a_mn_major, in.b_mn_major, in.m, in.n,
                                         ue8m0, in.sfa_id, in.sfb_id);
}

namespace {
void check_smem_fields(const char* what, std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo,
                       std::uint32_t base_offset) {
  auto fail = [&](const std::string& rule) { throw std::invalid_argument(std::string(what) + ": " + rule); };
  if (addr % 16 || lbo % 16 || sbo % 16) fail("start address, LBO and SBO must be 16-byte aligned");
  if (addr >= (1u << 18)) fail("start address must be a shared-memory offset below 2^18");
  if (lbo >= (1u << 18) || sbo >= (1u << 18)) fail("LBO and SBO must be below 2^18 bytes (14-bit fields of 16 B)");
  if (base_offset > 7) fail("matrix base offset is 3 bits (0..7)");
}

// The base offset places a swizzle pattern that does not start on its natural boundary; without a
// swizzle there is no pattern, and the field must be 0.
void check_unswizzled_base_offset(const char* what, bool swizzled, std::uint32_t base_offset) {
  if (!swizzled && base_offset != 0) {
    throw std::invalid_argument(std::string(what) + ": a matrix base offset applies to swizzled layouts only (" +
                                "swizzle none needs 0)");
  }
}
}  // namespace

std::uint64_t encode_sm100_smem_desc(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo, Sm100Swizzle swizzle,
                                     std::uint32_t base_offset, bool lbo_absolute) {
  check_smem_fields("sm_100 shared-memory descriptor", addr, lbo, sbo, base_offset);
  switch (swizzle) {
    case Sm100Swizzle::none:
    case Sm100Swizzle::b128_base32b:
    case Sm100Swizzle::b128:
    case Sm100Swizzle::b64:
    case Sm100Swizzle::b32: break;
    default: throw std::invalid_argument("sm_100 shared-memory descriptor: swizzle codes 3, 5, 7 are invalid");
  }
  check_unswizzled_base_offset("sm_100 shared-memory descriptor", swizzle != Sm100Swizzle::none, base_offset);
  return pack_sm100_smem_desc(addr, lbo, sbo, swizzle, base_offset, lbo_absolute);
}

std::uint64_t encode_wgmma_desc(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo, WgmmaSwizzle swizzle,
                                std::uint32_t base_offset) {
  check_smem_fields("wgmma matrix descriptor", addr, lbo, sbo, base_offset);
  if (static_cast<unsigned>(swizzle) > 3) throw std::invalid_argument("wgmma matrix descriptor: swizzle is 0..3");
  check_unswizzled_base_offset("wgmma matrix descriptor", swizzle != WgmmaSwizzle::none, base_offset);
  return pack_wgmma_desc(addr, lbo, sbo, swizzle, base_offset);
}

}  // namespace blockscale::gpu::desc
