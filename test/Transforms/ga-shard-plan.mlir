// RUN: echo '[{"result":0,"argument":0,"gathers_per_micro_batch":2,"gathers_outside_loops":0,"gathered_bytes":128,"scatters_per_micro_batch":1,"scatters_outside_loops":0,"scattered_bytes":128},{"result":1,"argument":1,"gathers_per_micro_batch":1,"gathers_outside_loops":0,"gathered_bytes":32,"scatters_per_micro_batch":1,"scatters_outside_loops":0,"scattered_bytes":32},{"result":2,"argument":2,"gathers_per_micro_batch":1,"gathers_outside_loops":0,"gathered_bytes":80,"scatters_per_micro_batch":1,"scatters_outside_loops":0,"scattered_bytes":80}]' > %t.json
// RUN: ga-opt %s --ga-shard-plan="costs=%t.json world=2 micro-batches=1,2,4 base-peaks=1000,800,700 bucket-size=160" -o /dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: ga-opt %s --ga-shard-plan="costs=%t.json world=2 micro-batches=1,2,4 base-peaks=1000,800,700 bucket-size=160 max-memory=800" -o /dev/null | FileCheck %s --check-prefix=TIGHT
// RUN: ga-opt %s --ga-shard-plan="costs=%t.json world=2 micro-batches=1,2,4 base-peaks=1000,800,700 bucket-size=160 max-memory=1200" -o /dev/null | FileCheck %s --check-prefix=ROOMY
// RUN: ga-opt %s --ga-shard-plan="costs=%t.json world=2 micro-batches=2 base-peaks=800 bucket-size=160 max-memory=1000" -o /dev/null | FileCheck %s --check-prefix=FIXED
// RUN: ga-opt %s --ga-shard-plan="costs=%t.json world=2 micro-batches=1,2,4 base-peaks=1000,800,700 bucket-size=0 max-memory=1200 format=json" -o /dev/null | FileCheck %s --check-prefix=JSON

// Three sharded parameters on 2 ranks, as --ga-shard-parameters' default
// plan moves them (the costs file is its plan-output): %a0 (8x4, 128 bytes)
// gathered twice per micro-batch (forward and backward), %a1 (8, 32 bytes)
// and %a2 (5x4, 80 bytes: 2 and 3 rows) once; every gradient
// reduce-scattered per micro-batch. Program order (the first all-gather)
// is %a2, %a0, %a1: with bucket-size=160 the buckets are {%a2} and {%a0,
// %a1}. The base peaks are the per-rank peaks of the default plan at
// N = 1, 2, 4.
//
// Without a budget: every bucket resharded after use, at the first N.
// DEFAULT: shard plan of @train_step: N = 1, predicted per-rank peak 1000 bytes (every bucket resharded: 1000), 608 bytes moved by 7 collectives per step; keep-gathered= reduce-after-loop=
// DEFAULT: bucket 0: arguments 2 (80 bytes): gathered per micro-batch, reduced per micro-batch: 1 all-gathers, 1 reduce-scatters, 160 bytes moved, +0 resident
// DEFAULT: bucket 1: arguments 0,1 (160 bytes): gathered per micro-batch, reduced per micro-batch: 3 all-gathers, 2 reduce-scatters, 448 bytes moved, +0 resident
//
// 800 bytes: N = 1 does not fit; at N = 2 nothing more fits (1216 bytes
// moved), at N = 4 only the second bucket's full accumulator fits
// (+64 + 16 bytes: 2432 - 480 = 1952 moved): N = 2, all resharded.
// TIGHT: N = 2, predicted per-rank peak 800 bytes (every bucket resharded: 800), 1216 bytes moved by 14 collectives per step; keep-gathered= reduce-after-loop=
//
// 1200 bytes: at N = 1 keeping {%a0, %a1} gathered (+160) saves %a0's
// second gather: 480 bytes, what deferring everything costs (2 x 240); N = 2
// reaches the same 480 with every choice taken: the smaller N wins.
// ROOMY: N = 1, predicted per-rank peak 1160 bytes (every bucket resharded: 1000), 480 bytes moved by 6 collectives per step; keep-gathered=0,1 reduce-after-loop=
// ROOMY: bucket 0: arguments 2 {{.*}} gathered per micro-batch, reduced per micro-batch
// ROOMY: bucket 1: arguments 0,1 {{.*}} gathered once, reduced per micro-batch: 2 all-gathers, 2 reduce-scatters, 320 bytes moved, +160 resident
//
// N fixed at 2, 200 bytes of room: keeping the second bucket gathered saves
// 416 bytes, more than the three other choices that fit together (240).
// FIXED: N = 2, predicted per-rank peak 960 bytes (every bucket resharded: 800), 800 bytes moved by {{[0-9]+}} collectives per step; keep-gathered=0,1 reduce-after-loop=
//
// One bucket per parameter (bucket-size=0), as JSON.
// JSON: {"base_peak":1000,"buckets":[{"all_gathers":1,"arguments":[2],
// JSON-SAME: "budget":1200,"calls":6,"function":"train_step","keep_gathered":[0],"micro_batches":1,"moved":480,"predicted_peak":1128,"reduce_after_loop":[]}

func.func @train_step(%a0: tensor<4x4xf32>, %a1: tensor<4xf32>,
                      %a2: tensor<2x4xf32>)
    -> (tensor<8x4xf32>, tensor<8xf32>, tensor<5x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e0 = tensor.empty() : tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %e2 = tensor.empty() : tensor<5x4xf32>
  %r:3 = scf.for %i = %c0 to %c2 step %c1
      iter_args(%x = %e0, %y = %e1, %z = %e2)
      -> (tensor<8x4xf32>, tensor<8xf32>, tensor<5x4xf32>) {
    %g2 = ga.all_gather %a2 shard 0 of 2 : tensor<2x4xf32> -> tensor<5x4xf32>
    %g0 = ga.all_gather %a0 shard 0 of 2 : tensor<4x4xf32> -> tensor<8x4xf32>
    %g1 = ga.all_gather %a1 shard 0 of 2 : tensor<4xf32> -> tensor<8xf32>
    scf.yield %g0, %g1, %g2 : tensor<8x4xf32>, tensor<8xf32>, tensor<5x4xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<8x4xf32>, tensor<8xf32>, tensor<5x4xf32>
}
