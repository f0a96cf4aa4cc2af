//===- BatchDependence.cpp - how values depend on the batch ---------------===//
//
// The batch-dependence analysis that the passes query: it solves the batch
// lattices with a DataFlowSolver (BatchDataFlow.cpp), then derives from them
// what the rewrite needs (per-op information, diagnostics; the placement of
// reductions is in ReductionPlacement.cpp) and prints them for the tests.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDependence.h"
#include "ga/Analysis/BatchDataFlow.h"
#include "ga/Analysis/UserLocation.h"
#include "ga/IR/Diagnostics.h"

#include "ga/IR/GADialect.h"
#include "ga/IR/GAOps.h"

#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/Utils.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <set>

using namespace mlir;
using namespace mlir::ga;

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
  if (it == classes.end() || it->second.isUninitialized())
    return BatchClass::getUniform();
  return it->second.readAt(value);
}

const PerSampleOpInfo *BatchDependence::getOpInfo(Operation *op) const {
  auto it = opInfo.find(op);
  return it == opInfo.end() ? nullptr : &it->second;
}

bool BatchDependence::isBatchReduction(Operation *op) const {
  const PerSampleOpInfo *info = getOpInfo(op);
  return info && info->reducesBatch;
}

SmallVector<Operation *>
BatchDependence::getNestedReductions(Operation *op) const {
  SmallVector<Operation *> reductions;
  if (!holdsBatchReductions(op))
    return reductions;
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (isBatchReduction(&nested))
        reductions.push_back(&nested);
  return reductions;
}

std::optional<int64_t>
BatchDependence::getBatchExtentFactor(Value value) const {
  int64_t factor = getClass(value).extentFactor;
  if (factor <= 0 || !value.getDefiningOp<tensor::DimOp>())
    return std::nullopt;
  return factor;
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
  diagnostics.emplace_back(getUserLocation(op), DiagnosticSeverity::Error);
  return diagnostics.back();
}

void BatchDependence::report() {
  if (reported)
    return;
  reported = true;
  // A site found by more than one transfer function is reported once.
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

BatchDependence &
BatchDependenceAnalysis::getReported(bool allowGhostBatch,
                                     bool recomputeStatistics) {
  BatchDependence::Options options;
  options.allowGhostBatch = allowGhostBatch;
  options.recomputeStatistics = recomputeStatistics;
  BatchDependence &analysis = get(options);
  analysis.report();
  return analysis;
}

//===----------------------------------------------------------------------===//
// Solving and deriving
//===----------------------------------------------------------------------===//

void BatchDependence::classifyArguments() {
  // Per-sample arguments carry ga.batch; all others are parameters.
  batchSize = 0;
  std::optional<unsigned> sizedArg;
  for (BlockArgument arg : func.getArguments()) {
    auto dimAttr = func.getArgAttrOfType<IntegerAttr>(
        arg.getArgNumber(), GADialect::getBatchAttrName());
    if (!dimAttr)
      continue;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    int64_t dim = dimAttr.getInt();
    if (!type || dim < 0 || dim >= type.getRank()) {
      error(func) << "argument #" << arg.getArgNumber()
                  << ": 'ga.batch' = " << dim
                  << " does not name a dimension of " << arg.getType();
      continue;
    }
    batchArgs.push_back(arg);
    int64_t extent = type.getDimSize(dim);
    if (ShapedType::isDynamic(extent))
      continue;
    if (sizedArg && batchSize != extent) {
      error(func) << DiagnosticCode::BatchSizeMismatch
                  << "per-sample arguments disagree on the batch size: "
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
}

void BatchDependence::analyze() {
  if (func.isDeclaration()) {
    error(func) << "training step '" << func.getSymName() << "' has no body";
    return;
  }
  if (!func.getBody().hasOneBlock()) {
    error(func) << DiagnosticCode::ControlFlow << "training step '"
                << func.getSymName()
                << "' must be a single block (no unstructured control flow)";
    return;
  }
  classifyArguments();
  if (batchArgs.empty()) {
    error(func) << "training step '" << func.getSymName()
                << "' has no per-sample argument: mark the batch dimension "
                   "of each with `ga.batch = <dim> : i64` or name them with "
                   "the `batch-args` option";
    return;
  }

  // Solve the lattices. The step is analysed on its own: its arguments get
  // their classes from ga.batch, not from call sites.
  DataFlowSolver solver(DataFlowConfig().setInterprocedural(false));
  dataflow::loadBaselineAnalyses(solver);
  auto *analysis =
      solver.load<BatchDataFlowAnalysis>(func, options, refusalReasons);
  if (mlir::failed(solver.initializeAndRun(func))) {
    error(func) << DiagnosticCode::OpNotAnalyzed
                << "the batch data-flow analysis of '" << func.getSymName()
                << "' did not converge";
    return;
  }
  auto lookup = [&](Value value) {
    const BatchLattice *state = solver.lookupState<BatchLattice>(value);
    return state ? state->getValue() : BatchClass();
  };
  func.walk([&](Block *block) {
    const auto *executable = solver.lookupState<dataflow::Executable>(
        solver.getProgramPointBefore(block));
    if (!executable || !executable->isLive())
      deadBlocks.insert(block);
    for (BlockArgument arg : block->getArguments())
      classes[arg] = lookup(arg);
    for (Operation &op : *block)
      for (Value result : op.getResults())
        classes[result] = lookup(result);
  });

  // What the rewrite needs, from the verdicts on the solved lattices.
  numTransfers = analysis->getNumTransfers();
  derive(analysis->getVerdicts());
  Block &body = func.getBody().front();

  // Per-sample results are assembled at full size after the loop.
  Operation *terminator = body.getTerminator();
  for (OpOperand &operand : terminator->getOpOperands()) {
    BatchClass cls = getClass(operand.get());
    if (!cls.isBatched())
      continue;
    if (cls.isStacked()) {
      error(terminator) << DiagnosticCode::BatchesJoined
                        << "per-sample result #" << operand.getOperandNumber()
                        << " stacks " << cls.stacks
                        << " batches along its batch dimension: reshape the "
                           "stacks into an outer dimension before returning";
      continue;
    }
    auto type = cast<RankedTensorType>(operand.get().getType());
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != cls.dim && type.isDynamicDim(d))
        error(terminator) << DiagnosticCode::DynamicSize
                          << "per-sample result #" << operand.getOperandNumber()
                          << " has a dynamic non-batch dimension " << d
                          << "; it cannot be assembled from micro-batches";
  }
  reportUnknownValues();

  for (auto &[value, cls] : classes)
    if (cls.isBatched() || cls.kind == BatchClass::Kind::Reduced)
      numLevels = std::max(numLevels, cls.level);
}

/// Whether `value` depends on the result of a refused op (`tainted` holds
/// the results found so far): a block argument of a region depends on the
/// operands of its op.
static bool isTainted(const DenseSet<Value> &tainted, Value value) {
  if (tainted.contains(value))
    return true;
  auto arg = dyn_cast<BlockArgument>(value);
  Operation *owner = arg ? arg.getOwner()->getParentOp() : nullptr;
  if (!owner || isa<func::FuncOp>(owner))
    return false;
  return llvm::any_of(owner->getOperands(), [&](Value operand) {
    return isTainted(tainted, operand);
  });
}

void BatchDependence::derive(DenseMap<Operation *, BatchVerdict> &verdicts) {
  auto lookup = [&](Value value) {
    auto it = classes.find(value);
    return it == classes.end() ? BatchClass() : it->second;
  };
  auto getInfo = [&](Operation *op) { return getOpInfo(op); };
  auto isDeadBlock = [&](Block *block) { return isDead(block); };
  // The results of refused ops keep a class of some transient state of the
  // fixpoint: what their users found is not reported (the refusal is).
  DenseSet<Value> tainted;
  DenseSet<Operation *> taintedOps;
  SmallVector<Operation *> unreached;
  // Nested ops first: the per-sample ops of a region make the region op
  // per-sample.
  func.walk<WalkOrder::PostOrder>([&](Operation *op) {
    // Terminators pass values on: the region ops and the function's
    // results are checked on their own.
    if (op == func || op->hasTrait<OpTrait::IsTerminator>() ||
        isDead(op->getBlock()) || isInPayload(op))
      return;
    BatchVerdict verdict;
    if (auto it = verdicts.find(op); it != verdicts.end()) {
      verdict = std::move(it->second);
    } else if (op->getNumResults() == 0 || isa<RegionBranchOpInterface>(op)) {
      // Not visited by the solver (the framework joins the results of
      // region ops itself): checked once, on the converged lattice.
      BatchTransfer t(op, options, lookup, getInfo, isDeadBlock);
      transferOp(t);
      ++numTransfers;
      verdict = BatchVerdict(t);
    } else {
      unreached.push_back(op);
      return;
    }
    bool readsTainted = llvm::any_of(getOpInputs(op), [&](Value input) {
      return isTainted(tainted, input);
    });
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        readsTainted |= taintedOps.contains(&nested);
    if (verdict.refused || readsTainted) {
      taintedOps.insert(op);
      tainted.insert(op->getResults().begin(), op->getResults().end());
    }
    failed |= verdict.refused;
    if (readsTainted)
      return;
    if (verdict.info && !verdict.refused)
      opInfo[op] = *verdict.info;
    if (verdict.holdsReductions && !verdict.refused)
      reductionRegionOps.insert(op);
    localBatchIndices.insert(verdict.localIndices.begin(),
                             verdict.localIndices.end());
    for (Diagnostic &diag : verdict.diagnostics)
      diagnostics.push_back(std::move(diag));
  });
  // Live ops whose inputs the solver never reached follow a refused op; if
  // nothing was refused, they are refused here (never accept what the
  // analysis did not see).
  if (!failed && !unreached.empty())
    error(unreached.front()) << DiagnosticCode::OpNotAnalyzed
                             << "the batch analysis did not reach the inputs "
                                "of '"
                             << unreached.front()->getName() << "'";
}

void BatchDependence::reportUnknownValues() {
  // A value is unknown because some op was refused; that op reported it,
  // unless the refusal was a transient state of the fixpoint. Refuse it then
  // too, with the reason the lattice carries: never accept an unknown value.
  DenseSet<const void *> reportedAt;
  for (Diagnostic &diag : diagnostics)
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      reportedAt.insert(diag.getLocation().getAsOpaquePointer());
  func.walk([&](Operation *op) {
    for (Value result : op->getResults()) {
      BatchClass cls = getClass(result);
      if (!cls.isUnknown())
        continue;
      Operation *at = cls.origin ? cls.origin : op;
      if (!reportedAt.insert(at->getLoc().getAsOpaquePointer()).second)
        continue;
      auto reason = refusalReasons.find(cls.origin);
      // The only reasons recorded: control flow the analysis cannot follow.
      if (cls.origin && reason != refusalReasons.end())
        error(at) << DiagnosticCode::ControlFlow << reason->second;
      else
        error(at) << DiagnosticCode::BatchDimensionsMisaligned
                  << "per-sample along different dimensions in different "
                     "places";
    }
  });
}

void BatchDependence::print(raw_ostream &os) const {
  func::FuncOp func = this->func;
  os << "@" << func.getSymName() << ": batch size ";
  if (ShapedType::isDynamic(batchSize))
    os << "?";
  else
    os << batchSize;
  os << ", loops " << numLevels << ", transfers " << numTransfers << "\n";
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
      if (unsigned loop = getReductionLoop(&op); loop && isBatchReduction(&op))
        os << " [loop " << loop << "]";
      else if (getClass(op.getResult(0)).isPostReduction() &&
               isa<func::FuncOp>(op.getParentOp()))
        os << " [after loop " << getAvailableAfter(op.getResult(0)) << "]";
      os << "\n";
    }
    // Regions of scf ops, with the arguments of loops.
    if (!isa<scf::IfOp, scf::ForOp, scf::WhileOp>(op) ||
        (!isPerSample(&op) && !holdsBatchReductions(&op)))
      continue;
    for (Region &region : op.getRegions()) {
      if (region.empty())
        continue;
      if (isDead(&region.front())) {
        os.indent(indent + 2)
            << "dead region #" << region.getRegionNumber() << "\n";
        continue;
      }
      auto printArg = [&](StringRef name, unsigned number, Value arg) {
        os.indent(indent + 2) << name << " #" << number << ": ";
        getClass(arg).print(os);
        os << "\n";
      };
      if (auto forOp = dyn_cast<scf::ForOp>(op))
        for (BlockArgument arg : forOp.getRegionIterArgs())
          printArg("iter_arg", arg.getArgNumber() - 1, arg);
      if (isa<scf::WhileOp>(op))
        for (BlockArgument arg : region.getArguments())
          printArg(region.getRegionNumber() ? "after arg" : "before arg",
                   arg.getArgNumber(), arg);
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
      // Option errors name the option, not the module (no dump of it).
      if (!func || func.isDeclaration())
        return emitError(module.getLoc())
               << "func=" << name << ": no function with a body named '" << name
               << "'";
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
  // Nothing to rewrite is a mistake of the caller, not a no-op.
  if (steps.empty())
    return emitError(module.getLoc())
           << "no function has a per-sample argument: mark them with "
              "`{ga.batch = <dim>}` or name them with the option "
              "batch-args=<index>[:<dim>],... (e.g. "
              "--ga-accumulate=\"micro-batches=4 batch-args=1,2\")";
  return steps;
}

LogicalResult mlir::ga::checkMicroBatchCount(const BatchDependence &analysis,
                                             int64_t microBatches) {
  func::FuncOp func = analysis.getFunction();
  if (microBatches < 1)
    return emitError(func.getLoc())
           << "micro-batches must be at least 1, got " << microBatches;
  int64_t batchSize = analysis.getBatchSize();
  if (!ShapedType::isDynamic(batchSize) && microBatches > batchSize)
    return emitError(func.getLoc())
           << DiagnosticCode::TooManyMicroBatches
           << "micro-batches = " << microBatches << " exceeds the batch size "
           << batchSize << " of '" << func.getSymName()
           << "': every micro-batch needs at least one sample";
  return success();
}
