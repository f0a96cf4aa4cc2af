//===- MicroBatchBuilder.cpp - re-creating ops for one micro-batch --------===//
//
// The dispatch of the rewrite's re-creation of ops to the op families'
// BatchTransferOpInterface models: the same table, in the same order, as the
// analysis's transfer functions (BatchDataFlow.cpp), so that an op is built
// by the rule that accepted it.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/MicroBatchBuilder.h"
#include "ga/Analysis/BatchTransferOpInterface.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ga;

Value MicroBatchBuilder::getAlong(Value value, int64_t dim, int64_t factor) {
  if (getClass(value).isBatched())
    return getMicro(value);
  if (isa<RankedTensorType>(value.getType()))
    return getTile(value, dim, factor);
  return getUniform(value);
}

SmallVector<OpFoldResult>
MicroBatchBuilder::getList(ArrayRef<OpFoldResult> list) {
  SmallVector<OpFoldResult> result;
  for (OpFoldResult ofr : list)
    result.push_back(isa<Value>(ofr) ? OpFoldResult(get(cast<Value>(ofr)))
                                     : ofr);
  return result;
}

SmallVector<OpFoldResult>
MicroBatchBuilder::getMicroSizes(ArrayRef<OpFoldResult> sizes,
                                 const BatchClass &cls) {
  SmallVector<OpFoldResult> result = getList(sizes);
  result[cls.dim] = getMicroSize(cls.factor);
  return result;
}

SmallVector<Type>
MicroBatchBuilder::getMicroTypes(ValueRange values,
                                 SmallVectorImpl<BatchClass> &classes) {
  SmallVector<Type> types;
  for (Value value : values) {
    BatchClass cls = getClass(value);
    classes.push_back(cls);
    types.push_back(cls.isBatched()
                        ? getMicroType(value.getType(), cls.dim, cls.factor)
                        : value.getType());
  }
  return types;
}

/// Whether the rule of elementwise ops applies to `op` (see
/// transferUnmodeledOp): no model, elementwise-mappable, no side effects.
static bool isElementwise(Operation *op) {
  return !isa<BatchTransferOpInterface>(op) && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op) && OpTrait::hasElementwiseMappableTraits(op);
}

Operation *mlir::ga::materializeOp(MicroBatchBuilder &b, Operation *op) {
  if (!b.getAnalysis().isPerSample(op))
    return nullptr;
  if (auto model = dyn_cast<BatchTransferOpInterface>(op))
    return model.materializeAtMicroBatch(b);
  if (isElementwise(op))
    return materializeElementwise(b, op);
  return nullptr;
}

Value mlir::ga::recomputeTile(MicroBatchBuilder &b, OpResult result,
                              int64_t dim, int64_t factor) {
  Operation *op = result.getOwner();
  if (b.getAnalysis().isPerSample(op))
    return nullptr;
  if (auto model = dyn_cast<BatchTransferOpInterface>(op))
    return model.recomputeTile(b, result, dim, factor);
  if (isElementwise(op))
    return recomputeElementwiseTile(b, result, dim, factor);
  return nullptr;
}
