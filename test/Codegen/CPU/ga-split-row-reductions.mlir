// RUN: ga-opt %s -ga-split-row-reductions="vector-width=256" -canonicalize | FileCheck %s
// RUN: ga-opt %s -ga-split-row-reductions="vector-width=256" -ga-vectorize-linalg="vector-width=256" -canonicalize | FileCheck %s --check-prefix=VEC
// RUN: ga-opt %s -ga-split-row-reductions="vector-width=256 parallel-rows=1" -canonicalize | FileCheck %s --check-prefix=PAR

// A row sum of exponentials (softmax's denominator), rows of 20: per row,
// 16 elements lane-wise into an 8-lane stack buffer, the lanes folded into
// the row's sum, then the last 4 elements one at a time.
// CHECK-LABEL: func.func @row_sum
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ACC:.*]] = memref.alloca() : memref<8xf32>
// CHECK:         scf.for %[[I:.*]] =
// CHECK:           %[[ROW:.*]] = memref.subview %{{.*}}[%[[I]], 0] [1, 20] [1, 1]
// CHECK:           %[[OUT:.*]] = memref.subview %{{.*}}[%[[I]]] [1] [1]
// CHECK:           linalg.fill ins(%[[ZERO]] : f32) outs(%[[ACC]] : memref<8xf32>)
// CHECK:           %[[BODY:.*]] = memref.subview %[[ROW]][0, 0] [1, 16] [1, 1]
// CHECK:           %[[CHUNKS:.*]] = memref.expand_shape %[[BODY]] {{\[\[}}0], [1, 2]] output_shape [1, 2, 8]
// CHECK:           %[[ROWS:.*]] = memref.subview %[[CHUNKS]][0, 0, 0] [1, 2, 8] [1, 1, 1] : {{.*}} to memref<2x8xf32, strided<[8, 1], offset: ?>>
// CHECK:           linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[ROWS]] : {{.*}}) outs(%[[ACC]] : memref<8xf32>)
// CHECK:             math.exp
// CHECK:             arith.addf
// CHECK:           %[[RES:.*]] = memref.subview %[[OUT]][0] [1] [1] : {{.*}} to memref<f32, strided<[], offset: ?>>
// CHECK:           linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[ACC]] : memref<8xf32>) outs(%[[RES]] : {{.*}})
// CHECK-NEXT:      ^bb0(%[[A:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:        arith.addf %[[A]], %[[S]] : f32
// CHECK:           %[[TAIL:.*]] = memref.subview %[[ROW]][0, 16] [1, 4] [1, 1]
// CHECK:           linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[TAIL]] : {{.*}}) outs(%[[OUT]] : {{.*}})
// CHECK:             math.exp

// The lane-wise part is what ga-vectorize-linalg then vectorizes: one vector
// addition per 8 elements into the lanes.
// VEC-LABEL: func.func @row_sum
// VEC:         vector.transfer_read %{{.*}} : memref<8xf32>, vector<8xf32>
// VEC:         math.exp %{{.*}} : vector<8xf32>
// VEC:         arith.addf %{{.*}} : vector<8xf32>
// VEC:         vector.transfer_write %{{.*}} : vector<8xf32>, memref<8xf32>
func.func @row_sum(%x: memref<4x20xf32>, %sum: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x20xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%v: f32, %s: f32):
    %e = math.exp %v : f32
    %a = arith.addf %e, %s : f32
    linalg.yield %a : f32
  }
  return
}

// A row maximum (linalg.reduce) with a broadcast operand read whole: the
// lanes start at -inf, the combiner is arith.maximumf; 32 = 4 x 8, no tail.
// CHECK-LABEL: func.func @row_max
// CHECK-DAG:     %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         linalg.fill ins(%[[NINF]] : f32)
// CHECK:         memref.expand_shape {{.*}} output_shape [1, 4, 8]
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]}
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]}
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @row_max(%x: memref<3x32xf32>, %m: memref<3xf32>) {
  linalg.reduce ins(%x : memref<3x32xf32>) outs(%m : memref<3xf32>) dimensions = [1]
    (%v: f32, %o: f32) {
      %r = arith.maximumf %v, %o : f32
      linalg.yield %r : f32
    }
  return
}

// A full reduction (both loops reductions, a 0-d result, the scaled sum of
// squares of a loss): the outer loop is tiled by 1 too, the new ops iterate
// over the row only.
// With parallel rows (OpenMP), the loop over the rows is an scf.parallel
// whose iteration allocates its own lane buffer.
// PAR-LABEL: func.func @row_sum
// PAR-NOT:     memref.alloca
// PAR:         scf.parallel (%[[I:.*]]) =
// PAR-NEXT:      %[[ACC:.*]] = memref.alloca() : memref<8xf32>
// PAR:           memref.subview %{{.*}}[%[[I]], 0] [1, 20] [1, 1]
// PAR:           linalg.fill ins(%{{.*}} : f32) outs(%[[ACC]] : memref<8xf32>)
// PAR:           linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} {{.*}} outs(%[[ACC]] : memref<8xf32>)

// CHECK-LABEL: func.func @sum_of_squares
// CHECK:         scf.for
// CHECK:           linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel"]}
// CHECK:           linalg.generic {{.*}}iterator_types = ["reduction"]}
// A reduction over every loop has no parallel loop: its rows are reduced
// one after the other through one buffer of the function, also with
// parallel rows.
// PAR-LABEL: func.func @sum_of_squares
// PAR:         %[[ACC:.*]] = memref.alloca() : memref<8xf32>
// PAR-NEXT:    scf.for
// PAR-NOT:       memref.alloca
// PAR:           linalg.fill {{.*}} outs(%[[ACC]] : memref<8xf32>)
func.func @sum_of_squares(%x: memref<6x24xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<6x24xf32>) outs(%s : memref<f32>) {
  ^bb0(%v: f32, %o: f32):
    %q = arith.mulf %v, %v : f32
    %a = arith.addf %q, %o : f32
    linalg.yield %a : f32
  }
  return
}

// Left alone: a row shorter than two vectors, a reduction over a strided
// (column) dimension and a payload that reads the result twice (no single
// combiner).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     memref.alloca
// CHECK-NOT:     scf.for
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @left_alone(%short: memref<4x12xf32>, %col: memref<32x4xf32>,
                      %rows: memref<4x32xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<4x12xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %v, %o : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%col : memref<32x4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %v, %o : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%col : memref<32x4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %o : f32
    %a = arith.addf %m, %o : f32
    linalg.yield %a : f32
  }
  return
}

// What element-wise fusion brings into a reduction does not change how its
// rows are summed: the lanes follow from the result's type (8 for f32, also
// with an i64 operand: a recomputed dropout mask's random bits), and an op
// that reads its loop indices (a one-hot mask fused in) is split too, its
// row index k * lanes + l in the lane-wise op and 16 + j in the tail (20 =
// 2 x 8 + 4).
// CHECK-LABEL: func.func @fused_operands
// CHECK:         memref.alloca() : memref<8xf32>
// CHECK:         scf.for
// CHECK:           linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME:        ins({{.*}}memref<2x8xf32{{.*}}memref<2x8xi64{{.*}}) outs({{.*}} : memref<8xf32>)
// CHECK:         scf.for
// CHECK:           linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK:             %[[K:.*]] = linalg.index 0 : index
// CHECK:             %[[L:.*]] = linalg.index 1 : index
// CHECK:             %[[KL:.*]] = arith.muli %[[K]], %c8
// CHECK:             arith.addi %[[KL]], %[[L]]
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME:        ins({{.*}}memref<1x4xf32
// CHECK:             %[[J:.*]] = linalg.index 1 : index
// CHECK:             arith.addi %[[J]], %c16
func.func @fused_operands(%x: memref<4x16xf32>, %bits: memref<4x16xi64>,
                          %rows: memref<4x20xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %bits : memref<4x16xf32>, memref<4x16xi64>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %b: i64, %o: f32):
    %c = arith.constant 4611686018427387904 : i64
    %keep = arith.cmpi ult, %b, %c : i64
    %z = arith.constant 0.0 : f32
    %m = arith.select %keep, %v, %z : f32
    %a = arith.addf %m, %o : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%rows : memref<4x20xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %j = linalg.index 1 : index
    %c = arith.index_cast %j : index to i32
    %f = arith.sitofp %c : i32 to f32
    %m = arith.mulf %v, %f : f32
    %a = arith.addf %m, %o : f32
    linalg.yield %a : f32
  }
  return
}

// BatchNorm's statistics over NCHW: a sum over N, H and W per channel. With
// parallel rows, the channels are the parallel loop, inside the sequential
// loop over N: each channel's iteration has its own lane buffer (one buffer
// of the function would be shared by the threads of the channels).
// Without, one buffer of the function for every row.
// CHECK-LABEL: func.func @channel_sums
// CHECK:         memref.alloca() : memref<8xf32>
// CHECK-NEXT:    scf.for
// CHECK-NOT:       memref.alloca
// PAR-LABEL: func.func @channel_sums
// PAR-NOT:     memref.alloca
// PAR:         scf.for
// PAR-NEXT:      scf.parallel
// PAR-NEXT:        %[[ACC:.*]] = memref.alloca() : memref<8xf32>
// PAR-NEXT:        scf.for
// PAR:               linalg.fill {{.*}} outs(%[[ACC]] : memref<8xf32>)
func.func @channel_sums(%x: memref<2x3x4x16xf32>, %s: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x3x4x16xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %v, %o : f32
    linalg.yield %a : f32
  }
  return
}
