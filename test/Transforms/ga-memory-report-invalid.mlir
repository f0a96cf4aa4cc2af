// RUN: ga-opt %s -split-input-file -verify-diagnostics --ga-memory-report="sweep=2" -o /dev/null
// RUN: not ga-opt %s -split-input-file --ga-memory-report="format=xml" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not ga-opt %s -split-input-file --ga-memory-report="sweep=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SWEEP
// RUN: not ga-opt %s -split-input-file --ga-memory-report="func=nope" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUNC

// FORMAT: error: --ga-memory-report: unknown format 'xml' (expected table or json)
// SWEEP: error: --ga-memory-report: sweep values must be >= 1, got 0
// FUNC: error: --ga-memory-report: no function named 'nope'

// A batch only known at run time has no static figure.
// expected-error @+1 {{memory report: the batch of 'dynamic' is only known at run time, and so are the sizes of its buffers}}
func.func @dynamic(%w: tensor<4xf32>, %x: tensor<?x4xf32> {ga.batch = 0 : i64}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i) -> (b, i)>, affine_map<(b, i) -> (i)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.addf %a, %o : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %w2 = arith.subf %w, %s : tensor<4xf32>
  return %w2 : tensor<4xf32>
}

// -----

// What the rewrite refuses is reported by the rewrite, at its location:
// here two micro-batches of a batch of one sample.
// expected-error @+1 {{micro-batches = 2 exceeds the batch size 1 of 'too_small'}}
func.func @too_small(%w: tensor<4xf32>, %x: tensor<1x4xf32> {ga.batch = 0 : i64}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i) -> (b, i)>, affine_map<(b, i) -> (i)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<1x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.addf %a, %o : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %w2 = arith.subf %w, %s : tensor<4xf32>
  return %w2 : tensor<4xf32>
}
