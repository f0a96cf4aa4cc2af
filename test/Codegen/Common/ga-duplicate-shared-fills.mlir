// RUN: ga-opt %s -ga-duplicate-shared-fills | FileCheck %s --check-prefix=NEXT
// RUN: ga-opt %s -ga-duplicate-shared-fills="placement=keep-first-copy-at-user" | FileCheck %s --check-prefix=KEEP
// RUN: ga-opt %s -ga-duplicate-shared-fills="kind=fill-like" | FileCheck %s --check-prefix=LIKE

// One zero fill is the init of two reductions: each gets a fill of its own,
// right before it (the original goes).
// NEXT-LABEL: func.func @shared
// NEXT:         %[[E:.*]] = tensor.empty
// NEXT-NEXT:    %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4xf32>)
// NEXT-NEXT:    linalg.reduce ins(%{{.*}} : tensor<8x4xf32>) outs(%[[F0]] : tensor<4xf32>)
// NEXT:         %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4xf32>)
// NEXT-NEXT:    linalg.reduce ins(%{{.*}} : tensor<8x4xf32>) outs(%[[F1]] : tensor<4xf32>)

// One use keeps the original fill, the other gets a copy: still two fills.
// KEEP-LABEL: func.func @shared
// KEEP-COUNT-2: linalg.fill
// KEEP-NOT:     linalg.fill
// KEEP:         linalg.reduce ins(%{{.*}} : tensor<8x4xf32>) outs(%[[A:.*]] : tensor<4xf32>)
// KEEP:         linalg.reduce ins(%{{.*}} : tensor<8x4xf32>) outs(%[[B:.*]] : tensor<4xf32>)
func.func @shared(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.reduce ins(%x : tensor<8x4xf32>) outs(%z : tensor<4xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %b = linalg.reduce ins(%y : tensor<8x4xf32>) outs(%z : tensor<4xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// A generic that only broadcasts a scalar is a fill with kind=fill-like, not
// with the default kind=named.
// NEXT-LABEL: func.func @generic_fill
// NEXT-COUNT-1: linalg.generic
// LIKE-LABEL: func.func @generic_fill
// LIKE-COUNT-2: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// LIKE:         linalg.add
// LIKE-NOT:     linalg.generic
func.func @generic_fill(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%e : tensor<4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %c0 : f32
  } -> tensor<4xf32>
  %r = linalg.add ins(%x, %z : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
