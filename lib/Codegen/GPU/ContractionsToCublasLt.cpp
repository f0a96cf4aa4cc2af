//===- ContractionsToCublasLt.cpp - matrix products as cuBLASLt calls -----===//
//
// Rewrites matrix products on device buffers into calls of
// `gaCublasLtMatmul` (lib/Runtime/CUDA/GACublasLt.h). A linalg contraction
// accumulates into its init (C += A B): cuBLASLt with beta = 1, so that a
// gradient accumulator that the micro-batch rewrite fused into the product
// stays fused (Megatron's fused weight-gradient accumulation). Right after a
// zero fill of C, the fill is dropped and beta = 0. The stream operand is
// added by --ga-gpu-single-stream, which knows the function.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/Reductions.h"
#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GADialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CONTRACTIONSTOCUBLASLT
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

constexpr StringLiteral kMatmul = "gaCublasLtMatmul";

/// cudaDataType_t of an element type the wrapper accepts.
std::optional<int64_t> cudaType(Type t) {
  if (t.isF32())
    return 0;
  if (t.isF16())
    return 2;
  if (t.isBF16())
    return 14;
  return std::nullopt;
}

std::optional<unsigned> dimAt(AffineMap map, unsigned i) {
  if (auto d = dyn_cast<AffineDimExpr>(map.getResult(i)))
    return d.getPosition();
  return std::nullopt;
}

/// Whether `map` indexes a 2-d operand as [outer][k] (false) or [k][outer]
/// (true, transposed), when `outerFirst`; the other way round otherwise.
std::optional<bool> isTransposed(AffineMap map, unsigned outer, unsigned k,
                                 bool outerFirst) {
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

bool hasUnitInnerStride(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getRank() == 2 && type.isLastDimUnitStride();
}

/// The fill of +0 into exactly `c` right before `op` (only side-effect-free
/// ops in between); null if there is none.
linalg::LinalgOp findZeroFill(linalg::LinalgOp op, Value c) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::LinalgOp>(prev);
    if (fill && isFillLike(fill) && fill.getDpsInitOperand(0)->get() == c) {
      Value v;
      if (auto named = dyn_cast<linalg::FillOp>(prev))
        v = named.getInputs().front();
      else
        v = fill.getBlock()->getTerminator()->getOperand(0);
      return matchPattern(v, m_PosZeroFloat()) ? fill : linalg::LinalgOp();
    }
    if (!isMemoryEffectFree(prev))
      break;
  }
  return {};
}

struct ContractionsToCublasLtPass
    : public ga::impl::ContractionsToCublasLtBase<ContractionsToCublasLtPass> {
  void runOnOperation() override {
    if (auto existing = getOperation().lookupSymbol<func::FuncOp>(kMatmul)) {
      OpBuilder b(existing);
      if (existing.getFunctionType() != matmulType(b)) {
        existing.emitOpError()
            << "has the name of the cuBLASLt runtime function with another "
               "type; expected "
            << matmulType(b);
        return signalPassFailure();
      }
    }
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      if (succeeded(rewrite(op)))
        ++numCalls;
  }

  /// The signature of gaCublasLtMatmul without its leading stream.
  static FunctionType matmulType(OpBuilder &b) {
    Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
    Type ptr = LLVM::LLVMPointerType::get(b.getContext());
    return b.getFunctionType({i32, i32, i64, i64, i64, ptr, i64, ptr, i64, ptr,
                              i64, i32, i32, f32, f32, ptr},
                             {});
  }

  func::FuncOp getOrDeclare(OpBuilder &b) {
    ModuleOp module = getOperation();
    if (auto fn = module.lookupSymbol<func::FuncOp>(kMatmul))
      return fn;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto fn = func::FuncOp::create(b, module.getLoc(), kMatmul, matmulType(b));
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
    Type elemAB = getElementTypeOrSelf(a.getType());
    Type elemC = getElementTypeOrSelf(c.getType());
    std::optional<int64_t> ab = cudaType(elemAB), ct = cudaType(elemC);
    if (!ab || !ct || getElementTypeOrSelf(b.getType()) != elemAB ||
        (!elemC.isF32() && elemC != elemAB))
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
    Value lhs = a, rhs = b;
    AffineMap mapL = mapA, mapR = mapB;
    if (!llvm::is_contained(mapA.getResults(),
                            getAffineDimExpr(*row, op.getContext()))) {
      std::swap(lhs, rhs);
      std::swap(mapL, mapR);
    }
    std::optional<bool> transL = isTransposed(mapL, *row, k, true);
    std::optional<bool> transR = isTransposed(mapR, *col, k, false);
    if (!transL || !transR)
      return failure();

    linalg::LinalgOp zeroFill = findZeroFill(op, c);
    OpBuilder builder(op);
    Location loc = op.getLoc();
    Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
    Type ptrType = LLVM::LLVMPointerType::get(op.getContext());
    auto cst32 = [&](int64_t v) {
      return arith::ConstantIntOp::create(builder, loc, i32, v).getResult();
    };
    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(builder, loc, v).getResult();
    };
    auto toI64 = [&](Value v) {
      return arith::IndexCastOp::create(builder, loc, i64, v).getResult();
    };
    auto describe = [&](Value m, Type elem) -> std::pair<Value, Value> {
      auto meta = memref::ExtractStridedMetadataOp::create(builder, loc, m);
      Value base =
          memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, m);
      Value offsetBytes =
          arith::MulIOp::create(builder, loc, meta.getOffset(),
                                idx(elem.getIntOrFloatBitWidth() / 8));
      Value addr = arith::AddIOp::create(builder, loc, base, offsetBytes);
      Value ptr = LLVM::IntToPtrOp::create(builder, loc, ptrType, toI64(addr));
      Value ld = arith::MaxSIOp::create(builder, loc, meta.getStrides()[0],
                                        meta.getSizes()[1]);
      ld = arith::MaxSIOp::create(builder, loc, ld, idx(1));
      return {ptr, toI64(ld)};
    };
    auto [ptrL, ldL] = describe(lhs, elemAB);
    auto [ptrR, ldR] = describe(rhs, elemAB);
    auto [ptrC, ldC] = describe(c, elemC);
    Value m = toI64(memref::DimOp::create(builder, loc, c, 0));
    Value n = toI64(memref::DimOp::create(builder, loc, c, 1));
    Value kSize =
        toI64(memref::DimOp::create(builder, loc, lhs, *transL ? 0 : 1));
    auto f32 = [&](double v) {
      return arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(v))
          .getResult();
    };
    Value noBias = LLVM::ZeroOp::create(builder, loc, ptrType);
    func::FuncOp fn = getOrDeclare(builder);
    auto call = func::CallOp::create(
        builder, loc, fn,
        ValueRange{cst32(*transL), cst32(*transR), m, n, kSize, ptrL, ldL, ptrR,
                   ldR, ptrC, ldC, cst32(*ab), cst32(*ct), f32(1.0),
                   f32(zeroFill ? 0.0 : 1.0), noBias});
    if (op->hasAttr(GADialect::getAccumulatesAttrName()))
      call->setAttr(GADialect::getAccumulatesAttrName(), builder.getUnitAttr());
    op->erase();
    if (zeroFill) {
      zeroFill->erase();
      ++numZeroFills;
    }
    return success();
  }
};

} // namespace
