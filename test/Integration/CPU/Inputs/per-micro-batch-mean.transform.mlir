// A deliberately WRONG "rewrite" of test/Integration/Inputs/steps/linreg_mean.mlir
// for verify-can-fail.test: the gradient scale 2/B (B = 12) becomes 2/3, the
// classic gradient-accumulation bug of normalizing by the micro-batch size
// (B/N = 3 for N = 4) and then summing the micro-batches. The loss keeps its
// 1/B, so only the updated parameters are wrong.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %scale = transform.structured.match ops{["arith.constant"]}
        attributes{value = 0.166666672 : f32} in %root : (!transform.any_op) -> !transform.any_op
    %wrong = transform.param.constant 0.666666686 : f32 -> !transform.any_param
    transform.annotate %scale "value" = %wrong : !transform.any_op, !transform.any_param
    transform.yield
  }
}
