//===- ContractionsToCublasLt.cpp - matrix products as cuBLASLt calls -----===//
//
// Rewrites matrix products on device buffers into calls of
// `gaCublasLtMatmul` and, with a batch dimension,
// `gaCublasLtMatmulStridedBatched` (lib/Runtime/CUDA/GACublasLt.h). A linalg
// contraction accumulates into its init (C += A B): cuBLASLt with beta = 1,
// so that a gradient accumulator that the micro-batch rewrite fused into the
// product stays fused (Megatron's fused weight-gradient accumulation). Right
// after a zero fill of C, the fill is dropped and beta = 0. The stream
// operand is added by --ga-gpu-single-stream, which knows the function, or
// is a null stream (null-stream=1: the loop stage run on the CPU against
// libga_cublaslt_cpu.so).
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/Reductions.h"
#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GADialect.h"
#include "ga/Utils/Gemm.h"
#include "ga/Utils/IRUtils.h"

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
constexpr StringLiteral kBatched = "gaCublasLtMatmulStridedBatched";

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
  using Base::Base;

  void runOnOperation() override {
    OpBuilder b(&getContext());
    if (failed(checkExternalFunction(getOperation(), kMatmul,
                                     functionType(b, false),
                                     "the cuBLASLt runtime function")) ||
        failed(checkExternalFunction(getOperation(), kBatched,
                                     functionType(b, true),
                                     "the cuBLASLt runtime function")))
      return signalPassFailure();
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      (void)rewrite(op);
  }

  /// The signature of gaCublasLtMatmul (`batched`:
  /// gaCublasLtMatmulStridedBatched), without its leading stream unless
  /// null-stream is set.
  FunctionType functionType(OpBuilder &b, bool batched) const {
    Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
    Type ptr = LLVM::LLVMPointerType::get(b.getContext());
    SmallVector<Type> inputs;
    if (nullStream)
      inputs.push_back(ptr);
    if (batched)
      llvm::append_range(inputs, TypeRange{i32, i32, i64, i64, i64, ptr, i64,
                                           i64, ptr, i64, i64, ptr, i64, i64,
                                           i64, i32, i32, f32, f32});
    else
      llvm::append_range(inputs,
                         TypeRange{i32, i32, i64, i64, i64, ptr, i64, ptr, i64,
                                   ptr, i64, i32, i32, f32, f32, ptr});
    return b.getFunctionType(inputs, {});
  }

  LogicalResult rewrite(linalg::LinalgOp op) {
    FailureOr<GemmOperands> gemm = matchGemm(op);
    if (failed(gemm))
      return failure();
    Type elemAB = getElementTypeOrSelf(gemm->lhs.getType());
    Type elemC = getElementTypeOrSelf(gemm->out.getType());
    // fp32 accumulators only: a product into f16 or bf16 rounds every partial
    // sum to that type in the original step, which cuBLASLt's fp32
    // accumulation (rounding once) does not reproduce; it stays a kernel.
    std::optional<int64_t> ab = cudaType(elemAB), ct = cudaType(elemC);
    if (!ab || !ct || getElementTypeOrSelf(gemm->rhs.getType()) != elemAB ||
        !elemC.isF32())
      return failure();

    linalg::LinalgOp zeroFill = findZeroFill(op, gemm->out);
    OpBuilder builder(op);
    Location loc = op.getLoc();
    Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
    Type ptrType = LLVM::LLVMPointerType::get(op.getContext());
    auto cst32 = [&](int64_t v) {
      return arith::ConstantIntOp::create(builder, loc, i32, v).getResult();
    };
    auto toI64 = [&](Value v) {
      return arith::IndexCastOp::create(builder, loc, i64, v).getResult();
    };
    auto f32 = [&](double v) {
      return arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(v))
          .getResult();
    };
    GemmArguments args = buildGemmArguments(builder, loc, *gemm);
    SmallVector<Value> operands;
    if (nullStream)
      operands.push_back(LLVM::ZeroOp::create(builder, loc, ptrType));
    operands.append({cst32(gemm->transposeLhs), cst32(gemm->transposeRhs),
                     toI64(args.m), toI64(args.n), toI64(args.k)});
    for (const MatrixDescriptor *matrix : {&args.lhs, &args.rhs, &args.out}) {
      operands.append({matrix->pointer, toI64(matrix->leadingDim)});
      if (gemm->batched)
        operands.push_back(toI64(matrix->batchStride));
    }
    if (gemm->batched)
      operands.push_back(toI64(args.batch));
    operands.append(
        {cst32(*ab), cst32(*ct), f32(1.0), f32(zeroFill ? 0.0 : 1.0)});
    if (!gemm->batched)
      operands.push_back(LLVM::ZeroOp::create(builder, loc, ptrType));
    StringRef name = gemm->batched ? kBatched : kMatmul;
    func::FuncOp fn = getOrDeclareFunction(
        getOperation(), name, functionType(builder, gemm->batched));
    auto call = func::CallOp::create(builder, loc, fn, operands);
    if (op->hasAttr(GADialect::getAccumulatesAttrName()))
      call->setAttr(GADialect::getAccumulatesAttrName(), builder.getUnitAttr());
    op->erase();
    ++(gemm->batched ? numBatchedCalls : numCalls);
    if (zeroFill) {
      zeroFill->erase();
      ++numZeroFills;
    }
    return success();
  }
};

} // namespace
