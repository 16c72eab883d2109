// SPDX-License-Identifier: Apache-2.0
// Sub-byte packing: bit positions against a bit-by-bit oracle written from the definitions
// (fp4 low nibble first; fp6 LSB-first at bits [6i, 6i+6) of each 12-byte group; the padded forms
// leave zero gaps), exhaustive over every code in every position of a group, hand-built bytes,
// random round trips, and the errors.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/layout.h"
#include "expect_throw.h"

namespace blockscale {
namespace {

using blockscale::test::invalid_argument_message;

using Bytes = std::vector<std::uint8_t>;

struct Combo {
  Packing p;
  Format f;
};

// Every valid (packing, format) pair.
std::vector<Combo> combos() {
  std::vector<Combo> v;
  for (const FormatInfo& fi : kFormatTable)
    if (fi.storage_bits == 8) v.push_back({Packing::byte_per_element, fi.id});
  for (Packing p : {Packing::fp4_dense, Packing::fp4_padded16}) v.push_back({p, Format::float4_e2m1fn});
  for (Packing p : {Packing::fp6_dense, Packing::fp6_padded16})
    for (Format f : {Format::float6_e2m3fn, Format::float6_e3m2fn}) v.push_back({p, f});
  return v;
}

// The definition, one bit at a time: code n sits in group n / 16 (which starts at byte
// group * stride) at bits [w*i, w*i + w) of that group read as a little-endian bit string, i = n mod 16.
Bytes bit_oracle(Packing p, Format f, const Bytes& codes) {
  int w = 8;
  std::size_t stride = 16;  // bytes per 16-code group
  switch (p) {
    case Packing::byte_per_element: w = 8, stride = 16; break;
    case Packing::fp4_dense: w = 4, stride = 8; break;
    case Packing::fp6_dense: w = 6, stride = 12; break;
    case Packing::fp4_padded16: w = 4, stride = 16; break;
    case Packing::fp6_padded16: w = 6, stride = 16; break;
  }
  Bytes out(packed_bytes(p, f, codes.size()), 0);
  for (std::size_t n = 0; n < codes.size(); ++n)
    for (int k = 0; k < w; ++k)
      if ((codes[n] >> k) & 1) {
        const std::size_t bit = static_cast<std::size_t>(w) * (n % 16) + static_cast<std::size_t>(k);
        out[(n / 16) * stride + bit / 8] |= static_cast<std::uint8_t>(1u << (bit % 8));
      }
  return out;
}

Bytes packed(Packing p, Format f, const Bytes& codes) {
  Bytes out(packed_bytes(p, f, codes.size()), 0xA5);  // poison: every byte must be written
  pack(p, f, codes, out);
  return out;
}

TEST(Packing, PackedBytes) {
  EXPECT_EQ(packed_bytes(Packing::byte_per_element, Format::float8_e4m3fn, 7), 7u);
  EXPECT_EQ(packed_bytes(Packing::byte_per_element, Format::float4_e2m1fn, 3), 3u);
  EXPECT_EQ(packed_bytes(Packing::fp4_dense, Format::float4_e2m1fn, 32), 16u);
  EXPECT_EQ(packed_bytes(Packing::fp4_dense, Format::float4_e2m1fn, 2), 1u);
  EXPECT_EQ(packed_bytes(Packing::fp6_dense, Format::float6_e2m3fn, 32), 24u);
  EXPECT_EQ(packed_bytes(Packing::fp6_dense, Format::float6_e3m2fn, 4), 3u);
  EXPECT_EQ(packed_bytes(Packing::fp4_padded16, Format::float4_e2m1fn, 128), 128u);
  EXPECT_EQ(packed_bytes(Packing::fp6_padded16, Format::float6_e3m2fn, 32), 32u);
  EXPECT_EQ(packed_bytes(Packing::fp4_dense, Format::float4_e2m1fn, 0), 0u);
}

// Every code value in every position of a 16-code group (two groups, so the group stride is
// checked too), against the bit oracle, on a zero background and on an all-ones background (which
// catches a code spilling into its neighbours' bits), then unpacked back.
TEST(Packing, EveryCodeInEveryPositionMatchesTheBitDefinition) {
  std::size_t cases = 0;
  for (const Combo& k : combos()) {
    SCOPED_TRACE(to_string(k.p) + " " + to_string(k.f));
    const auto mask = static_cast<std::uint8_t>(code_mask(k.f));
    for (std::uint8_t background : {std::uint8_t{0}, mask}) {
      for (std::size_t pos = 0; pos < 32; ++pos) {
        for (unsigned v = 0; v <= mask; ++v) {
          Bytes codes(32, background);
          codes[pos] = static_cast<std::uint8_t>(v);
          const Bytes got = packed(k.p, k.f, codes);
          ASSERT_EQ(got, bit_oracle(k.p, k.f, codes)) << "position " << pos << " code " << v;
          Bytes back(32, 0xA5);
          unpack(k.p, k.f, got, back);
          ASSERT_EQ(back, codes) << "position " << pos << " code " << v;
          ++cases;
        }
      }
    }
  }
  // 7 byte formats x 256 or fewer codes, fp4 2 x 16, fp6 4 x 64, all x 32 positions x 2.
  EXPECT_GT(cases, 30000u);
}

TEST(Packing, HandBuiltBytes) {
  // P1: element 2j in bits [3:0], 2j+1 in [7:4]. e2m1 1.0 = 0x2, -6.0 = 0xF.
  EXPECT_EQ(packed(Packing::fp4_dense, Format::float4_e2m1fn, {0x2, 0xF}), (Bytes{0xF2}));
  EXPECT_EQ(packed(Packing::fp4_dense, Format::float4_e2m1fn, {0x1, 0x2, 0xF, 0x0}), (Bytes{0x21, 0x0F}));
  // P2: 16 codes 0..15 -> 8 bytes 0x10 0x32 ... 0xFE, then 8 zero bytes.
  Bytes ramp(16);
  for (int i = 0; i < 16; ++i) ramp[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
  EXPECT_EQ(packed(Packing::fp4_padded16, Format::float4_e2m1fn, ramp),
            (Bytes{0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(packed(Packing::fp4_dense, Format::float4_e2m1fn, ramp),
            (Bytes{0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE}));
  // P3: codes 1, 2, 3, 4 are the 24-bit word 1 | 2<<6 | 3<<12 | 4<<18 = 0x103081, stored LSB first.
  EXPECT_EQ(packed(Packing::fp6_dense, Format::float6_e2m3fn, {1, 2, 3, 4}), (Bytes{0x81, 0x30, 0x10}));
  // A single code 0x3F at element 5 covers bits 30..35: byte 3 bits 6-7 and byte 4 bits 0-3.
  Bytes one(16, 0);
  one[5] = 0x3F;
  Bytes want(12, 0);
  want[3] = 0xC0;
  want[4] = 0x0F;
  EXPECT_EQ(packed(Packing::fp6_dense, Format::float6_e3m2fn, one), want);
  want.insert(want.end(), 4, 0);
  EXPECT_EQ(packed(Packing::fp6_padded16, Format::float6_e3m2fn, one), want);
  // All-ones fp6 fills 12 bytes; the padded form then has 4 zero bytes.
  const Bytes ones(16, 0x3F);
  Bytes full(12, 0xFF);
  EXPECT_EQ(packed(Packing::fp6_dense, Format::float6_e2m3fn, ones), full);
  full.insert(full.end(), 4, 0x00);
  EXPECT_EQ(packed(Packing::fp6_padded16, Format::float6_e2m3fn, ones), full);
}

TEST(Packing, RandomRoundTripsWithZeroGaps) {
  std::mt19937_64 rng(20240611);
  for (const Combo& k : combos()) {
    SCOPED_TRACE(to_string(k.p) + " " + to_string(k.f));
    const auto mask = static_cast<std::uint32_t>(code_mask(k.f));
    for (std::size_t n : {std::size_t{0}, std::size_t{16}, std::size_t{64}, std::size_t{4096}, std::size_t{4112}}) {
      Bytes codes(n);
      for (auto& c : codes) c = static_cast<std::uint8_t>(rng() & mask);
      const Bytes got = packed(k.p, k.f, codes);
      EXPECT_EQ(got, bit_oracle(k.p, k.f, codes));
      if (k.p == Packing::fp4_padded16 || k.p == Packing::fp6_padded16) {
        const std::size_t data = k.p == Packing::fp4_padded16 ? 8 : 12;
        for (std::size_t i = 0; i < got.size(); ++i) {
          if (i % 16 >= data) {
            ASSERT_EQ(got[i], 0) << "gap byte " << i;
          }
        }
      }
      Bytes back(n);
      unpack(k.p, k.f, got, back);
      EXPECT_EQ(back, codes);
    }
  }
}

TEST(Packing, InvalidCombinationsAndCountsAreRefused) {
  // fp4 packings with an 8-bit format, fp6 with fp4, 16-bit formats one per byte.
  EXPECT_NE(invalid_argument_message([] { (void)packed_bytes(Packing::fp4_dense, Format::float8_e4m3fn, 2); })
                .find("fp4 packings hold float4_e2m1fn codes only"),
            std::string::npos);
  EXPECT_THROW((void)packed_bytes(Packing::fp4_padded16, Format::float6_e2m3fn, 16), std::invalid_argument);
  EXPECT_THROW((void)packed_bytes(Packing::fp6_dense, Format::float4_e2m1fn, 4), std::invalid_argument);
  EXPECT_THROW((void)packed_bytes(Packing::fp6_padded16, Format::float8_e5m2, 16), std::invalid_argument);
  EXPECT_THROW((void)packed_bytes(Packing::byte_per_element, Format::float16, 1), std::invalid_argument);
  // Counts that are not whole units.
  EXPECT_NE(invalid_argument_message([] { (void)packed_bytes(Packing::fp4_dense, Format::float4_e2m1fn, 3); })
                .find("is not a multiple of 2"),
            std::string::npos);
  EXPECT_THROW((void)packed_bytes(Packing::fp6_dense, Format::float6_e2m3fn, 6), std::invalid_argument);
  EXPECT_THROW((void)packed_bytes(Packing::fp4_padded16, Format::float4_e2m1fn, 24), std::invalid_argument);
  EXPECT_THROW((void)packed_bytes(Packing::fp6_padded16, Format::float6_e3m2fn, 17), std::invalid_argument);
  // Output / input sizes that do not match.
  Bytes codes(16, 0), small(7), big(9);
  EXPECT_THROW(pack(Packing::fp4_dense, Format::float4_e2m1fn, codes, small), std::invalid_argument);
  EXPECT_THROW(pack(Packing::fp4_dense, Format::float4_e2m1fn, codes, big), std::invalid_argument);
  EXPECT_THROW(unpack(Packing::fp4_dense, Format::float4_e2m1fn, small, codes), std::invalid_argument);
  // Codes wider than the format.
  Bytes out(8);
  codes[3] = 0x10;
  EXPECT_NE(invalid_argument_message([&] { pack(Packing::fp4_dense, Format::float4_e2m1fn, codes, out); })
                .find("code 0x10 at index 3 has bits above the format's 4-bit width"),
            std::string::npos);
  codes[3] = 0x40;
  Bytes out6(12);
  EXPECT_THROW(pack(Packing::fp6_dense, Format::float6_e2m3fn, codes, out6), std::invalid_argument);
  Bytes wide_bytes(4, 0x40), unpacked(4);
  EXPECT_THROW(unpack(Packing::byte_per_element, Format::float6_e3m2fn, wide_bytes, unpacked), std::invalid_argument);
  // A padded form whose gap is not zero.
  Bytes padded_in(16, 0);
  padded_in[9] = 1;
  Bytes sixteen(16);
  EXPECT_NE(invalid_argument_message([&] { unpack(Packing::fp4_padded16, Format::float4_e2m1fn, padded_in, sixteen); })
                .find("padding byte at offset 9 is not zero"),
            std::string::npos);
  padded_in[9] = 0;
  padded_in[12] = 1;
  EXPECT_THROW(unpack(Packing::fp6_padded16, Format::float6_e2m3fn, padded_in, sixteen), std::invalid_argument);
}

TEST(Packing, NamesAndDensePacking) {
  for (int i = 0; i < kPackingCount; ++i) {
    const auto p = static_cast<Packing>(i);
    EXPECT_EQ(parse_packing(to_string(p)), p);
  }
  EXPECT_FALSE(parse_packing("fp4").has_value());
  EXPECT_EQ(dense_packing(Format::float4_e2m1fn), Packing::fp4_dense);
  EXPECT_EQ(dense_packing(Format::float6_e3m2fn), Packing::fp6_dense);
  EXPECT_EQ(dense_packing(Format::float8_e4m3fn), Packing::byte_per_element);
}

// A format or kind outside its enum is refused before the format table is read (from an audit,
// 2026-11-30: byte_per_element read the table at index 200; dense_packing and ScaleLayout::of took
// such values).
TEST(Packing, ValuesOutsideTheEnumsAreRefused) {
  using test::expect_throw_with;
  const Format unknown = static_cast<Format>(200);
  const Bytes codes(4, 0);
  expect_throw_with([&] { (void)packed_bytes(Packing::byte_per_element, unknown, 4); }, "an unknown format (200)");
  Bytes packed(4);
  expect_throw_with([&] { pack(Packing::byte_per_element, unknown, codes, packed); }, "an unknown format (200)");
  expect_throw_with([&] { (void)dense_packing(static_cast<Format>(11)); }, "an unknown format (11)");
  expect_throw_with([&] { (void)ScaleLayout::of(static_cast<ScaleLayoutKind>(200)); }, "unknown ScaleLayoutKind");
  EXPECT_EQ(to_string(static_cast<ScaleMajor>(2)), "ScaleMajor(2)");
}

}  // namespace
}  // namespace blockscale
