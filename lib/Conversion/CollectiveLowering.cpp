//===- CollectiveLowering.cpp - shared parts of the collective lowerings --===//

#include "CollectiveLowering.h"

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
  auto type = cast<RankedTensorType>(buf.tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  buf.buffer =
      bufferization::ToBufferOp::create(b, loc, memrefType, buf.tensor);
  auto flatType =
      MemRefType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 1)
    buf.flat = buf.buffer;
  else if (type.getRank() == 0)
    buf.flat = memref::ExpandShapeOp::create(b, loc, flatType, buf.buffer,
                                             getCollapseAllReassociation(0));
  else
    buf.flat = memref::CollapseShapeOp::create(
        b, loc, flatType, buf.buffer,
        getCollapseAllReassociation(type.getRank()));
  return buf;
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

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

std::optional<int32_t>
mlir::ga::detail::getElementTypeCode(Type type, const ElementTypeCodes &codes) {
  int32_t code = -1;
  if (type.isF16())
    code = codes.f16;
  else if (type.isBF16())
    code = codes.bf16;
  else if (type.isF32())
    code = codes.f32;
  else if (type.isF64())
    code = codes.f64;
  else if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width < 8 || width > 64 || !llvm::isPowerOf2_32(width))
      return std::nullopt;
    unsigned index = llvm::Log2_32(width / 8);
    code = integer.isUnsigned() ? codes.unsignedInt[index]
           : integer.isSigned() ? codes.signedInt[index]
                                : codes.signless[index];
  }
  if (code < 0)
    return std::nullopt;
  return code;
}

std::optional<int32_t>
mlir::ga::detail::getReductionCode(Reduction reduction,
                                   const ReductionCodes &codes) {
  int32_t code = codes[static_cast<size_t>(reduction)];
  if (code < 0)
    return std::nullopt;
  return code;
}

FailureOr<RuntimeCodes> mlir::ga::detail::getRuntimeCodes(
    const CollectiveGroup &group, const ElementTypeCodes &datatypes,
    const ReductionCodes &reductions, StringRef runtime) {
  Operation *anchor = group.ops.back();
  Type element =
      cast<RankedTensorType>(anchor->getOperand(0).getType()).getElementType();
  std::optional<int32_t> datatype = getElementTypeCode(element, datatypes);
  std::optional<int32_t> reduction =
      getReductionCode(group.reduction, reductions);
  if (!datatype || !reduction)
    return anchor->emitError()
           << runtime << " has no all-reduce of this kind on " << element
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
                                     const ElementTypeCodes &datatypes,
                                     const ReductionCodes &reductions,
                                     StringRef runtime) {
  FailureOr<RuntimeCodes> codes =
      getRuntimeCodes(group, datatypes, reductions, runtime);
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
