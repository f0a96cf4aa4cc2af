//===- Passes.h - conversions of ga collectives to engines ------*- C++ -*-===//
//
// Lowerings of the data-parallel collectives (`ga.all_reduce`,
// `shard.all_reduce`) to real communication engines: the upstream `mpi`
// dialect (MPICH) on the CPU and the NCCL runtime library on the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef GA_CONVERSION_PASSES_H
#define GA_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::ga {

#define GEN_PASS_DECL
#include "ga/Conversion/Passes.h.inc"

/// Attaches memory-effect models to the upstream `mpi` ops that read or write
/// buffers (`mpi.allreduce`, `mpi.send`, ...) and to `mpi.init` /
/// `mpi.finalize`. MLIR 22 declares no effects on them, so the
/// ownership-based buffer deallocation refuses any function that contains
/// one ("ops with unknown memory side effects are not supported").
void registerMPIMemoryEffectModels(DialectRegistry &registry);

#define GEN_PASS_REGISTRATION
#include "ga/Conversion/Passes.h.inc"

} // namespace mlir::ga

#endif // GA_CONVERSION_PASSES_H
