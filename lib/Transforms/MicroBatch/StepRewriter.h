//===- StepRewriter.h - rewriting one step into loops -----------*- C++ -*-===//
//
// The state shared by the parts of the micro-batch rewrite: planning the ops
// each loop needs (Plan.cpp), cloning ops for one micro-batch (Clone.cpp),
// emitting the loops and their accumulators (Loops.cpp), and the pass
// (MicroBatch.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_TRANSFORMS_MICROBATCH_STEPREWRITER_H
#define GA_LIB_TRANSFORMS_MICROBATCH_STEPREWRITER_H

#include "ga/Analysis/BatchDependence.h"
#include "ga/Analysis/BatchTransferOpInterface.h"
#include "ga/Analysis/MicroBatchBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <tuple>

namespace mlir::ga::micro_batch {

/// The unit attribute of a step function whose batch is the concatenation of
/// the data-parallel ranks' shards (see DataParallel.cpp).
inline constexpr llvm::StringLiteral kDataParallelAttr = "ga.data_parallel";

/// The ops of the step that one loop level re-creates.
struct LevelPlan {
  /// Reductions that accumulate in this level's loop.
  SmallVector<Operation *> accumulated;
  /// Per-sample ops (and ghost-batch statistics) recomputed in the body.
  DenseSet<Operation *> local;
  /// Per-sample values returned by the step, assembled in the last loop.
  SmallVector<Value> assembled;
  /// Per-sample ops computed by an earlier loop, whose results this loop
  /// reads from where that loop stored them instead of recomputing them.
  DenseSet<Operation *> loaded;
  /// Per-sample values of this loop's body that later loops load: stored at
  /// full batch size (`tensor.insert_slice` into a loop-carried tensor).
  SmallVector<Value> stored;
};

/// One loop-carried value.
struct Accumulator {
  enum class Kind { Combine, Ordered, Assemble };
  Kind kind;
  /// Combine/Ordered: the reduction and its result.
  Operation *reduction = nullptr;
  unsigned resultIndex = 0;
  /// Combine: the combining kind.
  vector::CombiningKind combiner = vector::CombiningKind::ADD;
  /// Combine: the value the original reduction started from, when it is
  /// itself reduced over the batch (an accumulation chain); combined after
  /// the loop.
  Value chainedInit;
  /// Assemble: the per-sample value.
  Value assembled;
  /// Assemble: stored for later loops (not a result of the step).
  bool stored = false;
  Value init;
};

/// A run of micro-batches of one size: `count` iterations, starting at
/// sample `start`. `size` is null when sizes are computed per iteration.
struct Segment {
  Value count;
  int64_t start = 0;
  std::optional<int64_t> size;
};

/// The state of one loop body: where the micro-batch lies and how the
/// original values map to their micro-batch counterparts.
struct Instance {
  /// The loop body; values shared by the whole micro-batch live in it.
  Block *body = nullptr;
  Value offset;
  OpFoldResult size;
  IRMapping mapping;
  DenseMap<int64_t, Value> scaledOffsets;
  DenseMap<int64_t, OpFoldResult> scaledSizes;
  /// Re-materialized values, per block (a value re-created inside a cloned
  /// scf region is visible there only).
  DenseMap<Block *, std::map<std::tuple<void *, int64_t, int64_t>, Value>>
      remat;
};

class StepRewriter;

/// The MicroBatchBuilder of one loop body being built by a StepRewriter
/// (Clone.cpp): what the op families' models read and build with.
class InstanceBuilder final : public MicroBatchBuilder {
public:
  InstanceBuilder(StepRewriter &rewriter, Instance &inst,
                  ArrayRef<std::pair<unsigned, Value>> overrides = {})
      : rewriter(rewriter), inst(inst), overrides(overrides) {}

  OpBuilder &getBuilder() override;
  const BatchDependence &getAnalysis() const override;
  Value getMicro(Value value) override;
  Value getUniform(Value value) override;
  Value getTile(Value value, int64_t dim, int64_t factor) override;
  Value getOverride(OpOperand &operand) override;
  OpFoldResult getMicroSize(int64_t factor) override;
  Value getMicroOffset(int64_t factor) override;
  RankedTensorType getMicroType(Type type, int64_t dim,
                                int64_t factor) override;
  Operation *clone(Operation *op, ArrayRef<Value> operands) override;
  void offsetBatchIndices(Operation *clone, int64_t loop, int64_t factor,
                          const DenseSet<OpOperand *> &local) override;
  void map(ValueRange from, ValueRange to) override;
  void cloneBlock(Block &from, Block &to) override;

private:
  StepRewriter &rewriter;
  Instance &inst;
  /// Operands (by number) whose values the op being built replaces.
  ArrayRef<std::pair<unsigned, Value>> overrides;
};

/// Rewrites one training step accepted by the batch-dependence analysis:
/// for each loop level, plans which ops the loop body needs, emits the loops
/// (one per micro-batch size) with their accumulators, replaces the
/// reductions by the loops' results, moves the post-reduction ops after their
/// loop and finally erases the original per-sample ops.
class StepRewriter {
public:
  struct Config {
    int64_t microBatches = 1;
    bool dynamicMicroBatches = false;
    FloatType accumulatorType;
    /// The batch is the concatenation of the ranks' shards: two `index`
    /// arguments bound this rank's samples, the loops cover them only, and
    /// every reduction over the batch is combined across ranks
    /// (`ga.all_reduce`) after its loop (DataParallel.cpp).
    bool dataParallel = false;
  };

  StepRewriter(func::FuncOp func, const BatchDependence &analysis,
               const Config &config)
      : func(func), analysis(analysis), config(config),
        builder(func.getContext()), body(func.getBody().front()) {}

  LogicalResult run();

  int64_t numLoops = 0, numStatisticLoops = 0, numAccumulators = 0,
          numPerSampleOps = 0, numStoredValues = 0;

private:
  friend class InstanceBuilder;

  Location loc() { return func.getLoc(); }
  /// Appends the `index` arguments the configuration asks for (the run-time
  /// micro-batch count; this rank's shard bounds).
  void appendArguments();
  /// Sets `batchSize` at function entry and replaces every `tensor.dim` of a
  /// batched dimension by the full extent it stands for.
  void materializeBatchSizes();
  /// Moves after the loop of `level` the post-reduction ops of the original
  /// step that become available there, in order.
  void movePostReductionOps(unsigned level, Operation *terminator);
  /// Erases the original per-sample ops, now dead (also in the branches of
  /// the scf.if ops that held reductions); an op still used is an internal
  /// error.
  LogicalResult eraseOriginalPerSampleOps();
  /// An index constant, created once at function entry.
  Value indexConstant(int64_t value) {
    Value &constant = indexConstants[value];
    if (!constant) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&body);
      constant = arith::ConstantIndexOp::create(builder, loc(), value);
    }
    return constant;
  }
  /// The full batch extent scaled by `factor`, defined at function entry.
  Value getFullExtent(int64_t factor);
  /// Plans every loop level: `plans[level]` for 1 <= level <= the number
  /// of levels (plans[0] is empty).
  SmallVector<LevelPlan> planLevels();
  LevelPlan planLevel(unsigned level, MutableArrayRef<LevelPlan> plans);
  /// Whether the loop body re-creates `op`, nested in a branch of an scf.if
  /// that holds reductions over the batch: the per-sample work and what it
  /// reads, not what the branch computes from the reductions.
  bool isGuardedWork(Operation *op);
  /// The values from above that the loop body's copy of `regionOp` (an
  /// scf.if that holds reductions over the batch) reads.
  SmallVector<Value> getGuardedInputs(Operation *regionOp);
  /// Whether the per-sample op `op`, when an earlier loop computed it, is
  /// loaded from that loop's store instead of being recomputed.
  bool isLoadable(Operation *op);
  SmallVector<Segment> buildSegments();
  /// Data parallel: N micro-batches of run-time sizes over this rank's
  /// samples [shardBegin, shardEnd).
  SmallVector<Segment> buildShardSegments();
  void emitLevel(unsigned level, const LevelPlan &plan,
                 ArrayRef<Segment> segments);
  SmallVector<Accumulator> makeAccumulators(const LevelPlan &plan);
  void emitBody(Instance &inst, const LevelPlan &plan,
                ArrayRef<Accumulator> accs, ValueRange iterArgs,
                SmallVectorImpl<Value> &yields);
  /// Clones the reduction `op` for one micro-batch and sets the yields of
  /// its accumulators.
  void accumulate(Instance &inst, Operation *op, ArrayRef<Accumulator> accs,
                  ValueRange iterArgs, SmallVectorImpl<Value> &yields);
  /// The copy of `regionOp` (an scf.if that holds reductions over the
  /// batch) in a loop body: on the same condition, each branch re-creates
  /// its per-sample work and accumulates its reductions; the accumulators of
  /// the other branch pass through.
  void accumulateGuarded(Instance &inst, Operation *regionOp,
                         ArrayRef<Accumulator> accs, ValueRange iterArgs,
                         SmallVectorImpl<Value> &yields);
  /// After the loop: the reduction `acc.reduction`, nested in a branch, is
  /// replaced there by the loop's result `value` combined with its init.
  void replaceGuarded(const Accumulator &acc, Value value);

  // Micro-batch re-creation of ops and values.
  /// Moves the insertion point out of cloned scf regions, to just before
  /// the top-level op of the loop body being built.
  void setInsertionToBodyLevel(Instance &inst);
  Value scaledOffset(Instance &inst, int64_t factor);
  OpFoldResult scaledSize(Instance &inst, int64_t factor);
  RankedTensorType microType(Instance &inst, Type type, int64_t dim,
                             int64_t factor);
  Value getMicro(Instance &inst, Value value);
  Value rematerialize(Instance &inst, Value value, int64_t dim, int64_t factor);
  Value sliceFull(Instance &inst, Value full, int64_t dim, int64_t factor);
  /// Re-creates the per-sample op `op` for the micro-batch of `inst`
  /// through its op family's model (ga/Analysis/MicroBatchBuilder.h), the
  /// operands numbered in `overrides` replaced; null (and the pass fails,
  /// with the op named) if the model cannot.
  Operation *materialize(Instance &inst, Operation *op,
                         ArrayRef<std::pair<unsigned, Value>> overrides = {});
  /// Makes the `linalg.index` of the batch loop in the clone `op` global
  /// (offset by the micro-batch's first sample), except at the `local`
  /// uses, which index micro-batch copies of captured per-sample values.
  void offsetBatchIndices(Instance &inst, Operation *op, int64_t loop,
                          int64_t factor,
                          const DenseSet<OpOperand *> &local = {});
  Operation *cloneDetached(Instance &inst, Operation *op,
                           ArrayRef<Value> operands);
  void cloneLocal(Instance &inst, Operation *op);
  void cloneBlockBody(Instance &inst, Block &from, Block &to);
  /// Re-creates the branches of scf.if ops that never run (their condition
  /// is constant) outside the loops as copies of the branches that do, so
  /// that nothing refers to the per-sample values the rewrite erases.
  void replaceDeadBranches();
  /// Data parallel: the reduction of the loop result `value` (accumulator
  /// `acc`) across ranks; an error for what cannot be combined.
  FailureOr<Value> combineAcrossRanks(const Accumulator &acc, Value value);

  func::FuncOp func;
  const BatchDependence &analysis;
  Config config;
  OpBuilder builder;
  Block &body;
  /// The ops of the step as written, in order.
  SmallVector<Operation *> originalOps;
  Value batchSize;
  DenseMap<int64_t, Value> fullExtents;
  DenseMap<int64_t, Value> indexConstants;
  /// The value that replaces each reduction result after its loop.
  DenseMap<Value, Value> finalValues;
  /// The loop level that first computes each per-sample op.
  DenseMap<Operation *, unsigned> computedAt;
  /// The full-batch tensor in which an earlier loop stored each per-sample
  /// value that later loops load.
  DenseMap<Value, Value> storedValues;
  /// Dynamic sizing: N, q = B / N and r = B % N.
  Value numMicroBatches, quotient, remainder;
  /// Data parallel: this rank's first and one-past-last sample.
  Value shardBegin, shardEnd;
  bool failedDataParallel = false;
  /// A per-sample op whose model could not re-create it (an internal error).
  bool failedMaterialize = false;
};

} // namespace mlir::ga::micro_batch

#endif // GA_LIB_TRANSFORMS_MICROBATCH_STEPREWRITER_H
