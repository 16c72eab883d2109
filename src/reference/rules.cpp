// SPDX-License-Identifier: Apache-2.0
#include "blockscale/reference/rules.h"

namespace blockscale::reference {

std::string to_string(Rule r) {
  switch (r) {
    case Rule::rank: return "rank";
    case Rule::empty_dimension: return "empty_dimension";
    case Rule::contraction: return "contraction";
    case Rule::output_shape: return "output_shape";
    case Rule::batch_broadcast: return "batch_broadcast";
    case Rule::scale_rank: return "scale_rank";
    case Rule::scale_batch: return "scale_batch";
    case Rule::scale_shape: return "scale_shape";
    case Rule::k_divisible: return "k_divisible";
    case Rule::dtype: return "dtype";
    case Rule::block_size: return "block_size";
    case Rule::extension: return "extension";
    case Rule::numerics: return "numerics";
    case Rule::no_model: return "no_model";
    case Rule::tensor_scale: return "tensor_scale";
  }
  return "unknown";
}

RuleError::RuleError(Rule rule, const std::string& operation, const std::string& detail)
    : std::invalid_argument(operation + " [" + to_string(rule) + "]: " + detail), rule_(rule) {}

}  // namespace blockscale::reference
