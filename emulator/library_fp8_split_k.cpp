// SPDX-License-Identifier: Apache-2.0
// The split counts of cuBLASLt's heuristic, as recorded on an H100 and an H200
// (library_fp8.h, recorded_split_k). The data are generated (scripts/split_k_table.py) from the
// grid queries of scripts/cublaslt_split_k.py, one table per GPU, call, workspace, element pair,
// scaling recipe and D type, each with one symbol per grid shape (M outermost, K innermost):
// 'a' + S - 1 for the split count S, '-' where the heuristic had no algorithm. A table is written
// run-length encoded (a symbol, then the run's length in decimal when it repeats), either on its
// own or against an earlier table, with '.' for "as that table".
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/emulator/library_fp8.h"

namespace blockscale::emulator {
namespace {

struct RecordedSplitKTable {
  const char* gpu;        // "h100", "h200"
  const char* call;       // "torch" (torch._scaled_mm) or "cublaslt"
  int workspace_mib;      // the workspace the heuristic was offered
  const char* elements;   // "e4m3xe4m3", "e4m3xe5m2", "e5m2xe4m3"
  const char* recipe;     // scripts/cublaslt_split_k.py's names
  const char* d;          // "f32", "bf16"
  int reference;          // the earlier table that '.' refers to, or -1
  const char* form;       // run-length encoded symbols
};

#include "library_fp8_split_k_table.inc"

constexpr std::size_t kShapes = std::size(kGridM) * std::size(kGridN) * std::size(kGridK);

std::string run_length_decode(std::string_view form) {
  std::string out;
  out.reserve(kShapes);
  for (std::size_t i = 0; i < form.size();) {
    const char symbol = form[i++];
    std::size_t count = 0;
    while (i < form.size() && std::isdigit(static_cast<unsigned char>(form[i]))) count = count * 10 + (form[i++] - '0');
    out.append(count == 0 ? 1 : count, symbol);
  }
  return out;
}

// Every table decoded, once (about 2 MB).
const std::vector<std::string>& decoded_tables() {
  static const std::vector<std::string> tables = [] {
    std::vector<std::string> out;
    out.reserve(std::size(kTables));
    for (const RecordedSplitKTable& t : kTables) {
      std::string symbols = run_length_decode(t.form);
      if (t.reference >= 0) {
        const std::string& earlier = out.at(static_cast<std::size_t>(t.reference));
        for (std::size_t i = 0; i < symbols.size() && i < earlier.size(); ++i) {
          if (symbols[i] == '.') symbols[i] = earlier[i];
        }
      }
      if (symbols.size() != kShapes) throw std::logic_error("recorded split-K table of the wrong length");
      out.push_back(std::move(symbols));
    }
    return out;
  }();
  return tables;
}

std::string_view recipe_name(Fp8Library library, bool fast_accum, Fp8Granularity a, Fp8Granularity b) {
  using G = Fp8Granularity;
  const char* error = nullptr;
  if (a == G::tensor && b == G::tensor) return fast_accum ? "tensor_fast" : "tensor";
  if (fast_accum) {
    error = "fast accumulation was recorded for tensor x tensor scaling only";
  } else if (a == G::row && b == G::row) {
    return "rowwise";
  } else if (a == G::block_1x128 && b == G::block_1x128) {
    return "block_1x128";
  } else if (a == G::block_1x128 && b == G::block_128x128) {
    return "block_128x128";
  } else {
    error = "the libraries take tensor x tensor, row x row, 1x128 x 1x128 and 1x128 x 128x128 scaling";
  }
  throw std::invalid_argument(std::string("recorded split-K of ") + std::string(to_string(library)) + " " +
                              std::string(to_string(a)) + " x " + std::string(to_string(b)) + ": " + error);
}

std::string grid_list(const std::int64_t* first, const std::int64_t* last) {
  std::string s;
  for (const std::int64_t* v = first; v != last; ++v) s += (s.empty() ? "" : ", ") + std::to_string(*v);
  return "{" + s + "}";
}

std::string_view element_name(Format f) {
  if (f == Format::float8_e4m3fn) return "e4m3";
  if (f == Format::float8_e5m2) return "e5m2";
  throw std::invalid_argument("recorded split-K: the elements are e4m3 or e5m2, not " +
                              to_string(f));
}

}  // namespace

std::string_view recorded_split_k_provenance() { return kRecordedProvenance; }

int recorded_split_k(Fp8Library library, bool fast_accum, Fp8Granularity a, Fp8Granularity b, Format a_element,
                     Format b_element, std::int64_t M, std::int64_t N, std::int64_t K, const SplitKLookup& lookup) {
  if (library != Fp8Library::cublaslt && library != Fp8Library::torch_scaled_mm) {
    throw std::invalid_argument("recorded split-K: the library is cublaslt or torch_scaled_mm, got " +
                                std::to_string(static_cast<int>(library)));
  }
  if (lookup.gpu != "h100" && lookup.gpu != "h200") {
    throw std::invalid_argument("recorded split-K: the counts were recorded on an H100 and an H200 ('h100', 'h200'), "
                                "not '" + std::string(lookup.gpu) + "'");
  }
  const bool torch = library == Fp8Library::torch_scaled_mm;
  // torch._scaled_mm offers cuBLASLt a 1 MiB workspace whatever the caller has (CUBLASLT_LOG_LEVEL=2
  // showed it in every call); a direct cuBLASLt call was recorded with 1 and 64 MiB.
  const int workspace_mib = torch ? 1 : lookup.cublaslt_workspace_mib;
  if (workspace_mib != 1 && workspace_mib != 64) {
    throw std::invalid_argument("recorded split-K: cuBLASLt calls were recorded with a 1 or a 64 MiB workspace, not " +
                                std::to_string(workspace_mib) + " MiB");
  }
  const std::string elements = std::string(element_name(a_element)) + "x" + std::string(element_name(b_element));
  if (elements == "e5m2xe5m2") {
    throw std::invalid_argument("recorded split-K: the libraries take e4m3 x e4m3, e4m3 x e5m2 and e5m2 x e4m3, not "
                                "e5m2 x e5m2");
  }
  const std::string_view recipe = recipe_name(library, fast_accum, a, b);
  const std::string_view d = lookup.bf16_d ? "bf16" : "f32";
  const std::string_view call = torch ? "torch" : "cublaslt";

  const auto index = [](const std::int64_t* first, const std::int64_t* last, std::int64_t v) -> std::ptrdiff_t {
    const std::int64_t* at = std::find(first, last, v);
    return at == last ? -1 : at - first;
  };
  const std::ptrdiff_t im = index(std::begin(kGridM), std::end(kGridM), M);
  const std::ptrdiff_t in = index(std::begin(kGridN), std::end(kGridN), N);
  const std::ptrdiff_t ik = index(std::begin(kGridK), std::end(kGridK), K);
  const std::string shape = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  if (im < 0 || in < 0 || ik < 0) {
    throw std::invalid_argument(
        "recorded split-K: " + shape + " is not on the recorded grid (M and N in " +
        grid_list(std::begin(kGridM), std::end(kGridM)) + ", K in " + grid_list(std::begin(kGridK), std::end(kGridK)) +
        "); on the GPU, scripts/cublaslt_split_k.py query " + shape + (torch ? "" : " --library cublaslt") +
        " asks its heuristic");
  }
  const std::size_t shape_index =
      (static_cast<std::size_t>(im) * std::size(kGridN) + static_cast<std::size_t>(in)) * std::size(kGridK) +
      static_cast<std::size_t>(ik);

  const std::vector<std::string>& tables = decoded_tables();
  for (std::size_t t = 0; t < std::size(kTables); ++t) {
    const RecordedSplitKTable& r = kTables[t];
    if (lookup.gpu != r.gpu || call != r.call || workspace_mib != r.workspace_mib || elements != r.elements ||
        recipe != r.recipe || d != r.d) {
      continue;
    }
    const char symbol = tables[t][shape_index];
    if (symbol == '-') {
      throw std::invalid_argument("recorded split-K: cuBLASLt's heuristic had no algorithm for " + std::string(call) +
                                  " " + std::string(recipe) + " " + elements + " " + std::string(d) + " D at " + shape +
                                  " on the " + (lookup.gpu == "h100" ? "H100" : "H200"));
    }
    return symbol - 'a' + 1;
  }
  throw std::logic_error("recorded split-K: no table for " + std::string(lookup.gpu) + " " + std::string(call) + " " +
                         elements + " " + std::string(recipe) + " " + std::string(d));
}

}  // namespace blockscale::emulator
