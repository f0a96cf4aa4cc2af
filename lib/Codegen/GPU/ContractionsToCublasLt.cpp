//===- ContractionsToCublasLt.cpp - matrix products as cuBLASLt calls -----===//
//
// Rewrites matrix products on device buffers into `ga.blas_matmul` ops
// (include/ga/IR/GALibraryOps.td), which --ga-lower-library-ops turns into
// the cuBLASLt calls of lib/Runtime/CUDA/GACublasLt.h at the end of the GPU
// lowering. A linalg contraction accumulates into its init (C += A B):
// cuBLASLt with beta = 1 (`accumulate`), so that a gradient accumulator that
// the micro-batch rewrite fused into the product stays fused (Megatron's
// fused weight-gradient accumulation). Right after a zero fill of C, the fill
// is dropped and beta = 0. The stream is the op's async dependency, which
// --ga-gpu-single-stream adds as it does to gpu.launch_func.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GADialect.h"
#include "ga/IR/GALibraryOps.h"
#include "ga/Utils/Gemm.h"
#include "ga/Utils/IRUtils.h"
#include "ga/Utils/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CONTRACTIONSTOCUBLASLT
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// The fill of +0 (named or generic) that is the last write of `c` before
/// `op` (findZeroFillOfOutput; a buffer of its own is an allocation); null if
/// there is none.
linalg::LinalgOp findZeroFill(linalg::LinalgOp op, Value c) {
  auto isZero = [](linalg::LinalgOp fill) {
    if (!isFillLike(fill))
      return false;
    Value v;
    if (auto named = dyn_cast<linalg::FillOp>(fill.getOperation()))
      v = named.getInputs().front();
    else
      v = fill.getBlock()->getTerminator()->getOperand(0);
    return matchPattern(v, m_PosZeroFloat());
  };
  auto isOwnBuffer = [](Value buffer) {
    return isa_and_nonnull<memref::AllocOp>(buffer.getDefiningOp());
  };
  return findZeroFillOfOutput(op, c, isZero, isOwnBuffer);
}

/// The op of `block` that holds `user` (null if it is not in `block`).
Operation *anchorIn(Block *block, Operation *user) {
  return block->findAncestorOpInBlock(*user);
}

/// Whether `op` writes all of `buffer` (a parallel linalg op whose init it is,
/// through a permutation) without reading it first.
bool overwritesWithoutReading(Operation *op, Value buffer) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getDpsInitOperand(0)->get() != buffer ||
      linalgOp.getNumLoops() != linalgOp.getNumParallelLoops() ||
      !linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0))
           .isPermutation() ||
      linalgOp.payloadUsesValueFromOperand(linalgOp.getDpsInitOperand(0)))
    return false;
  return llvm::none_of(linalgOp.getDpsInputs(),
                       [&](Value in) { return getViewRoot(in) == buffer; });
}

/// A bias add that can become the CUBLASLT_EPILOGUE_BIAS of a product with
/// beta = 0 into `c`: `d[i][j] = c[i][j] + bias[j]` right after it.
struct BiasEpilogue {
  linalg::GenericOp add;
  Value bias, out;
};

/// Matches the bias epilogue of `product` (beta = 0, result in `c`, operands
/// `gemm`). The product then writes `d` (with the bias) instead of `c`, and
/// the add goes; this is exact because cuBLASLt adds the bias, in fp32, to
/// the finished fp32 sum, which is what the add did. It requires:
/// `c` and `d` are allocations of the same type in the product's block (d's
/// without operands if it comes after the product); between the product and
/// the add nothing uses `c` or `d`; A and B are not views of `d`; before the
/// product `c` is only overwritten, and after the add it is only freed or
/// overwritten before it is read again; the add is
/// `addf(c[i][j], bias[j])` (either order) into `d[i][j]`, bias an f32 vector
/// with unit stride. An add in place (`d` is `c`) needs only the last two.
/// Whether `bias`, which `add` reads after `product`, may be read by the
/// product instead: it dominates the product, and no op between them (in
/// the product's block) writes a view of its buffer or takes one without
/// saying what it does with it.
bool mayReadBiasEarly(Operation *product, Operation *add, Value bias) {
  if (!DominanceInfo(product).properlyDominates(bias, product))
    return false;
  Value root = getViewRoot(bias);
  for (Operation *op = product->getNextNode(); op && op != add;
       op = op->getNextNode()) {
    WalkResult writes = op->walk([&](Operation *nested) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
      if (!effects) {
        bool takesBias = llvm::any_of(nested->getOperands(), [&](Value v) {
          return isa<BaseMemRefType>(v.getType()) && getViewRoot(v) == root;
        });
        return takesBias &&
                       !nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      }
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances)
        if (isa<MemoryEffects::Write>(effect.getEffect()) &&
            effect.getValue() && getViewRoot(effect.getValue()) == root)
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (writes.wasInterrupted())
      return false;
  }
  return true;
}

std::optional<BiasEpilogue> matchBiasEpilogue(linalg::LinalgOp product,
                                              const GemmOperands &gemm) {
  Value c = gemm.out;
  auto cAlloc = c.getDefiningOp<memref::AllocOp>();
  if (gemm.batched || !cAlloc)
    return std::nullopt;
  Block *block = product->getBlock();
  // The first op after the product that touches c must be the add. Before
  // the product, c is only overwritten (its zero fill): nothing there reads
  // the value that the product no longer writes (in a loop, the previous
  // iteration's).
  Operation *first = nullptr;
  for (Operation *user : c.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    Operation *anchor = anchorIn(block, user);
    if (!anchor)
      return std::nullopt;
    if (anchor == product.getOperation())
      continue;
    if (anchor->isBeforeInBlock(product)) {
      if (!overwritesWithoutReading(anchor, c))
        return std::nullopt;
      continue;
    }
    if (!first || anchor->isBeforeInBlock(first))
      first = anchor;
  }
  auto add = dyn_cast_or_null<linalg::GenericOp>(first);
  if (!add || add.getNumDpsInputs() != 2 || add.getNumDpsInits() != 1 ||
      add.getNumLoops() != 2 || add.getNumParallelLoops() != 2)
    return std::nullopt;
  Value d = add.getDpsInitOperand(0)->get();
  // An add in place (d = c, as bufferization writes it when c has no other
  // reader) leaves the product's buffer: the product then writes the sum.
  bool inPlace = d == c;
  auto dAlloc = d.getDefiningOp<memref::AllocOp>();
  // d's allocation may follow the product (it then moves before it): it
  // must have no operands then.
  if (!inPlace &&
      (!dAlloc || dAlloc->getBlock() != block ||
       (product->isBeforeInBlock(dAlloc) && dAlloc->getNumOperands() != 0) ||
       d.getType() != c.getType() || getViewRoot(gemm.lhs) == d ||
       getViewRoot(gemm.rhs) == d))
    return std::nullopt;
  // Which input is c and which the bias, and their maps.
  OpOperand *cIn = add.getDpsInputOperand(0),
            *biasIn = add.getDpsInputOperand(1);
  if (cIn->get() != c)
    std::swap(cIn, biasIn);
  auto biasType = dyn_cast<MemRefType>(biasIn->get().getType());
  MLIRContext *ctx = product.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap column = AffineMap::get(2, 0, getAffineDimExpr(1, ctx));
  if (cIn->get() != c || biasIn->get() == c || !biasType ||
      biasType.getRank() != 1 || !biasType.getElementType().isF32() ||
      !biasType.isLastDimUnitStride() ||
      add.getMatchingIndexingMap(cIn) != identity ||
      add.getMatchingIndexingMap(biasIn) != column ||
      add.getMatchingIndexingMap(add.getDpsInitOperand(0)) != identity)
    return std::nullopt;
  // The body: yield addf(c, bias), nothing else.
  Block &body = add.getRegion().front();
  auto addf = dyn_cast_or_null<arith::AddFOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  if (!addf || body.getOperations().size() != 2)
    return std::nullopt;
  Value cArg = add.getMatchingBlockArgument(cIn);
  Value biasArg = add.getMatchingBlockArgument(biasIn);
  if (!((addf.getLhs() == cArg && addf.getRhs() == biasArg) ||
        (addf.getLhs() == biasArg && addf.getRhs() == cArg)))
    return std::nullopt;
  // The product reads the bias where the add read it: the bias must exist
  // before the product and keep its value up to the add (in a sharded
  // step, the all-gather of the bias fills it in between).
  if (!mayReadBiasEarly(product, add, biasIn->get()))
    return std::nullopt;
  if (inPlace)
    return BiasEpilogue{add, biasIn->get(), d};
  // Nothing between the product and the add uses d; after the add, c is
  // freed or overwritten before anything reads it.
  for (Operation *user : d.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    Operation *anchor = anchorIn(block, user);
    if (!anchor)
      return std::nullopt;
    if (anchor != add.getOperation() && product->isBeforeInBlock(anchor) &&
        anchor->isBeforeInBlock(add))
      return std::nullopt;
  }
  Operation *next = nullptr;
  for (Operation *user : c.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    Operation *anchor = anchorIn(block, user);
    if (!add->isBeforeInBlock(anchor))
      continue;
    if (!next || anchor->isBeforeInBlock(next))
      next = anchor;
  }
  if (next && !overwritesWithoutReading(next, c))
    return std::nullopt;
  return BiasEpilogue{add, biasIn->get(), d};
}

struct ContractionsToCublasLtPass
    : public ga::impl::ContractionsToCublasLtBase<ContractionsToCublasLtPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      if (!erased.contains(op.getOperation()))
        (void)rewrite(op);
  }

  /// Linalg ops folded into a product (bias adds) and erased.
  DenseSet<Operation *> erased;

  LogicalResult rewrite(linalg::LinalgOp op) {
    // Matrix-vector products too: cuBLASLt takes them as GEMMs with N = 1
    // (or M = 1).
    FailureOr<GemmOperands> gemm = matchGemm(op, /*allowVectors=*/true);
    if (failed(gemm))
      return failure();
    Type elemAB = getElementTypeOrSelf(gemm->lhs.getType());
    Type elemC = getElementTypeOrSelf(gemm->out.getType());
    // fp32 accumulators only: a product into f16 or bf16 rounds every partial
    // sum to that type in the original step, which cuBLASLt's fp32
    // accumulation (rounding once) does not reproduce; it stays a kernel.
    if (!isa<Float32Type, Float16Type, BFloat16Type>(elemAB) ||
        getElementTypeOrSelf(gemm->rhs.getType()) != elemAB || !elemC.isF32())
      return failure();

    linalg::LinalgOp zeroFill = findZeroFill(op, gemm->out);
    OpBuilder builder(op);
    Location loc = op.getLoc();
    // A bias add right after a product with beta = 0 becomes its epilogue:
    // the product writes the add's output.
    std::optional<BiasEpilogue> epilogue;
    if (zeroFill)
      epilogue = matchBiasEpilogue(op, *gemm);
    if (epilogue) {
      gemm->out = epilogue->out;
      Operation *alloc = epilogue->out.getDefiningOp();
      if (alloc->getBlock() == op->getBlock() && op->isBeforeInBlock(alloc))
        alloc->moveBefore(op);
    }
    viewVectorsAsMatrices(builder, loc, *gemm);
    auto product = BlasMatmulOp::create(
        builder, loc, /*asyncToken=*/Type(), /*asyncDependencies=*/ValueRange{},
        gemm->lhs, gemm->rhs, gemm->out, epilogue ? epilogue->bias : Value(),
        UnitAttr(), UnitAttr(), UnitAttr());
    product.setTransposeLhs(gemm->transposeLhs);
    product.setTransposeRhs(gemm->transposeRhs);
    product.setAccumulate(!zeroFill);
    if (op->hasAttr(GADialect::getAccumulatesAttrName()))
      product->setAttr(GADialect::getAccumulatesAttrName(),
                       builder.getUnitAttr());
    op->erase();
    ++(gemm->batched ? numBatchedCalls : numCalls);
    if (zeroFill) {
      zeroFill->erase();
      ++numZeroFills;
    }
    if (epilogue) {
      erased.insert(epilogue->add.getOperation());
      epilogue->add->erase();
      ++numBiasEpilogues;
    }
    return success();
  }
};

} // namespace
