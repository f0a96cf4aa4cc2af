//===- GAPlugin.cpp - ga-mlir as an mlir-opt pass and dialect plugin ------===//
//
// GAPlugin.so lets an unmodified `mlir-opt` (Debian's
// /usr/lib/llvm-22/bin/mlir-opt) run the ga passes and pipelines:
//
//   mlir-opt --load-dialect-plugin=GAPlugin.so --load-pass-plugin=GAPlugin.so \
//     --pass-pipeline='builtin.module(ga-accumulate{micro-batches=4})' in.mlir
//
// The dialect entry point adds the `ga` dialect and what the ga pipelines
// need to mlir-opt's registry; the pass entry point registers the ga passes
// and pipelines. Like mlir-opt itself, the plugin links libMLIR.so
// dynamically, so both share one copy of MLIR (its registries, type ids and
// command-line options); a plugin with its own copy of MLIR would register
// into registries mlir-opt never reads.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

using namespace mlir;

/// The entry point of `--load-dialect-plugin`.
extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "GA", "0.1.0",
          [](DialectRegistry *registry) {
            ga::registerAllGADialects(*registry);
            ga::registerGAPipelineDependencies(*registry);
          }};
}

/// The entry point of `--load-pass-plugin`.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "GA", "0.1.0", [] {
            ga::registerAllGAPasses();
            ga::registerAllGAPipelines();
          }};
}
