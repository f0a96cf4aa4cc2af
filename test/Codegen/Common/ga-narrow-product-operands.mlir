// RUN: ga-opt %s -split-input-file -ga-narrow-product-operands | FileCheck %s

#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>

// Attention's scores under autocast: q and k bf16 [B, H, T, D], extended, k
// transposed (a generic that only permutes) and both collapsed to B * H
// batches; the product reads the bf16 tensors, the transpose and the
// reshapes are replayed on them, and its body extends. k's extension also
// feeds a product whose other input is f32: that one keeps it.
// CHECK-LABEL: func.func @scores(
// CHECK-SAME:      %[[Q:[^:]+]]: tensor<2x3x4x16xbf16>, %[[K:[^:]+]]: tensor<2x3x4x16xbf16>, %[[P:[^:]+]]: tensor<24x4xf32>)
// CHECK:         %[[KF:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<2x3x4x16xbf16>) outs(%{{.*}} : tensor<2x3x4x16xf32>)
// CHECK:         %[[QC:.*]] = tensor.collapse_shape %[[Q]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x16xbf16> into tensor<6x4x16xbf16>
// CHECK:         %[[KT:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<2x3x4x16xbf16>) outs(%{{.*}} : tensor<2x3x16x4xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      linalg.yield %[[IN]] : bf16
// CHECK:         %[[KTC:.*]] = tensor.collapse_shape %[[KT]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x16x4xbf16> into tensor<6x16x4xbf16>
// CHECK:         linalg.generic {{.*}} ins(%[[QC]], %[[KTC]] : tensor<6x4x16xbf16>, tensor<6x16x4xbf16>) outs(%{{.*}} : tensor<6x4x4xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[C]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         %[[KFC:.*]] = tensor.collapse_shape %[[KF]] {{\[}}[0, 1, 2], [3]]
// CHECK:         linalg.matmul ins(%[[P]], %{{.*}} : tensor<24x4xf32>, tensor<4x16xf32>)
func.func @scores(%q: tensor<2x3x4x16xbf16>, %k: tensor<2x3x4x16xbf16>, %p: tensor<24x4xf32>)
    -> (tensor<6x4x4xf32>, tensor<24x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4x16xf32>
  %qf = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x3x4x16xbf16>) outs(%e : tensor<2x3x4x16xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %x = arith.extf %a : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<2x3x4x16xf32>
  %kf = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x3x4x16xbf16>) outs(%e : tensor<2x3x4x16xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %x = arith.extf %a : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<2x3x4x16xf32>
  %et = tensor.empty() : tensor<2x3x16x4xf32>
  %kt = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, j, i)>, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kf : tensor<2x3x4x16xf32>) outs(%et : tensor<2x3x16x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x3x16x4xf32>
  %qc = tensor.collapse_shape %qf [[0, 1], [2], [3]] : tensor<2x3x4x16xf32> into tensor<6x4x16xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x3x16x4xf32> into tensor<6x16x4xf32>
  %es = tensor.empty() : tensor<6x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%es : tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<6x4x16xf32>, tensor<6x16x4xf32>) outs(%z : tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  // p @ k: p is f32, so this product keeps k's extension.
  %kr = tensor.collapse_shape %kf [[0, 1, 2], [3]] : tensor<2x3x4x16xf32> into tensor<24x16xf32>
  %pk = tensor.extract_slice %kr[0, 0] [4, 16] [1, 1] : tensor<24x16xf32> to tensor<4x16xf32>
  %ed = tensor.empty() : tensor<24x16xf32>
  %zd = linalg.fill ins(%zero : f32) outs(%ed : tensor<24x16xf32>) -> tensor<24x16xf32>
  %d = linalg.matmul ins(%p, %pk : tensor<24x4xf32>, tensor<4x16xf32>) outs(%zd : tensor<24x16xf32>) -> tensor<24x16xf32>
  return %s, %d : tensor<6x4x4xf32>, tensor<24x16xf32>
}

// -----

#id2 = affine_map<(i, j) -> (i, j)>

// Extensions of two different types (f16 and bf16): cuBLASLt takes one
// type for both operands, and the product is left as it is.
// CHECK-LABEL: func.func @mixed_types(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32>)
func.func @mixed_types(%a: tensor<4x8xf16>, %b: tensor<8x4xbf16>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<4x8xf32>
  %af = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%x: f16, %o: f32):
    %y = arith.extf %x : f16 to f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<8x4xf32>
  %bf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x4xbf16>) outs(%eb : tensor<8x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<8x4xf32>
  %ec = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = linalg.matmul ins(%af, %bf : tensor<4x8xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

#id2 = affine_map<(i, j) -> (i, j)>

// An extension that also scales is not exact: left alone.
// CHECK-LABEL: func.func @not_an_extension(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32>)
func.func @not_an_extension(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %ea = tensor.empty() : tensor<4x8xf32>
  %af = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    %s = arith.mulf %y, %half : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<8x4xf32>
  %bf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x4xbf16>) outs(%eb : tensor<8x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<8x4xf32>
  %ec = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = linalg.matmul ins(%af, %bf : tensor<4x8xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}
