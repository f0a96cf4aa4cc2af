// Option errors of --ga-accumulate: one located line each (the error, the
// source line, a caret), exit status 1, never a dump of the module, no output
// file. A run that says nothing about N, and a module without per-sample
// arguments, are errors too.
//
// RUN: rm -rf %t && split-file %s %t
// DEFINE: %{check} = FileCheck %s --implicit-check-not="see current operation" --implicit-check-not='"func.func"' --implicit-check-not=note:
//
// RUN: not ga-opt %t/step.mlir --ga-accumulate=micro-batches=0 -o %t/out 2>&1 | %{check} --check-prefix=ZERO
// ZERO: step.mlir:1:1: error: micro-batches must be at least 1, got 0
// RUN: not test -e %t/out
//
// RUN: not ga-opt %t/step.mlir --ga-accumulate=micro-batches=9 2>&1 | %{check} --check-prefix=TOO-MANY
// TOO-MANY: step.mlir:1:1: error: micro-batches = 9 exceeds the batch size 8 of 'step': every micro-batch needs at least one sample
//
// RUN: not ga-opt %t/step.mlir --ga-accumulate="micro-batches=2 accumulator-type=f8" 2>&1 | %{check} --check-prefix=ACC-TYPE
// ACC-TYPE: step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: ga-micro-batch: accumulator-type must be one of f16, bf16, f32, f64, got 'f8'
//
// RUN: not ga-opt %t/step.mlir --ga-accumulate="micro-batches=2 func=nosuch" 2>&1 | %{check} --check-prefix=FUNC
// FUNC: step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: func=nosuch: no function with a body named 'nosuch'
//
// RUN: not ga-opt %t/step.mlir --ga-accumulate=max-memory=16 2>&1 | %{check} --check-prefix=BUDGET
// BUDGET: step.mlir:1:1: error: no number of micro-batches fits max-memory=16: the smallest static peak is {{.*}}, with N = {{[0-9]+}}; the smallest budget that fits is max-memory={{[0-9]+}} (see --ga-memory-report)
//
// RUN: not ga-opt %t/step.mlir --ga-accumulate=max-memory=lots 2>&1 | %{check} --check-prefix=BAD-BUDGET
// BAD-BUDGET: error: invalid max-memory 'lots': expected a number of bytes, optionally followed by B, KiB, MiB, GiB, TiB, kB, MB, GB or TB
//
// No N at all: refused before anything runs, as flag and as textual pipeline.
// RUN: not ga-opt %t/step.mlir --ga-accumulate -o %t/out 2>&1 | %{check} --check-prefix=NO-N
// RUN: not ga-opt %t/step.mlir --ga-accumulate="func=step" 2>&1 | %{check} --check-prefix=NO-N
// RUN: not ga-opt %t/step.mlir --pass-pipeline='builtin.module(ga-accumulate)' 2>&1 | %{check} --check-prefix=NO-N
// NO-N: error: ga-accumulate needs the number of micro-batches: micro-batches=N, micro-batch-size=M (N = ceil(B / M)) or max-memory=BYTES (the smallest N that fits), or dynamic-micro-batches=true (N at run time)
// RUN: not test -e %t/out
//
// No ga.batch argument: an error that says how to mark them, with every way
// of giving N.
// RUN: not ga-opt %t/unmarked.mlir --ga-accumulate=micro-batches=2 2>&1 | %{check} --check-prefix=UNMARKED
// RUN: not ga-opt %t/unmarked.mlir --ga-accumulate=micro-batch-size=2 2>&1 | %{check} --check-prefix=UNMARKED
// RUN: not ga-opt %t/unmarked.mlir --ga-accumulate=max-memory=1MiB 2>&1 | %{check} --check-prefix=UNMARKED
// UNMARKED: unmarked.mlir:{{[0-9]+}}:{{[0-9]+}}: error: no function has a per-sample argument: mark them with `{ga.batch = <dim>}` or name them with the option batch-args=<index>[:<dim>],... (e.g. --ga-accumulate="micro-batches=4 batch-args=1,2")
//
// And the good run works, so that the errors above are about the options.
// RUN: ga-opt %t/step.mlir --ga-accumulate=micro-batches=2 | FileCheck %s --check-prefix=GOOD
// RUN: ga-opt %t/unmarked.mlir --ga-accumulate="micro-batches=2 batch-args=1" | FileCheck %s --check-prefix=GOOD
// GOOD: scf.for

//--- step.mlir
func.func @step(%w: tensor<3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<3xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %g = linalg.reduce ins(%x : tensor<8x3xf32>) outs(%z : tensor<3xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  %w2 = arith.subf %w, %g : tensor<3xf32>
  return %w2 : tensor<3xf32>
}

//--- unmarked.mlir
func.func @step(%w: tensor<3xf32>, %x: tensor<8x3xf32>) -> tensor<3xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %g = linalg.reduce ins(%x : tensor<8x3xf32>) outs(%z : tensor<3xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  %w2 = arith.subf %w, %g : tensor<3xf32>
  return %w2 : tensor<3xf32>
}
