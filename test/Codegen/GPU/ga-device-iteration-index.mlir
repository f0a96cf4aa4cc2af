// RUN: ga-opt %s -split-input-file --ga-device-iteration-index | FileCheck %s

// A kernel that reads the micro-batch's slice of a per-sample argument: the
// slice is rebuilt inside the kernel from the index buffer, which a kernel of
// one thread sets to the lower bound before the loop and one at the end of
// the body advances by the step.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME:      %[[X:[^:]+]]: memref<8x4xf32>
// CHECK:         %[[IDX:.*]] = memref.alloc() : memref<i64>
// CHECK:         scf.parallel
// CHECK:           %[[LB:.*]] = arith.index_cast %[[C1:.*]] : index to i64
// CHECK-NEXT:      memref.store %[[LB]], %[[IDX]][] : memref<i64>
// CHECK:         } {ga.kernel = "index_init", mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NEXT:    scf.for %{{.*}} = %[[C1]] to %{{.*}} step %[[STEP:[^ ]+]] {
// CHECK-NOT:       memref.subview
// CHECK-NEXT:      scf.parallel
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[IDX]][] : memref<i64>
// CHECK-NEXT:        %[[I:.*]] = arith.index_cast %[[V]] : i64 to index
// CHECK-NEXT:        %[[O:.*]] = arith.muli %[[I]], %c2 : index
// CHECK-NEXT:        %[[S:.*]] = memref.subview %[[X]][%[[O]], 0] [2, 4] [1, 1]
// CHECK-NEXT:        memref.load %[[S]][%c0, %{{.*}}]
// CHECK:           } {mapping
// CHECK:           scf.parallel
// CHECK:             %[[CUR:.*]] = memref.load %[[IDX]][] : memref<i64>
// CHECK-NEXT:        %[[INC:.*]] = arith.index_cast %[[STEP]] : index to i64
// CHECK-NEXT:        %[[NEXT:.*]] = arith.addi %[[CUR]], %[[INC]] : i64
// CHECK-NEXT:        memref.store %[[NEXT]], %[[IDX]][] : memref<i64>
// CHECK:           } {ga.kernel = "index_step", mapping = [{{.*}}]}
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @slice(%x: memref<8x4xf32>, %acc: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c1 to %c5 step %c1 {
    %o = arith.muli %i, %c2 : index
    %s = memref.subview %x[%o, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
    scf.parallel (%b, %t) = (%c0, %c0) to (%c1, %c4) step (%c1, %c1) {
      %v = memref.load %s[%c0, %t] : memref<2x4xf32, strided<[4, 1], offset: ?>>
      %a = memref.load %acc[%t] : memref<4xf32>
      %r = arith.addf %a, %v : f32
      memref.store %r, %acc[%t] : memref<4xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  }
  return
}

// -----

// A view that a library product reads: staged by a copy kernel (which
// rebuilds the slice from the index) into a buffer allocated before the
// loop, which the product then reads. The kernel that uses the
// induction variable as a scalar recomputes it too.
// CHECK-LABEL: func.func @library(
// CHECK-SAME:      %[[X:[^:]+]]: memref<8x4xf32>
// CHECK:         %[[IDX:.*]] = memref.alloc() : memref<i64>
// CHECK:         ga.kernel = "index_init"
// CHECK:         %[[FIXED:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK-NEXT:    scf.for
// CHECK:           scf.parallel
// CHECK:             %[[V:.*]] = memref.load %[[IDX]][] : memref<i64>
// CHECK-NEXT:        %[[I:.*]] = arith.index_cast %[[V]] : i64 to index
// CHECK-NEXT:        %[[O:.*]] = arith.muli %[[I]], %c2 : index
// CHECK-NEXT:        %[[S:.*]] = memref.subview %[[X]][%[[O]], 0] [2, 4] [1, 1]
// CHECK-NEXT:        %[[E:.*]] = memref.load %[[S]][%{{.*}}, %{{.*}}]
// CHECK-NEXT:        memref.store %[[E]], %[[FIXED]][%{{.*}}, %{{.*}}] : memref<2x4xf32>
// CHECK:           } {ga.kernel = "stage", mapping
// CHECK-NEXT:      ga.blas_matmul %[[FIXED]], %{{.*}}, %{{.*}} {accumulate} : memref<2x4xf32>, memref<4x4xf32>, memref<2x4xf32>
// CHECK:           scf.parallel
// CHECK:             %[[V2:.*]] = memref.load %[[IDX]][] : memref<i64>
// CHECK-NEXT:        %[[I2:.*]] = arith.index_cast %[[V2]] : i64 to index
// CHECK-NEXT:        arith.index_cast %[[I2]] : index to i32
// CHECK:           ga.kernel = "index_step"
func.func @library(%x: memref<8x4xf32>, %w: memref<4x4xf32>, %y: memref<2x4xf32>, %n: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %o = arith.muli %i, %c2 : index
    %s = memref.subview %x[%o, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
    ga.blas_matmul %s, %w, %y {accumulate} : memref<2x4xf32, strided<[4, 1], offset: ?>>, memref<4x4xf32>, memref<2x4xf32>
    scf.parallel (%b, %t) = (%c0, %c0) to (%c1, %c4) step (%c1, %c1) {
      %iv32 = arith.index_cast %i : index to i32
      memref.store %iv32, %n[%t] : memref<4xi32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  }
  return
}

// -----

// A loop whose kernels do not depend on the induction variable is left as
// it is (its body is the same in every iteration already).
// CHECK-LABEL: func.func @invariant(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     index_init
// CHECK:         scf.for
// CHECK-NOT:     index_step
// CHECK:         return
func.func @invariant(%acc: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.parallel (%b, %t) = (%c0, %c0) to (%c1, %c4) step (%c1, %c1) {
      %a = memref.load %acc[%t] : memref<4xf32>
      %r = arith.addf %a, %one : f32
      memref.store %r, %acc[%t] : memref<4xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  }
  return
}

// -----

// A kernel whose grid depends on the induction variable (a micro-batch of
// dynamic size): the body differs between iterations whatever the kernels
// read, so no graph will record it and the loop is left as it is.
// CHECK-LABEL: func.func @dynamic_grid(
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for %[[I:.*]] =
// CHECK-NEXT:      %[[M:.*]] = arith.minui %[[I]], %{{.*}}
// CHECK-NEXT:      memref.subview
// CHECK-NEXT:      scf.parallel {{.*}} to (%c1, %[[M]])
// CHECK-NOT:     index_step
func.func @dynamic_grid(%x: memref<?xf32>, %acc: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %m = arith.minui %i, %n : index
    %s = memref.subview %x[%i] [%m] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
    scf.parallel (%b, %t) = (%c0, %c0) to (%c1, %m) step (%c1, %c1) {
      %v = memref.load %s[%t] : memref<?xf32, strided<[1], offset: ?>>
      memref.store %v, %acc[%t] : memref<4xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  }
  return
}
