// RUN: ga-opt %s --ga-memory-report="sweep=1,4,5 format=json" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: ga-opt %s --ga-memory-report="sweep=1,4" | FileCheck %s --check-prefix=TABLE
// RUN: ga-opt %s --ga-accumulate="micro-batches=4" --ga-memory-report -o /dev/null | FileCheck %s --check-prefix=ASIS
// RUN: ga-opt %s --ga-memory-report="sweep=4 output=%t.json format=json" -o /dev/null && FileCheck %s --check-prefix=FILE < %t.json
// RUN: ga-opt %s --ga-memory-report="sweep=4 cpu={out-params=1} format=json" -o /dev/null | FileCheck %s --check-prefix=OUTPARAMS

// Linear regression with momentum, B = 12: w [8] and b are parameters (the
// forward reads them), the velocity v [8] is optimizer state (only the update
// reads it; the learning rate is a scalar, not a buffer), x [12, 8] and y [12] the inputs. Every
// allocation is 64-byte aligned by the bufferization and the lowering asks
// malloc for 64 bytes more. The report leaves the module unchanged.

// JSON:      "function": "step",
// JSON-NEXT: "micro_batches": 1,
// JSON-NEXT: "batch_size": 12,
// JSON-NEXT: "parameters": 36,
// JSON-NEXT: "optimizer_state": 32,
// JSON-NEXT: "inputs": 432,
// The full-batch step has no accumulation loop: its gradients are temporaries.
// JSON-NEXT: "accumulators": 0,
// JSON-NEXT: "results": [[RES1:[0-9]+]],
// JSON-NEXT: "temporaries": [[TMP1:[0-9]+]],
// JSON-NEXT: "recomputed": 0,
// JSON-NEXT: "static": 0,
// JSON-NEXT: "total_peak": [[PEAK1:[0-9]+]],
// JSON-NEXT: "arguments": 500,
// JSON:      "micro_batches": 4,
// JSON-NEXT: "batch_size": 12,
// JSON-NEXT: "parameters": 36,
// JSON-NEXT: "optimizer_state": 32,
// JSON-NEXT: "inputs": 432,
// dw [8] and db, in place across the micro-batches (96 + 68 bytes).
// JSON-NEXT: "accumulators": 164,
// Micro-batches of 3: the per-sample temporaries hold 3 samples, not 12.
// JSON:      "micro_batches": 5,
// B = 12 = 3 + 3 + 2 + 2 + 2: two loops, the buffers of both sizes.
// JSON:      "accumulators": 164,

// TABLE:      function  N  micro  parameters  optimizer_state  inputs  accumulators  results  temporaries  recomputed  static  total_peak
// TABLE-NEXT: @step     1     12          36               32     432             0
// TABLE-NEXT: @step     4      3          36               32     432           164
// TABLE:      func.func @step(

// A step already rewritten is reported as it is: the roles of its arguments
// come from the micro-batch loop.
// ASIS:      function  N  micro  parameters  optimizer_state  inputs  accumulators
// ASIS-NEXT: @step     -      -          36               32     432           164           96           76           0       0         836

// FILE: "micro_batches": 4,

// With out-params=1 the results are the caller's buffers (8 + 1 + 8 floats),
// arguments of the step, and the step allocates none of its own for them.
// OUTPARAMS: "results": 68,
// OUTPARAMS: "total_peak": 644,
// OUTPARAMS: "arguments": 568,

func.func @step(%w: tensor<8xf32>, %b: tensor<f32>, %v: tensor<8xf32>, %lr: f32,
                %x: tensor<12x8xf32> {ga.batch = 0 : i64},
                %y: tensor<12xf32> {ga.batch = 0 : i64})
    -> (tensor<8xf32>, tensor<f32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %mu = arith.constant 0.9 : f32
  %e_b = tensor.empty() : tensor<12xf32>
  %z_b = linalg.fill ins(%zero : f32) outs(%e_b : tensor<12xf32>) -> tensor<12xf32>
  %xw = linalg.matvec ins(%x, %w : tensor<12x8xf32>, tensor<8xf32>) outs(%z_b : tensor<12xf32>) -> tensor<12xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%xw, %b, %y : tensor<12xf32>, tensor<f32>, tensor<12xf32>) outs(%e_b : tensor<12xf32>) {
  ^bb0(%p: f32, %bb: f32, %t: f32, %o: f32):
    %s = arith.addf %p, %bb : f32
    %d = arith.subf %s, %t : f32
    linalg.yield %d : f32
  } -> tensor<12xf32>
  %e_w = tensor.empty() : tensor<8xf32>
  %z_w = linalg.fill ins(%zero : f32) outs(%e_w : tensor<8xf32>) -> tensor<8xf32>
  %dw = linalg.vecmat ins(%r, %x : tensor<12xf32>, tensor<12x8xf32>) outs(%z_w : tensor<8xf32>) -> tensor<8xf32>
  %e_s = tensor.empty() : tensor<f32>
  %z_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %db = linalg.reduce { arith.addf } ins(%r : tensor<12xf32>) outs(%z_s : tensor<f32>) dimensions = [0]
  %v2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%v, %dw : tensor<8xf32>, tensor<8xf32>) outs(%e_w : tensor<8xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %m = arith.mulf %a, %mu : f32
    %n = arith.addf %m, %g : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %w2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%w, %v2 : tensor<8xf32>, tensor<8xf32>) outs(%e_w : tensor<8xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %b2 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%b, %db : tensor<f32>, tensor<f32>) outs(%e_s : tensor<f32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %u = arith.mulf %lr, %g : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  return %w2, %b2, %v2 : tensor<8xf32>, tensor<f32>, tensor<8xf32>
}
