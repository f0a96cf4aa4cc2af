//===- LinalgToBLAS.cpp - matrix products on buffers to CBLAS gemm --------===//
//
// --convert-linalg-to-blas: rewrites linalg contractions on buffers with one
// M, N and K dimension into `cblas_sgemm` / `cblas_dgemm` calls, beta = 1
// (accumulate into C) or beta = 0 in place of a zero fill of C.
//
//===----------------------------------------------------------------------===//

#include "ga/Conversion/Passes.h"

#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CONVERTLINALGTOBLAS
#include "ga/Conversion/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Rewrites matrix products on buffers into CBLAS calls:
/// `cblas_sgemm(RowMajor, transA, transB, M, N, K, 1, A, lda, B, ldb, beta,
/// C, ldc)` (`cblas_dgemm` for f64). Linalg contractions accumulate into their
/// init (C += A B), which is BLAS with beta = 1: an accumulator that the
/// micro-batch rewrite fused into a GEMM stays fused. When C was just filled
/// with zeros, the fill is dropped and beta = 0 (C = A B): BLAS then neither
/// reads C nor needs it written first. Handles linalg.matmul
/// (with transposing indexing maps) and any linalg contraction with one M, one
/// N and one K dimension, a multiply-add body, one element type, and operands
/// whose innermost stride is 1; everything else is left to the loop lowering.
struct ConvertLinalgToBLASPass
    : public ga::impl::ConvertLinalgToBLASBase<ConvertLinalgToBLASPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        candidates.push_back(op);
    });
    getOperation().walk(
        [&](memref::GetGlobalOp get) { ++getGlobalCount[get.getNameAttr()]; });
    for (linalg::LinalgOp op : candidates)
      if (succeeded(rewrite(op)))
        ++numConverted;
  }

  /// Position of the loop dimension of result `i` of `map`, if it is one.
  static std::optional<unsigned> dimAt(AffineMap map, unsigned i) {
    if (auto d = dyn_cast<AffineDimExpr>(map.getResult(i)))
      return d.getPosition();
    return std::nullopt;
  }

  /// The row-major description of one matrix operand: `outer` must be one of
  /// its two dimensions and `k` the other. Returns whether it is transposed
  /// (stored as [k][outer] when `outerFirst` says the math wants
  /// [outer][k]).
  static std::optional<bool> isTransposed(AffineMap map, unsigned outer,
                                          unsigned k, bool outerFirst) {
    if (map.getNumResults() != 2)
      return std::nullopt;
    auto d0 = dimAt(map, 0), d1 = dimAt(map, 1);
    if (!d0 || !d1)
      return std::nullopt;
    unsigned first = outerFirst ? outer : k, second = outerFirst ? k : outer;
    if (*d0 == first && *d1 == second)
      return false;
    if (*d0 == second && *d1 == first)
      return true;
    return std::nullopt;
  }

  /// Whether `value` is a 2-d memref whose rows are contiguous.
  static bool hasUnitInnerStride(Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    return type && type.getRank() == 2 && type.isLastDimUnitStride();
  }

  func::FuncOp getOrDeclare(ModuleOp module, StringRef name, Type elem) {
    if (auto fn = module.lookupSymbol<func::FuncOp>(name))
      return fn;
    MLIRContext *ctx = module.getContext();
    OpBuilder b(ctx);
    b.setInsertionPointToStart(module.getBody());
    Type i32 = b.getI32Type(), ptr = LLVM::LLVMPointerType::get(ctx);
    auto type = b.getFunctionType({i32, i32, i32, i32, i32, i32, elem, ptr, i32,
                                   ptr, i32, elem, ptr, i32},
                                  {});
    auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
    fn.setPrivate();
    return fn;
  }

  LogicalResult rewrite(linalg::LinalgOp op) {
    if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
        !linalg::isaContractionOpInterface(op))
      return failure();
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || !dims->batch.empty() || dims->m.size() != 1 ||
        dims->n.size() != 1 || dims->k.size() != 1)
      return failure();
    Value a = op.getDpsInputOperand(0)->get();
    Value b = op.getDpsInputOperand(1)->get();
    Value c = op.getDpsInitOperand(0)->get();
    Type elem = getElementTypeOrSelf(c.getType());
    if (!elem.isF32() && !elem.isF64())
      return failure();
    for (Value v : {a, b})
      if (getElementTypeOrSelf(v.getType()) != elem)
        return failure();
    for (Value v : {a, b, c})
      if (!hasUnitInnerStride(v))
        return failure();

    AffineMap mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
    AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
    AffineMap mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (mapC.getNumResults() != 2)
      return failure();
    auto row = dimAt(mapC, 0), col = dimAt(mapC, 1);
    if (!row || !col)
      return failure();
    unsigned k = dims->k.front();
    // The operand that holds C's row dimension is BLAS's A.
    Value lhs = a, rhs = b;
    AffineMap mapL = mapA, mapR = mapB;
    if (!llvm::is_contained(
            llvm::map_range(mapA.getResults(), [](AffineExpr e) { return e; }),
            getAffineDimExpr(*row, op.getContext()))) {
      std::swap(lhs, rhs);
      std::swap(mapL, mapR);
    }
    std::optional<bool> transL = isTransposed(mapL, *row, k, true);
    std::optional<bool> transR = isTransposed(mapR, *col, k, false);
    if (!transL || !transR)
      return failure();

    // beta = 0 instead of a zero fill of C right before the product.
    linalg::FillOp zeroFill = findZeroFill(op, c);
    OpBuilder builder(op);
    Location loc = op.getLoc();
    Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
    Type ptrType = LLVM::LLVMPointerType::get(op.getContext());
    int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
    auto cst = [&](int64_t v) {
      return arith::ConstantIntOp::create(builder, loc, i32, v).getResult();
    };
    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(builder, loc, v).getResult();
    };
    auto toI32 = [&](Value v) {
      return arith::IndexCastOp::create(builder, loc, i32, v).getResult();
    };
    // Pointer to the first element and leading dimension of a 2-d buffer.
    auto describe = [&](Value m) -> std::pair<Value, Value> {
      auto meta = memref::ExtractStridedMetadataOp::create(builder, loc, m);
      Value base =
          memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, m);
      Value offsetBytes =
          arith::MulIOp::create(builder, loc, meta.getOffset(), idx(elemBytes));
      Value addr = arith::AddIOp::create(builder, loc, base, offsetBytes);
      Value addr64 = arith::IndexCastOp::create(builder, loc, i64, addr);
      Value ptr = LLVM::IntToPtrOp::create(builder, loc, ptrType, addr64);
      // lda >= max(1, columns); the stride only matters with > 1 row.
      Value ld = arith::MaxSIOp::create(builder, loc, meta.getStrides()[0],
                                        meta.getSizes()[1]);
      ld = arith::MaxSIOp::create(builder, loc, ld, idx(1));
      return {ptr, toI32(ld)};
    };
    auto [ptrL, ldL] = describe(lhs);
    auto [ptrR, ldR] = describe(rhs);
    auto [ptrC, ldC] = describe(c);
    Value m = toI32(memref::DimOp::create(builder, loc, c, 0));
    Value n = toI32(memref::DimOp::create(builder, loc, c, 1));
    Value kSize =
        toI32(memref::DimOp::create(builder, loc, lhs, *transL ? 0 : 1));
    auto scalar = [&](double v) {
      return arith::ConstantOp::create(builder, loc,
                                       builder.getFloatAttr(elem, v))
          .getResult();
    };
    constexpr int64_t rowMajor = 101, noTrans = 111, trans = 112;
    Value one = scalar(1.0), beta = zeroFill ? scalar(0.0) : one;
    func::FuncOp gemm = getOrDeclare(
        getOperation(), elem.isF32() ? "cblas_sgemm" : "cblas_dgemm", elem);
    func::CallOp::create(
        builder, loc, gemm,
        ValueRange{cst(rowMajor), cst(*transL ? trans : noTrans),
                   cst(*transR ? trans : noTrans), m, n, kSize, one, ptrL, ldL,
                   ptrR, ldR, beta, ptrC, ldC});
    op->erase();
    if (zeroFill)
      zeroFill->erase();
    return success();
  }

  /// The `linalg.fill` of +0.0 into `c` that is the last write of `c` before
  /// `op`; null if there is none. Either the fill precedes `op` with nothing
  /// but side-effect-free ops in between, or `c` is a buffer of its own (an
  /// allocation, or a global with one `get_global`) that nothing between the
  /// fill and `op` uses, directly or through a view.
  linalg::FillOp findZeroFill(linalg::LinalgOp op, Value c) {
    for (Operation *prev = op->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      auto fill = dyn_cast<linalg::FillOp>(prev);
      if (fill && fill.getOutputs().front() == c && isZeroFill(fill))
        return fill;
      if (!isMemoryEffectFree(prev))
        break;
    }
    Operation *def = c.getDefiningOp();
    auto global = dyn_cast_or_null<memref::GetGlobalOp>(def);
    if (!isa_and_nonnull<memref::AllocOp>(def) &&
        !(global && getGlobalCount.lookup(global.getNameAttr()) == 1))
      return {};
    linalg::FillOp fill;
    for (Operation *user : c.getUsers()) {
      if (user == op.getOperation() || isa<memref::DeallocOp>(user))
        continue;
      Operation *anchor = op->getBlock()->findAncestorOpInBlock(*user);
      if (!anchor)
        return {};
      if (op->isBeforeInBlock(anchor))
        continue; // used after the product only
      auto candidate = dyn_cast<linalg::FillOp>(user);
      if (!candidate || fill || !isZeroFill(candidate) ||
          candidate->getBlock() != op->getBlock())
        return {};
      fill = candidate;
    }
    return fill;
  }

  /// How many `memref.get_global`s name each global.
  llvm::DenseMap<Attribute, unsigned> getGlobalCount;
};

} // namespace
