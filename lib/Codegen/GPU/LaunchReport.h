//===- LaunchReport.h - the launch structure of a GPU step as JSON -*- C++
//-*-===//
//
// What the host code of a GPU-lowered step launches, and where: read from the
// ops and types of the module (`--ga-gpu-kernel-report=format=json`), so that
// tools (bench/gpu_report.py, bench/gpu_host_calls.py) never read printed IR.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CODEGEN_GPU_LAUNCHREPORT_H
#define GA_LIB_CODEGEN_GPU_LAUNCHREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace mlir::ga {

/// Writes, as attributes of the JSON object being built in `json`: the
/// `kernels` of the module's `gpu.module`s (per `gpu.func`: its parameters
/// and the ones it loads from and stores to), the host `buffers`
/// (`gpu.alloc`), the `launches` in program order (kernels with grid, block
/// and buffers; `ga.blas_matmul` products with their shape, beta and
/// buffers), the micro-batch `loops` (host `scf.for` loops and
/// `ga.graph_capture` regions), the `gpu.memcpy`s inside them, the host
/// synchronizations, the linalg products and convolutions, and the PTX of
/// every `gpu.binary` with instruction counts per kernel.
void writeLaunchReport(ModuleOp module, llvm::json::OStream &json);

} // namespace mlir::ga

#endif // GA_LIB_CODEGEN_GPU_LAUNCHREPORT_H
