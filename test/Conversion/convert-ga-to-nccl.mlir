// RUN: ga-opt %s --split-input-file --convert-ga-to-nccl | FileCheck %s

// The GPU engine: one in-place `ga.nccl_all_reduce` per collective, on the
// accumulator's buffer flattened, with NCCL's datatype (7 = ncclFloat32) and
// operation (4 = ncclAvg: no world size needed); synchronous (no stream yet:
// ga-gpu-single-stream orders it on the step's). ga-lower-library-ops makes
// it the runtime call (ga-lower-library-ops.mlir).

// CHECK-LABEL: func.func @in_place
// CHECK:         %[[ACC:.*]] = scf.for
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[ACC]] : tensor<4x3xf32> to memref<4x3xf32>
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[BUF]] {{\[}}[0, 1]] : memref<4x3xf32> into memref<12xf32>
// CHECK-NEXT:    ga.nccl_all_reduce {{ *}}%[[FLAT]] {datatype = 7 : i32, reduction = 4 : i32} : memref<12xf32>
// CHECK-NEXT:    bufferization.to_tensor %[[BUF]] restrict writable
// CHECK-NOT:     ga.all_reduce
// CHECK-NOT:     gaNcclAllReduce
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

// bf16 (what NCCL has and MPI has not: ncclBfloat16 = 9), sum (0).
// CHECK-LABEL: func.func @bf16
// CHECK:         ga.nccl_all_reduce {{ *}}%{{.*}} {datatype = 9 : i32, reduction = 0 : i32} : memref<4xbf16>
func.func @bf16(%g: tensor<4xbf16>) -> tensor<4xbf16> {
  %r = ga.all_reduce <sum> %g : tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

// A bucket of two gradients: one packed buffer, one op on it.
// CHECK-LABEL: func.func @bucket
// CHECK:         tensor.insert_slice
// CHECK:         %[[PACKED:.*]] = tensor.insert_slice
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[PACKED]] : tensor<7xf32> to memref<7xf32>
// CHECK-NEXT:    ga.nccl_all_reduce {{ *}}%[[BUF]] {datatype = 7 : i32, reduction = 0 : i32} : memref<7xf32>
// CHECK-NOT:     ga.nccl_all_reduce
func.func @bucket(%a: tensor<4xf32>, %b: tensor<3xf32>) -> (tensor<4xf32>, tensor<3xf32>) {
  %ra = ga.all_reduce <sum> %a bucket 0 : tensor<4xf32>
  %rb = ga.all_reduce <sum> %b bucket 0 : tensor<3xf32>
  return %ra, %rb : tensor<4xf32>, tensor<3xf32>
}

// -----

// A sharded step's collectives (rank 1 of 2): the reduce-scatter reduces the
// whole gradient's buffer in place (a copy here: the argument is not a
// private accumulator), this rank's part being the view of its rows
// (elements [6, 12) of 12); the rows are read back. The all-gather writes
// this rank's rows into a new buffer of the whole parameter and gathers in
// place into it.

// CHECK-LABEL: func.func @sharded
// CHECK-SAME:    (%[[G:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<2x3xf32>)
// CHECK:         %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[G]])
// CHECK:         %[[GBUF:.*]] = bufferization.to_buffer %[[COPY]] : tensor<4x3xf32> to memref<4x3xf32>
// CHECK:         %[[GFLAT:.*]] = memref.collapse_shape %[[GBUF]] {{\[}}[0, 1]] : memref<4x3xf32> into memref<12xf32>
// CHECK:         %[[MINE:.*]] = memref.subview %[[GFLAT]][6] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: 6>>
// CHECK:         ga.nccl_reduce_scatter {{ *}}%[[GFLAT]], %[[MINE]] {datatype = 7 : i32, reduction = 4 : i32, world = 2 : i64} : memref<12xf32>, memref<6xf32, strided<[1], offset: 6>>
// CHECK:         %[[RT:.*]] = bufferization.to_tensor %[[GBUF]] restrict writable
// CHECK:         %[[ROWS:.*]] = tensor.extract_slice %[[RT]][2, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
// CHECK:         %[[FULL:.*]] = bufferization.alloc_tensor() : tensor<4x3xf32>
// CHECK:         %[[PBUF:.*]] = bufferization.to_buffer %[[FULL]] : tensor<4x3xf32> to memref<4x3xf32>
// CHECK:         %[[PROWS:.*]] = memref.subview %[[PBUF]][2, 0] [2, 3] [1, 1]
// CHECK:         bufferization.materialize_in_destination %[[W]] in writable %[[PROWS]]
// CHECK:         %[[PFLAT:.*]] = memref.collapse_shape %[[PBUF]]
// CHECK:         %[[PMINE:.*]] = memref.subview %[[PFLAT]][6] [6] [1]
// CHECK:         ga.nccl_all_gather {{ *}}%[[PMINE]], %[[PFLAT]] {datatype = 7 : i32, world = 2 : i64} : memref<6xf32, strided<[1], offset: 6>>, memref<12xf32>
// CHECK:         %[[P:.*]] = bufferization.to_tensor %[[PBUF]] restrict writable
// CHECK:         return %[[ROWS]], %[[P]]
// CHECK-NOT:     ga.reduce_scatter
// CHECK-NOT:     ga.all_gather
func.func @sharded(%g: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %r = ga.reduce_scatter <mean> %g shard 1 of 2 : tensor<4x3xf32> -> tensor<2x3xf32>
  %p = ga.all_gather %w shard 1 of 2 : tensor<2x3xf32> -> tensor<4x3xf32>
  return %r, %p : tensor<2x3xf32>, tensor<4x3xf32>
}
