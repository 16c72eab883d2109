// SPDX-License-Identifier: Apache-2.0
// The rules the reference operations check before computing, and the error that names the one
// broken. Every message starts with the operation and the rule, then the offending sizes or
// types, e.g.
//   "mma_scaled [scale_batch]: x_scale batch 2 must equal x batch 3"
//   "mma_scaled [k_divisible]: K=96 not divisible by K_s=5"
//   "mma_scaled [block_size]: float4_e2m1fn with float8_ue4m3 scales requires B=16, got 32"
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace blockscale::reference {

enum class Rule : std::uint8_t {
  rank,              // every operand has rank 2 or 3 (mma / matmul: all the same rank)
  empty_dimension,   // every extent is at least 1
  contraction,       // x [..., M, K] and y [..., K, N] agree on K
  output_shape,      // acc is [..., M, N]
  batch_broadcast,   // batches broadcast: each is 1 or the result batch
  scale_rank,        // a scale has its operand's rank
  scale_batch,       // a scale's batch equals its operand's batch exactly (mma_scaled)
  scale_shape,       // x_scale is [..., M, K_s], y_scale [..., K_s, N], one K_s for both
  k_divisible,       // K is a multiple of K_s
  dtype,             // the operand / scale / accumulator types form an allowed row of the table
  block_size,        // B = K / K_s is allowed for the types
  extension,         // a combination only the hardware extension allows, and it is off
  numerics,          // the numerics options make sense for the operation
  no_model,          // hardware(model) names a registered model
  tensor_scale,      // block-scaled tensors passed to mma_scaled carry no per-tensor scale
};

std::string to_string(Rule r);

// Thrown for every broken rule; what() is the full message, rule() says which.
class RuleError : public std::invalid_argument {
 public:
  RuleError(Rule rule, const std::string& operation, const std::string& detail);
  Rule rule() const { return rule_; }

 private:
  Rule rule_;
};

}  // namespace blockscale::reference
