//===- Gemm.cpp - linalg contractions as BLAS-style GEMM calls ------------===//

#include "ga/Utils/Gemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ga;

/// Position of the loop dimension of result `i` of `map`, if it is one.
static std::optional<unsigned> dimAt(AffineMap map, unsigned i) {
  if (auto d = dyn_cast<AffineDimExpr>(map.getResult(i)))
    return d.getPosition();
  return std::nullopt;
}

/// Whether the operand indexed by `map` (its matrix dimensions are the last
/// two results) is stored transposed: the math wants [outer][k] when
/// `outerFirst`, [k][outer] otherwise; std::nullopt if `map` indexes neither.
static std::optional<bool> isTransposed(AffineMap map, unsigned outer,
                                        unsigned k, bool outerFirst) {
  unsigned rank = map.getNumResults();
  auto d0 = dimAt(map, rank - 2), d1 = dimAt(map, rank - 1);
  if (!d0 || !d1)
    return std::nullopt;
  unsigned first = outerFirst ? outer : k, second = outerFirst ? k : outer;
  if (*d0 == first && *d1 == second)
    return false;
  if (*d0 == second && *d1 == first)
    return true;
  return std::nullopt;
}

/// Whether `value` is a memref of rank `rank` whose rows are contiguous.
static bool hasUnitInnerStride(Value value, int64_t rank) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getRank() == rank && type.isLastDimUnitStride();
}

/// A product with one K dimension and either no N dimension (C and B are
/// vectors) or no M dimension (C and A are vectors), unbatched.
static FailureOr<GemmOperands>
matchVectorProduct(linalg::LinalgOp op,
                   const linalg::ContractionDimensions &dims) {
  bool noN = dims.n.empty() && dims.m.size() == 1;
  bool noM = dims.m.empty() && dims.n.size() == 1;
  if (!dims.batch.empty() || dims.k.size() != 1 || (!noN && !noM))
    return failure();
  unsigned k = dims.k.front();
  unsigned outer = noN ? dims.m.front() : dims.n.front();
  OpOperand *a = op.getDpsInputOperand(0), *b = op.getDpsInputOperand(1);
  OpOperand *c = op.getDpsInitOperand(0);
  // The matrix operand is the one indexed by C's dimension.
  OpOperand *matrix =
      op.getMatchingIndexingMap(a).isFunctionOfDim(outer) ? a : b;
  OpOperand *vector = matrix == a ? b : a;
  if (!hasUnitInnerStride(matrix->get(), 2) ||
      !hasUnitInnerStride(vector->get(), 1) ||
      !hasUnitInnerStride(c->get(), 1) ||
      dimAt(op.getMatchingIndexingMap(vector), 0) != k ||
      dimAt(op.getMatchingIndexingMap(c), 0) != outer)
    return failure();
  std::optional<bool> trans =
      isTransposed(op.getMatchingIndexingMap(matrix), outer, k, noN);
  if (!trans)
    return failure();
  GemmOperands gemm;
  gemm.out = c->get();
  gemm.vector = noN ? GemmOperands::Vector::NoN : GemmOperands::Vector::NoM;
  if (noN) {
    gemm.lhs = matrix->get(), gemm.rhs = vector->get();
    gemm.transposeLhs = *trans;
  } else {
    gemm.lhs = vector->get(), gemm.rhs = matrix->get();
    gemm.transposeRhs = *trans;
  }
  return gemm;
}

FailureOr<GemmOperands> mlir::ga::matchGemm(linalg::LinalgOp op,
                                            bool allowVectors) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return failure();
  if (allowVectors && (dims->m.empty() || dims->n.empty()))
    return matchVectorProduct(op, *dims);
  if (dims->batch.size() > 1 || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return failure();
  bool batched = dims->batch.size() == 1;
  int64_t rank = batched ? 3 : 2;
  OpOperand *a = op.getDpsInputOperand(0), *b = op.getDpsInputOperand(1);
  OpOperand *c = op.getDpsInitOperand(0);
  for (OpOperand *operand : {a, b, c}) {
    if (!hasUnitInnerStride(operand->get(), rank))
      return failure();
    // The batch dimension is the outermost of every operand.
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (map.getNumResults() != rank ||
        (batched && dimAt(map, 0) != dims->batch.front()))
      return failure();
  }
  AffineMap mapC = op.getMatchingIndexingMap(c);
  auto row = dimAt(mapC, rank - 2), col = dimAt(mapC, rank - 1);
  if (!row || !col)
    return failure();
  unsigned k = dims->k.front();
  // The operand that holds C's row dimension is BLAS's A.
  if (!op.getMatchingIndexingMap(a).isFunctionOfDim(*row))
    std::swap(a, b);
  std::optional<bool> transL =
      isTransposed(op.getMatchingIndexingMap(a), *row, k, true);
  std::optional<bool> transR =
      isTransposed(op.getMatchingIndexingMap(b), *col, k, false);
  if (!transL || !transR)
    return failure();
  return GemmOperands{a->get(), b->get(), c->get(), *transL, *transR, batched};
}

/// `vector` (1-d, unit stride) as a 2-d view with a unit dimension in front
/// (`unitFirst`: 1 x K) or behind (K x 1).
static Value viewAsMatrix(OpBuilder &b, Location loc, Value vector,
                          bool unitFirst) {
  auto type = cast<MemRefType>(vector.getType());
  int64_t size = type.getDimSize(0);
  SmallVector<int64_t> shape =
      unitFirst ? SmallVector<int64_t>{1, size} : SmallVector<int64_t>{size, 1};
  OpFoldResult length =
      ShapedType::isDynamic(size)
          ? OpFoldResult(memref::DimOp::create(b, loc, vector, 0).getResult())
          : OpFoldResult(b.getIndexAttr(size));
  SmallVector<OpFoldResult> outputShape =
      unitFirst ? SmallVector<OpFoldResult>{b.getIndexAttr(1), length}
                : SmallVector<OpFoldResult>{length, b.getIndexAttr(1)};
  return memref::ExpandShapeOp::create(
      b, loc, shape, vector, {ReassociationIndices{0, 1}}, outputShape);
}

void mlir::ga::viewVectorsAsMatrices(OpBuilder &b, Location loc,
                                     GemmOperands &gemm) {
  switch (gemm.vector) {
  case GemmOperands::Vector::None:
    return;
  case GemmOperands::Vector::NoN: // B: K x 1, C: M x 1.
    gemm.rhs = viewAsMatrix(b, loc, gemm.rhs, /*unitFirst=*/false);
    gemm.out = viewAsMatrix(b, loc, gemm.out, /*unitFirst=*/false);
    break;
  case GemmOperands::Vector::NoM: // A: 1 x K, C: 1 x N.
    gemm.lhs = viewAsMatrix(b, loc, gemm.lhs, /*unitFirst=*/true);
    gemm.out = viewAsMatrix(b, loc, gemm.out, /*unitFirst=*/true);
    break;
  }
  gemm.vector = GemmOperands::Vector::None;
}

Value mlir::ga::getBufferPointer(OpBuilder &b, Location loc, Value buffer) {
  Type elem = getElementTypeOrSelf(buffer.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value elemBytes = arith::ConstantIndexOp::create(
      b, loc, llvm::divideCeil(elem.getIntOrFloatBitWidth(), 8));
  Value offsetBytes =
      arith::MulIOp::create(b, loc, meta.getOffset(), elemBytes);
  Value addr = arith::AddIOp::create(b, loc, base, offsetBytes);
  Value addr64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), addr);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), addr64);
}

MatrixDescriptor mlir::ga::describeMatrix(OpBuilder &b, Location loc,
                                          Value matrix) {
  int64_t rank = cast<MemRefType>(matrix.getType()).getRank();
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value pointer = getBufferPointer(b, loc, matrix);
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, matrix);
  // ld >= max(1, columns); the stride only matters with more than one row.
  Value ld = arith::MaxSIOp::create(b, loc, meta.getStrides()[rank - 2],
                                    meta.getSizes()[rank - 1]);
  ld = arith::MaxSIOp::create(b, loc, ld, idx(1));
  Value batchStride = rank == 3 ? meta.getStrides()[0] : idx(0);
  return {pointer, ld, batchStride};
}

GemmArguments mlir::ga::buildGemmArguments(OpBuilder &b, Location loc,
                                           const GemmOperands &gemm) {
  GemmArguments args;
  args.lhs = describeMatrix(b, loc, gemm.lhs);
  args.rhs = describeMatrix(b, loc, gemm.rhs);
  args.out = describeMatrix(b, loc, gemm.out);
  int64_t r = gemm.batched ? 1 : 0;
  args.m = memref::DimOp::create(b, loc, gemm.out, r);
  args.n = memref::DimOp::create(b, loc, gemm.out, r + 1);
  args.k =
      memref::DimOp::create(b, loc, gemm.lhs, r + (gemm.transposeLhs ? 0 : 1));
  args.batch = gemm.batched
                   ? memref::DimOp::create(b, loc, gemm.out, 0).getResult()
                   : arith::ConstantIndexOp::create(b, loc, 1).getResult();
  return args;
}

linalg::LinalgOp mlir::ga::findZeroFillOfOutput(
    linalg::LinalgOp op, Value c,
    llvm::function_ref<bool(linalg::LinalgOp)> isZeroFill,
    llvm::function_ref<bool(Value)> isOwnBuffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::LinalgOp>(prev);
    if (fill && fill.getNumDpsInits() == 1 &&
        fill.getDpsInitOperand(0)->get() == c)
      return isZeroFill(fill) ? fill : linalg::LinalgOp();
    if (!isMemoryEffectFree(prev))
      break;
  }
  if (!isOwnBuffer(c))
    return {};
  linalg::LinalgOp fill;
  for (Operation *user : c.getUsers()) {
    if (user == op.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    Operation *anchor = op->getBlock()->findAncestorOpInBlock(*user);
    if (!anchor)
      return {};
    if (op->isBeforeInBlock(anchor))
      continue; // used after the product only
    auto candidate = dyn_cast<linalg::LinalgOp>(user);
    if (!candidate || fill || candidate->getBlock() != op->getBlock() ||
        candidate.getNumDpsInits() != 1 ||
        candidate.getDpsInitOperand(0)->get() != c || !isZeroFill(candidate))
      return {};
    fill = candidate;
  }
  return fill;
}
