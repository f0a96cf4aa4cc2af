//===- PipelineUtils.cpp - shared lowering steps, by their old names ------===//

#include "PipelineUtils.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::ga;

std::unique_ptr<Pass>
mlir::ga::detail::createPrepareFunctionsForLLVMPass(bool cInterface) {
  PrepareFunctionsForLLVMOptions options;
  options.cInterface = cInterface;
  return createPrepareFunctionsForLLVM(options);
}

std::unique_ptr<Pass>
mlir::ga::detail::createDuplicateSharedFillsPass(FillKind kind,
                                                 FillPlacement placement) {
  DuplicateSharedFillsOptions options;
  options.kind = kind;
  options.placement = placement;
  return createDuplicateSharedFills(options);
}

std::unique_ptr<Pass> mlir::ga::detail::createVerifyLoweredPass(
    StringRef argument, StringRef byWhat,
    std::function<bool(Operation *)> allowed) {
  VerifyLoweredOptions options;
  options.byWhat = byWhat.str();
  return createVerifyLowered(options, std::move(allowed));
}

void mlir::ga::detail::addStepBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
}
