//===- BatchDataFlow.h - the batch analysis on mlir::dataflow ---*- C++ -*-===//
//
// The batch-dependence analysis as a sparse forward data-flow analysis: the
// lattice of `BatchClass` values, the transfer functions of each op family,
// and the analysis that the `DataFlowSolver` runs. Region control flow
// (scf.if, scf.for, scf.while) goes through the framework's handling of
// `RegionBranchOpInterface`: iteration arguments reach a real fixpoint.
//
// How an op maps batch dimensions is stated once per op family, by what the
// op declares: elementwise ops by their traits, every other family by a
// `BatchTransferOpInterface` model (BatchTransferOpInterface.td) attached to
// each of its ops, which also re-creates the op for the rewrite
// (MicroBatchBuilder.h):
//
//   linalg structured ops and their payloads   BatchLinalg.cpp
//   tensor ops (models), elementwise ops       BatchTensorOps.cpp
//   scf region ops (models), payload ops       BatchRegions.cpp
//   linalg.softmax (model), the dispatch       BatchDataFlow.cpp
//   ga.attention and its backward (models)     BatchAttention.cpp
//
// An op on per-sample values that declares none of these is refused.
//
// A transfer function reads the classes of the op's inputs and sets the
// class of each result on its own. The solver applies it whenever an input
// changes and keeps what the last application found (the op's verdict:
// per-op information, payload reads, diagnostics); with the converged
// lattice that is the op's verdict, which the derivation of what the rewrite
// needs reads without applying the function again. A refusal does not move
// the results to the top of the lattice: it may be a transient state of the
// fixpoint (a slice that sees its source turn per-sample before its size
// turns into the batch extent), and only the verdict on the converged
// lattice counts. Region ops and ops without results, which the framework
// does not visit, are checked once on the converged lattice.
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_BATCHDATAFLOW_H
#define GA_ANALYSIS_BATCHDATAFLOW_H

#include "ga/Analysis/BatchDependence.h"
#include "ga/Utils/ConstantIndices.h"

#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::ga {

//===----------------------------------------------------------------------===//
// Lattice
//===----------------------------------------------------------------------===//

/// The batch class of one SSA value.
class BatchLattice : public dataflow::Lattice<BatchClass> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BatchLattice)
  using Lattice::Lattice;
};

//===----------------------------------------------------------------------===//
// Transfer functions
//===----------------------------------------------------------------------===//

/// One application of a transfer function to one op: reads the classes of
/// the op's inputs, sets the class of each result, and records what the
/// rewrite needs and what it refuses.
class BatchTransfer {
public:
  using Lookup = llvm::function_ref<BatchClass(Value)>;
  using InfoLookup = llvm::function_ref<const PerSampleOpInfo *(Operation *)>;
  using BlockPredicate = llvm::function_ref<bool(Block *)>;

  /// `lookup` reads the lattice. During the derivation only, `getInfo`
  /// gives what was found about an op nested in a region of `op` (null when
  /// it is not per-sample) and `isDeadBlock` whether a block never runs.
  BatchTransfer(Operation *op, const BatchDependence::Options &options,
                Lookup lookup, InfoLookup getInfo = nullptr,
                BlockPredicate isDeadBlock = nullptr);

  Operation *getOp() const { return op; }
  const BatchDependence::Options &getOptions() const { return options; }

  /// The class of `value` for this op's own verdict. An unknown input reads
  /// as uniform (it is refused where it arises, not again at every user) and
  /// makes every result unknown; an input not reached yet reads as uniform
  /// and defers the verdict.
  BatchClass getClass(Value value);
  /// The class of `value` as the lattice holds it (unknown included).
  BatchClass getLatticeValue(Value value) { return lookup(value); }
  /// Whether `value` reads as per-sample (see `getClass`).
  bool isBatched(Value value) { return getClass(value).isBatched(); }
  /// If `value` is the size of the batch dimension of a per-sample value,
  /// the factor it is scaled by.
  std::optional<int64_t> getBatchExtentFactor(Value value);
  /// What was found about a nested per-sample op (null during solving).
  const PerSampleOpInfo *getNestedInfo(Operation *nested) const {
    return getInfoFn ? getInfoFn(nested) : nullptr;
  }
  /// Whether a nested op was found per-sample (false during solving).
  bool isPerSampleOp(Operation *nested) const {
    return getNestedInfo(nested) != nullptr;
  }
  /// Whether dead-code analysis proved `block` never runs (false during
  /// solving).
  bool isDeadBlock(Block *block) const {
    return isDeadBlockFn && isDeadBlockFn(block);
  }

  /// Refuses the op with a located error at `at` (the op or an op nested in
  /// it); the results keep their classes (see BatchVerdict).
  Diagnostic &error(Operation *at);
  /// Records a warning at `at` (a ghost-batch statistic); nothing is refused.
  Diagnostic &warning(Operation *at);
  bool isRefused() const { return refused; }
  /// Why the op is refused (the first error), for the debug log.
  std::string getRefusalReason() const;

  void setResult(unsigned index, BatchClass cls) { results[index] = cls; }
  void setResults(const BatchClass &cls) {
    for (BatchClass &result : results)
      result = cls;
  }
  /// Marks the op per-sample (it belongs in a loop body).
  void setPerSample(PerSampleOpInfo opInfo = PerSampleOpInfo()) {
    info = opInfo;
  }
  /// Records a payload read of a captured per-sample value at the op's own
  /// sample (see BatchDependence::isLocalBatchIndex).
  void addLocalBatchIndex(OpOperand &use) { localIndices.push_back(&use); }

  /// The join of `inputs` for an op that is not per-sample: uniform, or
  /// derived when an input is reduced or derived.
  BatchClass joinInputs(ArrayRef<Value> inputs);
  /// The (dimension, factor) shared by the per-sample values among `values`
  /// ((-1, 1) when there is none), or failure when they disagree.
  FailureOr<std::pair<int64_t, int64_t>> getCommonLayout(ValueRange values);
  /// Checks the non-uniform, non-batched inputs of a per-sample op for batch
  /// coupling and returns the level the op needs. With `quiet`, only the
  /// level is computed.
  unsigned checkCoupling(ArrayRef<Value> inputs, bool quiet = false);
  /// Whether `size` spans the whole extent of `dim` of `source`, whose
  /// samples have `factor` entries each.
  bool isFullExtent(OpFoldResult size, Value source, int64_t dim,
                    int64_t factor);
  /// Whether the regions of the op use the per-sample value `captured` only
  /// through `tensor.dim` of static or batch dimensions.
  bool isOnlySized(Value captured);

  /// The result classes.
  SmallVector<BatchClass> results;
  /// Set when the op is per-sample.
  std::optional<PerSampleOpInfo> info;
  /// Set for an scf.if on a uniform condition whose branches reduce over
  /// the batch (see BatchDependence::holdsBatchReductions).
  bool holdsReductions = false;
  SmallVector<OpOperand *> localIndices;
  SmallVector<Diagnostic> diagnostics;
  /// An unknown input (the first), which every result inherits.
  std::optional<BatchClass> unknownInput;
  /// Whether an input had not been reached yet.
  bool uninitialized = false;

private:
  Operation *op;
  const BatchDependence::Options &options;
  Lookup lookup;
  InfoLookup getInfoFn;
  BlockPredicate isDeadBlockFn;
  bool refused = false;
};

/// What the last application of an op's transfer function found. The solver
/// re-applies it whenever an input changes, so with the converged lattice
/// the last verdict is the op's verdict: the derivation reads it instead of
/// applying the transfer function again.
struct BatchVerdict {
  BatchVerdict() = default;
  /// Takes what `t` found.
  explicit BatchVerdict(BatchTransfer &t)
      : info(t.info), holdsReductions(t.holdsReductions),
        localIndices(std::move(t.localIndices)),
        diagnostics(std::move(t.diagnostics)), refused(t.isRefused()) {}

  std::optional<PerSampleOpInfo> info;
  bool holdsReductions = false;
  SmallVector<OpOperand *> localIndices;
  SmallVector<Diagnostic> diagnostics;
  bool refused = false;
};

/// The transfer function of `t.getOp()`: payload ops, then the op's
/// BatchTransferOpInterface model, linalg structured ops (their indexing
/// maps), elementwise-mappable ops (their traits); anything else on
/// per-sample values is refused.
void transferOp(BatchTransfer &t);
/// linalg structured ops (named and generic), with their payloads.
void transferLinalg(BatchTransfer &t);
/// elementwise ops on tensors (arith, math).
void transferElementwise(BatchTransfer &t);
/// scf.if, scf.for, scf.while: the checks of a region op whose results the
/// framework joins from its yields.
void transferRegionOp(BatchTransfer &t);
/// Ops nested in a linalg payload (or another non-scf region): scalars of one
/// sample, loop indices, reads of captured values.
void transferPayloadOp(BatchTransfer &t);

/// Whether `op` lies in a payload: some ancestor below the function is
/// neither an scf.if, scf.for nor scf.while.
bool isInPayload(Operation *op);

//===----------------------------------------------------------------------===//
// Analysis
//===----------------------------------------------------------------------===//

/// The sparse forward data-flow analysis of the batch classes of one step.
/// Load it into a `DataFlowSolver` with `dataflow::loadBaselineAnalyses`
/// (dead code, constants) and run the solver on the function, with
/// interprocedural analysis off: the step's arguments get their classes from
/// `ga.batch`, not from call sites.
class BatchDataFlowAnalysis
    : public dataflow::SparseForwardDataFlowAnalysis<BatchLattice> {
public:
  /// Records in `refusalReasons` why each value it cannot follow is unknown.
  BatchDataFlowAnalysis(DataFlowSolver &solver, func::FuncOp func,
                        const BatchDependence::Options &options,
                        DenseMap<Operation *, std::string> &refusalReasons)
      : SparseForwardDataFlowAnalysis(solver), func(func), options(options),
        refusalReasons(refusalReasons) {}

  LogicalResult visitOperation(Operation *op,
                               ArrayRef<const BatchLattice *> operands,
                               ArrayRef<BatchLattice *> results) override;

  /// Calls are not inlined by the analysis: the op family decides.
  void visitExternalCall(CallOpInterface call,
                         ArrayRef<const BatchLattice *> arguments,
                         ArrayRef<BatchLattice *> results) override;

  /// Payload arguments of linalg ops (an element of each operand), induction
  /// variables of loops and indices of other regions.
  void visitNonControlFlowArguments(Operation *op,
                                    const RegionSuccessor &successor,
                                    ArrayRef<BatchLattice *> argLattices,
                                    unsigned firstIndex) override;

  /// The function's arguments, from `ga.batch`; anything else that reaches
  /// an entry state flows in from control flow the analysis cannot follow.
  void setToEntryState(BatchLattice *lattice) override;

  /// Also visits the region ops once, so that their results join the values
  /// that steer them (see `steerRegionResults`).
  LogicalResult initialize(Operation *top) override;
  /// After the framework's own visit of a region op's results (the join of
  /// its yields), joins in the values that steer it.
  LogicalResult visit(ProgramPoint *point) override;

  /// The verdict of each op the solver visited, from its last visit (ops
  /// still waiting for an input have none).
  DenseMap<Operation *, BatchVerdict> &getVerdicts() { return verdicts; }
  /// How many times the solver applied a transfer function.
  unsigned getNumTransfers() const { return numTransfers; }

private:
  /// The results of region ops are the join of the yielded values (done by
  /// the framework); the values that steer the region (a condition, loop
  /// bounds) are joined in here, so that a region steered by a reduced value
  /// is computed after the reduction, and a per-sample result steered by a
  /// statistic is computed after the statistic's loop.
  void steerRegionResults(Operation *op);
  /// Joins `cls` into `lattice` and propagates a change.
  void update(BatchLattice *lattice, const BatchClass &cls) {
    propagateIfChanged(lattice, lattice->join(cls));
  }

  func::FuncOp func;
  BatchDependence::Options options;
  DenseMap<Operation *, std::string> &refusalReasons;
  DenseMap<Operation *, BatchVerdict> verdicts;
  unsigned numTransfers = 0;
};

} // namespace mlir::ga

#endif // GA_ANALYSIS_BATCHDATAFLOW_H
