// SPDX-License-Identifier: Apache-2.0
// The AVX-512 and AVX2 panel decoders (fast_kernels_avx512.cpp, fast_kernels_portable.cpp) against
// the scalar one (fast_panels.cpp), and the code readers' block copies and transposes against their
// element-by-element route: every buffer of the decoded panels equal, byte for byte, for every
// element format, step lengths that do and do not fill 8- and 16-lane vectors, with and without
// fp16 panels and scales, and codes that reach every route (zeros, NaN, Inf, steps without a
// nonzero element, values inexact in fp16). The decoders feed every fast-path kernel, so
// fast_path_test checks them end to end as well; this test names the buffer that differs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast_kernels.h"
#include "fast_panels.h"

namespace blockscale::emulator::fast {
namespace {

template <class T>
void expect_same(const Buffer<T>& scalar, const Buffer<T>& vector, const char* name, const std::string& ctx) {
  ASSERT_EQ(scalar.size(), vector.size()) << name << " " << ctx;
  for (std::size_t i = 0; i < scalar.size(); ++i) {
    ASSERT_EQ(std::memcmp(&scalar[i], &vector[i], sizeof(T)), 0) << name << "[" << i << "] " << ctx;
  }
}

void expect_same(const TfdpaPanels& s, const TfdpaPanels& v, const std::string& ctx) {
  ASSERT_EQ(s.any_inf, v.any_inf) << ctx;
#define BLOCKSCALE_SAME(field) expect_same(s.field, v.field, #field, ctx)
  BLOCKSCALE_SAME(a_val);
  BLOCKSCALE_SAME(a_dval);
  BLOCKSCALE_SAME(a_exp2);
  BLOCKSCALE_SAME(a_lo);
  BLOCKSCALE_SAME(a_hi);
  BLOCKSCALE_SAME(b_exp);
  BLOCKSCALE_SAME(b_lo);
  BLOCKSCALE_SAME(b_hi);
  BLOCKSCALE_SAME(a_eb);
  BLOCKSCALE_SAME(a_ee);
  BLOCKSCALE_SAME(a_e8);
  BLOCKSCALE_SAME(a_sexp);
  BLOCKSCALE_SAME(a_flags);
  BLOCKSCALE_SAME(a_h);
  BLOCKSCALE_SAME(a_hmax);
  BLOCKSCALE_SAME(b_val);
  BLOCKSCALE_SAME(b_dval);
  BLOCKSCALE_SAME(b_eb);
  BLOCKSCALE_SAME(b_ee);
  BLOCKSCALE_SAME(b_e8);
  BLOCKSCALE_SAME(b_sexp);
  BLOCKSCALE_SAME(b_nan);
  BLOCKSCALE_SAME(b_inf);
  BLOCKSCALE_SAME(b_h);
  BLOCKSCALE_SAME(b_hmax);
#undef BLOCKSCALE_SAME
}

// Codes of one matrix: per row (A) or column (B) a mode, so that whole steps come out zero, narrow
// (exact in fp16 after scaling), or anything at all.
std::vector<std::uint8_t> make_codes(std::size_t outer, std::size_t inner, std::mt19937& rng) {
  std::vector<std::uint8_t> codes(outer * inner);
  for (std::size_t o = 0; o < outer; ++o) {
    const unsigned mode = rng() % 4;
    for (std::size_t i = 0; i < inner; ++i) {
      const auto any = static_cast<std::uint8_t>(rng());
      std::uint8_t c = any;
      if (mode == 1) c = rng() % 8 == 0 ? any : static_cast<std::uint8_t>(any & 0x80);  // mostly +-0
      if (mode == 2) c = static_cast<std::uint8_t>((any & 0x87) | 0x38);                // one binade
      codes[o * inner + i] = c;
    }
  }
  return codes;
}

// A vector decoder against the scalar one over every pair of element formats, step lengths
// `Ls` and fp16 panels for `fp16_Fs` (0: none), with the bounds that the decoder writes; the number
// of cases compared.
int compare_with_scalar(const TfdpaDecoder& vector, std::initializer_list<int> Ls, std::initializer_list<int> fp16_Fs) {
  const Format formats[] = {Format::float8_e4m3fn, Format::float8_e5m2, Format::float6_e2m3fn, Format::float6_e3m2fn,
                            Format::float4_e2m1fn};
  std::mt19937 rng(2026);
  int cases = 0;
  for (const Format fa : formats) {
    for (const Format fb : formats) {
      for (const int L : Ls) {
        for (const int fp16_F : fp16_Fs) {
          if (fp16_F != 0 && L % 2 != 0) continue;
          const bool scaled = (cases % 2) == 0;
          const std::size_t M = 1 + rng() % 13, N = 1 + rng() % 100, K = 1 + rng() % 200;
          const std::size_t padded = (K + L - 1) / L * L, blocks = padded / L;
          const std::vector<std::uint8_t> a = make_codes(M, K, rng), b = make_codes(N, K, rng);
          std::vector<std::uint8_t> sa(M * blocks), sb(blocks * N);
          for (auto& c : sa) c = static_cast<std::uint8_t>(rng() % 64 == 0 ? 0xFF : 100 + rng() % 50);
          for (auto& c : sb) c = static_cast<std::uint8_t>(rng() % 64 == 0 ? 0xFF : 100 + rng() % 50);
          // The same operands in three storage forms, which take the code readers' three routes:
          // byte codes with A row-major and B K-major (B's strips by 16 x 16 transposes), 16-bit
          // words (element by element), A K-major and B row-major (B's rows copied whole).
          std::vector<std::uint16_t> a16(a.begin(), a.end()), b16(b.begin(), b.end());
          std::vector<std::uint8_t> a_kmajor(M * K), b_rowmajor(K * N);
          for (std::size_t i = 0; i < M; ++i) {
            for (std::size_t k = 0; k < K; ++k) a_kmajor[k * M + i] = a[i * K + k];
          }
          for (std::size_t n = 0; n < N; ++n) {
            for (std::size_t k = 0; k < K; ++k) b_rowmajor[k * N + n] = b[n * K + k];
          }
          GemmOperands bytes, words, transposed;
          bytes.a = CodeMatrix(fa, M, K, std::span<const std::uint8_t>(a));
          bytes.b = CodeMatrix(fb, K, N, std::span<const std::uint8_t>(b), Order::col_major);
          words.a = CodeMatrix(fa, M, K, std::span<const std::uint16_t>(a16));
          words.b = CodeMatrix(fb, K, N, std::span<const std::uint16_t>(b16), Order::col_major);
          transposed.a = CodeMatrix(fa, M, K, std::span<const std::uint8_t>(a_kmajor), Order::col_major);
          transposed.b = CodeMatrix(fb, K, N, std::span<const std::uint8_t>(b_rowmajor));
          if (scaled) {
            for (GemmOperands* ops : {&bytes, &words, &transposed}) {
              ops->scale_a = CodeMatrix(Format::float8_e8m0fnu, M, blocks, std::span<const std::uint8_t>(sa));
              ops->scale_b = CodeMatrix(Format::float8_e8m0fnu, blocks, N, std::span<const std::uint8_t>(sb));
            }
          }
          TfdpaPanels s, v, t;
          // The scalar decoder (a decoder without functions) for the panels that `vector` writes.
          TfdpaDecoder scalar;
          scalar.fp64_panels = vector.fp64_panels;
          decode_tfdpa(words, L, padded, scaled, vector.bounds, fp16_F, 1, s, scalar);
          decode_tfdpa(bytes, L, padded, scaled, vector.bounds, fp16_F, 2, v, vector);
          decode_tfdpa(transposed, L, padded, scaled, vector.bounds, fp16_F, 2, t, vector);
          const std::string ctx = std::string(info(fa).name) + " x " + info(fb).name + " L=" + std::to_string(L) +
                                  " fp16_F=" + std::to_string(fp16_F) + " M=" + std::to_string(M) +
                                  " N=" + std::to_string(N) + " K=" + std::to_string(K);
          expect_same(s, v, "scalar, 16-bit words / vector, bytes: " + ctx);
          if (::testing::Test::HasFatalFailure()) return cases;
          expect_same(s, t, "scalar, 16-bit words / vector, bytes, A K-major, B row-major: " + ctx);
          if (::testing::Test::HasFatalFailure()) return cases;
          ++cases;
        }
      }
    }
  }
  return cases;
}

TEST(EmulatorPanelDecode, VectorDecoderEqualsScalar) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512 F/BW/DQ/VL: the vector decoder cannot run here";
  const TfdpaDecoder& vector = avx512_kernels().decode;
  ASSERT_NE(vector.a_row, nullptr);
  ASSERT_EQ(vector.bounds, TfdpaBounds::byte_pairs);
  // Its T-FDPA kernel widens the fp32 values per K chunk (fast_kernels.h, Fp64Chunk).
  ASSERT_FALSE(vector.fp64_panels);
  EXPECT_EQ(compare_with_scalar(vector, {32, 16, 8, 24}, {0, 13, 1}), 5 * 5 * 4 * 3);
  // An odd step length: the byte-shuffle decoder's last k of a step alone, no fp16 panels.
  EXPECT_EQ(compare_with_scalar(vector, {7}, {0}), 5 * 5);
}

// On CPUs with AVX-512 VBMI the set above decodes by byte shuffles; the gather decoder of the CPUs
// without VBMI must give the same panels (here, and on such CPUs it is the one above).
TEST(EmulatorPanelDecode, GatherVectorDecoderEqualsScalar) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512 F/BW/DQ/VL: the vector decoder cannot run here";
  const TfdpaDecoder& gather = avx512_gather_decoder();
  ASSERT_NE(gather.a_row, nullptr);
  ASSERT_FALSE(gather.fp64_panels);
  EXPECT_EQ(compare_with_scalar(gather, {32, 16, 8, 24}, {0, 13, 1}), 5 * 5 * 4 * 3);
}

// The AVX2 decoder (fast_kernels_portable.cpp) writes the e8 bounds, no fp64 values and no fp16
// panels, and decodes A rows in whole 8-lane vectors: for A with step lengths 4 and 12
// decode_tfdpa takes the scalar decoder for that part, and the panels must come out the same all
// the same.
TEST(EmulatorPanelDecode, Avx2DecoderEqualsScalar) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2 + FMA + BMI2: the AVX2 decoder cannot run here";
  const TfdpaDecoder& vector = avx2_kernels().decode;
  ASSERT_NE(vector.a_row, nullptr);
  ASSERT_EQ(vector.a_row_lanes, 8u);
  ASSERT_EQ(vector.bounds, TfdpaBounds::exponent_bytes);
  EXPECT_EQ(compare_with_scalar(vector, {32, 16, 8, 24, 64, 4, 12}, {0}), 5 * 5 * 7);
}

// The fp16 panels carry their own e bytes (ee) beside the byte pairs: asked for with e8 or exponent
// bounds, decode_tfdpa refuses.
TEST(EmulatorPanelDecode, Fp16PanelsNeedBytePairBounds) {
  const std::vector<std::uint8_t> codes(8 * 32, 0x38);
  GemmOperands ops;
  ops.a = CodeMatrix(Format::float8_e4m3fn, 8, 32, std::span<const std::uint8_t>(codes));
  ops.b = CodeMatrix(Format::float8_e4m3fn, 32, 8, std::span<const std::uint8_t>(codes), Order::col_major);
  for (const TfdpaBounds bounds : {TfdpaBounds::exponent_bytes, TfdpaBounds::exponents}) {
    TfdpaPanels P;
    EXPECT_THROW(decode_tfdpa(ops, 32, 32, false, bounds, 13, 1, P), std::logic_error);
  }
  TfdpaPanels P;
  EXPECT_NO_THROW(decode_tfdpa(ops, 32, 32, false, TfdpaBounds::byte_pairs, 13, 1, P));
  EXPECT_FALSE(P.a_ee.empty());
}

// A vector decoder of wide operands (f16, bf16, tf32: storage words, exponent bounds) against the
// scalar one: every f16 and bf16 code (A 64 x 1024 and B 1024 x 64 each hold all 65,536, in two
// orders), tf32 words with all 2^16 high halves and random low bits, and random shapes whose rows
// and columns are mostly zeros, one binade, specials or anything, for steps of 16, 8 and 4 and 32;
// the number of cases compared.
int compare_wide_with_scalar(const TfdpaDecoder& vector) {
  std::mt19937 rng(2027);
  int cases = 0;
  for (const Format f : {Format::float16, Format::bfloat16, Format::tfloat32}) {
    const bool tf32 = f == Format::tfloat32;
    // A word of f from a 16-bit pattern: the pattern, or for tf32 its fp32 word with random low bits.
    const auto word = [&](std::uint32_t pattern) { return tf32 ? (pattern << 16) | (rng() & 0xFFFFu) : pattern; };
    const auto random_pattern = [&](unsigned mode) -> std::uint32_t {
      const std::uint32_t any = rng() & 0xFFFFu;
      switch (mode) {
        case 0: return rng() % 8 == 0 ? any : any & 0x8000u;                      // mostly +-0
        case 1: return (any & 0x83FFu) | (f == Format::float16 ? 0x3C00u : 0x3F80u);  // one binade
        case 2: return any | (f == Format::float16 ? 0x7C00u : 0x7F80u);           // Inf / NaN
        default: return any;
      }
    };
    for (const int L : {16, 8, 4, 32}) {
      for (int shape = 0; shape < 4; ++shape) {
        const bool all_codes = shape == 0;
        const std::size_t M = all_codes ? 64 : 1 + rng() % 13, N = all_codes ? 64 : 1 + rng() % 100;
        const std::size_t K = all_codes ? 1024 : 1 + rng() % 200;
        const std::size_t padded = (K + L - 1) / L * L;
        std::vector<std::uint32_t> a(M * K), b(K * N);  // A row-major, B K-major
        const unsigned row_mode = rng() % 4;
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = word(all_codes ? static_cast<std::uint32_t>(i) : random_pattern((row_mode + i / K) % 4));
        for (std::size_t i = 0; i < b.size(); ++i) {
          b[i] = word(all_codes ? static_cast<std::uint32_t>(i * 40503u) & 0xFFFFu : random_pattern((row_mode + i / K + 1) % 4));
        }
        const std::vector<std::uint16_t> a16(a.begin(), a.end()), b16(b.begin(), b.end());
        GemmOperands ops;
        ops.a = tf32 ? CodeMatrix(f, M, K, std::span<const std::uint32_t>(a)) : CodeMatrix(f, M, K, std::span<const std::uint16_t>(a16));
        ops.b = tf32 ? CodeMatrix(f, K, N, std::span<const std::uint32_t>(b), Order::col_major)
                     : CodeMatrix(f, K, N, std::span<const std::uint16_t>(b16), Order::col_major);
        TfdpaPanels s, v;
        decode_tfdpa(ops, L, padded, false, TfdpaBounds::exponents, 0, 1, s);
        decode_tfdpa(ops, L, padded, false, TfdpaBounds::exponents, 0, 2, v, vector);
        expect_same(s, v, std::string(info(f).name) + " L=" + std::to_string(L) + " M=" + std::to_string(M) +
                              " N=" + std::to_string(N) + " K=" + std::to_string(K));
        if (::testing::Test::HasFatalFailure()) return cases;
        ++cases;
      }
    }
  }
  return cases;
}

// The AVX-512 decoder: steps of 16, 8 and 4 take the row decoder's masked reductions, steps of 32
// the scalar rows (strips vectorised).
TEST(EmulatorPanelDecode, WideVectorDecoderEqualsScalar) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512 F/BW/DQ/VL: the vector decoder cannot run here";
  const TfdpaDecoder& vector = avx512_kernels().decode;
  ASSERT_NE(vector.wide_row, nullptr);
  ASSERT_NE(vector.wide_strip, nullptr);
  EXPECT_EQ(compare_wide_with_scalar(vector), 3 * 4 * 4);
}

// The AVX2 decoder: steps of 16 and 8 take its rows in whole 8-lane vectors, steps of 4 and 32 the
// scalar rows (strips vectorised).
TEST(EmulatorPanelDecode, WideAvx2DecoderEqualsScalar) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2 + FMA + BMI2: the AVX2 decoder cannot run here";
  const TfdpaDecoder& vector = avx2_kernels().decode;
  ASSERT_NE(vector.wide_row, nullptr);
  ASSERT_NE(vector.wide_strip, nullptr);
  EXPECT_EQ(compare_wide_with_scalar(vector), 3 * 4 * 4);
}

}  // namespace
}  // namespace blockscale::emulator::fast
