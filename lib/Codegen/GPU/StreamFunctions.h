//===- StreamFunctions.h - library calls ordered on a stream ----*- C++ -*-===//
//
// The runtime functions that the stream passes emit or meet as calls: the
// stream, event and graph functions. The names come from
// include/ga-runtime/GARuntimeABI.h. The cuBLASLt products and NCCL
// all-reduces are `ga.blas_matmul` and `ga.nccl_all_reduce` ops until
// --ga-lower-library-ops.
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
constexpr StringLiteral kGraphBeginCapture = ga_abi::kGraphBeginCapture;
constexpr StringLiteral kGraphEndCapture = ga_abi::kGraphEndCapture;
constexpr StringLiteral kGraphLaunch = ga_abi::kGraphLaunch;
constexpr StringLiteral kGraphDestroy = ga_abi::kGraphDestroy;

} // namespace mlir::ga::detail

#endif // GA_LIB_CODEGEN_GPU_STREAMFUNCTIONS_H
