// SPDX-License-Identifier: Apache-2.0
// Every Khattak & Mikaitis hardware vector (data/km-tensor-core-vectors, README "Which instruction
// produced each file") through the instruction model the data README names: 0 mismatches per file.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"

namespace blockscale::emulator {
namespace {

enum class CInput { zero, fp32, fp16 };

struct KmCase {
  const char* gpu;
  const char* format;  // folder: E4M3, E5M2, fp16, bf16, tf32
  const char* output;  // fp32 or fp16 (the d_ file)
  const char* instruction;
  CInput c;
};

// The README's table: which instruction produced each file, and what C the program used.
const KmCase kCases[] = {
    {"H100", "E4M3", "fp32", "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", CInput::zero},
    {"H100", "E5M2", "fp32", "sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e5m2", CInput::zero},
    {"H200", "E4M3", "fp32", "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", CInput::zero},
    {"H200", "E5M2", "fp32", "sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e5m2", CInput::zero},
    {"H100", "E4M3", "fp16", "sm_90a mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", CInput::fp16},
    {"H100", "E5M2", "fp16", "sm_90a mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", CInput::fp16},
    {"H200", "E4M3", "fp16", "sm_90a mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", CInput::fp16},
    {"H200", "E5M2", "fp16", "sm_90a mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", CInput::fp16},
    {"B200", "E4M3", "fp32", "sm_100a mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", CInput::fp32},
    {"B200", "E5M2", "fp32", "sm_100a mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", CInput::fp32},
    {"B200", "E4M3", "fp16", "sm_100a mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", CInput::fp16},
    {"B200", "E5M2", "fp16", "sm_100a mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", CInput::fp16},
    {"H100", "fp16", "fp32", "sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", CInput::fp32},
    {"H200", "fp16", "fp32", "sm_90a mma.sync.aligned m16n8k16 f32 f16 f16", CInput::fp32},
    {"B200", "fp16", "fp32", "sm_100a mma.sync.aligned m16n8k16 f32 f16 f16", CInput::fp32},
    {"H100", "fp16", "fp16", "sm_90a mma.sync.aligned m16n8k16 f16 f16 f16", CInput::fp16},
    {"H200", "fp16", "fp16", "sm_90a mma.sync.aligned m16n8k16 f16 f16 f16", CInput::fp16},
    {"B200", "fp16", "fp16", "sm_100a mma.sync.aligned m16n8k16 f16 f16 f16", CInput::fp16},
    {"H100", "bf16", "fp32", "sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16", CInput::fp32},
    {"H200", "bf16", "fp32", "sm_90a mma.sync.aligned m16n8k16 f32 bf16 bf16", CInput::fp32},
    {"B200", "bf16", "fp32", "sm_100a mma.sync.aligned m16n8k16 f32 bf16 bf16", CInput::fp32},
    // wmma k8 tf32 with 4 products per vector: the other 4 k positions are zero.
    {"H100", "tf32", "fp32", "sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32", CInput::fp32},
    {"H200", "tf32", "fp32", "sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32", CInput::fp32},
    {"B200", "tf32", "fp32", "sm_100a mma.sync.aligned m16n8k8 f32 tf32 tf32", CInput::fp32},
    {"Ada", "E4M3", "fp32", "sm_89 mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", CInput::fp32},
    {"Ada", "E5M2", "fp32", "sm_89 mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", CInput::fp32},
    {"Ada", "E4M3", "fp16", "sm_89 mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", CInput::fp16},
    {"Ada", "E5M2", "fp16", "sm_89 mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", CInput::fp16},
    // wmma m16n16k16 on sm_89 with 8 products per vector (one 8-term step of the 2 x 8 split).
    {"Ada", "fp16", "fp32", "sm_89 mma.sync.aligned m16n8k16 f32 f16 f16", CInput::fp32},
    {"Ada", "fp16", "fp16", "sm_89 mma.sync.aligned m16n8k16 f16 f16 f16", CInput::fp16},
    {"Ada", "bf16", "fp32", "sm_89 mma.sync.aligned m16n8k16 f32 bf16 bf16", CInput::fp32},
    {"Ada", "tf32", "fp32", "sm_89 mma.sync.aligned m16n8k8 f32 tf32 tf32", CInput::fp32},
};

std::string km_dir() {
  const char* d = std::getenv("BLOCKSCALE_KM_DIR");
  return d ? d : "";
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::uint32_t> hex_words(const std::string& line) {
  std::istringstream s(line);
  std::vector<std::uint32_t> out;
  for (std::string w; s >> w;) out.push_back(static_cast<std::uint32_t>(std::stoul(w, nullptr, 16)));
  return out;
}

std::uint32_t binary_word(const std::string& line) {
  if (line.size() != 32) throw std::runtime_error("expected 32 binary digits, got '" + line + "'");
  return static_cast<std::uint32_t>(std::stoul(line, nullptr, 2));
}

// fp32 pattern of an input that the README guarantees is exact in `f` -> the code of f.
std::uint32_t narrow(Format f, std::uint32_t fp32_bits) {
  if (f == Format::tfloat32) return fp32_bits;  // tf32 operands are fp32 storage words
  const std::uint32_t code = convert(f, std::bit_cast<float>(fp32_bits), presets::ieee());
  if (std::bit_cast<std::uint32_t>(to_float(f, code)) != fp32_bits) {
    throw std::runtime_error("input is not exact in " + to_string(f));
  }
  return code;
}

// Test names and failure messages show the file, not the bytes of the struct.
void PrintTo(const KmCase& c, std::ostream* os) { *os << c.gpu << "/" << c.format << " d_" << c.output; }

class EmulatorKmVectors : public ::testing::TestWithParam<KmCase> {};

TEST_P(EmulatorKmVectors, EveryVectorMatchesBitExactly) {
  const KmCase& kc = GetParam();
  if (km_dir().empty()) GTEST_FAIL() << "BLOCKSCALE_KM_DIR is not set (blockscale_add_test sets it)";
  const std::string dir = km_dir() + "/" + kc.gpu + "/" + kc.format + "/";
  const std::string tag = std::string(kc.gpu) + "_";
  const auto a_lines = read_lines(dir + "a_" + tag + kc.format + ".txt");
  const auto b_lines = read_lines(dir + "b_" + tag + kc.format + ".txt");
  const auto c_lines = read_lines(dir + "c_" + tag + "fp32.txt");
  const auto d_lines = read_lines(dir + "d_" + tag + kc.output + ".txt");
  ASSERT_EQ(a_lines.size(), 5000u);
  ASSERT_EQ(b_lines.size(), 5000u);
  ASSERT_EQ(c_lines.size(), 5000u);
  ASSERT_EQ(d_lines.size(), 5000u);

  const Instruction ins = parse_instruction(kc.instruction);
  const Format fa = *format_of(ins.a), fb = *format_of(ins.b);
  const bool f16_out = ins.d == Type::f16;
  std::size_t mismatches = 0;
  for (std::size_t v = 0; v < a_lines.size(); ++v) {
    const auto aw = hex_words(a_lines[v]), bw = hex_words(b_lines[v]);
    ASSERT_EQ(aw.size(), bw.size());
    ASSERT_LE(aw.size(), static_cast<std::size_t>(ins.k));
    std::vector<std::uint32_t> a(ins.k, 0), b(ins.k, 0);
    for (std::size_t k = 0; k < aw.size(); ++k) {
      a[k] = narrow(fa, aw[k]);
      b[k] = narrow(fb, bw[k]);
    }
    const float c_value = std::bit_cast<float>(binary_word(c_lines[v]));
    std::uint32_t c = 0;
    if (kc.c == CInput::fp32) c = std::bit_cast<std::uint32_t>(c_value);
    if (kc.c == CInput::fp16) c = convert(Format::float16, c_value, presets::ieee());  // __float2half
    std::uint32_t d = dot(ins, a, b, c);
    if (f16_out) d = std::bit_cast<std::uint32_t>(to_float(Format::float16, d));  // __half2float
    const std::uint32_t expected = binary_word(d_lines[v]);
    if (d != expected) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << kc.gpu << "/" << kc.format << " d_" << kc.output << " vector " << v << ": model 0x" << std::hex
                      << d << ", hardware 0x" << expected;
      }
    }
  }
  std::printf("[ K&M ] %s/%s d_%s_%s: %zu vectors, %zu mismatches (%s)\n", kc.gpu, kc.format, kc.gpu, kc.output,
              a_lines.size(), mismatches, ins.name().c_str());
  EXPECT_EQ(mismatches, 0u);
}

std::string case_name(const ::testing::TestParamInfo<KmCase>& info) {
  return std::string(info.param.gpu) + "_" + info.param.format + "_" + info.param.output;
}

INSTANTIATE_TEST_SUITE_P(AllFiles, EmulatorKmVectors, ::testing::ValuesIn(kCases), case_name);

// Matches of `params` (any algorithm parameters) on one file, through the engine-level fdpa().
std::size_t matches_with(const char* gpu, const char* format, const char* output, Format element, const FdpaParams& params,
                         CInput c_input) {
  const std::string dir = km_dir() + "/" + gpu + "/" + format + "/";
  const std::string tag = std::string(gpu) + "_";
  const auto a_lines = read_lines(dir + "a_" + tag + format + ".txt");
  const auto b_lines = read_lines(dir + "b_" + tag + format + ".txt");
  const auto c_lines = read_lines(dir + "c_" + tag + "fp32.txt");
  const auto d_lines = read_lines(dir + "d_" + tag + output + ".txt");
  std::size_t matches = 0;
  for (std::size_t v = 0; v < a_lines.size(); ++v) {
    std::vector<std::uint32_t> a, b;
    for (std::uint32_t w : hex_words(a_lines[v])) a.push_back(narrow(element, w));
    for (std::uint32_t w : hex_words(b_lines[v])) b.push_back(narrow(element, w));
    const float c_value = std::bit_cast<float>(binary_word(c_lines[v]));
    DotOperands ops;
    ops.a_format = ops.b_format = element;
    ops.a = a;
    ops.b = b;
    if (c_input == CInput::fp32) ops.c = std::bit_cast<std::uint32_t>(c_value);
    if (c_input == CInput::fp16) ops.c = convert(Format::float16, c_value, presets::ieee());
    std::uint32_t d = fdpa(params, ops);
    if (std::string(output) == "fp16") d = std::bit_cast<std::uint32_t>(to_float(Format::float16, d));
    matches += d == binary_word(d_lines[v]);
  }
  return matches;
}

// The data discriminates neighbouring parameters: the counts of numerics.md d.2 and of the data
// README ("[checked]" there with an independent implementation) are reproduced exactly.
TEST(EmulatorKmVectors, NeighbouringParametersGivePublishedMatchCounts) {
  if (km_dir().empty()) GTEST_FAIL() << "BLOCKSCALE_KM_DIR is not set";
  const auto params = [](const char* id) { return find_row(id)->params; };
  const Format e4m3 = Format::float8_e4m3fn, e5m2 = Format::float8_e5m2, f16 = Format::float16;

  FdpaParams wgmma = params("sm_90a.wgmma.fp8.f32");
  EXPECT_EQ(matches_with("H100", "E4M3", "fp32", e4m3, wgmma, CInput::zero), 5000u);
  wgmma.F = 12;
  EXPECT_EQ(matches_with("H100", "E4M3", "fp32", e4m3, wgmma, CInput::zero), 3037u);
  wgmma.F = 14;
  EXPECT_EQ(matches_with("H100", "E4M3", "fp32", e4m3, wgmma, CInput::zero), 4133u);
  EXPECT_EQ(matches_with("H100", "E5M2", "fp32", e5m2, wgmma, CInput::zero), 4548u);
  wgmma.F = 13;
  wgmma.rounding = OutputRounding::rz_fp32;
  EXPECT_EQ(matches_with("H100", "E4M3", "fp32", e4m3, wgmma, CInput::zero), 3585u);
  EXPECT_EQ(matches_with("H100", "E5M2", "fp32", e5m2, wgmma, CInput::zero), 4159u);
  // The wgmma files were computed with C = 0: with the c_ file as C almost nothing matches.
  EXPECT_LE(matches_with("H100", "E4M3", "fp32", e4m3, params("sm_90a.wgmma.fp8.f32"), CInput::fp32), 2u);

  FdpaParams hopper_f16 = params("sm_90a.mma.f16bf16.f32");
  hopper_f16.F = 24;
  EXPECT_EQ(matches_with("H100", "fp16", "fp32", f16, hopper_f16, CInput::fp32), 3825u);
  hopper_f16.F = 26;
  EXPECT_EQ(matches_with("H100", "fp16", "fp32", f16, hopper_f16, CInput::fp32), 4464u);
  hopper_f16.F = 25;
  hopper_f16.L = 8;
  EXPECT_EQ(matches_with("H100", "fp16", "fp32", f16, hopper_f16, CInput::fp32), 3467u);

  // B200 fp8 mma.sync: a native fused T-FDPA (F=25, L=32, C fused) instead of the b.9 emulation.
  FdpaParams native = params("sm_120a.mma.fp8.f32");
  EXPECT_EQ(matches_with("B200", "E4M3", "fp32", e4m3, native, CInput::fp32), 3207u);
  EXPECT_EQ(matches_with("B200", "E5M2", "fp32", e5m2, native, CInput::fp32), 3236u);
  native = params("sm_120a.mma.fp8.f16");
  EXPECT_EQ(matches_with("B200", "E4M3", "fp16", e4m3, native, CInput::fp16), 3108u);
  EXPECT_EQ(matches_with("B200", "E5M2", "fp16", e5m2, native, CInput::fp16), 3403u);

  // Ada fp8 without the 2 x 16 split.
  FdpaParams ada = params("sm_89.mma.fp8.f32");
  ada.L = 32;
  EXPECT_EQ(matches_with("Ada", "E4M3", "fp32", e4m3, ada, CInput::fp32), 3940u);
  EXPECT_EQ(matches_with("Ada", "E5M2", "fp32", e5m2, ada, CInput::fp32), 4283u);
}

// Every d_ file of the data set is in the table above (the README names an instruction for each).
TEST(EmulatorKmVectors, TableCoversEveryResultFile) {
  if (km_dir().empty()) GTEST_FAIL() << "BLOCKSCALE_KM_DIR is not set";
  std::size_t files = 0;
  for (const char* gpu : {"H100", "H200", "B200", "Ada"}) {
    for (const char* fmt : {"E4M3", "E5M2", "fp16", "bf16", "tf32"}) {
      for (const char* out : {"fp32", "fp16"}) {
        const std::string path = km_dir() + "/" + gpu + "/" + fmt + "/d_" + gpu + "_" + out + ".txt";
        if (!std::ifstream(path)) continue;
        ++files;
        bool listed = false;
        for (const KmCase& kc : kCases) {
          listed |= std::string(kc.gpu) == gpu && std::string(kc.format) == fmt && std::string(kc.output) == out;
        }
        EXPECT_TRUE(listed) << path << " has no case";
      }
    }
  }
  EXPECT_EQ(files, std::size(kCases));
}

}  // namespace
}  // namespace blockscale::emulator
