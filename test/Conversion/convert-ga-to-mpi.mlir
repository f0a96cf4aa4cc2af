// RUN: ga-opt %s --split-input-file --convert-ga-to-mpi | FileCheck %s

// An accumulator (a loop result started from a fill) is reduced in place: its
// buffer, as a 1-d memref (MLIR 22 passes the first dimension as the count),
// is the send and receive buffer. The fill's tensor.empty is also used by the
// optimizer, so the loop gets a private one. `mean` divides by the world
// size in place.

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK-LABEL: func.func @in_place
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:         %[[OWN:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x3xf32>)
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[Z]])
// CHECK:         %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[ACC]] : tensor<4x3xf32> to memref<4x3xf32>
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[BUF]] {{\[\[}}0, 1]] : memref<4x3xf32> into memref<12xf32>
// CHECK:         mpi.allreduce(%[[FLAT]], %[[FLAT]], MPI_SUM, %[[COMM]]) : memref<12xf32>, memref<12xf32>
// CHECK:         %[[T:.*]] = bufferization.to_tensor %[[BUF]] restrict writable : memref<4x3xf32> to tensor<4x3xf32>
// CHECK:         %[[SIZE:.*]] = mpi.comm_size(%[[COMM]]) : i32
// CHECK:         %[[N:.*]] = arith.sitofp %[[SIZE]] : i32 to f32
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} outs(%[[T]] : tensor<4x3xf32>)
// CHECK:           arith.divf %{{.*}}, %[[N]] : f32
// CHECK:         linalg.add ins(%[[MEAN]], %[[MEAN]] : {{.*}}) outs(%[[OWN]] : tensor<4x3xf32>)
// CHECK-NOT:     ga.all_reduce

// Once per process: MPI_Init unless MPI is already initialized (and the same
// for MPI_Finalize), callable from C.
// CHECK-LABEL: func.func @ga_mpi_init()
// CHECK:         %[[FLAG:.*]] = llvm.alloca
// CHECK:         call @MPI_Initialized(%[[FLAG]]) : (!llvm.ptr) -> i32
// CHECK:         %[[V:.*]] = llvm.load %[[FLAG]] : !llvm.ptr -> i32
// CHECK:         %[[UNSET:.*]] = arith.cmpi eq, %[[V]], %{{.*}} : i32
// CHECK:         scf.if %[[UNSET]] {
// CHECK-NEXT:      mpi.init
// CHECK-LABEL: func.func @ga_mpi_finalize()
// CHECK:         call @MPI_Finalized
// CHECK:           mpi.finalize
func.func @in_place(%x: tensor<8x4xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z) -> tensor<4x3xf32> {
    %xs = tensor.extract_slice %x[%i, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
    %ys = tensor.extract_slice %x[%i, 1] [2, 3] [1, 1] : tensor<8x4xf32> to tensor<2x3xf32>
    %n = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%xs, %ys : tensor<2x4xf32>, tensor<2x3xf32>) outs(%a : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %n : tensor<4x3xf32>
  }
  %r = ga.all_reduce <mean> %acc bucket 0 : tensor<4x3xf32>
  // The fill's empty tensor is shared with this op: the loop gets its own.
  %o = linalg.add ins(%r, %r : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}

// -----

// Any other input is copied first, so that writing the result cannot change
// a value still in use.
// CHECK-LABEL: func.func @copied
// CHECK-SAME:      (%[[G:.*]]: tensor<4xf32>)
// CHECK:         %[[C:.*]] = bufferization.alloc_tensor() copy(%[[G]]) : tensor<4xf32>
// CHECK:         %[[B:.*]] = bufferization.to_buffer %[[C]] : tensor<4xf32> to memref<4xf32>
// CHECK:         mpi.allreduce(%[[B]], %[[B]], MPI_SUM, %{{.*}}) : memref<4xf32>, memref<4xf32>
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[B]] restrict writable
// CHECK:         return %[[R]]
func.func @copied(%g: tensor<4xf32>) -> tensor<4xf32> {
  %r = ga.all_reduce <sum> %g : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// All-reduces that share a bucket id (not made by --ga-bucket-gradients) are
// one collective over their packed inputs.
// CHECK-LABEL: func.func @packed
// CHECK-SAME:      (%[[A:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<f32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<7xf32>
// CHECK:         %[[CA:.*]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1]]
// CHECK:         %[[P0:.*]] = tensor.insert_slice %[[CA]] into %[[E]][0] [6] [1]
// CHECK:         %[[CS:.*]] = tensor.expand_shape %[[S]] [] output_shape [1]
// CHECK:         %[[P1:.*]] = tensor.insert_slice %[[CS]] into %[[P0]][6] [1] [1]
// CHECK:         %[[B:.*]] = bufferization.to_buffer %[[P1]] : tensor<7xf32> to memref<7xf32>
// CHECK:         mpi.allreduce(%[[B]], %[[B]], MPI_MAX, %{{.*}}) : memref<7xf32>, memref<7xf32>
// CHECK-NOT:     mpi.allreduce
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[B]]
// CHECK:         tensor.extract_slice %[[R]][0] [6] [1]
// CHECK:         tensor.extract_slice %[[R]][6] [1] [1]
func.func @packed(%a: tensor<2x3xf32>, %b: tensor<f32>) -> (tensor<2x3xf32>, tensor<f32>) {
  %ra = ga.all_reduce <max> %a bucket 3 : tensor<2x3xf32>
  %rb = ga.all_reduce <max> %b bucket 3 : tensor<f32>
  return %ra, %rb : tensor<2x3xf32>, tensor<f32>
}

// -----

// shard.all_reduce over the whole grid: MPI_COMM_WORLD. A static grid must
// match the number of ranks (checked at run time); the grid is then unused
// and erased.
// CHECK-NOT:   shard.grid
// CHECK-LABEL: func.func @shard_static
// CHECK:         %[[COMM:.*]] = mpi.comm_world
// CHECK:         %[[SIZE:.*]] = mpi.comm_size(%[[COMM]]) : i32
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[SIZE]], %{{.*}} : i32
// CHECK:         cf.assert %[[OK]], "ga: shard.grid @dp has 4 devices, but the MPI job has a different number of ranks"
// CHECK:         mpi.allreduce(%{{.*}}, %{{.*}}, MPI_BOR, %[[COMM]]) : memref<4xi32>, memref<4xi32>
shard.grid @dp(shape = 4)
func.func @shard_static(%g: tensor<4xi32>) -> tensor<4xi32> {
  %r = shard.all_reduce %g on @dp grid_axes = [0] reduction = bitwise_or : tensor<4xi32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}
