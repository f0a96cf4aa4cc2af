//===- KernelReport.cpp - static figures of the mapped GPU kernels --------===//
//
// See KernelReport.h. The figures are static and deliberately simple:
//
// * bytes: each distinct memref a kernel loads from or stores to, counted
//   once at the size of its (static) type, as if the kernel streamed every
//   buffer it touches through DRAM once; block-scope buffers (shared memory)
//   are not counted;
// * flops: floating-point arith and math ops, each times the iterations of
//   the mapped loops and `scf.for` loops around it (guards ignored);
// * the walk a thread makes alone: the product of the static trip counts of
//   the `scf.for` loops around a load in the kernel (a loop from a lane with
//   a stride of `lanes` counts ceil(n / lanes));
// * library products (`ga.blas_matmul`, before --ga-lower-library-ops makes
//   them cuBLASLt calls): m, n, k (and batch) from their operands' types.
//
//===----------------------------------------------------------------------===//

#include "KernelReport.h"
#include "GPULoops.h"

#include "ga/IR/GADialect.h"
#include "ga/IR/GALibraryOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::ga;

double KernelFigures::estimate(const RooflineTarget &target) const {
  double peak = target.fp32FlopsPerSecond;
  if (library && StringRef(types).contains("ab=bf16"))
    peak = target.bf16FlopsPerSecond;
  if (library && StringRef(types).contains("ab=f16"))
    peak = target.bf16FlopsPerSecond;
  return std::max(static_cast<double>(bytes) / target.bytesPerSecond,
                  static_cast<double>(flops) / peak);
}

/// The static trip count of `loop` (ceil((ub - lb) / step), with a dynamic
/// lower bound taken as 0), or nullopt.
static std::optional<int64_t> tripCount(scf::ForOp loop) {
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!ub || !step || *step <= 0)
    return std::nullopt;
  int64_t lb = getConstantIntValue(loop.getLowerBound()).value_or(0);
  return std::max<int64_t>(0, llvm::divideCeil(*ub - lb, *step));
}

/// Iterations of the loops between `op` and `kernel`: scf.for trip counts
/// (`walk`: only those) and, unless `walk`, mapped parallel loop extents.
static int64_t iterationsAround(Operation *op, Operation *kernel, bool walk,
                                bool &dynamic) {
  int64_t n = 1;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(p)) {
      std::optional<int64_t> c = tripCount(loop);
      dynamic |= !c;
      n *= c.value_or(1);
    } else if (auto par = dyn_cast<scf::ParallelOp>(p); par && !walk) {
      for (Value ub : par.getUpperBound()) {
        std::optional<int64_t> c = getConstantIntValue(ub);
        dynamic |= !c;
        n *= c.value_or(1);
      }
    }
    if (p == kernel)
      break;
  }
  return n;
}

static int64_t bytesOf(MemRefType type, bool &dynamic) {
  if (!type.hasStaticShape()) {
    dynamic = true;
    return 0;
  }
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

static bool isFloatOp(Operation *op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      op->getNumResults() != 1)
    return false;
  if (isa<arith::ConstantOp, arith::BitcastOp, arith::ExtFOp, arith::TruncFOp,
          arith::SelectOp, arith::CmpFOp>(op))
    return false;
  return isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType()));
}

/// The figures of the kernel `par` (an outermost mapped loop).
static KernelFigures analyseKernel(scf::ParallelOp par) {
  KernelFigures k;
  k.op = par;
  if (auto name =
          par->getAttrOfType<StringAttr>(GADialect::getKernelAttrName()))
    k.name = name.str();
  else
    k.name = "kernel";
  // Threads: the mapped extents of the kernel loop times, for a cooperative
  // loop, the largest thread-level loop inside it.
  bool dynamic = false;
  k.threads = iterationsAround(&par.getBody()->front(), par, false, dynamic);
  if (par->hasAttr(GADialect::getCooperativeAttrName())) {
    int64_t block = 1;
    par.getBody()->walk([&](scf::ParallelOp inner) {
      bool d = false;
      block = std::max(
          block, iterationsAround(&inner.getBody()->front(), inner, false, d));
      return WalkResult::skip();
    });
    k.threads *= block;
  }
  llvm::SmallPtrSet<Value, 8> seen;
  auto isLocal = [&](Value memref) {
    Operation *def = memref.getDefiningOp();
    return def && par->isAncestor(def);
  };
  par.getBody()->walk([&](Operation *op) {
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      memref = store.getMemRef();
    if (memref && !isLocal(memref)) {
      if (seen.insert(memref).second)
        k.bytes += bytesOf(cast<MemRefType>(memref.getType()), dynamic);
      if (isa<memref::LoadOp>(op))
        k.aloneWalk =
            std::max(k.aloneWalk, iterationsAround(op, par, true, dynamic));
    }
    if (isFloatOp(op))
      k.flops += iterationsAround(op, par, false, dynamic);
  });
  k.dynamic = dynamic;
  return k;
}

/// The name of a floating-point element type in the report's `types`.
static std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// The figures of a library product, from the op's operand types and
/// attributes (it is lowered to a cuBLASLt call later).
static KernelFigures analyseProduct(BlasMatmulOp op) {
  KernelFigures k;
  k.op = op;
  k.library = true;
  k.name = op.isBatched() ? "blas_matmul_batched" : "blas_matmul";
  MemRefType lhs = op.getLhs().getType(), out = op.getOut().getType();
  k.types = ("ab=" + typeName(lhs.getElementType()) +
             " c=" + typeName(out.getElementType()) + " compute=f32");
  if (!lhs.hasStaticShape() || !out.hasStaticShape()) {
    k.dynamic = true;
    return k;
  }
  // The last two dimensions are the matrices', a first one the batch.
  int64_t rank = out.getRank();
  int64_t m = out.getDimSize(rank - 2), n = out.getDimSize(rank - 1);
  int64_t kk = lhs.getDimSize(op.getTransposeLhs() ? rank - 2 : rank - 1);
  int64_t batch = op.isBatched() ? out.getDimSize(0) : 1;
  int64_t abBytes = llvm::divideCeil(lhs.getElementTypeBitWidth(), 8);
  int64_t cBytes = llvm::divideCeil(out.getElementTypeBitWidth(), 8);
  k.flops = 2 * m * n * kk * batch;
  // C read and written (beta = 1, accumulation) or written.
  int64_t cPasses = op.getAccumulate() ? 2 : 1;
  k.bytes = batch * ((m * kk + kk * n) * abBytes + cPasses * m * n * cBytes);
  return k;
}

/// The micro-batch loop of `func`: the outermost `scf.for` outside kernels
/// that contains kernels, or null.
static scf::ForOp findMicroBatchLoop(func::FuncOp func) {
  scf::ForOp found;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto par = dyn_cast<scf::ParallelOp>(op);
        par && gpu_loops::isInsideMappedLoop(par))
      return WalkResult::skip();
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop)
      return WalkResult::advance();
    bool hasKernel = false;
    loop.walk([&](scf::ParallelOp par) {
      hasKernel |= gpu_loops::isInsideMappedLoop(par);
    });
    if (!hasKernel)
      return WalkResult::advance();
    found = loop;
    return WalkResult::interrupt();
  });
  return found;
}

KernelReport::KernelReport(func::FuncOp func, int64_t seq, int64_t vocab,
                           int64_t tokens) {
  scf::ForOp loop = findMicroBatchLoop(func);
  hasMicroBatchLoop = static_cast<bool>(loop);
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    std::optional<KernelFigures> figures;
    if (auto par = dyn_cast<scf::ParallelOp>(op);
        par && gpu_loops::getOutermostMappedLoop(par) == par) {
      figures = analyseKernel(par);
      StringRef name = figures->name;
      if (name == "matmul" || name == "gemm" || name.starts_with("matmul_"))
        productKernels.push_back(op);
    } else if (auto product = dyn_cast<BlasMatmulOp>(op)) {
      figures = analyseProduct(product);
    } else if (auto alloc = dyn_cast<memref::AllocOp>(op);
               alloc && !gpu_loops::isInsideMappedLoop(op)) {
      ArrayRef<int64_t> shape = alloc.getType().getShape();
      if (seq > 0 && llvm::count(shape, seq) >= 2)
        squareBuffers.push_back(op);
      if (vocab > 0 && llvm::is_contained(shape, vocab) &&
          alloc.getType().hasStaticShape() &&
          alloc.getType().getNumElements() >=
              vocab * std::max<int64_t>(tokens, 1))
        logitBuffers.push_back(op);
    }
    if (!figures)
      return WalkResult::advance();
    figures->inMicroBatchLoop = loop && loop->isAncestor(op);
    kernels.push_back(std::move(*figures));
    return isa<scf::ParallelOp>(op) ? WalkResult::skip()
                                    : WalkResult::advance();
  });
}
