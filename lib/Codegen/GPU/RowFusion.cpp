//===- RowFusion.cpp - a reduction and its row consumers in one kernel ----===//
//
// The row-fusion strategy of --ga-linalg-to-gpu-loops (fuse-rows=1): a
// reduction with one thread per output element (a "row": softmax's row max,
// LayerNorm's mean) and the linalg ops right after it that read its result
// only at their own row (the variance, the normalization, exp(l - max),
// the division by the row sum) become one kernel with one thread per row.
// The thread runs the ops one after the other, each over its whole row, with
// the element code of the one-thread-per-element strategy (computeElement):
// the same operations in the same order per element, so the fused kernel
// computes bitwise what the separate kernels compute. Rows of at least
// row-warp-min elements get a warp or a block each instead
// (CooperativeRows.cpp).
//
// Upstream linalg cannot express this: a reduction and an element-wise op of
// a larger iteration space are not one linalg op, and tile-and-fuse would
// need a second mapping level. What makes it safe here is ownership: every
// element a member reads from the buffer of an earlier member was written by
// the same thread (the row dimensions index it), and no member writes a
// buffer that another member reads any other way.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/bit.h"

#include <limits>

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

using Member = RowMember;

/// The positions in `map`'s results of `dims`, in order, or failure when one
/// of them is missing.
static FailureOr<SmallVector<unsigned>> positionsOf(AffineMap map,
                                                    ArrayRef<unsigned> dims) {
  SmallVector<unsigned> positions;
  for (unsigned d : dims) {
    std::optional<unsigned> pos =
        map.getResultPosition(getAffineDimExpr(d, map.getContext()));
    if (!pos)
      return failure();
    positions.push_back(*pos);
  }
  return positions;
}

/// True when `op` can be a member at all: on buffers, static loop sizes,
/// projected-permutation output maps, not an accumulator's producer (whose
/// kernel keeps its own name and invariants).
static bool isCandidate(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0 ||
      op->hasAttr(GADialect::getAccumulatesAttrName()) ||
      ShapedType::isDynamicShape(op.getStaticLoopRanges()))
    return false;
  return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &out) {
    return op.getMatchingIndexingMap(&out).isProjectedPermutation();
  });
}

/// True when the only effect of `op` is allocating its results (a buffer
/// that bufferization placed between two members).
static bool onlyAllocates(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions() != 0)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::all_of(list, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect());
  });
}

namespace {
/// The members of one row kernel so far, the buffers they write (with the
/// writing member and the positions of the row in them) and read.
class RowGroup {
public:
  /// Starts a group at `root`; `valid()` is false when the root cannot head
  /// one (an output not indexed by every row dimension, or none).
  explicit RowGroup(linalg::LinalgOp root);
  bool valid() const { return isValid; }
  /// Adds `op` if it reads the group's buffers only at its own rows (or
  /// nothing of them, over the same rows) and has at most `maxThreads`
  /// parallel iterations.
  bool tryJoin(linalg::LinalgOp op, int64_t maxThreads);

  SmallVector<Member> members;
  SmallVector<int64_t> rowShape;
  SmallVector<Value> readRoots, writtenRoots;

private:
  bool recordOutputs();
  void forgetOutputs();
  void recordReads(linalg::LinalgOp op);
  FailureOr<SmallVector<unsigned>> rowDimsOf(linalg::LinalgOp op) const;
  bool readsOwnRows() const;
  bool readsOwnRows(unsigned i, const Member &m, OpOperand *in) const;

  DenseMap<Value, std::pair<unsigned, SmallVector<unsigned>>> written;
  bool isValid = false;
};
} // namespace

RowGroup::RowGroup(linalg::LinalgOp root) {
  // The rows: the root's parallel dimensions, in the order of its first
  // output; every output is indexed by all of them (one element per thread).
  AffineMap rootOut = root.getMatchingIndexingMap(root.getDpsInitOperand(0));
  if (llvm::any_of(root.getDpsInitsMutable(), [&](OpOperand &out) {
        unsigned n = root.getMatchingIndexingMap(&out).getNumResults();
        return n == 0 || n != root.getNumParallelLoops();
      }))
    return;
  SmallVector<int64_t> loopSizes = root.getStaticLoopRanges();
  SmallVector<unsigned> rootRows;
  for (AffineExpr e : rootOut.getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    rootRows.push_back(d);
    rowShape.push_back(loopSizes[d]);
  }
  members.push_back({root, rootRows});
  if (!recordOutputs())
    return;
  recordReads(root);
  isValid = true;
}

/// Forgets the outputs of the last member.
void RowGroup::forgetOutputs() {
  for (auto &[value, entry] : llvm::make_early_inc_range(written))
    if (entry.first == members.size() - 1)
      written.erase(value);
  while (!writtenRoots.empty() && writtenRoots.size() > written.size())
    writtenRoots.pop_back();
}

/// Records the outputs of the last member (nothing when it fails).
bool RowGroup::recordOutputs() {
  Member m = members.back();
  for (OpOperand &out : m.op.getDpsInitsMutable()) {
    FailureOr<SmallVector<unsigned>> pos =
        positionsOf(m.op.getMatchingIndexingMap(&out), m.rowDims);
    Value bufferRoot = getViewRoot(out.get());
    if (failed(pos) || llvm::is_contained(writtenRoots, bufferRoot)) {
      forgetOutputs();
      return false;
    }
    written[out.get()] = {members.size() - 1, *pos};
    writtenRoots.push_back(bufferRoot);
  }
  return true;
}

void RowGroup::recordReads(linalg::LinalgOp op) {
  for (Value in : op.getDpsInputs())
    if (isa<MemRefType>(in.getType()))
      readRoots.push_back(getViewRoot(in));
}

/// The row dimensions of `op`: those indexing the row of a buffer an earlier
/// member wrote, the same for every such read; every other access must not
/// touch a written buffer.
FailureOr<SmallVector<unsigned>>
RowGroup::rowDimsOf(linalg::LinalgOp op) const {
  std::optional<SmallVector<unsigned>> rows;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(in->get().getType()))
      continue;
    auto it = written.find(in->get());
    if (it == written.end()) {
      if (llvm::is_contained(writtenRoots, getViewRoot(in->get())))
        return failure();
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(in);
    SmallVector<unsigned> dims;
    for (unsigned p : it->second.second) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(p));
      if (!dim)
        return failure();
      dims.push_back(dim.getPosition());
    }
    if (rows && *rows != dims)
      return failure();
    rows = dims;
  }
  // A sibling that reads nothing of the group (a second row sum over the
  // same rows): its rows are the leading dimensions of its first output.
  if (!rows) {
    AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (out.getNumResults() < rowShape.size())
      return failure();
    SmallVector<unsigned> dims;
    for (AffineExpr e : out.getResults().take_front(rowShape.size())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim)
        return failure();
      dims.push_back(dim.getPosition());
    }
    rows = dims;
  }
  // One dimension per row dimension (a read of fewer would leave a row
  // index undefined in the kernel), and distinct ones: a diagonal read
  // (i, i) would read another thread's element.
  if (rows->size() != rowShape.size() ||
      llvm::SmallDenseSet<unsigned>(rows->begin(), rows->end()).size() !=
          rows->size())
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [d, size] : llvm::zip(*rows, rowShape))
    if (iterators[d] != utils::IteratorType::parallel || sizes[d] != size)
      return failure();
  for (OpOperand &out : op.getDpsInitsMutable())
    if (llvm::is_contained(writtenRoots, getViewRoot(out.get())))
      return failure();
  return *rows;
}

/// True if member `i` (`m`) reads its input `in` only as the value a member
/// writes: written before, at its own row (checked by rowDimsOf); written
/// after, at its own row too (the thread reads its row before it
/// overwrites it); written by itself, at the element it writes (in place).
bool RowGroup::readsOwnRows(unsigned i, const Member &m, OpOperand *in) const {
  auto it = written.find(in->get());
  if (it == written.end())
    return !llvm::is_contained(writtenRoots, getViewRoot(in->get()));
  unsigned writer = it->second.first;
  ArrayRef<unsigned> positions = it->second.second;
  linalg::LinalgOp op = m.op;
  AffineMap map = op.getMatchingIndexingMap(in);
  if (writer == i &&
      llvm::none_of(op.getDpsInitsMutable(), [&](OpOperand &out) {
        return out.get() == in->get() && op.getMatchingIndexingMap(&out) == map;
      }))
    return false;
  for (auto [k, p] : llvm::enumerate(positions)) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(p));
    if (!dim || dim.getPosition() != m.rowDims[k])
      return false;
  }
  return true;
}

bool RowGroup::readsOwnRows() const {
  for (auto [i, m] : llvm::enumerate(members))
    for (OpOperand *in : linalg::LinalgOp(m.op).getDpsInputOperands())
      if (isa<MemRefType>(in->get().getType()) && !readsOwnRows(i, m, in))
        return false;
  return true;
}

bool RowGroup::tryJoin(linalg::LinalgOp op, int64_t maxThreads) {
  if (!isCandidate(op))
    return false;
  FailureOr<SmallVector<unsigned>> rows = rowDimsOf(op);
  if (failed(rows))
    return false;
  // A consumer with many threads of its own is better off as its own
  // kernel than as a loop in the thread of its row.
  int64_t threads = 1;
  for (auto [d, size] : llvm::enumerate(op.getStaticLoopRanges()))
    if (op.getIteratorTypesArray()[d] == utils::IteratorType::parallel)
      threads *= size;
  if (threads > maxThreads)
    return false;
  members.push_back({op, *rows});
  bool joined = recordOutputs();
  if (joined && !readsOwnRows()) {
    forgetOutputs();
    joined = false;
  }
  if (!joined) {
    members.pop_back();
    return false;
  }
  recordReads(op);
  return true;
}

/// The code of member `m` in the thread of row `row`: its element code over
/// the row, with a loop nest over its other parallel dimensions.
static void computeRowMember(OpBuilder &nb, Location nloc, Member m,
                             ArrayRef<linalg::LinalgOp> folded,
                             ValueRange row) {
  SmallVector<int64_t> sizes = m.op.getStaticLoopRanges();
  SmallVector<Value> sizeValues;
  for (int64_t size : sizes)
    sizeValues.push_back(constIndex(nb, nloc, size));
  Value zero = constIndex(nb, nloc, 0);
  SmallVector<Value> ivs(sizes.size(), zero);
  for (auto [k, d] : llvm::enumerate(m.rowDims))
    ivs[d] = row[k];
  // The other parallel dimensions: a loop nest inside the thread.
  SmallVector<unsigned> rest;
  for (auto [d, it] : llvm::enumerate(m.op.getIteratorTypesArray()))
    if (it == utils::IteratorType::parallel &&
        !llvm::is_contained(m.rowDims, d))
      rest.push_back(d);
  if (rest.empty())
    return computeElement(nb, nloc, m.op, ivs, sizeValues, folded);
  Value one = constIndex(nb, nloc, 1);
  SmallVector<Value> lbs(rest.size(), zero), ubs, steps(rest.size(), one);
  for (unsigned d : rest)
    ubs.push_back(sizeValues[d]);
  scf::buildLoopNest(nb, nloc, lbs, ubs, steps,
                     [&](OpBuilder &ib, Location il, ValueRange qivs) {
                       SmallVector<Value> all(ivs);
                       for (auto [k, d] : llvm::enumerate(rest))
                         all[d] = qivs[k];
                       computeElement(ib, il, m.op, all, sizeValues, folded);
                     });
}

SmallVector<Operation *> FunctionLowering::lowerFusedRows(
    linalg::LinalgOp root, ArrayRef<Operation *> following,
    const llvm::SmallPtrSetImpl<Operation *> &absorbed) {
  if (!options.fuseRows || !isCandidate(root) ||
      root.getNumReductionLoops() == 0)
    return {};
  RowGroup group(root);
  if (!group.valid())
    return {};
  // Long rows: lanes share each row, so a consumer's own thread count is no
  // reason to keep it apart.
  bool cooperative = rowLanes(root) != 0;
  int64_t maxThreads = cooperative ? std::numeric_limits<int64_t>::max()
                                   : options.fuseRowsMaxThreads;
  // Members: the linalg ops that follow in the same block, with nothing in
  // between but allocations, ops without memory effects, fills that an op
  // absorbs (a member, or a later op: no member between the fill and that op
  // touches the fill's buffer, and the fill is gone once that op is
  // lowered) and ops passed over. An op that is not a member can stay where
  // it is, before the group's kernel (which replaces the last member), when
  // it commutes with the members before it: it reads nothing they write and
  // writes nothing they read or write. The later members run after it
  // either way.
  llvm::SmallPtrSet<Operation *, 8> passed;
  Operation *last = root;
  for (Operation *next : following) {
    if (next->getBlock() != root->getBlock())
      break;
    bool clean = true;
    for (Operation *it = last->getNextNode(); it && it != next;
         it = it->getNextNode())
      if (!absorbed.contains(it) && !passed.contains(it) &&
          !isMemoryEffectFree(it) && !onlyAllocates(it)) {
        clean = false;
        break;
      }
    if (!clean)
      break;
    auto op = dyn_cast<linalg::LinalgOp>(next);
    if (op && group.tryJoin(op, maxThreads)) {
      last = next;
      continue;
    }
    if (!commutesBefore(next, group.readRoots, group.writtenRoots))
      break;
    passed.insert(next);
  }
  if (group.members.size() < (cooperative ? 1u : 2u))
    return {};
  // One kernel at the last member (every operand is defined by then).
  OpBuilder b(last);
  Location loc = root.getLoc();
  if (cooperative) {
    int64_t length = 0;
    for (const Member &m : group.members)
      length = std::max(length, rowLength(m));
    unsigned lanes = 32;
    if (options.rowBlockMin != 0 && length >= options.rowBlockMin)
      lanes = llvm::bit_floor(options.blockSize);
    auto par = buildCooperativeRows(last, group.members, group.rowShape, lanes);
    annotateKernel(par, root,
                   describeKernel(root) +
                       (lanes == 32 ? "_rows_warp" : "_rows_block"));
    return finishRowGroup(group.members);
  }
  SmallVector<Value> rowSizes;
  for (int64_t size : group.rowShape)
    rowSizes.push_back(constIndex(b, loc, size));
  auto par = buildKernel(
      b, loc, rowSizes, [&](OpBuilder &nb, Location nloc, ValueRange row) {
        for (const Member &m : group.members)
          computeRowMember(nb, nloc, m, getFoldedFills(m.op), row);
      });
  annotateKernel(par, root, describeKernel(root) + "_rows");
  return finishRowGroup(group.members);
}

SmallVector<Operation *>
FunctionLowering::finishRowGroup(ArrayRef<RowMember> members) {
  SmallVector<Operation *> fused;
  for (const Member &m : members) {
    fused.push_back(m.op);
    replaced(m.op, getFoldedFills(m.op), /*kernels=*/0);
  }
  ++counts.kernels;
  counts.rowFused += members.size() - 1;
  return fused;
}

unsigned FunctionLowering::rowLanes(linalg::LinalgOp root) const {
  if (!options.fuseRows || options.rowWarpMin == 0 || !isCandidate(root) ||
      root.getNumReductionLoops() == 0)
    return 0;
  RowGroup group(root);
  if (!group.valid())
    return 0;
  int64_t rows = 1;
  for (int64_t s : group.rowShape)
    rows *= s;
  if (rows < options.rowMinRows ||
      rowLength(group.members.front()) < options.rowWarpMin)
    return 0;
  return 32;
}
