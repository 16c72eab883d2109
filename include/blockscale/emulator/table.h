// SPDX-License-Identifier: Apache-2.0
// The instruction table: every row of ../shared/docs/numerics.md section (a) as data. A row is one
// (architecture, instruction, kind, operand types, output type) family with its shape limits, the
// algorithm parameters of its fused dot-product-add, and where those parameters come from
// (confirmed on hardware, published models only, or inferred). instruction.h turns a PTX-style
// name into a row plus a concrete shape and types.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "blockscale/emulator/params.h"

namespace blockscale::emulator {

enum class Arch : std::uint8_t { sm_70, sm_75, sm_80, sm_89, sm_90a, sm_100a, sm_120a };
std::string_view to_string(Arch a);
std::string_view gpu_name(Arch a);  // "Volta", "Hopper", ...

enum class Opcode : std::uint8_t { mma_sync, wgmma, tcgen05_mma };
std::string_view to_string(Opcode o);  // "mma.sync", "wgmma", "tcgen05.mma"

// The PTX .kind qualifier (tcgen05.mma, and mma.sync on sm_120a); none for plain mma.sync / wgmma.
enum class Kind : std::uint8_t { none, f16, tf32, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4 };
std::string_view to_string(Kind k);  // "kind::mxf8f6f4"

// Allowed M x N x K: M == m, N in n_min..n_max in steps of n_step, K == k.
struct ShapeRule {
  int m, n_min, n_max, n_step, k;
  bool accepts(int M, int N, int K) const {
    return M == m && K == k && N >= n_min && N <= n_max && (N - n_min) % n_step == 0;
  }
};

enum class Provenance : std::uint8_t {
  hardware,         // reproduced bit-exactly on real GPU output (which GPU and how many: HardwareEvidence)
  published_model,  // from published bit-accurate models (MMA-Sim, K&M) only
  inferred,         // not validated anywhere: an extrapolation stated in numerics.md
};
std::string_view to_string(Provenance p);

// One hardware confirmation of a row for one operand-type pair.
struct HardwareEvidence {
  std::string_view gpu;  // "H200"
  Type a, b;
  std::uint64_t outputs;    // bit-exact outputs, all of them matching
  std::string_view source;  // where: "K&M vectors d_H100_fp16 (C = fp16(c))", "numerics.md H200 confirmation (a)"
};

struct InstructionRow {
  std::string_view id;          // stable key, e.g. "sm_100a.tcgen05.mxf8f6f4.block32.f32"
  Arch arch;
  Opcode opcode;
  Kind kind;
  std::string_view qualified;   // PTX opcode and qualifiers of the canonical name
  std::span<const ShapeRule> shapes;
  TypeSet a_types, b_types;
  Type d_type;                  // C and D share it
  bool block_scaled;
  Type scale_type;              // block-scaled rows only
  int block;                    // elements per scale along K (block-scaled rows only)
  FdpaParams params;
  Provenance provenance;        // of the row's confirmed or published operand types
  TypeSet inferred_operands;    // operand types whose use makes an instruction "inferred"
  std::span<const HardwareEvidence> hardware;
  std::string_view evidence;    // one line: sources, as numerics.md (a) gives them
  std::string_view family;      // how error messages name the row family: "tcgen05 kind::mxf8f6f4 block_scale"
  // The sparse form (mma.sp::ordered_metadata, wgmma.mma_async.sp; PTX ISA 9.7.14.6, 9.7.15.5.2):
  // its shapes, K being the logical K (twice the stored values per A row), and where its rule comes
  // from. Empty when the row has no modelled sparse form. The rule (docs/emulator.md, "Sparse
  // MMA"): each output is this row's dense instruction of K/2 applied to A's K/2 stored values and
  // the K/2 rows of B that the metadata selects; the pruned positions take no part.
  std::span<const ShapeRule> sparse_shapes = {};
  std::string_view sparse_evidence = {};
};

// Every row, in the order of numerics.md section (a) grouped by architecture.
std::span<const InstructionRow> instruction_table();
// Lookup by InstructionRow::id; nullptr when absent.
const InstructionRow* find_row(std::string_view id);

// Provenance of one operand-type pair of a row: hardware when a HardwareEvidence entry names the
// pair, inferred when either type is in inferred_operands, the row's provenance otherwise.
Provenance provenance_of(const InstructionRow& row, Type a, Type b);

// "m128n8..256/8k32" style text for a row's shapes (or for its sparse shapes).
std::string shapes_string(const InstructionRow& row);
std::string shapes_string(std::span<const ShapeRule> shapes);

}  // namespace blockscale::emulator
