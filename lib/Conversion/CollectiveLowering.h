//===- CollectiveLowering.h - shared parts of the collective lowerings ----===//
//
// What the MPI and NCCL lowerings of `ga.all_reduce` / `shard.all_reduce`
// have in common: which ops form one collective, how the reduced tensor
// becomes a buffer that the engine may overwrite in place (without a copy
// when the tensor is a private accumulator), and how the results are read
// back. Internal to lib/Conversion.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CONVERSION_COLLECTIVELOWERING_H
#define GA_LIB_CONVERSION_COLLECTIVELOWERING_H

#include "ga/IR/GAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::ga::detail {

/// The reduction a collective applies across ranks.
enum class Reduction { Sum, Mean, Max, Min, Product, And, Or, Xor };

/// The reduction of a `ga` collective kind.
Reduction toReduction(CollectiveKind kind);

/// The collective runtimes that the lowerings call, each a column of the
/// code tables of CollectiveLowering.cpp: the host collectives runtime
/// (lib/Runtime/HostCollectives, --ga-convert-ga-to-host-collectives) and
/// NCCL (--ga-convert-ga-to-nccl).
enum class CollectiveRuntime { Host, Nccl };

/// The runtime's name in messages ("NCCL").
StringRef getRuntimeName(CollectiveRuntime runtime);

/// The code of `reduction` in `runtime`'s numbering; nullopt when the
/// runtime has none.
std::optional<int32_t> getReductionCode(Reduction reduction,
                                        CollectiveRuntime runtime);

/// One collective to emit: a single op, or the `ga.all_reduce` ops of one
/// bucket id in one block (packed into one buffer).
struct CollectiveGroup {
  SmallVector<Operation *> ops;
  Reduction reduction = Reduction::Sum;
  /// For `shard.all_reduce`: the grid (null for ga ops).
  shard::GridOp grid;
};

/// Collects the collectives of `func` (top level and nested), grouping
/// `ga.all_reduce` ops by bucket id within a block. Emits an error and fails
/// on a collective it cannot lower (a shard reduction over part of a grid, a
/// generic reduction, an element-type change).
FailureOr<SmallVector<CollectiveGroup>> collectCollectives(func::FuncOp func);

/// The buffer a collective works on.
struct CollectiveBuffer {
  /// The tensor whose buffer is reduced (the accumulator itself, a copy, or
  /// the packed inputs of a group).
  Value tensor;
  /// `bufferization.to_buffer` of `tensor` (identity layout, its shape).
  Value buffer;
  /// The same buffer as a 1-d memref of all its elements.
  Value flat;
  /// Whether `tensor` is a copy of the input(s) (not in place).
  bool copied = false;
};

/// `buffer` (a memref of identity layout) as a 1-d memref of all its
/// elements: itself when 1-d, else an expand_shape (0-d) or collapse_shape.
Value flattenBuffer(OpBuilder &b, Location loc, Value buffer);

/// Sets `buf.buffer` to the buffer of `buf.tensor` and `buf.flat` to that
/// buffer flattened.
void setBuffers(OpBuilder &b, Location loc, CollectiveBuffer &buf);

/// Prepares the buffer of `group` before its first op: the input itself when
/// it is a private accumulator (see `isPrivateAccumulator`), else a copy.
CollectiveBuffer prepareBuffer(OpBuilder &b, Location loc,
                               const CollectiveGroup &group);

/// After the engine has written `buf.buffer`: the reduced tensor
/// (`to_tensor restrict writable`), optionally post-processed by
/// `finish(tensor) -> tensor` (the division of a mean), replaces the results
/// of the group's ops, which are erased.
void replaceWithReduced(OpBuilder &b, Location loc, CollectiveGroup &group,
                        const CollectiveBuffer &buf,
                        function_ref<Value(Value)> finish);

/// After the engine has written `buffer` (the whole tensor of type `full`)
/// for the sharded collective `op` (`ga.reduce_scatter` or `ga.all_gather`):
/// replaces its result by the buffer as a tensor, the rows [begin, end) of
/// it for a reduce-scatter (this rank's part), and erases `op`.
void replaceShardedCollective(OpBuilder &b, Location loc, Operation *op,
                              RankedTensorType full, Value buffer,
                              int64_t begin, int64_t end);

/// `tensor / divisor` elementwise, in place on `tensor` (a float tensor;
/// `divisor` a scalar of its element type).
Value divideInPlace(OpBuilder &b, Location loc, Value tensor, Value divisor);

/// Whether `value` is an accumulator nothing else can observe: a result of
/// `scf.for` (through chains of loops) with a single use, started from a
/// `linalg.fill` of a `tensor.empty`. Shared fills and empties on that chain
/// are cloned so that they become private (the IR means the same).
bool isPrivateAccumulator(Value value);

/// Erases the `shard.grid` ops of `module` that nothing references anymore.
void eraseUnusedGrids(ModuleOp module);

/// Lowers the collectives of each function of `module` that has a body: its
/// groups (collectCollectives) by `lowerGroup`, then its `ga.reduce_scatter`
/// and `ga.all_gather` ops by `lowerSharded`; then erases the grids left
/// unused. Fails at the first failure (which emitted its error).
LogicalResult
lowerCollectives(ModuleOp module,
                 function_ref<LogicalResult(CollectiveGroup &)> lowerGroup,
                 function_ref<LogicalResult(Operation *)> lowerSharded);

/// The code of `type` in `runtime`'s numbering; nullopt when the runtime
/// has none.
std::optional<int32_t> getElementTypeCode(Type type, CollectiveRuntime runtime);

/// The codes of a group's element type and reduction in a runtime's tables.
struct RuntimeCodes {
  int32_t datatype;
  int32_t reduction;
};

/// The codes of `group` in `runtime`'s numbering; emits "<runtime> has no
/// all-reduce of this kind on <type> elements" at the group's last op and
/// fails where the runtime has none.
FailureOr<RuntimeCodes> getRuntimeCodes(const CollectiveGroup &group,
                                        CollectiveRuntime runtime);

/// The codes of the element type of `full` and of the reduction of a
/// sharded collective `op` (`ga.reduce_scatter` with its `kind`, or
/// `ga.all_gather` without: sum, as it reduces nothing) in `runtime`'s
/// numbering; fails with a located error at `op` where the runtime has no
/// such collective.
FailureOr<RuntimeCodes> getShardedCodes(Operation *op, RankedTensorType full,
                                        std::optional<CollectiveKind> kind,
                                        CollectiveRuntime runtime);

/// The address of the first element of the 1-d memref `flat` as an
/// `!llvm.ptr` (aligned base plus offset), what a runtime call takes.
Value getFirstElementAddress(OpBuilder &b, Location loc, Value flat);

/// What every runtime call of a collective takes, built before the group's
/// last op: the buffer, the address of its first element (`!llvm.ptr`), its
/// number of elements (i64) and the runtime's codes of its element type and
/// reduction (i32).
struct RuntimeCallOperands {
  CollectiveBuffer buf;
  Value address;
  Value count;
  Value datatype;
  Value reduction;
};

/// Looks up the codes of `group` (getRuntimeCodes: fails with its error
/// where `runtime` has none), then prepares its buffer (prepareBuffer) and
/// the operands of the call at `b`'s insertion point.
FailureOr<RuntimeCallOperands> prepareRuntimeCall(OpBuilder &b,
                                                  const CollectiveGroup &group,
                                                  CollectiveRuntime runtime);

} // namespace mlir::ga::detail

#endif // GA_LIB_CONVERSION_COLLECTIVELOWERING_H
