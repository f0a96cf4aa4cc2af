// RUN: ga-opt %s --split-input-file --ga-rematerialize="recompute=attention" | FileCheck %s --check-prefix=ATTN
// RUN: ga-opt %s --split-input-file --ga-rematerialize="recompute=layers" | FileCheck %s --check-prefix=LAYERS

// The sets derived from the forward's dataflow, on one attention head.
//
// Attention: the scores %s (8x8, from the 8x2 %q and %k) and their
// exponentials %p take more bytes than the kept values they are computed
// from, and are computed again before the backward reads %p; %q, %k, %v
// and the output %o (8x2, no larger than what it would be computed from)
// are kept. %pd is as large as %p but its only forward user is a product:
// it stays a checkpoint (without its backward user the CPU pipeline could
// fuse it into that product, which would change how it rounds).
// ATTN-LABEL:   func.func @attention
// ATTN:           %[[Q:.*]] = linalg.matmul ins(%arg0, %arg1
// ATTN:           %[[K:.*]] = linalg.matmul ins(%arg0, %arg2
// ATTN:           %[[S:.*]] = linalg.generic {{.*}}ins(%[[Q]], %[[K]] :
// ATTN:           %[[P:.*]] = linalg.generic {{.*}}ins(%[[S]] :
// ATTN:           %[[PD:.*]] = linalg.generic {{.*}}ins(%[[P]] :
// ATTN:           %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// ATTN:           %[[S2:.*]] = linalg.generic {{.*}}ins(%[[Q]], %[[K]] : {{.*}}) {{.*}}ga.recomputed
// ATTN:           %[[P2:.*]] = linalg.generic {{.*}}ins(%[[S2]] : {{.*}}) {{.*}}ga.recomputed
// ATTN:             math.exp
// ATTN:           linalg.generic {{.*}}ins(%[[P2]], %arg4
// ATTN:           linalg.matmul ins(%[[PD]], %arg4
// ATTN:           return %[[LOSS]]
//
// Layers: the input %x is live past every op up to %v, so the first
// activation alone live after its op is %q (a checkpoint, as %o is); the
// backward's reads of %p and %k are computed again from %x and %q, the
// product %k included; %pd stays a checkpoint as above.
// LAYERS-LABEL: func.func @attention
// LAYERS:         %[[Q:.*]] = linalg.matmul ins(%arg0, %arg1
// LAYERS:         %[[S:.*]] = linalg.generic {{.*}}ins(%[[Q]], %{{.*}} :
// LAYERS:         %[[P:.*]] = linalg.generic {{.*}}ins(%[[S]] :
// LAYERS:         %[[PD:.*]] = linalg.generic {{.*}}ins(%[[P]] :
// LAYERS:         %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// LAYERS:         %[[K2:.*]] = linalg.matmul {ga.recomputed} ins(%arg0, %arg2
// LAYERS:         %[[S2:.*]] = linalg.generic {{.*}}ins(%[[Q]], %[[K2]] : {{.*}}) {{.*}}ga.recomputed
// LAYERS:         %[[P2:.*]] = linalg.generic {{.*}}ins(%[[S2]] : {{.*}}) {{.*}}ga.recomputed
// LAYERS:         %[[DS:.*]] = linalg.generic {{.*}}ins(%[[P2]], %arg4
// LAYERS:         linalg.matmul ins(%[[PD]], %arg4
// LAYERS:         linalg.matmul ins(%[[DS]], %[[K2]]
// LAYERS:         return %[[LOSS]]
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
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %out, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<8x8xf32>) outs(%e88 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %pd = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<8x8xf32>) outs(%e88 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %o = linalg.matmul ins(%pd, %v : tensor<8x8xf32>, tensor<8x2xf32>)
      outs(%z82 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %s0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%o : tensor<8x2xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  // The backward: an element-wise reader of %p, a product of %pd.
  %ds = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %dp : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e88 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %dv = linalg.matmul ins(%pd, %dp : tensor<8x8xf32>, tensor<8x8xf32>)
      outs(%z88 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %dq = linalg.matmul ins(%ds, %k : tensor<8x8xf32>, tensor<8x2xf32>)
      outs(%z82 : tensor<8x2xf32>) -> tensor<8x2xf32>
  return %loss, %dv, %dq : tensor<f32>, tensor<8x8xf32>, tensor<8x2xf32>
}
