// RUN: not ga-opt %s -ga-regroup-transposes="bogus=1" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: ga-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(ga-regroup-transposes))' -verify-diagnostics | FileCheck %s

// The pass has no options: anything given is refused by the option parser.
// OPT: no such option bogus

// What the rule leaves alone, without a diagnostic: each keeps its transpose.

// Heads merged back into [T, H * D] (the attention's output before its
// projection): H and D are not neighbours in [B, H, T, D], so no collapse of
// the source gives the merged dimension.
// CHECK-LABEL: func.func @heads_merged
// CHECK:         linalg.transpose ins(%arg0 : tensor<1x2x64x32xf32>)
// CHECK:         tensor.collapse_shape
func.func @heads_merged(%o: tensor<1x2x64x32xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<1x64x2x32xf32>
  %t = linalg.transpose ins(%o : tensor<1x2x64x32xf32>) outs(%e : tensor<1x64x2x32xf32>) permutation = [0, 2, 1, 3]
  %c = tensor.collapse_shape %t [[0, 1], [2, 3]] : tensor<1x64x2x32xf32> into tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

// Heads split for a batched product over [B * H]: the collapse of the source
// is [T, H, D], whose transpose puts H first; the product would read it with
// its batch dimension inside the operand, which no library layout takes, so
// the transpose stays where it was (swapping it would gain nothing).
// CHECK-LABEL: func.func @heads_split
// CHECK:         linalg.transpose ins(%arg1 : tensor<1x64x2x32xf32>)
// CHECK:         tensor.collapse_shape
func.func @heads_split(%p: tensor<2x64x64xf32>, %q: tensor<1x64x2x32xf32>, %acc: tensor<2x64x32xf32>) -> tensor<2x64x32xf32> {
  %e = tensor.empty() : tensor<1x2x64x32xf32>
  %t = linalg.transpose ins(%q : tensor<1x64x2x32xf32>) outs(%e : tensor<1x2x64x32xf32>) permutation = [0, 2, 1, 3]
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<1x2x64x32xf32> into tensor<2x64x32xf32>
  %r = linalg.batch_matmul ins(%p, %c : tensor<2x64x64xf32>, tensor<2x64x32xf32>) outs(%acc : tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  return %r : tensor<2x64x32xf32>
}

// -----

// A transpose read by something else besides the collapse: a smaller
// transpose for the product would be a second copy.
// CHECK-LABEL: func.func @other_users
// CHECK:         linalg.transpose ins(%arg1 : tensor<1x2x64x32xf32>)
// CHECK:         tensor.collapse_shape
func.func @other_users(%q: tensor<2x64x32xf32>, %k: tensor<1x2x64x32xf32>, %acc: tensor<2x64x64xf32>) -> (tensor<2x64x64xf32>, tensor<1x2x32x64xf32>) {
  %e = tensor.empty() : tensor<1x2x32x64xf32>
  %t = linalg.transpose ins(%k : tensor<1x2x64x32xf32>) outs(%e : tensor<1x2x32x64xf32>) permutation = [0, 1, 3, 2]
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<1x2x32x64xf32> into tensor<2x32x64xf32>
  %s = linalg.batch_matmul ins(%q, %c : tensor<2x64x32xf32>, tensor<2x32x64xf32>) outs(%acc : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  return %s, %t : tensor<2x64x64xf32>, tensor<1x2x32x64xf32>
}

// -----

// A smaller transpose that a product could not read without an expansion
// in between (the batch of one stays a dimension of the product).
// CHECK-LABEL: func.func @expanded_back
// CHECK:         linalg.transpose ins(%arg0 : tensor<1x1x8x4xf32>)
func.func @expanded_back(%k: tensor<1x1x8x4xf32>, %q: tensor<1x3x4xf32>, %acc: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %e = tensor.empty() : tensor<1x1x4x8xf32>
  %t = linalg.transpose ins(%k : tensor<1x1x8x4xf32>) outs(%e : tensor<1x1x4x8xf32>) permutation = [0, 1, 3, 2]
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<1x1x4x8xf32> into tensor<1x4x8xf32>
  %s = linalg.batch_matmul ins(%q, %c : tensor<1x3x4xf32>, tensor<1x4x8xf32>) outs(%acc : tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
  return %s : tensor<1x3x8xf32>
}

// -----

// Dynamic shapes and buffers are left alone.
// CHECK-LABEL: func.func @dynamic
// CHECK:         linalg.transpose
func.func @dynamic(%k: tensor<?x1x32xf32>, %e: tensor<1x?x32xf32>) -> tensor<1x?x32xf32> {
  %t = linalg.transpose ins(%k : tensor<?x1x32xf32>) outs(%e : tensor<1x?x32xf32>) permutation = [1, 0, 2]
  return %t : tensor<1x?x32xf32>
}

// -----

// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.transpose
func.func @buffers(%k: memref<64x1x32xf32>, %t: memref<1x64x32xf32>) {
  linalg.transpose ins(%k : memref<64x1x32xf32>) outs(%t : memref<1x64x32xf32>) permutation = [1, 0, 2]
  return
}
