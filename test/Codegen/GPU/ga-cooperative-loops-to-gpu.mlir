// RUN: ga-opt %s -split-input-file -ga-cooperative-loops-to-gpu -cse | FileCheck %s

#bx = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#by = #gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>
#tx = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#ty = #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>

// A tile staged by all threads of a block, then read by all of them: one
// launch, the block-scope buffer in workgroup memory, a barrier after the
// staging loop and at the end of each iteration of the uniform loop, none
// after the last thread-level loop. Threads beyond a smaller thread-level
// loop skip its body.
// CHECK-LABEL: func.func @stage_and_use(
// CHECK-SAME:      %[[IN:.*]]: memref<64x64xf32>, %[[OUT:.*]]: memref<64x64xf32>, %[[N:.*]]: index)
// CHECK:         gpu.launch blocks(%[[BX:[^,]+]], %[[BY:[^,]+]], %{{[^)]+}}) in (%{{[^ ]+}} = %c4, %{{[^ ]+}} = %[[N]], %{{[^ ]+}} = %c1)
// CHECK-SAME:               threads(%[[TX:[^,]+]], %[[TY:[^,]+]], %{{[^)]+}}) in (%{{[^ ]+}} = %c16, %{{[^ ]+}} = %c16, %{{[^ ]+}} = %c1)
// CHECK-SAME:               workgroup(%[[TILE:[^ ]+]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT:     memref.alloc
// CHECK:           scf.for %[[K:.*]] = %c0 to %c64 step %c16 {
// CHECK:             %[[V:.*]] = memref.load %[[IN]]
// CHECK-NEXT:        memref.store %[[V]], %[[TILE]][%[[TY]], %[[TX]]]
// CHECK-NEXT:        gpu.barrier
// CHECK-NEXT:        %[[SMALL:.*]] = arith.cmpi ult, %[[TX]], %c8 : index
// CHECK-NEXT:        scf.if %[[SMALL]] {
// CHECK-NEXT:          memref.load %[[TILE]][%[[TX]], %[[TY]]]
// CHECK:             }
// CHECK-NEXT:        gpu.barrier
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.terminator
// CHECK-NEXT:    } {ga.kernel = "gemm"}
// CHECK-NOT:     scf.parallel
func.func @stage_and_use(%in: memref<64x64xf32>, %out: memref<64x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%by, %bx) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
    %tile = memref.alloc() : memref<16x16xf32>
    scf.for %k = %c0 to %c64 step %c16 {
      scf.parallel (%ty, %tx) = (%c0, %c0) to (%c16, %c16) step (%c1, %c1) {
        %r = arith.addi %k, %ty : index
        %v = memref.load %in[%r, %tx] : memref<64x64xf32>
        memref.store %v, %tile[%ty, %tx] : memref<16x16xf32>
        scf.reduce
      } {mapping = [#ty, #tx]}
      scf.parallel (%ty, %tx) = (%c0, %c0) to (%c16, %c8) step (%c1, %c1) {
        %v = memref.load %tile[%tx, %ty] : memref<16x16xf32>
        memref.store %v, %out[%ty, %tx] : memref<64x64xf32>
        scf.reduce
      } {mapping = [#ty, #tx]}
    }
    scf.reduce
  } {ga.cooperative, ga.kernel = "gemm", mapping = [#by, #bx]}
  return
}

// -----

#bx = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#tx = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// A buffer hoisted out of the loop by buffer hoisting (used only by this
// loop, apart from its deallocation) is block-scope too; its allocation and
// deallocation disappear. Loops without ga.cooperative are left alone.
// CHECK-LABEL: func.func @hoisted(
// CHECK-NOT:     memref.alloc
// CHECK:         gpu.launch {{.*}} workgroup(%[[T:.*]] : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK:           memref.store %{{.*}}, %[[T]]
// CHECK-NEXT:      gpu.barrier
// CHECK:           memref.load %[[T]]
// CHECK-NOT:     memref.dealloc
// CHECK:         scf.parallel
// CHECK:         return
func.func @hoisted(%a: memref<32xf32>, %b: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<32xf32>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%tx) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%tx] : memref<32xf32>
      memref.store %v, %t[%tx] : memref<32xf32>
      scf.reduce
    } {mapping = [#tx]}
    scf.parallel (%tx) = (%c0) to (%c32) step (%c1) {
      %r = arith.subi %c32, %tx : index
      %r1 = arith.subi %r, %c1 : index
      %v = memref.load %t[%r1] : memref<32xf32>
      memref.store %v, %b[%tx] : memref<32xf32>
      scf.reduce
    } {mapping = [#tx]}
    scf.reduce
  } {ga.cooperative, mapping = [#bx]}
  memref.dealloc %t : memref<32xf32>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %a[%bx] : memref<32xf32>
    memref.store %v, %b[%bx] : memref<32xf32>
    scf.reduce
  } {mapping = [#bx]}
  return
}

// -----

#bx = #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>
#tx = #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>

// A buffer used by this loop only but larger than a block's shared memory
// (48 KiB): one entry per row of the whole kernel (a row group's values
// between its members), each block touching its own row. It stays a global
// buffer, allocated and freed around the launch; the lane partials still go
// to workgroup memory.
// CHECK-LABEL: func.func @rows_too_large(
// CHECK:         %[[ROWS:.*]] = memref.alloc() : memref<16384xf32>
// CHECK:         gpu.launch blocks(%[[BX:[^,]+]], {{.*}} workgroup(%[[T:.*]] : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK:           memref.store %{{.*}}, %[[T]]
// CHECK:           memref.store %{{.*}}, %[[ROWS]][%[[BX]]]
// CHECK:           memref.load %[[ROWS]][%[[BX]]]
// CHECK:         memref.dealloc %[[ROWS]]
func.func @rows_too_large(%a: memref<16384x32xf32>, %b: memref<16384xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c16384 = arith.constant 16384 : index
  %rows = memref.alloc() : memref<16384xf32>
  scf.parallel (%bx) = (%c0) to (%c16384) step (%c1) {
    %t = memref.alloc() : memref<32xf32>
    scf.parallel (%tx) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%bx, %tx] : memref<16384x32xf32>
      memref.store %v, %t[%tx] : memref<32xf32>
      scf.reduce
    } {mapping = [#tx]}
    scf.parallel (%tx) = (%c0) to (%c32) step (%c1) {
      %z = arith.cmpi eq, %tx, %c0 : index
      scf.if %z {
        %v = memref.load %t[%c0] : memref<32xf32>
        memref.store %v, %rows[%bx] : memref<16384xf32>
      }
      scf.reduce
    } {mapping = [#tx]}
    scf.parallel (%tx) = (%c0) to (%c32) step (%c1) {
      %z = arith.cmpi eq, %tx, %c0 : index
      scf.if %z {
        %v = memref.load %rows[%bx] : memref<16384xf32>
        memref.store %v, %b[%bx] : memref<16384xf32>
      }
      scf.reduce
    } {mapping = [#tx]}
    scf.reduce
  } {ga.cooperative, mapping = [#bx]}
  memref.dealloc %rows : memref<16384xf32>
  return
}
