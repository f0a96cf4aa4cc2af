// A deliberately WRONG "rewrite" of test/Integration/Inputs/steps/linreg_mean.mlir
// for verify-planted-errors.test: the gradient scale 2/B (B = 12) is off by
// a relative 3e-5 (0.166666672 becomes 0.166671672), a gradient scaled by a
// factor close to 1, as a wrong normalization of a remainder micro-batch
// would be. The loss keeps its 1/B; only the updated parameters move, by far
// less than 1e-4 of their magnitude: a blanket tolerance of 1e-4 misses it.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %scale = transform.structured.match ops{["arith.constant"]}
        attributes{value = 0.166666672 : f32} in %root : (!transform.any_op) -> !transform.any_op
    %wrong = transform.param.constant 0.166671672 : f32 -> !transform.any_param
    transform.annotate %scale "value" = %wrong : !transform.any_op, !transform.any_param
    transform.yield
  }
}
