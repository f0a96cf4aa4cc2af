//===- BatchDataFlow.cpp - the batch analysis on mlir::dataflow -----------===//
//
// The sparse forward data-flow analysis of batch classes: the entry states of
// the step's arguments, the arguments of payloads and loops, the table of op
// families with the transfer function of the ops that belong to none of the
// others (func and ga ops, calls, softmax), and the state every transfer
// function reads its inputs through.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDataFlow.h"
#include "ga/Analysis/BatchTransferOpInterface.h"
#include "ga/Analysis/GradientFree.h"
#include "ga/Analysis/MicroBatchBuilder.h"
#include "ga/Analysis/UserLocation.h"
#include "ga/IR/Diagnostics.h"

#include "ga/IR/GADialect.h"
#include "ga/IR/GAOps.h"
#include "ga/Utils/ConstantIndices.h"

#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/DebugLog.h"

#define DEBUG_TYPE "ga-batch"

using namespace mlir;
using namespace mlir::ga;

//===----------------------------------------------------------------------===//
// BatchTransfer
//===----------------------------------------------------------------------===//

BatchTransfer::BatchTransfer(Operation *op,
                             const BatchDependence::Options &options,
                             Lookup lookup, InfoLookup getInfo,
                             BlockPredicate isDeadBlock)
    : results(op->getNumResults(), BatchClass::getUniform()), op(op),
      options(options), lookup(lookup), getInfoFn(getInfo),
      isDeadBlockFn(isDeadBlock) {}

BatchClass BatchTransfer::getClass(Value value) {
  BatchClass cls = lookup(value).readAt(value);
  if (cls.isUninitialized()) {
    uninitialized = true;
    return BatchClass::getUniform();
  }
  if (cls.isUnknown()) {
    // Paths that disagree at a control-flow merge: the region op that owns
    // the merge is to blame.
    if (!cls.origin) {
      auto arg = dyn_cast<BlockArgument>(value);
      cls.origin = arg ? arg.getOwner()->getParentOp() : value.getDefiningOp();
    }
    if (!unknownInput)
      unknownInput = cls;
    return BatchClass::getUniform();
  }
  return cls;
}

std::optional<int64_t> BatchTransfer::getBatchExtentFactor(Value value) {
  BatchClass cls = getClass(value);
  if (cls.extentFactor <= 0 || !value.getDefiningOp<tensor::DimOp>())
    return std::nullopt;
  return cls.extentFactor;
}

Diagnostic &BatchTransfer::error(Operation *at) {
  refused = true;
  diagnostics.emplace_back(getUserLocation(at), DiagnosticSeverity::Error);
  return diagnostics.back();
}

Diagnostic &BatchTransfer::warning(Operation *at) {
  diagnostics.emplace_back(getUserLocation(at), DiagnosticSeverity::Warning);
  return diagnostics.back();
}

std::string BatchTransfer::getRefusalReason() const {
  for (const Diagnostic &diag : diagnostics)
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      return diag.str();
  return "refused";
}

BatchClass BatchTransfer::joinInputs(ArrayRef<Value> inputs) {
  BatchClass joined = BatchClass::getUniform();
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

FailureOr<std::pair<int64_t, int64_t>>
BatchTransfer::getCommonLayout(ValueRange values) {
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

unsigned BatchTransfer::checkCoupling(ArrayRef<Value> inputs, bool quiet) {
  unsigned level = 1;
  bool reported = false;
  for (Value input : inputs) {
    BatchClass cls = getClass(input);
    if (cls.isBatched()) {
      level = std::max(level, cls.level);
      continue;
    }
    if (!cls.isPostReduction())
      continue;
    if (isHoistedStatistic(input, cls, options)) {
      // Computed exactly in an earlier loop: for free for a data-only
      // statistic, by recomputing its per-sample inputs otherwise (the
      // forward that feeds it, for a gradient-free one).
      level = std::max(level, cls.level + 1);
      continue;
    }
    if (options.allowGhostBatch)
      level = std::max(level, cls.level);
    if (reported || quiet)
      continue;
    reported = true;
    if (options.allowGhostBatch) {
      Diagnostic &diag =
          warning(op)
          << DiagnosticCode::BatchCoupling
          << "ghost batch: per-sample computation uses a statistic of each "
             "micro-batch instead of the whole batch; results differ from "
             "the full-batch step";
      attachOriginNote(diag, cls.origin,
                       "the statistic is reduced over the batch here");
      continue;
    }
    Diagnostic &diag =
        error(op) << DiagnosticCode::BatchCoupling
                  << "batch coupling: per-sample computation uses a value "
                     "reduced over the whole batch, so micro-batches would "
                     "compute different values (BatchNorm-like statistics, "
                     "in-batch normalization)";
    attachOriginNote(diag, cls.origin,
                     "the value is reduced over the batch here");
    diag.attachNote() << "it depends on parameters: use recompute-statistics "
                         "to compute it exactly in an earlier loop (one more "
                         "pass over the micro-batches), or allow-ghost-batch "
                         "to accept per-micro-batch statistics";
  }
  return level;
}

bool BatchTransfer::isFullExtent(OpFoldResult size, Value source, int64_t dim,
                                 int64_t factor) {
  int64_t extent = cast<ShapedType>(source.getType()).getDimSize(dim);
  if (std::optional<int64_t> constant = getConstantIntValue(size))
    return !ShapedType::isDynamic(extent) && *constant == extent;
  std::optional<int64_t> sizeFactor = getBatchExtentFactor(cast<Value>(size));
  return sizeFactor && *sizeFactor == factor;
}

bool BatchTransfer::isOnlySized(Value captured) {
  BatchClass cls = getClass(captured);
  for (Operation *user : captured.getUsers()) {
    if (!op->isProperAncestor(user))
      continue;
    auto dim = dyn_cast<tensor::DimOp>(user);
    std::optional<int64_t> constant =
        dim ? getConstantDimIndex(dim) : std::nullopt;
    if (!constant)
      return false;
    int64_t index = *constant;
    if (index != cls.dim &&
        cast<ShapedType>(captured.getType()).isDynamicDim(index))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The table of op families
//===----------------------------------------------------------------------===//

SmallVector<Value> mlir::ga::getOpInputs(Operation *op) {
  SmallVector<Value> inputs(op->getOperands());
  if (op->getNumRegions()) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    inputs.append(captured.begin(), captured.end());
  }
  return inputs;
}

/// The op's batch transfer model, if it has one.
static BatchTransferOpInterface getModel(Operation *op) {
  return dyn_cast<BatchTransferOpInterface>(op);
}

bool mlir::ga::isInPayload(Operation *op) {
  for (Operation *parent = op->getParentOp();
       parent && !isa<func::FuncOp>(parent); parent = parent->getParentOp()) {
    BatchTransferOpInterface model = getModel(parent);
    if (!model || !model.holdsStepCode())
      return true;
  }
  return false;
}

/// The transfer function of linalg.softmax (not a structured op: no
/// indexing maps to read its batch loop from).
static void transferSoftmax(BatchTransfer &t, linalg::SoftmaxOp softmax) {
  Operation *op = softmax;
  SmallVector<Value> inputs = getOpInputs(op);
  BatchClass in = t.getClass(softmax.getInput());
  if (in.isBatched() &&
      in.dim == static_cast<int64_t>(softmax.getDimension())) {
    t.error(op) << DiagnosticCode::SoftmaxOverBatch
                << "batch coupling: softmax over the batch dimension "
                   "normalizes each sample by all the others";
    return;
  }
  unsigned level = std::max(t.checkCoupling(inputs), in.level);
  BatchClass cls = BatchClass::getBatched(in.dim, in.factor);
  cls.level = level;
  cls.dependsOnParams = t.joinInputs(inputs).dependsOnParams;
  t.setResults(cls);
  t.setPerSample();
}

/// A per-sample op without a model: what it declares decides (elementwise
/// traits), or the reason it is refused.
static void transferUnmodeledOp(BatchTransfer &t) {
  Operation *op = t.getOp();
  if (op->getNumRegions()) {
    t.error(op) << DiagnosticCode::ControlFlow
                << "per-sample values inside the regions of '" << op->getName()
                << "' are not supported: the batch analysis handles linalg "
                   "ops, tensor ops, elementwise arith/math ops, scf.if, "
                   "scf.for and scf.while";
    return;
  }
  if (isa<AllReduceOp>(op)) {
    t.error(op) << DiagnosticCode::OpNotAnalyzed
                << "all-reduce of a per-sample value: reduce over the batch "
                   "before synchronizing across ranks";
    return;
  }
  if (!op->isRegistered()) {
    t.error(op) << DiagnosticCode::OpNotAnalyzed << "unregistered op '"
                << op->getName() << "' on per-sample values cannot be analyzed";
    return;
  }
  if (isa<CallOpInterface>(op)) {
    t.error(op) << DiagnosticCode::OpNotAnalyzed
                << "call on per-sample values cannot be analyzed; inline the "
                   "callee first (for example with --inline)";
    return;
  }
  if (!isMemoryEffectFree(op)) {
    t.error(op) << DiagnosticCode::OpNotAnalyzed
                << "op with side effects on per-sample values: '"
                << op->getName() << "' cannot be split into micro-batches";
    return;
  }
  if (OpTrait::hasElementwiseMappableTraits(op))
    return transferElementwise(t);
  t.error(op) << DiagnosticCode::OpNotAnalyzed << "'" << op->getName()
              << "' on per-sample values is not understood by the batch "
                 "analysis (it has no BatchTransferOpInterface model; "
                 "supported: linalg ops, tensor slices, reshapes, casts, "
                 "padding and concatenation, elementwise arith/math ops)";
}

void mlir::ga::transferOp(BatchTransfer &t) {
  Operation *op = t.getOp();
  if (isInPayload(op))
    return transferPayloadOp(t);
  BatchTransferOpInterface model = getModel(op);
  // Stacked batches (a concatenation along the batch dimension) are laid
  // out as whole batches one after the other: only the ops whose model
  // keeps track of where each sample is may read them.
  if (!model || !model.keepsStackedBatches()) {
    for (Value input : getOpInputs(op)) {
      BatchClass cls = t.getClass(input);
      if (!cls.isStacked())
        continue;
      t.error(op) << DiagnosticCode::BatchesJoined << "'" << op->getName()
                  << "' reads " << cls.stacks
                  << " batches stacked along dimension " << cls.dim
                  << " (a concatenation of per-sample values along the batch "
                     "dimension): reshape the stacks into an outer dimension "
                     "first (torch.stack does)";
      return;
    }
  }
  if (model && model.holdsStepCode())
    return model.transferBatch(t);

  // An op is per-sample when it reads a per-sample value. A per-sample value
  // whose regions only take the size of it (a mean normalized inside a
  // payload) does not make the op per-sample.
  SmallVector<Value> inputs = getOpInputs(op);
  bool perSample = false;
  SmallVector<Value> others;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    if (!t.isBatched(input)) {
      others.push_back(input);
      continue;
    }
    if (index >= op->getNumOperands() && t.isOnlySized(input))
      continue;
    perSample = true;
  }
  if (!perSample) {
    t.setResults(t.joinInputs(others));
    return;
  }
  // Linalg structured ops declare how they relate to the batch through
  // their indexing maps (their model reads them); every other family
  // through its own model.
  if (model)
    return model.transferBatch(t);
  transferUnmodeledOp(t);
}

namespace {
struct SoftmaxModel
    : BatchTransferOpInterface::ExternalModel<SoftmaxModel, linalg::SoftmaxOp> {
  void transferBatch(Operation *op, BatchTransfer &t) const {
    transferSoftmax(t, cast<linalg::SoftmaxOp>(op));
  }
  /// The batch dimension is not the softmax's (transferSoftmax): each
  /// sample is normalized on its own, like an elementwise op.
  Operation *materializeAtMicroBatch(Operation *op,
                                     MicroBatchBuilder &b) const {
    return materializeElementwise(b, op);
  }
};
} // namespace

void mlir::ga::registerBatchTransferModels(DialectRegistry &registry) {
  registerTensorBatchModels(registry);
  registerRegionBatchModels(registry);
  registerLinalgBatchModels(registry);
  registerGroupedBatchModels(registry);
  registerAttentionBatchModels(registry);
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::SoftmaxOp::attachInterface<SoftmaxModel>(*ctx);
  });
}

#include "ga/Analysis/BatchTransferOpInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// BatchDataFlowAnalysis
//===----------------------------------------------------------------------===//

LogicalResult
BatchDataFlowAnalysis::visitOperation(Operation *op,
                                      ArrayRef<const BatchLattice *> operands,
                                      ArrayRef<BatchLattice *> results) {
  ProgramPoint *point = getProgramPointAfter(op);
  auto lookup = [&](Value value) {
    return getLatticeElementFor(point, value)->getValue();
  };
  BatchTransfer t(op, options, lookup);
  transferOp(t);
  ++numTransfers;
  // Wait for every input (a payload's yielded values are reached after the
  // op itself).
  if (t.uninitialized) {
    LDBG() << "visit " << op->getName() << " at " << op->getLoc()
           << ": waiting for an input";
    return success();
  }
  LDBG() << "visit " << op->getName() << " at " << op->getLoc() << ": "
         << (t.isRefused() ? "refused (" + t.getRefusalReason() + ")"
             : t.info      ? "per-sample"
                           : "not per-sample");
  bool refused = t.isRefused();
  std::optional<BatchClass> unknownInput = t.unknownInput;
  SmallVector<BatchClass> classes = t.results;
  verdicts[op] = BatchVerdict(t);
  // A refusal keeps the results where they are: a later visit with the
  // inputs it waits for may accept the op, and the verdict of the last visit
  // decides.
  if (refused)
    return success();
  for (auto [lattice, cls] : llvm::zip_equal(results, classes))
    update(lattice, unknownInput ? *unknownInput : cls);
  return success();
}

void BatchDataFlowAnalysis::visitExternalCall(
    CallOpInterface call, ArrayRef<const BatchLattice *> arguments,
    ArrayRef<BatchLattice *> results) {
  (void)visitOperation(call, arguments, results);
}

void BatchDataFlowAnalysis::visitNonControlFlowArguments(
    Operation *op, const RegionSuccessor &successor,
    ArrayRef<BatchLattice *> argLattices, unsigned firstIndex) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp && successor.getSuccessor() &&
      successor.getSuccessor()->getRegionNumber() == 0) {
    // A payload argument is one element of its operand: one sample's scalar
    // when the operand is per-sample.
    ProgramPoint *point =
        getProgramPointBefore(&successor.getSuccessor()->front());
    for (auto [index, lattice] : llvm::enumerate(argLattices)) {
      if (index >= op->getNumOperands()) {
        update(lattice, BatchClass::getUniform());
        continue;
      }
      BatchClass operand =
          getLatticeElementFor(point, op->getOperand(index))->getValue();
      if (operand.isUninitialized())
        continue;
      BatchClass element = operand;
      element.extentFactor = 0;
      if (operand.isBatched()) {
        element.kind = BatchClass::Kind::Element;
        element.dim = -1;
        element.factor = 1;
      }
      update(lattice, element);
    }
    return;
  }
  // Induction variables and indices of other regions: uniform.
  unsigned numInputs = successor.getSuccessorInputs().size();
  for (auto [index, lattice] : llvm::enumerate(argLattices))
    if (index < firstIndex || index >= firstIndex + numInputs)
      update(lattice, BatchClass::getUniform());
}

void BatchDataFlowAnalysis::setToEntryState(BatchLattice *lattice) {
  Value value = lattice->getAnchor();
  auto arg = dyn_cast<BlockArgument>(value);
  if (arg && arg.getOwner() == &func.getBody().front()) {
    auto dimAttr = func.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), GADialect::getBatchAttrName());
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!dimAttr) {
      // A parameter, hyper-parameter or optimizer state.
      update(lattice, BatchClass::getUniform(/*dependsOnParams=*/true));
    } else if (type && dimAttr.getInt() >= 0 &&
               dimAttr.getInt() < type.getRank()) {
      BatchClass cls = BatchClass::getBatched(dimAttr.getInt(), 1);
      cls.level = 1;
      update(lattice, cls);
    } else {
      // Refused by the check of the signature.
      update(lattice, BatchClass::getUniform());
    }
    return;
  }
  Operation *owner =
      arg ? arg.getOwner()->getParentOp() : value.getDefiningOp();
  refusalReasons.try_emplace(owner, "values reach this op through control "
                                    "flow that the batch analysis cannot "
                                    "follow");
  update(lattice, BatchClass::getUnknown(owner));
}

LogicalResult BatchDataFlowAnalysis::initialize(Operation *top) {
  if (failed(SparseForwardDataFlowAnalysis::initialize(top)))
    return failure();
  top->walk(
      [&](RegionBranchOpInterface branch) { steerRegionResults(branch); });
  return success();
}

LogicalResult BatchDataFlowAnalysis::visit(ProgramPoint *point) {
  if (failed(SparseForwardDataFlowAnalysis::visit(point)))
    return failure();
  if (!point->isBlockStart())
    if (auto branch = dyn_cast<RegionBranchOpInterface>(point->getPrevOp()))
      steerRegionResults(branch);
  return success();
}

void BatchDataFlowAnalysis::steerRegionResults(Operation *op) {
  if (op->getNumResults() == 0 || isInPayload(op))
    return;
  if (op->getBlock() &&
      !getOrCreate<dataflow::Executable>(getProgramPointBefore(op->getBlock()))
           ->isLive())
    return;
  ProgramPoint *point = getProgramPointAfter(op);
  auto lookup = [&](Value value) {
    return getLatticeElementFor(point, value)->getValue();
  };
  BatchTransfer t(op, options, lookup);
  SmallVector<Value> steering, operands(op->getOperands());
  for (Value operand : operands)
    if (!t.isBatched(operand))
      steering.push_back(operand);
  BatchClass steered = t.joinInputs(steering);
  unsigned coupling = t.checkCoupling(operands, /*quiet=*/true);
  if (t.uninitialized)
    return;
  for (OpResult result : op->getResults()) {
    BatchLattice *lattice = getLatticeElement(result);
    const BatchClass &current = lattice->getValue();
    if (current.isUninitialized())
      continue;
    if (t.unknownInput) {
      update(lattice, *t.unknownInput);
      continue;
    }
    // A per-sample result is computed in the loop where the values that
    // steer it are available; anything else depends on them.
    if (current.isBatched()) {
      BatchClass add = current;
      add.level = std::max(add.level, coupling);
      update(lattice, add);
      continue;
    }
    // Only a steering statistic makes the result depend on parameters
    // through the steering (a flag argument selects among values).
    BatchClass add = steered;
    add.dependsOnParams &= steered.isPostReduction();
    update(lattice, add);
  }
}
