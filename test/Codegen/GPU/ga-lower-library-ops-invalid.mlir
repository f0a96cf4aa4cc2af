// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-lower-library-ops

// A function of the module that has the name of the runtime function, with
// another type: the calls would not match it.
// expected-error @+1 {{'func.func' op has the name of the cuBLASLt runtime function with another type}}
func.func private @gaCublasLtMatmul(i32)
func.func @step(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  ga.blas_matmul %a, %b, %c : memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>
  return
}

// -----

// The same for the strided-batched entry point.
// expected-error @+1 {{'func.func' op has the name of the cuBLASLt runtime function with another type}}
func.func private @gaCublasLtMatmulStridedBatched(i32, i32, i64)
func.func @step(%a: memref<2x4x8xf32>, %b: memref<2x8x4xf32>, %c: memref<2x4x4xf32>) {
  ga.blas_matmul %a, %b, %c : memref<2x4x8xf32>, memref<2x8x4xf32>, memref<2x4x4xf32>
  return
}

// -----

// One product on the step's stream, one with none: one declaration cannot
// take both.
func.func @mixed(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  %t0 = gpu.wait async
  // expected-note @+1 {{the other library op}}
  %t1 = ga.blas_matmul async [%t0] %a, %b, %c : memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>
  gpu.wait [%t1]
  // expected-error @+1 {{'ga.blas_matmul' op takes a '!llvm.ptr' stream where another library op of the module takes a '!gpu.async.token' (one declaration of gaCublasLtMatmul)}}
  ga.blas_matmul %a, %b, %c : memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>
  return
}

// -----

// A token with nothing to order it after: no stream to enqueue the call on.
func.func @unordered(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op returns a token but is ordered after none: the call of gaCublasLtMatmul has no stream to enqueue on}}
  %t = ga.blas_matmul async %a, %b, %c : memref<4x8xf32>, memref<8x4xf32>, memref<4x4xf32>
  gpu.wait [%t]
  return
}

// -----

// The same for the NCCL entry point.
// expected-error @+1 {{'func.func' op has the name of the NCCL runtime function with another type}}
func.func private @gaNcclAllReduce(!llvm.ptr, !llvm.ptr, i64, i32, i32)
func.func @step(%b: memref<8xf32>) {
  ga.nccl_all_reduce %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
  return
}

// -----

// An all-reduce with a token and nothing to order it after.
func.func @unordered_all_reduce(%b: memref<8xf32>) {
  // expected-error @+1 {{'ga.nccl_all_reduce' op returns a token but is ordered after none: the call of gaNcclAllReduce has no stream to enqueue on}}
  %t = ga.nccl_all_reduce async %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
  gpu.wait [%t]
  return
}

// -----

// One all-reduce on the step's stream, one with none.
func.func @mixed_all_reduces(%b: memref<8xf32>) {
  %t0 = gpu.wait async
  // expected-note @+1 {{the other library op}}
  %t1 = ga.nccl_all_reduce async [%t0] %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
  gpu.wait [%t1]
  // expected-error @+1 {{'ga.nccl_all_reduce' op takes a '!llvm.ptr' stream where another library op of the module takes a '!gpu.async.token' (one declaration of gaNcclAllReduce)}}
  ga.nccl_all_reduce %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
  return
}

// -----

// A function of the module named like a CUDA graph entry point, of another
// type.
// expected-error @+1 {{'func.func' op has the name of a CUDA graph runtime function with another type}}
func.func private @mgpuGraphDestroy(i64)
func.func @graph(%s: !gpu.async.token, %g: !llvm.ptr) {
  ga.graph_destroy %g : !llvm.ptr
  return
}

// -----

// A reduce-scatter with a token and nothing to order it after.
func.func @unordered_scatter(%b: memref<8xf32>, %p: memref<4xf32>) {
  // expected-error @+1 {{'ga.nccl_reduce_scatter' op returns a token but is ordered after none: the call of gaNcclReduceScatter has no stream to enqueue on}}
  %t = ga.nccl_reduce_scatter async %b, %p {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<8xf32>, memref<4xf32>
  gpu.wait [%t]
  return
}

// -----

// expected-error @+1 {{'func.func' op has the name of the NCCL runtime function with another type}}
func.func private @gaNcclAllGather(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32) -> i32
func.func @gather(%p: memref<4xf32>, %b: memref<8xf32>) {
  ga.nccl_all_gather %p, %b {datatype = 7 : i32, world = 2 : i64} : memref<4xf32>, memref<8xf32>
  return
}

// -----

// A function of the module named like a stream runtime function, of another
// type.
// expected-error @+1 {{'func.func' op has the name of a GPU runtime function with another type; expected '() -> !llvm.ptr'}}
func.func private @mgpuEventCreate() -> i64
func.func @fork(%s: !gpu.async.token, %c: !gpu.async.token) {
  %f = ga.stream_wait async [%c, %s]
  ga.stream_synchronize %f
  return
}

// -----

// expected-error @+1 {{'func.func' op has the name of a GPU runtime function with another type; expected '(!gpu.async.token) -> ()'}}
func.func private @mgpuStreamSynchronize(i32)
func.func @sync(%s: !gpu.async.token) {
  ga.stream_synchronize %s
  return
}
