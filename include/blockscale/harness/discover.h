// SPDX-License-Identifier: Apache-2.0
// Discovery mode: infer an instruction's arithmetic from targeted probes run on the device
// (../shared/docs/numerics.md d.1: the MMA-Sim closed-loop probing and the Khattak & Mikaitis test vectors;
// d.3: our probe list), and set it next to the emulator table's row.
//
// What is inferred, and how (every probe is a dot product in row i / column i of a tile):
//   structure and F  a cancelling pair +-2^14 in slots 0 and 1 fixes e_max = 14; a product 2^t in
//                    slot k survives down to t = 14 - F when slot k is fused with slots 0 and 1,
//                    and all the way down when it is not (another chunk, another HMMA): the fused
//                    set gives L (and interleavings such as k mod 4 in {0, 1}), its cut-off F;
//   C                the same sweep with C = 2^t: truncated at the products' F (C fused, aligned
//                    with them) or never (added after); then C = 128 plus 0.75 ulp in one product
//                    tells a round-to-nearest add from a truncating one (d.3-1);
//   normalisation    (1.5)(1.5) - (1.5)(1.5) + 2^-F: the last term survives only if the alignment
//                    exponent is e_a + e_b (significand 2.25 not renormalised, b.2);
//   output           four unit products plus 2^-j: the largest j kept is the output's fraction
//                    width (23 fp32, 13 e8m13, 10 fp16); +-0.25/0.5/0.75/1.5 ulp give the
//                    rounding (RZ, RD, RU, RA, RNE, RNA, RNZ);
//   e_zero           one product 2^(E - F) alone with C = 0 survives iff e_zero <= E; for fp16
//                    outputs a tie at 2^-25 extends the range (d.3-7); below what the output or
//                    the operand formats can express only a bound is reported;
//   special values   NaN operands and their payload, Inf * 0, Inf - Inf, Inf, overflow, -0 sums,
//                    the sign of a negative underflow (e.3), compared with the table's model.
// Block-scaled kinds (b.4, b.5), whose operands span too few binades for the slot sweeps, are read
// through C and the scales instead: F from C = 2^t against +-1 * 1 at unit scales (e_max = 0 under
// ST- and GST-FDPA alike); scales of 2^S on that pair must move the cut by S; a pair of +-2^X moves
// it by X where the alignment exponent includes the products' (ST-FDPA) and not at all where it is
// the group's scales alone (GST-FDPA); blocks fused with block 0 from 1 * 1 under per-block scales
// of 2^-F and 2^-(F+1) (ue8m0); the output from C = 2^20 plus one scaled product.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blockscale/harness/device.h"

namespace blockscale::harness {

enum class Verdict : std::uint8_t {
  agrees,        // discovered exactly what the table states
  disagrees,     // discovered something else: the table row (or the probe) is wrong
  consistent,    // only a bound or a partial answer was observable, and the table fits it
  undetermined,  // the formats cannot express the probe
};
std::string to_string(Verdict v);

struct DiscoveryItem {
  std::string parameter;   // "fraction bits F"
  std::string discovered;  // "13"
  std::string table;       // what the table row says (or the --model-override candidate)
  Verdict verdict = Verdict::undetermined;
  std::string evidence;    // the deciding observation, briefly
};

struct Discovery {
  std::string instruction;  // canonical name
  std::string row;          // the table row id
  std::string model_override;  // the candidate parameters compared with, when not the table's
  std::vector<DiscoveryItem> items;
  std::uint64_t probes = 0;  // dot products run on the device
  bool disagrees() const;
};

// Runs the probes of `t` on `device`. Throws what the device throws (e.g. Unavailable).
Discovery discover(Device& device, const InstructionTarget& t);

}  // namespace blockscale::harness
