// SPDX-License-Identifier: Apache-2.0
// Operand panels of the fast GEMM paths (issue 6; private to blockscale::emulator).
//
// The fast paths compute exactly what the reference engine (engine.h) computes, organised for
// SIMD across output columns: B is cut into strips of W columns stored k-major ([strip][k][W]),
// so one vector load gives one k of W outputs, and A rows are read element by element and
// broadcast. Every element is decoded once into the forms the kernels consume, plus per-step
// bounds that let a kernel prove that a step truncates nothing (docs/emulator.md, "Fast paths").
//
// T-FDPA / ST-FDPA (numerics.md b.3, b.4), operands of at most 8 bits (fp8/fp6/fp4), and T-FDPA
// with 16- and 19-bit operands (f16, bf16, tf32: "wide" operands, whose panels hold val and the
// exponent bounds exp, lo / hi only; see decode_tfdpa):
//   val   the element's value as a float (exact: at most 4 significant bits, 11 for the wide
//         operands, all of them in float's range);
//   dval  the same as a double (the no-truncation tier sums products exactly in double; not
//         decoded with the fp16 panels, h below, nor with e8 bounds, whose kernels have no such
//         tier, nor for wide operands, whose kernels convert val as they read it, nor for the
//         AVX-512 kernel set, whose driver widens val one K chunk at a time: fast_kernels.h,
//         Fp64Chunk);
//   exp   e(x) of b.1 as int16 (kNoExp for a zero or special element; for A packed twice into an
//         int32, so that a 32-bit broadcast fills every 16-bit lane);
//   eb    for the AVX-512 bounds pass: e(x) + kEbBias and -lsb(x) + kEbBias (lsb: the exponent of
//         the lowest set bit of x) as a pair of unsigned bytes, both 0 for a zero or special element
//         (A: the pair twice in an int32, broadcast; B: one int16 per lane). e(x) and lsb(x) lie in
//         -16..16 for every format of at most 8 bits, so a nonzero element's bytes lie in 80..112,
//         the byte sums of an A and a B pair in 0..224 (no carry leaves a byte: a 32-bit add of
//         the words is the bytewise add), and a sum of two nonzero elements' bytes (160..224)
//         exceeds any sum with a zero (at most 112). A 32-bit add with the A word broadcast from
//         memory and an unsigned byte max over k give, per lane, max e(a) + e(b) and
//         -min (lsb(a) + lsb(b)) (minus 2 kEbBias) for 32 lanes in two vector ops; a maximum
//         below 160 means "no nonzero product";
//   e8    instead of eb for the AVX2 bounds pass, which gives e_max only (that kernel set takes the
//         float form for every tile, which needs no lowest product bit): e(x) + kEbBias as one
//         unsigned byte, 0 for a zero or special element (A: [row][k] the byte four times in an
//         int32, broadcast; B: [strip][k][W] one byte per lane, 32 lanes in one AVX2 vector). A
//         bytewise add and an unsigned byte max over k give, per lane, max e(a) + e(b) (plus
//         2 kEbBias) for 32 lanes in two vector ops; the byte sums stay below 256 as eb's do;
//   ee    instead of eb when the fp16 panels (h) are decoded: there the kernels use the bounds for
//         e_max only (every tile takes the float form, which needs no lowest product bit), so a
//         byte per row suffices and one 32-bit add serves two rows: A: [row / 2][k] an int32 with
//         e(x) + kEbBias of row 2p in bytes 0 and 2 and of row 2p + 1 in bytes 1 and 3; B: [strip]
//         [k][W] e(x) + kEbBias in both bytes of an int16 (0 for a zero or special element);
//   lo/hi the smallest / largest e(x) of the nonzero elements of each step (kNoExpHigh / kNoExp
//         when there are none);
//   sexp  the ue8m0 scale exponent of the step (ST-FDPA; 0 otherwise);
//   flags NaN / Inf among the step's elements or a NaN scale (A: per row and step; B: lane masks
//         per strip and step);
//   h     (only for the AVX-512 FP16 float form, F <= 13) the element scaled by a power of two as
//         fp16 bits: A: a 2^(F - ea) with ea the largest e(x) of the row's step (|a'| < 2^(F + 1));
//         B: b 2^-eb with eb the largest e(x) of the lane's step (|b'| < 2), stored in pairs of k
//         per lane ([strip][k / 2][W][2]) so that an int16 dot product sums two k of one output;
//         0 for a zero or special element. hmax: ea and eb (kNoExp without a nonzero element,
//         kNoExpHigh where some scaled element is not exact in fp16: that rules the step out).
// GST-FDPA (b.5), e2m1 x e2m1, one step = L products = L/16 groups of 16:
//   A: the 16 values 2a (exact integers -12..12) of each group as signed bytes, four to a 32-bit
//      word; B: 2b + 12 as unsigned bytes (the operand pair of an int8 dot product, VNNI
//      vpdpbusd); a_init = -12 * sum(2a) removes the offset, so init + sum (2a)(2b + 12) = 4 p_g
//      exactly. nz: 16-bit masks of the nonzero elements (a group whose products are all zero takes
//      e_zero, b.5 step 5). Scales: exponent (ehi: kNoExp for a zero scale, elo: kNoExpHigh) and
//      value (A: the value / 4, so that 4 p_g * a_sv * b_sv is the group's exact value); per step,
//      the largest ehi and the smallest elo of its groups (step_hi, step_lo: a row's, a lane's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "blockscale/emulator/gemm.h"

namespace blockscale::emulator::fast {

inline constexpr int kRows = 4;         // A rows per tile: one pass over a B strip serves them all
inline constexpr int kTfdpaWidth = 32;  // B strip width (output columns), T-/ST-FDPA
inline constexpr int kGstWidth = 16;    // B strip width, GST-FDPA
inline constexpr std::int16_t kNoExp = -16000;     // e(x) of a zero / special element (below all)
inline constexpr std::int16_t kNoExpHigh = 16000;  // the "lowest exponent" of a step without any
inline constexpr int kGroup = 16;                   // GST group width (b.5)
inline constexpr int kEbBias = 96;                  // the bias of the eb byte pairs (below)

enum StepFlags : std::uint8_t { kHasNaN = 1, kHasInf = 2 };

// 64-byte aligned storage, so that vector loads of a strip row never straddle cache lines. Elements
// are default-initialised (left unset): the decoders write every one, and zero-filling panels of
// tens of MB first would cost a pass over memory.
template <class T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const AlignedAllocator<U>&) const noexcept {
    return true;
  }
};
template <class T>
using Buffer = std::vector<T, AlignedAllocator<T>>;

struct TfdpaPanels {
  int L = 0;               // products per step
  std::size_t k = 0;       // padded K = steps * L
  std::size_t steps = 0;
  std::size_t rows = 0;    // M padded to a multiple of kRows
  std::size_t strips = 0;  // ceil(N / kTfdpaWidth)
  int frac_a = 0, frac_b = 0;  // fraction bits of the operands' significands
  bool scaled = false;         // ST-FDPA
  // An operand with 8 exponent bits (bf16, tf32): products span 2^-272 .. 2^256, beyond float's
  // range, so the truncating tier forms its terms in double (fast_kernels_portable.cpp).
  bool double_terms = false;
  bool any_inf = false;        // some element is an Inf (its steps take the scalar fallback)
  // A: [row][k]
  Buffer<float> a_val;
  Buffer<double> a_dval;
  Buffer<std::int32_t> a_exp2;
  Buffer<std::int32_t> a_eb;
  Buffer<std::int32_t> a_ee;  // [row / 2][k]
  Buffer<std::int32_t> a_e8;
  // A: [row][step]
  Buffer<std::int16_t> a_lo, a_hi;
  Buffer<std::int32_t> a_sexp;
  Buffer<std::uint8_t> a_flags;
  // B: [strip][k][W]
  Buffer<float> b_val;
  Buffer<double> b_dval;
  Buffer<std::int16_t> b_exp;
  Buffer<std::int16_t> b_eb;
  Buffer<std::int16_t> b_ee;
  Buffer<std::uint8_t> b_e8;
  // B: [strip][step][W]
  Buffer<std::int16_t> b_lo, b_hi;
  Buffer<std::int32_t> b_sexp;
  // B: [strip][step], bit j = lane j
  Buffer<std::uint32_t> b_nan, b_inf;
  // FP16 float form (fp16_F != 0: decoded for that F): A [row][k] and [row][step], B
  // [strip][k / 2][W][2] and [strip][step][W]
  int fp16_F = 0;
  Buffer<std::uint16_t> a_h, b_h;
  Buffer<std::int32_t> a_hmax, b_hmax;
};

struct GstPanels {
  int L = 0;               // products per step (a multiple of 16)
  std::size_t k = 0;       // padded K
  std::size_t steps = 0;
  std::size_t groups = 0;  // k / 16
  std::size_t rows = 0;    // M padded to kRows
  std::size_t strips = 0;  // ceil(N / kGstWidth)
  // A: [row][group][4] and [row][group]
  Buffer<std::uint32_t> a_q;
  Buffer<std::int32_t> a_init;
  Buffer<std::uint32_t> a_nz;
  Buffer<std::int32_t> a_ehi, a_elo;
  Buffer<double> a_sv;
  Buffer<std::uint8_t> a_flags;  // [row][step]: a NaN scale
  Buffer<std::int32_t> a_step_hi, a_step_lo;  // [row][step]
  // B: [strip][group][4][W] and [strip][group][W]
  Buffer<std::uint32_t> b_q;
  Buffer<std::uint32_t> b_nz;
  Buffer<std::int32_t> b_ehi, b_elo;
  Buffer<double> b_sv;
  Buffer<std::uint32_t> b_nan;  // [strip][step] lane masks
  Buffer<std::int32_t> b_step_hi, b_step_lo;  // [strip][step][W]
};

// The bytes of storage that a set of panels holds (capacity, not size).
std::size_t storage_bytes(const TfdpaPanels& p);
std::size_t storage_bytes(const GstPanels& p);
// The bytes of the panels decoded for the present problem (size).
std::size_t panel_bytes(const TfdpaPanels& p);
std::size_t panel_bytes(const GstPanels& p);

// Which exponent panels a T-/ST-FDPA kernel reads: exp (A: exp2) with lo / hi (the portable
// kernels), the byte pairs eb (the AVX-512 bounds pass; its e bytes ee instead when the fp16
// panels are decoded), or the e bytes e8 (the AVX2 bounds pass; no fp64 values either: that
// kernel has no exact tier). Only those are decoded: the others are left empty.
enum class TfdpaBounds { exponents, byte_pairs, exponent_bytes };

// The per-element work of decode_tfdpa with byte-pair bounds, in a form that a kernel set may
// replace with vector code (fast_kernels_avx512.cpp; the panel test compares it with the scalar
// decoder). Its tables are indexed by the element's code:
//   val   the value (fast_panels.h val; 0 for a zero or special element);
//   eb    a_eb's word (the byte pair twice), 0 for a zero, kEbWordNaN / kEbWordInf for the specials
//         (no byte pair has a byte below 80, so neither is the word of a nonzero element); its low
//         byte is the e8 byte of a nonzero element;
//   half  nullptr without fp16 panels, else the fp16 bits of every code for each largest step
//         exponent ea = -16..16: row ea + 16 (row 0 also for a step without a nonzero element),
//         256 entries each, then one zero entry (a vector gather of 32-bit words at 16-bit entries
//         reads 2 bytes past the last).
//         A scaled value that is not exact in fp16 is kInexactHalf.
inline constexpr std::uint32_t kEbWordNaN = 1, kEbWordInf = 2;
inline constexpr std::uint16_t kInexactHalf = 0x7FFF;  // a NaN: never the bits of a scaled element
inline constexpr int kHalfRowLowest = -16, kHalfRows = 33;
// Where the half row of a step whose largest e(x) is ea starts (row 0 for kNoExp).
inline std::size_t half_row_start(std::int16_t ea) {
  return static_cast<std::size_t>(ea == kNoExp ? 0 : ea - kHalfRowLowest) * 256;
}
//   planes the same tables as four byte planes of 256 entries each, for byte-shuffle lookups
//         (64 codes per instruction, AVX-512 VBMI): the fp16 bits of val (low byte, then high byte:
//         every value of an operand of at most 8 bits is an fp16 exactly, 0 for a special
//         element), then eb's low byte (e(x) + kEbBias, 1 NaN, 2 Inf) and second byte
//         (-lsb(x) + kEbBias).
inline constexpr std::size_t kPlaneHalfLo = 0, kPlaneHalfHi = 256, kPlaneE = 512, kPlaneLsb = 768;
struct DecodeTables {
  const float* val;
  const std::uint32_t* eb;
  const std::uint16_t* half;
  const std::uint8_t* planes;
};
// A: row `row` of P from its K codes (padded with zeros): a_val, a_dval (when P.a_dval is sized),
// a_eb (the bounds `bounds` of TfdpaDecoder: byte_pairs) or a_e8 (exponent_bytes), or with half
// a_ee (the row's bytes only: the rows of a pair may be decoded on different threads) with a_h and
// a_hmax, and the element part of the NaN / Inf flags of each of the row's steps in a_flags. B:
// strip `strip` from its codes [k][W]: b_val, b_dval, b_eb or b_e8, or with half b_ee with b_h and
// b_hmax, b_nan and b_inf. Both return whether some element is an Inf.
using DecodeARowFn = bool (*)(const DecodeTables& t, const std::uint8_t* codes, std::size_t row, TfdpaPanels& P);
using DecodeBStripFn = bool (*)(const DecodeTables& t, const std::uint8_t* codes, std::size_t strip, TfdpaPanels& P);
// The same for wide operands (exponent bounds) of format f from their storage words; a row only for
// steps of L dividing 16.
using DecodeWideRowFn = bool (*)(Format f, const std::uint32_t* words, std::size_t row, TfdpaPanels& P);
using DecodeWideStripFn = bool (*)(Format f, const std::uint32_t* words, std::size_t strip, TfdpaPanels& P);
struct TfdpaDecoder {
  DecodeARowFn a_row = nullptr;  // nullptr: the scalar decoder of fast_panels.cpp
  DecodeBStripFn b_strip = nullptr;
  DecodeWideRowFn wide_row = nullptr;
  DecodeWideStripFn wide_strip = nullptr;
  // What the functions cover; decode_tfdpa takes the scalar decoder for the rest: narrow operands
  // only with the bounds `bounds` (the kind that a_row and b_strip write), the fp16 panels only
  // where fp16_panels is set, A rows (a_row, wide_row) only for step lengths L that are multiples
  // of a_row_lanes (a decoder without masked loads and stores works in whole vectors), and
  // wide_row only for L dividing 16.
  TfdpaBounds bounds = TfdpaBounds::byte_pairs;
  bool fp16_panels = false;
  std::size_t a_row_lanes = 1;
  // Whether the kernel set reads the fp64 panels (dval). Off: its T-FDPA kernel reads fp64 values
  // from the K chunk that fast_gemm widens from val (TfdpaTile::fp64), and decode_tfdpa does not
  // write them.
  bool fp64_panels = true;
};

// Whether panels of format f take the narrow decoding (signed formats of at most 8 bits: byte
// codes, every bounds kind, the fp16 panels) rather than the wide one (f16, bf16, tf32: exponent
// bounds only, no fp16 panels, no scales).
bool narrow_operand(Format f);

// Decodes A (M x K) and B (K x N) of `ops` for steps of L products, K padded to `padded` with
// zeros; scales (ST-FDPA: ue8m0, one per step) from ops.scale_a / scale_b when `scaled`; the fp16
// panels for F = fp16_F when it is not 0 (L even; byte-pair bounds only). Rows of A and strips of B are decoded on up to
// `threads` OpenMP threads (each writes only its own part). With byte-pair bounds, and for wide
// operands, the element work runs in `decoder` where it has functions (the same panels, bit for
// bit). Wide operands (an operand that is not narrow_operand) need exponent bounds, no fp16 panels
// and no scales, and the fp16 panels byte-pair bounds: else std::logic_error.
void decode_tfdpa(const GemmOperands& ops, int L, std::size_t padded, bool scaled, TfdpaBounds bounds, int fp16_F,
                  int threads, TfdpaPanels& out, const TfdpaDecoder& decoder = {});

// The same for GST-FDPA: scales per `block` elements (16 or 32), ue8m0 or ue4m3.
void decode_gst(const GemmOperands& ops, int L, std::size_t padded, int block, int threads, GstPanels& out);

}  // namespace blockscale::emulator::fast
