//===- PipelineUtils.h - steps the lowering pipelines share -----*- C++ -*-===//
//
// Internal to lib/Pipelines: sequences of declared passes that more than one
// pipeline adds in the same configuration (defined in GAPipelineStages).
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_PIPELINES_PIPELINEUTILS_H
#define GA_LIB_PIPELINES_PIPELINEUTILS_H

#include "mlir/Pass/PassManager.h"

namespace mlir::ga {
struct AccumulatePipelineOptions;
} // namespace mlir::ga

namespace mlir::ga::detail {

/// The values of a list option, as strings.
template <typename ListT> SmallVector<std::string> toVector(const ListT &list) {
  return SmallVector<std::string>(list.begin(), list.end());
}

/// Adds what every --ga-accumulate runs first: the range check of constant
/// indices, then --ga-mark-batch-args when `batch-args` is given.
void addCheckAndMark(OpPassManager &pm,
                     const AccumulatePipelineOptions &options);

/// One-shot bufferization of a training step as both lowerings do it: across
/// function boundaries with identity layouts (callers pass plain dense
/// descriptors), fresh buffers allowed out of loops (a micro-batch loop may
/// yield one when an accumulator cannot be updated in place), then
/// canonicalization.
void addStepBufferization(OpPassManager &pm);

} // namespace mlir::ga::detail

#endif // GA_LIB_PIPELINES_PIPELINEUTILS_H
