// SPDX-License-Identifier: Apache-2.0
#include "blockscale/emulator/reference_models.h"

#include <bit>
#include <cmath>
#include <stdexcept>

#include "blockscale/emulator/mma.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/reference/hardware.h"

namespace blockscale::emulator {

namespace {

using reference::DType;
using reference::Tensor;

// Reference codes are magnitude-aligned (tf32: the fp32 pattern >> 13); the emulator reads storage
// words (tf32: the fp32 pattern).
std::vector<std::uint32_t> words(const Tensor& t) {
  std::vector<std::uint32_t> w;
  w.reserve(static_cast<std::size_t>(t.size()));
  const bool has = reference::has_format(t.dtype());
  for (std::uint64_t code : t.codes()) {
    w.push_back(has ? to_storage(reference::format_of(t.dtype()), static_cast<std::uint32_t>(code))
                    : static_cast<std::uint32_t>(code));
  }
  return w;
}

Type type_of_dtype(DType t, const char* what) {
  if (t == DType::float64) return Type::f64;
  if (!reference::has_format(t)) {
    throw std::invalid_argument(std::string(what) + " of type " + reference::to_string(t) +
                                " has no tensor-core model (integer MMAs are not modelled)");
  }
  return type_of(reference::format_of(t));
}

Tensor run_scaled(Arch arch, const Tensor& x, const Tensor& xs, const Tensor& y, const Tensor& ys, const Tensor& acc) {
  if (acc.dtype() != DType::float32) throw std::invalid_argument("block-scaled MMA accumulates in f32");
  const auto fmt = [](const Tensor& t) { return reference::format_of(t.dtype()); };
  const auto M = static_cast<std::size_t>(x.extent(0)), K = static_cast<std::size_t>(x.extent(1));
  const auto N = static_cast<std::size_t>(y.extent(1)), Ks = static_cast<std::size_t>(xs.extent(1));
  // cuda.tile's NVFP4 scales are float8_e4m3fn; the instruction reads the byte as ue4m3, its sign
  // bit ignored (numerics.md b.5), and the ue4m3 code matrix keeps bit 7 as it is.
  const Format scale = fmt(xs) == Format::float8_e4m3fn ? Format::float8_ue4m3 : fmt(xs);
  const KernelSchedule s = block_scaled_schedule(arch, fmt(x), fmt(y), scale, static_cast<int>(K / Ks));
  const std::vector<std::uint32_t> a = words(x), b = words(y), sa = words(xs), sb = words(ys), c = words(acc);
  const GemmOperands ops{CodeMatrix(fmt(x), M, K, a), CodeMatrix(fmt(y), K, N, b), CodeMatrix(scale, M, Ks, sa),
                         CodeMatrix(scale, Ks, N, sb), CodeMatrix(Format::float32, M, N, c)};
  const std::vector<std::uint32_t> d = gemm(s, ops);
  return Tensor(DType::float32, acc.shape(), std::vector<std::uint64_t>(d.begin(), d.end()));
}

// The first row of an architecture's instruction family that takes these types.
const InstructionRow& mma_row(Arch arch, Opcode opcode, Type a, Type b, Type d) {
  for (const InstructionRow& row : instruction_table()) {
    if (row.arch != arch || row.opcode != opcode || row.block_scaled || row.d_type != d) continue;
    if (row.a_types.contains(a) && row.b_types.contains(b)) return row;
  }
  throw std::invalid_argument(std::string(to_string(opcode)) + " on " + std::string(to_string(arch)) + " has no " +
                              std::string(to_string(a)) + " x " + std::string(to_string(b)) + " -> " +
                              std::string(to_string(d)) + " form (see: blockscale models)");
}

Tensor run_mma(Arch arch, Opcode opcode, const Tensor& lhs, const Tensor& rhs, const Tensor& acc) {
  const Type ta = type_of_dtype(lhs.dtype(), "lhs"), tb = type_of_dtype(rhs.dtype(), "rhs");
  const Type td = type_of_dtype(acc.dtype(), "acc");
  (void)mma_row(arch, opcode, ta, tb, td);  // the architecture offers this form
  const auto M = static_cast<std::size_t>(lhs.extent(0)), K = static_cast<std::size_t>(lhs.extent(1));
  const auto N = static_cast<std::size_t>(rhs.extent(1));
  if (td == Type::f64) {
    // DMMA: IEEE fma in k order, starting from C (numerics.md (a)), with DMMA's NaN results (the
    // host's fma picks NaNs by its own rule), in IEEE mode whatever the caller's.
    const blockscale::detail::IeeeMode ieee;
    std::vector<std::uint64_t> d(M * N);
    for (std::size_t i = 0; i < M; ++i) {
      for (std::size_t j = 0; j < N; ++j) {
        double r = std::bit_cast<double>(acc.code(static_cast<std::int64_t>(i * N + j)));
        for (std::size_t k = 0; k < K; ++k) {
          r = dmma_fma(std::bit_cast<double>(lhs.code(static_cast<std::int64_t>(i * K + k))),
                       std::bit_cast<double>(rhs.code(static_cast<std::int64_t>(k * N + j))), r);
        }
        d[i * N + j] = std::bit_cast<std::uint64_t>(r);
      }
    }
    return Tensor(DType::float64, acc.shape(), std::move(d));
  }
  const auto fmt = [](const Tensor& t) { return reference::format_of(t.dtype()); };
  const std::vector<std::uint32_t> a = words(lhs), b = words(rhs), c = words(acc);
  const GemmOperands ops{CodeMatrix(fmt(lhs), M, K, a), CodeMatrix(fmt(rhs), K, N, b), {}, {},
                         CodeMatrix(fmt(acc), M, N, c)};
  const std::vector<std::uint32_t> d = gemm(mma_schedule(arch, opcode, ta, tb, td), ops);
  return Tensor(acc.dtype(), acc.shape(), std::vector<std::uint64_t>(d.begin(), d.end()));
}

}  // namespace

KernelSchedule mma_schedule(Arch arch, Opcode opcode, Type a, Type b, Type d) {
  const InstructionRow& row = mma_row(arch, opcode, a, b, d);
  const ShapeRule& s = row.shapes.front();
  return KernelSchedule::chain(make_instruction(row, s.m, s.n_max, s.k, a, b));
}

void register_reference_models() {
  for (const Arch arch : {Arch::sm_100a, Arch::sm_120a}) {
    const std::string name(to_string(arch));
    reference::register_scaled_mma_model(
        {name, "blockscale::emulator block_scaled_schedule(" + name + "): the block_scale instruction chain along K"},
        [arch](const Tensor& x, const Tensor& xs, const Tensor& y, const Tensor& ys, const Tensor& acc) {
          return run_scaled(arch, x, xs, y, ys, acc);
        });
  }
  struct MmaName {
    const char* name;
    Arch arch;
    Opcode opcode;
  };
  for (const MmaName& m : {MmaName{"sm_70", Arch::sm_70, Opcode::mma_sync}, MmaName{"sm_75", Arch::sm_75, Opcode::mma_sync},
                           MmaName{"sm_80", Arch::sm_80, Opcode::mma_sync}, MmaName{"sm_89", Arch::sm_89, Opcode::mma_sync},
                           MmaName{"sm_90a", Arch::sm_90a, Opcode::mma_sync},
                           MmaName{"sm_90a.wgmma", Arch::sm_90a, Opcode::wgmma},
                           MmaName{"sm_100a", Arch::sm_100a, Opcode::mma_sync},
                           MmaName{"sm_100a.tcgen05", Arch::sm_100a, Opcode::tcgen05_mma},
                           MmaName{"sm_120a", Arch::sm_120a, Opcode::mma_sync}}) {
    const Arch arch = m.arch;
    const Opcode opcode = m.opcode;
    reference::register_mma_model(
        {m.name, "blockscale::emulator " + std::string(to_string(opcode)) + " chain along K on " +
                     std::string(to_string(arch))},
        [arch, opcode](const Tensor& lhs, const Tensor& rhs, const Tensor& acc) {
          return run_mma(arch, opcode, lhs, rhs, acc);
        });
  }
}

}  // namespace blockscale::emulator
