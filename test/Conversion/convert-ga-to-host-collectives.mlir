// RUN: ga-opt %s --split-input-file --convert-ga-to-host-collectives | FileCheck %s

// The engine of the host program (torch.distributed): the start call stays
// right after the loop, in place on the accumulator's buffer (f32 = 0,
// sum = 0, collective 0); the wait and the read-back move down to the first
// op that reads the result, past the ops that do not (the norm of the other
// accumulator); the views of the bucket move down with them.

// CHECK-LABEL: func.func @start_and_wait
// CHECK:         %[[LOOP:.*]]:2 = scf.for
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[LOOP]]#0 : tensor<12xf32> to memref<12xf32>
// CHECK:         ga.host_collective_start %[[BUF]] {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32} : memref<12xf32>
// CHECK:         %[[OTHER:.*]] = linalg.mul ins(%[[LOOP]]#1, %[[LOOP]]#1
// CHECK:         ga.host_collective_wait %[[BUF]] {id = 0 : i64} : memref<12xf32>
// CHECK:         %[[R:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK:         %[[VIEW:.*]] = tensor.extract_slice %[[R]][0] [4] [1]
// CHECK:         linalg.add ins(%[[VIEW]], %[[OTHER]]
// CHECK-NOT:     ga.all_reduce
func.func @start_and_wait(%x: tensor<8x12xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12xf32>) -> tensor<12xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %acc:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z, %b = %z4) -> (tensor<12xf32>, tensor<4xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 12] [1, 1] : tensor<8x12xf32> to tensor<12xf32>
    %n = linalg.add ins(%row, %a : tensor<12xf32>, tensor<12xf32>) outs(%a : tensor<12xf32>) -> tensor<12xf32>
    %q = tensor.extract_slice %row[0] [4] [1] : tensor<12xf32> to tensor<4xf32>
    %m = linalg.add ins(%q, %b : tensor<4xf32>, tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n, %m : tensor<12xf32>, tensor<4xf32>
  }
  %r = ga.all_reduce <sum> %acc#0 bucket 0 : tensor<12xf32>
  %v = tensor.extract_slice %r[0] [4] [1] : tensor<12xf32> to tensor<4xf32>
  %e5 = tensor.empty() : tensor<4xf32>
  %sq = linalg.mul ins(%acc#1, %acc#1 : tensor<4xf32>, tensor<4xf32>) outs(%e5 : tensor<4xf32>) -> tensor<4xf32>
  %o = linalg.add ins(%v, %sq : tensor<4xf32>, tensor<4xf32>) outs(%e5 : tensor<4xf32>) -> tensor<4xf32>
  return %o : tensor<4xf32>
}

// -----

// Element types and reductions: i64 = 7, max = 2; bf16 = 3, min = 3; mean
// = 1 (the runtime divides); ids number the collectives in order. A value
// that is not a private accumulator is copied first. The three collectives
// are all launched before the first wait (the return reads them).
// CHECK-LABEL: func.func @kinds
// CHECK:         bufferization.alloc_tensor() copy
// CHECK:         ga.host_collective_start %{{.*}} {datatype = 7 : i32, id = 0 : i64, reduction = 2 : i32} : memref<4xi64>
// CHECK:         ga.host_collective_start %{{.*}} {datatype = 3 : i32, id = 1 : i64, reduction = 3 : i32} : memref<2xbf16>
// CHECK:         ga.host_collective_start %{{.*}} {datatype = 0 : i32, id = 2 : i64, reduction = 1 : i32} : memref<1xf32>
// CHECK:         ga.host_collective_wait %{{.*}} {id = 0 : i64}
// CHECK:         ga.host_collective_wait %{{.*}} {id = 1 : i64}
// CHECK:         ga.host_collective_wait %{{.*}} {id = 2 : i64}
// CHECK:         return
func.func @kinds(%a: tensor<4xi64>, %b: tensor<2xbf16>, %c: tensor<f32>) -> (tensor<4xi64>, tensor<2xbf16>, tensor<f32>) {
  %r = ga.all_reduce <max> %a : tensor<4xi64>
  %s = ga.all_reduce <min> %b : tensor<2xbf16>
  %t = ga.all_reduce <mean> %c : tensor<f32>
  return %r, %s, %t : tensor<4xi64>, tensor<2xbf16>, tensor<f32>
}
