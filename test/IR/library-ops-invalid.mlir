// RUN: ga-opt %s -split-input-file -verify-diagnostics

func.func @ranks(%x: memref<8x16xf32>, %w: memref<2x16x4xf32>, %y: memref<8x4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op needs three matrices (2-d) or three batches of matrices (3-d)}}
  ga.blas_matmul %x, %w, %y : memref<8x16xf32>, memref<2x16x4xf32>, memref<8x4xf32>
  return
}

// -----

func.func @types(%x: memref<8x16xf32>, %w: memref<16x4xf16>, %y: memref<8x4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op needs lhs and rhs of one element type, not 'f32' and 'f16'}}
  ga.blas_matmul %x, %w, %y : memref<8x16xf32>, memref<16x4xf16>, memref<8x4xf32>
  return
}

// -----

func.func @shapes(%x: memref<8x16xf32>, %w: memref<16x4xf32>, %y: memref<8x4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op has shapes that do not make a product}}
  ga.blas_matmul %x, %w, %y {transpose_rhs} : memref<8x16xf32>, memref<16x4xf32>, memref<8x4xf32>
  return
}

// -----

func.func @batches(%x: memref<2x8x16xf32>, %w: memref<3x16x4xf32>, %y: memref<2x8x4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op has batches of different sizes}}
  ga.blas_matmul %x, %w, %y : memref<2x8x16xf32>, memref<3x16x4xf32>, memref<2x8x4xf32>
  return
}

// -----

func.func @rows(%x: memref<8x16xf32, strided<[32, 2]>>, %w: memref<16x4xf32>, %y: memref<8x4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op needs rows with unit stride}}
  ga.blas_matmul %x, %w, %y : memref<8x16xf32, strided<[32, 2]>>, memref<16x4xf32>, memref<8x4xf32>
  return
}

// -----

func.func @bias(%x: memref<8x16xf32>, %w: memref<16x4xf32>, %y: memref<8x4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op takes a bias only as the epilogue of an unbatched product that overwrites its output}}
  ga.blas_matmul %x, %w, %y bias(%b : memref<4xf32>) {accumulate} : memref<8x16xf32>, memref<16x4xf32>, memref<8x4xf32>
  return
}

// -----

func.func @bias_size(%x: memref<8x16xf32>, %w: memref<16x4xf32>, %y: memref<8x4xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'ga.blas_matmul' op needs a bias of the output's columns}}
  ga.blas_matmul %x, %w, %y bias(%b : memref<8xf32>) : memref<8x16xf32>, memref<16x4xf32>, memref<8x4xf32>
  return
}

// -----

func.func @streams(%x: memref<8x16xf32>, %w: memref<16x4xf32>, %y: memref<8x4xf32>) {
  %t0 = gpu.wait async
  %t1 = gpu.wait async
  // expected-error @+1 {{'ga.blas_matmul' op is ordered on one stream: at most one async dependency, not 2}}
  ga.blas_matmul [%t0, %t1] %x, %w, %y : memref<8x16xf32>, memref<16x4xf32>, memref<8x4xf32>
  return
}

// -----

func.func @strided_buffer(%b: memref<4x2xf32>) {
  %v = memref.subview %b[0, 0] [4, 1] [1, 1] : memref<4x2xf32> to memref<4xf32, strided<[2]>>
  // expected-error @+1 {{'ga.nccl_all_reduce' op needs a contiguous buffer (NCCL reduces count consecutive elements), not 'memref<4xf32, strided<[2]>>'}}
  ga.nccl_all_reduce %v {datatype = 7 : i32, reduction = 0 : i32} : memref<4xf32, strided<[2]>>
  return
}

// -----

func.func @two_streams(%b: memref<4xf32>) {
  %t0 = gpu.wait async
  %t1 = gpu.wait async
  // expected-error @+1 {{'ga.nccl_all_reduce' op is ordered on one stream: at most one async dependency, not 2}}
  ga.nccl_all_reduce [%t0, %t1] %b {datatype = 7 : i32, reduction = 0 : i32} : memref<4xf32>
  return
}

// -----

func.func @codes(%b: memref<4xf32>) {
  // expected-error @+1 {{'ga.nccl_all_reduce' op needs NCCL's codes of a datatype and a reduction (non-negative), not -1 and 0}}
  ga.nccl_all_reduce %b {datatype = -1 : i32, reduction = 0 : i32} : memref<4xf32>
  return
}

// -----

func.func @rank(%b: memref<2x2xf32>) {
  // expected-error @+1 {{'ga.nccl_all_reduce' op operand #0 must be 1D memref of any type values}}
  ga.nccl_all_reduce %b {datatype = 7 : i32, reduction = 0 : i32} : memref<2x2xf32>
  return
}

// -----

func.func @scatter_sizes(%b: memref<8xf32>, %p: memref<3xf32>) {
  // expected-error @+1 {{'ga.nccl_reduce_scatter' op needs the whole buffer 2 (the world) times the size of one rank's part, not 8 and 3}}
  ga.nccl_reduce_scatter %b, %p {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<8xf32>, memref<3xf32>
  return
}

// -----

func.func @gather_sizes(%p: memref<4xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'ga.nccl_all_gather' op needs the whole buffer 3 (the world) times the size of one rank's part, not 8 and 4}}
  ga.nccl_all_gather %p, %b {datatype = 7 : i32, world = 3 : i64} : memref<4xf32>, memref<8xf32>
  return
}

// -----

func.func @gather_types(%p: memref<4xf16>, %b: memref<8xf32>) {
  // expected-error @+1 {{'ga.nccl_all_gather' op needs buffers of one element type, not 'f16' and 'f32'}}
  ga.nccl_all_gather %p, %b {datatype = 6 : i32, world = 2 : i64} : memref<4xf16>, memref<8xf32>
  return
}

// -----

func.func @scatter_strided(%b: memref<8xf32>, %c: memref<4x2xf32>) {
  %v = memref.subview %c[0, 0] [4, 1] [1, 1] : memref<4x2xf32> to memref<4xf32, strided<[2]>>
  // expected-error @+1 {{'ga.nccl_reduce_scatter' op needs contiguous buffers (NCCL reads and writes count consecutive elements), not 'memref<4xf32, strided<[2]>>'}}
  ga.nccl_reduce_scatter %b, %v {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<8xf32>, memref<4xf32, strided<[2]>>
  return
}

// -----

func.func @scatter_codes(%b: memref<8xf32>, %p: memref<4xf32>) {
  // expected-error @+1 {{'ga.nccl_reduce_scatter' op needs NCCL's codes (non-negative), not 7, -1}}
  ga.nccl_reduce_scatter %b, %p {datatype = 7 : i32, reduction = -1 : i32, world = 2 : i64} : memref<8xf32>, memref<4xf32>
  return
}

// -----

func.func @gather_world(%p: memref<4xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'ga.nccl_all_gather' op attribute 'world' failed to satisfy constraint}}
  ga.nccl_all_gather %p, %b {datatype = 7 : i32, world = 0 : i64} : memref<4xf32>, memref<8xf32>
  return
}

// -----

func.func @scatter_streams(%b: memref<8xf32>, %p: memref<4xf32>) {
  %t0 = gpu.wait async
  %t1 = gpu.wait async
  // expected-error @+1 {{'ga.nccl_reduce_scatter' op is ordered on one stream: at most one async dependency, not 2}}
  ga.nccl_reduce_scatter [%t0, %t1] %b, %p {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<8xf32>, memref<4xf32>
  return
}

// -----

func.func @capture_two_streams(%t0: !gpu.async.token, %t1: !gpu.async.token) {
  // expected-error @+1 {{'ga.graph_capture' op is ordered on one stream: one async dependency, not 2}}
  %g, %e = ga.graph_capture async [%t0, %t1] {
    ga.graph_yield %t0
  }
  return
}

// -----

func.func @capture_without_end(%t0: !gpu.async.token) {
  // expected-error @+1 {{'ga.graph_yield' op ends a capture with the token of its last stream work, and has none}}
  %g, %e = ga.graph_capture async [%t0] {
  }
  return
}

// -----

func.func @launch_unordered(%g: !llvm.ptr) {
  // expected-error @+1 {{'ga.graph_launch' op is ordered on one stream: one async dependency, not 0}}
  %t = ga.graph_launch async %g
  return
}

// -----

func.func @capture_synchronous(%t0: !gpu.async.token) {
  // expected-error @+1 {{'ga.graph_capture' op returns the stream after the capture: it is `async`}}
  %g = ga.graph_capture [%t0] {
    ga.graph_yield %t0
  }
  return
}

// -----

func.func @wait_for_nothing(%s: !gpu.async.token) {
  // expected-error @+1 {{'ga.stream_wait' op makes the stream of its first async dependency wait for the streams of the others: at least two, not 1}}
  %t = ga.stream_wait async [%s]
  return
}

// -----

func.func @wait_for_itself(%s: !gpu.async.token, %c: !gpu.async.token) {
  // expected-error @+1 {{'ga.stream_wait' op makes a stream wait for itself}}
  %t = ga.stream_wait async [%s, %c, %s]
  return
}

// -----

func.func @use_after_release(%s: !gpu.async.token) {
  // expected-error @+1 {{'ga.stream_release' op releases a stream that a later op uses}}
  ga.stream_release %s
  // expected-note @+1 {{the later use}}
  ga.stream_synchronize %s
  return
}
