//===- StreamFunctions.h - library calls ordered on a stream ----*- C++ -*-===//
//
// The runtime library functions whose work the lowered host code enqueues on
// a stream: emitted by --ga-contractions-to-cublaslt and --convert-ga-to-nccl,
// given the step's stream by --ga-gpu-single-stream, recorded in a graph by
// --ga-capture-cuda-graphs, staged for by --ga-device-iteration-index.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
#define GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::ga::detail {

/// The cuBLASLt products of lib/Runtime/CUDA/GACublasLt.h, as
/// --ga-contractions-to-cublaslt declares and calls them.
constexpr StringLiteral kCublasLtMatmul = "gaCublasLtMatmul";
constexpr StringLiteral kCublasLtMatmulStridedBatched =
    "gaCublasLtMatmulStridedBatched";

/// The cuBLASLt products, declared without a stream;
/// --ga-gpu-single-stream adds the step's stream as their first argument.
/// Capturable in a CUDA graph.
constexpr StringLiteral kLibraryStreamFunctions[] = {
    kCublasLtMatmul, kCublasLtMatmulStridedBatched};

/// The operand a call of a cuBLASLt product writes (its C), counted before
/// --ga-gpu-single-stream adds the stream; std::nullopt for other callees.
inline std::optional<unsigned> getCublasLtOutputOperand(StringRef callee) {
  if (callee == kCublasLtMatmul)
    return 9; // transA, transB, m, n, k, A, lda, B, ldb, C
  if (callee == kCublasLtMatmulStridedBatched)
    return 11; // ..., A, lda, strideA, B, ldb, strideB, C
  return std::nullopt;
}

/// Functions whose first operand is already a stream, null where the caller
/// has none (lib/Runtime/NCCL/GANcclRuntime.h): --ga-gpu-single-stream passes
/// the step's stream instead. Not captured: NCCL calls are issued outside
/// the micro-batch loop, on a communication stream of their own.
constexpr StringLiteral kNcclAllReduce = "gaNcclAllReduce";
constexpr StringLiteral kStreamOperandFunctions[] = {kNcclAllReduce};

} // namespace mlir::ga::detail

#endif // GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
