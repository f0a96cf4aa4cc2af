// ga-opt on bad input prints a diagnostic, exits 1 and never leaves an
// output file behind (not even an empty or partial one).
//
// RUN: rm -rf %t && split-file %s %t

// Malformed IR: a located parse error.
// RUN: not ga-opt %t/malformed.mlir 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:3:27: error: expected '>' in tensor type
// RUN: not ga-opt %t/malformed.mlir -o %t/malformed.out
// RUN: not test -e %t/malformed.out

// A good split followed by a malformed one: no partial output either.
// RUN: not ga-opt %t/half.mlir -split-input-file -o %t/half.out 2>&1 | FileCheck %s --check-prefix=HALF
// HALF: half.mlir:6:4: error: expected '"' in string literal
// RUN: not test -e %t/half.out

// An op of an unknown dialect, in generic and in custom form, and an op that
// the ga dialect does not have.
// RUN: not ga-opt %t/unregistered.mlir 2>&1 | FileCheck %s --check-prefix=UNREGISTERED
// UNREGISTERED: unregistered.mlir:2:20: error: operation being parsed with an unregistered dialect
// RUN: not ga-opt %t/unknown-dialect.mlir -o %t/unknown.out 2>&1 | FileCheck %s --check-prefix=UNKNOWN-DIALECT
// UNKNOWN-DIALECT: unknown-dialect.mlir:2:3: error: Dialect `nn' not found for custom op 'nn.batch_norm'
// RUN: not test -e %t/unknown.out
// RUN: not ga-opt %t/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: unknown-op.mlir:2:8: error: custom op 'ga.scatter' is unknown

// Verifier errors fail the same way.
// RUN: not ga-opt %t/invalid.mlir -o %t/invalid.out 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: invalid.mlir:2:8: error: 'ga.all_reduce' op 'mean' needs float elements, got 'i32'
// RUN: not test -e %t/invalid.out

// Wrong pass and pipeline options.
// RUN: not ga-opt %t/good.mlir --ga-expand-accumulate=foo=1 -o %t/opt1.out 2>&1 | FileCheck %s --check-prefix=PASS-OPTION
// PASS-OPTION: error: <Pass-Options-Parser>: no such option foo
// RUN: not test -e %t/opt1.out
// RUN: not ga-opt %t/good.mlir --ga-accumulate=micro-batches=four -o %t/opt2.out 2>&1 | FileCheck %s --check-prefix=PIPELINE-OPTION
// PIPELINE-OPTION: for the --micro-batches option: 'four' value invalid
// RUN: not test -e %t/opt2.out
// RUN: not ga-opt %t/step.mlir --ga-accumulate=micro-batches=0 -o %t/opt3.out 2>&1 | FileCheck %s --check-prefix=PIPELINE-VALUE
// PIPELINE-VALUE: step.mlir:1:1: error: micro-batches must be at least 1, got 0
// RUN: not test -e %t/opt3.out
// RUN: not ga-opt %t/step.mlir --ga-accumulate=micro-batches=9 -o %t/opt4.out 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// TOO-MANY: step.mlir:1:1: error: micro-batches = 9 exceeds the batch size 8 of 'step'
// RUN: not test -e %t/opt4.out
// RUN: not ga-opt %t/good.mlir --pass-pipeline='builtin.module(ga-accumulate{micro-batches=x})' 2>&1 | FileCheck %s --check-prefix=TEXTUAL-PIPELINE
// TEXTUAL-PIPELINE: error: failed to add `ga-accumulate` with options `micro-batches=x`
// RUN: not ga-opt %t/good.mlir --pass-pipeline='builtin.module(ga-no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-PASS
// UNKNOWN-PASS: 'ga-no-such-pass' does not refer to a registered pass or pass pipeline
// RUN: not ga-opt %t/good.mlir --ga-no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN-FLAG
// UNKNOWN-FLAG: Unknown command line argument '--ga-no-such-pass'

// A pass that rejects its input: located error, exit 1, no output file.
// RUN: not ga-opt %t/good.mlir --ga-mark-batch-args="batch-args=7" -o %t/pass.out 2>&1 | FileCheck %s --check-prefix=PASS-FAILURE
// PASS-FAILURE: good.mlir:1:1: error: ga-mark-batch-args: argument index 7 is out of range (the function has 2 arguments)
// RUN: not test -e %t/pass.out

// A missing input file.
// RUN: not ga-opt %t/does-not-exist.mlir -o %t/missing.out 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// RUN: not test -e %t/missing.out

// A failing run replaces no earlier output with a partial one: the old file
// is removed rather than left looking like a result.
// RUN: echo stale > %t/stale.out
// RUN: not ga-opt %t/malformed.mlir -o %t/stale.out
// RUN: not test -e %t/stale.out

// And the good input really is good: it round-trips and writes the file.
// RUN: ga-opt %t/good.mlir -o %t/good.out
// RUN: FileCheck %s --check-prefix=GOOD --input-file=%t/good.out
// GOOD: ga.accumulate <add>

//--- malformed.mlir
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ga.accumulate <add> %x into %x : tensor<4xf32> into tensor<4xf32>
  return %0 : tensor<4xf32
}

//--- half.mlir
func.func @ok() {
  return
}
// -----
func.func @broken() {
  "
}

//--- unregistered.mlir
func.func @f() {
  %0 = "nn.softmax"() : () -> f32
  return
}

//--- unknown-dialect.mlir
func.func @f(%x: tensor<4xf32>) {
  nn.batch_norm %x : tensor<4xf32>
  return
}

//--- unknown-op.mlir
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ga.scatter %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

//--- invalid.mlir
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = ga.all_reduce <mean> %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

//--- good.mlir
func.func @f(%p: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ga.accumulate <add> %p into %acc : tensor<4xf32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}

//--- step.mlir
func.func @step(%w: tensor<3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %dw = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>],
                        iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %dw : tensor<3xf32>
}
