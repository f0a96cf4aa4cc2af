//===- SiblingFusion.cpp - independent element-wise ops in one kernel -----===//
//
// The sibling strategy of --ga-linalg-to-gpu-loops (fuse-siblings=1):
// element-wise ops (and copies) that follow each other and are independent
// of each other become one kernel.
//
// * Members of the same thread space (the sizes of their parallel
//   dimensions in the order the one-thread-per-element strategy linearizes
//   them) form a segment: thread t computes element t of each of them, one
//   after the other, with the element code of the one-thread-per-element
//   strategy (computeElement), so every element is computed by the same
//   operations as in the separate kernels. Attention's head split (Q, K and
//   V transposed out of one projection) is the typical segment.
// * Segments of different thread spaces are concatenated, the way fused
//   optimizers apply one update to a list of tensors (PyTorch's
//   multi_tensor_apply): the kernel has the sum of their element counts as
//   threads, and thread t runs segment k's element code at t - offset_k.
//   The per-tensor AdamW updates of all parameters are one kernel. New
//   segments join while the total stays within `fuse-siblings-max-threads`
//   (the bucket; members of a segment already there add no threads).
// * A fill of a buffer followed by copies into static slices of it (a
//   `tensor.pad`, a concatenation into a zeroed buffer: the gradient of a
//   slice, Llama's `rotate_half`) is one member over the buffer: each thread
//   writes the value of the last copy whose slice holds its element, or the
//   fill value (a select on the index; the values are moved, not computed).
//
// Independent means: no member reads a buffer that another member writes,
// and two members write the same buffer only in slices that are provably
// disjoint (static subviews of one view, as a concatenation's copies). Then
// no thread reads anything another thread writes, whatever the order in
// which threads run, and the members' results are those of the separate
// kernels. An op between members that is not one is passed over (left
// before the kernel) when it commutes with the members before it.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"
#include "ga/Utils/IRUtils.h"
#include "ga/Utils/Reductions.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

namespace {
/// A member: the op, its dimensions in thread order (for a copy, the
/// dimensions of its source) and their sizes, the buffers it reads and
/// writes; for a fill, the copies into slices of its buffer it takes.
struct Sibling {
  Operation *op;
  SmallVector<unsigned> order;
  SmallVector<int64_t> sizes;
  SmallVector<Value> reads, writes;
  SmallVector<memref::CopyOp> inserts;
  /// Per entry of `reads`, then of `writes`: the element a thread accesses,
  /// as a map of its thread indices.
  SmallVector<AffineMap> readMaps, writeMaps;
};

/// How the members access one buffer: through one view at one map of the
/// thread indices of one thread space, or not (`sameElement` false).
struct BufferUse {
  Value view;
  AffineMap map;
  SmallVector<int64_t> sizes;
  bool sameElement;
};

/// The most bytes of parameters a sibling kernel may take once outlined:
/// ptxas rejects more than 4352 (0x1100) before PTX ISA 8.1, and the
/// kernel may still gain a few 0-d buffers (host loads sunk into it, the
/// micro-batch index of CUDA graphs). This is why multi_tensor_apply, too,
/// launches one kernel per list of at most some tens of tensors.
constexpr int64_t kMaxParamBytes = 3840;

/// Bytes of kernel parameters `v` takes once outlined: a memref descriptor
/// (two pointers, an offset, the sizes and the strides) or a scalar.
static int64_t paramBytes(Value v) {
  if (auto type = dyn_cast<MemRefType>(v.getType()))
    return 8 * (3 + 2 * type.getRank());
  return 8;
}

/// The values from outside `op` its kernel code uses: its operands and the
/// values its payload captures (constants are sunk into the kernel).
static SmallVector<Value> kernelOperands(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      if (!op->isAncestor(v.getParentRegion()->getParentOp()) &&
          !v.getDefiningOp<arith::ConstantOp>())
        values.push_back(v);
  });
  return values;
}

/// Members of one thread space.
struct Segment {
  SmallVector<int64_t> sizes;
  int64_t threads;
  SmallVector<unsigned> members;
};

/// The members of one kernel so far, and what they access.
class SiblingGroup {
public:
  SiblingGroup(Sibling head, int64_t maxThreads) : maxThreads(maxThreads) {
    (void)addParams(head.op);
    join(std::move(head));
  }
  /// Adds `s` if it is independent of the members and fits the bucket.
  bool tryJoin(Sibling s);
  /// Adds `copy` to the fill member whose buffer it writes a static slice
  /// of, if the copy is independent of the other members.
  bool tryInsert(memref::CopyOp copy);

  SmallVector<Sibling, 4> members;
  SmallVector<Segment, 2> segments;
  SmallVector<Value> readRoots, writtenRoots;

private:
  void join(Sibling s);
  void recordRead(Value v) { readRoots.push_back(getViewRoot(v)); }
  void recordWrite(Value v, unsigned member) {
    writtenRoots.push_back(getViewRoot(v));
    writtenViews.push_back({v, member});
  }
  /// True if a write of `view` (by member `member`, or a new one) cannot
  /// touch what the other members read or write.
  bool writeIsIndependent(Value view, std::optional<unsigned> member) const;
  /// True if every access of the members to the buffer of `view` is one of
  /// element `map(t)` of `view` by thread t of the thread space `sizes`, a
  /// permutation: an access of the same element by the same thread, later.
  bool sameElementOnly(Value view, AffineMap map,
                       ArrayRef<int64_t> sizes) const;
  void recordUse(Value view, AffineMap map, ArrayRef<int64_t> sizes);

  DenseMap<Value, BufferUse> uses;

  /// Adds the parameters of `op`'s kernel code if they fit kMaxParamBytes.
  bool addParams(Operation *op);

  int64_t maxThreads;
  int64_t threads = 0;
  llvm::SetVector<Value> params;
  int64_t paramSize = 0;
  SmallVector<std::pair<Value, unsigned>> writtenViews;
};
} // namespace

/// The static offsets and sizes of `view` in `source`, when `view` is a
/// subview of it with unit strides that keeps its rank.
static bool getStaticSlice(Value view, Value &source,
                           SmallVectorImpl<int64_t> &offsets,
                           SmallVectorImpl<int64_t> &sizes) {
  auto sub = view.getDefiningOp<memref::SubViewOp>();
  if (!sub || sub.getSourceType().getRank() != sub.getType().getRank() ||
      ShapedType::isDynamicShape(sub.getStaticOffsets()) ||
      ShapedType::isDynamicShape(sub.getStaticSizes()) ||
      llvm::any_of(sub.getStaticStrides(), [](int64_t s) { return s != 1; }))
    return false;
  source = sub.getSource();
  offsets.assign(sub.getStaticOffsets().begin(), sub.getStaticOffsets().end());
  sizes.assign(sub.getStaticSizes().begin(), sub.getStaticSizes().end());
  return true;
}

/// True if the views `a` and `b` are static slices of one view that do not
/// overlap (in some dimension their index ranges are apart).
static bool provablyDisjoint(Value a, Value b) {
  Value sa, sb;
  SmallVector<int64_t> oa, na, ob, nb;
  if (!getStaticSlice(a, sa, oa, na) || !getStaticSlice(b, sb, ob, nb) ||
      sa != sb)
    return false;
  for (auto [d, o] : llvm::enumerate(oa))
    if (o + na[d] <= ob[d] || ob[d] + nb[d] <= o)
      return true;
  return false;
}

static int64_t product(ArrayRef<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

/// `op` as a sibling with its thread space, or nothing when it is not an
/// element-wise op (or copy) on buffers of static shape whose payload has no
/// effects; accumulators' producers keep their own kernels (and names).
static std::optional<Sibling> asSibling(Operation *op) {
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    auto type = dyn_cast<MemRefType>(copy.getSource().getType());
    if (!type || !type.hasStaticShape() || type.getRank() == 0)
      return std::nullopt;
    Sibling s{op, {}, {}, {copy.getSource()}, {copy.getTarget()}, {}, {}, {}};
    llvm::append_range(s.sizes, type.getShape());
    s.order = llvm::to_vector(llvm::seq<unsigned>(0, type.getRank()));
    AffineMap id =
        AffineMap::getMultiDimIdentityMap(type.getRank(), op->getContext());
    s.readMaps = {id};
    s.writeMaps = {id};
    return s;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumReductionLoops() != 0 || linalgOp.getNumDpsInits() == 0 ||
      linalgOp->hasAttr(GADialect::getAccumulatesAttrName()) ||
      ShapedType::isDynamicShape(linalgOp.getStaticLoopRanges()))
    return std::nullopt;
  for (Operation &nested : linalgOp.getBlock()->without_terminator())
    if (!isMemoryEffectFree(&nested))
      return std::nullopt;
  Sibling s{op, threadOrder(linalgOp), {}, {}, {}, {}, {}, {}};
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  for (unsigned d : s.order)
    s.sizes.push_back(ranges[d]);
  // Loop dimension order[k] is thread index k.
  SmallVector<AffineExpr> loopOfThread(s.order.size());
  for (auto [k, d] : llvm::enumerate(s.order))
    loopOfThread[d] = getAffineDimExpr(k, op->getContext());
  AffineMap toLoops =
      AffineMap::get(s.order.size(), 0, loopOfThread, op->getContext());
  for (OpOperand *in : linalgOp.getDpsInputOperands())
    if (isa<MemRefType>(in->get().getType())) {
      s.reads.push_back(in->get());
      s.readMaps.push_back(
          linalgOp.getMatchingIndexingMap(in).compose(toLoops));
    }
  for (OpOperand &out : linalgOp.getDpsInitsMutable()) {
    s.writes.push_back(out.get());
    s.writeMaps.push_back(
        linalgOp.getMatchingIndexingMap(&out).compose(toLoops));
  }
  return s;
}

bool SiblingGroup::writeIsIndependent(Value view,
                                      std::optional<unsigned> member) const {
  Value root = getViewRoot(view);
  if (llvm::is_contained(readRoots, root))
    return false;
  for (auto [other, owner] : writtenViews)
    if (owner != member && getViewRoot(other) == root &&
        !provablyDisjoint(view, other))
      return false;
  return true;
}

void SiblingGroup::recordUse(Value view, AffineMap map,
                             ArrayRef<int64_t> sizes) {
  auto [it, inserted] = uses.try_emplace(
      getViewRoot(view),
      BufferUse{view, map, llvm::to_vector(sizes), map && map.isPermutation()});
  if (!inserted && (it->second.view != view || it->second.map != map ||
                    ArrayRef<int64_t>(it->second.sizes) != sizes))
    it->second.sameElement = false;
}

bool SiblingGroup::sameElementOnly(Value view, AffineMap map,
                                   ArrayRef<int64_t> sizes) const {
  auto it = uses.find(getViewRoot(view));
  return it != uses.end() && it->second.sameElement &&
         it->second.view == view && it->second.map == map &&
         ArrayRef<int64_t>(it->second.sizes) == sizes;
}

void SiblingGroup::join(Sibling s) {
  unsigned index = members.size();
  for (auto [v, map] : llvm::zip(s.reads, s.readMaps)) {
    recordRead(v);
    recordUse(v, map, s.sizes);
  }
  for (auto [v, map] : llvm::zip(s.writes, s.writeMaps)) {
    recordWrite(v, index);
    recordUse(v, map, s.sizes);
  }
  auto segment = llvm::find_if(
      segments, [&](const Segment &g) { return g.sizes == s.sizes; });
  if (segment == segments.end()) {
    segments.push_back({s.sizes, product(s.sizes), {}});
    threads += segments.back().threads;
    segment = std::prev(segments.end());
  }
  segment->members.push_back(index);
  members.push_back(std::move(s));
}

bool SiblingGroup::addParams(Operation *op) {
  SmallVector<Value> fresh;
  int64_t size = paramSize;
  for (Value v : kernelOperands(op))
    if (!params.contains(v) && !llvm::is_contained(fresh, v)) {
      fresh.push_back(v);
      size += paramBytes(v);
    }
  if (size > kMaxParamBytes && !params.empty())
    return false;
  params.insert(fresh.begin(), fresh.end());
  paramSize = size;
  return true;
}

bool SiblingGroup::tryJoin(Sibling s) {
  bool newSegment = llvm::none_of(
      segments, [&](const Segment &g) { return g.sizes == s.sizes; });
  if (newSegment && threads + product(s.sizes) > maxThreads)
    return false;
  // A read of what a member writes, or a write of what a member accesses,
  // is independent of other threads when both access each element with
  // the thread that owns it (the m and v updates of AdamW and the update
  // of the parameter that reads them, in place).
  for (auto [v, map] : llvm::zip(s.reads, s.readMaps))
    if (llvm::is_contained(writtenRoots, getViewRoot(v)) &&
        !sameElementOnly(v, map, s.sizes))
      return false;
  for (auto [v, map] : llvm::zip(s.writes, s.writeMaps))
    if (!writeIsIndependent(v, std::nullopt) &&
        !sameElementOnly(v, map, s.sizes))
      return false;
  if (!addParams(s.op))
    return false;
  join(std::move(s));
  return true;
}

bool SiblingGroup::tryInsert(memref::CopyOp copy) {
  Value buffer;
  SmallVector<int64_t> offsets, sizes;
  if (!getStaticSlice(copy.getTarget(), buffer, offsets, sizes) ||
      !cast<MemRefType>(copy.getSource().getType()).hasStaticShape())
    return false;
  auto fill = llvm::find_if(members, [&](const Sibling &m) {
    auto op = dyn_cast<linalg::LinalgOp>(m.op);
    return op && isFillLike(op) && op.getDpsInits()[0] == buffer &&
           op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity();
  });
  if (fill == members.end() ||
      llvm::is_contained(writtenRoots, getViewRoot(copy.getSource())) ||
      !writeIsIndependent(copy.getTarget(), fill - members.begin()) ||
      !addParams(copy))
    return false;
  recordRead(copy.getSource());
  recordWrite(copy.getTarget(), fill - members.begin());
  // Not at the thread's own element: no later member may depend on these.
  recordUse(copy.getSource(), AffineMap(), {});
  recordUse(copy.getTarget(), AffineMap(), {});
  fill->reads.push_back(copy.getSource());
  fill->inserts.push_back(copy);
  return true;
}

/// The element `ivs` (in the op's dimensions) of a fill and the copies
/// into slices of its buffer that follow it: the source of the last copy
/// whose slice holds the element, or the fill value.
static void computePaddedElement(OpBuilder &b, Location loc,
                                 linalg::LinalgOp fill,
                                 ArrayRef<memref::CopyOp> inserts,
                                 ArrayRef<Value> ivs) {
  Value value = fillValue(b, fill, ivs);
  for (memref::CopyOp copy : inserts) {
    Value buffer;
    SmallVector<int64_t> offsets, sizes;
    (void)getStaticSlice(copy.getTarget(), buffer, offsets, sizes);
    // In the slice: 0 <= ivs[d] - offset < size, one unsigned compare.
    SmallVector<Value> at;
    Value inside;
    for (auto [d, iv] : llvm::enumerate(ivs)) {
      Value rel =
          arith::SubIOp::create(b, loc, iv, constIndex(b, loc, offsets[d]));
      Value cmp = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rel,
                                        constIndex(b, loc, sizes[d]));
      inside = inside ? arith::AndIOp::create(b, loc, inside, cmp) : cmp;
      at.push_back(rel);
    }
    Value outside = value;
    auto ifOp = scf::IfOp::create(
        b, loc, inside,
        [&](OpBuilder &tb, Location tl) {
          Value v = memref::LoadOp::create(tb, tl, copy.getSource(), at);
          scf::YieldOp::create(tb, tl, v);
        },
        [&](OpBuilder &eb, Location el) {
          scf::YieldOp::create(eb, el, outside);
        });
    value = ifOp.getResult(0);
  }
  memref::StoreOp::create(b, loc, value, fill.getDpsInits()[0], ivs);
}

/// The element code of member `m` at `t` (its thread indices, in thread
/// order).
static void computeMember(OpBuilder &b, Location loc, const Sibling &m,
                          ArrayRef<linalg::LinalgOp> folded, ValueRange t) {
  if (auto copy = dyn_cast<memref::CopyOp>(m.op)) {
    Value v = memref::LoadOp::create(b, loc, copy.getSource(), t);
    memref::StoreOp::create(b, loc, v, copy.getTarget(), t);
    return;
  }
  auto op = cast<linalg::LinalgOp>(m.op);
  SmallVector<Value> loopSizes;
  for (int64_t size : op.getStaticLoopRanges())
    loopSizes.push_back(constIndex(b, loc, size));
  SmallVector<Value> ivs(op.getNumLoops());
  for (auto [k, d] : llvm::enumerate(m.order))
    ivs[d] = t[k];
  if (!m.inserts.empty())
    return computePaddedElement(b, loc, op, m.inserts, ivs);
  computeElement(b, loc, op, ivs, loopSizes, folded);
}

/// `lin` (in [0, product(sizes))) as indices of the row-major `sizes`.
static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value lin,
                                      ArrayRef<int64_t> sizes) {
  SmallVector<Value> idx(sizes.size());
  if (sizes.empty())
    return idx; // a 0-d member: one thread
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d > 0; --d) {
    Value size = constIndex(b, loc, sizes[d]);
    idx[d] = arith::RemUIOp::create(b, loc, lin, size);
    lin = arith::DivUIOp::create(b, loc, lin, size);
  }
  idx[0] = lin;
  return idx;
}

/// The kernel of `group`, at `last` (every operand is defined by then): one
/// segment is the thread space of its members; several are concatenated in
/// one dimension, each under a bounds check of its range of threads.
static scf::ParallelOp emitSiblingKernel(
    const SiblingGroup &group, Operation *last, unsigned blockSize,
    function_ref<SmallVector<linalg::LinalgOp>(linalg::LinalgOp)> foldedFills) {
  auto emitSegment = [&](OpBuilder &b, Location loc, const Segment &segment,
                         ValueRange t) {
    for (unsigned index : segment.members) {
      const Sibling &m = group.members[index];
      SmallVector<linalg::LinalgOp> folded;
      if (auto op = dyn_cast<linalg::LinalgOp>(m.op))
        folded = foldedFills(op);
      computeMember(b, loc, m, folded, t);
    }
  };
  OpBuilder b(last);
  Location loc = group.members.front().op->getLoc();
  SmallVector<Value> space;
  if (group.segments.size() == 1) {
    for (int64_t size : group.segments.front().sizes)
      space.push_back(constIndex(b, loc, size));
    return buildKernelLoop(b, loc, blockSize, space,
                           [&](OpBuilder &nb, Location nloc, ValueRange t) {
                             emitSegment(nb, nloc, group.segments.front(), t);
                           });
  }
  int64_t total = 0;
  for (const Segment &segment : group.segments)
    total += segment.threads;
  space.push_back(constIndex(b, loc, total));
  return buildKernelLoop(
      b, loc, blockSize, space,
      [&](OpBuilder &nb, Location nloc, ValueRange t) {
        int64_t offset = 0;
        for (const Segment &segment : group.segments) {
          // Thread t is segment's thread t - offset when that is in range.
          Value rel = arith::SubIOp::create(nb, nloc, t[0],
                                            constIndex(nb, nloc, offset));
          Value inside =
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult, rel,
                                    constIndex(nb, nloc, segment.threads));
          scf::IfOp::create(nb, nloc, inside, [&](OpBuilder &tb, Location tl) {
            emitSegment(tb, tl, segment,
                        delinearize(tb, tl, rel, segment.sizes));
            scf::YieldOp::create(tb, tl);
          });
          offset += segment.threads;
        }
      });
}

SmallVector<Operation *> FunctionLowering::lowerFusedSiblings(
    Operation *first, ArrayRef<Operation *> following,
    const llvm::SmallPtrSetImpl<Operation *> &absorbed) {
  std::optional<Sibling> head = asSibling(first);
  if (!options.fuseSiblings || !head)
    return {};
  SiblingGroup group(std::move(*head), options.fuseSiblingsMaxThreads);
  // An op that is not a member stays where it is, before the kernel (at
  // the last member), when it commutes with the members before it.
  llvm::SmallPtrSet<Operation *, 8> passed;
  Operation *last = first;
  for (Operation *next : following) {
    if (next->getBlock() != first->getBlock())
      break;
    // Between members: only allocations, ops without memory effects, fills
    // that an op absorbs (they go with that op) and ops passed over.
    bool clean = true;
    for (Operation *it = last->getNextNode(); it && it != next;
         it = it->getNextNode())
      if (!absorbed.contains(it) && !passed.contains(it) &&
          !isMemoryEffectFree(it) && !isa<memref::AllocOp>(it)) {
        clean = false;
        break;
      }
    if (!clean)
      break;
    auto copy = dyn_cast<memref::CopyOp>(next);
    bool joined = copy && group.tryInsert(copy);
    if (!joined)
      if (std::optional<Sibling> s = asSibling(next))
        joined = group.tryJoin(std::move(*s));
    if (joined) {
      last = next;
      continue;
    }
    if (!commutesBefore(next, group.readRoots, group.writtenRoots))
      break;
    passed.insert(next);
  }
  if (group.members.size() < 2 && group.members[0].inserts.empty())
    return {};
  scf::ParallelOp par = emitSiblingKernel(
      group, last, options.blockSize,
      [&](linalg::LinalgOp op) { return getFoldedFills(op); });
  std::string kind = isa<memref::CopyOp>(first)
                         ? std::string("copy")
                         : describeKernel(cast<linalg::LinalgOp>(first));
  annotateKernel(par, first, kind + "_siblings");
  SmallVector<Operation *> fused;
  unsigned ops = 0;
  for (Sibling &m : group.members) {
    fused.push_back(m.op);
    for (memref::CopyOp copy : m.inserts) {
      fused.push_back(copy);
      copy->erase();
    }
    ops += 1 + m.inserts.size();
    if (auto op = dyn_cast<linalg::LinalgOp>(m.op))
      replaced(op, getFoldedFills(op), /*kernels=*/0);
    else
      m.op->erase();
  }
  ++counts.kernels;
  counts.siblingFused += ops - 1;
  return fused;
}
