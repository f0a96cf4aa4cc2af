//===- StepWork.cpp - the arithmetic work of a rewritten step -------------===//
//
// What --ga-choose-micro-batches compares candidates' time by: the work of
// the step rewritten with a recompute set, counted on its tensor ops, and
// the parameter traffic of each micro-batch.
//
//===----------------------------------------------------------------------===//

#include "StepMemory.h"

#include "ga/Pipelines/Pipelines.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::ga;

/// The number of times `op` runs per call: the product of the constant trip
/// counts of the loops around it (a loop with run-time bounds counts once).
static int64_t getTripCount(Operation *op) {
  int64_t trips = 1;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>())
    if (std::optional<APInt> count = loop.getStaticTripCount())
      trips *= std::max<int64_t>(count->getSExtValue(), 1);
  return trips;
}

/// The work of one linalg op: its iterations times the operations of its
/// payload (at least one: a copy, a fill), 0 when a loop has no static
/// size.
static int64_t getOpWork(linalg::LinalgOp op) {
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return 0;
    iterations *= range;
  }
  int64_t payload = 0;
  if (Block *body = op.getBlock())
    payload = std::distance(body->begin(), body->end()) - 1;
  return iterations * std::max<int64_t>(payload, 1);
}

/// The work of the element-wise ops on whole tensors (before their
/// conversion to linalg): one operation per element.
static int64_t getTensorOpWork(Operation *op) {
  if (!OpTrait::hasElementwiseMappableTraits(op) || op->getNumResults() != 1)
    return 0;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

FailureOr<int64_t>
mlir::ga::detail::estimateStepWork(ModuleOp module, func::FuncOp func,
                                   StringRef accumulateOptions) {
  PassManager pm(module.getContext());
  if (failed(addMicroBatchRewrite(pm, func, 1, accumulateOptions)))
    return failure();
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  if (failed(pm.run(*copy)))
    return failure();
  auto rewritten = copy->lookupSymbol<func::FuncOp>(func.getSymName());
  int64_t work = 0;
  rewritten.walk([&](Operation *op) {
    int64_t opWork = 0;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      opWork = getOpWork(linalgOp);
    else
      opWork = getTensorOpWork(op);
    work += opWork * getTripCount(op);
  });
  return work;
}
