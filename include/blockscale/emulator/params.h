// SPDX-License-Identifier: Apache-2.0
// The vocabulary of the tensor-core models: PTX operand types, the fused dot-product-add algorithms
// of ../shared/docs/numerics.md section (b), and the parameter set that one row of the instruction table
// hands to the arithmetic engine. One engine reads these parameters; architectures differ only in
// the values (numerics.md section (a)).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "blockscale/formats/format.h"

namespace blockscale::emulator {

// Operand, accumulator and scale types as PTX spells them. Every type except f64 is a
// blockscale::Format (format_of); f64 only occurs in the DMMA rows (fma_chain).
enum class Type : std::uint8_t { e4m3, e5m2, e2m3, e3m2, e2m1, ue8m0, ue4m3, f16, bf16, tf32, f32, f64 };
inline constexpr int kTypeCount = 12;

std::string_view to_string(Type t);
std::optional<Type> parse_type(std::string_view name);  // PTX spelling: "e4m3", "ue8m0", "f16", ...
std::optional<Format> format_of(Type t);                  // nullopt for f64; throws for a value outside the enum
Type type_of(Format f);

// A set of types (bit i = Type i), for the operand types a table row accepts.
class TypeSet {
 public:
  constexpr TypeSet() = default;
  constexpr TypeSet(std::initializer_list<Type> types) {
    for (Type t : types) bits_ |= bit(t);
  }
  constexpr bool contains(Type t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  std::string to_string() const;  // "e4m3|e5m2"

 private:
  // A value outside the enum (a cast integer) is in no set.
  static constexpr std::uint16_t bit(Type t) {
    return static_cast<int>(t) < kTypeCount ? static_cast<std::uint16_t>(1u << static_cast<int>(t)) : 0;
  }
  std::uint16_t bits_ = 0;
};

enum class Algorithm : std::uint8_t {
  t_fdpa,       // numerics.md b.3: truncated fused dot-product-add
  st_fdpa,      // b.4: T-FDPA with ue8m0 block-scale exponents added to each product's exponent
  gst_fdpa,     // b.5: exact group-of-G sums, scaled, then a T-FDPA over the group terms
  fp8_via_f16,  // b.9: fp8 -> f16, two chained F=25 T-FDPAs of L products each over k mod 4 in {0,1}
                // then {2,3} (one 2L-element instruction), RNE add of C
  fma_chain,    // f64 DMMA: IEEE fma (round to nearest even) in k order
};

// The final conversion rho of numerics.md b.6 (and the accumulator format it implies).
enum class OutputRounding : std::uint8_t {
  rz_fp32,   // truncate to fp32; >= 2^128 gives Inf; accumulator fp32
  rz_e8m13,  // truncate to 13 fraction bits (fp32 bits with the low 10 zero); accumulator fp32
  rne_fp16,  // round to nearest even fp16 directly from the exact sum; accumulator fp16
  rne_fp64,  // fma_chain only
};

// The sign of a zero produced when a negative exact sum truncates or rounds to zero in the output
// format (numerics.md e.3 / table (c): open). MMA-Sim v2 produces -0, MMA-Sim HEAD +0. An exact zero
// sum is +0 in every case.
enum class UnderflowZero : std::uint8_t { negative, positive };

struct FdpaParams {
  Algorithm algorithm = Algorithm::t_fdpa;
  int L = 32;      // products per fused step; an instruction with K > L chains ceil(K/L) steps
  int F = 25;      // fraction bits kept below the alignment exponent e_max
  OutputRounding rounding = OutputRounding::rz_fp32;  // b.9: the rounding of the two inner HMMAs
  int e_zero = -133;  // alignment exponent of a zero term (b.3 step 2)
  int group = 16;     // GST-FDPA group width G
  UnderflowZero underflow_zero = UnderflowZero::negative;
  friend bool operator==(const FdpaParams&, const FdpaParams&) = default;
};

// The accumulator (C and D) format implied by a rounding: fp32 for rz_fp32 / rz_e8m13, fp16 for
// rne_fp16. rne_fp64 has none (f64 is not a Format): throws std::invalid_argument.
Format accumulator_format(OutputRounding r);

std::string_view to_string(Algorithm a);
std::string_view to_string(OutputRounding r);

// Checks that the parameters describe something the engine computes exactly in int64 and throws
// std::invalid_argument naming the rule otherwise (F in 1..40, L >= 1, group dividing L, ...).
void validate(const FdpaParams& p);

}  // namespace blockscale::emulator
