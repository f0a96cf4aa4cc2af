//===- StreamFunctions.h - library calls ordered on a stream ----*- C++ -*-===//
//
// The runtime library functions that the lowered host code calls, as the
// passes use them: emitted by --ga-contractions-to-cublaslt and
// --convert-ga-to-nccl, given the step's stream by --ga-gpu-single-stream,
// recorded in a graph by --ga-capture-cuda-graphs, staged for by
// --ga-device-iteration-index, ordered by --ga-overlap-all-reduce. The names
// and operand positions come from include/ga-runtime/GARuntimeABI.h.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
#define GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H

#include "ga-runtime/GARuntimeABI.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::ga::detail {

// The names, from the one header that the runtimes check themselves against.
constexpr StringLiteral kStreamSynchronize = ga_abi::kStreamSynchronize;
constexpr StringLiteral kStreamDestroy = ga_abi::kStreamDestroy;
constexpr StringLiteral kStreamWaitEvent = ga_abi::kStreamWaitEvent;
constexpr StringLiteral kStreamPrefix = ga_abi::kStreamPrefix;
constexpr StringLiteral kEventCreate = ga_abi::kEventCreate;
constexpr StringLiteral kEventRecord = ga_abi::kEventRecord;
constexpr StringLiteral kEventDestroy = ga_abi::kEventDestroy;
constexpr StringLiteral kGraphBeginCapture = ga_abi::kGraphBeginCapture;
constexpr StringLiteral kGraphEndCapture = ga_abi::kGraphEndCapture;
constexpr StringLiteral kGraphLaunch = ga_abi::kGraphLaunch;
constexpr StringLiteral kGraphDestroy = ga_abi::kGraphDestroy;

/// The cuBLASLt products of lib/Runtime/CUDA/GACublasLt.h, as
/// --ga-contractions-to-cublaslt declares and calls them.
constexpr StringLiteral kCublasLtMatmul = ga_abi::kCublasLtMatmul;
constexpr StringLiteral kCublasLtMatmulStridedBatched =
    ga_abi::kCublasLtMatmulStridedBatched;

/// The cuBLASLt products, declared without a stream;
/// --ga-gpu-single-stream adds the step's stream as their first argument.
/// Capturable in a CUDA graph.
constexpr StringLiteral kLibraryStreamFunctions[] = {
    kCublasLtMatmul, kCublasLtMatmulStridedBatched};

/// The operand a call of a cuBLASLt product writes (its C), counted before
/// --ga-gpu-single-stream adds the stream; std::nullopt for other callees.
inline std::optional<unsigned> getCublasLtOutputOperand(StringRef callee) {
  if (callee == kCublasLtMatmul)
    return ga_abi::kCublasLtMatmulOutput;
  if (callee == kCublasLtMatmulStridedBatched)
    return ga_abi::kCublasLtMatmulStridedBatchedOutput;
  return std::nullopt;
}

/// Functions whose first operand is already a stream, null where the caller
/// has none (lib/Runtime/NCCL/GANcclRuntime.h): --ga-gpu-single-stream passes
/// the step's stream instead. Not captured: NCCL calls are issued outside
/// the micro-batch loop, on a communication stream of their own.
constexpr StringLiteral kNcclAllReduce = ga_abi::kNcclAllReduce;
constexpr StringLiteral kStreamOperandFunctions[] = {kNcclAllReduce};

} // namespace mlir::ga::detail

#endif // GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
