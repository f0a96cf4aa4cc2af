//===- StreamFunctions.h - library calls ordered on a stream ----*- C++ -*-===//
//
// The runtime library functions whose work the lowered host code enqueues on
// a stream, shared by --ga-gpu-single-stream (which gives them the step's
// stream) and --ga-capture-cuda-graphs (which records them in a graph).
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
#define GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::ga::detail {

/// cuBLASLt products (lib/Runtime/CUDA/GACublasLt.h): declared without a
/// stream by --ga-contractions-to-cublaslt; --ga-gpu-single-stream adds the
/// step's stream as their first argument. Capturable in a CUDA graph.
constexpr StringLiteral kLibraryStreamFunctions[] = {
    "gaCublasLtMatmul", "gaCublasLtMatmulStridedBatched"};

/// Functions whose first operand is already a stream, null where the caller
/// has none (lib/Runtime/NCCL/GANcclRuntime.h): --ga-gpu-single-stream passes
/// the step's stream instead. Not captured: NCCL calls are issued outside
/// the micro-batch loop, on a communication stream of their own.
constexpr StringLiteral kStreamOperandFunctions[] = {"gaNcclAllReduce"};

} // namespace mlir::ga::detail

#endif // GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
