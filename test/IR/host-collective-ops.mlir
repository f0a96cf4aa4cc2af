// RUN: ga-opt %s | ga-opt | FileCheck %s
// RUN: ga-opt %s --mlir-print-op-generic | ga-opt | FileCheck %s
// RUN: ga-opt %s -emit-bytecode | ga-opt | FileCheck %s
// RUN: ga-opt %s --inline | FileCheck %s --check-prefix=INLINE

// Round trip of the host collectives on buffers (include/ga/IR/GAShardOps.td)
// that --convert-ga-to-host-collectives makes: an all-reduce, a
// reduce-scatter of 4 rows and an all-gather of rank 1's row (8 elements at
// element 8 of 32). Host-only, like shard-ops.mlir.

// CHECK-LABEL: func.func @host_collectives
// CHECK:         ga.host_collective_start %[[A:.*]] {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32} : memref<12xf32>
// CHECK:         ga.host_collective_start %[[B:.*]] {datatype = 0 : i32, id = 1 : i64, reduction = 1 : i32, rows = 4 : i64} : memref<32xf32>
// CHECK:         ga.host_collective_start %[[C:.*]] from %{{.*}} : memref<1x8xf32> {datatype = 0 : i32, id = 2 : i64, input_offset = 8 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
// CHECK:         ga.host_collective_wait %[[A]] {id = 0 : i64} : memref<12xf32>
// CHECK:         ga.host_collective_wait %[[B]] {id = 1 : i64} : memref<32xf32>
// CHECK:         ga.host_collective_wait %[[C]] {id = 2 : i64} : memref<32xf32>
func.func @host_collectives(%a: memref<12xf32>, %b: memref<32xf32>, %c: memref<32xf32>, %mine: memref<1x8xf32>) {
  ga.host_collective_start %a {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32} : memref<12xf32>
  ga.host_collective_start %b {datatype = 0 : i32, id = 1 : i64, reduction = 1 : i32, rows = 4 : i64} : memref<32xf32>
  ga.host_collective_start %c from %mine : memref<1x8xf32> {datatype = 0 : i32, id = 2 : i64, input_offset = 8 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
  ga.host_collective_wait %a {id = 0 : i64} : memref<12xf32>
  ga.host_collective_wait %b {id = 1 : i64} : memref<32xf32>
  ga.host_collective_wait %c {id = 2 : i64} : memref<32xf32>
  return
}

// A call of a function holding them is inlined (the memory report inlines
// a rank's bound step after --convert-ga-to-host-collectives).
// INLINE-LABEL: func.func @caller
// INLINE-NOT:     call
// INLINE:         ga.host_collective_start %arg0 {{.*}}id = 3 : i64
// INLINE:         ga.host_collective_wait %arg0 {id = 3 : i64}
func.func private @callee(%a: memref<12xf32>) {
  ga.host_collective_start %a {datatype = 0 : i32, id = 3 : i64, reduction = 0 : i32} : memref<12xf32>
  ga.host_collective_wait %a {id = 3 : i64} : memref<12xf32>
  return
}
func.func @caller(%a: memref<12xf32>) {
  func.call @callee(%a) : (memref<12xf32>) -> ()
  return
}
