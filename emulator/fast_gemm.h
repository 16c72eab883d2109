// SPDX-License-Identifier: Apache-2.0
// Entry point of the fast GEMM paths (issue 6; private to blockscale::emulator).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "blockscale/emulator/gemm.h"

namespace blockscale::emulator::fast {
struct KernelSet;
}

namespace blockscale::emulator::detail {

// The path a GemmOptions::path request runs on (gemm.h GemmPath): automatic becomes
// BLOCKSCALE_EMULATOR_PATH when set (read once), else the widest path this CPU has; an explicit
// path this CPU lacks throws std::invalid_argument.
GemmPath resolve_path(GemmPath requested);
// GemmOptions::threads: the OpenMP default for 0 (1 without OpenMP).
int resolve_threads(int requested);
// The rules two quantized operands and a C share in every GEMM over them (gemm() and exact_gemm()):
// equal K and batch, C absent or M x N f32 codes. Throws std::invalid_argument, `who: ...`.
void check_tensor_pair(const std::string& who, const BlockScaledTensor& a, const BlockScaledTensor& b,
                       const CodeMatrix& c);
// A quantized operand's element codes, one per byte, [batch][rows][k_stored]: the tensor's own
// storage where it holds them so (checked when the tensor was made), else unpacked into `unpacked`.
// (Unpacking a copy of a 1024 x 1024 fp8 operand took 0.2 ms of serial time per call on an H200
// host, docs/performance.md.)
std::span<const std::uint8_t> element_codes_of(const BlockScaledTensor& t, std::vector<std::uint8_t>& unpacked);

// Whether the fast paths compute `schedule` (gemm.h, GemmPath, lists what they cover); fast_gemm
// returns false exactly for the schedules this refuses.
bool fast_gemm_covers(const KernelSchedule& schedule);

// Computes gemm(schedule, ops) on the fast path `path` (portable, avx2 or avx512, available on
// this CPU) into d (M x N) and returns true; returns false, touching nothing, when the schedule is
// outside the fast paths (gemm.h GemmPath). The operands have been validated by gemm().
bool fast_gemm(const KernelSchedule& schedule, const GemmOperands& ops, GemmPath path, int threads,
               GemmPathStats* stats, std::vector<std::uint32_t>& d);
// The same with the kernel set given (fast_kernels.h): the tests' way to run a kernel variant that
// the CPU's path does not choose (avx2_kernels(Avx2UnitSums)).
bool fast_gemm(const KernelSchedule& schedule, const GemmOperands& ops, const fast::KernelSet& kernels, int threads,
               GemmPathStats* stats, std::vector<std::uint32_t>& d);

}  // namespace blockscale::emulator::detail
