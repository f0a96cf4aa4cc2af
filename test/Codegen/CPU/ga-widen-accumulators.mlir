// RUN: ga-opt %s -ga-widen-accumulators -split-input-file | FileCheck %s

// A bf16 matrix product into a zero fill: the fill becomes an f32 fill of
// the extended zero, the product a generic with the same maps and
// iterators whose payload extends its inputs and accumulates in f32, and
// the result is rounded to bf16 once.

// CHECK-LABEL: func.func @matmul
// CHECK:         %[[Z:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<4x3xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%[[F]] : tensor<4x3xf32>)
// CHECK:         ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[O:.*]]: f32):
// CHECK-DAG:       %[[A32:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-DAG:       %[[B32:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK:           %[[M:.*]] = arith.mulf %[[A32]], %[[B32]] : f32
// CHECK:           %[[S:.*]] = arith.addf %[[O]], %[[M]] : f32
// CHECK:           linalg.yield %[[S]] : f32
// CHECK:         linalg.generic {{.*}} ins(%[[P]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<4x3xbf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT:     linalg.matmul
func.func @matmul(%a: tensor<4x8xbf16>, %b: tensor<8x3xbf16>) -> tensor<4x3xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x3xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x3xbf16>) -> tensor<4x3xbf16>
  %c = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x3xbf16>)
                     outs(%acc : tensor<4x3xbf16>) -> tensor<4x3xbf16>
  return %c : tensor<4x3xbf16>
}

// -----

// A sum of squares of an f16 tensor (a norm) accumulating into a function
// argument of dynamic size: the init is extended by a copy; the squares
// and the sum are f32.

// CHECK-LABEL: func.func @sum_of_squares
// CHECK:         %[[X:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?xf16>) outs(%{{.*}} : tensor<?xf32>)
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME:        ins(%{{.*}} : tensor<?x16xf16>) outs(%[[X]] : tensor<?xf32>)
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic {{.*}} ins(%[[R]] : tensor<?xf32>) outs(%{{.*}} : tensor<?xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @sum_of_squares(%x: tensor<?x16xf16>, %init: tensor<?xf16>) -> tensor<?xf16> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x16xf16>) outs(%init : tensor<?xf16>) {
  ^bb0(%v: f16, %o: f16):
    %sq = arith.mulf %v, %v : f16
    %s = arith.addf %o, %sq : f16
    linalg.yield %s : f16
  } -> tensor<?xf16>
  return %r : tensor<?xf16>
}

// -----

// A rounding the step asks for is kept: an f32 input truncated to bf16 in
// the payload stays truncated (then extended); a bf16 value extended to f32
// is the widened value itself; a bf16 constant from outside is extended.

// CHECK-LABEL: func.func @kept_rounding
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<f32>)
// CHECK:         ^bb0(%[[V:.*]]: f32, %[[O:.*]]: f32):
// CHECK:           %[[T:.*]] = arith.truncf %[[V]] : f32 to bf16
// CHECK:           %[[T32:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK:           %[[C:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:           %[[M:.*]] = arith.mulf %[[T32]], %[[C]] : f32
// CHECK:           %[[S:.*]] = arith.addf %[[O]], %[[M]] : f32
// CHECK:           linalg.yield %[[S]] : f32
func.func @kept_rounding(%x: tensor<8xf32>, %init: tensor<bf16>) -> tensor<bf16> {
  %half = arith.constant 0.5 : bf16
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%init : tensor<bf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    %m = arith.mulf %t, %half : bf16
    %s = arith.addf %o, %m : bf16
    linalg.yield %s : bf16
  } -> tensor<bf16>
  return %r : tensor<bf16>
}

// -----

// A max reduction is widened like a sum (exact either way); the i64 index
// result of an argmax-style reduction keeps its type.

// CHECK-LABEL: func.func @argmax
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi64>)
// CHECK:           arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:         arith.truncf
// CHECK:         return %{{.*}}, %[[R]]#1 : tensor<4xbf16>, tensor<4xi64>
func.func @argmax(%x: tensor<4x8xbf16>, %m: tensor<4xbf16>, %i: tensor<4xi64>) -> (tensor<4xbf16>, tensor<4xi64>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xbf16>) outs(%m, %i : tensor<4xbf16>, tensor<4xi64>) {
  ^bb0(%v: bf16, %o: bf16, %oi: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %v, %o : bf16
    %nv = arith.select %gt, %v, %o : bf16
    %ni = arith.select %gt, %ji, %oi : i64
    linalg.yield %nv, %ni : bf16, i64
  } -> (tensor<4xbf16>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xbf16>, tensor<4xi64>
}
