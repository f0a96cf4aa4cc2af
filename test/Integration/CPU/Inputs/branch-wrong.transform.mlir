// A deliberately WRONG "rewrite" of Inputs/branch_steps.mlir for
// verify-seeds.test: the scale 1/8 inside the branches becomes 1/2 (the
// micro-batch size bug of per-micro-batch normalization for N = 4).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %scale = transform.structured.match ops{["arith.constant"]}
        attributes{value = 0.125 : f32} in %root : (!transform.any_op) -> !transform.any_op
    %wrong = transform.param.constant 0.5 : f32 -> !transform.any_param
    transform.annotate %scale "value" = %wrong : !transform.any_op, !transform.any_param
    transform.yield
  }
}
