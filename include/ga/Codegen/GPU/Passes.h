//===- Passes.h - GPU code generation passes --------------------*- C++ -*-===//
//
// The passes that --ga-lower-to-gpu-loops and --ga-lower-to-nvvm add to map
// a bufferized step onto the GPU (see Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef GA_CODEGEN_GPU_PASSES_H
#define GA_CODEGEN_GPU_PASSES_H

#include "ga/IR/GADialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ga {

#define GEN_PASS_DECL
#include "ga/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ga/Codegen/GPU/Passes.h.inc"

} // namespace mlir::ga

#endif // GA_CODEGEN_GPU_PASSES_H
