// RUN: ga-opt %s --ga-lower-to-cpu | FileCheck %s
// RUN: ga-opt %s --ga-lower-to-cpu="c-interface=1" | FileCheck %s --check-prefix=CIFACE
// RUN: ga-opt %s --ga-lower-to-cpu="openmp=1 num-threads=2" | FileCheck %s --check-prefix=OMP

// --ga-lower-to-cpu takes a tensor-level step to the LLVM dialect only: no
// tensor, memref, linalg, scf or cf op is left, ga.* argument attributes are
// dropped, math with an LLVM intrinsic uses it and the rest (erf) calls libm.

// CHECK-NOT:  ga.batch
// CHECK-NOT:  _mlir_ciface_
// CHECK-LABEL: llvm.func @step(
// CHECK:        llvm.call @malloc
// CHECK:        llvm.intr.tanh
// CHECK:        llvm.call @erff
// CHECK-NOT:  {{tensor\.|memref\.|linalg\.|scf\.|cf\.|bufferization\.}}

// CIFACE-LABEL: llvm.func @step(
// CIFACE-SAME:    llvm.emit_c_interface
// CIFACE-LABEL: llvm.func @_mlir_ciface_step(
// CIFACE-NOT:   _mlir_ciface_helper

// OMP:         llvm.func @step(
// OMP:           omp.parallel num_threads
// OMP:           omp.wsloop

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

func.func @step(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64})
    -> (tensor<4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %t = math.tanh %m : f32
    %r = math.erf %t : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.reduce { arith.addf } ins(%h : tensor<8x4xf32>) outs(%z1 : tensor<4xf32>) dimensions = [0]
  %g2 = func.call @helper(%g) : (tensor<4xf32>) -> tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce { arith.addf } ins(%g2 : tensor<4xf32>) outs(%z0 : tensor<f32>) dimensions = [0]
  return %g2, %s : tensor<4xf32>, tensor<f32>
}
