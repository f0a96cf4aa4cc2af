// RUN: ga-opt %s --split-input-file --convert-ga-to-host-collectives | FileCheck %s

// ZeRO-1's collectives (--ga-shard-optimizer) on the host runtime, rank 1
// of 3 on 4 rows of 8 (its rows: [1, 2)).
//
// The reduce-scatter works in place on the accumulator's buffer, like an
// all-reduce (f32 = 0, mean = 1, id 0, 4 rows); after the wait, this rank's
// rows are read back. The all-gather starts on a new buffer of the whole
// tensor from this rank's rows (written at element 8; the engine fills in
// the others; id 1); its wait moves down to the first reader (the return),
// past the update.

// CHECK-LABEL: func.func @zero1
// CHECK:         %[[LOOP:.*]] = scf.for
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[LOOP]] : tensor<4x8xf32> to memref<4x8xf32>
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[BUF]]
// CHECK:         ga.host_collective_start %[[FLAT]] {datatype = 0 : i32, id = 0 : i64, reduction = 1 : i32, rows = 4 : i64} : memref<32xf32>
// CHECK:         ga.host_collective_wait %[[FLAT]] {id = 0 : i64} : memref<32xf32>
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK:         %[[MINE:.*]] = tensor.extract_slice %[[R]][1, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
// CHECK:         %[[U:.*]] = linalg.add ins(%[[MINE]], %{{.*}} : tensor<1x8xf32>, tensor<1x8xf32>)
// CHECK:         %[[T:.*]] = bufferization.alloc_tensor() : tensor<4x8xf32>
// CHECK:         %[[ALL:.*]] = bufferization.to_buffer %[[T]] : tensor<4x8xf32> to memref<4x8xf32>
// CHECK:         %[[ALLFLAT:.*]] = memref.collapse_shape %[[ALL]]
// CHECK:         %[[IN:.*]] = bufferization.to_buffer %[[U]] read_only : tensor<1x8xf32> to memref<1x8xf32>
// CHECK:         ga.host_collective_start %[[ALLFLAT]] from %[[IN]] : memref<1x8xf32> {datatype = 0 : i32, id = 1 : i64, input_offset = 8 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
// CHECK:         linalg.mul
// CHECK:         ga.host_collective_wait %[[ALLFLAT]] {id = 1 : i64}
// CHECK:         %[[W:.*]] = bufferization.to_tensor %[[ALL]] restrict writable
// CHECK:         return %[[W]], %[[U]]
// CHECK-NOT:     ga.reduce_scatter
// CHECK-NOT:     ga.all_gather
func.func @zero1(%x: tensor<8x4x8xf32>, %p: tensor<1x8xf32>, %q: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<1x8xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %z) -> (tensor<4x8xf32>) {
    %row = tensor.extract_slice %x[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<8x4x8xf32> to tensor<4x8xf32>
    %n = linalg.add ins(%row, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%a : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %n : tensor<4x8xf32>
  }
  %g = ga.reduce_scatter <mean> %acc shard 1 of 3 : tensor<4x8xf32> -> tensor<1x8xf32>
  %e1 = tensor.empty() : tensor<1x8xf32>
  %u = linalg.add ins(%g, %p : tensor<1x8xf32>, tensor<1x8xf32>) outs(%e1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %w = ga.all_gather %u shard 1 of 3 : tensor<1x8xf32> -> tensor<4x8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %sq = linalg.mul ins(%q, %q : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  return %w, %u, %sq : tensor<4x8xf32>, tensor<1x8xf32>, tensor<4xf32>
}

// -----

// A reduce-scatter of a reshaped accumulator (a bias's 1x8 gradient read as
// 8 rows): the reshape is a view of the accumulator's buffer, so the
// collective still works in place on it (no copy).

// CHECK-LABEL: func.func @reshaped
// CHECK:         %[[LOOP:.*]] = scf.for
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[LOOP]]
// CHECK-NOT:     bufferization.alloc_tensor
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[C]] : tensor<8xf32> to memref<8xf32>
// CHECK:         ga.host_collective_start %[[BUF]] {{.*}}rows = 8 : i64
// CHECK:         ga.host_collective_wait %[[BUF]]
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK:         tensor.extract_slice %[[R]][2] [3] [1] : tensor<8xf32> to tensor<3xf32>
func.func @reshaped(%x: tensor<8x1x8xf32>) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8xf32>) -> tensor<1x8xf32>
  %acc = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %z) -> (tensor<1x8xf32>) {
    %row = tensor.extract_slice %x[%i, 0, 0] [1, 1, 8] [1, 1, 1] : tensor<8x1x8xf32> to tensor<1x8xf32>
    %n = linalg.add ins(%row, %a : tensor<1x8xf32>, tensor<1x8xf32>) outs(%a : tensor<1x8xf32>) -> tensor<1x8xf32>
    scf.yield %n : tensor<1x8xf32>
  }
  %flat = tensor.collapse_shape %acc [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  %g = ga.reduce_scatter <sum> %flat shard 1 of 3 : tensor<8xf32> -> tensor<3xf32>
  return %g : tensor<3xf32>
}
