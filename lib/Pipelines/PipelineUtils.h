//===- PipelineUtils.h - shared lowering steps, by their old names -*- C++
//-*-===//
//
// The C++ entry points by which the pipelines add the declared passes of
// include/ga/Codegen/Common (ga-prepare-functions-for-llvm,
// ga-duplicate-shared-fills, ga-verify-lowered). Kept so that pipeline code
// written against them keeps building; new code can call the generated
// create* functions of ga/Codegen/Common/Passes.h directly. Internal to
// lib/Pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_PIPELINES_PIPELINEUTILS_H
#define GA_LIB_PIPELINES_PIPELINEUTILS_H

#include "ga/Codegen/Common/Passes.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <memory>

namespace mlir::ga::detail {

using ::mlir::ga::FillKind;
using ::mlir::ga::FillPlacement;

/// ga-prepare-functions-for-llvm{c-interface=`cInterface`}.
std::unique_ptr<Pass> createPrepareFunctionsForLLVMPass(bool cInterface);

/// ga-duplicate-shared-fills{kind=`kind` placement=`placement`}.
std::unique_ptr<Pass> createDuplicateSharedFillsPass(FillKind kind,
                                                     FillPlacement placement);

/// ga-verify-lowered{by=`byWhat`} allowing the ops `allowed` accepts.
/// `argument` (the name of the pipeline step) is no longer used: the pass is
/// ga-verify-lowered.
std::unique_ptr<Pass>
createVerifyLoweredPass(StringRef argument, StringRef byWhat,
                        std::function<bool(Operation *)> allowed);

/// One-shot bufferization of a training step as both lowerings do it: across
/// function boundaries with identity layouts (callers pass plain dense
/// descriptors), fresh buffers allowed out of loops (a micro-batch loop may
/// yield one when an accumulator cannot be updated in place), then
/// canonicalization.
void addStepBufferization(OpPassManager &pm);

} // namespace mlir::ga::detail

#endif // GA_LIB_PIPELINES_PIPELINEUTILS_H
