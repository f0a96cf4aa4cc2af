//===- AttentionDecomposition.h - attention into linalg ops -----*- C++ -*-===//
//
// The `linalg::AggregatedOpInterface` models of `ga.attention` and
// `ga.attention_backward` (lib/Codegen/Common/DecomposeAttention.cpp):
// --ga-decompose-aggregated-ops lowers them into linalg.generic ops.
//
//===----------------------------------------------------------------------===//

#ifndef GA_CODEGEN_COMMON_ATTENTIONDECOMPOSITION_H
#define GA_CODEGEN_COMMON_ATTENTIONDECOMPOSITION_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::ga {

/// Attaches the decompositions of the attention ops.
void registerAttentionDecompositions(DialectRegistry &registry);

} // namespace mlir::ga

#endif // GA_CODEGEN_COMMON_ATTENTIONDECOMPOSITION_H
