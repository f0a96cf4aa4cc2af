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

namespace mlir::ga {

/// How one value depends on the batch.
struct BatchClass {
  enum class Kind : uint8_t {
    /// Independent of the samples: parameters, optimizer state, constants.
    Uniform,
    /// Per-sample along dimension `dim`; `factor` consecutive entries of that
    /// dimension belong to one sample (a [B, T] tensor collapsed to [B*T] has
    /// factor T).
    Batched,
    /// The result of a reduction over the batch with `combiner` (none when
    /// the combiner is not one associative op, as in an argmax).
    Reduced,
    /// Computed from reduced values (and uniform ones): normalized losses,
    /// clipped gradients, the optimizer.
    Derived,
  };

  Kind kind = Kind::Uniform;
  int64_t dim = -1;
  int64_t factor = 1;
  std::optional<vector::CombiningKind> combiner;
  /// Whether the value depends on a non-per-sample argument (a parameter or
  /// hyper-parameter). A reduced value that does not is a *data-only
  /// statistic* and may be computed before the main loop.
  bool dependsOnParams = false;
  /// Loop level: 0 for uniform values; for the others, the earliest
  /// micro-batch loop (1-based) in which the value can be computed.
  unsigned level = 0;
  /// For reduced and derived values: the reduction over the batch it comes
  /// from (for diagnostics).
  Operation *origin = nullptr;

  /// A per-sample class along `dim` with `factor` entries per sample.
  static BatchClass getBatched(int64_t dim, int64_t factor) {
    BatchClass cls;
    cls.kind = Kind::Batched;
    cls.dim = dim;
    cls.factor = factor;
    return cls;
  }

  bool isUniform() const { return kind == Kind::Uniform; }
  bool isBatched() const { return kind == Kind::Batched; }
  /// Reduced or derived: available only after a micro-batch loop.
  bool isPostReduction() const {
    return kind == Kind::Reduced || kind == Kind::Derived;
  }
  void print(raw_ostream &os) const;
};

/// What the analysis found about an op that consumes per-sample values.
struct PerSampleOpInfo {
  /// For linalg ops: the loop dimension that iterates over samples.
  int64_t batchLoop = -1;
  /// Entries of the batch loop that belong to one sample.
  int64_t factor = 1;
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
/// at the offending op. The analysis prints nothing itself: `report()` emits
/// the collected diagnostics, once.
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
  ArrayRef<BlockArgument> getBatchArgs() const { return batchArgs; }
  /// The batch size, or ShapedType::kDynamic when only known at run time.
  int64_t getBatchSize() const { return batchSize; }

  /// The class of `value` (uniform for values the analysis never saw).
  BatchClass getClass(Value value) const;
  /// Information on an op with per-sample operands, or null.
  const PerSampleOpInfo *getOpInfo(Operation *op) const;
  /// Whether `op` consumes per-sample values (it belongs in a loop body).
  bool isPerSample(Operation *op) const { return opInfo.count(op); }
  /// Whether `op` reduces over the batch.
  bool isBatchReduction(Operation *op) const;
  /// If `value` is the size of the batch dimension of a per-sample value
  /// (`tensor.dim`), the factor it is scaled by.
  std::optional<int64_t> getBatchExtentFactor(Value value) const;
  /// Number of micro-batch loops the rewrite needs (1, or more when
  /// data-only statistics must be computed first).
  unsigned getNumLevels() const { return numLevels; }
  /// The loop (1-based) in which the reduction `op` accumulates: the latest
  /// loop that still precedes every per-sample use of its result.
  unsigned getReductionLoop(Operation *op) const;
  /// The loop after which the post-reduction `value` is available (0 for
  /// uniform values).
  unsigned getAvailableAfter(Value value) const;

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
  void analyze();
  void placeReductions();
  void visit(Operation *op);
  void visitLinalg(Operation *op);
  void visitElementwise(Operation *op);
  void visitTensorOp(Operation *op);
  /// The (dimension, factor) shared by the per-sample values among `values`
  /// ((-1, 1) when there is none), or failure when they disagree.
  FailureOr<std::pair<int64_t, int64_t>>
  getCommonLayout(ValueRange values) const;
  /// scf.if and scf.for with per-sample values in their regions.
  void visitStructured(Operation *op);
  /// Checks the non-uniform, non-batched inputs of a per-sample op for batch
  /// coupling and returns the level the op needs. `exempt` are operands that
  /// may legitimately be reduced (accumulation chains).
  unsigned checkCoupling(Operation *op, ArrayRef<Value> inputs,
                         ArrayRef<Value> exempt = {});
  void setResults(Operation *op, const BatchClass &cls);
  /// Records an error at `op` (the step is refused) or a warning.
  Diagnostic &error(Operation *op);
  Diagnostic &warning(Operation *op);
  /// Checks how the payload of the per-sample linalg op `op`, whose batch
  /// loop is `loop` (-1 when no operand is per-sample), reads per-sample
  /// values captured from above.
  LogicalResult checkPayload(Operation *op, int64_t loop, int64_t factor);
  /// Checks that every operand of `op` is read through its indexing map in
  /// a way the rewrite slices exactly for the batch loop `loop`.
  LogicalResult checkIndexingMaps(Operation *op, int64_t loop);
  /// For a linalg op without per-sample operands: the (loop, factor) at
  /// whose `linalg.index` its payload reads every captured per-sample value,
  /// if there is one.
  std::optional<std::pair<int64_t, int64_t>>
  inferBatchLoopFromPayload(Operation *op) const;
  /// Whether the loop `loop` of the linalg op `op` spans the whole batch
  /// dimension of the per-sample `source` (of class `cls`).
  bool spansBatch(Operation *op, int64_t loop, Value source,
                  const BatchClass &cls) const;
  /// Whether the regions of `op` use the per-sample value `captured` only
  /// through `tensor.dim` of static or batch dimensions (recorded as batch
  /// extents).
  bool isOnlySized(Operation *op, Value captured);
  /// Whether result `index` of `op` is computed from a parameter (traced
  /// through the payload: each result of a multi-result op on its own).
  bool resultDependsOnParams(linalg::LinalgOp op, unsigned index) const;
  /// The class of an op none of whose inputs is per-sample.
  BatchClass joinInputs(ArrayRef<Value> inputs) const;
  /// Whether `size` spans the whole extent of `dim` of `source`, whose
  /// samples have `factor` entries each.
  bool isFullExtent(OpFoldResult size, Value source, int64_t dim,
                    int64_t factor) const;

  func::FuncOp func;
  Options options;
  bool failed = false;
  int64_t batchSize = 0;
  unsigned numLevels = 1;
  SmallVector<BlockArgument> batchArgs;
  DenseMap<Value, BatchClass> classes;
  DenseMap<Operation *, PerSampleOpInfo> opInfo;
  DenseMap<Value, int64_t> batchExtents;
  DenseMap<Operation *, unsigned> reductionLoops;
  DenseMap<Value, unsigned> availableAfter;
  DenseSet<OpOperand *> localBatchIndices;
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
