// RUN: ga-opt %s -ga-fuse-elementwise="recompute-shared=1 keep-product-epilogues=1" | FileCheck %s --check-prefix=KEEP
// RUN: ga-opt %s -ga-fuse-elementwise="recompute-shared=1" | FileCheck %s --check-prefix=RECOMPUTE

// x W + b read by ReLU and by ReLU's derivative. With keep-product-epilogues
// the bias add stays one op after the product (the cuBLASLt lowering makes it
// the product's bias epilogue) and both users read its result; without it,
// the add is computed again in each user and the product's result is read
// twice.
#lhs = affine_map<(i, j, k) -> (i, k)>
#rhs = affine_map<(i, j, k) -> (k, j)>
#out = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// KEEP-LABEL: func.func @bias_of_a_product
// KEEP:         %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// KEEP:         %[[Z:.*]] = linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// KEEP:           arith.addf
// KEEP:         linalg.generic {{.*}} ins(%[[Z]] : tensor<4x8xf32>)
// KEEP:           arith.maximumf
// KEEP:         linalg.generic {{.*}} ins(%{{.*}}, %[[Z]] : tensor<4x8xf32>, tensor<4x8xf32>)
// KEEP:           arith.cmpf
// KEEP-NOT:     linalg.generic
// RECOMPUTE-LABEL: func.func @bias_of_a_product
// RECOMPUTE:      %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// RECOMPUTE:      linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// RECOMPUTE:        arith.addf
// RECOMPUTE:        arith.maximumf
// RECOMPUTE:      linalg.generic {{.*}} ins(%{{.*}}, %[[P]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>)
// RECOMPUTE:        arith.addf
// RECOMPUTE:        arith.cmpf
// RECOMPUTE-NOT:  linalg.generic
func.func @bias_of_a_product(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>,
                             %g: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %z = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<4x8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %z : tensor<4x8xf32>, tensor<4x8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %pos = arith.cmpf ogt, %c, %zero : f32
    %s = arith.select %pos, %a, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r, %d : tensor<4x8xf32>, tensor<4x8xf32>
}
