// RUN: ga-opt %s --ga-lower-to-cpu="approximate-math=0" | FileCheck %s
// RUN: ga-opt %s --ga-lower-to-cpu="c-interface=1" | FileCheck %s --check-prefix=CIFACE
// RUN: ga-opt %s --ga-lower-to-cpu="openmp=1 num-threads=2 min-parallel-work=0" | FileCheck %s --check-prefix=OMP
// RUN: ga-opt %s --ga-lower-to-cpu="openmp=1 num-threads=2" | FileCheck %s --check-prefix=OMPSMALL
// RUN: ga-opt %s --ga-lower-to-cpu="vector-width=0" | FileCheck %s --check-prefix=SCALAR
// RUN: ga-opt %s --ga-lower-to-cpu | FileCheck %s --check-prefix=APPROX
// RUN: ga-opt %s --ga-lower-to-cpu="static-temporaries=1" | FileCheck %s --check-prefix=STATIC
// RUN: ga-opt %s --ga-lower-to-cpu="out-params=1 c-interface=1" | FileCheck %s --check-prefix=OUT

// --ga-lower-to-cpu takes a tensor-level step to the LLVM dialect only: no
// tensor, memref, linalg, scf or cf op is left, ga.* argument attributes are
// dropped; by default tanh and erf on f32 vectors are vector arithmetic
// (approximate-math); with approximate-math=0, math with an LLVM intrinsic
// uses it and the rest (erf) calls libm.

// CHECK-NOT:  ga.batch
// CHECK-NOT:  _mlir_ciface_
// CHECK-NOT:  _ga_packed_
// CHECK-LABEL: llvm.func @step(
// CHECK:        llvm.call @malloc
// CHECK:        llvm.intr.tanh(%{{.*}}) : (vector<4xf32>) -> vector<4xf32>
// CHECK:        llvm.call @erff
// CHECK-LABEL: llvm.func @sgd(
// CHECK-NOT:  {{tensor\.|memref\.|linalg\.|scf\.|cf\.|bufferization\.}}

// CIFACE-LABEL: llvm.func @step(
// CIFACE-SAME:    llvm.emit_c_interface
// CIFACE-LABEL: llvm.func @_mlir_ciface_step(
// CIFACE-NOT:   _mlir_ciface_helper
// The packed entry point over it (--ga-emit-packed-interfaces): one array.
// CIFACE-LABEL: llvm.func @_ga_packed_step(%{{.*}}: !llvm.ptr) {
// CIFACE:         llvm.call @_mlir_ciface_step(
// CIFACE-NOT:   _ga_packed_helper

// By default the element-wise ops run on 256-bit vectors (the 4 features in
// one vector<4xf32>, checked above); with vector-width=0 on scalars.
// SCALAR-LABEL: llvm.func @step(
// SCALAR-NOT:   vector<
// SCALAR:       llvm.intr.tanh(%{{.*}}) : (f32) -> f32
// SCALAR:       llvm.call @erff

// APPROX-LABEL: llvm.func @step(
// APPROX-NOT:   llvm.intr.tanh
// APPROX-NOT:   llvm.call @erff
// APPROX:       llvm.fmul %{{.*}} : vector<4xf32>
// APPROX-NOT:   llvm.intr.tanh
// APPROX-NOT:   llvm.call @erff
// APPROX-LABEL: llvm.func @sgd(

// The 8x4 temporary is a global; the results stay on the heap.
// STATIC:      llvm.mlir.global private @__ga_buffer_step_0() {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<8 x array<4 x f32>>
// STATIC-LABEL: llvm.func @step(
// STATIC:        llvm.mlir.addressof @__ga_buffer_step_0

// Two results as two out-parameters after the two arguments.
// OUT-LABEL:   llvm.func @_mlir_ciface_step(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes

// OMP:         llvm.func @step(
// OMP:           omp.parallel num_threads
// OMP:           omp.wsloop

// By default, a step this small (8x4 buffers) runs on one thread: no loop
// pays for an OpenMP region (ga-serialize-small-parallel-loops).
// OMPSMALL:     llvm.func @step(
// OMPSMALL-NOT:   omp.parallel
// OMPSMALL:     llvm.return

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

// A 0-d learning rate is read once, outside the update, so the update still
// vectorizes (a load per element in the body would not).
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         llvm.fmul %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         llvm.fsub %{{.*}}, %{{.*}} : vector<8xf32>
// SCALAR-LABEL: llvm.func @sgd(
// SCALAR-NOT:   vector<
func.func @sgd(%w: tensor<64xf32>, %g: tensor<64xf32>, %lr: tensor<f32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                                        affine_map<(i) -> ()>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%w, %g, %lr : tensor<64xf32>, tensor<64xf32>, tensor<f32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %d: f32, %l: f32, %o: f32):
    %m = arith.mulf %l, %d : f32
    %n = arith.subf %p, %m : f32
    linalg.yield %n : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
