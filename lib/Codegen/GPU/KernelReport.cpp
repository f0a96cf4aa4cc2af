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
// * library calls: cuBLASLt's m, n, k (and batch) from their constant
//   operands.
//
//===----------------------------------------------------------------------===//

#include "KernelReport.h"
#include "GPULoops.h"

#include "ga/IR/GADialect.h"

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

static std::optional<int64_t> constantOperand(Value v) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  // The static extent of a buffer (the products' m, n, k).
  if (auto dim = v.getDefiningOp<memref::DimOp>())
    if (std::optional<int64_t> index = dim.getConstantIndex())
      if (auto type = dyn_cast<MemRefType>(dim.getSource().getType());
          type && !type.isDynamicDim(*index))
        return type.getDimSize(*index);
  return getConstantIntValue(v);
}

static StringRef cudaTypeName(std::optional<int64_t> code) {
  if (!code)
    return "?";
  switch (*code) {
  case 0:
    return "f32";
  case 2:
    return "f16";
  case 14:
    return "bf16";
  default:
    return "?";
  }
}

/// The figures of a cuBLASLt call (lib/Runtime/CUDA/GACublasLt.h), or
/// nullopt for another call.
static std::optional<KernelFigures> analyseCall(func::CallOp call) {
  StringRef callee = call.getCallee();
  bool batched = callee == "gaCublasLtMatmulStridedBatched";
  if (callee != "gaCublasLtMatmul" && !batched)
    return std::nullopt;
  KernelFigures k;
  k.op = call;
  k.library = true;
  k.name = callee.str();
  // A leading stream (a pointer) when the call carries one.
  OperandRange ops = call.getOperands();
  unsigned s = isa<LLVM::LLVMPointerType>(ops[0].getType()) ? 1 : 0;
  std::optional<int64_t> m = constantOperand(ops[s + 2]),
                         n = constantOperand(ops[s + 3]),
                         kk = constantOperand(ops[s + 4]);
  unsigned typeAt = s + (batched ? 15 : 11);
  std::optional<int64_t> batch =
      batched ? constantOperand(ops[s + 14]) : std::optional<int64_t>(1);
  std::optional<int64_t> ab = constantOperand(ops[typeAt]),
                         c = constantOperand(ops[typeAt + 1]);
  k.types =
      ("ab=" + cudaTypeName(ab) + " c=" + cudaTypeName(c) + " compute=f32")
          .str();
  if (!m || !n || !kk || !batch) {
    k.dynamic = true;
    return k;
  }
  int64_t abBytes = cudaTypeName(ab) == "f32" ? 4 : 2;
  int64_t cBytes = cudaTypeName(c) == "f32" ? 4 : 2;
  k.flops = 2 * *m * *n * *kk * *batch;
  // C read and written (beta = 1, accumulation) or written.
  std::optional<int64_t> beta;
  if (auto cst = ops[typeAt + 3].getDefiningOp<arith::ConstantOp>())
    if (auto f = dyn_cast<FloatAttr>(cst.getValue()))
      beta = static_cast<int64_t>(f.getValueAsDouble());
  int64_t cPasses = beta && *beta == 0 ? 1 : 2;
  k.bytes =
      *batch * ((*m * *kk + *kk * *n) * abBytes + cPasses * *m * *n * cBytes);
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
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      figures = analyseCall(call);
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
