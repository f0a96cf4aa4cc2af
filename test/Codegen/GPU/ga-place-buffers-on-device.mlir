// RUN: ga-opt %s -ga-place-buffers-on-device | FileCheck %s

// Host allocations, frees and copies of the buffers that kernels use become
// device ones; launches are named after what they compute, in program order,
// `_acc` where they update an accumulator; ga.* attributes are dropped.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:.*]]: memref<64xf32>
func.func @step(%x: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[T:.*]] = gpu.alloc () : memref<64xf32>
  %t = memref.alloc() : memref<64xf32>
  // A stack buffer is host memory: the host may read it.
  // CHECK: %[[H:.*]] = memref.alloca() : memref<f32>
  %h = memref.alloca() : memref<f32>
  // CHECK: gpu.launch {{.*}} module(@step_kernels) function(@step_k00_elementwise)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<64xf32>
    memref.store %v, %t[%tx] : memref<64xf32>
    gpu.terminator
  } {ga.kernel = "elementwise"}
  // CHECK: gpu.launch {{.*}} module(@step_kernels) function(@step_k01_reduce_acc)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %t[%tx] : memref<64xf32>
    memref.store %v, %x[%tx] : memref<64xf32>
    gpu.terminator
  } {ga.accumulates, ga.kernel = "reduce"}
  // Unnamed launches are kernels.
  // CHECK: gpu.launch {{.*}} module(@step_kernels) function(@step_k02_kernel)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  // CHECK: gpu.memcpy %[[X]], %[[T]] : memref<64xf32>, memref<64xf32>
  memref.copy %t, %x : memref<64xf32> to memref<64xf32>
  // CHECK: %[[S:.*]] = memref.subview %[[X]][0] [1] [1]
  // CHECK: %[[C:.*]] = memref.collapse_shape %[[S]] []
  // CHECK: gpu.memcpy %[[H]], %[[C]]
  %s = memref.subview %x[0] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1]>>
  %c = memref.collapse_shape %s [] : memref<1xf32, strided<[1]>> into memref<f32>
  memref.copy %c, %h : memref<f32> to memref<f32>
  // CHECK: %[[V:.*]] = memref.load %[[H]][]
  %v = memref.load %h[] : memref<f32>
  // CHECK: gpu.dealloc %[[T]] : memref<64xf32>
  memref.dealloc %t : memref<64xf32>
  // CHECK-NOT: ga.
  // CHECK: return %[[V]]
  return %v : f32
}

// The bookkeeping buffers of deallocation (read and written on the host,
// handed to a host helper) stay host allocations.

// CHECK-LABEL: func.func @bookkeeping
// CHECK: %[[P:.*]] = memref.alloc() : memref<2xindex>
// CHECK: memref.store
// CHECK: call @dealloc_helper(%[[P]])
// CHECK: memref.dealloc %[[P]]
func.func @bookkeeping(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %p = memref.alloc() : memref<2xindex>
  %a = memref.extract_aligned_pointer_as_index %x : memref<64xf32> -> index
  memref.store %a, %p[%c0] : memref<2xindex>
  call @dealloc_helper(%p) : (memref<2xindex>) -> ()
  memref.dealloc %p : memref<2xindex>
  return
}

// The helper itself is host code: left alone.
// CHECK-LABEL: func.func private @dealloc_helper
// CHECK: memref.load
func.func private @dealloc_helper(%p: memref<2xindex>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %p[%c0] : memref<2xindex>
  return
}

// A buffer that no kernel touches but whose address a library call reads or
// writes (the output of one cuBLASLt product that only another product reads,
// through a view) is device memory; an address only compared on the host is
// not a device use.
// CHECK-LABEL: func.func @library_only
// CHECK: %[[D:.*]] = gpu.alloc () : memref<2x6x16xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: call @gaLibraryProduct
// CHECK: memref.collapse_shape %[[D]]
// CHECK: call @gaLibraryProduct
// CHECK: gpu.dealloc %[[D]]
// CHECK: %[[H:.*]] = memref.alloc() : memref<4xf32>
// CHECK: arith.cmpi
// CHECK: memref.dealloc %[[H]]
func.func private @gaLibraryProduct(!llvm.ptr, !llvm.ptr)
func.func @library_only(%x: memref<12x16xf32>) -> i1 {
  %d = memref.alloc() : memref<2x6x16xf32>
  %i0 = memref.extract_aligned_pointer_as_index %x : memref<12x16xf32> -> index
  %j0 = arith.index_cast %i0 : index to i64
  %p0 = llvm.inttoptr %j0 : i64 to !llvm.ptr
  %i1 = memref.extract_aligned_pointer_as_index %d : memref<2x6x16xf32> -> index
  %j1 = arith.index_cast %i1 : index to i64
  %p1 = llvm.inttoptr %j1 : i64 to !llvm.ptr
  call @gaLibraryProduct(%p0, %p1) : (!llvm.ptr, !llvm.ptr) -> ()
  %v = memref.collapse_shape %d [[0, 1], [2]] : memref<2x6x16xf32> into memref<12x16xf32>
  %i2 = memref.extract_aligned_pointer_as_index %v : memref<12x16xf32> -> index
  %j2 = arith.index_cast %i2 : index to i64
  %p2 = llvm.inttoptr %j2 : i64 to !llvm.ptr
  call @gaLibraryProduct(%p2, %p0) : (!llvm.ptr, !llvm.ptr) -> ()
  memref.dealloc %d : memref<2x6x16xf32>
  %h = memref.alloc() : memref<4xf32>
  %i3 = memref.extract_aligned_pointer_as_index %h : memref<4xf32> -> index
  %same = arith.cmpi eq, %i3, %i0 : index
  memref.dealloc %h : memref<4xf32>
  return %same : i1
}

// A buffer that only library ops use (the gradient bucket that a product
// writes and an NCCL all-reduce reduces, through a view) is device memory:
// the ops are device uses of their memref operands, as launches are.
// CHECK-LABEL: func.func @library_ops
// CHECK: %[[D:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK: ga.blas_matmul %{{.*}}, %{{.*}}, %[[D]]
// CHECK: %[[F:.*]] = memref.collapse_shape %[[D]]
// CHECK: ga.nccl_all_reduce {{ *}}%[[F]]
// CHECK: gpu.dealloc %[[D]]
func.func @library_ops(%x: memref<4x16xf32>, %w: memref<16x8xf32>) {
  %d = memref.alloc() : memref<4x8xf32>
  ga.blas_matmul %x, %w, %d : memref<4x16xf32>, memref<16x8xf32>, memref<4x8xf32>
  %f = memref.collapse_shape %d [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  ga.nccl_all_reduce %f {datatype = 7 : i32, reduction = 0 : i32} : memref<32xf32>
  memref.dealloc %d : memref<4x8xf32>
  return
}
