// RUN: ga-opt %s --split-input-file --ga-share-buffers=pack=true | FileCheck %s
// RUN: ga-opt %s --split-input-file --ga-share-buffers | FileCheck %s --check-prefix=SLOTS
// The prefix SLOTS checks the sharing of equal-sized buffers alone
// (the default, pack=false). With pack=true (CHECK), buffers of equal size that the
// slots would share are views at one offset of an arena instead.

#id = affine_map<(d0) -> (d0)>

// %a is dead after its last read; %b is then filled whole: one buffer.
// %c is written while %a is still read later: a buffer of its own.
// CHECK-LABEL: func.func @disjoint
// CHECK:         %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK:         %[[C:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<8xf32>)
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : memref<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[A]], %[[C]] : memref<8xf32>, memref<8xf32>) outs(%arg1
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[A]] : memref<8xf32>) outs(%arg2
func.func @disjoint(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<8xf32>)
  linalg.fill ins(%c1 : f32) outs(%c : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %c : memref<8xf32>, memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%c1 : f32) outs(%b : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : memref<8xf32>) outs(%z : memref<8xf32>) {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  }
  memref.copy %c, %x : memref<8xf32> to memref<8xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Allocations hoisted out of a loop (the pass runs before deallocation is
// inserted), used inside one iteration only: the
// live ranges are positions in the loop's body. %t is written whole by a
// generic that does not read its init, read, and dead before %u is written.
// CHECK-LABEL: func.func @loop
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<16xi8>
// SLOTS-LABEL: func.func @loop
// SLOTS:         %[[T:.*]] = memref.alloc() : memref<4xf32>
// SLOTS-NOT:     memref.alloc
// SLOTS:         scf.for
// SLOTS:           linalg.generic {{.*}} outs(%[[T]] : memref<4xf32>)
// SLOTS:           memref.copy %[[T]], %arg1
// SLOTS:           memref.copy %arg0, %[[T]]
// SLOTS:           memref.copy %[[T]], %arg2
func.func @loop(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %t = memref.alloc() : memref<4xf32>
  %u = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : memref<4xf32>) outs(%t : memref<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %e = math.exp %p : f32
      linalg.yield %e : f32
    }
    memref.copy %t, %y : memref<4xf32> to memref<4xf32>
    memref.copy %x, %u : memref<4xf32> to memref<4xf32>
    memref.copy %u, %z : memref<4xf32> to memref<4xf32>
  }
  return
}

// -----

// Gathered parameters (FSDP's all-gather per micro-batch, after
// --convert-ga-to-host-collectives and the hoisting): the start of an
// all-gather writes all of its buffer (this rank's rows, the engine the
// others') through its flat view, and the buffer is read up to the last
// reader after the wait. The second layer's parameters are gathered after
// the first's are dead: one buffer for both.
// CHECK-LABEL: func.func @gathered
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// SLOTS-LABEL: func.func @gathered
// SLOTS:         %[[W:.*]] = memref.alloc() : memref<4x8xf32>
// SLOTS-NOT:     memref.alloc
// SLOTS:         %[[F1:.*]] = memref.collapse_shape %[[W]]
// SLOTS:         ga.host_collective_start %[[F1]] from %arg0
// SLOTS:         %[[F2:.*]] = memref.collapse_shape %[[W]]
// SLOTS:         ga.host_collective_start %[[F2]] from %arg1
func.func @gathered(%p1: memref<2x8xf32>, %p2: memref<2x8xf32>, %y1: memref<4x8xf32>, %y2: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %w1 = memref.alloc() : memref<4x8xf32>
  %w2 = memref.alloc() : memref<4x8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %f1 = memref.collapse_shape %w1 [[0, 1]] : memref<4x8xf32> into memref<32xf32>
    ga.host_collective_start %f1 from %p1 : memref<2x8xf32> {datatype = 0 : i32, id = 0 : i64, input_offset = 0 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
    ga.host_collective_wait %f1 {id = 0 : i64} : memref<32xf32>
    memref.copy %w1, %y1 : memref<4x8xf32> to memref<4x8xf32>
    %f2 = memref.collapse_shape %w2 [[0, 1]] : memref<4x8xf32> into memref<32xf32>
    ga.host_collective_start %f2 from %p2 : memref<2x8xf32> {datatype = 0 : i32, id = 1 : i64, input_offset = 0 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
    ga.host_collective_wait %f2 {id = 1 : i64} : memref<32xf32>
    memref.copy %w2, %y2 : memref<4x8xf32> to memref<4x8xf32>
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// The peeled first micro-batch (--ga-peel-first-accumulation) before the
// loop: its temporary %p is dead before the loop starts, so the loop's %t
// (allocated first by the hoisting) takes its buffer. %q is read after the
// loop as well: live across it, a buffer of its own. The shared allocation
// moves up to dominate the uses it takes over.
// CHECK-LABEL: func.func @peeled
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<16xi8>
// SLOTS-LABEL: func.func @peeled
// SLOTS:         %[[P:.*]] = memref.alloc() : memref<4xf32>
// SLOTS:         %[[Q:.*]] = memref.alloc() : memref<4xf32>
// SLOTS-NOT:     memref.alloc
// SLOTS:         linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : memref<4xf32>)
// SLOTS:         linalg.fill ins(%{{.*}} : f32) outs(%[[Q]] : memref<4xf32>)
// SLOTS:         memref.copy %[[P]], %arg1
// SLOTS:         scf.for
// SLOTS:           linalg.generic {{.*}} outs(%[[P]] : memref<4xf32>)
// SLOTS:           memref.copy %[[P]], %arg1
// SLOTS:         memref.copy %[[Q]], %arg2
func.func @peeled(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %f = arith.constant 2.0 : f32
  %t = memref.alloc() : memref<4xf32>
  %p = memref.alloc() : memref<4xf32>
  %q = memref.alloc() : memref<4xf32>
  linalg.fill ins(%f : f32) outs(%p : memref<4xf32>)
  linalg.fill ins(%f : f32) outs(%q : memref<4xf32>)
  memref.copy %p, %y : memref<4xf32> to memref<4xf32>
  scf.for %i = %c1 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : memref<4xf32>) outs(%t : memref<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.exp %a : f32
      linalg.yield %e : f32
    }
    memref.copy %t, %y : memref<4xf32> to memref<4xf32>
  }
  memref.copy %q, %z : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Shapes with the same element type and number of elements share through a
// reshape of the whole buffer (collapsed to one dimension, then expanded):
// %b (2x16) and %c (32) take the storage of %a (4x8) once it is dead. %d
// has as many bytes but another element type: a buffer of its own. With
// pack=true all four, disjoint, are views at offset 0 of one arena.
// CHECK-LABEL: func.func @reshaped
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK-COUNT-4: memref.view %[[ARENA]][%{{.*}}][] : memref<128xi8> to
// CHECK-NOT:     memref.alloc
// SLOTS-LABEL: func.func @reshaped
// SLOTS:         %[[A:.*]] = memref.alloc() : memref<4x8xf32>
// SLOTS:         %[[D:.*]] = memref.alloc() : memref<32xi32>
// SLOTS-NOT:     memref.alloc
// SLOTS:         linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<4x8xf32>)
// SLOTS:         memref.copy %[[A]], %arg0
// SLOTS:         %[[F:.*]] = memref.collapse_shape %[[A]] {{\[}}[0, 1]] : memref<4x8xf32> into memref<32xf32>
// SLOTS:         %[[B:.*]] = memref.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [2, 16] : memref<32xf32> into memref<2x16xf32>
// SLOTS:         linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<2x16xf32>)
// SLOTS:         memref.copy %[[B]], %arg1
// SLOTS:         %[[C:.*]] = memref.collapse_shape %[[A]] {{\[}}[0, 1]] : memref<4x8xf32> into memref<32xf32>
// SLOTS:         linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : memref<32xf32>)
// SLOTS:         memref.copy %[[C]], %arg2
// SLOTS:         linalg.fill ins(%{{.*}} : i32) outs(%[[D]] : memref<32xi32>)
func.func @reshaped(%x: memref<4x8xf32>, %y: memref<2x16xf32>, %z: memref<32xf32>, %w: memref<32xi32>) {
  %f = arith.constant 2.0 : f32
  %i = arith.constant 3 : i32
  %a = memref.alloc() : memref<4x8xf32>
  %d = memref.alloc() : memref<32xi32>
  linalg.fill ins(%f : f32) outs(%a : memref<4x8xf32>)
  memref.copy %a, %x : memref<4x8xf32> to memref<4x8xf32>
  %b = memref.alloc() : memref<2x16xf32>
  linalg.fill ins(%f : f32) outs(%b : memref<2x16xf32>)
  memref.copy %b, %y : memref<2x16xf32> to memref<2x16xf32>
  %c = memref.alloc() : memref<32xf32>
  linalg.fill ins(%f : f32) outs(%c : memref<32xf32>)
  memref.copy %c, %z : memref<32xf32> to memref<32xf32>
  linalg.fill ins(%i : i32) outs(%d : memref<32xi32>)
  memref.copy %d, %w : memref<32xi32> to memref<32xi32>
  return
}

// -----

// pack=true: buffers of different sizes at byte offsets of one i8 arena.
// %a (128 B) is dead before %b (64 B) and %c (32 B) are written: %b takes
// offset 0; %c is live with %b, so it takes the next aligned offset, 64.
// CHECK-LABEL: func.func @packed
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK-DAG:     %[[O0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[O64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[A:.*]] = memref.view %[[ARENA]][%[[O0]]][] : memref<128xi8> to memref<32xf32>
// CHECK-DAG:     %[[B:.*]] = memref.view %[[ARENA]][%[[O0]]][] : memref<128xi8> to memref<4x4xf32>
// CHECK-DAG:     %[[C:.*]] = memref.view %[[ARENA]][%[[O64]]][] : memref<128xi8> to memref<8xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<32xf32>)
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<4x4xf32>)
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : memref<8xf32>)
func.func @packed(%x: memref<32xf32>, %y: memref<4x4xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<4x4xf32>
  %c = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<32xf32>)
  memref.copy %a, %x : memref<32xf32> to memref<32xf32>
  linalg.fill ins(%c1 : f32) outs(%b : memref<4x4xf32>)
  linalg.fill ins(%c1 : f32) outs(%c : memref<8xf32>)
  memref.copy %b, %y : memref<4x4xf32> to memref<4x4xf32>
  memref.copy %c, %z : memref<8xf32> to memref<8xf32>
  return
}

// -----

// Live ranges that all overlap: no offset is shared, an arena would not be
// smaller than the buffers: they stay as they are.
// CHECK-LABEL: func.func @overlapping
// CHECK:         memref.alloc() : memref<32xf32>
// CHECK:         memref.alloc() : memref<16xf32>
// CHECK-NOT:     memref.view
func.func @overlapping(%x: memref<32xf32>, %y: memref<16xf32>) {
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<16xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<32xf32>)
  linalg.fill ins(%c0 : f32) outs(%b : memref<16xf32>)
  memref.copy %a, %x : memref<32xf32> to memref<32xf32>
  memref.copy %b, %y : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A buffer allocated in a parallel loop's body is one per iteration: it
// never becomes a view of the arena of the buffers outside the loop.
// CHECK-LABEL: func.func @parallel_inside
// CHECK:         %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK:         scf.parallel
// CHECK:           memref.alloc() : memref<8xf32>
// CHECK-NOT:       memref.view
// CHECK:         scf.reduce
func.func @parallel_inside(%x: memref<32xf32>, %y: memref<16xf32>, %z: memref<4x8xf32>) {
  %f0 = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<16xf32>
  linalg.fill ins(%f0 : f32) outs(%a : memref<32xf32>)
  memref.copy %a, %x : memref<32xf32> to memref<32xf32>
  linalg.fill ins(%f0 : f32) outs(%b : memref<16xf32>)
  memref.copy %b, %y : memref<16xf32> to memref<16xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %t = memref.alloc() : memref<8xf32>
    linalg.fill ins(%f0 : f32) outs(%t : memref<8xf32>)
    %row = memref.subview %z[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    memref.copy %t, %row : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
    scf.reduce
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// A concatenation: %b is written in two disjoint pieces (a copy into one
// half; a fill of the other, then a sum into that piece, which reads only
// what the fill wrote) before anything reads all of it, so it takes the
// buffer of %a, dead by then.
// CHECK-LABEL: func.func @concatenated
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<32xi8>
// CHECK-NOT:     memref.alloc
// CHECK:         return
// SLOTS-LABEL: func.func @concatenated
// SLOTS:         %[[A:.*]] = memref.alloc() : memref<8xf32>
// SLOTS-NOT:     memref.alloc
// SLOTS:         memref.copy %[[A]], %arg1
// SLOTS:         %[[LO:.*]] = memref.subview %[[A]][0] [4] [1]
// SLOTS:         %[[HI:.*]] = memref.subview %[[A]][4] [4] [1]
// SLOTS:         memref.copy %{{.*}}, %[[LO]]
// SLOTS:         linalg.fill ins(%{{.*}} : f32) outs(%[[HI]]
// SLOTS:         linalg.generic {{.*}} outs(%[[HI]]
// SLOTS:         memref.copy %[[A]], %arg2
func.func @concatenated(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  memref.copy %a, %y : memref<8xf32> to memref<8xf32>
  %lo = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %xlo = memref.subview %x[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %xlo, %lo : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1]>>
  linalg.fill ins(%c0 : f32) outs(%hi : memref<4xf32, strided<[1], offset: 4>>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%xlo : memref<4xf32, strided<[1]>>)
      outs(%hi : memref<4xf32, strided<[1], offset: 4>>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  }
  memref.copy %b, %z : memref<8xf32> to memref<8xf32>
  return
}
