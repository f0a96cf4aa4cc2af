// RUN: ga-opt %s -split-input-file --ga-device-iteration-index -verify-diagnostics

// A slice that the library call writes (its C operand) cannot be staged
// into a copy: it stays on the host, and ga-capture-cuda-graphs will refuse
// the loop.
func.func private @gaCublasLtMatmul(i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr)
func.func @written(%y: memref<8x4xf32>, %w: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %i0 = arith.constant 0 : i32
  %i4 = arith.constant 4 : i64
  %one = arith.constant 1.0 : f32
  %null = llvm.mlir.zero : !llvm.ptr
  scf.for %i = %c0 to %c4 step %c1 {
    %o = arith.muli %i, %c2 : index
    // expected-remark @below {{not staged for a library call: 'func.call' in the loop may write the sliced buffer}}
    %s = memref.subview %y[%o, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
    %p = memref.extract_aligned_pointer_as_index %s : memref<2x4xf32, strided<[4, 1], offset: ?>> -> index
    %p64 = arith.index_cast %p : index to i64
    %py = llvm.inttoptr %p64 : i64 to !llvm.ptr
    func.call @gaCublasLtMatmul(%i0, %i0, %i4, %i4, %i4, %null, %i4, %null, %i4, %py, %i4, %i0, %i0, %one, %one, %null) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr) -> ()
  }
  return
}

// -----

// A micro-batch of dynamic size (a remainder folded into the loop): the
// slice has no fixed buffer to be staged into.
func.func private @gaCublasLtMatmul(i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr)
func.func @dynamic(%x: memref<?x4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %i0 = arith.constant 0 : i32
  %i4 = arith.constant 4 : i64
  %one = arith.constant 1.0 : f32
  %null = llvm.mlir.zero : !llvm.ptr
  scf.for %i = %c0 to %c4 step %c1 {
    %m = arith.minui %i, %n : index
    // expected-remark @below {{not staged for a library call: the micro-batch slice has a dynamic shape}}
    %s = memref.subview %x[%i, 0] [%m, 4] [1, 1] : memref<?x4xf32> to memref<?x4xf32, strided<[4, 1], offset: ?>>
    %p = memref.extract_aligned_pointer_as_index %s : memref<?x4xf32, strided<[4, 1], offset: ?>> -> index
    %p64 = arith.index_cast %p : index to i64
    %pa = llvm.inttoptr %p64 : i64 to !llvm.ptr
    func.call @gaCublasLtMatmul(%i0, %i0, %i4, %i4, %i4, %pa, %i4, %null, %i4, %null, %i4, %i0, %i0, %one, %one, %null) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr) -> ()
  }
  return
}

// -----

// Malformed input: a library call without the operand it writes.
func.func private @gaCublasLtMatmul(i32, i32, i64)
func.func @malformed() {
  %i0 = arith.constant 0 : i32
  %i4 = arith.constant 4 : i64
  // expected-error @below {{'func.call' op has 3 operands; a call of gaCublasLtMatmul writes its operand 9 (GACublasLt.h)}}
  func.call @gaCublasLtMatmul(%i0, %i0, %i4) : (i32, i32, i64) -> ()
  return
}
