// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-rows=1" -cse | FileCheck %s
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-rows=1" -ga-cooperative-loops-to-gpu -cse | FileCheck %s --check-prefix=LAUNCH
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-rows=1 row-warp-min=0" -cse | FileCheck %s --check-prefix=THREAD

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// Softmax over 256 rows of 64: a warp per row (rows of at least
// row-warp-min = 32, at least row-min-rows = 128 of them), 8 rows per block
// of 256 threads, 32 blocks. Each reduction: lane partials from the neutral
// element over k = lane, lane + 32, ... (coalesced), a tree of 5 halvings in
// the block-scope scratch buffer, lane 0 combines with the fill's value and
// stores; the division runs per element, lanes striding the row.
// CHECK-LABEL: func.func @softmax_warp(
// CHECK-SAME:      %[[L:.*]]: memref<256x64xf32>, %[[MAX:.*]]: memref<256xf32>, %[[SUM:.*]]: memref<256xf32>, %[[P:.*]]: memref<256x64xf32>)
// CHECK:         scf.parallel (%[[B:.*]]) = (%c0) to (%c32) step (%c1) {
// CHECK:           %[[SCR:.*]] = memref.alloc() : memref<256xf32>
// CHECK:           scf.parallel (%[[T:.*]]) = (%c0) to (%c256) step (%c1) {
// CHECK:             %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK:             scf.for %{{.*}} = %[[LANE]] to %c64 step %c32 iter_args(%{{.*}} = %cst{{.*}})
// CHECK:               memref.load %[[L]]
// CHECK:               arith.maximumf
// CHECK:             memref.store %{{.*}}, %[[SCR]][%[[T]]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:           scf.parallel
// CHECK:             arith.cmpi ult, %{{.*}}, %c16
// CHECK:             scf.if
// CHECK:               arith.maximumf
// CHECK-COUNT-4:   arith.cmpi ult, %{{.*}}, %c{{(8|4|2|1)}} :
// CHECK:           scf.parallel
// CHECK:             arith.cmpi eq, %{{.*}}, %c0
// CHECK:             scf.if
// CHECK:               arith.maximumf
// CHECK:               memref.store %{{.*}}, %[[MAX]]
// CHECK:               math.exp
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c64 step %c32
// CHECK:             arith.divf
// CHECK:             memref.store %{{.*}}, %[[P]]
// CHECK:         } {ga.cooperative, ga.kernel = "reduce_rows_warp", mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT:     ga.kernel
// On the GPU: one launch of 32 blocks of 256 threads, the scratch buffer in
// workgroup memory, barriers between the steps.
// LAUNCH-LABEL: func.func @softmax_warp(
// LAUNCH:         gpu.launch blocks({{.*}}) in (%{{[^ ]+}} = %c32, {{.*}} threads({{.*}}) in (%{{[^ ]+}} = %c256,
// LAUNCH-SAME:    workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>)
// LAUNCH:           gpu.barrier
// LAUNCH:           gpu.barrier
// LAUNCH:         ga.kernel = "reduce_rows_warp"
// LAUNCH-NOT:     scf.parallel
// row-warp-min=0: one thread per row, as before (bitwise the unfused kernels).
// THREAD-LABEL: func.func @softmax_warp(
// THREAD:         ga.kernel = "reduce_rows", mapping
// THREAD-NOT:     ga.cooperative
func.func @softmax_warp(%l: memref<256x64xf32>, %max: memref<256xf32>, %sum: memref<256xf32>,
                        %p: memref<256x64xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%max : memref<256xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<256x64xf32>) outs(%max : memref<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %o, %a : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<256xf32>)
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l, %max : memref<256x64xf32>, memref<256xf32>) outs(%sum : memref<256xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %o, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%l, %max, %sum : memref<256x64xf32>, memref<256xf32>, memref<256xf32>) outs(%p : memref<256x64xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// A row sum over 130 rows of 2048 (a vocabulary-like row), alone: a block of
// 256 threads per row (rows of at least row-block-min = 1024), never split
// although it is longer than split-row-reduction-min; 8 halvings. 130 rows
// of one block each: no bounds check on the row.
// CHECK-LABEL: func.func @long_rows(
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c130) step (%c1) {
// CHECK:           memref.alloc() : memref<256xf32>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c2048 step %c256 iter_args
// CHECK:           arith.cmpi ult, %{{.*}}, %c128 :
// CHECK:         } {ga.cooperative, ga.kernel = "reduce_rows_block"
// CHECK-NOT:     ga.kernel
// row-warp-min=0: split (partial sums, then their combination).
// THREAD-LABEL: func.func @long_rows(
// THREAD:         ga.kernel = "reduce_part"
// THREAD:         ga.kernel = "reduce"
func.func @long_rows(%l: memref<130x2048xf32>, %sum: memref<130xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<130x2048xf32>) outs(%sum : memref<130xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}
