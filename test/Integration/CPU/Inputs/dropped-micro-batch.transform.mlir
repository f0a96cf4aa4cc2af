// A deliberately WRONG "rewrite" of test/Integration/Inputs/steps/linreg_mean.mlir
// for verify-planted-errors.test, applied after ga-accumulate{micro-batches=4}:
// the micro-batch loop runs to 3 instead of 4 (its only use of the constant
// 4), so the last micro-batch's gradient and loss are lost while the
// normalization still divides by the whole batch.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %count = transform.structured.match ops{["arith.constant"]}
        attributes{value = 4 : index} in %root : (!transform.any_op) -> !transform.any_op
    %fewer = transform.param.constant 3 : index -> !transform.any_param
    transform.annotate %count "value" = %fewer : !transform.any_op, !transform.any_param
    transform.yield
  }
}
