// RUN: ga-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(ga-regroup-transposes))' | FileCheck %s
// RUN: ga-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(ga-regroup-transposes,ga-isolate-library-products,canonicalize))' | FileCheck %s --check-prefix=PRODUCT

// The heads of a key with one key-value head: [B, T, 1, D] to [B, 1, T, D]
// moves only dimensions of extent 1, so it is a reshape of the projection
// (a view on buffers), not a copy.
// CHECK-LABEL: func.func @unit_heads
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[C:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2, 3]] : tensor<1x64x1x32xf32> into tensor<64x32xf32>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 64, 32] : tensor<64x32xf32> into tensor<1x1x64x32xf32>
// CHECK:         return %[[E]]
func.func @unit_heads(%k: tensor<1x64x1x32xf32>) -> tensor<1x1x64x32xf32> {
  %e = tensor.empty() : tensor<1x1x64x32xf32>
  %t = linalg.transpose ins(%k : tensor<1x64x1x32xf32>) outs(%e : tensor<1x1x64x32xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x1x64x32xf32>
}

// -----

// The same in the generic form of a transpose (a generic that only permutes
// its input), merged back into [T, D] for a product: the collapse of the
// transpose is a collapse of the source, and no transpose is left.
// CHECK-LABEL: func.func @unit_heads_collapsed
// CHECK-NOT:     linalg.generic
// CHECK:         tensor.collapse_shape %arg0 {{\[}}[0, 1, 2, 3], [4]] : tensor<1x1x1x64x32xf32> into tensor<64x32xf32>
// CHECK:         linalg.matmul
// PRODUCT-LABEL: func.func @unit_heads_collapsed
// PRODUCT-NOT:     linalg.generic
// PRODUCT:         %[[C:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2, 3], [4]] : tensor<1x1x1x64x32xf32> into tensor<64x32xf32>
// PRODUCT:         linalg.matmul {ga.library_product} ins(%[[C]], %arg1 :
func.func @unit_heads_collapsed(%g: tensor<1x1x1x64x32xf32>, %w: tensor<32x16xf32>, %acc: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %e = tensor.empty() : tensor<1x1x64x1x32xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(a, b, c, d, f) -> (a, d, b, c, f)>, affine_map<(a, b, c, d, f) -> (a, b, c, d, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%g : tensor<1x1x1x64x32xf32>) outs(%e : tensor<1x1x64x1x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x1x64x1x32xf32>
  %c = tensor.collapse_shape %t [[0, 1, 2], [3, 4]] : tensor<1x1x64x1x32xf32> into tensor<64x32xf32>
  %r = linalg.matmul ins(%c, %w : tensor<64x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}

// -----

// The keys transposed for the scores Q K^T, collapsed over [B, H] for a
// batched product: collapsed first, the transpose is of the last two
// dimensions, which the product absorbs as a transposed operand (after
// ga-isolate-library-products no transpose is left: the product reads the
// keys).
// CHECK-LABEL: func.func @keys_for_scores
// CHECK:         %[[C:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<1x2x64x32xf32> into tensor<2x64x32xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[C]] : tensor<2x64x32xf32>) outs(%{{.*}} : tensor<2x32x64xf32>) permutation = [0, 2, 1]
// CHECK:         linalg.batch_matmul ins(%arg0, %[[T]] :
// PRODUCT-LABEL: func.func @keys_for_scores
// PRODUCT-NOT:     linalg.transpose
// PRODUCT:         %[[C:.*]] = tensor.collapse_shape %arg1
// PRODUCT:         linalg.generic {{.*}} ins(%arg0, %[[C]] : tensor<2x64x32xf32>, tensor<2x64x32xf32>)
// PRODUCT-SAME:      ga.library_product
func.func @keys_for_scores(%q: tensor<2x64x32xf32>, %k: tensor<1x2x64x32xf32>, %acc: tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  %e = tensor.empty() : tensor<1x2x32x64xf32>
  %t = linalg.transpose ins(%k : tensor<1x2x64x32xf32>) outs(%e : tensor<1x2x32x64xf32>) permutation = [0, 1, 3, 2]
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<1x2x32x64xf32> into tensor<2x32x64xf32>
  %s = linalg.batch_matmul ins(%q, %c : tensor<2x64x32xf32>, tensor<2x32x64xf32>) outs(%acc : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  return %s : tensor<2x64x64xf32>
}

