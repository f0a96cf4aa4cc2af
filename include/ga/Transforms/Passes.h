//===- Passes.h - gradient-accumulation passes ------------------*- C++ -*-===//

#ifndef GA_TRANSFORMS_PASSES_H
#define GA_TRANSFORMS_PASSES_H

#include "ga/IR/GADialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ga {

#define GEN_PASS_DECL
#include "ga/Transforms/Passes.h.inc"

/// The recompute sets of --ga-rematerialize (`recompute=`), from least to
/// most recomputation: none, pointwise, attention, products, layers. The
/// planner (--ga-choose-micro-batches with recompute=auto) weighs them all;
/// the benchmarks enumerate them from here.
ArrayRef<StringRef> getRecomputeSets();

#define GEN_PASS_REGISTRATION
#include "ga/Transforms/Passes.h.inc"

} // namespace mlir::ga

#endif // GA_TRANSFORMS_PASSES_H
