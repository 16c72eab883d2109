// SPDX-License-Identifier: Apache-2.0
// The emulator's models in the reference's hardware(model) registry (blockscale/reference/
// hardware.h), so that mma_scaled / mma / matmul(..., Numerics::hardware(name)) compute what the
// GPU computes. The reference sits below the emulator and cannot call it; a program that wants
// these names calls register_reference_models() once (registering again replaces, harmlessly).
//
// Scaled-MMA models (mma_scaled), the default block-scaled GEMM of emulator/gemm.h
// (block_scaled_schedule: one instruction per K step, f32 accumulator holding C):
//   "sm_100a"  tcgen05.mma kind::mxf8f6f4 / mxf4 / mxf4nvf4 block_scale
//   "sm_120a"  mma.sync kind::mxf8f6f4 / mxf4 / mxf4nvf4 block_scale
// MMA models (mma, matmul), the chain along K of the instruction that the architecture's named
// instruction family offers for the operand and accumulator types:
//   "sm_70", "sm_75", "sm_80", "sm_89", "sm_90a", "sm_100a", "sm_120a"   mma.sync
//   "sm_90a.wgmma"                                                        wgmma.mma_async
//   "sm_100a.tcgen05"                                                     tcgen05.mma (kind::tf32/f16/f8f6f4)
// f64 operands use the DMMA rows (an fma chain in k order); integer types are not modelled.
#pragma once

#include <string>
#include <vector>

#include "blockscale/emulator/gemm.h"

namespace blockscale::emulator {

void register_reference_models();

// The plain-MMA GEMM schedule for an architecture and instruction family with these types: the
// first table row that takes them, at its first M and widest N, chained along K. Throws
// std::invalid_argument naming what no row offers.
KernelSchedule mma_schedule(Arch arch, Opcode opcode, Type a, Type b, Type d);

}  // namespace blockscale::emulator
