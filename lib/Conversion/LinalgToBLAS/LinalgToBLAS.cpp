//===- LinalgToBLAS.cpp - matrix products on buffers to CBLAS gemm --------===//
//
// --convert-linalg-to-blas: rewrites linalg contractions on buffers with one
// M, N and K dimension (and at most one batch dimension: a loop of calls)
// into `cblas_sgemm` / `cblas_dgemm` calls, beta = 1 (accumulate into C) or
// beta = 0 in place of a zero fill of C; large products split over threads
// as an scf.parallel with parallel-blocks.
//
//===----------------------------------------------------------------------===//

#include "ga/Conversion/Passes.h"

#include "ga/Utils/Gemm.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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
/// reads C nor needs it written first. Handles what matchGemm takes
/// (include/ga/Utils/Gemm.h, shared with the cuBLASLt lowering): any linalg
/// contraction with one M, one N and one K dimension (or a matrix-vector
/// product) and at most one outermost batch dimension (a loop of calls), a
/// multiply-add body, one element type, and operands whose innermost stride
/// is 1; everything else is left to the loop lowering.
struct ConvertLinalgToBLASPass
    : public ga::impl::ConvertLinalgToBLASBase<ConvertLinalgToBLASPass> {
  using ConvertLinalgToBLASBase::ConvertLinalgToBLASBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    for (Type elem :
         {Type(Float32Type::get(ctx)), Type(Float64Type::get(ctx))}) {
      auto [name, type] = gemmFunction(ctx, elem);
      if (failed(checkExternalFunction(getOperation(), name, type,
                                       "a CBLAS function")))
        return signalPassFailure();
    }
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

  /// The CBLAS gemm of element type `elem` (f32: cblas_sgemm, f64:
  /// cblas_dgemm) and its type.
  static std::pair<StringRef, FunctionType> gemmFunction(MLIRContext *ctx,
                                                         Type elem) {
    Builder b(ctx);
    Type i32 = b.getI32Type(), ptr = LLVM::LLVMPointerType::get(ctx);
    auto type = b.getFunctionType({i32, i32, i32, i32, i32, i32, elem, ptr, i32,
                                   ptr, i32, elem, ptr, i32},
                                  {});
    return {elem.isF32() ? "cblas_sgemm" : "cblas_dgemm", type};
  }

  LogicalResult rewrite(linalg::LinalgOp op) {
    // Matrix-vector products too, as GEMMs with N = 1 (or M = 1).
    FailureOr<GemmOperands> gemm = matchGemm(op, /*allowVectors=*/true);
    if (failed(gemm))
      return failure();
    Type elem = getElementTypeOrSelf(gemm->out.getType());
    if (!elem.isF32() && !elem.isF64())
      return failure();
    for (Value v : {gemm->lhs, gemm->rhs})
      if (getElementTypeOrSelf(v.getType()) != elem)
        return failure();

    GemmSizes sizes = getGemmSizes(*gemm);
    if (avoidAllocatingKernels &&
        mayAllocatePerCall(elem, *gemm, sizes.m, sizes.n, sizes.k)) {
      ++numKeptInLoops;
      return failure();
    }
    // Each block of a split unbatched product is a call of its own, with
    // sizes of its own.
    bool parallel = parallelBlocks > 1 && isLarge(sizes) &&
                    !(avoidAllocatingKernels && !gemm->batched &&
                      blockMayAllocate(elem, *gemm, sizes));

    // beta = 0 instead of a zero fill of C right before the product (the
    // fill covers every matrix of a batch).
    linalg::FillOp zeroFill = findZeroFill(op, gemm->out);
    OpBuilder builder(op);
    Location loc = op.getLoc();
    viewVectorsAsMatrices(builder, loc, *gemm);
    GemmArguments args = buildGemmArguments(builder, loc, *gemm);
    if (gemm->batched)
      // CBLAS has no strided-batched gemm (Debian's OpenBLAS 0.3.21 exports
      // no cblas_sgemm_batch): one call per matrix of the batch, at the
      // batch strides of the three operands.
      buildBatchLoop(builder, loc, elem, args, parallel);
    else if (parallel)
      buildBlockLoop(builder, loc, elem, *gemm, args);
    buildCall(builder, loc, elem, *gemm, args, /*beta=*/zeroFill ? 0.0 : 1.0);
    op->erase();
    if (zeroFill)
      zeroFill->erase();
    if (gemm->batched)
      ++numBatched;
    if (parallel)
      ++numParallel;
    return success();
  }

  /// The static sizes of the GEMM calls of `gemm` (ShapedType::kDynamic
  /// where not static): a matrix-vector product has N = 1, a vector-matrix
  /// one M = 1; `batch` is 1 when not batched.
  struct GemmSizes {
    int64_t batch, m, n, k;
  };
  static GemmSizes getGemmSizes(const GemmOperands &gemm) {
    ArrayRef<int64_t> out = cast<MemRefType>(gemm.out.getType()).getShape();
    ArrayRef<int64_t> lhs = cast<MemRefType>(gemm.lhs.getType()).getShape();
    int64_t batch = gemm.batched ? out.front() : 1;
    int64_t k = lhs[lhs.size() - (gemm.transposeLhs ? 2 : 1)];
    switch (gemm.vector) {
    case GemmOperands::Vector::NoN:
      return {batch, out.back(), 1, k};
    case GemmOperands::Vector::NoM:
      return {batch, 1, out.back(), k};
    case GemmOperands::Vector::None:
      break;
    }
    return {batch, out[out.size() - 2], out.back(), k};
  }

  /// Whether a product of `sizes` has at least min-parallel-work
  /// multiply-adds (batch x M x N x K); a dynamic size counts as large, as a
  /// run-time trip count does for ga-serialize-small-parallel-loops.
  bool isLarge(const GemmSizes &sizes) const {
    uint64_t work = 1;
    for (int64_t size : {sizes.batch, sizes.m, sizes.n, sizes.k}) {
      if (ShapedType::isDynamic(size))
        return true;
      work *= static_cast<uint64_t>(size);
    }
    return work >= minParallelWork;
  }

  /// Whether OpenBLAS may compute a row-major gemm call of `gemm`'s element
  /// type and transposes, with sizes `m`, `n` and `k` (kDynamic: any), by
  /// malloc-ing a buffer in the call. Its AVX-512 cores (SkylakeX,
  /// Cooperlake, SapphireRapids; OpenBLAS 0.3.21 as in its current
  /// sources) take products of at most 10^6 multiply-adds to "small-matrix"
  /// kernels; the one for untransposed operands (column-major "NN", which a
  /// row-major call with neither operand transposed is) copies the last rows
  /// of the column-major M (our N) into a malloc'ed buffer when fewer than
  /// half a vector of them remain (N mod 16 in 1..8 for f32, N mod 8 in
  /// 1..4 for f64) and K is at least 32 (f32) or 16 (f64). Its other
  /// kernels, and its larger products, allocate nothing per call.
  static bool mayAllocatePerCall(Type elem, const GemmOperands &gemm, int64_t m,
                                 int64_t n, int64_t k) {
    if (gemm.transposeLhs || gemm.transposeRhs)
      return false;
    bool f32 = elem.isF32();
    int64_t lanes = f32 ? 16 : 8, minK = f32 ? 32 : 16;
    if (!ShapedType::isDynamic(k) && k < minK)
      return false;
    if (!ShapedType::isDynamic(n)) {
      int64_t tail = n % lanes;
      if (tail == 0 || tail > lanes / 2)
        return false;
    }
    if (ShapedType::isDynamic(m) || ShapedType::isDynamic(n) ||
        ShapedType::isDynamic(k))
      return true;
    return static_cast<double>(m) * static_cast<double>(n) *
               static_cast<double>(k) <=
           1e6;
  }

  /// Whether a split into parallel blocks divides C's `m` rows (M >= N, or
  /// M not static) rather than its `n` columns.
  static bool splitsRows(int64_t m, int64_t n) {
    return ShapedType::isDynamic(m) || (!ShapedType::isDynamic(n) && m >= n);
  }

  /// Whether one of the calls of an unbatched product of `sizes` split into
  /// parallel-blocks blocks (buildBlockLoop: of C's rows when M >= N or M is
  /// not static, else of its columns) may allocate (mayAllocatePerCall).
  bool blockMayAllocate(Type elem, const GemmOperands &gemm,
                        const GemmSizes &sizes) const {
    bool rows = splitsRows(sizes.m, sizes.n);
    int64_t extent = rows ? sizes.m : sizes.n;
    SmallVector<int64_t, 2> blocks = {extent};
    if (!ShapedType::isDynamic(extent)) {
      int64_t size = llvm::divideCeil(extent, int64_t(parallelBlocks));
      blocks = {size};
      if (int64_t last = extent % size)
        blocks.push_back(last);
    }
    return llvm::any_of(blocks, [&](int64_t block) {
      return rows ? mayAllocatePerCall(elem, gemm, block, sizes.n, sizes.k)
                  : mayAllocatePerCall(elem, gemm, sizes.m, block, sizes.k);
    });
  }

  /// Advances the pointer of `matrix` by `offset` elements (an index).
  static void advance(OpBuilder &builder, Location loc, Type elem,
                      MatrixDescriptor &matrix, Value offset) {
    Value offset64 =
        arith::IndexCastOp::create(builder, loc, builder.getI64Type(), offset);
    matrix.pointer = LLVM::GEPOp::create(
        builder, loc, LLVM::LLVMPointerType::get(builder.getContext()), elem,
        matrix.pointer, ValueRange{offset64});
  }

  /// A loop over the batch of `args` (an scf.parallel when `parallel`, else
  /// an scf.for), with the builder inside it and the three matrix pointers
  /// of `args` advanced to the iteration's matrix.
  static void buildBatchLoop(OpBuilder &builder, Location loc, Type elem,
                             GemmArguments &args, bool parallel) {
    Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
    Value one = arith::ConstantIndexOp::create(builder, loc, 1);
    Value index;
    if (parallel) {
      auto loop =
          scf::ParallelOp::create(builder, loc, ValueRange{zero},
                                  ValueRange{args.batch}, ValueRange{one});
      builder.setInsertionPoint(loop.getBody()->getTerminator());
      index = loop.getInductionVars()[0];
    } else {
      auto loop = scf::ForOp::create(builder, loc, zero, args.batch, one);
      builder.setInsertionPoint(loop.getBody()->getTerminator());
      index = loop.getInductionVar();
    }
    for (MatrixDescriptor *matrix : {&args.lhs, &args.rhs, &args.out})
      advance(builder, loc, elem, *matrix,
              arith::MulIOp::create(builder, loc, index, matrix->batchStride));
  }

  /// An scf.parallel over parallel-blocks blocks of C's rows (M >= N, or M
  /// not static) or columns, with the builder inside it and `args` narrowed
  /// to the iteration's block: its rows of A (columns when A is transposed)
  /// or columns of B (rows when transposed), and its part of C. A block
  /// past the end has no rows (or columns): BLAS returns at once.
  void buildBlockLoop(OpBuilder &builder, Location loc, Type elem,
                      const GemmOperands &gemm, GemmArguments &args) {
    ArrayRef<int64_t> out = cast<MemRefType>(gemm.out.getType()).getShape();
    bool rows = splitsRows(out[0], out[1]);
    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(builder, loc, v).getResult();
    };
    Value extent = rows ? args.m : args.n;
    Value blocks = idx(parallelBlocks);
    Value size = arith::CeilDivSIOp::create(builder, loc, extent, blocks);
    auto loop = scf::ParallelOp::create(builder, loc, ValueRange{idx(0)},
                                        ValueRange{blocks}, ValueRange{idx(1)});
    builder.setInsertionPoint(loop.getBody()->getTerminator());
    Value j = loop.getInductionVars()[0];
    Value lo = arith::MinSIOp::create(
        builder, loc, arith::MulIOp::create(builder, loc, j, size), extent);
    Value hi = arith::MinSIOp::create(
        builder, loc, arith::AddIOp::create(builder, loc, lo, size), extent);
    Value count = arith::SubIOp::create(builder, loc, hi, lo);
    auto scaled = [&](Value ld) {
      return arith::MulIOp::create(builder, loc, lo, ld).getResult();
    };
    if (rows) {
      args.m = count;
      advance(builder, loc, elem, args.lhs,
              gemm.transposeLhs ? lo : scaled(args.lhs.leadingDim));
      advance(builder, loc, elem, args.out, scaled(args.out.leadingDim));
    } else {
      args.n = count;
      advance(builder, loc, elem, args.rhs,
              gemm.transposeRhs ? scaled(args.rhs.leadingDim) : lo);
      advance(builder, loc, elem, args.out, lo);
    }
  }

  /// The CBLAS gemm call of `gemm` with `args` at the builder's position.
  void buildCall(OpBuilder &builder, Location loc, Type elem,
                 const GemmOperands &gemm, const GemmArguments &args,
                 double beta) {
    Type i32 = builder.getI32Type();
    auto cst = [&](int64_t v) {
      return arith::ConstantIntOp::create(builder, loc, i32, v).getResult();
    };
    auto toI32 = [&](Value v) {
      return arith::IndexCastOp::create(builder, loc, i32, v).getResult();
    };
    auto scalar = [&](double v) {
      return arith::ConstantOp::create(builder, loc,
                                       builder.getFloatAttr(elem, v))
          .getResult();
    };
    constexpr int64_t rowMajor = 101, noTrans = 111, trans = 112;
    Value one = scalar(1.0), betaValue = beta == 1.0 ? one : scalar(beta);
    auto [name, type] = gemmFunction(builder.getContext(), elem);
    func::FuncOp fn = getOrDeclareFunction(getOperation(), name, type);
    func::CallOp::create(
        builder, loc, fn,
        ValueRange{cst(rowMajor), cst(gemm.transposeLhs ? trans : noTrans),
                   cst(gemm.transposeRhs ? trans : noTrans), toI32(args.m),
                   toI32(args.n), toI32(args.k), one, args.lhs.pointer,
                   toI32(args.lhs.leadingDim), args.rhs.pointer,
                   toI32(args.rhs.leadingDim), betaValue, args.out.pointer,
                   toI32(args.out.leadingDim)});
  }

  /// The `linalg.fill` of +0.0 into `c` that is the last write of `c` before
  /// `op` (findZeroFillOfOutput); a buffer of its own is an allocation, or a
  /// global with one `get_global`.
  linalg::FillOp findZeroFill(linalg::LinalgOp op, Value c) {
    auto isZero = [](linalg::LinalgOp fill) {
      auto named = dyn_cast<linalg::FillOp>(fill.getOperation());
      return named && isZeroFill(named);
    };
    auto isOwnBuffer = [&](Value buffer) {
      Operation *def = buffer.getDefiningOp();
      auto global = dyn_cast_or_null<memref::GetGlobalOp>(def);
      return isa_and_nonnull<memref::AllocOp>(def) ||
             (global && getGlobalCount.lookup(global.getNameAttr()) == 1);
    };
    return dyn_cast_or_null<linalg::FillOp>(
        findZeroFillOfOutput(op, c, isZero, isOwnBuffer).getOperation());
  }

  /// How many `memref.get_global`s name each global.
  llvm::DenseMap<Attribute, unsigned> getGlobalCount;
};

} // namespace
