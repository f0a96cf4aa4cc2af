//===- OverlapAllReduce.cpp - all-reduces in the last micro-batch ---------===//
//
// A data-parallel step's gradient buckets are final once the last
// micro-batch's producers of their accumulators have run. After
// --ga-gpu-single-stream, their NCCL all-reduces (`ga.nccl_all_reduce`, or
// in a sharded step the reduce-scatters `ga.nccl_reduce_scatter`) follow the
// micro-batch loop on the step's stream. This pass peels the loop's last
// iteration and issues each bucket's all-reduce right after the last op of that
// iteration that may access the bucket, on a communication stream forked from
// the step's stream by an event, so that the collective overlaps the rest of
// the backward. The step's stream waits for the communication stream before the
// first later op that may read a bucket.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GALibraryOps.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ga {
#define GEN_PASS_DEF_OVERLAPALLREDUCE
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The memref whose address the pointer `ptr` is, as the runtime calls'
/// lowerings compute it: `inttoptr(index_cast(aligned base
/// [+ offset]))`; null if `ptr` is computed otherwise.
Value getPointedMemref(Value ptr) {
  auto toPtr = ptr.getDefiningOp<LLVM::IntToPtrOp>();
  if (!toPtr)
    return {};
  Value address = toPtr.getArg();
  if (auto cast = address.getDefiningOp<arith::IndexCastOp>())
    address = cast.getIn();
  if (auto add = address.getDefiningOp<arith::AddIOp>())
    address = add.getLhs();
  auto base = address.getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>();
  return base ? base.getSource() : Value();
}

/// One bucket's collective (a `ga.nccl_all_reduce` or a
/// `ga.nccl_reduce_scatter`): the op and the root of the buffer it reduces.
struct Bucket {
  gpu::AsyncOpInterface op;
  Value root;
};

/// The buffers that the collective `op` reads or writes (views of one
/// root).
SmallVector<Value> getBuffers(Operation *op) {
  SmallVector<Value> buffers;
  for (Value operand : op->getOperands())
    if (isa<BaseMemRefType>(operand.getType()))
      buffers.push_back(operand);
  return buffers;
}

/// One run of all-reduces as they move: the loops peeled, the communication
/// stream, the op each moved all-reduce follows and the last all-reduce
/// placed after an op, and the buckets moved.
struct OverlapState {
  DenseSet<Operation *> peeled;
  Value comm;
  DenseMap<Operation *, Operation *> anchorOf, endAfter;
  SmallVector<Operation *> ends;
  SmallVector<Value> movedRoots;
};

struct OverlapAllReducePass
    : public ga::impl::OverlapAllReduceBase<OverlapAllReducePass> {
  using OverlapAllReduceBase::OverlapAllReduceBase;

  void runOnOperation() override;

private:
  /// Whether `op` (or an op nested in it) may read or write a buffer that
  /// may alias one of `roots`: a memref operand of an op with memory effects,
  /// or a pointer operand of a call; a pointer that is not recognized as the
  /// address of a memref may point anywhere.
  bool mayAccess(Operation *op, ArrayRef<Value> roots);
  bool mayAlias(Value root, ArrayRef<Value> roots);
  /// The last op before `op` that may access `root` (another bucket's
  /// all-reduce only if their buffers may alias); null: none.
  Operation *getLastAccess(Operation *op, Value root);
  /// Moves each all-reduce of `buckets` (the all-reduces of one block, in
  /// bucket order) right after the last op that may access its bucket, peeling
  /// the last iteration of a micro-batch loop when that op is the loop, then
  /// joins their communication stream to the step's.
  LogicalResult overlap(ArrayRef<Bucket> buckets);
  /// The op after which `bucket` is final (null: none accesses it before its
  /// call), peeling a loop's last iteration as needed; nullopt (with a
  /// remark) when the loop cannot be peeled.
  std::optional<Operation *> getFinalPoint(Bucket bucket, OverlapState &state);
  /// Moves one bucket's all-reduce (with the views of its buffer) to its
  /// final point, or leaves it with a remark.
  void moveBucket(Bucket bucket, OverlapState &state);
  /// The communication stream (created at the first fork), made to wait for
  /// `stream` at the builder's point.
  Value forkCommStream(OpBuilder &b, Location loc, Value stream,
                       OverlapState &state);
  /// Makes the step's stream wait for the communication stream before the
  /// first op after the moved all-reduces that may access a moved bucket.
  LogicalResult joinCommStream(OverlapState &state);
  /// Peels the last iteration of `loop` right after it; returns whether the
  /// loop remains (false: it had one iteration and was erased).
  bool peelLastIteration(scf::ForOp loop);

  AliasAnalysis *aliasAnalysis = nullptr;
};

} // namespace

bool OverlapAllReducePass::mayAlias(Value root, ArrayRef<Value> roots) {
  return llvm::any_of(roots, [&](Value other) {
    return !aliasAnalysis->alias(root, other).isNo();
  });
}

bool OverlapAllReducePass::mayAccess(Operation *op, ArrayRef<Value> roots) {
  WalkResult result = op->walk([&](Operation *nested) {
    bool isCall = isa<CallOpInterface>(nested);
    if (!isCall && isMemoryEffectFree(nested))
      return WalkResult::advance();
    for (Value operand : nested->getOperands()) {
      Value memref;
      if (isa<BaseMemRefType>(operand.getType())) {
        memref = operand;
      } else if (isCall && isa<LLVM::LLVMPointerType>(operand.getType())) {
        if (operand.getDefiningOp<LLVM::ZeroOp>())
          continue; // a null pointer (no bias, no stream)
        memref = getPointedMemref(operand);
        if (!memref)
          return WalkResult::interrupt();
      }
      if (memref && mayAlias(getViewRoot(memref), roots))
        return WalkResult::interrupt();
    }
    // A call of a host function may reach any buffer through its symbol.
    if (isCall && !isa<func::CallOp>(nested))
      return WalkResult::interrupt();
    if (auto call = dyn_cast<func::CallOp>(nested)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee || !callee.isExternal())
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

bool OverlapAllReducePass::peelLastIteration(scf::ForOp loop) {
  IRRewriter rewriter(loop);
  Location loc = loop.getLoc();
  int64_t lower = *getConstantIntValue(loop.getLowerBound());
  int64_t upper = *getConstantIntValue(loop.getUpperBound());
  int64_t step = *getConstantIntValue(loop.getStep());
  int64_t trips = (upper - lower + step - 1) / step;
  int64_t last = lower + (trips - 1) * step;

  // The values the last iteration starts from: the results of the loop that
  // remains, or the loop's inits when it had one iteration only.
  SmallVector<Value> carried(loop.getInitArgs());
  rewriter.setInsertionPointAfter(loop);
  Value lastIv = arith::ConstantOp::create(
      rewriter, loc,
      rewriter.getIntegerAttr(loop.getInductionVar().getType(), last));
  if (trips > 1) {
    rewriter.setInsertionPoint(loop);
    loop.setUpperBound(arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getIntegerAttr(loop.getUpperBound().getType(), last)));
    carried.assign(loop.getResults().begin(), loop.getResults().end());
  }
  SmallVector<OpOperand *> uses;
  for (Value result : loop.getResults())
    for (OpOperand &use : result.getUses())
      uses.push_back(&use);

  IRMapping mapping;
  mapping.map(loop.getInductionVar(), lastIv);
  mapping.map(loop.getRegionIterArgs(), carried);
  rewriter.setInsertionPointAfter(lastIv.getDefiningOp());
  for (Operation &op : loop.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (OpOperand *use : uses) {
    auto result = cast<OpResult>(use->get());
    use->set(
        mapping.lookupOrDefault(yield.getOperand(result.getResultNumber())));
  }
  if (trips == 1)
    rewriter.eraseOp(loop);
  ++numPeeledLoops;
  return trips > 1;
}

Operation *OverlapAllReducePass::getLastAccess(Operation *op, Value root) {
  Operation *last = op->getPrevNode();
  while (last && !mayAccess(last, root))
    last = last->getPrevNode();
  return last;
}

/// Whether the token `token` is a point of the stream of `root`: `root`, or
/// the token of an op ordered after one (its first async dependency, the
/// stream it is enqueued on).
static bool isOnStream(Value token, Value root) {
  while (token != root) {
    auto async = token.getDefiningOp<gpu::AsyncOpInterface>();
    if (!async || async.getAsyncDependencies().empty())
      return false;
    token = async.getAsyncDependencies().front();
  }
  return true;
}

/// The step's stream at the point right after `op` (null: before the first
/// op of the block): the last stream token defined there that is not on the
/// stream of `exclude` (the communication stream, and the all-reduces moved
/// to it); null if a stream was released since (a host wait).
static Value getStreamAfter(Operation *op, Value exclude) {
  for (Operation *it = op; it; it = it->getPrevNode()) {
    if (isa<StreamReleaseOp>(it))
      return {};
    for (Value result : llvm::reverse(it->getResults()))
      if (isa<gpu::AsyncTokenType>(result.getType()) &&
          !(exclude && isOnStream(result, exclude)))
        return result;
  }
  return {};
}

/// Why the last iteration of `loop` cannot be peeled, or an empty string.
static std::string whyNotPeelable(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step)
    return "its bounds are not constant";
  if (*step <= 0 || *upper <= *lower)
    return "it has no iteration";
  WalkResult waits = loop.getBody()->walk([](Operation *op) {
    return isa<gpu::WaitOp, StreamSynchronizeOp>(op) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
  });
  if (waits.wasInterrupted())
    return "the host waits for the stream inside it";
  return "";
}

/// The ops after `after` in `op`'s block that compute its buffer, in block
/// order: they are cloned at the op's new place.
static SmallVector<Operation *> getBufferChain(Operation *op,
                                               Operation *after) {
  Block *block = op->getBlock();
  SetVector<Operation *> chain;
  BackwardSliceOptions options;
  options.inclusive = false;
  options.filter = [&](Operation *def) {
    return def->getBlock() == block && after && after->isBeforeInBlock(def);
  };
  for (Value buffer : getBuffers(op))
    if (Operation *def = buffer.getDefiningOp(); def && options.filter(def))
      (void)getBackwardSlice(def, &chain, options), chain.insert(def);
  SmallVector<Operation *> defs(chain.begin(), chain.end());
  llvm::sort(defs,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return defs;
}

std::optional<Operation *>
OverlapAllReducePass::getFinalPoint(Bucket bucket, OverlapState &state) {
  // The bucket is final after the last op that may access it. When that is
  // a micro-batch loop, its last iteration is peeled and searched.
  Operation *last = getLastAccess(bucket.op, bucket.root);
  auto loop = dyn_cast_or_null<scf::ForOp>(last);
  if (!loop || state.peeled.contains(loop))
    return last;
  if (std::string why = whyNotPeelable(loop); !why.empty()) {
    InFlightDiagnostic remark = bucket.op->emitRemark()
                                << "left in place: the last iteration of the "
                                   "micro-batch loop cannot be peeled: "
                                << why;
    remark.attachNote(loop.getLoc()) << "the loop";
    ++numLeftAllReduces;
    return std::nullopt;
  }
  if (peelLastIteration(loop))
    state.peeled.insert(loop);
  return getLastAccess(bucket.op, bucket.root);
}

Value OverlapAllReducePass::forkCommStream(OpBuilder &b, Location loc,
                                           Value stream, OverlapState &state) {
  auto tokenType = b.getType<gpu::AsyncTokenType>();
  if (!state.comm)
    state.comm =
        gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  return StreamWaitOp::create(b, loc, tokenType, ValueRange{state.comm, stream})
      .getAsyncToken();
}

void OverlapAllReducePass::moveBucket(Bucket bucket, OverlapState &state) {
  std::optional<Operation *> last = getFinalPoint(bucket, state);
  if (!last)
    return;
  // After an aliasing all-reduce moved before: at the same point, after it.
  // Calls placed at one point keep their order, and the communication
  // stream already waits for that point.
  Operation *anchor = *last;
  if (auto it = state.anchorOf.find(anchor); it != state.anchorOf.end())
    anchor = it->second;
  auto endIt = anchor ? state.endAfter.find(anchor) : state.endAfter.end();
  bool forked = endIt != state.endAfter.end();
  Operation *after = forked ? endIt->second : anchor;
  Value stream = anchor ? getStreamAfter(anchor, state.comm) : Value();
  // The views of the buffer (pure ops after the new position) are cloned
  // there.
  SmallVector<Operation *> defs = getBufferChain(bucket.op, after);
  if (!stream || llvm::any_of(defs, [](Operation *def) {
        return !isMemoryEffectFree(def) || def->getNumRegions();
      })) {
    bucket.op->emitRemark()
        << "left in place: "
        << (stream ? "its buffer is not computed by pure ops"
                   : "no stream after the last op that may access its "
                     "buffer");
    ++numLeftAllReduces;
    return;
  }

  OpBuilder b(after->getContext());
  b.setInsertionPointAfter(after);
  Location loc = bucket.op->getLoc();
  // On the communication stream: after the all-reduce moved to the same
  // point before, or after a fork from the step's stream.
  Value callStream = stream;
  if (commStream && forked)
    callStream = cast<gpu::AsyncOpInterface>(after).getAsyncToken();
  else if (commStream)
    callStream = forkCommStream(b, loc, stream, state);
  IRMapping mapping;
  for (Operation *def : defs)
    b.clone(*def, mapping);
  // What followed the collective on the step's stream follows what preceded
  // it; the moved op (a clone on the cloned views) is ordered on
  // `callStream`.
  Value oldStream = bucket.op.getAsyncDependencies().front();
  if (Value token = bucket.op.getAsyncToken())
    token.replaceAllUsesWith(oldStream);
  mapping.map(oldStream, callStream);
  Operation *moved = b.clone(*bucket.op, mapping);
  bucket.op->erase();
  for (Operation *def : llvm::reverse(defs))
    if (def->use_empty())
      def->erase();
  state.anchorOf[moved] = anchor;
  state.endAfter[anchor] = moved;
  state.ends.push_back(moved);
  state.movedRoots.push_back(bucket.root);
  ++numMovedAllReduces;
}

LogicalResult OverlapAllReducePass::joinCommStream(OverlapState &state) {
  Value comm = state.comm;
  // The communication stream starts before its first use (an all-reduce may
  // have moved before the one that created it).
  auto isBefore = [](Operation *x, Operation *y) {
    return x->isBeforeInBlock(y);
  };
  SmallVector<Operation *> users(comm.getUsers());
  Operation *first = *llvm::min_element(users, isBefore);
  if (first->isBeforeInBlock(comm.getDefiningOp()))
    comm.getDefiningOp()->moveBefore(first);
  Operation *previous = *llvm::max_element(state.ends, isBefore);
  // The join: nothing between the last moved all-reduce and the original places
  // of the all-reduces accesses a moved bucket; the step's stream waits for the
  // communication stream before the first later op that may access one (the
  // optimizer's), waits for the host, has regions, or ends the block.
  Operation *join = previous->getNextNode();
  while (!join->hasTrait<OpTrait::IsTerminator>() &&
         join->getNumRegions() == 0 &&
         !isa<StreamSynchronizeOp, StreamReleaseOp>(join) &&
         !mayAccess(join, state.movedRoots))
    join = join->getNextNode();
  OpBuilder b(join);
  Location loc = join->getLoc();
  Value stream = getStreamAfter(join->getPrevNode(), comm);
  if (!stream) {
    // Not expected: the moved all-reduces found the step's stream before this.
    return join->emitError() << "ga-overlap-all-reduce found no stream to "
                                "join the all-reduces' stream to before this "
                                "op";
  }
  // The step's stream waits for the last all-reduce of each chain on the
  // communication stream; the ops after the join are ordered after it.
  SmallVector<Value> deps{stream};
  for (Operation *end : state.ends)
    if (Value token = cast<gpu::AsyncOpInterface>(end).getAsyncToken();
        token && token.use_empty())
      deps.push_back(token);
  if (deps.size() == 1)
    deps.push_back(comm);
  auto wait =
      StreamWaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(), deps);
  stream.replaceUsesWithIf(wait.getAsyncToken(), [&](OpOperand &use) {
    Operation *user = join->getBlock()->findAncestorOpInBlock(*use.getOwner());
    return user && wait->isBeforeInBlock(user);
  });
  StreamReleaseOp::create(b, loc, comm);
  return success();
}

LogicalResult OverlapAllReducePass::overlap(ArrayRef<Bucket> buckets) {
  OverlapState state;
  for (Bucket bucket : buckets)
    moveBucket(bucket, state);
  return state.comm ? joinCommStream(state) : success();
}

void OverlapAllReducePass::runOnOperation() {
  ModuleOp module = getOperation();
  aliasAnalysis = &getAnalysis<AliasAnalysis>();
  // A sharded step's reduce-scatters inside the micro-batch loop (those of
  // the buckets reduced per micro-batch) stay ordered on the step's stream:
  // only those after the loop are final there.
  SmallVector<gpu::AsyncOpInterface> allReduces;
  module.walk([&](gpu::AsyncOpInterface op) {
    if (isa<NcclAllReduceOp>(op) ||
        (isa<NcclReduceScatterOp>(op) && isa<func::FuncOp>(op->getParentOp())))
      allReduces.push_back(op);
  });
  if (allReduces.empty())
    return;
  for (gpu::AsyncOpInterface op : allReduces) {
    if (op.getAsyncDependencies().size() == 1)
      continue;
    op->emitOpError() << "is not ordered on a stream: ga-overlap-all-reduce "
                         "runs after ga-gpu-single-stream";
    return signalPassFailure();
  }

  // The buckets of each run of all-reduces in one block that no op with regions
  // separates, in the order of their ops: those that follow one loop. A
  // data-parallel step all-reduces the counts of its statistics loop before
  // the main loop, which reads them: each run gets its own communication
  // stream and join, so that the join of the counts precedes that loop.
  SmallVector<SmallVector<Bucket>> runs;
  Operation *previous = nullptr;
  auto separated = [](Operation *from, Operation *to) {
    for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
      if (op->getNumRegions())
        return true;
    return false;
  };
  for (gpu::AsyncOpInterface op : allReduces) {
    if (!previous || previous->getBlock() != op->getBlock() ||
        !previous->isBeforeInBlock(op) || separated(previous, op))
      runs.emplace_back();
    runs.back().push_back({op, getViewRoot(getBuffers(op).front())});
    previous = op;
  }
  for (ArrayRef<Bucket> run : runs)
    if (failed(overlap(run)))
      return signalPassFailure();
}
