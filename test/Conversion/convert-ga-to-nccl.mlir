// RUN: ga-opt %s --split-input-file --convert-ga-to-nccl | FileCheck %s

// The GPU engine: one in-place call of the NCCL runtime per collective, on
// the device address of the accumulator (aligned base + offset), with NCCL's
// datatype (7 = ncclFloat32) and operation (4 = ncclAvg: no world size
// needed), and a null stream first (ga-gpu-single-stream passes the step's).
// A failure aborts with a message.

// CHECK-LABEL: func.func @in_place
// CHECK:         %[[ACC:.*]] = scf.for
// CHECK:         %[[BUF:.*]] = bufferization.to_buffer %[[ACC]] : tensor<4x3xf32> to memref<4x3xf32>
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[BUF]]
// CHECK:         %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[FLAT]]
// CHECK:         %{{.*}}, %[[OFF:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[FLAT]]
// CHECK:         %[[BYTES:.*]] = arith.muli %[[OFF]], %{{.*}} : index
// CHECK:         %[[ADDR:.*]] = arith.addi %[[BASE]], %[[BYTES]] : index
// CHECK:         %[[A64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK:         %[[PTR:.*]] = llvm.inttoptr %[[A64]] : i64 to !llvm.ptr
// CHECK-DAG:     %[[COUNT:.*]] = arith.constant 12 : i64
// CHECK-DAG:     %[[F32:.*]] = arith.constant 7 : i32
// CHECK-DAG:     %[[AVG:.*]] = arith.constant 4 : i32
// CHECK-DAG:     %[[STREAM:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[RC:.*]] = call @gaNcclAllReduce(%[[STREAM]], %[[PTR]], %[[COUNT]], %[[F32]], %[[AVG]])
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[RC]], %{{.*}} : i32
// CHECK:         cf.assert %[[OK]], "ga: gaNcclAllReduce failed
// CHECK:         bufferization.to_tensor %[[BUF]] restrict writable
// CHECK-NOT:     ga.all_reduce
// CHECK: func.func private @gaNcclAllReduce(!llvm.ptr, !llvm.ptr, i64, i32, i32) -> i32
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
// CHECK-DAG:     arith.constant 9 : i32
// CHECK-DAG:     arith.constant 0 : i32
// CHECK:         call @gaNcclAllReduce
func.func @bf16(%g: tensor<4xbf16>) -> tensor<4xbf16> {
  %r = ga.all_reduce <sum> %g : tensor<4xbf16>
  return %r : tensor<4xbf16>
}
