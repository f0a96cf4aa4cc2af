//===- StreamFunctions.h - library calls ordered on a stream ----*- C++ -*-===//
//
// The runtime functions that the stream passes emit or meet as calls: the
// stream and event functions. The names come from
// include/ga-runtime/GARuntimeABI.h. The cuBLASLt products, NCCL all-reduces
// and CUDA graphs are `ga.blas_matmul`, `ga.nccl_all_reduce` and
// `ga.graph_*` ops until --ga-lower-library-ops.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
#define GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H

#include "ga-runtime/GARuntimeABI.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::ga::detail {

// The names, from the one header that the runtimes check themselves against.
constexpr StringLiteral kStreamSynchronize = ga_abi::kStreamSynchronize;
constexpr StringLiteral kStreamDestroy = ga_abi::kStreamDestroy;
constexpr StringLiteral kStreamWaitEvent = ga_abi::kStreamWaitEvent;
constexpr StringLiteral kStreamPrefix = ga_abi::kStreamPrefix;
constexpr StringLiteral kEventCreate = ga_abi::kEventCreate;
constexpr StringLiteral kEventRecord = ga_abi::kEventRecord;
constexpr StringLiteral kEventDestroy = ga_abi::kEventDestroy;

} // namespace mlir::ga::detail

#endif // GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
