# RUN: env PYTHONPATH=%ga_python_path %python %s | FileCheck %s
#
# ga_mlir.run_pipeline: parse IR text, run a textual pass pipeline, return the
# text; failures raise PipelineError with located diagnostics.

import warnings

import ga_mlir

IR = """
func.func @step(%dw: tensor<4x8xbf16>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %g = ga.accumulate <add> %dw into %acc : tensor<4x8xbf16> into tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}
"""


def run(ir, pipeline):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = ga_mlir.run_pipeline(ir, pipeline)
        print(out)
        for w in caught:
            print("WARNING:", w.message)
    except ga_mlir.PipelineError as error:
        print(f"PipelineError ({len(error.diagnostics)} diagnostics):")
        print(error)
    print("// -----")


# An empty pipeline round-trips.
# CHECK-LABEL: func.func @step
# CHECK:       ga.accumulate <add> %{{.*}} into %{{.*}} : tensor<4x8xbf16> into tensor<4x8xf32>
# CHECK:       // -----
run(IR, "")

# A ga pass, unanchored; then an anchored pipeline with an upstream pass.
# CHECK-LABEL: func.func @step
# CHECK-NOT:   ga.accumulate
# CHECK:       linalg.generic
# CHECK:         arith.extf
# CHECK:         arith.addf
# CHECK:       // -----
run(IR, "ga-expand-accumulate")
# CHECK-LABEL: func.func @step
# CHECK:       linalg.generic
# CHECK:       // -----
run(IR, "builtin.module(ga-expand-accumulate,canonicalize,cse)")

# A neutral-element accumulation folds under the upstream canonicalizer.
# CHECK-LABEL: func.func @fold
# CHECK-NEXT:    return %arg0
# CHECK:       // -----
run("""
func.func @fold(%acc: tensor<4xf32>) -> tensor<4xf32> {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %0 = ga.accumulate <add> %z into %acc : tensor<4xf32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}""", "canonicalize")

# Malformed input: a located parse error.
# CHECK:      PipelineError (1 diagnostics):
# CHECK-NEXT: <input>:2:35: error: expected '=' after SSA name
# CHECK:      // -----
run("""
func.func @f(%x: tensor<4xf32>) %y) {
  return
}""", "")

# A verifier error.
# CHECK:      PipelineError (1 diagnostics):
# CHECK-NEXT: <input>:3:8: error: 'ga.all_reduce' op 'mean' needs float elements, got 'i32'
# CHECK-NEXT:   %0 = ga.all_reduce <mean> %x : tensor<4xi32>
# CHECK-NEXT:        ^
# CHECK-NEXT: // -----
run("""
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = ga.all_reduce <mean> %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}""", "")

# An unknown pass and a bad pass option.
# CHECK:      PipelineError (1 diagnostics):
# CHECK-NEXT: error: invalid pass pipeline 'ga-no-such-pass': {{.*}}'ga-no-such-pass' does not refer to a registered pass or pass pipeline
# CHECK:      // -----
run(IR, "ga-no-such-pass")
# CHECK:      PipelineError (1 diagnostics):
# CHECK-NEXT: error: invalid pass pipeline 'ga-expand-accumulate{foo=1}': {{.*}}no such option foo
# CHECK:      // -----
run(IR, "ga-expand-accumulate{foo=1}")

# A pass that fails: its located diagnostic, and no output.
# CHECK:      PipelineError (1 diagnostics):
# CHECK-NEXT: <input>:2:1: error: ga-mark-batch-args: argument index 5 is out of range (the function has 2 arguments)
# CHECK:      // -----
run(IR, "ga-mark-batch-args{batch-args=5}")

# Type errors are Python errors.
# CHECK: TypeError: run_pipeline(ir: str, pipeline: str, filename=None): got ir: bytes, pipeline: str
try:
    ga_mlir.run_pipeline(b"module {}", "")
except TypeError as error:
    print("TypeError:", error)
