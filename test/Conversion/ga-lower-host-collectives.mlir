// RUN: ga-opt %s --split-input-file --ga-lower-host-collectives | FileCheck %s

// The host collectives on buffers become the runtime's calls: the start of
// an all-reduce gaHostAllReduceStart(address, 12 elements, f32 = 0, sum = 0,
// id 0), its wait gaHostAllReduceWait(0); the address is that of the first
// element (aligned base plus the view's offset).

// CHECK-LABEL: func.func @all_reduce
// CHECK:         %[[COUNT:.*]] = arith.constant 12 : i64
// CHECK:         memref.extract_aligned_pointer_as_index %{{.*}} : memref<12xf32>
// CHECK:         %[[PTR:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK:         %[[ID:.*]] = arith.constant 0 : i64
// CHECK:         call @gaHostAllReduceStart(%[[PTR]], %[[COUNT]], %{{.*}}, %{{.*}}, %[[ID]]) : (!llvm.ptr, i64, i32, i32, i64) -> i32
// CHECK:         linalg.fill
// CHECK:         %[[ID2:.*]] = arith.constant 0 : i64
// CHECK:         call @gaHostAllReduceWait(%[[ID2]]) : (i64) -> i32
// CHECK-NOT:     ga.host_collective
// CHECK: func.func private @gaHostAllReduceStart(!llvm.ptr, i64, i32, i32, i64) -> i32
// CHECK: func.func private @gaHostAllReduceWait(i64) -> i32
func.func @all_reduce(%a: memref<12xf32>, %o: memref<4xf32>) {
  %c = arith.constant 1.0 : f32
  ga.host_collective_start %a {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32} : memref<12xf32>
  linalg.fill ins(%c : f32) outs(%o : memref<4xf32>)
  ga.host_collective_wait %a {id = 0 : i64} : memref<12xf32>
  return
}

// -----

// Sharded: a reduce-scatter (kind 0) and an all-gather (kind 1) of 4 rows
// (gaHostShardedStart(address, 32, f32 = 0, mean = 1 / 0, id, kind, 4)).
// The gather's input (rank 1's row) is first copied into its row of the
// buffer: elements [8, 16), in the input's shape.

// CHECK-LABEL: func.func @sharded
// CHECK:         call @gaHostShardedStart(%{{.*}}, {{%c32_i64(_[0-9]+)?}}, {{%c0_i32(_[0-9]+)?}}, {{%c1_i32(_[0-9]+)?}}, {{%c0_i64(_[0-9]+)?}}, {{%c0_i32(_[0-9]+)?}}, {{%c4_i64(_[0-9]+)?}})
// CHECK:         %[[SUB:.*]] = memref.subview %[[FULL:.*]][8] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1], offset: 8>>
// CHECK:         %[[ROW:.*]] = memref.expand_shape %[[SUB]] {{\[\[}}0, 1]] output_shape [1, 8]
// CHECK:         memref.copy %[[MINE:.*]], %[[ROW]] : memref<1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: 8>>
// CHECK:         call @gaHostShardedStart(%{{.*}}, {{%c32_i64(_[0-9]+)?}}, {{%c0_i32(_[0-9]+)?}}, {{%c0_i32(_[0-9]+)?}}, {{%c1_i64(_[0-9]+)?}}, {{%c1_i32(_[0-9]+)?}}, {{%c4_i64(_[0-9]+)?}})
// CHECK-COUNT-2: call @gaHostAllReduceWait
// CHECK: func.func private @gaHostShardedStart(!llvm.ptr, i64, i32, i32, i64, i32, i64) -> i32
func.func @sharded(%acc: memref<32xf32>, %full: memref<32xf32>, %mine: memref<1x8xf32>) {
  ga.host_collective_start %acc {datatype = 0 : i32, id = 0 : i64, reduction = 1 : i32, rows = 4 : i64} : memref<32xf32>
  ga.host_collective_start %full from %mine : memref<1x8xf32> {datatype = 0 : i32, id = 1 : i64, input_offset = 8 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
  ga.host_collective_wait %acc {id = 0 : i64} : memref<32xf32>
  ga.host_collective_wait %full {id = 1 : i64} : memref<32xf32>
  return
}
