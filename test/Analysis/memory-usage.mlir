// RUN: ga-opt %s -test-ga-memory-usage -split-input-file -o /dev/null | FileCheck %s

// A bufferized step as the CPU lowering leaves it: a temporary hoisted out of
// the micro-batch loop, an accumulator filled before the loop, read after it
// and freed at the end, a returned buffer. Bytes are elements plus the
// allocation's alignment (the lowering over-allocates by it).
// CHECK-LABEL: memory of @step:
// CHECK-NEXT:    alloc memref<8xf32>: accumulators, 96 bytes
// CHECK-NEXT:    alloc memref<3x8xf32>: temporaries, 160 bytes
// CHECK-NEXT:    alloc memref<8xf32>: results, 32 bytes
// CHECK-NEXT:    alloc memref<2xf64>: temporaries, 16 bytes
// CHECK-NEXT:    parameters: 32
// CHECK-NEXT:    optimizer_state: 36
// CHECK-NEXT:    inputs: 384
// CHECK-NEXT:    accumulators: 96
// CHECK-NEXT:    results: 32
// The two temporaries are never live at the same time.
// CHECK-NEXT:    temporaries: 160
// CHECK-NEXT:    arguments: 452
// CHECK-NEXT:    allocation peak: 256
// CHECK-NEXT:    static: 0
// CHECK-NEXT:    total peak: 708
func.func @step(%w: memref<8xf32>, %m: memref<8xf32>, %lr: memref<f32>,
                %x: memref<12x8xf32> {ga.batch = 0 : i64}) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<8xf32>)
  %tmp = memref.alloc() {alignment = 64 : i64} : memref<3x8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %off = arith.muli %i, %c3 : index
    %xs = memref.subview %x[%off, 0] [3, 8] [1, 1] : memref<12x8xf32> to memref<3x8xf32, strided<[8, 1], offset: ?>>
    linalg.copy ins(%xs : memref<3x8xf32, strided<[8, 1], offset: ?>>) outs(%tmp : memref<3x8xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>],
                    iterator_types = ["reduction", "parallel"]}
        ins(%tmp, %w : memref<3x8xf32>, memref<8xf32>) outs(%acc : memref<8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
  }
  memref.dealloc %tmp : memref<3x8xf32>
  // The optimizer reads %m and %lr only after the loop: optimizer state.
  %new = memref.alloc() : memref<8xf32>
  linalg.add ins(%acc, %m : memref<8xf32>, memref<8xf32>) outs(%new : memref<8xf32>)
  %s = memref.alloc() : memref<2xf64>
  memref.dealloc %s : memref<2xf64>
  %l = memref.load %lr[] : memref<f32>
  memref.dealloc %acc : memref<8xf32>
  return %new : memref<8xf32>
}

// -----

// A region counts once: the peak inside a loop body is what it allocates on
// top of what is live around it (400 + 800); a branch's peak is that of its
// larger side (400 + 1000 + 400).
// Without a micro-batch loop every argument counts as parameters.
// CHECK-LABEL: memory of @regions:
// CHECK:         parameters: 1
// CHECK:         temporaries: 1800
// CHECK:         allocation peak: 1800
// CHECK:         total peak: 1801
func.func @regions(%c: memref<i1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %a = memref.alloc() : memref<100xf32>
  scf.for %i = %c0 to %c10 step %c1 {
    %b = memref.alloc() : memref<200xf32>
    memref.dealloc %b : memref<200xf32>
  }
  %cond = memref.load %c[] : memref<i1>
  scf.if %cond {
    %d = memref.alloc() : memref<250xf32>
    %e = memref.alloc() : memref<2x25xf64>
    memref.dealloc %e : memref<2x25xf64>
    memref.dealloc %d : memref<250xf32>
  } else {
    %f = memref.alloc() : memref<10xi8>
    memref.dealloc %f : memref<10xi8>
  }
  memref.dealloc %a : memref<100xf32>
  return
}

// -----

// Static temporaries live in globals, not on the heap, but are held for the
// whole call: a temporary on top of the heap's (64 + 256 bytes), in the
// total peak; a constant global is not storage of the step. Frees through a
// view count for the viewed allocation.
// CHECK-LABEL: memory of @statics:
// CHECK:         temporaries: 320
// CHECK:         static: 256
// CHECK:         total peak: 320
memref.global "private" @__buffer : memref<64xf32> = uninitialized
memref.global "private" constant @__table : memref<4xf32> = dense<1.0>
func.func @statics() {
  %g = memref.get_global @__buffer : memref<64xf32>
  %t = memref.get_global @__table : memref<4xf32>
  %a = memref.alloc() : memref<4x4xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  memref.dealloc %v : memref<16xf32>
  return
}

// -----

// A run-time size bounded through a view of a device allocation (the GPU
// bufferization's form of a micro-batch's loss vector): the size of %b is
// the first dimension of %a collapsed, and %a's rows are at most 5 (4 plus
// the micro-batch that takes the remainder). ValueBounds does not model
// gpu.alloc; the bound follows the dimension to its allocation's size.
// CHECK-LABEL: memory of @collapsed_device_size:
// CHECK-NEXT:    alloc memref<?x2xf32>: temporaries, 40 bytes
// CHECK-NEXT:    alloc memref<?xf32>: temporaries, 40 bytes
// CHECK:         temporaries: 80
func.func @collapsed_device_size(%i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %last = arith.cmpi ult, %i, %c1 : index
  %extra = arith.select %last, %c1, %c0 : index
  %rows = arith.addi %extra, %c4 : index
  %a = gpu.alloc (%rows) : memref<?x2xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<?x2xf32> into memref<?xf32>
  %n = memref.dim %v, %c0 : memref<?xf32>
  %b = gpu.alloc (%n) : memref<?xf32>
  gpu.dealloc %b : memref<?xf32>
  gpu.dealloc %a : memref<?x2xf32>
  return
}
