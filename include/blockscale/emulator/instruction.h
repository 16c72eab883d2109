// SPDX-License-Identifier: Apache-2.0
// A concrete instruction: one table row plus its shape and operand types, named the way PTX names
// it, for example
//   sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e4m3 e2m1 ue8m0
//   sm_90a wgmma.mma_async m64n256k32 f32 e5m2 e4m3
//   sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3
// The canonical form is "<arch> <opcode.qualifiers> m<M>n<N>k<K> <D> <A> <B> [<scale>]". The parser
// also takes PTX's own spellings: the shape and types inside the dotted opcode
// ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", types in the order D A B C),
// ".scale_vec::1X/2X/4X" for ".block32/.block16", and the default vector sizes of gpu.md 1.3
// (mxf8f6f4 -> block32, mxf4 -> block32; mxf4nvf4 must name its size).
// Sparse forms (sm_90a; PTX ISA 9.7.14.6, 9.7.15.5.2) are named as PTX names them:
//   sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16
//   sm_90a wgmma.mma_async.sp m64n128k64 f32 e4m3 e4m3
// K is the logical K; A holds K/2 values per row (emulator/mma.h, dot_sparse / mma_sparse).
#pragma once

#include <string>
#include <string_view>

#include "blockscale/emulator/table.h"

namespace blockscale::emulator {

struct Instruction {
  const InstructionRow* row = nullptr;
  int m = 0, n = 0, k = 0;
  Type a = Type::f32, b = Type::f32;  // operand types
  Type d = Type::f32;                 // C and D type
  bool sparse = false;                // the row's sparse form: A is structured-sparse along K

  // The table row; a default-constructed Instruction has none, and every accessor below then throws
  // std::invalid_argument rather than dereference null.
  const InstructionRow& table_row() const;
  const FdpaParams& params() const { return table_row().params; }
  bool block_scaled() const { return table_row().block_scaled; }
  Type scale_type() const { return table_row().scale_type; }
  int block() const { return table_row().block; }
  Provenance provenance() const { return provenance_of(table_row(), a, b); }
  std::string name() const;  // canonical; parse_instruction(name()) gives this instruction back

  // Sparse forms: the K positions of a metadata group (4 for the 2:4 sparsity of 16- and 8-bit
  // operands, 2 for the 1:2 sparsity of tf32; PTX ISA 9.7.14.6.1), of which half hold stored values;
  // and the dense instruction (same row, M, N, types; K/2) that computes each output from the
  // stored values and the B rows they select. Both throw std::invalid_argument for a dense instruction.
  int sparse_group() const;
  Instruction dense_form() const;
};

// Parses a name (see above). Throws std::invalid_argument naming the rule broken: unknown
// architecture or qualifier, an opcode the architecture lacks, a kind without .block_scale, a
// shape outside the row's limits ("tcgen05 kind::mxf8f6f4 block_scale requires M=128, got 64"),
// a type combination no row accepts, or a feature numerics.md does not model (cta_group::2, .ws,
// sparse forms other than those of sm_90a mma.sync and wgmma).
Instruction parse_instruction(std::string_view name);

// Checks that an Instruction (whose fields are public) is still one its row allows: operand types,
// shape (the sparse shapes for a sparse form) and D type, with the messages of make_instruction.
// dot, mma, their sparse and f64 forms and KernelSchedule::validate call it first.
void validate(const Instruction& ins);

// Builds an instruction from a row, validating shape and types with the same messages.
Instruction make_instruction(const InstructionRow& row, int m, int n, int k, Type a, Type b);
// The row's sparse form with logical K = k, validated against InstructionRow::sparse_shapes.
Instruction make_sparse_instruction(const InstructionRow& row, int m, int n, int k, Type a, Type b);
// A row's smallest shape with given operand types (defaults: the row's first A and B type).
Instruction smallest_instruction(const InstructionRow& row);
Instruction smallest_instruction(const InstructionRow& row, Type a, Type b);

}  // namespace blockscale::emulator
