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

// -----

// Uneven rows (5 on 2 ranks: rank 0 holds rows [0, 2), rank 1 rows [2, 5),
// the host collectives' layout): NCCL's equal parts of ceil(5 / 2) = 3 rows
// in a padded buffer of 6, rank q's rows at the start of part q (rows 0-1
// and 3-5), the padding row 2 zero. The reduce-scatter copies the gradient
// in part by part and reads back rows 0-1 (rank 0's, never row 2); the
// all-gather writes rank 0's rows and zeroes its padding row, gathers, and
// copies rows 0-1 and 3-5 out into the whole parameter: no padding row is
// read by anything but NCCL.

// CHECK-LABEL: func.func @uneven
// CHECK-SAME:    (%[[G:.*]]: tensor<5x4xf32>, %[[W:.*]]: tensor<2x4xf32>)
// CHECK:         %[[PAD:.*]] = bufferization.alloc_tensor() : tensor<6x4xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ROW2:.*]] = tensor.extract_slice %[[PAD]][2, 0] [1, 4] [1, 1]
// CHECK-NEXT:    %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[ROW2]] : tensor<1x4xf32>)
// CHECK-NEXT:    %[[P0:.*]] = tensor.insert_slice %[[FILL]] into %[[PAD]][2, 0] [1, 4] [1, 1]
// CHECK-NEXT:    %[[G0:.*]] = tensor.extract_slice %[[G]][0, 0] [2, 4] [1, 1] : tensor<5x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:    %[[P1:.*]] = tensor.insert_slice %[[G0]] into %[[P0]][0, 0] [2, 4] [1, 1]
// CHECK-NEXT:    %[[G1:.*]] = tensor.extract_slice %[[G]][2, 0] [3, 4] [1, 1] : tensor<5x4xf32> to tensor<3x4xf32>
// CHECK-NEXT:    %[[P2:.*]] = tensor.insert_slice %[[G1]] into %[[P1]][3, 0] [3, 4] [1, 1]
// CHECK-NEXT:    %[[BUF:.*]] = bufferization.to_buffer %[[P2]] : tensor<6x4xf32> to memref<6x4xf32>
// CHECK-NEXT:    %[[FLAT:.*]] = memref.collapse_shape %[[BUF]] {{\[}}[0, 1]] : memref<6x4xf32> into memref<24xf32>
// CHECK-NEXT:    %[[MINE:.*]] = memref.subview %[[FLAT]][0] [12] [1] : memref<24xf32> to memref<12xf32, strided<[1]>>
// CHECK-NEXT:    ga.nccl_reduce_scatter {{ *}}%[[FLAT]], %[[MINE]] {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64}
// CHECK-NEXT:    %[[RT:.*]] = bufferization.to_tensor %[[BUF]] restrict writable : memref<6x4xf32> to tensor<6x4xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = tensor.extract_slice %[[RT]][0, 0] [2, 4] [1, 1] : tensor<6x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:    %[[GPAD:.*]] = bufferization.alloc_tensor() : tensor<6x4xf32>
// CHECK-NEXT:    %[[ZERO2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[GROW2:.*]] = tensor.extract_slice %[[GPAD]][2, 0] [1, 4] [1, 1]
// CHECK-NEXT:    %[[GFILL:.*]] = linalg.fill ins(%[[ZERO2]] : f32) outs(%[[GROW2]] : tensor<1x4xf32>)
// CHECK-NEXT:    %[[Q0:.*]] = tensor.insert_slice %[[GFILL]] into %[[GPAD]][2, 0] [1, 4] [1, 1]
// CHECK-NEXT:    %[[Q1:.*]] = tensor.insert_slice %[[W]] into %[[Q0]][0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<6x4xf32>
// CHECK-NEXT:    %[[GBUF:.*]] = bufferization.to_buffer %[[Q1]] : tensor<6x4xf32> to memref<6x4xf32>
// CHECK-NEXT:    %[[GFLAT:.*]] = memref.collapse_shape %[[GBUF]]
// CHECK-NEXT:    %[[GMINE:.*]] = memref.subview %[[GFLAT]][0] [12] [1]
// CHECK-NEXT:    ga.nccl_all_gather {{ *}}%[[GMINE]], %[[GFLAT]] {datatype = 7 : i32, world = 2 : i64}
// CHECK-NEXT:    %[[GT:.*]] = bufferization.to_tensor %[[GBUF]] restrict writable : memref<6x4xf32> to tensor<6x4xf32>
// CHECK-NEXT:    %[[WHOLE:.*]] = bufferization.alloc_tensor() : tensor<5x4xf32>
// CHECK-NEXT:    %[[R0:.*]] = tensor.extract_slice %[[GT]][0, 0] [2, 4] [1, 1] : tensor<6x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:    %[[W0:.*]] = tensor.insert_slice %[[R0]] into %[[WHOLE]][0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<5x4xf32>
// CHECK-NEXT:    %[[R1:.*]] = tensor.extract_slice %[[GT]][3, 0] [3, 4] [1, 1] : tensor<6x4xf32> to tensor<3x4xf32>
// CHECK-NEXT:    %[[W1:.*]] = tensor.insert_slice %[[R1]] into %[[W0]][2, 0] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<5x4xf32>
// CHECK-NEXT:    return %[[ROWS]], %[[W1]]
func.func @uneven(%g: tensor<5x4xf32>, %w: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<5x4xf32>) {
  %r = ga.reduce_scatter <sum> %g shard 0 of 2 : tensor<5x4xf32> -> tensor<2x4xf32>
  %p = ga.all_gather %w shard 0 of 2 : tensor<2x4xf32> -> tensor<5x4xf32>
  return %r, %p : tensor<2x4xf32>, tensor<5x4xf32>
}

// -----

// A rank without rows (3 rows on 4 ranks: rank 0 holds none, ranks 1-3 one
// each): its part (element 0 of 4) is all padding, zeroed; it sends nothing
// but the zero row, reads back no rows, and gathers rows 1-3 of the buffer.

// CHECK-LABEL: func.func @rank_without_rows
// CHECK:         %[[PAD:.*]] = bufferization.alloc_tensor() : tensor<4xf32>
// CHECK:         linalg.fill
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[0] [1] [1]
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[1] [1] [1]
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[2] [1] [1]
// CHECK:         tensor.insert_slice %{{.*}} into %{{.*}}[3] [1] [1]
// CHECK:         ga.nccl_reduce_scatter {{.*}} {datatype = 7 : i32, reduction = 4 : i32, world = 4 : i64} : memref<4xf32>, memref<1xf32, strided<[1]>>
// CHECK:         %[[NONE:.*]] = tensor.extract_slice %{{.*}}[0] [0] [1] : tensor<4xf32> to tensor<0xf32>
// CHECK:         bufferization.alloc_tensor() : tensor<4xf32>
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    tensor.extract_slice
// CHECK-NEXT:    linalg.fill
// CHECK-NEXT:    tensor.insert_slice %{{.*}} into %{{.*}}[0] [1] [1]
// CHECK-NEXT:    bufferization.to_buffer
// CHECK-NEXT:    memref.subview
// CHECK-NEXT:    ga.nccl_all_gather {{.*}} {datatype = 7 : i32, world = 4 : i64} : memref<1xf32, strided<[1]>>, memref<4xf32>
// CHECK:         %[[GT:.*]] = bufferization.to_tensor
// CHECK:         tensor.extract_slice %[[GT]][1] [1] [1]
// CHECK:         tensor.extract_slice %[[GT]][2] [1] [1]
// CHECK:         tensor.extract_slice %[[GT]][3] [1] [1]
// CHECK:         return %[[NONE]]
func.func @rank_without_rows(%g: tensor<3xf32>, %w: tensor<0xf32>) -> (tensor<0xf32>, tensor<3xf32>) {
  %r = ga.reduce_scatter <mean> %g shard 0 of 4 : tensor<3xf32> -> tensor<0xf32>
  %p = ga.all_gather %w shard 0 of 4 : tensor<0xf32> -> tensor<3xf32>
  return %r, %p : tensor<0xf32>, tensor<3xf32>
}
