//===- KernelReport.h - static figures of the mapped GPU kernels -*- C++
//-*-===//
//
// Internal to lib/Codegen/GPU. A static account of a step in the mapped-loop
// form (--ga-lower-to-gpu-loops: every kernel an outermost `scf.parallel`
// mapped to blocks and threads, every matrix product a cuBLASLt call): per
// kernel its threads, the longest walk a thread makes alone (the product of
// the trip counts of the `scf.for` loops around a load in one thread), the
// bytes of the distinct buffers it reads and writes, its floating-point
// operations; per library call its shape and types; per micro-batch loop the
// kernels and calls it launches; and the allocations a GPU step must not
// have (T x T buffers, more than one copy of the logits). A roofline
// estimate puts each kernel against a GPU's bandwidth and peak rates.
// --ga-gpu-kernel-report (GPUKernelReport.cpp) prints it.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CODEGEN_GPU_KERNELREPORT_H
#define GA_LIB_CODEGEN_GPU_KERNELREPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <string>

namespace mlir::ga {

/// The GPU a roofline estimate is made against.
struct RooflineTarget {
  double bytesPerSecond = 4.8e12;       // H200 HBM3e
  double bf16FlopsPerSecond = 989e12;   // dense bf16 tensor cores
  double fp32FlopsPerSecond = 67e12;    // fp32 on the CUDA cores
  double tf32FlopsPerSecond = 494.5e12; // unused unless a call computes tf32
};

/// One kernel or library call of a function.
struct KernelFigures {
  Operation *op = nullptr;
  std::string name;     // ga.kernel, or blas_matmul[_batched]
  bool library = false; // a ga.blas_matmul (a cuBLASLt call)
  bool inMicroBatchLoop = false;
  int64_t threads = 0;   // kernels: blocks x threads per block
  int64_t aloneWalk = 0; // kernels: the longest walk of one thread
  int64_t bytes = 0;     // distinct buffers read and written, once each
  int64_t flops = 0;     // floating-point operations (2 m n k for products)
  bool dynamic = false;  // some size unknown: figures are lower bounds
  std::string types;     // library calls: "ab=bf16 c=f32 compute=f32"
  /// Seconds at the roofline of `target`.
  double estimate(const RooflineTarget &target) const;
};

/// The figures of one function.
class KernelReport {
public:
  /// Analyses `func`. `seq`: the sequence length whose T x T buffers are
  /// reported (0: none); `vocab`, `tokens`: buffers of at least `tokens` x
  /// `vocab` elements with a `vocab` dimension are counted as logit copies
  /// (0: none).
  KernelReport(func::FuncOp func, int64_t seq, int64_t vocab, int64_t tokens);

  SmallVector<KernelFigures> kernels;
  /// Allocations with two dimensions equal to the sequence length.
  SmallVector<Operation *> squareBuffers;
  /// Allocations of the size of the logits (or larger) with a vocabulary
  /// dimension.
  SmallVector<Operation *> logitBuffers;
  /// Kernels named as matrix products that are not library calls.
  SmallVector<Operation *> productKernels;
  bool hasMicroBatchLoop = false;
};

} // namespace mlir::ga

#endif // GA_LIB_CODEGEN_GPU_KERNELREPORT_H
