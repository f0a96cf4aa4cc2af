// RUN: ga-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(ga-isolate-library-products))' | FileCheck %s
// RUN: ga-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(linalg-morph-ops{named-to-generic},ga-isolate-library-products,ga-fuse-elementwise{recompute-shared}))' | FileCheck %s --check-prefix=FUSED

// A linear layer as PyTorch's frontends write it: the sequence and batch
// dimensions collapsed into the product's M, the weight transposed by a
// linalg.transpose, an element-wise producer (a scale) on the input and a
// bias add after the product. The transpose is absorbed (B read as [n][k])
// and the product marked. Fusion then leaves the product whole: the
// collapse stays (a view on buffers) instead of giving the product two M
// dimensions, and neither the scale nor the bias add enters it.
#id3 = affine_map<(b, s, d) -> (b, s, d)>
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// CHECK-LABEL: func.func @linear
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[A:.*]], #[[B:.*]], #[[C:.*]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%{{.*}}, %arg1 : tensor<16x4xf32>, tensor<6x4xf32>)
// CHECK:         } -> tensor<16x6xf32>
// CHECK-NEXT:    tensor.expand_shape
// FUSED-LABEL: func.func @linear
// FUSED:         linalg.generic {{.*}} ins(%arg0 : tensor<2x8x4xf32>)
// FUSED:           arith.mulf
// FUSED:         tensor.collapse_shape
// FUSED:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// FUSED-SAME:      ins(%{{.*}}, %arg1 : tensor<16x4xf32>, tensor<6x4xf32>)
// FUSED-SAME:      attrs =  {ga.library_product}
// FUSED:         tensor.expand_shape
// FUSED:         linalg.generic {{.*}} ins(%{{.*}}, %arg2 : tensor<2x8x6xf32>, tensor<6xf32>)
// FUSED:           arith.addf
func.func @linear(%x: tensor<2x8x4xf32>, %w: tensor<6x4xf32>, %bias: tensor<6xf32>) -> tensor<2x8x6xf32> {
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<2x8x4xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x4xf32>) outs(%e3 : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %half : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %flat = tensor.collapse_shape %scaled [[0, 1], [2]] : tensor<2x8x4xf32> into tensor<16x4xf32>
  %et = tensor.empty() : tensor<4x6xf32>
  %wt = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%et : tensor<4x6xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<16x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x6xf32>) -> tensor<16x6xf32>
  %p = linalg.matmul ins(%flat, %wt : tensor<16x4xf32>, tensor<4x6xf32>) outs(%z : tensor<16x6xf32>) -> tensor<16x6xf32>
  %p3 = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 8, 6] : tensor<16x6xf32> into tensor<2x8x6xf32>
  %e6 = tensor.empty() : tensor<2x8x6xf32>
  %y = linalg.generic {indexing_maps = [#id3, affine_map<(b, s, d) -> (d)>, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p3, %bias : tensor<2x8x6xf32>, tensor<6xf32>) outs(%e6 : tensor<2x8x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x8x6xf32>
  return %y : tensor<2x8x6xf32>
}

// -----

// Attention's product: heads and batch collapsed into one batch dimension
// of a batch_matmul (a strided-batched GEMM). Its key operand is a
// transpose of the two matrix dimensions, which it absorbs; a transpose of
// a batch and a matrix dimension would leave no batch stride, so the value
// operand's stays. Both products are marked.
// CHECK-LABEL: func.func @attention
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8x2xf32>, tensor<4x8x2xf32>)
// CHECK-SAME:      attrs =  {ga.library_product}
// CHECK:         %[[V:.*]] = linalg.transpose
// CHECK:         linalg.batch_matmul {ga.library_product} ins(%[[S]], %[[V]] :
func.func @attention(%q: tensor<4x8x2xf32>, %k: tensor<4x8x2xf32>, %v: tensor<8x4x2xf32>, %acc: tensor<4x8x8xf32>, %acc2: tensor<4x8x2xf32>) -> tensor<4x8x2xf32> {
  %ek = tensor.empty() : tensor<4x2x8xf32>
  %kt = linalg.transpose ins(%k : tensor<4x8x2xf32>) outs(%ek : tensor<4x2x8xf32>) permutation = [0, 2, 1]
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x8x2xf32>, tensor<4x2x8xf32>) outs(%acc : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %ev = tensor.empty() : tensor<4x8x2xf32>
  %vt = linalg.transpose ins(%v : tensor<8x4x2xf32>) outs(%ev : tensor<4x8x2xf32>) permutation = [1, 0, 2]
  %o = linalg.batch_matmul ins(%s, %vt : tensor<4x8x8xf32>, tensor<4x8x2xf32>) outs(%acc2 : tensor<4x8x2xf32>) -> tensor<4x8x2xf32>
  return %o : tensor<4x8x2xf32>
}

// -----

// A matrix-vector product is a library product (a GEMM with N = 1); a row
// sum (no second operand), a product with two M dimensions and one whose
// body is not a multiply-add are not, and are left unmarked.
// CHECK-LABEL: func.func @others
// CHECK:         linalg.matvec {ga.library_product}
// CHECK-NOT:     ga.library_product
func.func @others(%a: tensor<4x3xf32>, %x: tensor<3xf32>, %y: tensor<4xf32>, %a3: tensor<2x4x3xf32>, %w: tensor<3x5xf32>, %c3: tensor<2x4x5xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x4x5xf32>, tensor<4xf32>) {
  %mv = linalg.matvec ins(%a, %x : tensor<4x3xf32>, tensor<3xf32>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x3xf32>) outs(%y : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %two = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a3, %w : tensor<2x4x3xf32>, tensor<3x5xf32>) outs(%c3 : tensor<2x4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x5xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (k)>, affine_map<(m, k) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%a, %x : tensor<4x3xf32>, tensor<3xf32>) outs(%y : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.maximumf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %mv, %sum, %two, %max : tensor<4xf32>, tensor<4xf32>, tensor<2x4x5xf32>, tensor<4xf32>
}
