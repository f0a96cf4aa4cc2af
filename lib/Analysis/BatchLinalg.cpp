//===- BatchLinalg.cpp - the batch analysis of linalg ops -----------------===//
//
// The transfer function of linalg structured ops: the batch loop is read off
// the indexing maps of the per-sample operands, every operand's whole map is
// checked to be sliceable by the micro-batch, the payload's reads of captured
// per-sample values are classified through the lattice of the payload (the
// indices of `tensor.extract` are loop indices, constants or data), and each
// result gets its own class: whether it depends on parameters is the class of
// the value its payload yields for it.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDataFlow.h"
#include "ga/Analysis/BatchSlicing.h"
#include "ga/Analysis/BatchTransferOpInterface.h"
#include "ga/Analysis/MicroBatchBuilder.h"
#include "ga/Analysis/UserLocation.h"
#include "ga/IR/Diagnostics.h"
#include "ga/Utils/ConstantIndices.h"
#include "ga/Utils/Reductions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ga;

/// Whether result `index` of `op` is computed from a parameter: the class of
/// the value its payload yields for it (each result of a multi-result op on
/// its own).
static bool resultDependsOnParams(BatchTransfer &t, linalg::LinalgOp op,
                                  unsigned index) {
  Operation *yield = op.getBlock()->getTerminator();
  return t.getClass(yield->getOperand(index)).dependsOnParams;
}

/// Whether `value`, read in the payload of `op`, is the index of loop `loop`
/// of `op` itself (`linalg.index`, as the payload's lattice says).
static bool isOwnLoopIndex(BatchTransfer &t, Operation *op, Value value,
                           int64_t loop) {
  BatchClass cls = t.getClass(value);
  Operation *def = value.getDefiningOp();
  return cls.kind == BatchClass::Kind::LoopIndex && cls.dim == loop && def &&
         op->isProperAncestor(def);
}

/// Whether `value` is captured by `op` from above.
static bool isCaptured(Operation *op, Value value) {
  return !op->isAncestor(value.getParentRegion()->getParentOp());
}

/// Whether the loop `loop` of the linalg op `op` spans the whole batch
/// dimension of the per-sample `source` (of class `cls`).
static bool spansBatch(BatchTransfer &t, Operation *op, int64_t loop,
                       Value source, const BatchClass &cls) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  int64_t extent = cast<ShapedType>(source.getType()).getDimSize(cls.dim);
  if (!ShapedType::isDynamic(extent))
    return linalgOp.getStaticLoopRanges()[loop] == extent;
  // A dynamic batch: some operand indexed by the plain loop must be sized by
  // the batch extent (a tensor.empty sized with tensor.dim of the batch).
  AffineExpr loopExpr = getAffineDimExpr(loop, op->getContext());
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<unsigned> position =
        linalgOp.getMatchingIndexingMap(&operand).getResultPosition(loopExpr);
    auto empty = operand.get().getDefiningOp<tensor::EmptyOp>();
    if (!position || !empty || !empty.getType().isDynamicDim(*position))
      continue;
    if (t.getBatchExtentFactor(empty.getDynamicSize(*position)) == cls.factor)
      return true;
  }
  return false;
}

/// For a linalg op without per-sample operands: the (loop, factor) at whose
/// `linalg.index` its payload reads every captured per-sample value, if there
/// is one.
static std::optional<std::pair<int64_t, int64_t>>
inferBatchLoopFromPayload(BatchTransfer &t, Operation *op) {
  std::optional<std::pair<int64_t, int64_t>> found;
  bool consistent = true;
  op->walk([&](tensor::ExtractOp extract) {
    Value source = extract.getTensor();
    if (!isCaptured(op, source))
      return;
    BatchClass cls = t.getClass(source);
    if (!cls.isBatched())
      return;
    Value index = extract.getIndices()[cls.dim];
    BatchClass indexClass = t.getClass(index);
    if (indexClass.kind != BatchClass::Kind::LoopIndex ||
        !isOwnLoopIndex(t, op, index, indexClass.dim)) {
      consistent = false;
      return;
    }
    std::pair<int64_t, int64_t> layout(indexClass.dim, cls.factor);
    consistent &= !found || *found == layout;
    found = layout;
    consistent &= spansBatch(t, op, indexClass.dim, source, cls);
  });
  if (!consistent)
    return std::nullopt;
  return found;
}

/// Checks that every operand of `op` is read through its indexing map in a
/// way the rewrite slices exactly for the batch loop `loop` (the rule of
/// BatchSlicing.h), and that every per-sample operand is sliced along its
/// per-sample dimension. Returns the slicing: the proof the rewrite uses.
static FailureOr<LoopSlicing> checkIndexingMaps(BatchTransfer &t, Operation *op,
                                                int64_t loop) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  std::string reason;
  FailureOr<LoopSlicing> slicing =
      getLoopSlicing(linalgOp, loop, /*culprit=*/nullptr, &reason);
  if (failed(slicing)) {
    t.error(op) << DiagnosticCode::BatchDimensionMoved << reason;
    return failure();
  }
  for (OpOperand &operand : op->getOpOperands()) {
    BatchClass cls = t.getClass(operand.get());
    std::optional<unsigned> dim =
        slicing->operandDims[operand.getOperandNumber()];
    if (!cls.isBatched() || (dim && *dim == cls.dim))
      continue;
    t.error(op) << DiagnosticCode::BatchDimensionMoved << "operand #"
                << operand.getOperandNumber()
                << " is per-sample along dimension " << cls.dim
                << ", which the batch loop d" << loop << " does not index";
    return failure();
  }
  return slicing;
}

/// Checks how the payload of the per-sample linalg op `op`, whose batch loop
/// is `loop`, reads per-sample values captured from above: their sizes, and
/// elements at the op's own sample. Anything else is refused at the nested op.
static LogicalResult checkPayload(BatchTransfer &t, Operation *op, int64_t loop,
                                  int64_t factor) {
  WalkResult walk = op->walk([&](Operation *nested) {
    if (nested == op)
      return WalkResult::advance();
    for (OpOperand &use : nested->getOpOperands()) {
      Value value = use.get();
      if (!isCaptured(op, value))
        continue;
      BatchClass cls = t.getClass(value);
      if (!cls.isBatched())
        continue;
      // The size of a per-sample value is a number like at the top level
      // (the transfer function of tensor.dim makes it a batch extent).
      if (auto dim = dyn_cast<tensor::DimOp>(nested)) {
        if (DimIndex dimIndex = getDimIndex(dim); dimIndex.isOutOfRange()) {
          appendDimIndexReason(t.error(nested), dimIndex);
          return WalkResult::interrupt();
        }
        std::optional<int64_t> index = getConstantDimIndex(dim);
        if (index && (*index == cls.dim ||
                      !cast<ShapedType>(value.getType()).isDynamicDim(*index)))
          continue;
      }
      // A gather from the captured value at the op's own sample (the way
      // nll_loss reads the label's logit) reads the micro-batch's copy of it
      // at the position of the sample in the micro-batch.
      if (auto extract = dyn_cast<tensor::ExtractOp>(nested);
          extract && use.getOperandNumber() == 0) {
        OpOperand &indexUse = extract->getOpOperand(1 + cls.dim);
        if (isOwnLoopIndex(t, op, indexUse.get(), loop) &&
            cls.factor == factor) {
          t.addLocalBatchIndex(indexUse);
          continue;
        }
        t.error(nested)
            << DiagnosticCode::IndexedRead << "'" << op->getName()
            << "' reads a per-sample value captured from above at a batch "
               "index other than its own batch loop d"
            << loop
            << " (a constant, data or a computed index): a micro-batch "
               "holds only its own samples";
        return WalkResult::interrupt();
      }
      t.error(nested) << DiagnosticCode::IndexedRead << "'" << op->getName()
                      << "' uses a per-sample value captured from above in '"
                      << nested->getName()
                      << "': payloads may read one only with tensor.extract "
                         "at the op's batch loop index (pass it as an "
                         "operand otherwise)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// A reduction over the batch nested in a region is exact only in a branch
/// of a top-level scf.if whose condition does not depend on the samples (a
/// hyper-parameter flag, a step counter): every micro-batch takes the same
/// branch as the full batch, so the rewrite accumulates the partials inside
/// that branch in every micro-batch and combines them with the original init
/// in the branch after the loop.
static LogicalResult checkGuardedReduction(BatchTransfer &t,
                                           linalg::LinalgOp op) {
  Operation *parent = op->getParentOp();
  auto ifOp = dyn_cast<scf::IfOp>(parent);
  if (!ifOp || !isa<func::FuncOp>(ifOp->getParentOp())) {
    t.error(op) << DiagnosticCode::ControlFlow
                << "reduction over the batch inside '" << parent->getName()
                << "' is not supported: reduce after the region (only a "
                   "top-level scf.if on a condition that does not depend on "
                   "the samples may hold one)";
    return failure();
  }
  BatchClass condition = t.getClass(ifOp.getCondition());
  if (!condition.isUniform()) {
    Diagnostic &diag = t.error(op)
                       << DiagnosticCode::ControlFlow
                       << "reduction over the batch inside 'scf.if' whose "
                          "condition depends on the samples: micro-batches "
                          "could take other branches than the full batch; "
                          "reduce after the region";
    attachOriginNote(
        diag, condition.origin,
        "the condition is computed from this reduction over the batch");
    return failure();
  }
  // The accumulators start before the loop, outside the branch: their sizes
  // must be known there.
  for (Value init : op.getDpsInits()) {
    if (cast<ShapedType>(init.getType()).hasStaticShape() ||
        !ifOp->isAncestor(init.getParentRegion()->getParentOp()))
      continue;
    t.error(op) << DiagnosticCode::ControlFlow
                << "reduction over the batch inside 'scf.if' with dynamic "
                   "result sizes computed inside the branch: compute its init "
                   "before the scf.if";
    return failure();
  }
  return success();
}

/// The batch loop of the linalg op `op` and the factor of its samples: the
/// loop that indexes its per-sample operands along their per-sample
/// dimension, or the loop at which its payload reads captured per-sample
/// values; none (and `op` refused) when they disagree or there is none.
static std::optional<std::pair<int64_t, int64_t>>
findBatchLoop(BatchTransfer &t, linalg::LinalgOp linalgOp) {
  Operation *op = linalgOp;
  int64_t loop = -1, factor = 1;
  unsigned firstOperand = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    BatchClass cls = t.getClass(operand.get());
    if (!cls.isBatched())
      continue;
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    auto dimExpr = dyn_cast<AffineDimExpr>(map.getResult(cls.dim));
    if (!dimExpr) {
      std::string expr;
      llvm::raw_string_ostream(expr) << map.getResult(cls.dim);
      t.error(op) << DiagnosticCode::BatchDimensionMoved << "operand #"
                  << operand.getOperandNumber() << " is indexed by '" << expr
                  << "' along its per-sample dimension " << cls.dim
                  << "; only a plain loop dimension keeps samples apart";
      return std::nullopt;
    }
    int64_t position = dimExpr.getPosition();
    if (loop < 0) {
      loop = position;
      factor = cls.factor;
      firstOperand = operand.getOperandNumber();
      continue;
    }
    if (position != loop) {
      t.error(op) << DiagnosticCode::SamplesCombined
                  << "batch coupling: operands #" << firstOperand << " and #"
                  << operand.getOperandNumber()
                  << " are per-sample along different loop dimensions (d"
                  << loop << " and d" << position
                  << "), which combines every sample with every other";
      return std::nullopt;
    }
    if (cls.factor != factor) {
      t.error(op) << DiagnosticCode::BatchDimensionMoved << "operands #"
                  << firstOperand << " and #" << operand.getOperandNumber()
                  << " lay out samples differently along loop d" << loop;
      return std::nullopt;
    }
  }

  // Without per-sample operands (a one-hot of captured labels written into
  // a tensor.empty), the batch loop is the loop whose linalg.index the
  // payload reads a captured per-sample value at.
  if (loop < 0) {
    std::optional<std::pair<int64_t, int64_t>> inferred =
        inferBatchLoopFromPayload(t, op);
    if (!inferred) {
      t.error(op) << DiagnosticCode::IndexedRead << "no operand of '"
                  << op->getName()
                  << "' is per-sample, and its payload does not read the "
                     "per-sample values it captures at one of its loops that "
                     "spans the batch: pass them as operands so that the op "
                     "has a batch loop";
      return std::nullopt;
    }
    std::tie(loop, factor) = *inferred;
  }
  return std::make_pair(loop, factor);
}

/// The classes of the results of `op`, which reduces over its batch loop
/// `info.batchLoop`; false when it is refused.
static bool transferBatchReduction(BatchTransfer &t, linalg::LinalgOp linalgOp,
                                   PerSampleOpInfo &info) {
  Operation *op = linalgOp;
  int64_t loop = info.batchLoop;
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  SmallVector<Value> inputs = getOpInputs(op);
  // A reduction over the batch: at the top level of the step, where the
  // rewrite turns it into a loop-carried accumulator, or in a branch of a
  // top-level scf.if whose condition every micro-batch evaluates alike (see
  // checkGuardedReduction).
  if (!isa<func::FuncOp>(op->getParentOp()) &&
      failed(checkGuardedReduction(t, linalgOp)))
    return false;
  SmallVector<std::optional<vector::CombiningKind>> combiners;
  info.hasNamedCombiners = true;
  for (OpResult result : op->getResults()) {
    AffineMap map = linalgOp.getIndexingMapMatchingResult(result);
    if (map.isFunctionOfDim(loop)) {
      t.error(op) << DiagnosticCode::BatchDimensionMoved << "result #"
                  << result.getResultNumber()
                  << " is indexed by the per-sample reduction loop d" << loop;
      return false;
    }
    combiners.push_back(getCombinerKind(linalgOp, result.getResultNumber()));
    info.hasNamedCombiners &= combiners.back().has_value();
  }
  if (!info.hasNamedCombiners && !isa<func::FuncOp>(op->getParentOp())) {
    t.error(op) << DiagnosticCode::ControlFlow
                << "reduction over the batch inside 'scf.if' whose combiner "
                   "is not a single associative op: its micro-batch partials "
                   "cannot be combined inside the branch; reduce after the "
                   "region";
    return false;
  }
  if (!info.hasNamedCombiners) {
    for (int64_t d = 0; d < loop; ++d) {
      if (iterators[d] != utils::IteratorType::reduction)
        continue;
      t.error(op) << DiagnosticCode::UnsplittableReduction
                  << "reduction over the batch whose combiner is not a single "
                     "associative op, and the batch loop d"
                  << loop << " is not its outermost reduction loop (d" << d
                  << " is): splitting it into micro-batches would reorder its "
                     "updates";
      return false;
    }
  }
  // Accumulating into a value that is itself reduced over the batch with the
  // same combiner is a chain of accumulations, not a coupling.
  // The exemption is for the init operand only: the same value read as an
  // input of the per-sample computation is a coupling like any other.
  SmallVector<Value> chained;
  DenseSet<unsigned> chainedOperands;
  for (auto [index, init] : llvm::enumerate(linalgOp.getDpsInitsMutable())) {
    BatchClass cls = t.getClass(init.get());
    std::optional<vector::CombiningKind> combiner = combiners[index];
    if (cls.kind == BatchClass::Kind::Reduced && cls.combiner && combiner &&
        *cls.combiner == *combiner) {
      chained.push_back(init.get());
      chainedOperands.insert(init.getOperandNumber());
    }
  }
  SmallVector<Value> coupled;
  for (auto [index, input] : llvm::enumerate(inputs))
    if (!chainedOperands.contains(index))
      coupled.push_back(input);
  unsigned level = t.checkCoupling(coupled);
  for (Value init : chained)
    level = std::max(level, t.getClass(init).level);
  for (OpResult result : op->getResults()) {
    BatchClass cls;
    cls.kind = BatchClass::Kind::Reduced;
    cls.combiner = combiners[result.getResultNumber()];
    cls.level = level;
    cls.dependsOnParams =
        resultDependsOnParams(t, linalgOp, result.getResultNumber());
    cls.origin = op;
    t.setResult(result.getResultNumber(), cls);
  }
  return true;
}

void mlir::ga::transferLinalg(BatchTransfer &t) {
  Operation *op = t.getOp();
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (!linalgOp.hasPureTensorSemantics()) {
    t.error(op) << DiagnosticCode::OpNotAnalyzed
                << "linalg op on buffers in a training step: the micro-batch "
                   "rewrite works on tensors";
    return;
  }
  std::optional<std::pair<int64_t, int64_t>> batchLoop =
      findBatchLoop(t, linalgOp);
  if (!batchLoop)
    return;
  auto [loop, factor] = *batchLoop;
  FailureOr<LoopSlicing> slicing = checkIndexingMaps(t, op, loop);
  if (failed(slicing) || failed(checkPayload(t, op, loop, factor)))
    return;

  SmallVector<Value> inputs = getOpInputs(op);

  PerSampleOpInfo info;
  info.batchLoop = loop;
  info.factor = factor;
  info.operandDims = std::move(slicing->operandDims);
  info.reducesBatch =
      linalgOp.getIteratorTypesArray()[loop] == utils::IteratorType::reduction;

  if (!info.reducesBatch) {
    unsigned level = t.checkCoupling(inputs);
    for (OpResult result : op->getResults()) {
      AffineMap map = linalgOp.getIndexingMapMatchingResult(result);
      std::optional<unsigned> position =
          map.getResultPosition(getAffineDimExpr(loop, op->getContext()));
      if (!position) {
        t.error(op) << DiagnosticCode::BatchDimensionMoved << "result #"
                    << result.getResultNumber()
                    << " does not keep the per-sample loop d" << loop
                    << " although it is parallel";
        return;
      }
      BatchClass cls = BatchClass::getBatched(*position, factor);
      cls.level = level;
      cls.dependsOnParams =
          resultDependsOnParams(t, linalgOp, result.getResultNumber());
      t.setResult(result.getResultNumber(), cls);
    }
    t.setPerSample(info);
    return;
  }

  if (transferBatchReduction(t, linalgOp, info))
    t.setPerSample(info);
}

//===----------------------------------------------------------------------===//
// Re-creating linalg ops for one micro-batch
//===----------------------------------------------------------------------===//

/// The per-sample linalg op `op` for one micro-batch: a tile of its batch
/// loop, each operand sliced along the dimension the analysis proved the
/// loop indexes (PerSampleOpInfo::operandDims), captured per-sample values
/// read at the micro-batch's local positions where the analysis found the
/// payload indexes them at its own sample.
static Operation *materializeLinalg(MicroBatchBuilder &b,
                                    linalg::LinalgOp linalgOp) {
  Operation *op = linalgOp;
  const PerSampleOpInfo *info = b.getAnalysis().getOpInfo(op);
  if (!info || info->operandDims.size() != op->getNumOperands())
    return nullptr;
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    if (Value override = b.getOverride(operand)) {
      operands.push_back(override);
      continue;
    }
    std::optional<unsigned> dim = info->operandDims[operand.getOperandNumber()];
    if (b.getClass(value).isBatched() || !dim)
      operands.push_back(b.get(value));
    else
      operands.push_back(b.getTile(value, *dim, info->factor));
  }
  Operation *clone = b.clone(op, operands);
  for (auto [result, init] : llvm::zip(
           clone->getResults(), cast<linalg::LinalgOp>(clone).getDpsInits()))
    result.setType(init.getType());
  // The clone's payload has the structure of the original: the uses the
  // analysis found to index captured per-sample values locally correspond
  // in walk order.
  SmallVector<Operation *> fromOps, toOps;
  op->walk([&](Operation *nested) { fromOps.push_back(nested); });
  clone->walk([&](Operation *nested) { toOps.push_back(nested); });
  DenseSet<OpOperand *> local;
  for (auto [original, cloned] : llvm::zip_equal(fromOps, toOps))
    for (auto [from, to] :
         llvm::zip_equal(original->getOpOperands(), cloned->getOpOperands()))
      if (b.getAnalysis().isLocalBatchIndex(from))
        local.insert(&to);
  b.offsetBatchIndices(clone, info->batchLoop, info->factor, local);
  return clone;
}

/// The tile of `result` of a linalg op that is not per-sample (a broadcast
/// bias, a table of per-sample weights): recomputed as a tile of the
/// parallel loop that indexes `dim` when every operand is sliced exactly by
/// that tile, the rule the analysis proves for per-sample ops
/// (getLoopSlicing); a map that uses the loop in a compound expression
/// (`d0 floordiv 2`, `B - 1 - d0`) or twice (`(d0, d0)`) reads elements
/// outside the tile: null, and the rewrite slices the full value.
static Value recomputeLinalgTile(MicroBatchBuilder &b,
                                 linalg::LinalgOp linalgOp, OpResult result,
                                 int64_t dim, int64_t factor) {
  if (!linalgOp.hasPureTensorSemantics())
    return nullptr;
  AffineMap map = linalgOp.getIndexingMapMatchingResult(result);
  auto loopExpr = dyn_cast<AffineDimExpr>(map.getResult(dim));
  if (!loopExpr || linalgOp.getIteratorTypesArray()[loopExpr.getPosition()] !=
                       utils::IteratorType::parallel)
    return nullptr;
  unsigned loop = loopExpr.getPosition();
  FailureOr<LoopSlicing> slicing = getLoopSlicing(linalgOp, loop);
  if (failed(slicing))
    return nullptr;
  SmallVector<Value> operands;
  for (OpOperand &operand : linalgOp->getOpOperands()) {
    std::optional<unsigned> sliced =
        slicing->operandDims[operand.getOperandNumber()];
    operands.push_back(sliced ? b.getTile(operand.get(), *sliced, factor)
                              : b.getUniform(operand.get()));
  }
  Operation *clone = b.clone(linalgOp, operands);
  for (auto [cloned, init] : llvm::zip(
           clone->getResults(), cast<linalg::LinalgOp>(clone).getDpsInits()))
    cloned.setType(init.getType());
  b.offsetBatchIndices(clone, loop, factor, {});
  return clone->getResult(result.getResultNumber());
}

namespace {
/// The model of every linalg structured op: what its indexing maps and
/// iterator types declare.
struct LinalgOpModel : BatchTransferOpInterface::FallbackModel<LinalgOpModel> {
  void transferBatch(Operation *, BatchTransfer &t) const { transferLinalg(t); }
  bool holdsStepCode(Operation *) const { return false; }
  bool keepsStackedBatches(Operation *) const { return false; }
  Operation *materializeAtMicroBatch(Operation *op,
                                     MicroBatchBuilder &b) const {
    return materializeLinalg(b, cast<linalg::LinalgOp>(op));
  }
  Value recomputeTile(Operation *op, MicroBatchBuilder &b, OpResult result,
                      int64_t dim, int64_t factor) const {
    return recomputeLinalgTile(b, cast<linalg::LinalgOp>(op), result, dim,
                               factor);
  }
};
} // namespace

void mlir::ga::registerLinalgBatchModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *dialect) {
    // Every structured op of the dialect, named or generic, by the
    // interface it declares rather than by a list of names.
    for (RegisteredOperationName name : ctx->getRegisteredOperations())
      if (&name.getDialect() == dialect &&
          name.hasInterface<linalg::LinalgOp>())
        name.attachInterface<LinalgOpModel>();
  });
}
