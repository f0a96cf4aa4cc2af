//===- MicroBatchBuilder.h - ops re-created per micro-batch -----*- C++ -*-===//
//
// What an op family's BatchTransferOpInterface model reads when it re-creates
// its op for one micro-batch: the classes the batch analysis found, the
// micro-batch copies of values, and a builder positioned in the loop body.
// The rewrite (lib/Transforms/MicroBatch) implements it; the models, next to
// the transfer functions that accepted the op, decide how the op is sliced
// or recomputed, so that an op the analysis accepts is one the rewrite knows
// how to build, by the same rule.
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_MICROBATCHBUILDER_H
#define GA_ANALYSIS_MICROBATCHBUILDER_H

#include "ga/Analysis/BatchDependence.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::ga {

/// The micro-batch being built: one loop body of the rewrite.
class MicroBatchBuilder {
public:
  virtual ~MicroBatchBuilder() = default;

  /// The builder, positioned where the op's micro-batch copy goes.
  virtual OpBuilder &getBuilder() = 0;
  /// What the analysis found (classes, per-op information).
  virtual const BatchDependence &getAnalysis() const = 0;
  BatchClass getClass(Value value) const {
    return getAnalysis().getClass(value);
  }

  /// The micro-batch copy of the per-sample `value`.
  virtual Value getMicro(Value value) = 0;
  /// A value that is not per-sample, as the loop body sees it.
  virtual Value getUniform(Value value) = 0;
  /// The tile of the micro-batch of a tensor that is not per-sample but
  /// whose dimension `dim` spans the batch (`factor` entries per sample):
  /// recomputed when its producer's model proves it can be, sliced from the
  /// full value otherwise.
  virtual Value getTile(Value value, int64_t dim, int64_t factor) = 0;
  /// If the op being built replaces the start value of an operand (the
  /// accumulator of a reduction), that value.
  virtual Value getOverride(OpOperand &operand) = 0;

  /// `value` as the micro-batch reads it: its copy when per-sample, its
  /// loop-body value otherwise.
  Value get(Value value) {
    return getClass(value).isBatched() ? getMicro(value) : getUniform(value);
  }
  /// `value` read along `dim` of the batch (`factor` entries per sample):
  /// its copy when per-sample, its tile when it is a tensor that is not,
  /// its loop-body value otherwise.
  Value getAlong(Value value, int64_t dim, int64_t factor);
  /// `value` yielded as a value of class `cls` (a result of a region op).
  Value getAs(Value value, const BatchClass &cls) {
    return cls.isBatched() ? getAlong(value, cls.dim, cls.factor)
                           : getUniform(value);
  }
  /// The values of `list`, mapped with `get`.
  SmallVector<OpFoldResult> getList(ArrayRef<OpFoldResult> list);
  /// The sizes `sizes` of a shape whose dimension `cls.dim` spans the batch,
  /// mapped with `get`, that dimension's at micro-batch size.
  SmallVector<OpFoldResult> getMicroSizes(ArrayRef<OpFoldResult> sizes,
                                          const BatchClass &cls);

  /// The size of the micro-batch along a dimension with `factor` entries
  /// per sample.
  virtual OpFoldResult getMicroSize(int64_t factor) = 0;
  /// The position of the micro-batch's first entry in the full batch along
  /// a dimension with `factor` entries per sample.
  virtual Value getMicroOffset(int64_t factor) = 0;
  /// `type` with dimension `dim` at micro-batch size.
  virtual RankedTensorType getMicroType(Type type, int64_t dim,
                                        int64_t factor) = 0;
  /// The micro-batch types of `values`, whose classes are appended to
  /// `classes`.
  SmallVector<Type> getMicroTypes(ValueRange values,
                                  SmallVectorImpl<BatchClass> &classes);

  /// Clones `op` with `operands`; the values its regions capture are read
  /// with `get`.
  virtual Operation *clone(Operation *op, ArrayRef<Value> operands) = 0;
  /// Makes the `linalg.index` of loop `loop` in the linalg op `clone` global
  /// (offset by the micro-batch's first sample), except at the `local` uses,
  /// which index micro-batch copies of captured per-sample values.
  virtual void offsetBatchIndices(Operation *clone, int64_t loop,
                                  int64_t factor,
                                  const DenseSet<OpOperand *> &local) = 0;
  /// Maps the values `from` of the original step to their copies `to`.
  virtual void map(ValueRange from, ValueRange to) = 0;
  /// Re-creates the step code of `from`, but its terminator, at the end of
  /// `to` (whose arguments are mapped).
  virtual void cloneBlock(Block &from, Block &to) = 0;
};

/// Re-creates the per-sample op `op` for the micro-batch of `b` through its
/// BatchTransferOpInterface model, or the rule of elementwise ops; null for
/// an op the analysis never marks per-sample.
Operation *materializeOp(MicroBatchBuilder &b, Operation *op);
/// Recomputes the tile along `dim` (`factor` entries per sample) of `result`
/// of an op that is not per-sample, when its model proves that the tile is
/// computed from tiles of its operands; null otherwise (the caller slices
/// the full value).
Value recomputeTile(MicroBatchBuilder &b, OpResult result, int64_t dim,
                    int64_t factor);

/// The rule of elementwise ops without a model (BatchTensorOps.cpp): the
/// per-sample op `op` with every tensor operand read along its result's
/// batch dimension, and the tile of the result of one that is not
/// per-sample, computed from the tiles of its operands.
Operation *materializeElementwise(MicroBatchBuilder &b, Operation *op);
Value recomputeElementwiseTile(MicroBatchBuilder &b, OpResult result,
                               int64_t dim, int64_t factor);

} // namespace mlir::ga

#endif // GA_ANALYSIS_MICROBATCHBUILDER_H
