// RUN: ga-opt %s -ga-vectorize-linalg | FileCheck %s
// RUN: ga-opt %s -ga-vectorize-linalg="vector-width=512" | FileCheck %s --check-prefix=W512
// RUN: ga-opt %s -ga-vectorize-linalg="parallel-loops=true" | FileCheck %s --check-prefix=PAR
// RUN: ga-opt %s -ga-vectorize-linalg="vector-width=0" | FileCheck %s --check-prefix=OFF

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i)>
#tr = affine_map<(i, j) -> (j, i)>

// Bias and ReLU: one vector of 256 bits (8 x f32) per tile, the bias read
// along the same dimension; the outer loop steps by 1.
// CHECK-LABEL: func.func @bias_relu(
// CHECK-SAME:      %[[Z:.*]]: memref<64x1024xf32>, %[[BIAS:.*]]: memref<1024xf32>, %[[A:.*]]: memref<64x1024xf32>)
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-DAG:         %[[ZT:.*]] = memref.subview %[[Z]][%[[I]], %[[J]]] [1, 8] [1, 1]
// CHECK-DAG:         %[[BT:.*]] = memref.subview %[[BIAS]][%[[J]]] [8] [1]
// CHECK-DAG:         %[[AT:.*]] = memref.subview %[[A]][%[[I]], %[[J]]] [1, 8] [1, 1]
// CHECK-DAG:         %[[V:.*]] = vector.transfer_read %[[ZT]]{{.*}} {in_bounds = [true]} : memref<1x8xf32, {{.*}}>, vector<8xf32>
// CHECK-DAG:         %[[B:.*]] = vector.transfer_read %[[BT]]{{.*}} {in_bounds = [true]} : memref<8xf32, {{.*}}>, vector<8xf32>
// CHECK:             %[[S:.*]] = arith.addf %[[V]], %[[B]] : vector<8xf32>
// CHECK:             %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : vector<8xf32>
// CHECK:             vector.transfer_write %[[R]], %[[AT]]{{.*}} {in_bounds = [true]} : vector<8xf32>, memref<1x8xf32, {{.*}}>
// CHECK-NOT:     linalg.generic
// W512-LABEL: func.func @bias_relu(
// W512:         vector<16xf32>
// PAR-LABEL: func.func @bias_relu(
// PAR:         scf.parallel
// PAR:         vector.transfer_write
// OFF-LABEL: func.func @bias_relu(
// OFF:         linalg.generic
// OFF-NOT:     vector.
func.func @bias_relu(%z: memref<64x1024xf32>, %b: memref<1024xf32>,
                     %a: memref<64x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #row, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%z, %b : memref<64x1024xf32>, memref<1024xf32>)
      outs(%a : memref<64x1024xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// A bias gradient accumulated over the batch (reduction outside, parallel
// inside): vectorized along the features, accumulator read and written.
// CHECK-LABEL: func.func @column_sum(
// CHECK:         vector.transfer_read {{.*}} : memref<1x8xf32, {{.*}}>, vector<8xf32>
// CHECK:         vector.transfer_read %[[ACC:[a-z_0-9]+]][{{.*}} : memref<8xf32, {{.*}}>, vector<8xf32>
// CHECK:         %[[SUM:.*]] = arith.addf {{.*}} : vector<8xf32>
// CHECK:         vector.transfer_write %[[SUM]], %[[ACC]]{{.*}} : vector<8xf32>, memref<8xf32, {{.*}}>
// PAR-LABEL: func.func @column_sum(
// PAR:         scf.parallel
// PAR:           scf.for
func.func @column_sum(%dz: memref<64x1024xf32>, %acc: memref<1024xf32>) {
  linalg.reduce { arith.addf } ins(%dz : memref<64x1024xf32>)
                outs(%acc : memref<1024xf32>) dimensions = [0]
  return
}

// 10 classes do not fill two vectors of 8: the last tile is masked.
// CHECK-LABEL: func.func @masked_tail(
// CHECK:         scf.for
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           affine.min #{{.*}}(%[[J]])
// CHECK:           %[[M:.*]] = vector.create_mask %{{.*}} : vector<8xi1>
// CHECK:           vector.transfer_read {{.*}}, %[[M]] {in_bounds = [true]} : memref<1x?xf32, {{.*}}>, vector<8xf32>
// CHECK:           vector.transfer_write {{.*}}, %{{.*}} {in_bounds = [true]} : vector<8xf32>, memref<1x?xf32, {{.*}}>
// W512-LABEL: func.func @masked_tail(
// W512:         vector<10xf32>
func.func @masked_tail(%x: memref<64x10xf32>, %y: memref<64x10xf32>) {
  %half = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x10xf32>) outs(%y : memref<64x10xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %half : f32
    linalg.yield %m : f32
  }
  return
}

// A range shorter than one vector is taken whole; f64 halves the lanes.
// CHECK-LABEL: func.func @short_f64(
// CHECK:         vector.transfer_read {{.*}} : memref<1x3xf64, {{.*}}>, vector<3xf64>
// W512-LABEL: func.func @short_f64(
// W512:         vector<3xf64>
func.func @short_f64(%x: memref<16x3xf64>, %y: memref<16x3xf64>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x3xf64>) outs(%y : memref<16x3xf64>) {
  ^bb0(%v: f64, %o: f64):
    %e = math.exp %v : f64
    linalg.yield %e : f64
  }
  return
}

// Not contiguous along the innermost loop (a transposed read), a reduction
// innermost, and dynamic ranges: left to the scalar lowering.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     vector.
// CHECK-COUNT-3: linalg.
// CHECK-NOT:     vector.
func.func @left_alone(%x: memref<32x32xf32>, %y: memref<32x32xf32>,
                      %r: memref<32xf32>, %d: memref<?x8xf32>) {
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x32xf32>) outs(%y : memref<32x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.reduce { arith.maximumf } ins(%x : memref<32x32xf32>)
                outs(%r : memref<32xf32>) dimensions = [1]
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%d : memref<?x8xf32>) {
  ^bb0(%o: f32):
    %n = arith.negf %o : f32
    linalg.yield %n : f32
  }
  return
}

// Buffers whose elements a vector would store differently: an i1 mask (LLVM
// packs vector<8xi1> into one byte, a memref<8xi1> has a byte per element),
// written or read, and an i24 (padded to 4 bytes in memory). The f32 op
// beside them is vectorized.
// CHECK-LABEL: func.func @storage_differs(
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.*}} : memref<8xi1>)
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}} : memref<8xi1>)
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.*}} : memref<8xi24>)
// CHECK:         vector.transfer_read
// CHECK-SAME:      vector<8xf32>
func.func @storage_differs(%y: memref<8xi32>, %m: memref<8xi1>, %z: memref<8xi32>,
                           %w: memref<8xi24>, %f: memref<8xf32>) {
  %c3 = arith.constant 3 : i32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%y : memref<8xi32>) outs(%m : memref<8xi1>) {
  ^bb0(%a: i32, %o: i1):
    %ne = arith.cmpi ne, %a, %c3 : i32
    linalg.yield %ne : i1
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%m : memref<8xi1>) outs(%z : memref<8xi32>) {
  ^bb0(%b: i1, %o: i32):
    %e = arith.extui %b : i1 to i32
    linalg.yield %e : i32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%y : memref<8xi32>) outs(%w : memref<8xi24>) {
  ^bb0(%a: i32, %o: i24):
    %t = arith.trunci %a : i32 to i24
    linalg.yield %t : i24
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%f : memref<8xf32>) {
  ^bb0(%o: f32):
    %n = arith.negf %o : f32
    linalg.yield %n : f32
  }
  return
}

// An operand read whole by every lane (a broadcast) becomes a 0-d vector read,
// which the LLVM lowering handles only with static strides: a buffer with
// dynamic strides (what bufferization makes of an scf.if result) keeps the op
// scalar.
// CHECK-LABEL: func.func @dynamic_stride_broadcast(
// CHECK-NOT:     vector.
// CHECK:         linalg.generic
// CHECK-NOT:     vector.
func.func @dynamic_stride_broadcast(%s: memref<5x15xf32, strided<[?, ?], offset: ?>>,
                                    %w: memref<5x6xf32>, %o: memref<15x5x6xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (i, b)>, affine_map<(b, i, j) -> (i, j)>,
                                   affine_map<(b, i, j) -> (b, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %w : memref<5x15xf32, strided<[?, ?], offset: ?>>, memref<5x6xf32>)
      outs(%o : memref<15x5x6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// math.fpowi takes a scalar exponent in LLVM (llvm.intr.powi): vectorized, its
// exponent would be broadcast to a vector the LLVM lowering rejects, so the op
// stays scalar.
// CHECK-LABEL: func.func @fpowi(
// CHECK-NOT:     vector.
// CHECK:         math.fpowi
// CHECK-NOT:     vector.
func.func @fpowi(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c2 = arith.constant 2 : i64
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = math.fpowi %a, %c2 : f32, i64
    linalg.yield %p : f32
  }
  return
}

// The im2col copy of a 3x3 convolution (ga-convolutions-to-products): the
// input is read at `oh + kh` and `ow + kw`. Inside a tile (by 1 along every
// loop but ow) both are plain loops, so each tile reads its window of 8
// elements of a row as one vector, at unit stride (masked: the tiling
// bounds the window's view by the input's row, min(8, 10 - (ow + kw)));
// the stride-2 copy reads `ow * 2 + kw`, every other element, and stays
// scalar.
// CHECK-LABEL: func.func @im2col_windows(
// CHECK:         %[[N:.*]] = affine.min
// CHECK:         memref.subview %{{.*}} [1, 1, 1, %[[N]]] [1, 1, 1, 1] : memref<2x3x8x10xf32> to memref<1x1x1x?xf32, strided<[240, 80, 10, 1], offset: ?>>
// CHECK:         %[[MASK:.*]] = vector.create_mask %[[N]] : vector<8xi1>
// CHECK:         vector.transfer_read %{{.*}}, %{{.*}}, %[[MASK]] {in_bounds = [true]} : memref<1x1x1x?xf32, strided<[240, 80, 10, 1], offset: ?>>, vector<8xf32>
// CHECK:         vector.transfer_write {{.*}} : vector<8xf32>, memref<1x1x1x1x1x8xf32
// CHECK-NOT:     linalg.generic
// CHECK:         return
// CHECK-LABEL: func.func @im2col_stride_two(
// CHECK-NOT:     vector.
// CHECK:         linalg.generic
// CHECK-NOT:     vector.
func.func @im2col_windows(%in: memref<2x3x8x10xf32>, %col: memref<3x3x3x2x6x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>,
                                   affine_map<(c, kh, kw, n, oh, ow) -> (c, kh, kw, n, oh, ow)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%in : memref<2x3x8x10xf32>) outs(%col : memref<3x3x3x2x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @im2col_stride_two(%in: memref<2x3x9x17xf32>, %col: memref<3x3x3x2x4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(c, kh, kw, n, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>,
                                   affine_map<(c, kh, kw, n, oh, ow) -> (c, kh, kw, n, oh, ow)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%in : memref<2x3x9x17xf32>) outs(%col : memref<3x3x3x2x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// BatchNorm's per-channel scale and shift as torch-mlir broadcasts them:
// read at `(0, c, 0, 0)`. The size-1 dimensions read at 0 are dropped (a
// rank-reduced view of the channels), so the op vectorizes along w with
// the channel's values loaded one at a time and broadcast.
// CHECK-LABEL: func.func @channel_broadcast(
// CHECK-DAG:     memref.subview %{{.*}}[0, 0, 0, 0] [1, 16, 1, 1] [1, 1, 1, 1] : memref<1x16x1x1xf32> to memref<16xf32, strided<[1]>>
// CHECK-DAG:     memref.subview %{{.*}}[0, 0, 0, 0] [1, 16, 1, 1] [1, 1, 1, 1] : memref<1x16x1x1xf32> to memref<16xf32, strided<[1]>>
// CHECK:         memref.load %{{.*}} : memref<1xf32, strided<[1], offset: ?>>
// CHECK:         vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK:         arith.mulf %{{.*}} : vector<8xf32>
// CHECK:         arith.addf %{{.*}} : vector<8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @channel_broadcast(%x: memref<2x16x4x32xf32>, %scale: memref<1x16x1x1xf32>,
                             %shift: memref<1x16x1x1xf32>, %y: memref<2x16x4x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (0, c, 0, 0)>,
                                   affine_map<(n, c, h, w) -> (0, c, 0, 0)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %scale, %shift : memref<2x16x4x32xf32>, memref<1x16x1x1xf32>, memref<1x16x1x1xf32>)
      outs(%y : memref<2x16x4x32xf32>) {
  ^bb0(%a: f32, %s: f32, %t: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.addf %m, %t : f32
    linalg.yield %r : f32
  }
  return
}

// A per-sample scalar (one column of a wider buffer: a random draw of
// torchvision's stochastic depth) broadcast over the sample's features:
// every lane reads the same element, through a view whose only stride is
// not 1. A 0-d transfer of it has no vector load to lower to, so it is a
// scalar load and a broadcast.
// CHECK-LABEL: func.func @strided_column_broadcast(
// CHECK:         %[[COLUMN:.*]] = memref.subview %{{.*}} : memref<2xi64, strided<[1289], offset: 5>> to memref<1xi64, strided<[1289], offset: ?>>
// CHECK:         %[[ELEMENT:.*]] = memref.load %[[COLUMN]][%{{.*}}] : memref<1xi64, strided<[1289], offset: ?>>
// CHECK:         vector.broadcast %[[ELEMENT]] : i64 to vector<4xi64>
// CHECK-NOT:     vector<i64>
// CHECK:         return
func.func @strided_column_broadcast(%a: memref<2x1289xi64>, %out: memref<2x4x8xi64>) {
  %s = memref.subview %a[0, 5] [2, 1] [1, 1] : memref<2x1289xi64> to memref<2xi64, strided<[1289], offset: 5>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : memref<2xi64, strided<[1289], offset: 5>>) outs(%out : memref<2x4x8xi64>) {
  ^bb0(%x: i64, %o: i64):
    %y = arith.addi %x, %o : i64
    linalg.yield %y : i64
  }
  return
}
