//===- CollectiveLowering.cpp - shared parts of the collective lowerings --===//

#include "CollectiveLowering.h"

#include "ga/IR/Diagnostics.h"
#include "ga/IR/GAOps.h"
#include "ga/IR/GAShardOps.h"
#include "ga/Utils/FlatViews.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

//===----------------------------------------------------------------------===//
// Collecting collectives
//===----------------------------------------------------------------------===//

Reduction mlir::ga::detail::toReduction(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::Sum:
    return Reduction::Sum;
  case CollectiveKind::Mean:
    return Reduction::Mean;
  case CollectiveKind::Max:
    return Reduction::Max;
  case CollectiveKind::Min:
    return Reduction::Min;
  }
  llvm_unreachable("unknown collective kind");
}

static FailureOr<Reduction> getShardReduction(shard::AllReduceOp op) {
  switch (op.getReduction()) {
  case shard::ReductionKind::Sum:
    return Reduction::Sum;
  case shard::ReductionKind::Average:
    return Reduction::Mean;
  case shard::ReductionKind::Max:
    return Reduction::Max;
  case shard::ReductionKind::Min:
    return Reduction::Min;
  case shard::ReductionKind::Product:
    return Reduction::Product;
  case shard::ReductionKind::BitwiseAnd:
    return Reduction::And;
  case shard::ReductionKind::BitwiseOr:
    return Reduction::Or;
  case shard::ReductionKind::BitwiseXor:
    return Reduction::Xor;
  case shard::ReductionKind::Generic:
    break;
  }
  return op.emitError() << "a 'generic' reduction has no MPI/NCCL "
                           "counterpart";
}

/// Checks a shard all-reduce and finds its grid: the reduction must span
/// every axis of the grid, which is then the whole job.
static FailureOr<shard::GridOp> checkShardAllReduce(shard::AllReduceOp op) {
  auto inType = dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!inType)
    return op.emitError() << "all-reduce of a buffer: lower collectives on "
                             "tensors, before bufferization";
  if (inType != op.getResult().getType())
    return op.emitError() << "all-reduce from " << inType << " to "
                          << op.getResult().getType()
                          << ": a change of element type is not supported";
  auto grid =
      SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, op.getGridAttr());
  if (!grid)
    return op.emitError() << "no shard.grid named @" << op.getGrid();
  llvm::SmallBitVector covered(grid.getRank());
  for (shard::GridAxis axis : op.getGridAxes())
    if (axis >= 0 && axis < grid.getRank())
      covered.set(axis);
  if (!covered.all() || grid.getRank() == 0) {
    InFlightDiagnostic diag =
        op.emitError() << "all-reduce over part of grid @" << op.getGrid()
                       << ": only reductions over every axis (the whole job "
                          "is the data-parallel group) are lowered; use "
                          "--convert-shard-to-mpi for sub-grid collectives";
    diag.attachNote(grid.getLoc()) << "the grid";
    return diag;
  }
  return grid;
}

FailureOr<SmallVector<CollectiveGroup>>
mlir::ga::detail::collectCollectives(func::FuncOp func) {
  SmallVector<CollectiveGroup> groups;
  // ga ops with a bucket id, per block and id.
  llvm::MapVector<std::pair<Block *, int64_t>, unsigned> buckets;
  bool failed = false;
  func.walk([&](Operation *op) {
    if (auto gaOp = dyn_cast<AllReduceOp>(op)) {
      Reduction reduction = toReduction(gaOp.getKind());
      if (std::optional<uint64_t> bucket = gaOp.getBucket()) {
        auto key = std::make_pair(op->getBlock(), int64_t(*bucket));
        auto [it, inserted] = buckets.insert({key, groups.size()});
        if (!inserted) {
          CollectiveGroup &group = groups[it->second];
          auto first = cast<AllReduceOp>(group.ops.front());
          if (first.getKind() != gaOp.getKind() ||
              first.getInput().getType().getElementType() !=
                  gaOp.getInput().getType().getElementType()) {
            op->emitError() << "all-reduces of bucket " << *bucket
                            << " differ in kind or element type";
            failed = true;
            return;
          }
          group.ops.push_back(op);
          return;
        }
      }
      groups.push_back(CollectiveGroup{{op}, reduction, {}});
      return;
    }
    auto shardOp = dyn_cast<shard::AllReduceOp>(op);
    if (!shardOp)
      return;
    FailureOr<shard::GridOp> grid = checkShardAllReduce(shardOp);
    FailureOr<Reduction> reduction =
        succeeded(grid) ? getShardReduction(shardOp) : FailureOr<Reduction>();
    if (::mlir::failed(grid) || ::mlir::failed(reduction)) {
      failed = true;
      return;
    }
    groups.push_back(CollectiveGroup{{op}, *reduction, *grid});
  });
  if (failed)
    return failure();

  // A packed bucket is emitted at its last op: every result must be used
  // after that point only.
  for (CollectiveGroup &group : groups) {
    if (group.ops.size() < 2)
      continue;
    Operation *last = group.ops.back();
    Block *block = last->getBlock();
    for (Operation *op : group.ops) {
      for (Operation *user : op->getResult(0).getUsers()) {
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        if (ancestor && ancestor->isBeforeInBlock(last)) {
          InFlightDiagnostic diag =
              op->emitError()
              << "all-reduce of bucket " << *cast<AllReduceOp>(op).getBucket()
              << " is used before the bucket's last all-reduce, where the "
                 "bucket's collective runs";
          diag.attachNote(last->getLoc()) << "the last all-reduce of the "
                                             "bucket";
          return diag;
        }
      }
    }
  }
  return groups;
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

/// Makes the destination `use` (a loop's init, a DPS op's init) private:
/// true when no other op can see its buffer afterwards. Shared
/// `tensor.empty` ops and fills of them are cloned for this use.
static bool privatizeInit(OpOperand &use);

/// Whether the single-use `value` is a loop or DPS result whose whole chain
/// of destinations is private, or a reshape of such a result that nothing
/// else reads (a reshape is a view of the same buffer: ga-shard-optimizer
/// reduces a bias's 1xD gradient as D rows).
static bool isPrivateResult(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return false;
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(result.getOwner())) {
    Value source = result.getOwner()->getOperand(0);
    return source.hasOneUse() && isPrivateResult(source);
  }
  if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
    return privatizeInit(loop.getInitArgsMutable()[result.getResultNumber()]);
  auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
  if (!dps || !dps.hasPureTensorSemantics())
    return false;
  return privatizeInit(*dps.getTiedOpOperand(result));
}

static bool privatizeInit(OpOperand &use) {
  Value init = use.get();
  Operation *def = init.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::EmptyOp>(def)) {
    if (!init.hasOneUse()) {
      OpBuilder b(def);
      use.set(b.clone(*def)->getResult(0));
    }
    return true;
  }
  if (init.hasOneUse())
    return isPrivateResult(init);
  // A fill of an empty tensor shared with other ops: this use gets its own.
  auto fill = dyn_cast<linalg::FillOp>(def);
  if (!fill || !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return false;
  OpBuilder b(fill);
  IRMapping mapping;
  b.clone(*fill.getOutputs()[0].getDefiningOp(), mapping);
  use.set(b.clone(*fill, mapping)->getResult(0));
  return true;
}

bool mlir::ga::detail::isPrivateAccumulator(Value value) {
  return value.hasOneUse() && isPrivateResult(value);
}

CollectiveBuffer mlir::ga::detail::prepareBuffer(OpBuilder &b, Location loc,
                                                 const CollectiveGroup &group) {
  CollectiveBuffer buf;
  if (group.ops.size() == 1) {
    Value input = group.ops[0]->getOperand(0);
    if (isPrivateAccumulator(input)) {
      buf.tensor = input;
    } else {
      buf.tensor = bufferization::AllocTensorOp::create(
          b, loc, cast<RankedTensorType>(input.getType()), ValueRange(), input);
      buf.copied = true;
    }
  } else {
    int64_t total = 0;
    for (Operation *op : group.ops)
      total +=
          cast<RankedTensorType>(op->getOperand(0).getType()).getNumElements();
    Type elementType =
        cast<RankedTensorType>(group.ops[0]->getOperand(0).getType())
            .getElementType();
    Value packed = tensor::EmptyOp::create(b, loc, {total}, elementType);
    int64_t offset = 0;
    for (Operation *op : group.ops) {
      Value input = op->getOperand(0);
      int64_t n = cast<RankedTensorType>(input.getType()).getNumElements();
      packed = insertFlatView(b, loc, input, packed, offset);
      offset += n;
    }
    buf.tensor = packed;
    buf.copied = true;
  }
  setBuffers(b, loc, buf);
  return buf;
}

Value mlir::ga::detail::flattenBuffer(OpBuilder &b, Location loc,
                                      Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto flatType =
      MemRefType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 1)
    return buffer;
  if (type.getRank() == 0)
    return memref::ExpandShapeOp::create(b, loc, flatType, buffer,
                                         getCollapseAllReassociation(0));
  return memref::CollapseShapeOp::create(
      b, loc, flatType, buffer, getCollapseAllReassociation(type.getRank()));
}

void mlir::ga::detail::setBuffers(OpBuilder &b, Location loc,
                                  CollectiveBuffer &buf) {
  auto type = cast<RankedTensorType>(buf.tensor.getType());
  buf.buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      buf.tensor);
  buf.flat = flattenBuffer(b, loc, buf.buffer);
}

void mlir::ga::detail::replaceWithReduced(OpBuilder &b, Location loc,
                                          CollectiveGroup &group,
                                          const CollectiveBuffer &buf,
                                          function_ref<Value(Value)> finish) {
  Value reduced = bufferization::ToTensorOp::create(
      b, loc, buf.tensor.getType(), buf.buffer, /*restrict=*/true,
      /*writable=*/true);
  if (finish)
    reduced = finish(reduced);
  if (group.ops.size() == 1) {
    group.ops[0]->getResult(0).replaceAllUsesWith(reduced);
  } else {
    int64_t offset = 0;
    for (Operation *op : group.ops) {
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      op->getResult(0).replaceAllUsesWith(
          extractFlatView(b, loc, reduced, offset, type));
      offset += type.getNumElements();
    }
  }
  for (Operation *op : group.ops)
    op->erase();
  group.ops.clear();
}

void mlir::ga::detail::replaceShardedCollective(OpBuilder &b, Location loc,
                                                Operation *op,
                                                RankedTensorType full,
                                                Value buffer, int64_t begin,
                                                int64_t end) {
  Value result = bufferization::ToTensorOp::create(
      b, loc, full, buffer, /*restrict=*/true, /*writable=*/true);
  if (isa<ReduceScatterOp>(op)) {
    SmallVector<OpFoldResult> offsets(full.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(full.getRank(), b.getIndexAttr(1));
    for (int64_t size : full.getShape())
      sizes.push_back(b.getIndexAttr(size));
    offsets[0] = b.getIndexAttr(begin);
    sizes[0] = b.getIndexAttr(end - begin);
    result =
        tensor::ExtractSliceOp::create(b, loc, result, offsets, sizes, strides);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

Value mlir::ga::detail::divideInPlace(OpBuilder &b, Location loc, Value tensor,
                                      Value divisor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{tensor},
      ArrayRef<AffineMap>{identity}, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value quotient =
            arith::DivFOp::create(nested, nestedLoc, args[0], divisor);
        linalg::YieldOp::create(nested, nestedLoc, quotient);
      });
  return generic.getResult(0);
}

void mlir::ga::detail::eraseUnusedGrids(ModuleOp module) {
  SmallVector<shard::GridOp> grids(module.getOps<shard::GridOp>());
  for (shard::GridOp grid : grids)
    if (SymbolTable::symbolKnownUseEmpty(grid, module))
      grid.erase();
}

LogicalResult mlir::ga::detail::lowerCollectives(
    ModuleOp module, function_ref<LogicalResult(CollectiveGroup &)> lowerGroup,
    function_ref<LogicalResult(Operation *)> lowerSharded) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  for (func::FuncOp func : funcs) {
    if (func.isExternal())
      continue;
    FailureOr<SmallVector<CollectiveGroup>> groups = collectCollectives(func);
    if (failed(groups))
      return failure();
    for (CollectiveGroup &group : *groups)
      if (failed(lowerGroup(group)))
        return failure();
    SmallVector<Operation *> sharded;
    func.walk([&](Operation *op) {
      if (isa<ReduceScatterOp, AllGatherOp>(op))
        sharded.push_back(op);
    });
    for (Operation *op : sharded)
      if (failed(lowerSharded(op)))
        return failure();
  }
  eraseUnusedGrids(module);
  return success();
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// How the runtimes number element types: a row per type (the floats, then
/// 8 to 64-bit signless, signed and unsigned integers: getElementTypeCode),
/// a column per CollectiveRuntime; -1 where a runtime has none. Host: the host
/// collectives runtime's (its pass's description: signed and signless
/// integers alike, no unsigned ones). NCCL: ncclDataType_t (nccl.h, stable
/// across NCCL 2.x): ncclInt8, ncclInt32, ncclInt64 for signless integers,
/// the ncclUint* for unsigned ones, no 16-bit integers.
static constexpr int32_t kElementTypeCodes[][2] = {
    // Host, NCCL
    {2, 6},   // f16
    {3, 9},   // bf16
    {0, 7},   // f32
    {1, 8},   // f64
    {4, 0},   // i8 (signless)
    {5, -1},  // i16
    {6, 2},   // i32
    {7, 4},   // i64
    {4, -1},  // si8
    {5, -1},  // si16
    {6, -1},  // si32
    {7, -1},  // si64
    {-1, 1},  // ui8
    {-1, -1}, // ui16
    {-1, 3},  // ui32
    {-1, 5},  // ui64
};

/// How the runtimes number reductions: a row per `Reduction`, in the
/// enum's order, a column per CollectiveRuntime; -1 where a runtime has
/// none. NCCL: ncclRedOp_t (ncclSum, ncclAvg, ncclMax, ncclMin, ncclProd;
/// no bitwise reductions).
static constexpr int32_t kReductionCodes[][2] = {
    // Host, NCCL
    {0, 0},   // sum
    {1, 4},   // mean
    {2, 2},   // max
    {3, 3},   // min
    {-1, 1},  // product
    {-1, -1}, // and
    {-1, -1}, // or
    {-1, -1}, // xor
};

/// The code in `row` of a table for `runtime`, or nullopt where it is -1.
static std::optional<int32_t> lookUp(const int32_t (&row)[2],
                                     CollectiveRuntime runtime) {
  int32_t code = row[static_cast<size_t>(runtime)];
  if (code < 0)
    return std::nullopt;
  return code;
}

StringRef mlir::ga::detail::getRuntimeName(CollectiveRuntime runtime) {
  return runtime == CollectiveRuntime::Nccl ? "NCCL"
                                            : "the host collectives runtime";
}

std::optional<int32_t>
mlir::ga::detail::getElementTypeCode(Type type, CollectiveRuntime runtime) {
  size_t row;
  if (type.isF16())
    row = 0;
  else if (type.isBF16())
    row = 1;
  else if (type.isF32())
    row = 2;
  else if (type.isF64())
    row = 3;
  else if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width < 8 || width > 64 || !llvm::isPowerOf2_32(width))
      return std::nullopt;
    size_t signedness = integer.isUnsigned() ? 2 : integer.isSigned() ? 1 : 0;
    row = 4 + 4 * signedness + llvm::Log2_32(width / 8);
  } else {
    return std::nullopt;
  }
  return lookUp(kElementTypeCodes[row], runtime);
}

std::optional<int32_t>
mlir::ga::detail::getReductionCode(Reduction reduction,
                                   CollectiveRuntime runtime) {
  return lookUp(kReductionCodes[static_cast<size_t>(reduction)], runtime);
}

FailureOr<RuntimeCodes>
mlir::ga::detail::getRuntimeCodes(const CollectiveGroup &group,
                                  CollectiveRuntime runtime) {
  Operation *anchor = group.ops.back();
  Type element =
      cast<RankedTensorType>(anchor->getOperand(0).getType()).getElementType();
  std::optional<int32_t> datatype = getElementTypeCode(element, runtime);
  std::optional<int32_t> reduction = getReductionCode(group.reduction, runtime);
  if (!datatype || !reduction)
    return anchor->emitError()
           << getRuntimeName(runtime) << " has no all-reduce of this kind on "
           << element << " elements";
  return RuntimeCodes{*datatype, *reduction};
}

FailureOr<RuntimeCodes>
mlir::ga::detail::getShardedCodes(Operation *op, RankedTensorType full,
                                  std::optional<CollectiveKind> kind,
                                  CollectiveRuntime runtime) {
  std::optional<int32_t> datatype =
      getElementTypeCode(full.getElementType(), runtime);
  std::optional<int32_t> reduction =
      kind ? getReductionCode(toReduction(*kind), runtime) : 0;
  if (!datatype || !reduction)
    return op->emitOpError()
           << DiagnosticCode::NotLowered << getRuntimeName(runtime)
           << " has no collective of this kind on " << full.getElementType()
           << " elements";
  return RuntimeCodes{*datatype, *reduction};
}

Value mlir::ga::detail::getFirstElementAddress(OpBuilder &b, Location loc,
                                               Value flat) {
  auto flatType = cast<MemRefType>(flat.getType());
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, flat);
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, flat);
  unsigned bytes = flatType.getElementTypeBitWidth() / 8;
  Value offsetBytes =
      arith::MulIOp::create(b, loc, metadata.getOffset(),
                            arith::ConstantIndexOp::create(b, loc, bytes));
  Value address = arith::AddIOp::create(b, loc, base, offsetBytes);
  Value address64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), address64);
}

FailureOr<RuntimeCallOperands>
mlir::ga::detail::prepareRuntimeCall(OpBuilder &b, const CollectiveGroup &group,
                                     CollectiveRuntime runtime) {
  FailureOr<RuntimeCodes> codes = getRuntimeCodes(group, runtime);
  if (failed(codes))
    return failure();
  Location loc = group.ops.back()->getLoc();
  RuntimeCallOperands call;
  call.buf = prepareBuffer(b, loc, group);
  auto flatType = cast<MemRefType>(call.buf.flat.getType());
  call.address = getFirstElementAddress(b, loc, call.buf.flat);
  call.count = arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                            flatType.getNumElements());
  call.datatype =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), codes->datatype);
  call.reduction =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), codes->reduction);
  return call;
}
