//===- BatchDependence.h - how values depend on the batch -------*- C++ -*-===//
//
// The batch-dependence analysis classifies every value of a training step by
// how it depends on the samples of the batch. It is the single source of truth
// for `--ga-check-training-step` (which reports what it refuses) and
// `--ga-micro-batch` (which rewrites what it accepts).
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_BATCHDEPENDENCE_H
#define GA_ANALYSIS_BATCHDEPENDENCE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace mlir::ga {

struct BatchVerdict;

/// How one value depends on the batch: the value of the batch lattice that
/// the sparse forward data-flow analysis (BatchDataFlow.h) propagates. The
/// order, from bottom to top:
///
///   uninitialized < loop-index(d) < uniform < derived < reduced(c)
///     < reduced(custom) < batched(d, f) or element < unknown
///
/// Every transfer function is monotone in this order: when an input turns
/// per-sample while the solver iterates, a uniform or derived result turns
/// reduced (a reduction over the batch) or per-sample, never back.
/// `dependsOnParams` joins by "or", `level` by maximum; an unknown value
/// carries the refused op and the reason (the located diagnostic).
struct BatchClass {
  enum class Kind : uint8_t {
    /// Not reached (yet): the bottom of the lattice; dead code stays here.
    Uninitialized,
    /// The value of `linalg.index dim` in a payload (a uniform index).
    LoopIndex,
    /// Independent of the samples: parameters, optimizer state, constants.
    Uniform,
    /// The result of a reduction over the batch with `combiner` (none when
    /// the combiner is not one associative op, as in an argmax).
    Reduced,
    /// Computed from reduced values (and uniform ones): normalized losses,
    /// clipped gradients, the optimizer.
    Derived,
    /// Per-sample along dimension `dim`; `factor` consecutive entries of that
    /// dimension belong to one sample (a [B, T] tensor collapsed to [B*T] has
    /// factor T).
    Batched,
    /// A scalar of one sample inside a payload (an element of a per-sample
    /// operand, or read from a captured per-sample tensor).
    Element,
    /// The top: what the lattice cannot follow (per-sample layouts that
    /// disagree at a merge, control flow the analysis does not model).
    /// `origin` is the op to blame, when there is one. A transfer function
    /// that refuses an op does not produce it (see BatchVerdict).
    Unknown,
  };

  Kind kind = Kind::Uninitialized;
  int64_t dim = -1;
  int64_t factor = 1;
  /// For per-sample values: how many whole batches lie one after the other
  /// along `dim` (a `tensor.concat` of per-sample tensors along their batch
  /// dimension, the way torch.stack is traced before the stack is reshaped
  /// into a new outer dimension). Only reshaped, cast or concatenated again.
  int64_t stacks = 1;
  std::optional<vector::CombiningKind> combiner;
  /// Whether the value depends on a non-per-sample argument (a parameter or
  /// hyper-parameter). A reduced value that does not is a *data-only
  /// statistic* and may be computed before the main loop.
  bool dependsOnParams = false;
  /// Loop level: 0 for uniform values; for the others, the earliest
  /// micro-batch loop (1-based) in which the value can be computed.
  unsigned level = 0;
  /// For `tensor.dim` results: the batch extent (the size of the batch
  /// dimension of a per-sample value) scaled by this factor when positive;
  /// 0 when it is not (yet) one, -1 when it is two different ones. Only read
  /// on `tensor.dim` results (`getBatchExtentFactor`).
  int64_t extentFactor = 0;
  /// For reduced and derived values: the reduction over the batch it comes
  /// from (for diagnostics). For unknown values: the op whose values the
  /// analysis cannot follow (null when two control-flow paths disagree; the
  /// region op is refused then). Why is not part of the lattice: the
  /// analysis records it beside the lattice
  /// (BatchDependence::refusalReasons).
  Operation *origin = nullptr;

  static BatchClass getUniform(bool dependsOnParams = false) {
    BatchClass cls;
    cls.kind = Kind::Uniform;
    cls.dependsOnParams = dependsOnParams;
    return cls;
  }
  /// A per-sample class along `dim` with `factor` entries per sample.
  static BatchClass getBatched(int64_t dim, int64_t factor,
                               int64_t stacks = 1) {
    BatchClass cls;
    cls.kind = Kind::Batched;
    cls.dim = dim;
    cls.factor = factor;
    cls.stacks = stacks;
    return cls;
  }
  static BatchClass getUnknown(Operation *origin) {
    BatchClass cls;
    cls.kind = Kind::Unknown;
    cls.origin = origin;
    return cls;
  }

  bool isUninitialized() const { return kind == Kind::Uninitialized; }
  /// Uniform (an index of a payload loop is uniform too).
  bool isUniform() const {
    return kind == Kind::Uniform || kind == Kind::LoopIndex;
  }
  bool isBatched() const { return kind == Kind::Batched; }
  /// Per-sample with several batches stacked along `dim`.
  bool isStacked() const { return isBatched() && stacks != 1; }
  bool isElement() const { return kind == Kind::Element; }
  bool isUnknown() const { return kind == Kind::Unknown; }
  /// Reduced or derived: available only after a micro-batch loop.
  bool isPostReduction() const {
    return kind == Kind::Reduced || kind == Kind::Derived;
  }

  /// The class as read at `value`: only the results of a reduction over the
  /// batch (a linalg op) are reduced; a value that control flow selects among
  /// reduced ones (an scf.if yielding one) is derived from them.
  BatchClass readAt(Value value) const;
  /// The least upper bound of `lhs` and `rhs` (what a value that may come
  /// from either is).
  static BatchClass join(const BatchClass &lhs, const BatchClass &rhs);
  bool operator==(const BatchClass &other) const;
  void print(raw_ostream &os) const;
};

/// What the analysis found about an op that consumes per-sample values.
struct PerSampleOpInfo {
  /// For linalg ops: the loop dimension that iterates over samples.
  int64_t batchLoop = -1;
  /// Entries of the batch loop that belong to one sample.
  int64_t factor = 1;
  /// For linalg ops: the proof that a micro-batch is a tile of the batch
  /// loop (BatchSlicing.h): for each operand, the dimension the loop indexes
  /// as a plain dimension, or none when the operand is read whole. The
  /// rewrite slices and recomputes the operands by it.
  SmallVector<std::optional<unsigned>> operandDims;
  /// Whether the op reduces over the batch (the batch loop is a reduction).
  bool reducesBatch = false;
  /// For reductions: whether every result has a named combiner. Otherwise
  /// the op is order-dependent and is split only along its outermost
  /// reduction loop.
  bool hasNamedCombiners = false;
};

/// Classifies every value of a training step (a `func.func` whose per-sample
/// arguments carry `ga.batch`) as uniform, batched(dim), reduced(kind) or
/// derived, records which ops consume per-sample values, and collects every
/// construct a micro-batch rewrite could not keep exact as an error located
/// at the offending op.
///
/// The classes are the fixpoint of a sparse forward data-flow analysis
/// (`BatchDataFlowAnalysis`, solved by a `DataFlowSolver` together with
/// upstream dead-code analysis and constant propagation); what the rewrite
/// needs (per-op information, the placement of reductions in loops, the
/// diagnostics) is derived from the solved lattices. The analysis prints
/// nothing itself: `report()` emits the collected diagnostics, once.
class BatchDependence {
public:
  struct Options {
    /// Accept batch coupling by per-micro-batch statistics (warns).
    bool allowGhostBatch = false;
    /// Make batch coupling exact: a coupled statistic that depends on
    /// parameters is computed in an earlier loop like a data-only one,
    /// recomputing the per-sample work it needs.
    bool recomputeStatistics = false;
  };

  BatchDependence(func::FuncOp func, Options options);

  /// Whether the step can be split into micro-batches exactly (or, with
  /// `allowGhostBatch`, with ghost-batch statistics).
  bool succeeded() const { return !failed; }

  func::FuncOp getFunction() const { return func; }
  const Options &getOptions() const { return options; }
  ArrayRef<BlockArgument> getBatchArgs() const { return batchArgs; }
  /// The batch size, or ShapedType::kDynamic when only known at run time.
  int64_t getBatchSize() const { return batchSize; }

  /// The class of `value` (uniform for values the analysis never reached).
  BatchClass getClass(Value value) const;
  /// Information on an op with per-sample operands, or null.
  const PerSampleOpInfo *getOpInfo(Operation *op) const;
  /// Whether `op` consumes per-sample values (it belongs in a loop body).
  bool isPerSample(Operation *op) const { return opInfo.count(op); }
  /// Whether `op` reduces over the batch.
  bool isBatchReduction(Operation *op) const;
  /// Whether `op` is a top-level scf.if on a condition that does not depend
  /// on the samples whose branches reduce over the batch. It is not
  /// per-sample: the rewrite accumulates its reductions inside a copy of the
  /// branch in every micro-batch and keeps the op itself after the loop.
  bool holdsBatchReductions(Operation *op) const {
    return reductionRegionOps.contains(op);
  }
  /// The reductions over the batch directly in the regions of `op` (see
  /// `holdsBatchReductions`), in order.
  SmallVector<Operation *> getNestedReductions(Operation *op) const;
  /// If `value` is the size of the batch dimension of a per-sample value
  /// (`tensor.dim`), the factor it is scaled by.
  std::optional<int64_t> getBatchExtentFactor(Value value) const;
  /// Number of micro-batch loops the rewrite needs (1, or more when
  /// data-only statistics must be computed first).
  unsigned getNumLevels() const { return numLevels; }
  /// The loop (1-based) in which the reduction `op` accumulates: the latest
  /// loop that still precedes every per-sample use of its result. For an op
  /// that holds reductions, the loop of all of them.
  unsigned getReductionLoop(Operation *op) const;
  /// The loop after which the post-reduction `value` is available (0 for
  /// uniform values).
  unsigned getAvailableAfter(Value value) const;
  /// Whether dead-code analysis proved that `block` never executes (a branch
  /// of an scf.if on a constant condition).
  bool isDead(Block *block) const { return deadBlocks.contains(block); }

  /// How many times a transfer function was applied: once per op and per
  /// change of its inputs while the solver iterates, never again after.
  unsigned getNumTransfers() const { return numTransfers; }

  /// Prints the class of every argument and op result of the function.
  void print(raw_ostream &os) const;
  /// Prints the ops of `block` (and of nested scf regions), indented.
  void printBlock(raw_ostream &os, Block &block, unsigned indent) const;

  /// Emits the diagnostics the analysis collected (errors and ghost-batch
  /// warnings), each site once; later calls emit nothing.
  void report();

  /// Whether `use` is the batch-dimension index of a `tensor.extract` in a
  /// linalg payload reading a per-sample value captured from above at the
  /// op's own batch loop: the micro-batch copy of that value is indexed by
  /// the local position in the micro-batch, not the global sample index.
  bool isLocalBatchIndex(OpOperand &use) const {
    return localBatchIndices.contains(&use);
  }

private:
  /// Checks the signature, runs the data-flow solver and derives the tables.
  void analyze();
  /// Classifies the arguments from their `ga.batch` attributes.
  void classifyArguments();
  /// Records the per-op information and diagnostics of the live ops from
  /// the solver's `verdicts` (the last application of each transfer
  /// function); the ops the solver does not visit (region ops, ops without
  /// results) are checked here, once.
  void derive(DenseMap<Operation *, BatchVerdict> &verdicts);
  /// Refuses every unknown value whose refusal no op reported.
  void reportUnknownValues();
  void placeReductions();
  unsigned getNeedInRegion(Operation *regionOp, OpOperand &use,
                           const BatchClass &cls,
                           const DenseMap<Value, unsigned> &neededBy) const;
  /// Records an error at `op` (the step is refused) or a warning.
  Diagnostic &error(Operation *op);

  func::FuncOp func;
  Options options;
  bool failed = false;
  int64_t batchSize = 0;
  unsigned numLevels = 1;
  /// How many times a transfer function was applied (by the solver and to
  /// the ops it does not visit).
  unsigned numTransfers = 0;
  SmallVector<BlockArgument> batchArgs;
  DenseMap<Value, BatchClass> classes;
  DenseMap<Operation *, PerSampleOpInfo> opInfo;
  DenseSet<Operation *> reductionRegionOps;
  DenseMap<Operation *, unsigned> reductionLoops;
  DenseMap<Value, unsigned> availableAfter;
  DenseSet<OpOperand *> localBatchIndices;
  DenseSet<Block *> deadBlocks;
  /// Why the values of each op the data-flow analysis cannot follow are
  /// unknown (the first reason it recorded).
  DenseMap<Operation *, std::string> refusalReasons;
  SmallVector<Diagnostic> diagnostics;
  bool reported = false;
};

/// The batch-dependence analysis of one function for each set of options,
/// as an MLIR analysis: the contract check computes it and reports its
/// diagnostics, the rewrite reuses it (and does not report them again).
class BatchDependenceAnalysis {
public:
  explicit BatchDependenceAnalysis(Operation *op)
      : func(cast<func::FuncOp>(op)) {}

  /// The analysis with `options`, computed on first request.
  BatchDependence &get(BatchDependence::Options options);
  /// The analysis with the options of the passes that query it, its
  /// diagnostics reported (once, by whichever pass asks first).
  BatchDependence &getReported(bool allowGhostBatch, bool recomputeStatistics);

private:
  func::FuncOp func;
  std::map<std::pair<bool, bool>, std::unique_ptr<BatchDependence>> results;
};

/// The values `op` reads: its operands, then the values its regions use from
/// above.
SmallVector<Value> getOpInputs(Operation *op);

/// The functions named by `funcNames` or, when it is empty, every function
/// with a `ga.batch` argument. Emits an error for a name that is not a
/// function with a body.
FailureOr<SmallVector<func::FuncOp>>
collectTrainingSteps(ModuleOp module, ArrayRef<std::string> funcNames);

/// Checks that a step with `analysis`'s batch size can be split into
/// `microBatches` non-empty micro-batches (when the size is static).
LogicalResult checkMicroBatchCount(const BatchDependence &analysis,
                                   int64_t microBatches);

} // namespace mlir::ga

#endif // GA_ANALYSIS_BATCHDEPENDENCE_H
