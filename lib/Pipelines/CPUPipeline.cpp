//===- CPUPipeline.cpp - the --ga-lower-to-cpu pipeline -------------------===//
//
// Lowers a tensor-level training step (the original or the one rewritten by
// --ga-accumulate) to the LLVM dialect for the host CPU. The output runs under
// `mlir-runner`, in-process through `mlir::ExecutionEngine` (ga-verify), or
// ahead of time through `mlir-translate --mlir-to-llvmir | llc`.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"

#include "ga/Pipelines/Pipelines.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

namespace {

//===----------------------------------------------------------------------===//
// Helper passes
//===----------------------------------------------------------------------===//

/// Whether `fill` writes +0.0 (the value a BLAS call with beta = 0 leaves in
/// place of the product's initial output).
static bool isZeroFill(linalg::FillOp fill) {
  auto value = fill.getInputs().front().getDefiningOp<arith::ConstantOp>();
  auto zero = value ? dyn_cast<FloatAttr>(value.getValue()) : FloatAttr();
  return zero && zero.getValue().isPosZero();
}

/// Moves `tensor.extract`s of values defined outside a linalg op's body out
/// of the body. linalg-inline-scalar-operands turns a 0-d operand (a
/// learning rate, say) into such an extract inside the body; left there it
/// becomes a load per element, and a body that loads from memory is not
/// vectorized.
struct HoistInvariantExtractsPass
    : public PassWrapper<HoistInvariantExtractsPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HoistInvariantExtractsPass)

  StringRef getArgument() const final { return "ga-hoist-invariant-extracts"; }
  StringRef getDescription() const final {
    return "Move tensor.extract of values from above out of linalg bodies";
  }

  void runOnOperation() override {
    getOperation().walk([](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      for (Block &block : op->getRegion(0))
        for (Operation &inner : llvm::make_early_inc_range(block))
          if (isa<tensor::ExtractOp>(inner) &&
              llvm::all_of(inner.getOperands(), [&](Value v) {
                return !op->isAncestor(v.getParentBlock()->getParentOp());
              }))
            inner.moveBefore(op);
    });
  }
};

/// Peels the first iteration of a loop that accumulates matrix products into
/// zero-initialized loop-carried values (the gradient accumulators of a
/// micro-batch loop). In the peeled iteration the product writes its result
/// into the zero fill, which the BLAS lowering turns into beta = 0 without
/// the fill: the accumulators are neither zeroed nor read by the first
/// micro-batch. The arithmetic is unchanged (0 + x == x).
struct PeelFirstAccumulationPass
    : public PassWrapper<PeelFirstAccumulationPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PeelFirstAccumulationPass)

  StringRef getArgument() const final { return "ga-peel-first-accumulation"; }
  StringRef getDescription() const final {
    return "Peel the first iteration of loops that accumulate matrix "
           "products into zero-filled values";
  }

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (accumulatesProductIntoZeros(loop))
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      rewriter.setInsertionPoint(loop);
      scf::ForOp first;
      (void)scf::peelForLoopFirstIteration(rewriter, loop, first);
    }
  }

  /// Whether `loop` runs at least twice (statically) and one of its
  /// loop-carried values starts as a zero `linalg.fill` and is the output of
  /// a contraction in the body.
  static bool accumulatesProductIntoZeros(scf::ForOp loop) {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips || trips->ult(2))
      return false;
    for (auto [init, iterArg] :
         llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs())) {
      auto fill = init.getDefiningOp<linalg::FillOp>();
      if (!fill || !isZeroFill(fill))
        continue;
      for (OpOperand &use : iterArg.getUses()) {
        auto product = dyn_cast<linalg::LinalgOp>(use.getOwner());
        if (product && product.isDpsInit(&use) &&
            linalg::isaContractionOpInterface(product))
          return true;
      }
    }
    return false;
  }
};

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
struct ConvertContractionsToBLASPass
    : public PassWrapper<ConvertContractionsToBLASPass,
                         OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvertContractionsToBLASPass)

  StringRef getArgument() const final { return "ga-contractions-to-blas"; }
  StringRef getDescription() const final {
    return "Rewrite f32/f64 matrix products on buffers into CBLAS gemm calls "
           "with beta = 1";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, memref::MemRefDialect,
                    arith::ArithDialect, func::FuncDialect>();
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        candidates.push_back(op);
    });
    getOperation().walk(
        [&](memref::GetGlobalOp get) { ++getGlobalCount[get.getNameAttr()]; });
    for (linalg::LinalgOp op : candidates)
      (void)rewrite(op);
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

//===----------------------------------------------------------------------===//
// Pipeline implementation
//===----------------------------------------------------------------------===//

/// Tensors to memrefs: one-shot bufferization across function boundaries with
/// identity layouts (so that callers pass plain dense descriptors), then the
/// ownership-based deallocation pipeline.
static void addBufferizationStage(OpPassManager &pm,
                                  const LowerToCPUOptions &options) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Micro-batch loops may yield fresh buffers when an accumulator cannot be
  // updated in place; deallocation below takes care of them.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  if (options.outParams) {
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    // Results computed into a fresh buffer are computed into the caller's.
    outParams.hoistStaticAllocs = true;
    outParams.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  }
  // One allocation per step instead of one per micro-batch.
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  if (options.staticTemporaries)
    pm.addPass(createPromoteBuffersToGlobals());
  bufferization::buildBufferDeallocationPipeline(pm);
  // The clones that deallocation inserts (e.g. to return an argument).
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// Linalg on buffers to loops (matrix products to CBLAS first, when asked):
/// sequential scf.for, or scf.parallel for the parallel dimensions when
/// OpenMP is requested.
static void addLoopStage(OpPassManager &pm, const LowerToCPUOptions &options) {
  if (options.blas)
    pm.addPass(std::make_unique<ConvertContractionsToBLASPass>());
  if (options.vectorWidth) {
    VectorizeLinalgOptions vectorize;
    vectorize.vectorWidth = options.vectorWidth;
    vectorize.parallelLoops = options.openmp;
    pm.addNestedPass<func::FuncOp>(createVectorizeLinalg(vectorize));
  }
  if (options.openmp)
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  else
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Loops and buffers to the LLVM dialect.
static void addLLVMStage(OpPassManager &pm, const LowerToCPUOptions &options) {
  if (options.openmp) {
    ConvertSCFToOpenMPPassOptions omp;
    omp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(omp));
  }
  // What ga-vectorize-linalg leaves: 1-d transfers and masks.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16/f16 conversions as integer arithmetic: no compiler-rt needed.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  // With OpenMP, memref must reach LLVM before scf.parallel regions are
  // flattened to cf (memref.alloca_scope inside omp.wsloop needs one block).
  if (options.openmp)
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  // Math with an LLVM intrinsic first; the rest (tanh, erf, ...) as libm calls.
  ConvertMathToLLVMPassOptions math;
  math.approximateLog1p = false;
  pm.addPass(createConvertMathToLLVMPass(math));
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  if (!options.openmp)
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  // The contract of the output: only LLVM (and, with openmp=1, OpenMP) ops.
  pm.addPass(createVerifyLoweredPass(
      "ga-verify-lowered-to-llvm", "to the LLVM dialect by ga-lower-to-cpu",
      [](Operation *op) {
        StringRef dialect = op->getName().getDialectNamespace();
        return dialect == "llvm" || dialect == "omp";
      }));
}

void mlir::ga::buildBufferizeForCPUPipeline(OpPassManager &pm,
                                            const LowerToCPUOptions &options) {
  pm.addPass(createPrepareFunctionsForLLVMPass(options.cInterface));
  // arith/math on whole tensors (`arith.addf %a, %b : tensor<4xf32>`) have no
  // bufferization; as linalg.generic they do.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  if (options.fuseElementwise) {
    // A 0-d hyper-parameter read as a scalar is loaded once, not per element.
    pm.addNestedPass<func::FuncOp>(createLinalgInlineScalarOperandsPass());
    pm.addNestedPass<func::FuncOp>(
        std::make_unique<HoistInvariantExtractsPass>());
    pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
  }
  if (options.blas)
    pm.addNestedPass<func::FuncOp>(
        std::make_unique<PeelFirstAccumulationPass>());
  // A fill per use, next to it (a zero fill before a matrix product becomes
  // beta = 0 with blas=1).
  pm.addNestedPass<func::FuncOp>(createDuplicateSharedFillsPass(
      FillKind::Named, FillPlacement::NextToEachUser));
  addBufferizationStage(pm, options);
}

void mlir::ga::buildLowerToCPUPipeline(OpPassManager &pm,
                                       const LowerToCPUOptions &options) {
  buildBufferizeForCPUPipeline(pm, options);
  addLoopStage(pm, options);
  addLLVMStage(pm, options);
}
