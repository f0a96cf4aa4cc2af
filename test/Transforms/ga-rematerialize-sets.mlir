// RUN: ga-opt %s --split-input-file --ga-rematerialize="recompute=attention" | FileCheck %s --check-prefix=ATTN
// RUN: ga-opt %s --split-input-file --ga-rematerialize="recompute=layers" | FileCheck %s --check-prefix=LAYERS

// The sets derived from the forward's dataflow. Attention: the scores %s
// (8x8, from the 8x2 %q and %k) and their exponentials %p take more bytes
// than the kept values they are computed from, and are computed again
// before the backward; %q, %k and the output %o (8x2, no larger than what
// it would be computed from) are kept. Layers: %q, %k, %v, %s and %p
// are no checkpoint of the forward (the input %x is live past all of
// them), %o is the one activation live after its op: the whole segment is
// computed again from %x, products included.
// ATTN-LABEL:   func.func @attention
// ATTN:           %[[Q:.*]] = linalg.matmul {{.*}}ins(%arg0, %arg1
// ATTN:           %[[K:.*]] = linalg.matmul {{.*}}ins(%arg0, %arg2
// ATTN:           %[[V:.*]] = linalg.matmul {{.*}}ins(%arg0, %arg3
// ATTN:           linalg.generic {{.*}}ins(%[[Q]], %[[K]] : {{.*}}) outs
// ATTN:           %[[O:.*]] = linalg.matmul {{.*}}ins(%{{.*}}, %[[V]]
// ATTN:           %[[LOSS:.*]] = linalg.generic {{.*}}ins(%[[O]]
// ATTN:           %[[S2:.*]] = linalg.generic {{.*}}ins(%[[Q]], %[[K]] : {{.*}}) {{.*}}ga.recomputed
// ATTN:           %[[P2:.*]] = linalg.generic {{.*}}ins(%[[S2]] : {{.*}}) {{.*}}ga.recomputed
// ATTN:             math.exp
// ATTN:           linalg.generic {{.*}}ins(%[[P2]], %arg4
// ATTN:           linalg.matmul {{.*}}ins(%[[P2]], %arg4
// ATTN-NOT:       ga.recomputed
// ATTN:           return
// LAYERS-LABEL: func.func @attention
// LAYERS:         %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// LAYERS:         %[[Q2:.*]] = linalg.matmul {{.*}}ins(%arg0, %arg1 {{.*}}ga.recomputed
// LAYERS:         %[[K2:.*]] = linalg.matmul {{.*}}ins(%arg0, %arg2 {{.*}}ga.recomputed
// LAYERS:         %[[S2:.*]] = linalg.generic {{.*}}ins(%[[Q2]], %[[K2]] : {{.*}}) {{.*}}ga.recomputed
// LAYERS:         %[[P2:.*]] = linalg.generic {{.*}}ins(%[[S2]] : {{.*}}) {{.*}}ga.recomputed
// LAYERS:         linalg.generic {{.*}}ins(%[[P2]], %arg4
#qk = affine_map<(i, j, d) -> (i, d)>
#kk = affine_map<(i, j, d) -> (j, d)>
#ss = affine_map<(i, j, d) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @attention(%x: tensor<8x4xf32> {ga.batch = 0 : i64},
                     %wq: tensor<4x2xf32>, %wk: tensor<4x2xf32>,
                     %wv: tensor<4x2xf32>, %dp: tensor<8x8xf32>)
    -> (tensor<f32>, tensor<8x8xf32>, tensor<8x2xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e82 = tensor.empty() : tensor<8x2xf32>
  %z82 = linalg.fill ins(%c0 : f32) outs(%e82 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<8x4xf32>, tensor<4x2xf32>)
      outs(%z82 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<8x4xf32>, tensor<4x2xf32>)
      outs(%z82 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<8x4xf32>, tensor<4x2xf32>)
      outs(%z82 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %e88 = tensor.empty() : tensor<8x8xf32>
  %z88 = linalg.fill ins(%c0 : f32) outs(%e88 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = linalg.generic {indexing_maps = [#qk, #kk, #ss],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<8x2xf32>, tensor<8x2xf32>) outs(%z88 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<8x8xf32>) outs(%e88 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<8x8xf32>, tensor<8x2xf32>)
      outs(%z82 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %s0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%o : tensor<8x2xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  // The backward: an element-wise reader and a product of the
  // probabilities.
  %ds = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %dp : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e88 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %dv = linalg.matmul ins(%p, %dp : tensor<8x8xf32>, tensor<8x8xf32>)
      outs(%z88 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %dq = linalg.matmul ins(%ds, %k : tensor<8x8xf32>, tensor<8x2xf32>)
      outs(%z82 : tensor<8x2xf32>) -> tensor<8x2xf32>
  return %loss, %dv, %dq : tensor<f32>, tensor<8x8xf32>, tensor<8x2xf32>
}
