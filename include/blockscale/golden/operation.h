// SPDX-License-Identifier: Apache-2.0
// What a golden file's operation means: every @op / @mode line of golden/FORMAT.md turned into
// something that computes the expected outputs of a case with blockscale, and generates cases.
//
// Operation ids (what `blockscale golden gen --op` takes and manifests record):
//   convert:<src>:<dst>              one input format to one output format, every named mode of the
//                                     presets ieee, cuda and ml_dtypes that offers the pair;
//   convert:<src>:<dst>:stochastic   stochastic rounding with a random word per case;
//   quantize:<block format>:<recipe> one block -> scale code and element codes (quantize/options.h
//                                     recipes, e.g. quantize:mxfp8_e4m3:ocp); fp8 with fp32 scales:
//                                     quantize:fp8_e4m3:deepgemm (quantize/fp8_scaled.h recipes);
//   layout:<scale layout>            logical index -> storage offset (layout/scale_layout.h text,
//                                     e.g. layout:gluon_contiguous:block_mn=128,block_k_scales=4);
//   pack:<packing>:<format>          16 codes -> packed bytes (layout/packing.h);
//   instruction:<instruction name>   one output element of a tensor-core instruction (emulator
//                                     instruction names, e.g. "instruction:sm_90a wgmma.mma_async
//                                     m64n8k32 f32 e4m3 e4m3"); a set covers every instruction of the
//                                     table that the emulator computes with the same model;
//   gemm:<schedule>                  a whole small GEMM through a named kernel schedule, or through a
//                                     measured fp8 library row (emulator/library_fp8.h), e.g.
//                                     gemm:cublaslt_1x128_x_128x128.
//
// Files written outside the committed families (the conformance harness's failure files,
// docs/conformance.md) take their operations from instruction_operation and gemm_operation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/emulator/gemm.h"
#include "blockscale/golden/file.h"

namespace blockscale::golden {

// Which inputs a generator draws (golden/FORMAT.md "Data"): edge cases and probes, uniformly random
// bit patterns, or values shaped like real tensors; mixed = all of them in fixed proportions.
enum class DataKind : std::uint8_t { mixed, edge, random, realistic };
std::string to_string(DataKind d);
std::optional<DataKind> parse_data_kind(std::string_view s);

struct GenerateOptions {
  std::uint64_t seed = 1;
  DataKind data = DataKind::mixed;
  // Number of cases; unset: the operation's default. Edge sets of conversions, layouts and packing
  // are complete lists: the count is then the size of that list and `cases` is refused.
  std::optional<std::size_t> cases;
};

class Operation {
 public:
  virtual ~Operation() = default;
  virtual SetKind kind() const = 0;
  // The operation id (see above), and the file name stem of its set.
  virtual std::string id() const = 0;
  virtual std::string file_stem() const = 0;
  // Header content: the @op lines, the @mode lines (conversions), explanatory "# " notes.
  virtual std::vector<std::string> op_lines() const = 0;
  virtual std::vector<std::string> mode_lines() const { return {}; }
  virtual std::vector<std::string> notes() const { return {}; }
  virtual std::vector<FieldSpec> fields() const = 0;
  // The expected output words of one case from its input words (field order). Throws
  // std::invalid_argument when the inputs are outside what the operation takes.
  virtual void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const = 0;
  // Outputs of many cases at once (inputs and outputs flat, case-major). The default calls
  // compute(); conversions use the bulk span conversions here, so that generation (bulk, SIMD) and
  // verification (scalar) take different paths through the formats library.
  virtual void compute_many(std::span<const std::uint64_t> in, std::size_t cases,
                            std::span<std::uint64_t> out) const;
  // Input words of generated cases (flat), deterministic in (options, id()).
  virtual std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const = 0;
  virtual std::size_t default_cases() const = 0;
};

// The operation a parsed header describes. Throws GoldenError at the offending header line: an
// @op that is not understood, @mode lines that are missing or contradict their preset, @fields
// that differ from what the operation takes.
std::unique_ptr<Operation> make_operation(const GoldenFile& f);

// The operation of an id (see above). Throws std::invalid_argument for an unknown id.
std::unique_ptr<Operation> operation_from_id(std::string_view id);

// One instruction alone (emulator instruction name), with the fields of golden/FORMAT.md
// "instruction". A family file lists every instruction that shares its model; this one lists just
// the instruction named, as a file about one instruction's measured results should. Throws
// std::invalid_argument for a name the emulator does not know.
std::unique_ptr<Operation> instruction_operation(std::string_view instruction_name);

// What D of a gemm operation holds: the accumulator's codes, or an f32 accumulator narrowed to bf16
// as cvt.rn.bf16.f32 does (the bf16 output of the GEMM kernels; `out=bf16` in the @op line).
enum class GemmOutput : std::uint8_t { accumulator, bf16 };

// An M x N x K GEMM (M, N in 1..64, K in 1..4096) through any kernel schedule; its id is
// "gemm:<name>" (a file read back is named by its file name's stem, so pass the stem). Throws
// std::invalid_argument for a shape, schedule or output the operation does not take.
std::unique_ptr<Operation> gemm_operation(std::string name, int m, int n, int k,
                                          const emulator::KernelSchedule& schedule,
                                          GemmOutput output = GemmOutput::accumulator);

// The committed families: "conversions", "quantization", "layouts", "instructions", "gemms".
std::vector<std::string> family_names();
// The operations of a family, in file order. Throws std::invalid_argument for an unknown family.
std::vector<std::unique_ptr<Operation>> family(std::string_view name);

// The generator version written in @generator and in manifests: "blockscale <version>".
std::string generator_version();

// Generates a whole file: header, inputs, expected outputs.
GoldenFile generate(const Operation& op, const GenerateOptions& o);

// Per-operation seed: the base seed mixed with a hash of the operation id, so that a set generated
// alone is byte-identical to the same set generated as part of its family.
std::uint64_t operation_seed(std::uint64_t base, std::string_view id);

}  // namespace blockscale::golden
