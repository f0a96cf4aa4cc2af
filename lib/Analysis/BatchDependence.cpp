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
    BatchClass cls = BatchClass::getBatched(dim, 1);
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
    BatchClass cls = BatchClass::getBatched(in.dim, in.factor);
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
