//===- BatchDependence.cpp - how values depend on the batch ---------------===//

#include "ga/Analysis/BatchDependence.h"
#include "ga/Analysis/Reductions.h"

#include "ga/IR/GADialect.h"
#include "ga/IR/GAOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <set>

using namespace mlir;
using namespace mlir::ga;

//===----------------------------------------------------------------------===//
// BatchClass
//===----------------------------------------------------------------------===//

void BatchClass::print(raw_ostream &os) const {
  switch (kind) {
  case Kind::Uniform:
    os << "uniform";
    return;
  case Kind::Batched:
    os << "batched(" << dim;
    if (factor != 1)
      os << " x" << factor;
    os << ")";
    break;
  case Kind::Reduced:
    os << "reduced("
       << (combiner ? vector::stringifyCombiningKind(*combiner) : "custom")
       << ")";
    break;
  case Kind::Derived:
    os << "derived";
    break;
  }
  if (!dependsOnParams)
    os << " data";
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static BatchClass makeBatched(int64_t dim, int64_t factor) {
  BatchClass cls;
  cls.kind = BatchClass::Kind::Batched;
  cls.dim = dim;
  cls.factor = factor;
  return cls;
}

//===----------------------------------------------------------------------===//
// BatchDependence
//===----------------------------------------------------------------------===//

BatchDependence::BatchDependence(func::FuncOp func, Options options)
    : func(func), options(options) {
  analyze();
  if (!failed)
    placeReductions();
}

BatchClass BatchDependence::getClass(Value value) const {
  auto it = classes.find(value);
  return it == classes.end() ? BatchClass() : it->second;
}

const PerSampleOpInfo *BatchDependence::getOpInfo(Operation *op) const {
  auto it = opInfo.find(op);
  return it == opInfo.end() ? nullptr : &it->second;
}

bool BatchDependence::isBatchReduction(Operation *op) const {
  const PerSampleOpInfo *info = getOpInfo(op);
  return info && info->reducesBatch;
}

std::optional<int64_t>
BatchDependence::getBatchExtentFactor(Value value) const {
  auto it = batchExtents.find(value);
  if (it == batchExtents.end())
    return std::nullopt;
  return it->second;
}

unsigned BatchDependence::getReductionLoop(Operation *op) const {
  auto it = reductionLoops.find(op);
  return it == reductionLoops.end() ? 0 : it->second;
}

unsigned BatchDependence::getAvailableAfter(Value value) const {
  auto it = availableAfter.find(value);
  return it == availableAfter.end() ? 0 : it->second;
}

Diagnostic &BatchDependence::error(Operation *op) {
  failed = true;
  diagnostics.emplace_back(op->getLoc(), DiagnosticSeverity::Error);
  return diagnostics.back();
}

Diagnostic &BatchDependence::warning(Operation *op) {
  diagnostics.emplace_back(op->getLoc(), DiagnosticSeverity::Warning);
  return diagnostics.back();
}

void BatchDependence::report() {
  if (reported)
    return;
  reported = true;
  // A site visited more than once (the body of an scf.for while its
  // iteration arguments settle) is reported once.
  DiagnosticEngine &engine = func.getContext()->getDiagEngine();
  std::set<std::tuple<const void *, int, std::string>> seen;
  for (Diagnostic &diag : diagnostics) {
    auto key =
        std::make_tuple(diag.getLocation().getAsOpaquePointer(),
                        static_cast<int>(diag.getSeverity()), diag.str());
    if (seen.insert(key).second)
      engine.emit(std::move(diag));
  }
  diagnostics.clear();
}

BatchDependence &
BatchDependenceAnalysis::get(BatchDependence::Options options) {
  std::unique_ptr<BatchDependence> &result = results[std::make_pair(
      options.allowGhostBatch, options.recomputeStatistics)];
  if (!result)
    result = std::make_unique<BatchDependence>(func, options);
  return *result;
}

void BatchDependence::setResults(Operation *op, const BatchClass &cls) {
  for (Value result : op->getResults())
    classes[result] = cls;
}

BatchClass BatchDependence::joinInputs(ArrayRef<Value> inputs) const {
  BatchClass joined;
  for (Value input : inputs) {
    BatchClass cls = getClass(input);
    joined.dependsOnParams |= cls.dependsOnParams;
    joined.level = std::max(joined.level, cls.level);
    if (cls.isPostReduction()) {
      joined.kind = BatchClass::Kind::Derived;
      if (!joined.origin)
        joined.origin = cls.origin;
    }
  }
  return joined;
}

bool BatchDependence::isFullExtent(OpFoldResult size, Value source, int64_t dim,
                                   int64_t factor) const {
  int64_t extent = cast<ShapedType>(source.getType()).getDimSize(dim);
  if (std::optional<int64_t> constant = getConstantIntValue(size))
    return !ShapedType::isDynamic(extent) && *constant == extent;
  std::optional<int64_t> sizeFactor = getBatchExtentFactor(cast<Value>(size));
  return sizeFactor && *sizeFactor == factor;
}

void BatchDependence::analyze() {
  if (func.isDeclaration()) {
    error(func) << "training step '" << func.getSymName() << "' has no body";
    return;
  }
  if (!func.getBody().hasOneBlock()) {
    error(func) << "training step '" << func.getSymName()
                << "' must be a single block (no unstructured control flow)";
    return;
  }

  // Arguments: per-sample ones carry ga.batch; all others are parameters.
  batchSize = 0;
  std::optional<unsigned> sizedArg;
  for (BlockArgument arg : func.getArguments()) {
    auto dimAttr = func.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), GADialect::getBatchAttrName());
    if (!dimAttr) {
      BatchClass param;
      param.dependsOnParams = true;
      classes[arg] = param;
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    int64_t dim = dimAttr.getInt();
    if (!type || dim < 0 || dim >= type.getRank()) {
      error(func) << "argument #" << arg.getArgNumber()
                  << ": 'ga.batch' = " << dim
                  << " does not name a dimension of " << arg.getType();
      continue;
    }
    BatchClass cls = makeBatched(dim, 1);
    cls.level = 1;
    classes[arg] = cls;
    batchArgs.push_back(arg);
    int64_t extent = type.getDimSize(dim);
    if (ShapedType::isDynamic(extent))
      continue;
    if (sizedArg && batchSize != extent) {
      error(func) << "per-sample arguments disagree on the batch size: "
                  << "argument #" << *sizedArg << " has " << batchSize
                  << " samples, argument #" << arg.getArgNumber() << " has "
                  << extent;
      continue;
    }
    sizedArg = arg.getArgNumber();
    batchSize = extent;
  }
  if (!sizedArg)
    batchSize = ShapedType::kDynamic;
  if (batchArgs.empty()) {
    error(func) << "training step '" << func.getSymName()
                << "' has no per-sample argument: mark the batch dimension "
                   "of each with `ga.batch = <dim> : i64` or name them with "
                   "the `batch-args` option";
    return;
  }

  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator())
    visit(&op);

  // Per-sample results are assembled at full size after the loop.
  Operation *terminator = body.getTerminator();
  for (OpOperand &operand : terminator->getOpOperands()) {
    BatchClass cls = getClass(operand.get());
    if (!cls.isBatched())
      continue;
    auto type = cast<RankedTensorType>(operand.get().getType());
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != cls.dim && type.isDynamicDim(d))
        error(terminator) << "per-sample result #" << operand.getOperandNumber()
                          << " has a dynamic non-batch dimension " << d
                          << "; it cannot be assembled from micro-batches";
  }

  for (auto &[value, cls] : classes)
    if (cls.isBatched() || cls.kind == BatchClass::Kind::Reduced)
      numLevels = std::max(numLevels, cls.level);
}

SmallVector<Value> mlir::ga::getOpInputs(Operation *op) {
  SmallVector<Value> inputs(op->getOperands());
  if (op->getNumRegions()) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    inputs.append(captured.begin(), captured.end());
  }
  return inputs;
}

bool BatchDependence::isOnlySized(Operation *op, Value captured) {
  SmallVector<tensor::DimOp> dims;
  for (Operation *user : captured.getUsers()) {
    if (!op->isProperAncestor(user))
      continue;
    auto dim = dyn_cast<tensor::DimOp>(user);
    if (!dim || !dim.getConstantIndex())
      return false;
    dims.push_back(dim);
  }
  BatchClass cls = getClass(captured);
  for (tensor::DimOp dim : dims) {
    int64_t index = *dim.getConstantIndex();
    if (index == cls.dim)
      batchExtents[dim.getResult()] = cls.factor;
    else if (cast<ShapedType>(captured.getType()).isDynamicDim(index))
      return false;
  }
  return true;
}

void BatchDependence::visit(Operation *op) {
  SmallVector<Value> inputs = getOpInputs(op);
  // A per-sample value whose regions only take the size of it (a mean
  // normalized inside an scf.if) does not make the op per-sample.
  bool perSample = false;
  SmallVector<Value> others;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    if (!getClass(input).isBatched()) {
      others.push_back(input);
      continue;
    }
    if (index >= op->getNumOperands() && isOnlySized(op, input))
      continue;
    perSample = true;
  }
  if (!perSample) {
    setResults(op, joinInputs(others));
    return;
  }
  // From here on, a refused op's results are treated as uniform so that one
  // problem is reported once, not at every op downstream.
  if (isa<linalg::LinalgOp>(op))
    return visitLinalg(op);
  if (isa<scf::IfOp, scf::ForOp>(op))
    return visitStructured(op);
  if (op->getNumRegions() && !isa<tensor::PadOp>(op)) {
    error(op) << "per-sample values inside the regions of '" << op->getName()
              << "' are not supported: the batch analysis handles linalg "
                 "ops, tensor ops, elementwise arith/math ops, scf.if and "
                 "scf.for";
    return;
  }
  if (isa<AllReduceOp>(op)) {
    error(op) << "all-reduce of a per-sample value: reduce over the batch "
                 "before synchronizing across ranks";
    return;
  }
  if (!op->isRegistered()) {
    error(op) << "unregistered op '" << op->getName()
              << "' on per-sample values cannot be analyzed";
    return;
  }
  if (isa<CallOpInterface>(op)) {
    error(op) << "call on per-sample values cannot be analyzed; inline the "
                 "callee first (for example with --inline)";
    return;
  }
  if (!isMemoryEffectFree(op)) {
    error(op) << "op with side effects on per-sample values: '" << op->getName()
              << "' cannot be split into micro-batches";
    return;
  }
  if (isa<tensor::TensorDialect>(op->getDialect()))
    return visitTensorOp(op);
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    BatchClass in = getClass(softmax.getInput());
    if (in.isBatched() &&
        in.dim == static_cast<int64_t>(softmax.getDimension())) {
      error(op) << "batch coupling: softmax over the batch dimension "
                   "normalizes each sample by all the others";
      return;
    }
    unsigned level = std::max(checkCoupling(op, inputs), in.level);
    BatchClass cls = makeBatched(in.dim, in.factor);
    cls.level = level;
    cls.dependsOnParams = joinInputs(inputs).dependsOnParams;
    setResults(op, cls);
    opInfo[op] = PerSampleOpInfo();
    return;
  }
  if (OpTrait::hasElementwiseMappableTraits(op))
    return visitElementwise(op);
  error(op) << "'" << op->getName()
            << "' on per-sample values is not understood by the batch "
               "analysis (supported: linalg ops, tensor ops, elementwise "
               "arith/math ops)";
}

/// The class of a value yielded for a per-sample result: batched values
/// agree on their layout; other values (a zero tensor in one branch) are
/// re-created at micro-batch size by the rewrite.
static std::optional<BatchClass> joinYields(ArrayRef<BatchClass> yields) {
  std::optional<BatchClass> batched;
  for (const BatchClass &cls : yields) {
    if (!cls.isBatched())
      continue;
    if (batched && (batched->dim != cls.dim || batched->factor != cls.factor))
      return std::nullopt;
    if (!batched)
      batched = cls;
    batched->level = std::max(batched->level, cls.level);
    batched->dependsOnParams |= cls.dependsOnParams;
  }
  return batched;
}

void BatchDependence::visitStructured(Operation *op) {
  // Control values (a condition, loop bounds) come from outside the regions
  // and must not depend on a statistic of this micro-batch.
  unsigned level = checkCoupling(op, SmallVector<Value>(op->getOperands()));
  auto visitBlock = [&](Block &block) {
    for (Operation &nested : block.without_terminator()) {
      visit(&nested);
      if (isBatchReduction(&nested)) {
        error(&nested) << "reduction over the batch inside '" << op->getName()
                       << "' is not supported: reduce after the region";
        return false;
      }
    }
    return true;
  };
  auto finish = [&](ArrayRef<SmallVector<BatchClass>> yieldsPerResult) {
    for (auto [result, yields] : llvm::zip(op->getResults(), yieldsPerResult)) {
      std::optional<BatchClass> batched = joinYields(yields);
      if (!batched) {
        bool anyIn = llvm::any_of(
            yields, [](const BatchClass &c) { return c.isBatched(); });
        if (anyIn) {
          error(op) << "result #" << cast<OpResult>(result).getResultNumber()
                    << " is per-sample along different dimensions in "
                       "different places";
          return;
        }
        BatchClass joined;
        for (const BatchClass &cls : yields) {
          joined.dependsOnParams |= cls.dependsOnParams;
          joined.level = std::max(joined.level, cls.level);
          if (cls.isPostReduction())
            joined.kind = BatchClass::Kind::Derived;
        }
        classes[result] = joined;
        continue;
      }
      batched->level = std::max(batched->level, level);
      if (!isa<RankedTensorType>(result.getType())) {
        error(op) << "per-sample result #"
                  << cast<OpResult>(result).getResultNumber()
                  << " must be a ranked tensor";
        return;
      }
      classes[result] = *batched;
    }
    opInfo[op] = PerSampleOpInfo();
  };

  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (!visitBlock(ifOp.getThenRegion().front()) ||
        (!ifOp.getElseRegion().empty() &&
         !visitBlock(ifOp.getElseRegion().front())))
      return;
    SmallVector<SmallVector<BatchClass>> yields(op->getNumResults());
    for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
      if (region->empty())
        continue;
      for (auto [index, value] :
           llvm::enumerate(region->front().getTerminator()->getOperands()))
        yields[index].push_back(getClass(value));
    }
    return finish(yields);
  }

  // scf.for: iterate until the classes of the iteration arguments are stable
  // (an argument that starts uniform may become per-sample, and a chain of
  // arguments takes one iteration per link). Each argument can only go from
  // not per-sample to per-sample, so this terminates after at most one
  // iteration per argument. Only the last iteration's findings count.
  auto forOp = cast<scf::ForOp>(op);
  Block &body = *forOp.getBody();
  for (auto [arg, init] :
       llvm::zip(forOp.getRegionIterArgs(), forOp.getInitArgs()))
    classes[arg] = getClass(init);
  classes[forOp.getInductionVar()] = BatchClass();
  size_t numDiagnostics = diagnostics.size();
  bool failedBefore = failed;
  while (true) {
    diagnostics.truncate(numDiagnostics);
    failed = failedBefore;
    for (Operation &nested : body.without_terminator())
      nested.walk([&](Operation *inner) { opInfo.erase(inner); });
    if (!visitBlock(body))
      return;
    bool changed = false;
    auto yield = cast<scf::YieldOp>(body.getTerminator());
    for (auto [arg, value] :
         llvm::zip(forOp.getRegionIterArgs(), yield.getOperands())) {
      BatchClass argClass = getClass(arg), yielded = getClass(value);
      if (!yielded.isBatched())
        continue;
      // The argument holds the initial value on the first iteration.
      yielded.dependsOnParams |= argClass.dependsOnParams;
      if (!argClass.isBatched() ||
          yielded.dependsOnParams != argClass.dependsOnParams) {
        classes[arg] = yielded;
        changed = true;
      }
    }
    if (!changed)
      break;
  }
  auto yield = cast<scf::YieldOp>(body.getTerminator());
  SmallVector<SmallVector<BatchClass>> yields;
  for (auto [arg, value] :
       llvm::zip(forOp.getRegionIterArgs(), yield.getOperands()))
    yields.push_back({getClass(arg), getClass(value)});
  finish(yields);
}

unsigned BatchDependence::checkCoupling(Operation *op, ArrayRef<Value> inputs,
                                        ArrayRef<Value> exempt) {
  unsigned level = 1;
  bool reported = false;
  for (Value input : inputs) {
    BatchClass cls = getClass(input);
    if (cls.isBatched()) {
      level = std::max(level, cls.level);
      continue;
    }
    if (!cls.isPostReduction() || llvm::is_contained(exempt, input))
      continue;
    if (!cls.dependsOnParams || options.recomputeStatistics) {
      // Computed exactly in an earlier loop: for free for a data-only
      // statistic, by recomputing its per-sample inputs otherwise.
      level = std::max(level, cls.level + 1);
      continue;
    }
    if (reported)
      continue;
    reported = true;
    if (options.allowGhostBatch) {
      Diagnostic &diag =
          warning(op)
          << "ghost batch: per-sample computation uses a statistic of each "
             "micro-batch instead of the whole batch; results differ from "
             "the full-batch step";
      if (cls.origin)
        diag.attachNote(cls.origin->getLoc())
            << "the statistic is reduced over the batch here";
      level = std::max(level, cls.level);
      continue;
    }
    Diagnostic &diag =
        error(op) << "batch coupling: per-sample computation uses a value "
                     "reduced over the whole batch, so micro-batches would "
                     "compute different values (BatchNorm-like statistics, "
                     "in-batch normalization)";
    if (cls.origin)
      diag.attachNote(cls.origin->getLoc())
          << "the value is reduced over the batch here";
    diag.attachNote() << "it depends on parameters: use recompute-statistics "
                         "to compute it exactly in an earlier loop (one more "
                         "pass over the micro-batches), or allow-ghost-batch "
                         "to accept per-micro-batch statistics";
  }
  return level;
}

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

  if (loop < 0) {
    error(op) << "no operand of '" << op->getName()
              << "' is per-sample, but its payload reads per-sample values "
                 "captured from above: pass them as operands so that the "
                 "op has a batch loop";
    return;
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
      BatchClass cls = makeBatched(*position, factor);
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

FailureOr<std::pair<int64_t, int64_t>>
BatchDependence::getCommonLayout(ValueRange values) const {
  int64_t dim = -1, factor = 1;
  for (Value value : values) {
    BatchClass cls = getClass(value);
    if (!cls.isBatched())
      continue;
    if (dim >= 0 && (cls.dim != dim || cls.factor != factor))
      return failure();
    dim = cls.dim;
    factor = cls.factor;
  }
  return std::make_pair(dim, factor);
}

void BatchDependence::visitElementwise(Operation *op) {
  FailureOr<std::pair<int64_t, int64_t>> layout =
      getCommonLayout(op->getOperands());
  if (mlir::failed(layout)) {
    error(op) << "operands are per-sample along different dimensions";
    return;
  }
  auto [dim, factor] = *layout;
  for (Type type : op->getResultTypes()) {
    if (!isa<RankedTensorType>(type)) {
      error(op) << "elementwise op on per-sample values must produce ranked "
                   "tensors, got "
                << type;
      return;
    }
  }
  SmallVector<Value> inputs(op->getOperands());
  unsigned level = checkCoupling(op, inputs);
  BatchClass cls = makeBatched(dim, factor);
  cls.level = level;
  cls.dependsOnParams = joinInputs(inputs).dependsOnParams;
  setResults(op, cls);
  opInfo[op] = PerSampleOpInfo();
}

void BatchDependence::visitTensorOp(Operation *op) {
  SmallVector<Value> inputs = getOpInputs(op);
  auto finish = [&](int64_t dim, int64_t factor) {
    unsigned level = checkCoupling(op, inputs);
    BatchClass cls = makeBatched(dim, factor);
    cls.level = level;
    cls.dependsOnParams = joinInputs(inputs).dependsOnParams;
    setResults(op, cls);
    opInfo[op] = PerSampleOpInfo();
  };

  if (auto dimOp = dyn_cast<tensor::DimOp>(op)) {
    BatchClass src = getClass(dimOp.getSource());
    std::optional<int64_t> index = dimOp.getConstantIndex();
    if (!index) {
      error(op) << "size of a per-sample value queried with a non-constant "
                   "dimension";
      return;
    }
    BatchClass cls;
    if (*index == src.dim) {
      // The batch size: a number wherever it is computed with, and the
      // micro-batch size wherever the rewrite shapes a tensor with it.
      batchExtents[dimOp.getResult()] = src.factor;
    } else if (cast<ShapedType>(dimOp.getSource().getType())
                   .isDynamicDim(*index)) {
      error(op) << "dynamic size of the non-batch dimension " << *index
                << " of a per-sample value is not supported";
      return;
    }
    setResults(op, cls);
    return;
  }

  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    BatchClass src = getClass(slice.getSource());
    int64_t d = src.dim;
    std::optional<int64_t> offset =
        getConstantIntValue(slice.getMixedOffsets()[d]);
    std::optional<int64_t> stride =
        getConstantIntValue(slice.getMixedStrides()[d]);
    if (offset != 0 || stride != 1 ||
        !isFullExtent(slice.getMixedSizes()[d], slice.getSource(), d,
                      src.factor)) {
      error(op) << "slicing along the batch dimension selects samples; only "
                   "full slices of the batch dimension can be split into "
                   "micro-batches";
      return;
    }
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    if (dropped.test(d)) {
      error(op) << "slice drops the batch dimension";
      return;
    }
    int64_t newDim = d;
    for (int64_t i = 0; i < d; ++i)
      newDim -= dropped.test(i);
    return finish(newDim, src.factor);
  }

  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    BatchClass src = getClass(insert.getSource());
    BatchClass dst = getClass(insert.getDest());
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    int64_t dim = -1, factor = 1;
    if (dst.isBatched()) {
      dim = dst.dim;
      factor = dst.factor;
    }
    if (src.isBatched()) {
      int64_t destDim = -1;
      for (int64_t i = 0, s = 0, e = dropped.size(); i < e; ++i) {
        if (dropped.test(i))
          continue;
        if (s++ == src.dim)
          destDim = i;
      }
      if (dim >= 0 && (destDim != dim || factor != src.factor)) {
        error(op) << "source and destination are per-sample along different "
                     "dimensions";
        return;
      }
      dim = destDim;
      factor = src.factor;
    }
    if (dim < 0 || dropped.test(dim) ||
        getConstantIntValue(insert.getMixedOffsets()[dim]) != 0 ||
        getConstantIntValue(insert.getMixedStrides()[dim]) != 1 ||
        !isFullExtent(insert.getMixedSizes()[dim], insert.getDest(), dim,
                      factor)) {
      error(op) << "inserting along the batch dimension selects samples; "
                   "only full slices of the batch dimension are supported";
      return;
    }
    return finish(dim, factor);
  }

  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    BatchClass src = getClass(expand.getSrc());
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    ReassociationIndices group = expand.getReassociationIndices()[src.dim];
    unsigned j = 0;
    while (j + 1 < group.size() && shape[group[j]] == 1)
      ++j;
    int64_t rest = 1;
    for (unsigned k = j + 1; k < group.size(); ++k) {
      if (ShapedType::isDynamic(shape[group[k]])) {
        error(op) << "expanding the batch dimension with dynamic inner sizes "
                     "is not supported";
        return;
      }
      rest *= shape[group[k]];
    }
    if (src.factor % rest != 0) {
      error(op) << "expanding the batch dimension splits samples apart";
      return;
    }
    return finish(group[j], src.factor / rest);
  }

  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    BatchClass src = getClass(collapse.getSrc());
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    for (auto [index, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      auto it = llvm::find(group, src.dim);
      if (it == group.end())
        continue;
      int64_t factor = src.factor;
      for (auto before = group.begin(); before != it; ++before) {
        if (shape[*before] != 1) {
          error(op) << "collapsing the batch dimension into an outer "
                       "dimension interleaves samples";
          return;
        }
      }
      for (auto after = std::next(it); after != group.end(); ++after) {
        if (ShapedType::isDynamic(shape[*after])) {
          error(op) << "collapsing the batch dimension with dynamic inner "
                       "sizes is not supported";
          return;
        }
        factor *= shape[*after];
      }
      return finish(index, factor);
    }
    llvm_unreachable("reassociation covers every source dimension");
  }

  if (auto castOp = dyn_cast<tensor::CastOp>(op)) {
    BatchClass src = getClass(castOp.getSource());
    if (!isa<RankedTensorType>(castOp.getType())) {
      error(op) << "cast of a per-sample value to an unranked tensor";
      return;
    }
    return finish(src.dim, src.factor);
  }

  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    BatchClass src = getClass(pad.getSource());
    if (!src.isBatched()) {
      error(op) << "per-sample padding value";
      return;
    }
    if (getConstantIntValue(pad.getMixedLowPad()[src.dim]) != 0 ||
        getConstantIntValue(pad.getMixedHighPad()[src.dim]) != 0) {
      error(op) << "padding along the batch dimension adds samples";
      return;
    }
    return finish(src.dim, src.factor);
  }

  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    FailureOr<std::pair<int64_t, int64_t>> layout =
        getCommonLayout(concat.getInputs());
    if (mlir::failed(layout)) {
      error(op) << "inputs are per-sample along different dimensions";
      return;
    }
    auto [dim, factor] = *layout;
    if (static_cast<int64_t>(concat.getDim()) == dim) {
      error(op) << "concatenating along the batch dimension mixes batches";
      return;
    }
    return finish(dim, factor);
  }

  if (isa<tensor::ExtractOp>(op)) {
    error(op) << "reading single elements of a per-sample value picks "
                 "samples; reduce over the batch first";
    return;
  }
  error(op) << "'" << op->getName()
            << "' on per-sample values is not supported by the batch analysis";
}

/// Places every reduction in the latest loop that precedes all per-sample
/// uses of its value, so that earlier ("statistics") loops compute only what
/// later loops need.
void BatchDependence::placeReductions() {
  Block &body = func.getBody().front();
  unsigned end = numLevels + 1;
  DenseMap<Value, unsigned> neededBy;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    for (OpResult result : op.getResults()) {
      BatchClass cls = getClass(result);
      if (!cls.isPostReduction())
        continue;
      unsigned need = end;
      for (OpOperand &use : result.getUses()) {
        Operation *user = body.findAncestorOpInBlock(*use.getOwner());
        if (!user || user == body.getTerminator())
          continue;
        if (!isPerSample(user)) {
          for (Value userResult : user->getResults())
            if (auto it = neededBy.find(userResult); it != neededBy.end())
              need = std::min(need, it->second);
          continue;
        }
        if (isBatchReduction(user) &&
            llvm::is_contained(cast<linalg::LinalgOp>(user).getDpsInits(),
                               result) &&
            getClass(user->getResult(0)).kind == BatchClass::Kind::Reduced &&
            cls.kind == BatchClass::Kind::Reduced) {
          // An accumulation chain: combined after the user's loop.
          need = std::min(need, getReductionLoop(user) + 1);
          continue;
        }
        if (cls.dependsOnParams && !options.recomputeStatistics)
          continue; // A ghost-batch statistic is recomputed locally.
        unsigned userLevel = 0;
        for (Value userResult : user->getResults())
          userLevel = std::max(userLevel, getClass(userResult).level);
        need = std::min(need, userLevel);
      }
      neededBy[result] = need;
    }
    if (isBatchReduction(&op)) {
      unsigned loop = numLevels;
      for (Value result : op.getResults())
        loop = std::min(loop, neededBy[result] - 1);
      reductionLoops[&op] = loop;
    }
  }
  // Availability follows the placement forwards.
  for (Operation &op : body.without_terminator()) {
    if (isBatchReduction(&op)) {
      for (Value result : op.getResults())
        availableAfter[result] = reductionLoops[&op];
      continue;
    }
    if (isPerSample(&op))
      continue;
    unsigned after = 0;
    for (Value input : getOpInputs(&op))
      after = std::max(after, getAvailableAfter(input));
    for (Value result : op.getResults())
      if (getClass(result).isPostReduction())
        availableAfter[result] = after;
  }
}

void BatchDependence::print(raw_ostream &os) const {
  func::FuncOp func = this->func;
  os << "@" << func.getSymName() << ": batch size ";
  if (ShapedType::isDynamic(batchSize))
    os << "?";
  else
    os << batchSize;
  os << ", loops " << numLevels << "\n";
  for (BlockArgument arg : func.getArguments()) {
    os << "  arg #" << arg.getArgNumber() << ": ";
    getClass(arg).print(os);
    os << "\n";
  }
  printBlock(os, func.getBody().front(), 2);
}

void BatchDependence::printBlock(raw_ostream &os, Block &block,
                                 unsigned indent) const {
  for (Operation &op : block.without_terminator()) {
    // The payloads of linalg ops: how captured per-sample values are read.
    unsigned localReads = 0;
    op.walk([&](Operation *nested) {
      for (OpOperand &use : nested->getOpOperands())
        localReads += isLocalBatchIndex(use);
    });
    if (op.getNumResults() != 0) {
      os.indent(indent) << op.getName() << ": ";
      llvm::interleaveComma(op.getResults(), os, [&](Value result) {
        BatchClass cls = getClass(result);
        cls.print(os);
        if (std::optional<int64_t> factor = getBatchExtentFactor(result))
          os << " batch-size";
      });
      if (isa<linalg::LinalgOp>(op) && localReads)
        os << " [" << localReads << " local gather]";
      if (unsigned loop = getReductionLoop(&op))
        os << " [loop " << loop << "]";
      else if (getClass(op.getResult(0)).isPostReduction() &&
               isa<func::FuncOp>(op.getParentOp()))
        os << " [after loop " << getAvailableAfter(op.getResult(0)) << "]";
      os << "\n";
    }
    // Regions of scf ops, with the iteration arguments of loops.
    if (!isa<scf::IfOp, scf::ForOp>(op) || !isPerSample(&op))
      continue;
    for (Region &region : op.getRegions()) {
      if (region.empty())
        continue;
      if (auto forOp = dyn_cast<scf::ForOp>(op)) {
        for (BlockArgument arg : forOp.getRegionIterArgs()) {
          os.indent(indent + 2)
              << "iter_arg #" << arg.getArgNumber() - 1 << ": ";
          getClass(arg).print(os);
          os << "\n";
        }
      }
      printBlock(os, region.front(), indent + 2);
    }
  }
}

//===----------------------------------------------------------------------===//
// Selection of training steps
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<func::FuncOp>>
mlir::ga::collectTrainingSteps(ModuleOp module,
                               ArrayRef<std::string> funcNames) {
  SmallVector<func::FuncOp> steps;
  if (!funcNames.empty()) {
    for (const std::string &name : funcNames) {
      auto func = module.lookupSymbol<func::FuncOp>(name);
      if (!func || func.isDeclaration())
        return module.emitError()
               << "no function with a body named '" << name << "'";
      steps.push_back(func);
    }
    return steps;
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      if (func.getArgAttr(i, GADialect::getBatchAttrName())) {
        steps.push_back(func);
        break;
      }
    }
  }
  return steps;
}

LogicalResult mlir::ga::checkMicroBatchCount(const BatchDependence &analysis,
                                             int64_t microBatches) {
  func::FuncOp func = analysis.getFunction();
  if (microBatches < 1)
    return func.emitError()
           << "micro-batches must be at least 1, got " << microBatches;
  int64_t batchSize = analysis.getBatchSize();
  if (!ShapedType::isDynamic(batchSize) && microBatches > batchSize)
    return func.emitError()
           << "micro-batches = " << microBatches << " exceeds the batch size "
           << batchSize << " of '" << func.getSymName()
           << "': every micro-batch needs at least one sample";
  return success();
}
