// SPDX-License-Identifier: Apache-2.0
// The self-test device: every output through emulator::fdpa (one dot product at a time, the
// table row's parameters, optionally perturbed), and the GEMM schedules rebuilt from fdpa and the
// CUDA-core operations of emulator/arith.h. The model side of the harness goes through
// emulator::mma and emulator::gemm instead, so the two sides share the engine but not the
// instruction and schedule plumbing.
#include <cstring>
#include <exception>
#include <span>
#include <stdexcept>

#include "blockscale/emulator/arith.h"
#include "blockscale/emulator/mma.h"
#include "blockscale/formats/convert.h"
#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/harness/device.h"

namespace blockscale::harness {

std::string to_string(Perturbation p) {
  switch (p) {
    case Perturbation::none: return "none";
    case Perturbation::fraction_bits: return "fraction-bits";
    case Perturbation::output_rounding: return "output-rounding";
    case Perturbation::c_placement: return "c-placement";
    case Perturbation::promotion_fma: return "promotion-fma";
    case Perturbation::output_lsb: return "output-lsb";
    case Perturbation::zero_floor: return "zero-floor";
  }
  return "?";
}

std::optional<Perturbation> parse_perturbation(std::string_view s) {
  for (Perturbation p : {Perturbation::none, Perturbation::fraction_bits, Perturbation::output_rounding,
                         Perturbation::c_placement, Perturbation::promotion_fma, Perturbation::output_lsb,
                         Perturbation::zero_floor}) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

namespace {

using emulator::Algorithm;
using emulator::FdpaParams;
using emulator::OutputRounding;

class EmulatorDevice final : public Device {
 public:
  explicit EmulatorDevice(Perturbation p) : p_(p) {}

  DeviceDescription describe() const override {
    DeviceDescription d;
    d.kind = "emulator";
    d.name = "blockscale emulator self-test (emulator::fdpa per output" +
             std::string(p_ == Perturbation::none ? ")" : ", perturbed: " + to_string(p_) + ")");
    return d;
  }

  std::vector<Target> targets() const override { return self_test_targets(); }

  std::vector<std::uint32_t> run(const InstructionTarget& t, const TileBatch& in) override {
    const FdpaParams params = perturbed(t.model.params());
    const bool c_after = p_ == Perturbation::c_placement && params.algorithm != Algorithm::fp8_via_f16;
    std::vector<std::uint32_t> out = emulate_tiles_by_dot(t, in, params, c_after);
    flip_lsb(out, words_per_element(t));
    return out;
  }

  std::vector<std::uint32_t> run(const GemmTarget& t, const GemmProblem& p) override {
    validate_problem(t, p);
    if (t.schedule_kind != GemmSchedule::hopper_promotion) {
      throw std::invalid_argument("the self-test device computes the Hopper promotion schedule only");
    }
    const bool fp4 = t.recipe != GemmRecipe::mxfp8;
    const Format fa = fp4 ? Format::float8_e4m3fn : t.a, fb = fp4 ? Format::float8_e4m3fn : t.b;
    // The wgmma k32 fp8 row of the table (T-FDPA, F = 13, RZ-E8M13), perturbed like any instruction.
    const emulator::Instruction wgmma = emulator::parse_instruction(
        std::string("sm_90a wgmma.mma_async m64n8k32 f32 ") + info(fa).short_name + " " + info(fb).short_name);
    const FdpaParams params = perturbed(wgmma.params());
    const int blocks = p.k / t.block;
    auto scale_bits = [&](std::uint8_t code) {
      const std::uint32_t c = t.scale == Format::float8_ue4m3 ? (code & 0x7Fu) : code;
      const float v = to_float(t.scale, c);
      std::uint32_t u;
      std::memcpy(&u, &v, 4);
      return u;
    };
    auto expand = [&](std::uint8_t code) -> std::uint32_t {
      return fp4 ? convert_code(Format::float8_e4m3fn, Format::float4_e2m1fn, code) : code;
    };
    std::vector<std::uint32_t> out(std::size_t(p.m) * p.n);
    std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < p.m; ++i) {
      try {
        std::vector<std::uint32_t> a(32), b(32);
        for (int j = 0; j < p.n; ++j) {
          std::uint32_t acc = p.c.empty() ? 0u : p.c[std::size_t(i) * p.n + j];
          for (int bk = 0; bk < blocks; ++bk) {
            std::fill(a.begin(), a.end(), 0u);
            std::fill(b.begin(), b.end(), 0u);
            for (int e = 0; e < t.block; ++e) {
              a[std::size_t(e)] = expand(p.a[std::size_t(i) * p.k + std::size_t(bk) * t.block + e]);
              b[std::size_t(e)] = expand(p.b[std::size_t(j) * p.k + std::size_t(bk) * t.block + e]);
            }
            emulator::DotOperands ops;
            ops.a_format = fa;
            ops.b_format = fb;
            ops.a = a;
            ops.b = b;
            ops.c = 0;  // a fresh accumulator (scale-d = 0): a +0 addend
            const std::uint32_t partial = emulator::fdpa(params, ops);
            const std::uint32_t sa = scale_bits(p.sfa[std::size_t(i) * blocks + bk]);
            const std::uint32_t sb = scale_bits(p.sfb[std::size_t(j) * blocks + bk]);
            acc = p_ == Perturbation::promotion_fma ? emulator::fma_f32(sa, emulator::mul_f32(sb, partial), acc)
                                                    : emulator::fma_f32(emulator::mul_f32(sa, sb), partial, acc);
          }
          if (p.bf16_output) {
            acc = (acc & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFu : (acc + 0x7FFFu + ((acc >> 16) & 1u)) >> 16;
          }
          out[std::size_t(i) * p.n + j] = acc;
        }
      } catch (...) {
#pragma omp critical(blockscale_harness_emulator_device)
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
    flip_lsb(out, 1);
    return out;
  }

 private:
  FdpaParams perturbed(FdpaParams p) const {
    switch (p_) {
      case Perturbation::fraction_bits: --p.F; break;
      case Perturbation::zero_floor: ++p.e_zero; break;
      case Perturbation::output_rounding:
        if (p.algorithm == Algorithm::fp8_via_f16) {
          p.F -= 2;  // its inner HMMAs round RZ-FP32 or RNE-FP16 only: the sum feeding them instead
        } else if (p.rounding == OutputRounding::rz_e8m13) {
          p.rounding = OutputRounding::rz_fp32;
        } else if (p.rounding == OutputRounding::rz_fp32) {
          p.rounding = OutputRounding::rz_e8m13;
        } else {
          p.F -= 2;
        }
        break;
      case Perturbation::c_placement:
        if (p.algorithm == Algorithm::fp8_via_f16) {
          // The emulated path becomes a native fused one (C aligned with the products).
          p.algorithm = Algorithm::t_fdpa;
          p.L *= 2;
        }
        break;
      default: break;
    }
    return p;
  }

  // Outputs of `words` words each (f64: two, the low word first, which holds the last bit).
  void flip_lsb(std::vector<std::uint32_t>& out, std::size_t words) const {
    if (p_ != Perturbation::output_lsb) return;
    for (std::size_t i = 7 * words; i < out.size(); i += 4096 * words) out[i] ^= 1u;
  }

  Perturbation p_;
};

}  // namespace

std::unique_ptr<Device> make_emulator_device(Perturbation p) {
  blockscale::detail::require_enumerator(p, Perturbation::zero_floor, "Perturbation", "make_emulator_device: perturbation");
  return std::make_unique<EmulatorDevice>(p);
}

}  // namespace blockscale::harness
