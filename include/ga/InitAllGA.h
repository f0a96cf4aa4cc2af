//===- InitAllGA.h - register everything ga-mlir provides -------*- C++ -*-===//
//
// The one header an embedding compiler includes. `registerAllGA(registry)` is
// the one call it needs: the `ga` dialect, everything the ga pipelines use,
// and the ga passes and pipelines. The finer-grained functions below are its
// parts, for tools that register upstream dialects and passes themselves.
//
//===----------------------------------------------------------------------===//

#ifndef GA_INITALLGA_H
#define GA_INITALLGA_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::ga {

/// Everything ga-mlir needs, in one call: `registerAllGADialects` and
/// `registerGAPipelineDependencies` on `registry`, and (once per process)
/// `registerAllGAPasses` and `registerAllGAPipelines` with the global pass
/// registry. After it, a `MLIRContext` built from `registry` runs every ga
/// pass and pipeline (`--ga-accumulate` with `max-memory`,
/// `--ga-memory-report`, `--ga-lower-to-cpu`, `--ga-lower-to-nvvm`, ...) on
/// input in any upstream dialect. Upstream passes are not registered (call
/// `mlir::registerAllPasses()` for those). Thread-safe.
void registerAllGA(DialectRegistry &registry);

/// Adds the `ga` dialect and the external models of its interfaces (the
/// memory effects of the `mpi` ops the collective lowering emits) to
/// `registry`.
void registerAllGADialects(DialectRegistry &registry);

/// Adds what the ga pipelines use beyond the dialects of their input to
/// `registry`: every upstream dialect, the external models of their
/// interfaces (the bufferization models of `arith`, `tensor`, `linalg`,
/// `scf`, ..., without which `max-memory`, `--ga-memory-report` and the
/// lowerings fail with "op was not bufferized"), the dialect extensions
/// (`func` bufferization across calls, conversion to LLVM, ...) and the LLVM
/// IR translations (the NVVM pipeline serializes GPU modules). The pipelines
/// create ops of many dialects on copies of the step (the memory estimate
/// bufferizes and lowers), so the set is not the one of the input.
void registerGAPipelineDependencies(DialectRegistry &registry);

/// Registers every ga pass (`--ga-micro-batch`, ...) for command-line use.
/// Call at most once per process (the pass registry rejects a name twice).
void registerAllGAPasses();

/// Registers the ga pipelines (`--ga-accumulate`, `--ga-lower-to-cpu`, ...).
/// Call at most once per process.
void registerAllGAPipelines();

} // namespace mlir::ga

#endif // GA_INITALLGA_H
