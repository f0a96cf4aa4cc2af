// RUN: ga-opt %s -split-input-file -verify-diagnostics --ga-choose-micro-batches="max-memory=100" -o /dev/null
// RUN: ga-opt %s -split-input-file -verify-diagnostics --ga-accumulate="max-memory=100" -o /dev/null
// RUN: not ga-opt %s -split-input-file --ga-accumulate="micro-batches=2 max-memory=1KiB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not ga-opt %s -split-input-file --ga-accumulate="micro-batch-size=4 max-memory=1KiB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIZE-MEM
// RUN: not ga-opt %s -split-input-file --ga-accumulate="micro-batch-size=4 dynamic-micro-batches=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DYN
// RUN: not ga-opt %s -split-input-file --ga-accumulate="max-memory=12XB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT
// RUN: not ga-opt %s -split-input-file --ga-accumulate="micro-batch-size=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches="micro-batch-size=2 func=nope" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches="max-memory=1KiB recompute=all" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SET
// SET: error: --ga-choose-micro-batches: unknown recompute set 'all' (expected auto, none, pointwise, attention, products, layers)
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches="max-memory=1KiB roles=weights,inputs" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROLE
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches="max-memory=1KiB in-place=5:0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PAIR
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches="max-memory=100 reserved=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RESERVED
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches="max-memory=100 reserved=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches="max-memory=1KiB cache-size=big" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CACHE
// RUN: not ga-opt %s -split-input-file --ga-choose-micro-batches="max-memory=1KiB memory-cost=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST
// The time model's options: a cache of bytes, a cost of at least 0.
// CACHE: error: --ga-choose-micro-batches: invalid cache-size 'big': expected a number of bytes, optionally followed by B, KiB, MiB, GiB, TiB, kB, MB, GB or TB
// COST: error: --ga-choose-micro-batches: memory-cost must be at least 0
// The candidates' form (results in place, argument classes) as the
// report's: a wrong class or pair is the error of the report or of
// --ga-write-results-in-place.
// ROLE: error: memory report: unknown argument role 'weights' (expected parameters, optimizer_state or inputs)
// PAIR: error: ga-write-results-in-place: pair 5:0 out of range: @too_large has 1 results and 2 arguments

// Contradictory or malformed options: an error, nothing written.
// micro-batches with max-memory is not a contradiction: it fixes N (only
// the recompute set is chosen); the first step fits, the dynamic one fails.
// BOTH-NOT: contradictory
// BOTH: error: max-memory needs a batch size known at compile time
// SIZE-MEM: error: contradictory options micro-batch-size=4, max-memory=1KiB
// DYN: error: contradictory options micro-batch-size=4, dynamic-micro-batches=true
// UNIT: error: invalid max-memory '12XB': expected a number of bytes, optionally followed by B, KiB, MiB, GiB, TiB, kB, MB, GB or TB
// ZERO: error: --ga-choose-micro-batches needs micro-batch-size (>= 1) or max-memory
// FUNC: error: func=nope: no function with a body named 'nope'
// The bytes kept for the returned results are part of the smallest budget
// (304 bytes of the step, 8 kept).
// RESERVED: error: no number of micro-batches fits max-memory=100: the smallest static peak is 312 bytes, with N = 1 (8 bytes of it for the returned results); the smallest budget that fits is max-memory=312
// NEGATIVE: error: --ga-choose-micro-batches: reserved=-1 is negative

// A budget below every N: the error at the step names the smallest peak.
// expected-error @+1 {{no number of micro-batches fits max-memory=100: the smallest static peak is}}
func.func @too_large(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i) -> (b, i)>, affine_map<(b, i) -> (i)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.addf %a, %o : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %w2 = arith.subf %w, %s : tensor<4xf32>
  return %w2 : tensor<4xf32>
}

// -----

// A batch only known at run time: N cannot be chosen at compile time.
// expected-error @+1 {{max-memory needs a batch size known at compile time, but the batch of 'dynamic' is only known at run time; use dynamic-micro-batches=true and pass N}}
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
