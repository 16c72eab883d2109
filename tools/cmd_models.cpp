// SPDX-License-Identifier: Apache-2.0
// `blockscale models`: the emulator's instruction table (numerics.md section (a) as data) as a
// human table, JSON or Markdown, and the resolution of one instruction name.
#include <cstdio>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "cli.h"

namespace blockscale::cli {
namespace {

using namespace blockscale::emulator;

std::string scale_text(const InstructionRow& r) {
  if (!r.block_scaled) return "-";
  return std::string(to_string(r.scale_type)) + "/" + std::to_string(r.block);
}

std::string rounding_text(const FdpaParams& p) {
  if (p.algorithm == Algorithm::fp8_via_f16) {
    return std::string(to_string(p.rounding)) + (p.rounding == OutputRounding::rne_fp16 ? " +HADD" : " +FADD");
  }
  return std::string(to_string(p.rounding));
}

std::string hardware_text(const InstructionRow& r) {
  std::string s;
  for (const HardwareEvidence& h : r.hardware) {
    if (!s.empty()) s += ", ";
    s += std::string(h.gpu) + " " + std::string(to_string(h.a)) + "." + std::string(to_string(h.b)) + " " +
         std::to_string(h.outputs);
  }
  return s;
}

// "hardware" when some type pair is confirmed on a GPU; otherwise the row's level.
std::string provenance_text(const InstructionRow& r) {
  std::string s(to_string(r.hardware.empty() ? r.provenance : Provenance::hardware));
  if (!r.inferred_operands.empty()) s += "; " + r.inferred_operands.to_string() + " inferred";
  return s;
}

std::string underflow_text(const FdpaParams& p) {
  if (p.algorithm == Algorithm::fma_chain) return "-";
  return p.underflow_zero == UnderflowZero::positive ? "+0" : "-0";
}

std::string json_row(const InstructionRow& r) {
  const FdpaParams& p = r.params;
  std::string s = "{\"id\": \"" + json_escape(std::string(r.id)) + "\", \"arch\": \"" + std::string(to_string(r.arch)) +
                  "\", \"gpu\": \"" + std::string(gpu_name(r.arch)) + "\", \"instruction\": \"" +
                  json_escape(std::string(r.qualified)) + "\", \"shapes\": [";
  for (std::size_t i = 0; i < r.shapes.size(); ++i) {
    const ShapeRule& sh = r.shapes[i];
    s += (i ? ", " : "") + std::string("{\"m\": ") + std::to_string(sh.m) + ", \"n_min\": " + std::to_string(sh.n_min) +
         ", \"n_max\": " + std::to_string(sh.n_max) + ", \"n_step\": " + std::to_string(sh.n_step) +
         ", \"k\": " + std::to_string(sh.k) + "}";
  }
  s += "], \"a_types\": \"" + r.a_types.to_string() + "\", \"b_types\": \"" + r.b_types.to_string() +
       "\", \"d_type\": \"" + std::string(to_string(r.d_type)) + "\", \"block_scaled\": " +
       (r.block_scaled ? "true" : "false");
  if (r.block_scaled) {
    s += ", \"scale_type\": \"" + std::string(to_string(r.scale_type)) + "\", \"block\": " + std::to_string(r.block);
  }
  s += ", \"algorithm\": \"" + std::string(to_string(p.algorithm)) + "\", \"L\": " + std::to_string(p.L) +
       ", \"F\": " + std::to_string(p.F) + ", \"rounding\": \"" + std::string(to_string(p.rounding)) +
       "\", \"e_zero\": " + std::to_string(p.e_zero) + ", \"underflow_zero\": \"" + underflow_text(p) + "\"";
  if (p.algorithm == Algorithm::gst_fdpa) s += ", \"group\": " + std::to_string(p.group);
  s += ", \"provenance\": \"" + std::string(to_string(r.provenance)) + "\", \"inferred_operands\": \"" +
       r.inferred_operands.to_string() + "\", \"hardware\": [";
  for (std::size_t i = 0; i < r.hardware.size(); ++i) {
    const HardwareEvidence& h = r.hardware[i];
    s += (i ? ", " : "") + std::string("{\"gpu\": \"") + std::string(h.gpu) + "\", \"a\": \"" +
         std::string(to_string(h.a)) + "\", \"b\": \"" + std::string(to_string(h.b)) +
         "\", \"outputs\": " + std::to_string(h.outputs) + ", \"source\": \"" + json_escape(std::string(h.source)) + "\"}";
  }
  s += "], \"evidence\": \"" + json_escape(std::string(r.evidence)) + "\"";
  // The sparse form (mma.sp::ordered_metadata / wgmma.mma_async.sp): its shapes, logical K.
  if (!r.sparse_shapes.empty()) {
    s += ", \"sparse_shapes\": \"" + shapes_string(r.sparse_shapes) + "\", \"sparse_evidence\": \"" +
         json_escape(std::string(r.sparse_evidence)) + "\"";
  }
  s += "}";
  return s;
}

// A Markdown table cell: '|' separates cells, so type sets "e4m3|e5m2" are escaped.
std::string cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

void print_markdown() {
  std::printf("| id | instruction | shapes (M, N range/step, K) | A | B | D | scale/block | model | L | F | rho | e_zero | "
              "underflow | provenance | confirmed on hardware (outputs) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const InstructionRow& r : instruction_table()) {
    const FdpaParams& p = r.params;
    const bool fma = p.algorithm == Algorithm::fma_chain;
    std::printf("| `%s` | `%s %s` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                std::string(r.id).c_str(), std::string(to_string(r.arch)).c_str(), std::string(r.qualified).c_str(),
                shapes_string(r).c_str(), cell(r.a_types.to_string()).c_str(), cell(r.b_types.to_string()).c_str(),
                std::string(to_string(r.d_type)).c_str(), scale_text(r).c_str(), std::string(to_string(p.algorithm)).c_str(),
                fma ? "1" : std::to_string(p.L).c_str(), fma ? "-" : std::to_string(p.F).c_str(), rounding_text(p).c_str(),
                fma ? "-" : std::to_string(p.e_zero).c_str(), underflow_text(p).c_str(), cell(provenance_text(r)).c_str(),
                r.hardware.empty() ? "-" : hardware_text(r).c_str());
  }
}

void print_table() {
  std::printf("%-40s %-58s %-30s %-26s %-4s %-9s %-19s %3s %3s %-17s %6s %3s  %s\n", "id", "instruction", "shapes",
              "A x B", "D", "scale", "model", "L", "F", "rho", "e_zero", "-V0", "provenance");
  for (const InstructionRow& r : instruction_table()) {
    const FdpaParams& p = r.params;
    const bool fma = p.algorithm == Algorithm::fma_chain;
    const std::string types = r.a_types.to_string() + " x " + r.b_types.to_string();
    std::printf("%-40s %-58s %-30s %-26s %-4s %-9s %-19s %3s %3s %-17s %6s %3s  %s\n", std::string(r.id).c_str(),
                (std::string(to_string(r.arch)) + " " + std::string(r.qualified)).c_str(), shapes_string(r).c_str(),
                types.c_str(), std::string(to_string(r.d_type)).c_str(), scale_text(r).c_str(),
                std::string(to_string(p.algorithm)).c_str(), fma ? "1" : std::to_string(p.L).c_str(),
                fma ? "-" : std::to_string(p.F).c_str(), rounding_text(p).c_str(),
                fma ? "-" : std::to_string(p.e_zero).c_str(), underflow_text(p).c_str(), provenance_text(r).c_str());
    if (!r.hardware.empty()) std::printf("%-40s   confirmed: %s\n", "", hardware_text(r).c_str());
    if (!r.sparse_shapes.empty()) {
      std::printf("%-40s   sparse form %s: %s\n", "", shapes_string(r.sparse_shapes).c_str(),
                  std::string(r.sparse_evidence).c_str());
    }
  }
  std::printf("\n%zu rows. Models (docs/emulator.md, after numerics.md): b.3 (T-FDPA), b.4 (ST-FDPA), b.5 (GST-FDPA),\n"
              "b.9 (fp8->f16 emulation).\n",
              instruction_table().size());
  std::printf("-V0: the zero a negative sum gives when it underflows the output (numerics.md e.3).\n"
              "Provenance: hardware = some operand-type pair reproduced bit-exactly on GPU output (counts above);\n"
              "published model = MMA-Sim / K&M only; inferred = an extrapolation numerics.md states.\n");
}

int describe(const std::string& name, bool json) {
  const Instruction ins = parse_instruction(name);
  const FdpaParams& p = ins.params();
  if (json) {
    std::string sparse = "false";
    if (ins.sparse) {
      sparse = "{\"group\": " + std::to_string(ins.sparse_group()) + ", \"dense_form\": \"" +
               json_escape(ins.dense_form().name()) + "\"}";
    }
    std::printf("{\"name\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"sparse\": %s, \"provenance\": \"%s\", \"row\": %s}\n",
                json_escape(ins.name()).c_str(), ins.m, ins.n, ins.k, sparse.c_str(),
                std::string(to_string(ins.provenance())).c_str(), json_row(*ins.row).c_str());
    return kExitOk;
  }
  std::printf("%s\n  row %s (%s)\n  %s, L=%d, F=%d, %s, e_zero=%d, negative underflow gives %s\n  provenance for %s x %s: %s\n  evidence: %s\n",
              ins.name().c_str(), std::string(ins.row->id).c_str(), std::string(gpu_name(ins.row->arch)).c_str(),
              std::string(to_string(p.algorithm)).c_str(), p.L, p.F, rounding_text(p).c_str(), p.e_zero,
              underflow_text(p).c_str(),
              std::string(to_string(ins.a)).c_str(), std::string(to_string(ins.b)).c_str(),
              std::string(to_string(ins.provenance())).c_str(), std::string(ins.row->evidence).c_str());
  if (ins.sparse) {
    std::printf("  sparse: %d:%d along K; each output is %s on the %d stored values and the B rows they select\n"
                "  sparse evidence: %s\n",
                ins.sparse_group() / 2, ins.sparse_group(), ins.dense_form().name().c_str(), ins.k / 2,
                std::string(ins.row->sparse_evidence).c_str());
  }
  for (const HardwareEvidence& h : ins.row->hardware) {
    std::printf("  confirmed: %s %s x %s, %llu outputs (%s)\n", std::string(h.gpu).c_str(),
                std::string(to_string(h.a)).c_str(), std::string(to_string(h.b)).c_str(),
                static_cast<unsigned long long>(h.outputs), std::string(h.source).c_str());
  }
  return kExitOk;
}

int run_models(const std::vector<std::string>& argv) {
  Args args(argv, {"name"}, {"json", "markdown"});
  args.no_positional();
  if (args.flag("json") && args.flag("markdown")) throw UsageError("--json and --markdown exclude each other");
  if (args.get("name") && args.flag("markdown")) throw UsageError("--markdown prints the whole table; --name one row (text or --json)");
  if (const auto name = args.get("name")) {
    try {
      return describe(*name, args.flag("json"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (args.flag("markdown")) {
    print_markdown();
  } else if (args.flag("json")) {
    std::printf("[\n");
    const auto rows = instruction_table();
    for (std::size_t i = 0; i < rows.size(); ++i) std::printf("  %s%s\n", json_row(rows[i]).c_str(), i + 1 < rows.size() ? "," : "");
    std::printf("]\n");
  } else {
    print_table();
  }
  return kExitOk;
}

const Registrar models_cmd(
    {"models", "the emulator's tensor-core instruction table (models, parameters, provenance)",
     "blockscale models [--json | --markdown] [--name INSTRUCTION]\n"
     "  Every row of the instruction table (docs/emulator.md; the numerics.md it cites is the team's\n"
     "  tensor-core arithmetic reference): shapes, operand types, the fused dot-product-add model with\n"
     "  L, F, output rounding and e_zero, and its provenance.\n"
     "  --name resolves one PTX-style name, e.g.\n"
     "    --name 'sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e4m3 e2m1 ue8m0'\n"
     "  and reports the rule it breaks if it is not a modelled instruction (exit status 2).",
     run_models});

}  // namespace
}  // namespace blockscale::cli
