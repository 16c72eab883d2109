// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/target.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <exception>
#include <limits>
#include <span>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "blockscale/emulator/arith.h"
#include "blockscale/emulator/mma.h"
#include "blockscale/formats/convert.h"
#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/formats/detail/ieee_mode.h"

namespace blockscale::harness {

namespace {

Format format_or_throw(emulator::Type t, std::string_view name) {
  const auto f = emulator::format_of(t);
  if (!f) throw std::invalid_argument("'" + std::string(name) + "': no element format for this operand type");
  return *f;
}

double as_double(const std::uint32_t* pair) { return std::bit_cast<double>(f64_bits(pair)); }

// Runs tile(g) for g in [0, tiles) on the OpenMP threads, `chunk` tiles per dynamic chunk (tiles
// differ in cost). An exception must not leave an OpenMP region: the first one is kept and
// rethrown after the loop.
template <class TileFn>
void for_each_tile(std::size_t tiles, [[maybe_unused]] int chunk, TileFn&& tile) {
  std::exception_ptr error;
  const auto count = static_cast<std::ptrdiff_t>(tiles);
#pragma omp parallel for schedule(dynamic, chunk)
  for (std::ptrdiff_t ti = 0; ti < count; ++ti) {
    // Each thread's own mode: the f64 rows add C after the chain in double (c_after).
    const blockscale::detail::IeeeMode thread_ieee;
    try {
      tile(static_cast<std::size_t>(ti));
    } catch (...) {
#pragma omp critical(blockscale_harness_emulate)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// The f64 DMMA rows, tile by tile: the model (emulator::mma_f64 per tile), or with `by_dot` one
// emulator::dot_f64 call per output (the self-test device's entry point), C then left out of the
// chain and added by one RNE add when c_after is set.
std::vector<std::uint32_t> emulate_f64_tiles(const InstructionTarget& t, const TileBatch& in, bool by_dot,
                                             bool c_after) {
  const std::size_t M = static_cast<std::size_t>(t.m), N = static_cast<std::size_t>(t.n),
                    K = static_cast<std::size_t>(t.k);
  const std::size_t na = a_words(t), nb = b_words(t), nc = c_words(t);
  std::vector<std::uint32_t> out(in.tiles * nc);
  for_each_tile(in.tiles, 64, [&](std::size_t g) {
    std::vector<double> a(M * K), b(K * N), c(M * N), d;
    for (std::size_t i = 0; i < M * K; ++i) a[i] = as_double(&in.a[g * na + 2 * i]);
    for (std::size_t j = 0; j < N; ++j)  // B^T rows in the batch, K x N row-major for mma_f64
      for (std::size_t k = 0; k < K; ++k) b[k * N + j] = as_double(&in.b[g * nb + 2 * (j * K + k)]);
    for (std::size_t i = 0; i < M * N; ++i) c[i] = as_double(&in.c[g * nc + 2 * i]);
    if (!by_dot) {
      d = emulator::mma_f64(t.model, a, b, c);
    } else {
      d.resize(M * N);
      std::vector<double> bcol(K);
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
          for (std::size_t k = 0; k < K; ++k) bcol[k] = b[k * N + j];
          const std::span<const double> arow(&a[i * K], K);
          d[i * N + j] = c_after ? emulator::dot_f64(t.model, arow, bcol, 0.0) + c[i * N + j]
                                 : emulator::dot_f64(t.model, arow, bcol, c[i * N + j]);
        }
    }
    for (std::size_t i = 0; i < M * N; ++i) put_f64_bits(&out[g * nc + 2 * i], std::bit_cast<std::uint64_t>(d[i]));
  });
  return out;
}

std::string short_name(Format f) {
  require_known(f, "GEMM target");
  return info(f).short_name;
}

}  // namespace

InstructionTarget instruction_target(std::string_view name) {
  InstructionTarget t;
  t.model = emulator::parse_instruction(name);
  t.name = t.model.name();
  t.m = t.model.m, t.n = t.model.n, t.k = t.model.k;
  if (t.model.params().algorithm == emulator::Algorithm::fma_chain) {
    t.f64 = true;  // a, b and acc stay unused
    return t;
  }
  t.a = format_or_throw(t.model.a, name);
  t.b = format_or_throw(t.model.b, name);
  t.acc = format_or_throw(t.model.d, name);
  t.block_scaled = t.model.block_scaled();
  if (t.model.sparse) {
    t.sparse = true;
    t.group = t.model.sparse_group();
  }
  if (t.block_scaled) {
    t.scale = format_or_throw(t.model.scale_type(), name);
    t.block = t.model.block();
  }
  return t;
}

std::size_t words_per_element(const InstructionTarget& t) { return t.f64 ? 2 : 1; }
std::size_t stored_k(const InstructionTarget& t) { return std::size_t(t.sparse ? t.k / 2 : t.k); }
std::size_t a_words(const InstructionTarget& t) { return std::size_t(t.m) * stored_k(t) * words_per_element(t); }
std::size_t a_index_words(const InstructionTarget& t) { return t.sparse ? std::size_t(t.m) * stored_k(t) : 0; }
std::size_t b_words(const InstructionTarget& t) { return std::size_t(t.n) * std::size_t(t.k) * words_per_element(t); }
std::size_t c_words(const InstructionTarget& t) { return outputs_per_tile(t) * words_per_element(t); }
std::size_t outputs_per_tile(const InstructionTarget& t) { return std::size_t(t.m) * std::size_t(t.n); }
std::size_t scale_words(const InstructionTarget& t, int rows) {
  return t.block_scaled ? std::size_t(rows) * std::size_t(t.k / t.block) : 0;
}

TileBatch make_batch(const InstructionTarget& t, std::size_t tiles) {
  TileBatch b;
  b.tiles = tiles;
  b.a.assign(tiles * a_words(t), 0);
  b.b.assign(tiles * b_words(t), 0);
  b.c.assign(tiles * c_words(t), 0);
  b.sfa.assign(tiles * scale_words(t, t.m), 0);
  b.sfb.assign(tiles * scale_words(t, t.n), 0);
  b.a_index.assign(tiles * a_index_words(t), 0);
  return b;
}

void validate_batch(const InstructionTarget& t, const TileBatch& in) {
  for (const auto& [f, field] : {std::pair{t.a, "a"}, {t.b, "b"}, {t.acc, "acc"}, {t.scale, "scale"}}) {
    if (!is_known(f)) require_known(f, "target '" + t.name + "': " + field);
  }
  auto need = [&](const char* what, std::size_t have, std::size_t per_tile) {
    // tiles * per_tile must not wrap (2^58 tiles of 512 words would "need" 0).
    if (per_tile != 0 && in.tiles > std::numeric_limits<std::size_t>::max() / per_tile) {
      throw std::invalid_argument("target '" + t.name + "': " + std::to_string(in.tiles) + " tiles of " +
                                  std::to_string(per_tile) + " " + what + " words each overflow the size of an array");
    }
    if (have != in.tiles * per_tile) {
      throw std::invalid_argument("target '" + t.name + "': " + what + " has " + std::to_string(have) + " words; " +
                                  std::to_string(in.tiles) + " tiles need " + std::to_string(in.tiles * per_tile));
    }
  };
  need("a", in.a.size(), a_words(t));
  need("b", in.b.size(), b_words(t));
  need("c", in.c.size(), c_words(t));
  need("sfa", in.sfa.size(), scale_words(t, t.m));
  need("sfb", in.sfb.size(), scale_words(t, t.n));
  need("a_index", in.a_index.size(), a_index_words(t));
}

std::vector<std::uint32_t> emulate_tiles_by_dot(const InstructionTarget& t, const TileBatch& in,
                                                const emulator::FdpaParams& params, bool c_after) {
  validate_batch(t, in);
  if (t.f64) return emulate_f64_tiles(t, in, true, c_after);  // the fma chain has no FDPA parameters
  const std::size_t K = static_cast<std::size_t>(t.k), S = stored_k(t);
  const std::size_t na = a_words(t), nb = b_words(t), nc = c_words(t);
  const std::size_t blocks = t.block_scaled ? K / static_cast<std::size_t>(t.block) : 0;
  std::vector<std::uint32_t> out(in.tiles * nc);
  for_each_tile(in.tiles, 4, [&](std::size_t g) {
    std::vector<std::uint32_t> sa(blocks), sb(blocks), gathered(S);
    for (std::size_t i = 0; i < static_cast<std::size_t>(t.m); ++i)
      for (std::size_t j = 0; j < static_cast<std::size_t>(t.n); ++j) {
        emulator::DotOperands ops;
        ops.a_format = t.a;
        ops.b_format = t.b;
        ops.a = std::span<const std::uint32_t>(&in.a[g * na + i * S], S);
        ops.b = std::span<const std::uint32_t>(&in.b[g * nb + j * K], K);
        if (t.sparse) {
          // Stored value s of the row is at K position (s / (group / 2)) * group + index (PTX ISA
          // 9.7.14.6.1); the fdpa runs over the stored values and the B codes they select.
          const std::size_t per_group = static_cast<std::size_t>(t.group) / 2;
          for (std::size_t s = 0; s < S; ++s) {
            const std::uint8_t pos = in.a_index[(g * t.m + i) * S + s];
            if (pos >= static_cast<std::size_t>(t.group)) {
              throw std::invalid_argument("sparse target '" + t.name + "': a_index " + std::to_string(pos) +
                                          " is outside a group of " + std::to_string(t.group));
            }
            gathered[s] = in.b[g * nb + j * K + s / per_group * static_cast<std::size_t>(t.group) + pos];
          }
          ops.b = gathered;
        }
        if (t.block_scaled) {
          for (std::size_t s = 0; s < blocks; ++s) {
            sa[s] = in.sfa[(g * t.m + i) * blocks + s];
            sb[s] = in.sfb[(g * t.n + j) * blocks + s];
          }
          ops.scale_format = t.scale;
          ops.block = t.block;
          ops.scale_a = sa;
          ops.scale_b = sb;
        }
        const std::uint32_t c = in.c[g * nc + i * t.n + j];
        ops.c = c_after ? 0u : c;
        std::uint32_t d = emulator::fdpa(params, ops);
        if (c_after) {
          d = t.acc == Format::float16 ? emulator::add_f16(static_cast<std::uint16_t>(d), static_cast<std::uint16_t>(c))
                                       : emulator::add_f32(d, c);
        }
        out[g * nc + i * t.n + j] = d;
      }
  });
  return out;
}

void apply_param_override(emulator::FdpaParams& p, std::string_view spec) {
  std::size_t start = 0;
  while (start < spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view kv = spec.substr(start, comma - start);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos) {
      throw std::invalid_argument("model override '" + std::string(kv) + "' is not key=value");
    }
    const std::string key(kv.substr(0, eq)), value(kv.substr(eq + 1));
    auto integer = [&] {
      std::size_t used = 0;
      int v = 0;
      try {
        v = std::stoi(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size()) {
        throw std::invalid_argument("model override " + key + "=" + value + ": not an integer");
      }
      return v;
    };
    if (key == "F") {
      p.F = integer();
    } else if (key == "L") {
      p.L = integer();
    } else if (key == "e_zero") {
      p.e_zero = integer();
    } else if (key == "underflow") {
      if (value != "positive" && value != "negative") {
        throw std::invalid_argument("model override underflow=" + value + ": positive or negative");
      }
      p.underflow_zero = value == "positive" ? emulator::UnderflowZero::positive : emulator::UnderflowZero::negative;
    } else if (key == "rounding") {
      // The spellings of --help (rz_fp32, ...) and of the table (`blockscale models`: RZ-FP32, ...).
      constexpr std::pair<std::string_view, emulator::OutputRounding> kRoundings[] = {
          {"rz_fp32", emulator::OutputRounding::rz_fp32},
          {"rz_e8m13", emulator::OutputRounding::rz_e8m13},
          {"rne_fp16", emulator::OutputRounding::rne_fp16}};
      bool found = false;
      for (const auto& [name, r] : kRoundings) {
        if (value == name || value == emulator::to_string(r)) p.rounding = r, found = true;
      }
      if (!found) throw std::invalid_argument("model override rounding=" + value + ": rz_fp32, rz_e8m13 or rne_fp16");
    } else {
      throw std::invalid_argument("model override: unknown key '" + key + "' (F, L, e_zero, underflow, rounding)");
    }
    start = comma + 1;
  }
  emulator::validate(p);
}

std::vector<std::uint32_t> emulate_tiles(const InstructionTarget& t, const TileBatch& in) {
  validate_batch(t, in);
  if (t.f64) return emulate_f64_tiles(t, in, false, false);
  if (t.model_params) return emulate_tiles_by_dot(t, in, *t.model_params);
  using emulator::CodeMatrix;
  using emulator::Order;
  const std::size_t na = a_words(t), nb = b_words(t), nc = c_words(t), ni = a_index_words(t);
  const std::size_t nsa = scale_words(t, t.m), nsb = scale_words(t, t.n);
  const std::size_t blocks = t.block_scaled ? std::size_t(t.k / t.block) : 0;
  std::vector<std::uint32_t> out(in.tiles * nc);
  for_each_tile(in.tiles, 8, [&](std::size_t tu) {
    const CodeMatrix a(t.a, t.m, stored_k(t), std::span<const std::uint32_t>(&in.a[tu * na], na));
    const CodeMatrix b(t.b, t.k, t.n, std::span<const std::uint32_t>(&in.b[tu * nb], nb), Order::col_major);
    const CodeMatrix c(t.acc, t.m, t.n, std::span<const std::uint32_t>(&in.c[tu * nc], nc));
    if (t.sparse) {
      const std::vector<std::uint32_t> d =
          emulator::mma_sparse(t.model, a, std::span<const std::uint8_t>(&in.a_index[tu * ni], ni), b, c);
      std::memcpy(&out[tu * nc], d.data(), nc * sizeof(std::uint32_t));
      return;
    }
    CodeMatrix sa, sb;
    if (t.block_scaled) {
      sa = CodeMatrix(t.scale, t.m, blocks, std::span<const std::uint8_t>(&in.sfa[tu * nsa], nsa));
      sb = CodeMatrix(t.scale, blocks, t.n, std::span<const std::uint8_t>(&in.sfb[tu * nsb], nsb), Order::col_major);
    }
    const std::vector<std::uint32_t> d = emulator::mma(t.model, a, b, c, sa, sb);
    std::memcpy(&out[tu * nc], d.data(), nc * sizeof(std::uint32_t));
  });
  return out;
}

std::string to_string(GemmRecipe r) {
  switch (r) {
    case GemmRecipe::mxfp8: return "mxfp8";
    case GemmRecipe::mxfp4: return "mxfp4";
    case GemmRecipe::nvfp4: return "nvfp4";
  }
  return "?";
}

std::string to_string(TargetKind k) {
  switch (k) {
    case TargetKind::instruction: return "instruction";
    case TargetKind::gemm: return "gemm";
  }
  return "?";
}

emulator::KernelSchedule gemm_schedule(const GemmTarget& t) {
  for (const auto& [f, field] : {std::pair{t.a, "a"}, {t.b, "b"}, {t.scale, "scale"}}) {
    if (!is_known(f)) require_known(f, "GEMM '" + t.name + "': " + field);
  }
  blockscale::detail::require_enumerator(t.recipe, GemmRecipe::nvfp4, "GemmRecipe", "GEMM '", t.name, "': recipe");
  blockscale::detail::require_enumerator(t.schedule_kind, GemmSchedule::tcgen05_chain, "GemmSchedule", "GEMM '", t.name, "': schedule_kind");
  blockscale::detail::require_enumerator(t.fma, emulator::PromotionFma::mul_then_add, "PromotionFma", "GEMM '", t.name, "': fma");
  if (t.schedule_kind == GemmSchedule::tcgen05_chain) {
    return emulator::block_scaled_schedule(emulator::Arch::sm_100a, t.a, t.b, t.scale, t.block);
  }
  // fp4 operands reach the tensor cores as e4m3 (every e2m1 value is an e4m3 value).
  const bool fp4 = t.recipe != GemmRecipe::mxfp8;
  const Format fa = fp4 ? Format::float8_e4m3fn : t.a, fb = fp4 ? Format::float8_e4m3fn : t.b;
  const emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 " +
                                                                short_name(fa) + " " + short_name(fb));
  return emulator::KernelSchedule::hopper_promotion(ins, t.promotion_interval, t.fma);
}

namespace {

// bf16 output: cvt.rn.bf16.f32, round to nearest even; NaN becomes the canonical 0x7FFF.
void to_bf16(std::vector<std::uint32_t>& d) {
  for (std::uint32_t& x : d) {
    x = (x & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFu : (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  }
}

// tcgen05 chain: the element and scale codes as they are (ue4m3 bit 7 included: the model ignores
// it as the hardware does, numerics.md b.5).
std::vector<std::uint32_t> emulate_chain(const GemmTarget& t, const GemmProblem& p) {
  using emulator::CodeMatrix;
  using emulator::Order;
  const int blocks = p.k / t.block;
  emulator::GemmOperands ops;
  ops.a = CodeMatrix(t.a, p.m, p.k, std::span<const std::uint8_t>(p.a));
  ops.b = CodeMatrix(t.b, p.k, p.n, std::span<const std::uint8_t>(p.b), Order::col_major);
  ops.scale_a = CodeMatrix(t.scale, p.m, blocks, std::span<const std::uint8_t>(p.sfa));
  ops.scale_b = CodeMatrix(t.scale, blocks, p.n, std::span<const std::uint8_t>(p.sfb), Order::col_major);
  if (!p.c.empty()) ops.c = CodeMatrix(Format::float32, p.m, p.n, std::span<const std::uint32_t>(p.c));
  std::vector<std::uint32_t> d = emulator::gemm(gemm_schedule(t), ops);
  if (p.bf16_output) to_bf16(d);
  return d;
}

// The k32 slot of one scale block: one wgmma k32 fp8 instruction per block (gpu/gemm.cpp).
constexpr int kPromotionSlot = 32;

}  // namespace

std::vector<std::uint8_t> promotion_elements(const GemmTarget& t, std::span<const std::uint8_t> codes, int rows,
                                             int k) {
  const bool fp4 = t.recipe != GemmRecipe::mxfp8;
  const int blocks = k / t.block;
  const std::size_t kk = std::size_t(blocks) * kPromotionSlot;
  std::vector<std::uint8_t> e(std::size_t(rows) * kk, 0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j) {
      const std::uint8_t c = codes[std::size_t(i) * std::size_t(k) + std::size_t(j)];
      const std::size_t jj = std::size_t(j / t.block) * kPromotionSlot + std::size_t(j % t.block);
      // Every e2m1 value is an e4m3 value: the expansion is exact.
      e[std::size_t(i) * kk + jj] =
          fp4 ? static_cast<std::uint8_t>(convert_code(Format::float8_e4m3fn, Format::float4_e2m1fn, c)) : c;
    }
  return e;
}

std::vector<std::uint32_t> promotion_scales(const GemmTarget& t, std::span<const std::uint8_t> codes) {
  std::vector<std::uint32_t> f(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const std::uint32_t code = t.scale == Format::float8_ue4m3 ? (codes[i] & 0x7Fu) : codes[i];
    const float v = to_float(t.scale, code);
    std::memcpy(&f[i], &v, 4);
  }
  return f;
}

void validate_problem(const GemmTarget& t, const GemmProblem& p) {
  auto bad = [&](const std::string& rule) { throw std::invalid_argument("GEMM '" + t.name + "': " + rule); };
  if (t.block < 1) bad("the target's block must be positive");
  if (p.m < 1 || p.n < 1 || p.k < 1) bad("M, N and K must be positive");
  if (p.k % t.block != 0) bad("K must be a multiple of the block");
  (void)gemm_schedule(t);  // the target's formats and enums
  const std::size_t m = std::size_t(p.m), n = std::size_t(p.n), k = std::size_t(p.k), blocks = k / std::size_t(t.block);
  auto need = [&](const char* what, std::size_t have, std::size_t want, const char* shape) {
    if (have != want) {
      bad(std::string(what) + " has " + std::to_string(have) + " elements; M=" + std::to_string(p.m) + " N=" +
          std::to_string(p.n) + " K=" + std::to_string(p.k) + " needs " + shape + " = " + std::to_string(want));
    }
  };
  need("a", p.a.size(), m * k, "M x K");
  need("b", p.b.size(), n * k, "N x K");
  need("sfa", p.sfa.size(), m * blocks, "M x K/block");
  need("sfb", p.sfb.size(), n * blocks, "N x K/block");
  if (!p.c.empty()) need("c", p.c.size(), m * n, "M x N");
}

std::vector<std::uint32_t> emulate_gemm(const GemmTarget& t, const GemmProblem& p) {
  using emulator::CodeMatrix;
  using emulator::Order;
  validate_problem(t, p);
  if (t.schedule_kind == GemmSchedule::tcgen05_chain) return emulate_chain(t, p);
  // One scale pair per promotion: with P > 1 a promotion would span P scale blocks, which the
  // kernels of this project never do (they promote every block, P = 1).
  if (t.promotion_interval != 1) {
    throw std::invalid_argument("GEMM '" + t.name + "': per-block scales need promotion interval P = 1");
  }
  const emulator::KernelSchedule sched = gemm_schedule(t);
  const Format fa = *emulator::format_of(sched.instruction.a), fb = *emulator::format_of(sched.instruction.b);
  const std::size_t blocks = static_cast<std::size_t>(p.k / t.block), kk = blocks * kPromotionSlot;
  const std::vector<std::uint8_t> ea = promotion_elements(t, p.a, p.m, p.k), eb = promotion_elements(t, p.b, p.n, p.k);
  const std::vector<std::uint32_t> sa = promotion_scales(t, p.sfa), sb = promotion_scales(t, p.sfb);
  emulator::GemmOperands ops;
  ops.a = CodeMatrix(fa, p.m, kk, std::span<const std::uint8_t>(ea));
  ops.b = CodeMatrix(fb, kk, p.n, std::span<const std::uint8_t>(eb), Order::col_major);
  ops.scale_a = CodeMatrix(Format::float32, p.m, blocks, std::span<const std::uint32_t>(sa));
  ops.scale_b = CodeMatrix(Format::float32, blocks, p.n, std::span<const std::uint32_t>(sb), Order::col_major);
  if (!p.c.empty()) ops.c = CodeMatrix(Format::float32, p.m, p.n, std::span<const std::uint32_t>(p.c));
  std::vector<std::uint32_t> d = emulator::gemm(sched, ops);
  if (p.bf16_output) to_bf16(d);
  return d;
}

std::vector<Target> self_test_targets() {
  std::vector<Target> v;
  auto ins = [&](const std::string& name) {
    Target t;
    t.kind = TargetKind::instruction;
    t.instruction = instruction_target(name);
    v.push_back(std::move(t));
  };
  for (const char* d : {"f32", "f16"})
    for (const char* a : {"e4m3", "e5m2"})
      for (const char* b : {"e4m3", "e5m2"})
        ins(std::string("sm_90a mma.sync.aligned m16n8k32 ") + d + " " + a + " " + b);
  ins("sm_90a mma.sync.aligned m16n8k16 f32 f16 f16");
  ins("sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16");
  ins("sm_90a mma.sync.aligned m16n8k16 f16 f16 f16");
  ins("sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32");
  ins("sm_90a mma.sync.aligned m8n8k4 f64 f64 f64");
  ins("sm_90a mma.sync.aligned m16n8k16 f64 f64 f64");
  for (const char* d : {"f32", "f16"})
    for (const char* a : {"e4m3", "e5m2"})
      for (const char* b : {"e4m3", "e5m2"})
        ins(std::string("sm_90a wgmma.mma_async m64n8k32 ") + d + " " + a + " " + b);
  ins("sm_90a wgmma.mma_async m64n8k16 f32 f16 f16");
  ins("sm_90a wgmma.mma_async m64n8k16 f32 bf16 bf16");
  ins("sm_90a wgmma.mma_async m64n8k16 f16 f16 f16");
  ins("sm_90a wgmma.mma_async m64n8k8 f32 tf32 tf32");
  // Sparse forms: a 2:4 f16 mma.sp, the fp8 mma.sp the compiler emulates, a wgmma.sp with each
  // accumulator, and the 1:2 tf32 pattern.
  ins("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16");
  ins("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k64 f32 e4m3 e5m2");
  ins("sm_90a wgmma.mma_async.sp m64n8k64 f32 e5m2 e4m3");
  ins("sm_90a wgmma.mma_async.sp m64n8k32 f16 f16 f16");
  ins("sm_90a wgmma.mma_async.sp m64n8k16 f32 tf32 tf32");
  ins("sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3");
  ins("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e4m3 e2m1 ue8m0");
  ins("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3");

  auto gemm = [&](GemmRecipe r, Format a, Format b, Format scale, int block) {
    Target t;
    t.kind = TargetKind::gemm;
    GemmTarget& g = t.gemm;
    g.recipe = r, g.a = a, g.b = b, g.scale = scale, g.block = block;
    g.k_multiple = 4 * block;
    g.promotion_interval = 1;
    g.name = "sm_90a gemm " + to_string(r) + " " + short_name(a) + " " + short_name(b) + " " + short_name(scale) +
             " block" + std::to_string(block) + " (emulated promotion P=1)";
    g.schedule = gemm_schedule(g).name();
    v.push_back(std::move(t));
  };
  gemm(GemmRecipe::mxfp8, Format::float8_e4m3fn, Format::float8_e5m2, Format::float8_e8m0fnu, 32);
  gemm(GemmRecipe::mxfp4, Format::float4_e2m1fn, Format::float4_e2m1fn, Format::float8_e8m0fnu, 32);
  gemm(GemmRecipe::nvfp4, Format::float4_e2m1fn, Format::float4_e2m1fn, Format::float8_ue4m3, 16);
  return v;
}

}  // namespace blockscale::harness
