//===- BatchLinalg.cpp - the batch analysis of linalg ops -----------------===//
//
// Transfer function of linalg ops: the batch loop is read off the indexing
// maps of the per-sample operands, every operand's whole map is checked to be
// sliceable by the micro-batch, the payload's reads of captured per-sample
// values are classified, and each result gets its own class.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDependence.h"
#include "ga/Analysis/Reductions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ga;

bool BatchDependence::resultDependsOnParams(linalg::LinalgOp op,
                                            unsigned index) const {
  // Trace the yielded value back through the payload to the operands and
  // captured values it is computed from.
  Block *block = op.getBlock();
  SmallVector<Value> worklist{block->getTerminator()->getOperand(index)};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    auto arg = dyn_cast<BlockArgument>(value);
    if (arg && arg.getOwner() == block) {
      if (getClass(op->getOperand(arg.getArgNumber())).dependsOnParams)
        return true;
      continue;
    }
    Operation *owner =
        arg ? arg.getOwner()->getParentOp() : value.getDefiningOp();
    if (!op->isAncestor(owner)) {
      if (getClass(value).dependsOnParams)
        return true;
      continue;
    }
    llvm::append_range(worklist, getOpInputs(owner));
  }
  return false;
}

bool BatchDependence::spansBatch(Operation *op, int64_t loop, Value source,
                                 const BatchClass &cls) const {
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
    if (getBatchExtentFactor(empty.getDynamicSize(*position)) == cls.factor)
      return true;
  }
  return false;
}

std::optional<std::pair<int64_t, int64_t>>
BatchDependence::inferBatchLoopFromPayload(Operation *op) const {
  std::optional<std::pair<int64_t, int64_t>> found;
  bool consistent = true;
  op->walk([&](tensor::ExtractOp extract) {
    Value source = extract.getTensor();
    if (op->isAncestor(source.getParentRegion()->getParentOp()))
      return;
    BatchClass cls = getClass(source);
    if (!cls.isBatched())
      return;
    auto index = extract.getIndices()[cls.dim].getDefiningOp<linalg::IndexOp>();
    if (!index || index->getParentOp() != op) {
      consistent = false;
      return;
    }
    std::pair<int64_t, int64_t> layout(index.getDim(), cls.factor);
    consistent &= !found || *found == layout;
    found = layout;
    consistent &= spansBatch(op, index.getDim(), source, cls);
  });
  if (!consistent)
    return std::nullopt;
  return found;
}

LogicalResult BatchDependence::checkIndexingMaps(Operation *op, int64_t loop) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    BatchClass cls = getClass(operand.get());
    SmallVector<unsigned> reading;
    for (auto [position, expr] : llvm::enumerate(map.getResults()))
      if (expr.isFunctionOfDim(loop))
        reading.push_back(position);
    if (reading.empty())
      continue;
    // The rewrite slices the operand along the one dimension that the batch
    // loop indexes, by the micro-batch's range of that loop.
    unsigned position = cls.isBatched() ? cls.dim : reading.front();
    if (reading.size() == 1 && reading.front() == position &&
        isa<AffineDimExpr>(map.getResult(position)))
      continue;
    std::string text;
    llvm::raw_string_ostream(text) << map;
    error(op) << "operand #" << operand.getOperandNumber()
              << " is read through " << text << ", which uses the batch loop d"
              << loop
              << (reading.size() > 1 ? " in more than one dimension"
                                     : " in a compound expression")
              << ": a micro-batch slices an operand only along one dimension "
                 "indexed by the plain batch loop";
    return failure();
  }
  return success();
}

LogicalResult BatchDependence::checkPayload(Operation *op, int64_t loop,
                                            int64_t factor) {
  WalkResult walk = op->walk([&](Operation *nested) {
    if (nested == op)
      return WalkResult::advance();
    for (OpOperand &use : nested->getOpOperands()) {
      Value value = use.get();
      if (op->isAncestor(value.getParentRegion()->getParentOp()))
        continue;
      BatchClass cls = getClass(value);
      if (!cls.isBatched())
        continue;
      // The size of a per-sample value is a number like at the top level.
      if (auto dim = dyn_cast<tensor::DimOp>(nested)) {
        std::optional<int64_t> index = dim.getConstantIndex();
        if (index && *index == cls.dim) {
          batchExtents[dim.getResult()] = cls.factor;
          continue;
        }
        if (index && !cast<ShapedType>(value.getType()).isDynamicDim(*index))
          continue;
      }
      // A gather from the captured value at the op's own sample (the way
      // nll_loss reads the label's logit) reads the micro-batch's copy of it
      // at the position of the sample in the micro-batch.
      if (auto extract = dyn_cast<tensor::ExtractOp>(nested);
          extract && use.getOperandNumber() == 0) {
        OpOperand &indexUse = extract->getOpOperand(1 + cls.dim);
        auto index = indexUse.get().getDefiningOp<linalg::IndexOp>();
        if (index && static_cast<int64_t>(index.getDim()) == loop &&
            index->getParentOp() == op && cls.factor == factor) {
          localBatchIndices.insert(&indexUse);
          continue;
        }
        error(nested)
            << "'" << op->getName()
            << "' reads a per-sample value captured from above at a batch "
               "index other than its own batch loop d"
            << loop
            << " (a constant, data or a computed index): a micro-batch "
               "holds only its own samples";
        return WalkResult::interrupt();
      }
      error(nested) << "'" << op->getName()
                    << "' uses a per-sample value captured from above in '"
                    << nested->getName()
                    << "': payloads may read one only with tensor.extract "
                       "at the op's batch loop index (pass it as an operand "
                       "otherwise)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void BatchDependence::visitLinalg(Operation *op) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (!linalgOp.hasPureTensorSemantics()) {
    error(op) << "linalg op on buffers in a training step: the micro-batch "
                 "rewrite works on tensors";
    return;
  }
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  int64_t loop = -1, factor = 1;
  unsigned firstOperand = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    BatchClass cls = getClass(operand.get());
    if (!cls.isBatched())
      continue;
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    auto dimExpr = dyn_cast<AffineDimExpr>(map.getResult(cls.dim));
    if (!dimExpr) {
      std::string expr;
      llvm::raw_string_ostream(expr) << map.getResult(cls.dim);
      error(op) << "operand #" << operand.getOperandNumber()
                << " is indexed by '" << expr
                << "' along its per-sample dimension " << cls.dim
                << "; only a plain loop dimension keeps samples apart";
      return;
    }
    int64_t position = dimExpr.getPosition();
    if (loop < 0) {
      loop = position;
      factor = cls.factor;
      firstOperand = operand.getOperandNumber();
      continue;
    }
    if (position != loop) {
      error(op) << "batch coupling: operands #" << firstOperand << " and #"
                << operand.getOperandNumber()
                << " are per-sample along different loop dimensions (d" << loop
                << " and d" << position
                << "), which combines every sample with every other";
      return;
    }
    if (cls.factor != factor) {
      error(op) << "operands #" << firstOperand << " and #"
                << operand.getOperandNumber()
                << " lay out samples differently along loop d" << loop;
      return;
    }
  }

  // Without per-sample operands (a one-hot of captured labels written into
  // a tensor.empty), the batch loop is the loop whose linalg.index the
  // payload reads a captured per-sample value at.
  if (loop < 0) {
    std::optional<std::pair<int64_t, int64_t>> inferred =
        inferBatchLoopFromPayload(op);
    if (!inferred) {
      error(op) << "no operand of '" << op->getName()
                << "' is per-sample, and its payload does not read the "
                   "per-sample values it captures at one of its loops that "
                   "spans the batch: pass them as operands so that the op "
                   "has a batch loop";
      return;
    }
    std::tie(loop, factor) = *inferred;
  }
  if (mlir::failed(checkIndexingMaps(op, loop)) ||
      mlir::failed(checkPayload(op, loop, factor)))
    return;

  SmallVector<Value> inputs = getOpInputs(op);

  PerSampleOpInfo info;
  info.batchLoop = loop;
  info.factor = factor;
  info.reducesBatch = iterators[loop] == utils::IteratorType::reduction;

  if (!info.reducesBatch) {
    unsigned level = checkCoupling(op, inputs);
    for (OpResult result : op->getResults()) {
      AffineMap map = linalgOp.getIndexingMapMatchingResult(result);
      std::optional<unsigned> position =
          map.getResultPosition(getAffineDimExpr(loop, op->getContext()));
      if (!position) {
        error(op) << "result #" << result.getResultNumber()
                  << " does not keep the per-sample loop d" << loop
                  << " although it is parallel";
        return;
      }
      BatchClass cls = BatchClass::getBatched(*position, factor);
      cls.level = level;
      cls.dependsOnParams =
          resultDependsOnParams(linalgOp, result.getResultNumber());
      classes[result] = cls;
    }
    opInfo[op] = info;
    return;
  }

  // A reduction over the batch.
  SmallVector<std::optional<vector::CombiningKind>> combiners;
  info.hasNamedCombiners = true;
  for (OpResult result : op->getResults()) {
    AffineMap map = linalgOp.getIndexingMapMatchingResult(result);
    if (map.isFunctionOfDim(loop)) {
      error(op) << "result #" << result.getResultNumber()
                << " is indexed by the per-sample reduction loop d" << loop;
      return;
    }
    combiners.push_back(getCombinerKind(linalgOp, result.getResultNumber()));
    info.hasNamedCombiners &= combiners.back().has_value();
  }
  if (!info.hasNamedCombiners) {
    for (int64_t d = 0; d < loop; ++d) {
      if (iterators[d] != utils::IteratorType::reduction)
        continue;
      error(op) << "reduction over the batch whose combiner is not a single "
                   "associative op, and the batch loop d"
                << loop << " is not its outermost reduction loop (d" << d
                << " is): splitting it into micro-batches would reorder its "
                   "updates";
      return;
    }
  }
  // Accumulating into a value that is itself reduced over the batch with the
  // same combiner is a chain of accumulations, not a coupling.
  SmallVector<Value> chained;
  for (auto [index, init] : llvm::enumerate(linalgOp.getDpsInits())) {
    BatchClass cls = getClass(init);
    if (cls.kind == BatchClass::Kind::Reduced && cls.combiner &&
        combiners[index] && *cls.combiner == *combiners[index])
      chained.push_back(init);
  }
  unsigned level = checkCoupling(op, inputs, chained);
  for (Value init : chained)
    level = std::max(level, getClass(init).level);
  for (OpResult result : op->getResults()) {
    BatchClass cls;
    cls.kind = BatchClass::Kind::Reduced;
    cls.combiner = combiners[result.getResultNumber()];
    cls.level = level;
    cls.dependsOnParams =
        resultDependsOnParams(linalgOp, result.getResultNumber());
    cls.origin = op;
    classes[result] = cls;
  }
  opInfo[op] = info;
}
