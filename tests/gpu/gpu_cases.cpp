// SPDX-License-Identifier: Apache-2.0
#include "gpu_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <span>
#include <stdexcept>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "blockscale/harness/device.h"
#include "blockscale/harness/target.h"

namespace blockscale::gputest {

std::uint64_t Rng::next() {
  std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::gaussian() {
  const double u1 = 1.0 - uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

std::string to_string(Data d) {
  switch (d) {
    case Data::small_integers: return "small_integers";
    case Data::random_bits: return "random_bits";
    case Data::finite_bits: return "finite_bits";
    case Data::realistic: return "realistic";
    case Data::scale_range: return "scale_range";
  }
  return "?";
}

namespace {

ConvertOptions rne_saturating() {
  ConvertOptions o;
  o.rounding = Rounding::nearest_even;
  o.overflow = Overflow::saturate;
  return o;
}

// A value as the probe's operand word: the format's code, or fp32 bits for tf32 operands.
std::uint32_t encode(Format f, double v) {
  if (f == Format::tfloat32 || f == Format::float32) {
    const float x = static_cast<float>(v);
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
  }
  return convert(f, v, rne_saturating());
}

bool finite_word(Format f, std::uint32_t w) {
  if (f == Format::tfloat32 || f == Format::float32) return ((w >> 23) & 0xFF) != 0xFF;
  const ValueClass c = classify(f, w);
  return c != ValueClass::nan && c != ValueClass::infinite;
}

std::uint32_t random_word(Format f, Rng& r) {
  if (f == Format::tfloat32 || f == Format::float32) return static_cast<std::uint32_t>(r.next());
  return r.below(1u << width(f));
}

// C for random-bit tiles: one tile in four random bits, one in four zeros, the rest values whose
// exponents overlap the products' (where alignment and truncation are visible).
std::uint32_t random_c(Format f, Rng& r, std::size_t tile) {
  switch (tile % 4) {
    case 0: return random_word(f, r);
    case 1: return 0;
    default: {
      const int e = static_cast<int>(r.below(41)) - 20;  // its own statement: argument order is unspecified
      const double mag = std::ldexp(1.0 + r.uniform(), e);
      return encode(f, r.below(2) ? -mag : mag);
    }
  }
}

std::uint8_t one_scale(Format scale) { return scale == Format::float8_e8m0fnu ? 127 : 0x38; }

// Data::scale_range scale codes. e8m0: codes in [64, 190], so that scale products 2^(ea + eb - 254)
// reach both ends of fp32's normal range (2^-126 .. 2^126), 3 in 10 of them at the ends; 1 in 4000
// outside it (the subnormal 2^-127, 2^-126, products that underflow or overflow, NaN). ue4m3: any
// non-NaN code with random bit 7.
std::uint8_t scale_range_code(Format scale, Rng& r) {
  if (scale != Format::float8_e8m0fnu) {
    std::uint8_t v;
    do v = static_cast<std::uint8_t>(r.below(0x7F));
    while (v == 0);
    return static_cast<std::uint8_t>(v | (r.below(2) << 7));
  }
  static constexpr std::uint8_t kEnds[] = {64, 65, 189, 190};
  static constexpr std::uint8_t kOutside[] = {0, 1, 63, 191, 254, 255};
  const std::uint32_t pick = r.below(4000);
  if (pick == 0) return kOutside[r.below(6)];
  if (pick < 1200) return kEnds[r.below(4)];
  return static_cast<std::uint8_t>(64 + r.below(127));
}

}  // namespace

gpu::ProbeInputs make_probe_inputs(const gpu::ProbeKernel& p, std::size_t tiles, std::uint64_t seed, Data data) {
  gpu::ProbeInputs in;
  in.tiles = tiles;
  in.a.resize(tiles * gpu::probe_a_size(p));
  in.b.resize(tiles * gpu::probe_b_size(p));
  in.c.resize(tiles * gpu::probe_c_size(p));
  in.sfa.resize(tiles * gpu::probe_sfa_size(p));
  in.sfb.resize(tiles * gpu::probe_sfb_size(p));
  in.a_index.resize(tiles * gpu::probe_a_index_size(p));
  const std::size_t na = gpu::probe_a_size(p), nb = gpu::probe_b_size(p), nc = gpu::probe_c_size(p);
  const std::size_t ni = gpu::probe_a_index_size(p);
  const std::size_t nsa = gpu::probe_sfa_size(p), nsb = gpu::probe_sfb_size(p);
  // Each tile has its own generator, so the tiles can be made in parallel with the same bits.
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t t = 0; t < tiles; ++t) {
    Rng r(seed * 0x100000001B3ull + t);
    auto element = [&](Format f, double scale) -> std::uint32_t {
      switch (data) {
        case Data::small_integers: return encode(f, static_cast<double>(static_cast<int>(r.below(9)) - 4));
        case Data::random_bits: return random_word(f, r);
        case Data::finite_bits:
        case Data::scale_range: {
          std::uint32_t w;
          do w = random_word(f, r);
          while (!finite_word(f, w));
          return w;
        }
        case Data::realistic: {
          double g = r.gaussian();
          if (t % 4 == 3) g /= std::max(r.uniform(), 0.05);  // heavy-tailed tiles
          return encode(f, g * scale);
        }
      }
      return 0;
    };
    const double sa = std::ldexp(1.0, static_cast<int>(r.below(7)) - 3);
    const double sb = std::ldexp(1.0, static_cast<int>(r.below(7)) - 3);
    for (std::size_t i = 0; i < na; ++i) in.a[t * na + i] = element(p.a, sa);
    // Sparse probes: each group's positions at random (2:4 an increasing pair, tf32 1:2 either).
    for (std::size_t i = 0; i < ni; i += std::size_t(p.sparse_group / 2)) {
      if (p.sparse_group == 2) {
        in.a_index[t * ni + i] = static_cast<std::uint8_t>(r.below(2));
      } else {
        const std::uint8_t first = static_cast<std::uint8_t>(r.below(3));
        in.a_index[t * ni + i] = first;
        in.a_index[t * ni + i + 1] = static_cast<std::uint8_t>(first + 1 + r.below(3 - first));
      }
    }
    for (std::size_t i = 0; i < nb; ++i) in.b[t * nb + i] = element(p.b, sb);
    for (std::size_t i = 0; i < nc; ++i) {
      switch (data) {
        case Data::small_integers:
          in.c[t * nc + i] = encode(p.c, static_cast<double>(static_cast<int>(r.below(129)) - 64));
          break;
        case Data::random_bits:
        case Data::finite_bits:
        case Data::scale_range: {
          std::uint32_t w;
          do w = random_c(p.c, r, t);
          while (data != Data::random_bits && !finite_word(p.c, w));
          in.c[t * nc + i] = w;
          break;
        }
        case Data::realistic:
          in.c[t * nc + i] = (t % 8 == 5) ? 0u : encode(p.c, r.gaussian() * sa * sb * std::sqrt(double(p.k)));
          break;
      }
    }
    for (std::size_t i = 0; i < nsa + nsb; ++i) {
      std::uint8_t s = one_scale(p.scale);
      if (data == Data::random_bits) {
        s = static_cast<std::uint8_t>(r.below(256));
      } else if (data == Data::scale_range) {
        s = scale_range_code(p.scale, r);
      } else if (data == Data::finite_bits || data == Data::realistic) {
        do s = static_cast<std::uint8_t>(p.scale == Format::float8_e8m0fnu ? 127 + int(r.below(33)) - 16
                                                                            : r.below(256));
        while (classify(p.scale, s) == ValueClass::nan || (p.scale == Format::float8_ue4m3 && (s & 0x7F) == 0));
      }
      if (i < nsa) {
        in.sfa[t * nsa + i] = s;
      } else {
        in.sfb[t * nsb + i - nsa] = s;
      }
    }
  }
  return in;
}

// The probe's tile batch is laid out as the harness's (harness/target.h: TileBatch).
gpu::ProbeInputs probe_inputs(const harness::TileBatch& batch) {
  gpu::ProbeInputs in;
  in.tiles = batch.tiles;
  in.a = batch.a;
  in.b = batch.b;
  in.c = batch.c;
  in.sfa = batch.sfa;
  in.sfb = batch.sfb;
  in.a_index = batch.a_index;
  return in;
}

std::vector<std::uint32_t> emulate_probe(const gpu::ProbeKernel& p, const gpu::ProbeInputs& in,
                                         std::optional<emulator::FdpaParams> params) {
  harness::TileBatch batch;
  batch.tiles = in.tiles;
  batch.a = in.a;
  batch.b = in.b;
  batch.c = in.c;
  batch.sfa = in.sfa;
  batch.sfb = in.sfb;
  batch.a_index = in.a_index;
  harness::InstructionTarget t = harness::instruction_target(p.name);
  t.model_params = params;
  return harness::emulate_tiles(t, batch);
}

// ---------------------------------------------------------------------------------------------
// GEMM cases

namespace {


std::size_t tiled_offset(int r, int c, int blocks) {
  const int nk = (blocks + 3) / 4;
  return 512u * (std::size_t(r / 128) * nk + c / 4) + 16u * (r % 32) + 4u * ((r / 32) % 4) + (c % 4);
}

}  // namespace

GemmCase make_gemm_case(const gpu::GemmKernel& kern, int m, int n, int k, gpu::ScaleLayout layout,
                        gpu::GemmOutput output, bool with_c, std::uint64_t seed, Data data) {
  GemmCase gc;
  gc.args.m = m, gc.args.n = n, gc.args.k = k;
  gc.args.scale_layout = layout;
  gc.args.output = output;
  const int blocks = k / kern.block;
  Rng r(seed);

  // Element and scale codes, one operand at a time (A: rows = m, format kern.a; B: rows = n).
  auto operand = [&](int rows, Format ef, std::vector<std::uint8_t>& codes, std::vector<std::uint8_t>& scales) {
    codes.assign(std::size_t(rows) * k, 0);
    scales.assign(std::size_t(rows) * blocks, 0);
    for (int i = 0; i < rows; ++i) {
      const double row_scale = std::ldexp(1.0, static_cast<int>(r.below(9)) - 4);
      const bool heavy = i % 7 == 3;
      for (int bk = 0; bk < blocks; ++bk) {
        std::uint8_t& sc = scales[std::size_t(i) * blocks + bk];
        std::uint8_t* el = &codes[std::size_t(i) * k + std::size_t(bk) * kern.block];
        switch (data) {
          case Data::small_integers:
            sc = one_scale(kern.scale);
            for (int j = 0; j < kern.block; ++j) el[j] = static_cast<std::uint8_t>(encode(ef, double(int(r.below(9)) - 4)));
            break;
          case Data::random_bits:
          case Data::finite_bits:
          case Data::scale_range:
            if (data == Data::scale_range) {
              sc = scale_range_code(kern.scale, r);
            } else if (kern.scale == Format::float8_e8m0fnu) {
              const std::uint32_t pick = r.below(10000);
              sc = (pick == 0 && data == Data::random_bits) ? std::uint8_t(0xFF)
                   : pick < 100                            ? static_cast<std::uint8_t>(r.below(255))
                                                           : static_cast<std::uint8_t>(127 + int(r.below(49)) - 24);
            } else {
              std::uint8_t v;
              do v = static_cast<std::uint8_t>(r.below(0x7F));
              while (v == 0);
              if (data == Data::random_bits && r.below(10000) == 0) v = 0x7F;
              sc = static_cast<std::uint8_t>(v | (r.below(2) << 7));  // bit 7 is ignored
            }
            for (int j = 0; j < kern.block; ++j) {
              std::uint32_t w;
              do w = random_word(ef, r);
              while (!finite_word(ef, w));
              el[j] = static_cast<std::uint8_t>(w);
            }
            break;
          case Data::realistic: {
            double x[32];
            double amax = 0;
            for (int j = 0; j < kern.block; ++j) {
              double g = r.gaussian();
              if (heavy) g /= std::max(r.uniform(), 0.02);
              x[j] = g * row_scale;
              amax = std::max(amax, std::abs(x[j]));
            }
            double scale_value;
            if (kern.scale == Format::float8_e8m0fnu) {
              // OCP MX v1.0 §6.3: X = 2^(floor(log2(amax)) - emax_elem).
              const int e = amax > 0 ? static_cast<int>(std::floor(std::log2(amax))) - emax(ef) : 0;
              sc = static_cast<std::uint8_t>(std::clamp(e + 127, 0, 254));
            } else {
              sc = static_cast<std::uint8_t>(
                  convert(Format::float8_ue4m3, std::max(amax / 6.0, 0x1p-9), rne_saturating()));
            }
            scale_value = to_double(kern.scale, sc);
            for (int j = 0; j < kern.block; ++j) el[j] = static_cast<std::uint8_t>(encode(ef, x[j] / scale_value));
            break;
          }
        }
      }
    }
  };
  operand(m, kern.a, gc.a_codes, gc.sfa_codes);
  operand(n, kern.b, gc.b_codes, gc.sfb_codes);

  // As the kernel reads them: fp4 packed two per byte (element 2j in the low nibble), scales in
  // the requested layout (tiled padding bytes: the format's 1.0).
  auto pack = [&](const std::vector<std::uint8_t>& codes) {
    if (kern.recipe == gpu::GemmRecipe::mxfp8) return codes;
    std::vector<std::uint8_t> p(codes.size() / 2);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(codes[2 * i] | (codes[2 * i + 1] << 4));
    return p;
  };
  gc.ops.a = pack(gc.a_codes);
  gc.ops.b = pack(gc.b_codes);
  auto lay = [&](const std::vector<std::uint8_t>& s, int rows) {
    if (layout == gpu::ScaleLayout::linear) return s;
    std::vector<std::uint8_t> t(gpu::gemm_scale_bytes(kern, layout, rows, k), one_scale(kern.scale));
    for (int i = 0; i < rows; ++i)
      for (int c = 0; c < blocks; ++c) t[tiled_offset(i, c, blocks)] = s[std::size_t(i) * blocks + c];
    return t;
  };
  gc.ops.sfa = lay(gc.sfa_codes, m);
  gc.ops.sfb = lay(gc.sfb_codes, n);
  if (with_c) {
    gc.ops.c.resize(std::size_t(m) * n);
    for (std::size_t i = 0; i < gc.ops.c.size(); ++i) {
      switch (data) {
        case Data::small_integers: gc.ops.c[i] = static_cast<float>(int(r.below(129)) - 64); break;
        case Data::realistic: gc.ops.c[i] = static_cast<float>(r.gaussian() * std::sqrt(double(k))); break;
        default: {
          std::uint32_t w;
          do w = random_c(Format::float32, r, i);
          while (!finite_word(Format::float32, w));
          std::memcpy(&gc.ops.c[i], &w, 4);
        }
      }
    }
  }
  return gc;
}

std::vector<std::uint32_t> emulate_gemm(const gpu::GemmKernel& kern, const GemmCase& gc) {
  if (kern.arch != gpu::Arch::sm_90a) throw std::invalid_argument("emulate_gemm models the sm_90a kernels");
  // The kernel's GEMM target as the GPU device of the conformance harness describes it (recipe,
  // formats, block, promotion interval), so that this test and `blockscale conform` share one
  // model of the kernel.
  std::string why_not;
  const std::unique_ptr<harness::Device> device = harness::make_gpu_device(why_not);
  if (!device) throw std::runtime_error("emulate_gemm: no GPU device (" + why_not + ")");
  const std::vector<harness::Target> targets = device->targets();
  const auto target = std::find_if(targets.begin(), targets.end(), [&](const harness::Target& t) {
    return t.kind == harness::TargetKind::gemm && t.gemm.name == kern.name;
  });
  if (target == targets.end()) throw std::invalid_argument("emulate_gemm: the GPU device has no target '" + kern.name + "'");
  harness::GemmProblem p;
  p.m = gc.args.m, p.n = gc.args.n, p.k = gc.args.k;
  p.tiled_scales = gc.args.scale_layout == gpu::ScaleLayout::tiled_128x4;
  p.bf16_output = gc.args.output == gpu::GemmOutput::bf16;
  p.a = gc.a_codes;
  p.b = gc.b_codes;
  p.sfa = gc.sfa_codes;
  p.sfb = gc.sfb_codes;
  p.c.resize(gc.ops.c.size());
  if (!p.c.empty()) std::memcpy(p.c.data(), gc.ops.c.data(), p.c.size() * sizeof(std::uint32_t));
  return harness::emulate_gemm(target->gemm, p);
}

Agreement compare_codes(const std::vector<std::uint32_t>& gpu, const std::vector<std::uint32_t>& model,
                        std::size_t row_length, int max_reported) {
  Agreement a;
  a.compared = gpu.size();
  if (gpu.size() != model.size()) {
    a.mismatches = std::max(gpu.size(), model.size());
    a.first_mismatches = "sizes differ: gpu " + std::to_string(gpu.size()) + ", model " + std::to_string(model.size());
    return a;
  }
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    if (gpu[i] == model[i]) continue;
    if (++a.mismatches <= static_cast<std::size_t>(max_reported)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "  [%zu] (row %zu, col %zu): gpu 0x%08X, model 0x%08X\n", i, i / row_length,
                    i % row_length, gpu[i], model[i]);
      a.first_mismatches += buf;
    }
  }
  return a;
}

void report(const std::string& kind, const std::string& name, const std::string& data, const Agreement& a) {
  const char* path = std::getenv("BLOCKSCALE_GPU_REPORT");
  if (!path || !*path) return;
  std::ofstream f(path, std::ios::app);
  f << "{\"kind\": \"" << kind << "\", \"name\": \"" << name << "\", \"data\": \"" << data
    << "\", \"outputs\": " << a.compared << ", \"mismatches\": " << a.mismatches << "}\n";
}

}  // namespace blockscale::gputest
