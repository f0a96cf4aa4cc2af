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

namespace {
/// Which operand of a product plays which GEMM role, from its indexing maps
/// alone (operand positions: 0 and 1 the inputs, 2 the init).
struct GemmLayout {
  unsigned lhs = 0, rhs = 1;
  bool transposeLhs = false, transposeRhs = false, batched = false;
  GemmOperands::Vector vector = GemmOperands::Vector::None;
};
} // namespace

/// The layout of a product with one K dimension and either no N dimension
/// (C and B are vectors) or no M dimension (C and A are vectors), unbatched.
static FailureOr<GemmLayout>
vectorLayout(ArrayRef<AffineMap> maps,
             const linalg::ContractionDimensions &dims) {
  bool noN = dims.n.empty() && dims.m.size() == 1;
  bool noM = dims.m.empty() && dims.n.size() == 1;
  if (!dims.batch.empty() || dims.k.size() != 1 || (!noN && !noM))
    return failure();
  unsigned k = dims.k.front();
  unsigned outer = noN ? dims.m.front() : dims.n.front();
  // The matrix operand is the one indexed by C's dimension.
  unsigned matrix = maps[0].isFunctionOfDim(outer) ? 0 : 1;
  unsigned vector = 1 - matrix;
  if (maps[matrix].getNumResults() != 2 || maps[vector].getNumResults() != 1 ||
      maps[2].getNumResults() != 1 || dimAt(maps[vector], 0) != k ||
      dimAt(maps[2], 0) != outer)
    return failure();
  std::optional<bool> trans = isTransposed(maps[matrix], outer, k, noN);
  if (!trans)
    return failure();
  GemmLayout layout;
  layout.vector = noN ? GemmOperands::Vector::NoN : GemmOperands::Vector::NoM;
  layout.lhs = noN ? matrix : vector;
  layout.rhs = noN ? vector : matrix;
  (noN ? layout.transposeLhs : layout.transposeRhs) = *trans;
  return layout;
}

/// The GEMM layout of a contraction with indexing maps `maps` (A, B, C):
/// one M, N and K dimension, at most one batch dimension, outermost in all
/// three operands, the matrix dimensions the last two results, plain loop
/// dimensions (or, with `allowVectors`, a matrix-vector product).
static FailureOr<GemmLayout> gemmLayout(ArrayRef<AffineMap> maps,
                                        bool allowVectors) {
  if (maps.size() != 3)
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(maps);
  if (failed(dims))
    return failure();
  if (allowVectors && (dims->m.empty() || dims->n.empty()))
    return vectorLayout(maps, *dims);
  if (dims->batch.size() > 1 || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return failure();
  GemmLayout layout;
  layout.batched = dims->batch.size() == 1;
  unsigned rank = layout.batched ? 3 : 2;
  for (AffineMap map : maps)
    if (map.getNumResults() != rank ||
        (layout.batched && dimAt(map, 0) != dims->batch.front()))
      return failure();
  auto row = dimAt(maps[2], rank - 2), col = dimAt(maps[2], rank - 1);
  if (!row || !col)
    return failure();
  unsigned k = dims->k.front();
  // The operand that holds C's row dimension is BLAS's A.
  if (!maps[0].isFunctionOfDim(*row))
    std::swap(layout.lhs, layout.rhs);
  std::optional<bool> transL =
      isTransposed(maps[layout.lhs], *row, k, /*outerFirst=*/true);
  std::optional<bool> transR =
      isTransposed(maps[layout.rhs], *col, k, /*outerFirst=*/false);
  if (!transL || !transR)
    return failure();
  layout.transposeLhs = *transL;
  layout.transposeRhs = *transR;
  return layout;
}

bool mlir::ga::hasLibraryLayout(ArrayRef<AffineMap> maps, bool allowVectors) {
  return succeeded(gemmLayout(maps, allowVectors));
}

bool mlir::ga::isLibraryProduct(linalg::LinalgOp op, bool allowVectors) {
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         linalg::isaContractionOpInterface(op) &&
         hasLibraryLayout(op.getIndexingMapsArray(), allowVectors);
}

FailureOr<GemmOperands> mlir::ga::matchGemm(linalg::LinalgOp op,
                                            bool allowVectors) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  FailureOr<GemmLayout> layout = gemmLayout(maps, allowVectors);
  if (failed(layout))
    return failure();
  Value operands[3] = {op.getDpsInputOperand(0)->get(),
                       op.getDpsInputOperand(1)->get(),
                       op.getDpsInitOperand(0)->get()};
  // Rows (or vectors) with unit stride: what a BLAS matrix argument is.
  for (unsigned i = 0; i < 3; ++i)
    if (!hasUnitInnerStride(operands[i], maps[i].getNumResults()))
      return failure();
  GemmOperands gemm;
  gemm.lhs = operands[layout->lhs];
  gemm.rhs = operands[layout->rhs];
  gemm.out = operands[2];
  gemm.transposeLhs = layout->transposeLhs;
  gemm.transposeRhs = layout->transposeRhs;
  gemm.batched = layout->batched;
  gemm.vector = layout->vector;
  return gemm;
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

std::optional<Permutation> mlir::ga::asPermutation(Value value) {
  auto producer = value.getDefiningOp<linalg::LinalgOp>();
  if (!producer || !producer.hasPureTensorSemantics() ||
      producer.getNumDpsInputs() != 1 || producer.getNumDpsInits() != 1 ||
      producer.getNumLoops() != producer.getNumParallelLoops())
    return std::nullopt;
  OpOperand *input = producer.getDpsInputOperand(0);
  OpOperand *init = producer.getDpsInitOperand(0);
  AffineMap inputMap = producer.getMatchingIndexingMap(input);
  AffineMap initMap = producer.getMatchingIndexingMap(init);
  if (!inputMap.isPermutation() || !initMap.isPermutation())
    return std::nullopt;
  Block *body = producer.getBlock();
  if (body->getOperations().size() != 1 ||
      body->getTerminator()->getNumOperands() != 1 ||
      body->getTerminator()->getOperand(0) !=
          producer.getMatchingBlockArgument(input))
    return std::nullopt;
  return Permutation{input->get(),
                     inputMap.compose(inversePermutation(initMap))};
}
