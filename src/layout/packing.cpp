// SPDX-License-Identifier: Apache-2.0
// Sub-byte packing (docs/layouts.md "Packing").
#include "blockscale/layout/packing.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace blockscale {

namespace {

struct PackingInfo {
  Packing p;
  const char* name;
  std::size_t codes_per_unit;  // codes per indivisible unit
  std::size_t bytes_per_unit;  // bytes that unit occupies, padding included
  std::size_t data_bytes;      // of which hold codes (the rest is zero padding)
};

// clang-format off
constexpr std::array<PackingInfo, kPackingCount> kPackingTable = {{
  {Packing::byte_per_element, "byte_per_element",  1,  1,  1},
  {Packing::fp4_dense,        "fp4_dense",         2,  1,  1},  // P1: 2 codes per byte
  {Packing::fp6_dense,        "fp6_dense",         4,  3,  3},  // P3: 4 codes per 3 bytes
  {Packing::fp4_padded16,     "fp4_padded16",     16, 16,  8},  // P2: 8 B data + 8 B pad
  {Packing::fp6_padded16,     "fp6_padded16",     16, 16, 12},  // P3 SMEM: 12 B data + 4 B pad
}};
// clang-format on

const PackingInfo& packing_info(Packing p) {
  const auto i = static_cast<std::size_t>(p);
  if (i >= kPackingTable.size()) throw std::invalid_argument("packing: unknown Packing value");
  return kPackingTable[i];
}

bool is_fp4(Format f) { return f == Format::float4_e2m1fn; }
bool is_fp6(Format f) { return f == Format::float6_e2m3fn || f == Format::float6_e3m2fn; }

std::string where(const char* fn, Packing p, Format f) {
  return std::string(fn) + "(" + packing_info(p).name + ", " + to_string(f) + "): ";
}

void check_format(const char* fn, Packing p, Format f) {
  require_known(f, fn);
  switch (p) {
    case Packing::byte_per_element:
      if (info(f).storage_bits != 8)
        throw std::invalid_argument(where(fn, p, f) +
                                    "byte_per_element holds formats stored in 8 bits (fp4, fp6, fp8, "
                                    "e8m0, ue4m3), not a " +
                                    std::to_string(info(f).storage_bits) + "-bit format");
      return;
    case Packing::fp4_dense:
    case Packing::fp4_padded16:
      if (!is_fp4(f))
        throw std::invalid_argument(where(fn, p, f) +
                                    "fp4 packings hold float4_e2m1fn codes only (layouts.md P1/P2)");
      return;
    case Packing::fp6_dense:
    case Packing::fp6_padded16:
      if (!is_fp6(f))
        throw std::invalid_argument(where(fn, p, f) +
                                    "fp6 packings hold float6_e2m3fn / float6_e3m2fn codes only "
                                    "(layouts.md P3)");
      return;
  }
}

std::size_t checked_bytes(const char* fn, Packing p, Format f, std::size_t count) {
  check_format(fn, p, f);
  const PackingInfo& pi = packing_info(p);
  if (count % pi.codes_per_unit != 0)
    throw std::invalid_argument(where(fn, p, f) + "count " + std::to_string(count) +
                                " is not a multiple of " + std::to_string(pi.codes_per_unit) + " (" +
                                pi.name + " packs " + std::to_string(pi.codes_per_unit) + " codes into " +
                                std::to_string(pi.bytes_per_unit) + " bytes)");
  return count / pi.codes_per_unit * pi.bytes_per_unit;
}

void check_codes(const char* fn, Packing p, Format f, std::span<const std::uint8_t> codes) {
  const auto excess = static_cast<std::uint8_t>(~code_mask(f) & 0xFFu);
  if (excess == 0) return;
  std::uint8_t any = 0;
  for (std::uint8_t c : codes) any |= c;
  if ((any & excess) == 0) return;
  const auto it = std::find_if(codes.begin(), codes.end(), [&](std::uint8_t c) { return (c & excess) != 0; });
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(*it));
  throw std::invalid_argument(where(fn, p, f) + "code " + hex + " at index " +
                              std::to_string(it - codes.begin()) + " has bits above the format's " +
                              std::to_string(width(f)) + "-bit width");
}

// 4 fp6 codes <-> 3 bytes: code k at bits [6k, 6k+6) of the little-endian 24-bit word. A 16-code
// 12-byte group is 4 of these in a row, which is the same LSB-first bit order over 96 bits.
inline void pack_fp6x4(const std::uint8_t* c, std::uint8_t* o) {
  const std::uint32_t v = std::uint32_t{c[0]} | std::uint32_t{c[1]} << 6 | std::uint32_t{c[2]} << 12 |
                          std::uint32_t{c[3]} << 18;
  o[0] = static_cast<std::uint8_t>(v);
  o[1] = static_cast<std::uint8_t>(v >> 8);
  o[2] = static_cast<std::uint8_t>(v >> 16);
}
inline void unpack_fp6x4(const std::uint8_t* in, std::uint8_t* c) {
  const std::uint32_t v = std::uint32_t{in[0]} | std::uint32_t{in[1]} << 8 | std::uint32_t{in[2]} << 16;
  c[0] = v & 0x3F;
  c[1] = (v >> 6) & 0x3F;
  c[2] = (v >> 12) & 0x3F;
  c[3] = (v >> 18) & 0x3F;
}

void pack_fp4(const std::uint8_t* c, std::size_t n, std::uint8_t* o) {
  for (std::size_t j = 0; j < n / 2; ++j)
    o[j] = static_cast<std::uint8_t>(c[2 * j] | c[2 * j + 1] << 4);
}
void unpack_fp4(const std::uint8_t* in, std::size_t n, std::uint8_t* c) {
  for (std::size_t j = 0; j < n / 2; ++j) {
    c[2 * j] = in[j] & 0x0F;
    c[2 * j + 1] = in[j] >> 4;
  }
}

}  // namespace

std::size_t packed_bytes(Packing p, Format f, std::size_t count) {
  return checked_bytes("packed_bytes", p, f, count);
}

void pack(Packing p, Format f, std::span<const std::uint8_t> codes, std::span<std::uint8_t> out) {
  const std::size_t need = checked_bytes("pack", p, f, codes.size());
  if (out.size() != need)
    throw std::invalid_argument(where("pack", p, f) + std::to_string(codes.size()) + " codes need " +
                                std::to_string(need) + " bytes, the output has " + std::to_string(out.size()));
  check_codes("pack", p, f, codes);
  const std::uint8_t* c = codes.data();
  std::uint8_t* o = out.data();
  const std::size_t n = codes.size();
  switch (p) {
    case Packing::byte_per_element:
      if (n) std::memcpy(o, c, n);
      return;
    case Packing::fp4_dense:
      pack_fp4(c, n, o);
      return;
    case Packing::fp6_dense:
      for (std::size_t g = 0; g < n / 4; ++g) pack_fp6x4(c + 4 * g, o + 3 * g);
      return;
    case Packing::fp4_padded16:
      for (std::size_t g = 0; g < n / 16; ++g) {
        pack_fp4(c + 16 * g, 16, o + 16 * g);
        std::memset(o + 16 * g + 8, 0, 8);
      }
      return;
    case Packing::fp6_padded16:
      for (std::size_t g = 0; g < n / 16; ++g) {
        for (int q = 0; q < 4; ++q) pack_fp6x4(c + 16 * g + 4 * q, o + 16 * g + 3 * q);
        std::memset(o + 16 * g + 12, 0, 4);
      }
      return;
  }
}

void unpack(Packing p, Format f, std::span<const std::uint8_t> in, std::span<std::uint8_t> codes) {
  const std::size_t need = checked_bytes("unpack", p, f, codes.size());
  if (in.size() != need)
    throw std::invalid_argument(where("unpack", p, f) + std::to_string(codes.size()) + " codes need " +
                                std::to_string(need) + " bytes, the input has " + std::to_string(in.size()));
  const std::uint8_t* i = in.data();
  std::uint8_t* c = codes.data();
  const std::size_t n = codes.size();
  const PackingInfo& pi = packing_info(p);
  if (pi.data_bytes != pi.bytes_per_unit) {
    for (std::size_t g = 0; g < n / pi.codes_per_unit; ++g) {
      const std::uint8_t* gap = i + g * pi.bytes_per_unit + pi.data_bytes;
      for (std::size_t b = 0; b < pi.bytes_per_unit - pi.data_bytes; ++b) {
        if (gap[b] != 0)
          throw std::invalid_argument(
              where("unpack", p, f) + "padding byte at offset " +
              std::to_string(g * pi.bytes_per_unit + pi.data_bytes + b) + " is not zero (each 16-code " +
              "group is " + std::to_string(pi.data_bytes) + " data bytes then " +
              std::to_string(pi.bytes_per_unit - pi.data_bytes) + " zero bytes)");
      }
    }
  }
  switch (p) {
    case Packing::byte_per_element:
      if (n) std::memcpy(c, i, n);
      check_codes("unpack", p, f, codes);
      return;
    case Packing::fp4_dense:
      unpack_fp4(i, n, c);
      return;
    case Packing::fp6_dense:
      for (std::size_t g = 0; g < n / 4; ++g) unpack_fp6x4(i + 3 * g, c + 4 * g);
      return;
    case Packing::fp4_padded16:
      for (std::size_t g = 0; g < n / 16; ++g) unpack_fp4(i + 16 * g, 16, c + 16 * g);
      return;
    case Packing::fp6_padded16:
      for (std::size_t g = 0; g < n / 16; ++g)
        for (int q = 0; q < 4; ++q) unpack_fp6x4(i + 16 * g + 3 * q, c + 16 * g + 4 * q);
      return;
  }
}

std::string to_string(Packing p) { return packing_info(p).name; }

std::optional<Packing> parse_packing(std::string_view name) {
  for (const PackingInfo& pi : kPackingTable)
    if (name == pi.name) return pi.p;
  return std::nullopt;
}

Packing dense_packing(Format f) {
  require_known(f, "dense_packing");
  if (is_fp4(f)) return Packing::fp4_dense;
  if (is_fp6(f)) return Packing::fp6_dense;
  return Packing::byte_per_element;
}

}  // namespace blockscale
