// RUN: echo '[{"result":0,"argument":0,"gathers_per_micro_batch":2,"gathers_outside_loops":0,"gathered_bytes":128,"scatters_per_micro_batch":1,"scatters_outside_loops":0,"scattered_bytes":128}]' > %t.json
// RUN: echo '[{"result":0}]' > %t.bad.json
// RUN: ga-opt %s --ga-shard-plan="costs=%t.json world=2 micro-batches=1,2 base-peaks=1000,700 max-memory=600" -verify-diagnostics -o /dev/null
// RUN: not ga-opt %s --ga-shard-plan="costs=%t.json world=2 micro-batches=1,2 base-peaks=1000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LISTS
// RUN: not ga-opt %s --ga-shard-plan="costs=%t.json world=2 micro-batches=1 base-peaks=1000 max-memory=lots" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not ga-opt %s --ga-shard-plan="costs=%t.bad.json world=2 micro-batches=1 base-peaks=1000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COSTS

// LISTS: ga-shard-plan: needs world >= 1, as many base-peaks as micro-batches
// BUDGET: invalid max-memory 'lots'
// COSTS: a row without the fields of --ga-shard-parameters' plan-output

// A per-rank budget below every candidate's default-plan peak: the error
// names the smallest budget that fits (N = 2's 700 bytes).
// expected-error@+1 {{no sharded-parameter plan fits max-memory=600 per rank: the smallest per-rank peak is 700 bytes, with N = 2 and every bucket resharded after use; a per-rank budget of at least that fits}}
func.func @train_step(%a0: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %g0 = ga.all_gather %a0 shard 0 of 2 : tensor<4x4xf32> -> tensor<8x4xf32>
  return %g0 : tensor<8x4xf32>
}
