// RUN: ga-opt %s | ga-opt | FileCheck %s
// RUN: ga-opt %s | FileCheck %s --check-prefix=SPACES --strict-whitespace
// RUN: ga-opt %s | FileCheck %s --check-prefix=NO-DOUBLE --strict-whitespace

// Every form prints one space between its parts: none of the ops prints two
// after its name (the synchronous form, whose token directive prints
// nothing) or after its dependencies.
// NO-DOUBLE-NOT: {{ga\.[a-z_]+  }}
// NO-DOUBLE-NOT: {{\]  }}
// SPACES: {{^}}    ga.blas_matmul %{{[A-Za-z0-9_]+}}, %
// SPACES: {{^}}    %{{.*}} = ga.blas_matmul async [%{{[A-Za-z0-9_]+}}] %
// SPACES: {{^}}    ga.blas_matmul [%{{[A-Za-z0-9_]+}}] %
// SPACES: {{^}}    ga.nccl_all_reduce %{{[A-Za-z0-9_]+}} {datatype
// SPACES: {{^}}    %{{.*}} = ga.nccl_all_reduce async [%{{[A-Za-z0-9_]+}}] %
// SPACES: {{^}}      %{{.*}} = ga.graph_capture async [%{{[A-Za-z0-9_]+}}] {
// SPACES: {{^}}      %{{.*}} = ga.graph_launch async [%{{[A-Za-z0-9_]+}}] %

// The product's forms round-trip: synchronous, async after a token, a
// batch, a bias epilogue.
// CHECK-LABEL: func.func @forms(
// CHECK:         ga.blas_matmul %{{.*}}, %{{.*}}, %{{.*}} {accumulate, transpose_rhs} : memref<8x16xf32>, memref<4x16xf32>, memref<8x4xf32>
// CHECK:         %[[T1:.*]] = ga.blas_matmul async [%{{.*}}] %{{.*}}, %{{.*}}, %{{.*}} : memref<8x16xbf16>, memref<16x4xbf16>, memref<8x4xf32>
// CHECK:         ga.blas_matmul [%[[T1]]] %{{.*}}, %{{.*}}, %{{.*}} {transpose_lhs} : memref<2x6x8xf32>, memref<2x6x8xf32>, memref<2x8x8xf32>
// CHECK:         ga.blas_matmul %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}} : memref<4xf32>) : memref<8x16xf32>, memref<16x4xf32>, memref<8x4xf32>
func.func @forms(%x: memref<8x16xf32>, %w: memref<4x16xf32>, %y: memref<8x4xf32>,
                 %a: memref<8x16xbf16>, %b: memref<16x4xbf16>,
                 %p: memref<2x6x8xf32>, %q: memref<2x8x8xf32>,
                 %v: memref<16x4xf32>, %bias: memref<4xf32>) {
  ga.blas_matmul %x, %w, %y {accumulate, transpose_rhs} : memref<8x16xf32>, memref<4x16xf32>, memref<8x4xf32>
  %t0 = gpu.wait async
  %t1 = ga.blas_matmul async [%t0] %a, %b, %y : memref<8x16xbf16>, memref<16x4xbf16>, memref<8x4xf32>
  ga.blas_matmul [%t1] %p, %p, %q {transpose_lhs} : memref<2x6x8xf32>, memref<2x6x8xf32>, memref<2x8x8xf32>
  ga.blas_matmul %x, %v, %y bias(%bias : memref<4xf32>) : memref<8x16xf32>, memref<16x4xf32>, memref<8x4xf32>
  return
}

// The all-reduce's forms round-trip: synchronous on a view, async after a
// token.
// CHECK-LABEL: func.func @all_reduces(
// CHECK:         ga.nccl_all_reduce %{{.*}} {datatype = 7 : i32, reduction = 4 : i32} : memref<4xf32, strided<[1], offset: 4>>
// CHECK:         %{{.*}} = ga.nccl_all_reduce async [%{{.*}}] %{{.*}} {datatype = 9 : i32, reduction = 0 : i32} : memref<?xbf16>
func.func @all_reduces(%b: memref<8xf32>, %h: memref<?xbf16>) {
  %v = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  ga.nccl_all_reduce %v {datatype = 7 : i32, reduction = 4 : i32} : memref<4xf32, strided<[1], offset: 4>>
  %t0 = gpu.wait async
  %t1 = ga.nccl_all_reduce async [%t0] %h {datatype = 9 : i32, reduction = 0 : i32} : memref<?xbf16>
  gpu.wait [%t1]
  return
}

// The sharded collectives round-trip: in place on this rank's part of the
// whole buffer, synchronous and async.
// CHECK-LABEL: func.func @sharded(
// CHECK:         ga.nccl_reduce_scatter %{{.*}}, %{{.*}} {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<8xf32>, memref<4xf32, strided<[1], offset: 4>>
// CHECK:         %{{.*}} = ga.nccl_all_gather async [%{{.*}}] %{{.*}}, %{{.*}} {datatype = 7 : i32, world = 2 : i64} : memref<4xf32, strided<[1], offset: 4>>, memref<8xf32>
// CHECK:         ga.nccl_reduce_scatter async [%{{.*}}] %{{.*}}, %{{.*}} {datatype = 9 : i32, reduction = 4 : i32, world = 4 : i64} : memref<?xbf16>, memref<?xbf16>
func.func @sharded(%b: memref<8xf32>, %h: memref<?xbf16>, %p: memref<?xbf16>) {
  %v = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  ga.nccl_reduce_scatter %b, %v {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64} : memref<8xf32>, memref<4xf32, strided<[1], offset: 4>>
  %t0 = gpu.wait async
  %t1 = ga.nccl_all_gather async [%t0] %v, %b {datatype = 7 : i32, world = 2 : i64} : memref<4xf32, strided<[1], offset: 4>>, memref<8xf32>
  %t2 = ga.nccl_reduce_scatter async [%t1] %h, %p {datatype = 9 : i32, reduction = 4 : i32, world = 4 : i64} : memref<?xbf16>, memref<?xbf16>
  gpu.wait [%t2]
  return
}

// The CUDA graph ops round-trip: a capture with its body, a launch, a
// release.
// CHECK-LABEL: func.func @graph(
// CHECK:         %[[G:.*]], %[[E:.*]] = ga.graph_capture async [%{{.*}}] {
// CHECK-NEXT:      %[[A:.*]] = gpu.launch_func async
// CHECK-NEXT:      ga.graph_yield %[[A]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = ga.graph_launch async [%[[E]]] %[[G]]
// CHECK-NEXT:    ga.graph_destroy %[[G]] : !llvm.ptr
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @acc(%m: memref<4xf32>) kernel { gpu.return }
  }
  func.func @graph(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %s = gpu.wait async
    %g, %e = ga.graph_capture async [%s] {
      %a = gpu.launch_func async [%s] @k::@acc blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
      ga.graph_yield %a
    }
    %r = ga.graph_launch async [%e] %g
    ga.graph_destroy %g : !llvm.ptr
    gpu.wait [%r]
    return
  }
}

// The stream ops: a fork (a new stream made to wait for the step's), a join
// (the step's stream made to wait for the new one's work), the host's wait
// and the releases.
// CHECK-LABEL: func.func @streams(
// CHECK:         %[[S:.*]] = gpu.wait async
// CHECK-NEXT:    %[[C:.*]] = gpu.wait async
// CHECK-NEXT:    %[[F:.*]] = ga.stream_wait async [%[[C]], %[[S]]]
// CHECK-NEXT:    %[[R:.*]] = ga.nccl_all_reduce async [%[[F]]] %{{.*}}
// CHECK-NEXT:    %[[J:.*]] = ga.stream_wait async [%[[S]], %[[R]]]
// CHECK-NEXT:    ga.stream_release %[[C]]
// CHECK-NEXT:    ga.stream_synchronize %[[J]]
// CHECK-NEXT:    ga.stream_release %[[J]]
// SPACES: {{^}}    %{{.*}} = ga.stream_wait async [%{{[A-Za-z0-9_]+}}, %{{[A-Za-z0-9_]+}}]{{$}}
// SPACES: {{^}}    ga.stream_synchronize %{{[A-Za-z0-9_]+}}{{$}}
func.func @streams(%b: memref<8xf32>) {
  %s = gpu.wait async
  %c = gpu.wait async
  %f = ga.stream_wait async [%c, %s]
  %r = ga.nccl_all_reduce async [%f] %b {datatype = 7 : i32, reduction = 0 : i32} : memref<8xf32>
  %j = ga.stream_wait async [%s, %r]
  ga.stream_release %c
  ga.stream_synchronize %j
  ga.stream_release %j
  return
}
