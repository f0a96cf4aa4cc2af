//===- BatchRegions.cpp - the batch analysis of regions -------------------===//
//
// The transfer functions of region ops and of the ops nested in payloads.
//
// The results and iteration arguments of scf.if, scf.for and scf.while are
// joined by the data-flow framework from the values that reach them (through
// `RegionBranchOpInterface`, to a real fixpoint); what is left to these ops'
// transfer function (their BatchTransferOpInterface model, attached below)
// is to check what the rewrite cannot keep exact. The ops
// of a linalg payload compute one sample's scalars: an element of a
// per-sample operand or of a captured per-sample tensor, loop indices, and
// uniform values.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDataFlow.h"
#include "ga/Analysis/BatchTransferOpInterface.h"
#include "ga/Analysis/MicroBatchBuilder.h"
#include "ga/IR/Diagnostics.h"
#include "ga/Utils/ConstantIndices.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::ga;

/// Whether `op` defines `value` in one of its regions.
static bool isDefinedInside(Operation *op, Value value) {
  return op->isAncestor(value.getParentRegion()->getParentOp());
}

/// An scf.if whose branches reduce over the batch (on a condition that does
/// not depend on the samples, which the reductions check) is not per-sample:
/// its results are post-reduction values, computed after the loop that
/// accumulates the reductions inside a copy of the branch. Its branches may
/// hold the per-sample work the reductions read, but no per-sample result
/// and no per-sample work on what the branch has reduced. Returns whether
/// the op holds such reductions (refused or not).
static bool holdsGuardedReductions(BatchTransfer &t) {
  Operation *op = t.getOp();
  bool holds = false;
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (const PerSampleOpInfo *info = t.getNestedInfo(&nested))
        holds |= info->reducesBatch;
  if (!holds)
    return false;
  for (Region &region : op->getRegions()) {
    if (region.empty() || !t.isDeadBlock(&region.front()))
      continue;
    t.error(op) << DiagnosticCode::ControlFlow
                << "'scf.if' on a constant condition reduces over the batch "
                   "in its live branch: fold the branch first (for example "
                   "with --canonicalize)";
    return true;
  }
  for (OpResult result : op->getResults()) {
    if (!t.getClass(result).isBatched())
      continue;
    t.error(op) << DiagnosticCode::ControlFlow
                << "'scf.if' reduces over the batch and yields the per-sample "
                   "result #"
                << result.getResultNumber()
                << ": yield the per-sample value from a separate scf.if";
    return true;
  }
  for (Region &region : op->getRegions()) {
    for (Operation &nested : region.getOps()) {
      const PerSampleOpInfo *info = t.getNestedInfo(&nested);
      if (!info)
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(&nested);
      SmallVector<Value> inputs = getOpInputs(&nested);
      for (auto [index, input] : llvm::enumerate(inputs)) {
        // The init of a reduction is combined after the loop.
        if (info->reducesBatch && linalgOp && index < nested.getNumOperands() &&
            linalgOp.isDpsInit(&nested.getOpOperand(index)))
          continue;
        if (!isDefinedInside(op, input) || !t.getClass(input).isPostReduction())
          continue;
        t.error(&nested) << DiagnosticCode::ControlFlow
                         << "per-sample work inside an 'scf.if' that reduces "
                            "over the batch reads a value the branch computes "
                            "from a reduction over the batch: that value is "
                            "known only after the micro-batch loop; compute "
                            "it before the scf.if";
        return true;
      }
    }
  }
  t.holdsReductions = true;
  return true;
}

void mlir::ga::transferRegionOp(BatchTransfer &t) {
  Operation *op = t.getOp();
  SmallVector<Value> operands(op->getOperands());
  for (OpResult result : op->getResults())
    t.setResult(result.getResultNumber(), t.getClass(result));
  // Paths that disagree on the layout of a result (the lattice joined them
  // to unknown without an op to blame): the region op is refused.
  for (OpResult result : op->getResults()) {
    BatchClass cls = t.getLatticeValue(result);
    if (cls.isUnknown() && !cls.origin) {
      t.error(op) << DiagnosticCode::BatchDimensionsMisaligned << "result #"
                  << result.getResultNumber()
                  << " is per-sample along different dimensions in different "
                     "places";
      return;
    }
  }
  if (isa<scf::IfOp>(op) && holdsGuardedReductions(t))
    return;
  // The op is per-sample when it carries or produces per-sample values, or
  // when an op of its regions is per-sample.
  bool perSample =
      llvm::any_of(operands, [&](Value v) { return t.isBatched(v); }) ||
      llvm::any_of(op->getResults(), [&](Value v) { return t.isBatched(v); });
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      perSample |= t.isPerSampleOp(&nested);
  if (!perSample)
    return;
  // A loop body that never runs (constant bounds or condition) was not
  // analysed; the rewrite would have to re-create it all the same.
  if (!isa<scf::IfOp>(op)) {
    for (Region &region : op->getRegions()) {
      if (region.empty() || !t.isDeadBlock(&region.front()))
        continue;
      t.error(op) << DiagnosticCode::ControlFlow << "region #"
                  << region.getRegionNumber() << " of '" << op->getName()
                  << "' never runs (its bounds or condition are constant): "
                     "fold the loop first (for example with --canonicalize)";
      return;
    }
  }

  // Control values (a condition, loop bounds) come from outside the regions
  // and must not depend on a statistic of this micro-batch.
  t.checkCoupling(operands);
  for (OpResult result : op->getResults()) {
    if (t.getClass(result).isStacked()) {
      t.error(op) << DiagnosticCode::BatchesJoined << "per-sample result #"
                  << result.getResultNumber()
                  << " stacks several batches along its batch dimension: "
                     "reshape the stacks into an outer dimension inside the "
                     "region";
      return;
    }
    if (t.isBatched(result) && !isa<RankedTensorType>(result.getType())) {
      t.error(op) << DiagnosticCode::OpNotAnalyzed << "per-sample result #"
                  << result.getResultNumber() << " must be a ranked tensor";
      return;
    }
  }
  t.setPerSample();
}

void mlir::ga::transferPayloadOp(BatchTransfer &t) {
  Operation *op = t.getOp();
  if (auto index = dyn_cast<linalg::IndexOp>(op)) {
    BatchClass cls = BatchClass::getUniform();
    cls.kind = BatchClass::Kind::LoopIndex;
    cls.dim = index.getDim();
    t.setResults(cls);
    return;
  }
  // The size of a captured per-sample value: the batch extent, like at the
  // top level (the parent linalg op refuses dynamic non-batch sizes).
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    BatchClass src = t.getClass(dim.getSource());
    BatchClass cls = BatchClass::getUniform(src.dependsOnParams);
    std::optional<int64_t> index = getConstantDimIndex(dim);
    if (src.isBatched() && index && *index == src.dim)
      cls.extentFactor = src.factor;
    t.setResults(cls);
    return;
  }
  // Anything else computes one sample's scalar from the elements it reads
  // (how the parent reads captured per-sample tensors is its own check).
  SmallVector<Value> inputs = getOpInputs(op);
  BatchClass cls = t.joinInputs(inputs);
  if (llvm::any_of(inputs, [&](Value input) {
        BatchClass in = t.getClass(input);
        return in.isBatched() || in.isElement();
      }))
    cls.kind = BatchClass::Kind::Element;
  t.setResults(cls);
}

//===----------------------------------------------------------------------===//
// Re-creating region ops for one micro-batch
//===----------------------------------------------------------------------===//

/// Re-creates the step code of `from` at the end of `to` (whose arguments
/// are mapped) and terminates it like `from`: its yield, or the condition
/// of an scf.while, forwarding values of `classes`.
static void cloneRegionBody(MicroBatchBuilder &b, Block &from, Block &to,
                            ArrayRef<BatchClass> classes) {
  b.cloneBlock(from, to);
  OpBuilder &builder = b.getBuilder();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&to);
  Operation *terminator = from.getTerminator();
  auto condition = dyn_cast<scf::ConditionOp>(terminator);
  ValueRange forwarded =
      condition ? condition.getArgs() : terminator->getOperands();
  SmallVector<Value> yielded;
  for (auto [value, cls] : llvm::zip_equal(forwarded, classes))
    yielded.push_back(b.getAs(value, cls));
  if (condition)
    scf::ConditionOp::create(builder, terminator->getLoc(),
                             b.getUniform(condition.getCondition()), yielded);
  else
    scf::YieldOp::create(builder, terminator->getLoc(), yielded);
}

/// An scf.if on the same condition whose branches re-create the per-sample
/// work of the original's.
static Operation *materializeIf(MicroBatchBuilder &b, scf::IfOp ifOp) {
  SmallVector<BatchClass> classes;
  SmallVector<Type> types = b.getMicroTypes(ifOp.getResults(), classes);
  bool hasElse = !ifOp.getElseRegion().empty();
  auto clone = scf::IfOp::create(b.getBuilder(), ifOp.getLoc(), types,
                                 b.getUniform(ifOp.getCondition()), hasElse);
  for (auto [from, to] : llvm::zip(ifOp->getRegions(), clone->getRegions())) {
    if (from.empty())
      continue;
    if (to.empty())
      to.emplaceBlock();
    Block &block = to.front();
    if (!block.empty())
      block.getTerminator()->erase();
    // A branch that never runs (its condition is constant) is re-created as
    // a copy of the one that does: what it would compute is irrelevant, and
    // the analysis did not classify it.
    Block *source = &from.front();
    if (b.getAnalysis().isDead(source))
      source = &ifOp->getRegion(1 - from.getRegionNumber()).front();
    cloneRegionBody(b, *source, block, classes);
  }
  return clone;
}

/// An scf.while whose iteration values are at micro-batch size where they
/// are per-sample.
static Operation *materializeWhile(MicroBatchBuilder &b, scf::WhileOp whileOp) {
  OpBuilder &builder = b.getBuilder();
  SmallVector<BatchClass> classes, beforeClasses, afterClasses;
  SmallVector<Type> types = b.getMicroTypes(whileOp.getResults(), classes);
  SmallVector<Type> beforeTypes =
      b.getMicroTypes(whileOp.getBeforeArguments(), beforeClasses);
  SmallVector<Type> afterTypes =
      b.getMicroTypes(whileOp.getAfterArguments(), afterClasses);
  SmallVector<Value> inits;
  for (auto [init, cls] : llvm::zip_equal(whileOp.getInits(), beforeClasses))
    inits.push_back(b.getAs(init, cls));
  Location loc = whileOp.getLoc();
  auto clone = scf::WhileOp::create(builder, loc, types, inits);
  SmallVector<Location> beforeLocs(beforeTypes.size(), loc);
  SmallVector<Location> afterLocs(afterTypes.size(), loc);
  Block *before =
      builder.createBlock(&clone.getBefore(), {}, beforeTypes, beforeLocs);
  Block *after =
      builder.createBlock(&clone.getAfter(), {}, afterTypes, afterLocs);
  builder.setInsertionPointAfter(clone);
  b.map(whileOp.getBeforeArguments(), before->getArguments());
  b.map(whileOp.getAfterArguments(), after->getArguments());
  // The condition forwards to the after region and to the results, whose
  // classes the framework joined from it.
  cloneRegionBody(b, whileOp.getBefore().front(), *before, afterClasses);
  cloneRegionBody(b, whileOp.getAfter().front(), *after, beforeClasses);
  return clone;
}

/// An scf.for over the same bounds whose iteration values are at
/// micro-batch size where they are per-sample.
static Operation *materializeFor(MicroBatchBuilder &b, scf::ForOp forOp) {
  SmallVector<BatchClass> classes;
  (void)b.getMicroTypes(forOp.getResults(), classes);
  SmallVector<Value> inits;
  for (auto [init, cls] : llvm::zip(forOp.getInitArgs(), classes))
    inits.push_back(b.getAs(init, cls));
  auto clone = scf::ForOp::create(b.getBuilder(), forOp.getLoc(),
                                  b.getUniform(forOp.getLowerBound()),
                                  b.getUniform(forOp.getUpperBound()),
                                  b.getUniform(forOp.getStep()), inits);
  Block &body = *clone.getBody();
  if (!body.empty())
    body.getTerminator()->erase();
  b.map(forOp.getInductionVar(), clone.getInductionVar());
  b.map(forOp.getRegionIterArgs(), clone.getRegionIterArgs());
  cloneRegionBody(b, *forOp.getBody(), body, classes);
  return clone;
}

namespace {
/// The model of scf.if, scf.for and scf.while: regions of step code, whose
/// results the framework joins and `transferRegionOp` checks, re-created by
/// `Materialize` with their per-sample work.
template <typename OpTy, Operation *(*Materialize)(MicroBatchBuilder &, OpTy)>
struct RegionOpModel
    : BatchTransferOpInterface::ExternalModel<RegionOpModel<OpTy, Materialize>,
                                              OpTy> {
  void transferBatch(Operation *, BatchTransfer &t) const {
    transferRegionOp(t);
  }
  bool holdsStepCode(Operation *) const { return true; }
  Operation *materializeAtMicroBatch(Operation *op,
                                     MicroBatchBuilder &b) const {
    return Materialize(b, cast<OpTy>(op));
  }
};
} // namespace

void mlir::ga::registerRegionBatchModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, scf::SCFDialect *) {
    scf::IfOp::attachInterface<RegionOpModel<scf::IfOp, materializeIf>>(*ctx);
    scf::ForOp::attachInterface<RegionOpModel<scf::ForOp, materializeFor>>(
        *ctx);
    scf::WhileOp::attachInterface<
        RegionOpModel<scf::WhileOp, materializeWhile>>(*ctx);
  });
}
