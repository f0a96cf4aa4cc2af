//===- Passes.h - memory passes of training steps ---------------*- C++ -*-===//
//
// --ga-choose-micro-batches and --ga-memory-report (see Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef GA_MEMORY_PASSES_H
#define GA_MEMORY_PASSES_H

#include "ga/IR/GADialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ga {

#define GEN_PASS_DECL
#include "ga/Memory/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ga/Memory/Passes.h.inc"

} // namespace mlir::ga

#endif // GA_MEMORY_PASSES_H
