// RUN: ga-opt %s --split-input-file --ga-share-buffers=pack=true -verify-diagnostics | FileCheck %s

// What the pass cannot prove dead is left alone, silently (no
// diagnostics): each function keeps both of its allocations.

#id = affine_map<(d0) -> (d0)>

// The first access to %b reads it (an accumulation into its init): its
// contents before that access matter, so it cannot take %a's buffer.
// CHECK-LABEL: func.func @reads_first
// CHECK-COUNT-2: memref.alloc
func.func @reads_first(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<8xf32>)
  memref.copy %a, %x : memref<8xf32> to memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  }
  memref.copy %b, %y : memref<8xf32> to memref<8xf32>
  return
}

// -----

// %a is carried from one iteration to the next (read before it is written
// in the body): its accesses are in the loop, but the first one does not
// overwrite it.
// CHECK-LABEL: func.func @carried
// CHECK-COUNT-2: memref.alloc
func.func @carried(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.copy %a, %y : memref<4xf32> to memref<4xf32>
    memref.copy %x, %a : memref<4xf32> to memref<4xf32>
    memref.copy %x, %b : memref<4xf32> to memref<4xf32>
    memref.copy %b, %y : memref<4xf32> to memref<4xf32>
  }
  return
}

// -----

// A buffer returned (it escapes), one written through a view only, and one
// freed by the function itself (the pass runs before deallocation).
// CHECK-LABEL: func.func @escapes
// CHECK-COUNT-3: memref.alloc
func.func @escapes(%x: memref<8xf32>) -> memref<8xf32> {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %v = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  memref.copy %a, %x : memref<8xf32> to memref<8xf32>
  %c0 = arith.constant 0.0 : f32
  linalg.fill ins(%c0 : f32) outs(%v : memref<4xf32, strided<[1]>>)
  memref.copy %b, %x : memref<8xf32> to memref<8xf32>
  %d = memref.alloc() : memref<8xf32>
  memref.copy %x, %d : memref<8xf32> to memref<8xf32>
  memref.copy %d, %x : memref<8xf32> to memref<8xf32>
  memref.dealloc %d : memref<8xf32>
  return %a : memref<8xf32>
}

// -----

// A reduce-scatter's start reads its buffer (the accumulator reduced in
// place): its first access must not be it, so the buffer cannot take
// another's storage.
// CHECK-LABEL: func.func @scatter_reads
// CHECK-COUNT-2: memref.alloc
func.func @scatter_reads(%x: memref<32xf32>, %y: memref<32xf32>) {
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<32xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<32xf32>)
  memref.copy %a, %x : memref<32xf32> to memref<32xf32>
  ga.host_collective_start %b {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
  ga.host_collective_wait %b {id = 0 : i64} : memref<32xf32>
  memref.copy %b, %y : memref<32xf32> to memref<32xf32>
  return
}

// -----

// %p is read after the loop: it is live across it, so the loop's
// temporary %t (dead outside the loop) cannot take its buffer.
// CHECK-LABEL: func.func @live_across_loop
// CHECK-COUNT-2: memref.alloc
func.func @live_across_loop(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = memref.alloc() : memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  memref.copy %x, %p : memref<4xf32> to memref<4xf32>
  scf.for %i = %c1 to %c4 step %c1 {
    memref.copy %x, %t : memref<4xf32> to memref<4xf32>
    memref.copy %t, %z : memref<4xf32> to memref<4xf32>
  }
  memref.copy %p, %y : memref<4xf32> to memref<4xf32>
  return
}

// -----

// %t is allocated inside the loop (one buffer per iteration, not hoisted):
// it does not take the buffer of %p, held outside the loop.
// CHECK-LABEL: func.func @allocated_inside
// CHECK-COUNT-2: memref.alloc
func.func @allocated_inside(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = memref.alloc() : memref<4xf32>
  memref.copy %x, %p : memref<4xf32> to memref<4xf32>
  memref.copy %p, %y : memref<4xf32> to memref<4xf32>
  scf.forall (%i) in (%c4) {
    %t = memref.alloc() : memref<4xf32>
    memref.copy %x, %t : memref<4xf32> to memref<4xf32>
    memref.copy %t, %z : memref<4xf32> to memref<4xf32>
  }
  return
}

// -----

// pack=true leaves alone what it cannot place at a byte offset: a buffer
// of i1 (not whole bytes) and one of a strided layout keep their own
// allocations, though dead before the f32 buffers are written; those two
// (disjoint) share an arena.
// CHECK-LABEL: func.func @not_packable
// CHECK-DAG:     memref.alloc() : memref<64xi1>
// CHECK-DAG:     memref.alloc() : memref<4xf32, strided<[2]>>
// CHECK-DAG:     memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// CHECK-NOT:     memref.alloc
func.func @not_packable(%x: memref<64xi1>, %y: memref<4xf32, strided<[2]>>, %z: memref<32xf32>, %w: memref<16xf32>) {
  %t = arith.constant true
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<64xi1>
  %b = memref.alloc() : memref<4xf32, strided<[2]>>
  %c = memref.alloc() : memref<32xf32>
  %d = memref.alloc() : memref<16xf32>
  linalg.fill ins(%t : i1) outs(%a : memref<64xi1>)
  memref.copy %a, %x : memref<64xi1> to memref<64xi1>
  linalg.fill ins(%c0 : f32) outs(%b : memref<4xf32, strided<[2]>>)
  memref.copy %b, %y : memref<4xf32, strided<[2]>> to memref<4xf32, strided<[2]>>
  linalg.fill ins(%c0 : f32) outs(%c : memref<32xf32>)
  memref.copy %c, %z : memref<32xf32> to memref<32xf32>
  linalg.fill ins(%c0 : f32) outs(%d : memref<16xf32>)
  memref.copy %d, %w : memref<16xf32> to memref<16xf32>
  return
}

// -----

// The memory report gives an allocation one role from all its uses: a
// buffer used in a loop of the function and one used after it would make an
// arena that looks like an accumulator. They are not packed together,
// though their live ranges are disjoint.
// CHECK-LABEL: func.func @loop_then_after
// CHECK-DAG:     memref.alloc() : memref<32xf32>
// CHECK-DAG:     memref.alloc() : memref<16xf32>
// CHECK-NOT:     memref.view
func.func @loop_then_after(%x: memref<32xf32>, %y: memref<16xf32>) {
  %f0 = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %a = memref.alloc() : memref<32xf32>
  %b = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    linalg.fill ins(%f0 : f32) outs(%a : memref<32xf32>)
    memref.copy %a, %x : memref<32xf32> to memref<32xf32>
  }
  linalg.fill ins(%f0 : f32) outs(%b : memref<16xf32>)
  memref.copy %b, %y : memref<16xf32> to memref<16xf32>
  return
}

// -----

// Pieces written before any read, but they overlap (%b: 5 + 3 elements,
// as many as the buffer holds, yet 6 and 7 are never written) or leave a
// gap that is read (%c): neither is written whole before it is read, so
// neither takes the buffer of %a, dead by then.
// CHECK-LABEL: func.func @pieces
// CHECK-COUNT-3: memref.alloc
func.func @pieces(%x: memref<8xf32>, %y: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  memref.copy %a, %y : memref<8xf32> to memref<8xf32>
  %x5 = memref.subview %x[0] [5] [1] : memref<8xf32> to memref<5xf32, strided<[1]>>
  %b0 = memref.subview %b[0] [5] [1] : memref<8xf32> to memref<5xf32, strided<[1]>>
  %x3 = memref.subview %x[0] [3] [1] : memref<8xf32> to memref<3xf32, strided<[1]>>
  %b3 = memref.subview %b[3] [3] [1] : memref<8xf32> to memref<3xf32, strided<[1], offset: 3>>
  memref.copy %x5, %b0 : memref<5xf32, strided<[1]>> to memref<5xf32, strided<[1]>>
  memref.copy %x3, %b3 : memref<3xf32, strided<[1]>> to memref<3xf32, strided<[1], offset: 3>>
  memref.copy %b, %y : memref<8xf32> to memref<8xf32>
  %c0 = memref.subview %c[0] [5] [1] : memref<8xf32> to memref<5xf32, strided<[1]>>
  %c6 = memref.subview %c[6] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1], offset: 6>>
  %x2 = memref.subview %x[0] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1]>>
  memref.copy %x5, %c0 : memref<5xf32, strided<[1]>> to memref<5xf32, strided<[1]>>
  memref.copy %x2, %c6 : memref<2xf32, strided<[1]>> to memref<2xf32, strided<[1], offset: 6>>
  memref.copy %c, %y : memref<8xf32> to memref<8xf32>
  return
}
