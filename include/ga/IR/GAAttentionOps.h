//===- GAAttentionOps.h - fused attention of ga -----------------*- C++ -*-===//
//
// `ga.attention` and `ga.attention_backward` (include/ga/IR/GAAttentionOps.td)
// and the roles of their loops, read off their indexing maps.
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GAATTENTIONOPS_H
#define GA_IR_GAATTENTIONOPS_H

#include "ga/IR/GAOps.h"

#include "mlir/IR/AffineMap.h"

#include <string>

namespace mlir::ga {

/// The roles of the loops of an attention op's iteration space, read off
/// its indexing maps (query, key, value, [mask,] output, logsumexp): a
/// batch loop indexes query, key, value and output; an m loop query and
/// output only; k1 query and key; k2 key and value; n value and output.
struct AttentionLoops {
  enum class Role { Batch, M, K1, K2, N };

  /// The role of each loop.
  SmallVector<Role> roles;
  /// The m loop that `causal` compares with k2: the last m in query's map.
  unsigned queryPosition = 0;
  unsigned k1 = 0, k2 = 0, n = 0;

  unsigned getNumLoops() const { return roles.size(); }
  /// The name of a role, for diagnostics.
  static StringRef getRoleName(Role role);

  /// The roles of the loops of `maps`, or failure with the reason in
  /// `reason` (if given) when the maps are not those of an attention: five
  /// or six maps over the same loops, query, key, value, output and
  /// logsumexp indexed by plain loops each at most once, every loop with
  /// one of the roles, exactly one k1, k2 and n loop, at least one m.
  static FailureOr<AttentionLoops> infer(ArrayRef<AffineMap> maps,
                                         std::string *reason = nullptr);
};

} // namespace mlir::ga

#define GET_OP_CLASSES
#include "ga/IR/GAAttentionOps.h.inc"

#endif // GA_IR_GAATTENTIONOPS_H
