// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-rows=1" -cse | FileCheck %s
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-rows=1 fuse-rows-max-threads=16" -cse | FileCheck %s --check-prefix=BOUND
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops | FileCheck %s --check-prefix=OFF

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// Softmax over the 10 columns of 6 rows: the row max, the row sum of
// exp(l - max) and the division become one kernel of 6 threads. Thread i
// computes max[i] (from the -inf fill it absorbs), then sum[i] (from 0),
// then p[i, j] for every j: the operations of the three kernels, in order.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[L:.*]]: memref<6x10xf32>, %[[MAX:.*]]: memref<6xf32>, %[[SUM:.*]]: memref<6xf32>, %[[P:.*]]: memref<6x10xf32>)
// CHECK:         scf.parallel ({{.*}}) = ({{.*}}) to (%c1, %c32)
// CHECK:           scf.if
// CHECK:             %[[M:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %cst)
// CHECK:               memref.load %[[L]]
// CHECK:               arith.maximumf
// CHECK:             memref.store %[[M]], %[[MAX]][%[[I:.*]]]
// CHECK:             memref.load %[[MAX]][%[[I]]]
// CHECK:             %[[S:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %cst_0)
// CHECK:               math.exp
// CHECK:               arith.addf
// CHECK:             memref.store %[[S]], %[[SUM]][%[[I]]]
// CHECK:             scf.for %[[J:.*]] = %c0 to %c10
// CHECK:               memref.load %[[SUM]][%[[I]]]
// CHECK:               arith.divf
// CHECK:               memref.store %{{.*}}, %[[P]][%[[I]], %[[J]]]
// CHECK:         } {ga.kernel = "reduce_rows", mapping
// CHECK-NOT:     scf.parallel
// A consumer with more threads (60) than fuse-rows-max-threads keeps its own
// kernel; the two reductions (6 threads each) are still fused.
// BOUND-LABEL: func.func @softmax(
// BOUND:         ga.kernel = "reduce_rows"
// BOUND:         ga.kernel = "elementwise"
// BOUND-NEXT:    return
// Without fuse-rows: three kernels (the fills are folded into them).
// OFF-LABEL: func.func @softmax(
// OFF:         ga.kernel = "reduce"
// OFF:         ga.kernel = "reduce"
// OFF:         ga.kernel = "elementwise"
// OFF-NEXT:    return
func.func @softmax(%l: memref<6x10xf32>, %max: memref<6xf32>, %sum: memref<6xf32>,
                   %p: memref<6x10xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%max : memref<6xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<6x10xf32>) outs(%max : memref<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %o, %a : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<6xf32>)
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l, %max : memref<6x10xf32>, memref<6xf32>) outs(%sum : memref<6xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %o, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%l, %max, %sum : memref<6x10xf32>, memref<6xf32>, memref<6xf32>) outs(%p : memref<6x10xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#t = affine_map<(i, j) -> (j, i)>

// Ownership, not layout: the division reads the sums at its column j
// (thread j owns s[j] and writes column j of %x), so it joins the row sum.
// Not fused: the next row sum writes %s again (a buffer of the group), the
// bias gradient reduces over the rows (its read of the sums is not at its
// own row), and an accumulator's producer keeps its kernel.
// CHECK-LABEL: func.func @refused(
// CHECK:         scf.parallel
// CHECK:           memref.store %{{.*}}, %arg1[%[[R:.*]]]
// CHECK:           scf.for %[[I:.*]] = %c0 to %c8
// CHECK:             memref.load %arg0[%[[I]], %[[R]]]
// CHECK:             memref.load %arg1[%[[R]]]
// CHECK:             memref.store %{{.*}}, %arg2[%[[I]], %[[R]]]
// CHECK:         ga.kernel = "reduce_rows"
// CHECK:         ga.kernel = "reduce"
// CHECK:         ga.kernel = "reduce"
// CHECK:         ga.accumulates, ga.kernel = "elementwise"
// CHECK-NOT:     ga.kernel
func.func @refused(%l: memref<8x8xf32>, %s: memref<8xf32>, %x: memref<8x8xf32>,
                   %db: memref<8xf32>, %acc: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<8x8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%l, %s : memref<8x8xf32>, memref<8xf32>) outs(%x : memref<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #col], iterator_types = ["reduction", "parallel"]}
      ins(%s : memref<8xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} {ga.accumulates}
      ins(%db : memref<8xf32>) outs(%acc : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#t = affine_map<(i, j) -> (j, i)>

// The consumer overwrites the rows of %l that the row sum reads: thread i
// reads row i, then overwrites it, so the two are fused. The second row sum
// reads %m by columns into the rows %u of the same row space: a sibling,
// fused too (nothing in the group writes %m). The consumer after it
// overwrites %m by rows, which the sibling reads by columns (another
// thread's rows): not fused, and it reads %u, so the group stops there.
// Neither is a consumer separated from its reduction by a store.
// CHECK-LABEL: func.func @in_place_and_between(
// CHECK:         ga.kernel = "reduce_rows"
// CHECK:         ga.kernel = "elementwise"
// CHECK:         ga.kernel = "reduce"
// CHECK:         ga.kernel = "store"
// CHECK:         ga.kernel = "elementwise"
// CHECK-NOT:     ga.kernel
func.func @in_place_and_between(%l: memref<4x8xf32>, %s: memref<4xf32>, %y: memref<4x8xf32>,
                                %t: memref<4xf32>, %v: f32, %m: memref<4x4xf32>,
                                %u: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<4xf32>) outs(%l : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#t, #row], iterator_types = ["parallel", "reduction"]}
      ins(%m : memref<4x4xf32>) outs(%u : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%u : memref<4xf32>) outs(%m : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<4x8xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  memref.store %v, %t[%c0] : memref<4xf32>
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#diag = affine_map<(i, j) -> (j, j)>

// Not fused: the consumer reads the product's diagonal element (j, j), which
// another thread computes (its row dimensions would not be distinct).
// CHECK-LABEL: func.func @diagonal(
// CHECK:         ga.kernel = "matmul"
// CHECK:         ga.kernel = "elementwise"
// CHECK-NOT:     ga.kernel
func.func @diagonal(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>,
                    %y: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.generic {indexing_maps = [#diag, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x4xf32>) outs(%y : memref<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %o, %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// LayerNorm's weight gradient: a sum over 512 tokens into 64 outputs that
// no later op reads at its own row. One thread per output would loop over
// the 512 tokens in a chain of dependent loads; from split-reduction-min
// (default 256) on it is split, with or without fuse-rows: partial sums of
// chunks, then one kernel that adds them into the accumulator.
// CHECK-LABEL: func.func @column_sum(
// CHECK:         ga.kernel = "reduce_part"
// CHECK:         ga.kernel = "reduce"
// CHECK-NEXT:    return
// OFF-LABEL: func.func @column_sum(
// OFF:         ga.kernel = "reduce_part"
// OFF:         ga.kernel = "reduce"
// OFF-NEXT:    return
func.func @column_sum(%x: memref<512x64xf32>, %g: memref<512x64xf32>,
                      %acc: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(t, d) -> (t, d)>,
                                   affine_map<(t, d) -> (t, d)>,
                                   affine_map<(t, d) -> (d)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x, %g : memref<512x64xf32>, memref<512x64xf32>)
      outs(%acc : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row reduction as long (512) whose consumer reads it at its own row: with
// fuse-rows it heads a row kernel, which a split would cost, so it is split
// only from split-row-reduction-min (4096) on; without fuse-rows it is split.
// CHECK-LABEL: func.func @long_rows(
// CHECK:         ga.kernel = "reduce_rows"
// CHECK-NOT:     reduce_part
// CHECK:         return
// OFF-LABEL: func.func @long_rows(
// OFF:         ga.kernel = "reduce_part"
// OFF:         ga.kernel = "reduce"
// OFF:         ga.kernel = "elementwise"
// OFF-NEXT:    return
func.func @long_rows(%l: memref<8x512xf32>, %sum: memref<8xf32>,
                     %p: memref<8x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%sum : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<8x512xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%l, %sum : memref<8x512xf32>, memref<8xf32>)
      outs(%p : memref<8x512xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#red = affine_map<(i, j) -> (j)>

// LayerNorm's backward: two row sums that do not read each other (siblings
// over the same rows), the gain gradient in between (an accumulator's
// producer, a reduction over the rows: not a member), then the input
// gradient reading both sums at its row. The gain gradient reads nothing the
// group writes and writes nothing it reads: it is passed over and stays a
// kernel before the row kernel, which runs both sums and the gradient. Per
// thread: row sum 1, row sum 2, then its row of %dx.
// CHECK-LABEL: func.func @siblings_and_passed(
// CHECK:         ga.accumulates, ga.kernel = "reduce"
// CHECK:         scf.parallel
// CHECK:           memref.store %{{.*}}, %arg3[%[[R:[a-z0-9_]+]]]
// CHECK:           memref.store %{{.*}}, %arg4[%[[R]]]
// CHECK:           scf.for %[[J:.*]] = %c0 to %c16
// CHECK:             memref.store %{{.*}}, %arg6[%[[R]], %[[J]]]
// CHECK:         ga.kernel = "reduce_rows"
// CHECK-NOT:     ga.kernel
func.func @siblings_and_passed(%dy: memref<8x16xf32>, %x: memref<8x16xf32>, %g: memref<16xf32>,
                               %s1: memref<8xf32>, %s2: memref<8xf32>, %dg: memref<16xf32>,
                               %dx: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dy, %g : memref<8x16xf32>, memref<16xf32>) outs(%s1 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #red], iterator_types = ["reduction", "parallel"]}
      ins(%dy, %x : memref<8x16xf32>, memref<8x16xf32>) outs(%dg : memref<16xf32>) attrs = {ga.accumulates} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dy, %x : memref<8x16xf32>, memref<8x16xf32>) outs(%s2 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s1, %s2 : memref<8x16xf32>, memref<8xf32>, memref<8xf32>) outs(%dx : memref<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.subf %m, %c : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#red = affine_map<(i, j) -> (j)>

// Not passed over: an op between the row sum and its consumer that reads
// the sums of every row (their total) is not a member, and it would read
// sums not yet computed if the row kernel ran after it: the three ops stay
// kernels of their own, in order.
// CHECK-LABEL: func.func @not_passed(
// CHECK:         ga.kernel = "reduce"
// CHECK:         ga.kernel = "reduce"
// CHECK:         ga.kernel = "elementwise"
// CHECK-NOT:     ga.kernel
func.func @not_passed(%x: memref<8x16xf32>, %t: memref<f32>, %s: memref<8xf32>,
                      %y: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x16xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%s : memref<8xf32>) outs(%t : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<8xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
