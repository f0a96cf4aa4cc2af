//===- InitAllGA.h - register everything ga-mlir provides -------*- C++ -*-===//
//
// The one header an embedding compiler includes: it registers the `ga`
// dialect, the ga passes and the ga pipelines with MLIR's global registries.
//
//===----------------------------------------------------------------------===//

#ifndef GA_INITALLGA_H
#define GA_INITALLGA_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::ga {

/// Adds the `ga` dialect to `registry`.
void registerAllGADialects(DialectRegistry &registry);

/// Registers every ga pass (`--ga-micro-batch`, ...) for command-line use.
void registerAllGAPasses();

/// Registers the ga pipelines (`--ga-accumulate`, `--ga-lower-to-cpu`, ...).
void registerAllGAPipelines();

} // namespace mlir::ga

#endif // GA_INITALLGA_H
