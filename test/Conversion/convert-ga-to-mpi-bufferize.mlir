// RUN: ga-opt %s --ga-accumulate="micro-batches=4" --ga-bucket-gradients --convert-ga-to-mpi \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --cse --canonicalize | FileCheck %s
// RUN: ga-opt %s --ga-accumulate="micro-batches=4" --ga-lower-to-cpu-mpi \
// RUN:   | FileCheck %s --check-prefix=LLVM

// The whole point of bucketing in views: after one-shot bufferization the
// two gradients are accumulated in place in subviews of ONE buffer, and the
// collective reduces that buffer itself, in place. No pack or unpack copy
// (no memref.copy at all in this step), no copy of the accumulators.

// CHECK-LABEL: func.func @train_step
// CHECK-NOT:     memref.copy
// CHECK:         %[[FLAT:.*]] = memref.alloc() {{.*}} : memref<36xf32>
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[FLAT]] : memref<36xf32>)
// CHECK:         scf.for
// CHECK:           %[[SW:.*]] = memref.subview %[[FLAT]][0] [32] [1]
// CHECK:           %[[VW:.*]] = memref.expand_shape %[[SW]] {{\[\[}}0, 1]] output_shape [8, 4]
// CHECK:           linalg.matmul {{.*}} outs(%[[VW]] : memref<8x4xf32>)
// CHECK:           %[[VB:.*]] = memref.subview %[[FLAT]][32] [4] [1]
// CHECK:           linalg.reduce {{.*}} outs(%[[VB]] : memref<4xf32, strided<[1], offset: 32>>)
// CHECK:         }
// CHECK-NEXT:    %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NEXT:    mpi.allreduce(%[[FLAT]], %[[FLAT]], MPI_SUM, %[[COMM]]) : memref<36xf32>, memref<36xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[FLAT]] : memref<36xf32>)
// CHECK:           arith.divf
// CHECK:         %[[RW:.*]] = memref.subview %[[FLAT]][0] [32] [1]
// CHECK:         %[[GW:.*]] = memref.expand_shape %[[RW]]
// CHECK:         %[[GB:.*]] = memref.subview %[[FLAT]][32] [4] [1]
// CHECK-NOT:     memref.copy
// CHECK:         return

// Through --ga-lower-to-cpu-mpi: one MPI_Allreduce per step (one bucket), in
// place (MPI_IN_PLACE is -1 in MPICH), no memcpy.
// LLVM-NOT:      memcpy
// LLVM-NOT:      memrefCopy
// LLVM-LABEL:    llvm.func @train_step
// LLVM:          %[[IN_PLACE:.*]] = llvm.mlir.constant(-1 : i64) : i64
// LLVM:          %[[SEND:.*]] = llvm.inttoptr %[[IN_PLACE]] : i64 to !llvm.ptr
// LLVM:          llvm.call @MPI_Allreduce(%[[SEND]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
// LLVM-NOT:      llvm.call @MPI_Allreduce
// LLVM:          llvm.call @MPI_Comm_size
// LLVM-NOT:      llvm.call @MPI_Allreduce
// LLVM-LABEL:    llvm.func @ga_mpi_init
// LLVM:          llvm.call @MPI_Init
// LLVM-NOT:      memcpy
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @train_step(%w: tensor<8x4xf32>, %b: tensor<4xf32>,
                      %x: tensor<16x8xf32> {ga.batch = 0 : i64},
                      %y: tensor<16x4xf32> {ga.batch = 0 : i64})
    -> (tensor<8x4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %lr = arith.constant 0.1 : f32
  %e_p = tensor.empty() : tensor<16x4xf32>
  %z_p = linalg.fill ins(%zero : f32) outs(%e_p : tensor<16x4xf32>) -> tensor<16x4xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x4xf32>) outs(%z_p : tensor<16x4xf32>) -> tensor<16x4xf32>
  %e_d = tensor.empty() : tensor<16x4xf32>
  %d = linalg.generic {indexing_maps = [#id2, #col, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b, %y : tensor<16x4xf32>, tensor<4xf32>, tensor<16x4xf32>) outs(%e_d : tensor<16x4xf32>) {
  ^bb0(%p: f32, %bb: f32, %t: f32, %o: f32):
    %s = arith.addf %p, %bb : f32
    %r = arith.subf %s, %t : f32
    %g = arith.mulf %r, %scale : f32
    linalg.yield %g : f32
  } -> tensor<16x4xf32>
  %e_w = tensor.empty() : tensor<8x4xf32>
  %z_w = linalg.fill ins(%zero : f32) outs(%e_w : tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %d : tensor<16x8xf32>, tensor<16x4xf32>) outs(%z_w : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e_b = tensor.empty() : tensor<4xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<4xf32>) -> tensor<4xf32>
  %db = linalg.reduce { arith.addf } ins(%d : tensor<16x4xf32>) outs(%z_b : tensor<4xf32>) dimensions = [0]
  %dwr = ga.all_reduce <mean> %dw : tensor<8x4xf32>
  %dbr = ga.all_reduce <mean> %db : tensor<4xf32>
  %e_w2 = tensor.empty() : tensor<8x4xf32>
  %w2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %dwr : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e_w2 : tensor<8x4xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<8x4xf32>
  %e_b2 = tensor.empty() : tensor<4xf32>
  %b2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%b, %dbr : tensor<4xf32>, tensor<4xf32>) outs(%e_b2 : tensor<4xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %w2, %b2 : tensor<8x4xf32>, tensor<4xf32>
}
