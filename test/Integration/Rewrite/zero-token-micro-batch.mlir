// RUN: ga-opt %s --ga-accumulate="micro-batches=3 func=masked_step" --ga-lower-to-cpu \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN:   | FileCheck %s

// Token-count normalization with padding: the loss and its gradient are
// divided by the number of valid tokens of the WHOLE batch. The first
// micro-batch (samples 0 and 1) has no valid token at all. The rewritten step
// (@masked_step: two loops, the token count first) must give the same loss
// and gradient as the full-batch step (@reference, the same body, not
// rewritten): no division by a micro-batch's zero count, no NaN.
// Valid tokens: 5, so loss = (1 + 2 + 3 + 2 + 1.5) / 5 and dw = (4.5, 2.5) / 5.

// CHECK:      loss ref 1.9
// CHECK-NEXT: loss ga  1.9
// CHECK-NEXT: grad ref 0.9 0.5
// CHECK-NEXT: grad ga  0.9 0.5

#tok = affine_map<(b, t, f) -> (b, t, f)>
#w = affine_map<(b, t, f) -> (f)>
#bt = affine_map<(b, t, f) -> (b, t)>
#s3 = affine_map<(b, t, f) -> ()>
#bt2 = affine_map<(b, t) -> (b, t)>
#s2 = affine_map<(b, t) -> ()>

// loss = sum_{b,t} mask (w . x_bt) / count; dloss/dw = sum mask x_bt / count.
func.func @masked_step(%w: tensor<2xf32>, %x: tensor<6x2x2xf32> {ga.batch = 0 : i64},
                       %mask: tensor<6x2xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %count_t = linalg.reduce { arith.addf } ins(%mask : tensor<6x2xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  %count = tensor.extract %count_t[] : tensor<f32>
  %ebt = tensor.empty() : tensor<6x2xf32>
  %zbt = linalg.fill ins(%zero : f32) outs(%ebt : tensor<6x2xf32>) -> tensor<6x2xf32>
  %pred = linalg.generic {indexing_maps = [#tok, #w, #bt], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<6x2x2xf32>, tensor<2xf32>) outs(%zbt : tensor<6x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<6x2xf32>
  %lsum = linalg.generic {indexing_maps = [#bt2, #bt2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%pred, %mask : tensor<6x2xf32>, tensor<6x2xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%p: f32, %m: f32, %acc: f32):
    %v = arith.mulf %p, %m : f32
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%lsum : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%l: f32, %o: f32):
    %d = arith.divf %l, %count : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  // The per-token gradient uses the global count inside per-sample math.
  %ew = tensor.empty() : tensor<2xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<2xf32>) -> tensor<2xf32>
  %dw = linalg.generic {indexing_maps = [#tok, #bt, #w], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x, %mask : tensor<6x2x2xf32>, tensor<6x2xf32>) outs(%zw : tensor<2xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %g = arith.mulf %a, %m : f32
    %gn = arith.divf %g, %count : f32
    %s = arith.addf %acc, %gn : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %loss, %dw : tensor<f32>, tensor<2xf32>
}

func.func @reference(%w: tensor<2xf32>, %x: tensor<6x2x2xf32>, %mask: tensor<6x2xf32>) -> (tensor<f32>, tensor<2xf32>) {
  %r:2 = call @masked_step_copy(%w, %x, %mask) : (tensor<2xf32>, tensor<6x2x2xf32>, tensor<6x2xf32>) -> (tensor<f32>, tensor<2xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<2xf32>
}

// The same body as @masked_step, left alone by func=masked_step.
func.func private @masked_step_copy(%w: tensor<2xf32>, %x: tensor<6x2x2xf32>, %mask: tensor<6x2xf32>) -> (tensor<f32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %count_t = linalg.reduce { arith.addf } ins(%mask : tensor<6x2xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  %count = tensor.extract %count_t[] : tensor<f32>
  %ebt = tensor.empty() : tensor<6x2xf32>
  %zbt = linalg.fill ins(%zero : f32) outs(%ebt : tensor<6x2xf32>) -> tensor<6x2xf32>
  %pred = linalg.generic {indexing_maps = [#tok, #w, #bt], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<6x2x2xf32>, tensor<2xf32>) outs(%zbt : tensor<6x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<6x2xf32>
  %lsum = linalg.generic {indexing_maps = [#bt2, #bt2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%pred, %mask : tensor<6x2xf32>, tensor<6x2xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%p: f32, %m: f32, %acc: f32):
    %v = arith.mulf %p, %m : f32
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%lsum : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%l: f32, %o: f32):
    %d = arith.divf %l, %count : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  %ew = tensor.empty() : tensor<2xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<2xf32>) -> tensor<2xf32>
  %dw = linalg.generic {indexing_maps = [#tok, #bt, #w], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x, %mask : tensor<6x2x2xf32>, tensor<6x2xf32>) outs(%zw : tensor<2xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %g = arith.mulf %a, %m : f32
    %gn = arith.divf %g, %count : f32
    %s = arith.addf %acc, %gn : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %loss, %dw : tensor<f32>, tensor<2xf32>
}

func.func @main() {
  %w = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // Sample b, token t, feature f. Samples 0 and 1 are all padding.
  %x = arith.constant dense<[[[9.0, 9.0], [9.0, 9.0]], [[9.0, 9.0], [9.0, 9.0]],
                             [[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [2.0, 0.0]],
                             [[0.5, 0.5], [3.0, 3.0]], [[2.0, 1.0], [1.0, 1.0]]]> : tensor<6x2x2xf32>
  %mask = arith.constant dense<[[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]]> : tensor<6x2xf32>
  %r:2 = call @reference(%w, %x, %mask) : (tensor<2xf32>, tensor<6x2x2xf32>, tensor<6x2xf32>) -> (tensor<f32>, tensor<2xf32>)
  %g:2 = call @masked_step(%w, %x, %mask) : (tensor<2xf32>, tensor<6x2x2xf32>, tensor<6x2xf32>) -> (tensor<f32>, tensor<2xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rl = tensor.extract %r#0[] : tensor<f32>
  %gl = tensor.extract %g#0[] : tensor<f32>
  %r0 = tensor.extract %r#1[%c0] : tensor<2xf32>
  %r1 = tensor.extract %r#1[%c1] : tensor<2xf32>
  %g0 = tensor.extract %g#1[%c0] : tensor<2xf32>
  %g1 = tensor.extract %g#1[%c1] : tensor<2xf32>
  vector.print str "loss ref "
  vector.print %rl : f32
  vector.print str "loss ga  "
  vector.print %gl : f32
  vector.print str "grad ref "
  vector.print %r0 : f32 punctuation <no_punctuation>
  vector.print str " "
  vector.print %r1 : f32
  vector.print str "grad ga  "
  vector.print %g0 : f32 punctuation <no_punctuation>
  vector.print str " "
  vector.print %g1 : f32
  return
}
