// RUN: ga-opt %s -ga-promote-buffers-to-globals | FileCheck %s
// RUN: ga-opt %s -ga-promote-buffers-to-globals="min-bytes=1024 alignment=128" \
// RUN:   | FileCheck %s --check-prefix=MIN

#id = affine_map<(i) -> (i)>

// A temporary (with its dealloc) becomes a private uninitialized global; the
// returned buffer stays on the heap.
// CHECK-DAG:   memref.global "private" @__ga_buffer_temporary_0 : memref<256xf32> = uninitialized {alignment = 64 : i64}
// CHECK-LABEL: func.func @temporary(
// CHECK:         %[[T:.*]] = memref.get_global @__ga_buffer_temporary_0 : memref<256xf32>
// CHECK:         %[[R:.*]] = memref.alloc() : memref<256xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : memref<256xf32>) outs(%[[T]] : memref<256xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : memref<256xf32>) outs(%[[R]] : memref<256xf32>)
// CHECK-NOT:     memref.dealloc
// CHECK:         return %[[R]]
// MIN-DAG:     memref.global "private" @__ga_buffer_temporary_0 : memref<256xf32> = uninitialized {alignment = 128 : i64}
func.func @temporary(%x: memref<256xf32>) -> memref<256xf32> {
  %t = memref.alloc() : memref<256xf32>
  %r = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<256xf32>) outs(%t : memref<256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : memref<256xf32>) outs(%r : memref<256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  memref.dealloc %t : memref<256xf32>
  return %r : memref<256xf32>
}

// An accumulator carried through a micro-batch loop and read after it, and
// a per-iteration temporary, are promoted; a buffer a loop iteration yields
// to the next one (two instances live at once) and one returned through a
// view are not. Smaller than min-bytes: left alone.
// CHECK-LABEL: func.func @loop(
// CHECK:         memref.get_global @__ga_buffer_loop_0 : memref<16xf32>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK:           memref.get_global @__ga_buffer_loop_1 : memref<16xf32>
// CHECK:           memref.alloc() : memref<16xf32>
// CHECK:           scf.yield
// CHECK:         memref.alloc() : memref<4x4xf32>
// CHECK:         memref.collapse_shape
// MIN-LABEL: func.func @loop(
// MIN-NOT:       memref.get_global
func.func @loop(%x: memref<16xf32>, %n: index) -> (memref<16xf32>, memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<16xf32>)
  %fresh = memref.alloc() : memref<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc, %prev = %fresh)
      -> (memref<16xf32>, memref<16xf32>) {
    %t = memref.alloc() : memref<16xf32>
    memref.copy %x, %t : memref<16xf32> to memref<16xf32>
    %next = memref.alloc() : memref<16xf32>
    memref.copy %t, %next : memref<16xf32> to memref<16xf32>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%t : memref<16xf32>) outs(%a : memref<16xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = arith.addf %v, %o : f32
      linalg.yield %s : f32
    }
    scf.yield %a, %next : memref<16xf32>, memref<16xf32>
  }
  %out = memref.alloc() : memref<4x4xf32>
  %flat = memref.collapse_shape %out [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  memref.copy %r#0, %flat : memref<16xf32> to memref<16xf32>
  return %flat, %r#1 : memref<16xf32>, memref<16xf32>
}

// Dynamic sizes, a buffer passed to a call, and one allocated in a parallel
// loop (one instance per iteration, all live at once) stay on the heap.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     memref.get_global
// CHECK-COUNT-3: memref.alloc
// CHECK-NOT:     memref.get_global
func.func private @consume(memref<8xf32>)
func.func @stays(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.alloc(%n) : memref<?xf32>
  %p = memref.alloc() : memref<8xf32>
  func.call @consume(%p) : (memref<8xf32>) -> ()
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloc() : memref<8xf32>
    scf.reduce
  }
  return
}
