//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// The passes that --ga-lower-to-cpu adds for the host CPU (see Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef GA_CODEGEN_CPU_PASSES_H
#define GA_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ga {

#define GEN_PASS_DECL
#include "ga/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ga/Codegen/CPU/Passes.h.inc"

} // namespace mlir::ga

#endif // GA_CODEGEN_CPU_PASSES_H
