//===- SiblingFusion.cpp - independent element-wise ops in one kernel -----===//
//
// The sibling strategy of --ga-linalg-to-gpu-loops (fuse-siblings=1):
// element-wise ops (and copies) that follow each other, have the same thread
// space (the sizes of their parallel dimensions in the order the
// one-thread-per-element strategy linearizes them) and are independent of
// each other become one kernel: thread t computes element t of each of them,
// one after the other, with the element code of the one-thread-per-element
// strategy (computeElement), so every element is computed by the same
// operations as in the separate kernels. Attention's head split (Q, K and V
// transposed out of one projection) and their gradients (three transposes
// into the slices of one buffer) are the typical siblings.
//
// Independent means: no member reads or writes a buffer that another member
// writes. Then no thread reads anything another thread writes, whatever the
// order in which threads run, and the members' results are those of the
// separate kernels. An op between members that is not one is passed over
// (left before the kernel) when it commutes with the members before it.
//
//===----------------------------------------------------------------------===//

#include "GPULoops.h"

#include "ga/IR/GADialect.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::gpu_loops;

namespace {
/// A member: the op, its dimensions in thread order (for a copy, the
/// dimensions of its source), the buffers it reads and writes.
struct Sibling {
  Operation *op;
  SmallVector<unsigned> order;
  SmallVector<Value> reads, writes;
};
} // namespace

/// `op` as a sibling with its thread space, or nothing when it is not an
/// element-wise op (or copy) on buffers of static shape whose payload has no
/// effects; accumulators' producers keep their own kernels (and names).
static std::optional<Sibling> asSibling(Operation *op,
                                        SmallVectorImpl<int64_t> &sizes) {
  sizes.clear();
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    auto type = dyn_cast<MemRefType>(copy.getSource().getType());
    if (!type || !type.hasStaticShape() || type.getRank() == 0)
      return std::nullopt;
    llvm::append_range(sizes, type.getShape());
    Sibling s{op, {}, {copy.getSource()}, {copy.getTarget()}};
    s.order = llvm::to_vector(llvm::seq<unsigned>(0, type.getRank()));
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
  Sibling s{op, threadOrder(linalgOp), {}, {}};
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  for (unsigned d : s.order)
    sizes.push_back(ranges[d]);
  for (Value in : linalgOp.getDpsInputs())
    if (isa<MemRefType>(in.getType()))
      s.reads.push_back(in);
  llvm::append_range(s.writes, linalgOp.getDpsInits());
  return s;
}

SmallVector<Operation *> FunctionLowering::lowerFusedSiblings(
    Operation *first, ArrayRef<Operation *> following,
    const llvm::SmallPtrSetImpl<Operation *> &absorbed) {
  SmallVector<int64_t> space, sizes;
  std::optional<Sibling> head = asSibling(first, space);
  if (!options.fuseSiblings || !head)
    return {};
  SmallVector<Sibling> members{*head};
  SmallVector<Value> readRoots, writtenRoots;
  auto record = [&](const Sibling &s) {
    for (Value v : s.reads)
      readRoots.push_back(getViewRoot(v));
    for (Value v : s.writes)
      writtenRoots.push_back(getViewRoot(v));
  };
  record(*head);
  // An op that is not a member stays where it is, before the kernel (at
  // the last member), when it commutes with the members before it (a fill
  // and the copy into a slice of its buffer, then the next such pair: the
  // fills are siblings, so are the copies).
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
    std::optional<Sibling> s = asSibling(next, sizes);
    if (!s || sizes != space) {
      if (!commutesBefore(next, readRoots, writtenRoots))
        break;
      passed.insert(next);
      continue;
    }
    bool independent =
        llvm::none_of(s->reads,
                      [&](Value v) {
                        return llvm::is_contained(writtenRoots, getViewRoot(v));
                      }) &&
        llvm::none_of(s->writes, [&](Value v) {
          Value root = getViewRoot(v);
          return llvm::is_contained(writtenRoots, root) ||
                 llvm::is_contained(readRoots, root);
        });
    if (!independent) {
      if (!commutesBefore(next, readRoots, writtenRoots))
        break;
      passed.insert(next);
      continue;
    }
    members.push_back(*s);
    record(*s);
    last = next;
  }
  if (members.size() < 2)
    return {};

  // One kernel at the last member (every operand is defined by then).
  OpBuilder b(last);
  Location loc = first->getLoc();
  SmallVector<Value> spaceValues;
  for (int64_t size : space)
    spaceValues.push_back(constIndex(b, loc, size));
  auto par = buildKernel(
      b, loc, spaceValues, [&](OpBuilder &nb, Location nloc, ValueRange t) {
        for (const Sibling &m : members) {
          if (auto copy = dyn_cast<memref::CopyOp>(m.op)) {
            Value v = memref::LoadOp::create(nb, nloc, copy.getSource(), t);
            memref::StoreOp::create(nb, nloc, v, copy.getTarget(), t);
            continue;
          }
          auto op = cast<linalg::LinalgOp>(m.op);
          SmallVector<Value> loopSizes;
          for (int64_t size : op.getStaticLoopRanges())
            loopSizes.push_back(constIndex(nb, nloc, size));
          SmallVector<Value> ivs(op.getNumLoops());
          for (auto [k, d] : llvm::enumerate(m.order))
            ivs[d] = t[k];
          computeElement(nb, nloc, op, ivs, loopSizes, getFoldedFills(op));
        }
      });
  std::string kind = isa<memref::CopyOp>(first)
                         ? std::string("copy")
                         : describeKernel(cast<linalg::LinalgOp>(first));
  annotateKernel(par, first, kind + "_siblings");
  SmallVector<Operation *> fused;
  for (const Sibling &m : members) {
    fused.push_back(m.op);
    if (auto op = dyn_cast<linalg::LinalgOp>(m.op))
      replaced(op, getFoldedFills(op), /*kernels=*/0);
    else
      m.op->erase();
  }
  ++counts.kernels;
  counts.siblingFused += members.size() - 1;
  return fused;
}
