// SPDX-License-Identifier: Apache-2.0
// Encoders of the tensor-core descriptors: the tcgen05 instruction descriptor (32 bits), the
// sm_100 shared-memory matrix descriptor (64 bits) and the Hopper wgmma matrix descriptor
// (64 bits). Includable without CUDA; the raw packers are constexpr and usable on the device.
//
// ptxas checks instruction qualifiers but never these values: they are runtime registers, and a
// wrong bit compiles cleanly. So each field is placed by one function here and unit-tested
// against values computed independently (tests/gpu/test_descriptors.cpp; gpu.md §1.5-§1.6, §3.2).
#pragma once

#include <cstdint>
#include <string>

#include "blockscale/formats/format.h"

#if defined(__CUDACC__)
#define BLOCKSCALE_HOST_DEVICE __host__ __device__
#else
#define BLOCKSCALE_HOST_DEVICE
#endif

namespace blockscale::gpu::desc {

// ---- tcgen05 instruction descriptor (PTX ISA 9.7.16.4.2, Tables 45-47) ------------------------

enum class Tcgen05Kind : std::uint8_t { f16, tf32, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4 };

std::string to_string(Tcgen05Kind k);  // "f16", "mxf4nvf4", ...

struct Tcgen05Instr {
  Tcgen05Kind kind = Tcgen05Kind::f16;
  Format a = Format::float16;
  Format b = Format::float16;
  Format d = Format::float32;           // non-block-scaled kinds: f32 or f16 (block-scaled: f32)
  int m = 128, n = 256;
  bool a_mn_major = false, b_mn_major = false;  // transpose A / B (false: K-major)
  bool negate_a = false, negate_b = false;
  Format scale = Format::float8_e8m0fnu;  // block-scaled kinds: ue8m0 or ue4m3
  int sfa_id = 0, sfb_id = 0;             // byte (1X) / half-word (2X) of the scale word; 4X: 0
};

// The 3-bit operand type codes. kind::f8f6f4 and kind::mxf8f6f4 number E2M1 5; kind::mxf4 and
// kind::mxf4nvf4 number it 1 (gpu.md §6 item 2).
BLOCKSCALE_HOST_DEVICE constexpr std::uint32_t f8f6f4_type_code(Format f) {
  switch (f) {
    case Format::float8_e4m3fn: return 0;
    case Format::float8_e5m2: return 1;
    case Format::float6_e2m3fn: return 3;
    case Format::float6_e3m2fn: return 4;
    case Format::float4_e2m1fn: return 5;
    default: return 7;  // not an f8f6f4 type; encode_tcgen05_idesc rejects it first
  }
}

// Raw packer for the non-block-scaled kinds (f16, tf32, f8f6f4). Fields: bits 4-5 D type
// (F16=0, F32=1), 7-9 / 10-12 A / B type, 13 / 14 negate, 15 / 16 transpose, 17-22 N>>3,
// 24-28 M>>4.
BLOCKSCALE_HOST_DEVICE constexpr std::uint32_t pack_tcgen05_idesc(std::uint32_t d_type, std::uint32_t a_type,
                                                                  std::uint32_t b_type, bool negate_a, bool negate_b,
                                                                  bool a_mn_major, bool b_mn_major, int m, int n) {
  return (d_type << 4) | (a_type << 7) | (b_type << 10) | (std::uint32_t(negate_a) << 13) |
         (std::uint32_t(negate_b) << 14) | (std::uint32_t(a_mn_major) << 15) | (std::uint32_t(b_mn_major) << 16) |
         (std::uint32_t(n >> 3) << 17) | (std::uint32_t(m >> 4) << 24);
}

// Raw packer for the block-scaled kinds. Bits 4-5 SFB ID, 7-9 A type, 10-12 B type (mxf4/nvf4:
// 10-11), 13 / 14 negate, 15 / 16 transpose, 17-22 N>>3, 23 scale type (UE8M0=1, UE4M3=0),
// 27-28 M>>7, 29-30 SFA ID.
BLOCKSCALE_HOST_DEVICE constexpr std::uint32_t pack_tcgen05_idesc_block_scaled(
    std::uint32_t a_type, std::uint32_t b_type, bool negate_a, bool negate_b, bool a_mn_major, bool b_mn_major, int m,
    int n, bool scale_ue8m0, int sfa_id, int sfb_id) {
  return (std::uint32_t(sfb_id) << 4) | (a_type << 7) | (b_type << 10) | (std::uint32_t(negate_a) << 13) |
         (std::uint32_t(negate_b) << 14) | (std::uint32_t(a_mn_major) << 15) | (std::uint32_t(b_mn_major) << 16) |
         (std::uint32_t(n >> 3) << 17) | (std::uint32_t(scale_ue8m0) << 23) | (std::uint32_t(m >> 7) << 27) |
         (std::uint32_t(sfa_id) << 29);
}

// Validating encoder: checks the kind's operand types, shape (M, N step; N % 16 for an 8-bit B
// stored MN-major), majorness, scale type and SF IDs (PTX Tables 42, 45-47, 49, 50, 52, 54-55;
// ue4m3 scales: SF IDs 0) and throws std::invalid_argument naming the rule broken. The SF IDs of
// kind::mxf4nvf4 with ue8m0 scales depend on the block size (block32: 0 or 2; block16: 0), which
// the descriptor does not hold: 0 or 2 is accepted.
std::uint32_t encode_tcgen05_idesc(const Tcgen05Instr& instr);

// ---- sm_100 shared-memory matrix descriptor (PTX "Shared Memory Descriptor", tcgen05) --------

// Swizzle field (bits 61-63).
enum class Sm100Swizzle : std::uint8_t { none = 0, b128_base32b = 1, b128 = 2, b64 = 4, b32 = 6 };

// Bits 0-13 start address >> 4 (of the 18-bit shared address), 16-29 LBO >> 4, 32-45 SBO >> 4,
// 46-48 fixed 0b001 (bit 46 must be set: the sm_100 "version" field), 49-51 matrix base offset,
// 52 LBO mode (absolute), 61-63 swizzle.
BLOCKSCALE_HOST_DEVICE constexpr std::uint64_t pack_sm100_smem_desc(std::uint32_t smem_address,
                                                                    std::uint32_t lbo_bytes, std::uint32_t sbo_bytes,
                                                                    Sm100Swizzle swizzle, std::uint32_t base_offset = 0,
                                                                    bool lbo_absolute = false) {
  return std::uint64_t((smem_address & 0x3FFFFu) >> 4) | (std::uint64_t((lbo_bytes >> 4) & 0x3FFFu) << 16) |
         (std::uint64_t((sbo_bytes >> 4) & 0x3FFFu) << 32) | (std::uint64_t(1) << 46) |
         (std::uint64_t(base_offset & 7u) << 49) | (std::uint64_t(lbo_absolute) << 52) |
         (std::uint64_t(swizzle) << 61);
}

// Validating encoder: 16-byte alignment of address, LBO and SBO; offsets below 2^18; base offset
// 0..7, and 0 without a swizzle; valid swizzle. Throws std::invalid_argument. lbo_absolute (bit
// 52, LBO as an absolute address) is an sm_103a mode; sm_100a kernels leave it false.
std::uint64_t encode_sm100_smem_desc(std::uint32_t smem_address, std::uint32_t lbo_bytes, std::uint32_t sbo_bytes,
                                     Sm100Swizzle swizzle, std::uint32_t base_offset = 0, bool lbo_absolute = false);

// ---- Hopper wgmma matrix descriptor (PTX ISA 9.7.15.5.1.2.2) ---------------------------------

// Swizzle field (bits 62-63).
enum class WgmmaSwizzle : std::uint8_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

// Bits 0-13 start address >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 base offset, 62-63
// swizzle. No version bit (unlike sm_100).
BLOCKSCALE_HOST_DEVICE constexpr std::uint64_t pack_wgmma_desc(std::uint32_t smem_address, std::uint32_t lbo_bytes,
                                                               std::uint32_t sbo_bytes, WgmmaSwizzle swizzle,
                                                               std::uint32_t base_offset = 0) {
  return std::uint64_t((smem_address & 0x3FFFFu) >> 4) | (std::uint64_t((lbo_bytes >> 4) & 0x3FFFu) << 16) |
         (std::uint64_t((sbo_bytes >> 4) & 0x3FFFu) << 32) | (std::uint64_t(base_offset & 7u) << 49) |
         (std::uint64_t(swizzle) << 62);
}

std::uint64_t encode_wgmma_desc(std::uint32_t smem_address, std::uint32_t lbo_bytes, std::uint32_t sbo_bytes,
                                WgmmaSwizzle swizzle, std::uint32_t base_offset = 0);

}  // namespace blockscale::gpu::desc
