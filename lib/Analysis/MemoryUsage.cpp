//===- MemoryUsage.cpp - static memory use of a bufferized step -----------===//
//
// Byte counts of the buffers of a bufferized function, and the peak of those
// live at the same time, by a symbolic execution of its allocations and
// deallocations in program order.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/MemoryUsage.h"

#include "ga/IR/GADialect.h"
#include "ga/IR/GAShardOps.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::ga;

StringRef mlir::ga::stringifyBufferRole(BufferRole role) {
  switch (role) {
  case BufferRole::Parameters:
    return "parameters";
  case BufferRole::OptimizerState:
    return "optimizer_state";
  case BufferRole::Inputs:
    return "inputs";
  case BufferRole::Accumulators:
    return "accumulators";
  case BufferRole::Results:
    return "results";
  case BufferRole::Temporaries:
    return "temporaries";
  }
  llvm_unreachable("unknown buffer role");
}

/// The buffer `value` is a view or cast of (through any number of views), or
/// `value` itself.
static Value getViewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      value = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      value = cast.getSource();
    else
      break;
  }
  return value;
}

/// Bytes of a statically shaped memref type, or failure.
static FailureOr<int64_t> getBufferBytes(MemRefType type, Operation *where) {
  if (!type.hasStaticShape())
    return failure();
  Type element = type.getElementType();
  int64_t elementBytes =
      DataLayout::closest(where).getTypeSize(element).getFixedValue();
  return type.getNumElements() * elementBytes;
}

/// Bytes of the buffer `alloc` allocates at most: its static size, or with
/// run-time sizes, the largest each can be (its constant upper bound, by the
/// ops' ValueBoundsOpInterface: a data-parallel step's micro-batch of
/// `base + (i < rem)` samples once its shard is known); failure when a size
/// has no constant bound. `alloc` is a `memref.alloc` or a `gpu.alloc`.
static FailureOr<int64_t> getSizeBound(Value size, unsigned depth);

/// A constant upper bound of dimension `dim` of `memref`: its static size,
/// or through a collapse or a cast the bound of the allocation's size
/// (memref.alloc or the GPU bufferization's gpu.alloc, which ValueBounds
/// does not model).
static FailureOr<int64_t> getDimBound(Value memref, int64_t dim,
                                      unsigned depth) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(dim))
    return type.getDimSize(dim);
  Operation *def = memref.getDefiningOp();
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def)) {
    int64_t product = 1;
    for (int64_t source : collapse.getReassociationIndices()[dim]) {
      FailureOr<int64_t> bound =
          getDimBound(collapse.getSrc(), source, depth + 1);
      if (failed(bound))
        return failure();
      product *= *bound;
    }
    return product;
  }
  if (auto cast = dyn_cast_or_null<memref::CastOp>(def))
    return getDimBound(cast.getSource(), dim, depth + 1);
  ValueRange sizes;
  if (auto alloc = dyn_cast_or_null<gpu::AllocOp>(def))
    sizes = alloc.getDynamicSizes();
  else if (auto alloc = dyn_cast_or_null<memref::AllocOp>(def))
    sizes = alloc.getDynamicSizes();
  else
    return failure();
  return getSizeBound(sizes[type.getDynamicDimIndex(dim)], depth + 1);
}

/// A constant upper bound of the index `size`: ValueBounds', or for a
/// `memref.dim` that it cannot bound (of a collapsed `gpu.alloc`), the
/// bound of that dimension (getDimBound).
static FailureOr<int64_t> getSizeBound(Value size, unsigned depth) {
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, size, /*stopCondition=*/nullptr,
      /*closedUB=*/true);
  if (succeeded(bound) || depth > 16)
    return bound;
  auto dim = size.getDefiningOp<memref::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  if (!index || !isa<MemRefType>(dim.getSource().getType()))
    return failure();
  return getDimBound(dim.getSource(), *index, depth + 1);
}

static FailureOr<int64_t> getAllocBytes(Operation *alloc,
                                        ValueRange dynamicSizes) {
  auto type = cast<MemRefType>(alloc->getResult(0).getType());
  if (type.hasStaticShape())
    return getBufferBytes(type, alloc);
  SmallVector<int64_t> shape(type.getShape());
  auto sizes = dynamicSizes.begin();
  for (int64_t &size : shape) {
    if (!ShapedType::isDynamic(size))
      continue;
    FailureOr<int64_t> bound = getSizeBound(*sizes++, /*depth=*/0);
    if (failed(bound))
      return failure();
    size = std::max<int64_t>(*bound, 0);
  }
  return getBufferBytes(MemRefType::get(shape, type.getElementType()), alloc);
}

MemoryUsageAnalysis::MemoryUsageAnalysis(func::FuncOp func,
                                         ArrayRef<BufferRole> argRoles,
                                         bool inferOptimizerState, bool device)
    : func(func) {
  usage.device = device;
  classify(argRoles, inferOptimizerState || argRoles.empty());
  if (!ok || func.isExternal())
    return;
  ok = ::mlir::succeeded(simulate(func.getBody().front()));
  if (ok && !device)
    computeLoopProfile(argRoles);
}

BufferRole MemoryUsageAnalysis::getRole(Operation *alloc) const {
  auto it = allocationIndex.find(alloc);
  if (it == allocationIndex.end())
    return BufferRole::Temporaries;
  return std::get<1>(allocations[it->second]);
}

/// The ops of `entry` in which `value` or a view of it is used, other than
/// to free it.
static SmallPtrSet<Operation *, 8>
getUseAnchors(BufferViewFlowAnalysis &aliases, Block &entry, Value value) {
  SmallPtrSet<Operation *, 8> anchors;
  for (Value alias : aliases.resolve(value))
    for (Operation *user : alias.getUsers())
      if (!isa<memref::DeallocOp, gpu::DeallocOp>(user))
        if (Operation *anchor = entry.findAncestorOpInBlock(*user))
          anchors.insert(anchor);
  return anchors;
}

/// The role of each argument: `argRoles`, or without them, from `ga.batch`
/// (inputs) and parameters for the rest. Arguments past the given roles are
/// results (out-params).
static SmallVector<BufferRole> getArgumentRoles(func::FuncOp func,
                                                ArrayRef<BufferRole> argRoles) {
  SmallVector<BufferRole> roles(argRoles);
  if (roles.empty())
    for (BlockArgument arg : func.getArguments())
      roles.push_back(
          func.getArgAttr(arg.getArgNumber(), GADialect::getBatchAttrName())
              ? BufferRole::Inputs
              : BufferRole::Parameters);
  roles.resize(func.getNumArguments(), BufferRole::Results);
  return roles;
}

/// The micro-batch loops: loops of the entry block that take a view of a
/// per-sample input.
static SmallPtrSet<Operation *, 4>
findMicroBatchLoops(Block &entry, ArrayRef<BufferRole> roles) {
  SmallPtrSet<Operation *, 4> loops;
  entry.walk([&](memref::SubViewOp view) {
    auto arg = dyn_cast<BlockArgument>(getViewRoot(view.getSource()));
    if (!arg || arg.getOwner() != &entry ||
        roles[arg.getArgNumber()] != BufferRole::Inputs)
      return;
    Operation *anchor = entry.findAncestorOpInBlock(*view);
    if (anchor && isa<scf::ForOp>(anchor))
      loops.insert(anchor);
  });
  return loops;
}

/// The role of the buffer `def` defines (a `memref.alloc`, or a
/// `memref.get_global` of static storage): an accumulator is live across the
/// iterations of a micro-batch loop (defined before it, used in it and after
/// it), a result is returned, the rest are temporaries.
static BufferRole
getAllocationRole(Operation *def, Block &entry, BufferViewFlowAnalysis &aliases,
                  const SmallPtrSetImpl<Operation *> &microBatchLoops,
                  const SmallPtrSetImpl<Operation *> &returned) {
  if (entry.findAncestorOpInBlock(*def) == def) {
    SmallPtrSet<Operation *, 8> anchors =
        getUseAnchors(aliases, entry, def->getResult(0));
    for (Operation *loop : microBatchLoops)
      if (anchors.contains(loop) && def->isBeforeInBlock(loop) &&
          llvm::any_of(anchors, [&](Operation *use) {
            return loop->isBeforeInBlock(use);
          }))
        return BufferRole::Accumulators;
  }
  return returned.contains(def) ? BufferRole::Results : BufferRole::Temporaries;
}

/// The static storage in mutable globals (static-temporaries=1) that `func`
/// uses: each global once, with the first `memref.get_global` of it and its
/// bytes rounded up to its alignment (as the linker lays it out).
static SmallVector<std::pair<memref::GetGlobalOp, int64_t>>
getStaticBuffers(func::FuncOp func) {
  SmallVector<std::pair<memref::GetGlobalOp, int64_t>> buffers;
  llvm::SmallDenseSet<Attribute> seen;
  func.walk([&](memref::GetGlobalOp get) {
    if (!seen.insert(get.getNameAttr()).second)
      return;
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    if (!global || global.getConstant())
      return;
    FailureOr<int64_t> bytes = getBufferBytes(global.getType(), global);
    if (::mlir::failed(bytes))
      return;
    int64_t align = global.getAlignment().value_or(1);
    buffers.emplace_back(get, llvm::alignTo(*bytes, align));
  });
  return buffers;
}

/// The buffers (`memref.alloc` or `memref.get_global`) that ops marked
/// `ga.recomputed` (copies made by --ga-rematerialize) write: their inits,
/// or for another op every buffer it takes, through views.
static SmallPtrSet<Operation *, 8> getRecomputedBuffers(func::FuncOp func) {
  SmallPtrSet<Operation *, 8> buffers;
  func.walk([&](Operation *op) {
    if (!op->hasAttr(kRecomputedAttrName))
      return;
    SmallVector<Value> written;
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      for (OpOperand &init : dps.getDpsInitsMutable())
        written.push_back(init.get());
    else
      llvm::append_range(written, op->getOperands());
    for (Value value : written)
      if (isa<BaseMemRefType>(value.getType()))
        if (Operation *def = getViewRoot(value).getDefiningOp())
          buffers.insert(def);
  });
  return buffers;
}

void MemoryUsageAnalysis::classify(ArrayRef<BufferRole> argRoles,
                                   bool inferOptimizerState) {
  if (func.isExternal())
    return;
  recomputedBuffers = getRecomputedBuffers(func);
  Block &entry = func.getBody().front();
  BufferViewFlowAnalysis aliases(func);
  SmallVector<BufferRole> roles = getArgumentRoles(func, argRoles);
  SmallPtrSet<Operation *, 4> microBatchLoops =
      findMicroBatchLoops(entry, roles);
  // A parameter that no micro-batch loop uses is optimizer state.
  bool inferStateRoles = inferOptimizerState && !microBatchLoops.empty();
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type)
      continue;
    FailureOr<int64_t> bytes = getBufferBytes(type, func);
    if (failed(bytes)) {
      func.emitError() << "memory report: the size of argument #"
                       << arg.getArgNumber() << " (" << type
                       << ") is only known at run time";
      ok = false;
      return;
    }
    BufferRole role = roles[arg.getArgNumber()];
    if (inferStateRoles && role == BufferRole::Parameters &&
        llvm::none_of(getUseAnchors(aliases, entry, arg),
                      [&](Operation *anchor) {
                        return microBatchLoops.contains(anchor);
                      }))
      role = BufferRole::OptimizerState;
    usage.bytes[static_cast<unsigned>(role)] += *bytes;
    usage.argumentBytes += *bytes;
  }

  SmallPtrSet<Operation *, 8> returned;
  func.walk([&](func::ReturnOp ret) {
    for (Value operand : ret.getOperands())
      if (Operation *def = getViewRoot(operand).getDefiningOp())
        returned.insert(def);
  });
  func.walk([&](Operation *alloc) {
    auto host = dyn_cast<memref::AllocOp>(alloc);
    auto gpu = dyn_cast<gpu::AllocOp>(alloc);
    if (!host && !gpu)
      return WalkResult::advance();
    FailureOr<int64_t> bytes = getAllocBytes(
        alloc, host ? host.getDynamicSizes() : gpu.getDynamicSizes());
    if (failed(bytes)) {
      alloc->emitError() << "memory report: the size of this allocation ("
                         << alloc->getResult(0).getType()
                         << ") is only known at run time";
      ok = false;
      return WalkResult::interrupt();
    }
    // The LLVM lowering asks malloc for the alignment on top and aligns by
    // hand; the device allocator aligns itself.
    int64_t heapBytes = *bytes + (host ? host.getAlignment().value_or(0) : 0);
    // A device step's host buffers (deallocation's bookkeeping) are not
    // device memory: counted apart.
    if (host && usage.device) {
      hostAllocations[alloc] = heapBytes;
      return WalkResult::advance();
    }
    BufferRole role =
        getAllocationRole(alloc, entry, aliases, microBatchLoops, returned);
    if (role != BufferRole::Temporaries)
      usage.bytes[static_cast<unsigned>(role)] += heapBytes;
    allocationIndex[alloc] = allocations.size();
    allocations.emplace_back(alloc, role, heapBytes);
    ++usage.numAllocations;
    return WalkResult::advance();
  });
  if (!ok)
    return;
  // Static buffers are held for the whole call: each counts in its role
  // (a temporary on top of the peak of the heap temporaries).
  for (auto [get, bytes] : getStaticBuffers(func)) {
    BufferRole role =
        getAllocationRole(get, entry, aliases, microBatchLoops, returned);
    usage.bytes[static_cast<unsigned>(role)] += bytes;
    usage.staticBytes += bytes;
    if (role == BufferRole::Temporaries) {
      staticTemporaries += bytes;
      if (recomputedBuffers.contains(get))
        liveRecomputed += bytes;
    }
  }
  usage.recomputedBytes = liveRecomputed;
}

LogicalResult MemoryUsageAnalysis::simulate(Block &block) {
  for (Operation &op : block)
    if (failed(simulate(&op)))
      return failure();
  return success();
}

LogicalResult MemoryUsageAnalysis::simulate(Operation *op) {
  auto bump = [&](unsigned index, int64_t sign) {
    auto [alloc, role, bytes] = allocations[index];
    live += sign * bytes;
    if (role == BufferRole::Temporaries) {
      liveTemporaries += sign * bytes;
      if (recomputedBuffers.contains(alloc))
        liveRecomputed += sign * bytes;
    }
    usage.allocationPeak = std::max(usage.allocationPeak, live);
    int64_t &peak = usage.bytes[static_cast<unsigned>(BufferRole::Temporaries)];
    if (staticTemporaries + liveTemporaries > peak) {
      peak = staticTemporaries + liveTemporaries;
      usage.recomputedBytes = liveRecomputed;
    }
  };
  auto bumpHost = [&](Operation *alloc, int64_t sign) {
    liveHost += sign * hostAllocations.lookup(alloc);
    usage.hostPeak = std::max(usage.hostPeak, liveHost);
  };
  if (isa<memref::AllocOp, gpu::AllocOp>(op)) {
    if (hostAllocations.contains(op))
      bumpHost(op, +1);
    else
      bump(allocationIndex.lookup(op), +1);
    return success();
  }
  if (isa<memref::DeallocOp, gpu::DeallocOp>(op)) {
    Value freed = isa<gpu::DeallocOp>(op)
                      ? cast<gpu::DeallocOp>(op).getMemref()
                      : cast<memref::DeallocOp>(op).getMemref();
    Operation *def = getViewRoot(freed).getDefiningOp();
    if (def && hostAllocations.contains(def)) {
      bumpHost(def, -1);
      return success();
    }
    auto it = def ? allocationIndex.find(def) : allocationIndex.end();
    if (it == allocationIndex.end())
      return op->emitError("memory report: cannot tell which allocation "
                           "of the function this frees");
    bump(it->second, -1);
    return success();
  }
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    // A declaration called on no buffer (a runtime's collective on a raw
    // pointer, --convert-ga-to-host-collectives) allocates and frees none of
    // this function's buffers.
    auto callee = dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
    auto isMemRef = [](Type type) { return isa<BaseMemRefType>(type); };
    if (callee && callee.isExternal() &&
        llvm::none_of(op->getOperandTypes(), isMemRef) &&
        llvm::none_of(op->getResultTypes(), isMemRef))
      return success();
    return op->emitError("memory report: calls are not followed; inline the "
                         "callee first");
  }
  // Anything else that allocates or frees is not counted: refuse it.
  if (!isa<memref::AllocaOp>(op)) {
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      if (effects.hasEffect<MemoryEffects::Allocate>() ||
          effects.hasEffect<MemoryEffects::Free>())
        return op->emitError("memory report: this op allocates or frees "
                             "memory the report cannot count");
    }
  }
  // A region (loop body, branch) is counted once and must free what it
  // allocates: the loop hoisting and deallocation passes guarantee it.
  for (Region &region : op->getRegions()) {
    int64_t before = live, beforeHost = liveHost;
    for (Block &block : region)
      if (failed(simulate(block)))
        return failure();
    if (live != before || liveHost != beforeHost)
      return op->emitError("memory report: a region of this op does not "
                           "free the ")
             << (live - before + liveHost - beforeHost)
             << " bytes it allocates";
  }
  return success();
}

/// The ops that access the contents of the buffer `def` defines (through
/// views and casts, which do not), other than to free it: by their order
/// in `order`, the first and the last, or nothing.
static std::optional<std::pair<unsigned, unsigned>>
getAccessRange(BufferViewFlowAnalysis &aliases, Operation *def,
               const llvm::DenseMap<Operation *, unsigned> &order) {
  std::optional<std::pair<unsigned, unsigned>> range;
  for (Value alias : aliases.resolve(def->getResult(0)))
    for (Operation *user : alias.getUsers()) {
      if (isa<memref::DeallocOp, gpu::DeallocOp, ViewLikeOpInterface,
              memref::CastOp, memref::DimOp>(user))
        continue;
      unsigned at = order.lookup(user);
      range = range ? std::make_pair(std::min(range->first, at),
                                     std::max(range->second, at))
                    : std::make_pair(at, at);
    }
  return range;
}

/// The position in `order` of the last `memref.dealloc` of `alloc` in its
/// block, or nothing.
static std::optional<unsigned>
getDeallocation(memref::AllocOp alloc,
                const llvm::DenseMap<Operation *, unsigned> &order) {
  std::optional<unsigned> last;
  for (Operation *user : alloc->getUsers())
    if (isa<memref::DeallocOp>(user) && user->getBlock() == alloc->getBlock())
      last = std::max(last.value_or(0), order.lookup(user));
  return last;
}

/// The profile of the micro-batch loops' bodies (a data-parallel rank's
/// step has two when its micro-batches differ in size): at the first access
/// of every buffer inside one (and at its start), the bytes of the
/// buffers whose contents are live there: from the first op that accesses
/// a buffer to the last, in program order (a pre-order walk). That range is
/// within the contents' live range whatever storage the lowering gives the
/// buffer, so no two buffers live at one point share bytes, in this step
/// or in one that differs from it only by the collectives it moves out of
/// the loop (a sharded-parameter plan): what the planner's lower bound
/// adds up (python/ga_mlir/torch/_shard_search.py). A buffer of a run-time
/// size (a micro-batch's activation in a data-parallel step) is counted
/// from its allocation to its deallocation: no sharing takes it (it is a
/// heap block of its own), and the deallocation frees it only at the end
/// of its block, in this step and in such a plan alike. Element bytes,
/// without the heap's alignment; measured on a step bufferized without
/// --ga-share-buffers (whose shared storage merges the ranges).
void MemoryUsageAnalysis::computeLoopProfile(ArrayRef<BufferRole> argRoles) {
  Block &entry = func.getBody().front();
  SmallPtrSet<Operation *, 4> loops =
      findMicroBatchLoops(entry, getArgumentRoles(func, argRoles));
  llvm::DenseMap<Operation *, unsigned> order;
  func.walk<WalkOrder::PreOrder>(
      [&](Operation *op) { order.try_emplace(op, order.size()); });
  // Each loop's first and last op.
  SmallVector<std::pair<unsigned, unsigned>> bodies;
  for (Operation *loop : loops) {
    unsigned begin = order.lookup(loop), end = begin;
    loop->walk([&](Operation *op) { end = std::max(end, order.lookup(op)); });
    bodies.push_back({begin, end});
  }

  // The collectives' buffers: an all-gather's by the argument it gathers
  // (>= 0), any other's -1.
  llvm::DenseMap<Operation *, int64_t> collective;
  func.walk([&](HostCollectiveStartOp start) {
    Operation *def = getViewRoot(start.getBuffer()).getDefiningOp();
    if (!def || !start.getRows())
      return;
    auto arg = start.getInput()
                   ? dyn_cast<BlockArgument>(getViewRoot(start.getInput()))
                   : BlockArgument();
    collective[def] = arg && arg.getOwner() == &entry
                          ? static_cast<int64_t>(arg.getArgNumber())
                          : int64_t(-1);
  });

  // Every buffer's access range, bytes and collective (or -2).
  struct Range {
    unsigned first, last;
    int64_t bytes, collective;
  };
  SmallVector<Range> ranges;
  BufferViewFlowAnalysis aliases(func);
  func.walk([&](Operation *def) {
    FailureOr<int64_t> bytes = failure();
    if (auto alloc = dyn_cast<memref::AllocOp>(def))
      bytes = getAllocBytes(def, alloc.getDynamicSizes());
    else if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      if (global && !global.getConstant())
        bytes = getBufferBytes(global.getType(), global);
    }
    if (::mlir::failed(bytes))
      return;
    std::optional<std::pair<unsigned, unsigned>> range =
        getAccessRange(aliases, def, order);
    if (!range)
      return;
    // A buffer of a run-time size is its own heap block (--ga-share-buffers
    // takes static shapes only) from its allocation to its deallocation
    // (at the end of its block: the ownership-based deallocation's place),
    // in any step that runs the same ops.
    if (auto alloc = dyn_cast<memref::AllocOp>(def);
        alloc && !alloc.getDynamicSizes().empty())
      if (std::optional<unsigned> freed = getDeallocation(alloc, order))
        range = std::make_pair(std::min(range->first, order.lookup(def)),
                               std::max(range->second, *freed));
    ranges.push_back(
        {range->first, range->second, *bytes, collective.lookup_or(def, -2)});
  });

  SmallVector<unsigned> points;
  for (auto [begin, end] : bodies) {
    points.push_back(begin);
    for (const Range &range : ranges)
      if (range.first > begin && range.first <= end)
        points.push_back(range.first);
  }
  llvm::sort(points);
  points.erase(llvm::unique(points), points.end());
  for (unsigned at : points) {
    LoopPoint point;
    for (const Range &range : ranges) {
      if (range.first > at || range.last < at)
        continue;
      if (range.collective >= 0)
        point.gathered.push_back({range.collective, range.bytes});
      else if (range.collective == -1)
        point.scattered += range.bytes;
      else
        point.bytes += range.bytes;
    }
    llvm::sort(point.gathered);
    usage.loopProfile.push_back(std::move(point));
  }
}

void MemoryUsageAnalysis::print(raw_ostream &os) const {
  os << "memory of @" << const_cast<func::FuncOp &>(func).getSymName() << ":\n";
  for (auto [alloc, role, bytes] : allocations)
    os << "  alloc " << alloc->getResult(0).getType() << ": "
       << stringifyBufferRole(role) << ", " << bytes << " bytes\n";
  for (unsigned i = 0; i < kNumBufferRoles; ++i)
    os << "  " << stringifyBufferRole(static_cast<BufferRole>(i)) << ": "
       << usage.bytes[i] << "\n";
  os << "  arguments: " << usage.argumentBytes << "\n";
  os << "  allocation peak: " << usage.allocationPeak << "\n";
  os << "  static: " << usage.staticBytes << "\n";
  os << "  total peak: " << usage.getTotalPeak() << "\n";
  os << "  recomputed: " << usage.recomputedBytes << "\n";
  if (usage.device)
    os << "  host peak: " << usage.hostPeak << "\n";
}
