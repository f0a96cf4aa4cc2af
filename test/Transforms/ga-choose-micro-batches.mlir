// RUN: ga-opt %s --ga-choose-micro-batches="micro-batch-size=5" | FileCheck %s --check-prefix=SIZE5
// RUN: ga-opt %s --ga-choose-micro-batches="micro-batch-size=12" | FileCheck %s --check-prefix=SIZE12
// RUN: ga-opt %s --ga-choose-micro-batches="micro-batch-size=100" | FileCheck %s --check-prefix=SIZE12
// RUN: ga-opt %s --ga-choose-micro-batches="micro-batch-size=1" | FileCheck %s --check-prefix=SIZE1
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=872" | FileCheck %s --check-prefix=SIZE12
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=871" | FileCheck %s --check-prefix=MEM871
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=839" | FileCheck %s --check-prefix=MEM839
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=835" | FileCheck %s --check-prefix=MEM835
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=1KiB" | FileCheck %s --check-prefix=SIZE12
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=828B" | FileCheck %s --check-prefix=MEM828
// Decimal units are powers of 1000, read exactly (0.000839 GB is 839 bytes,
// not 838.99...): the same choices as the byte counts above.
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=0.872kB" | FileCheck %s --check-prefix=SIZE12
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=0.000871MB" | FileCheck %s --check-prefix=MEM871
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=0.000000839GB" | FileCheck %s --check-prefix=MEM839
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=0.000000000872TB" | FileCheck %s --check-prefix=SIZE12
// RUN: ga-opt %s --ga-accumulate="micro-batch-size=5" | FileCheck %s --check-prefix=PIPE5
// RUN: ga-opt %s --ga-accumulate="max-memory=839" | FileCheck %s --check-prefix=PIPE839
// RUN: ga-opt %s --ga-memory-report="sweep=1,2,3,4,6,12" | FileCheck %s --check-prefix=REPORT
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=839" | FileCheck %s --check-prefix=CHOICE
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=839 recompute=none" | FileCheck %s --check-prefix=CHOICE
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=839 recompute=none" | FileCheck %s --check-prefix=COUNT839NONE
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=872" | FileCheck %s --check-prefix=COUNT872
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=871" | FileCheck %s --check-prefix=COUNT871
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=828" | FileCheck %s --check-prefix=COUNT828
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=872 reserved=1 recompute=none" | FileCheck %s --check-prefix=RESERVED
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=872 micro-batches=3" | FileCheck %s --check-prefix=FIXED3
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=776 in-place=0:0,1:1,2:2" | FileCheck %s --check-prefix=INPLACE776
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=775 in-place=0:0,1:1,2:2 roles=parameters,parameters,optimizer_state,optimizer_state,inputs,inputs" | FileCheck %s --check-prefix=INPLACE775
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=872 recompute=none cache-size=256 memory-cost=100" | FileCheck %s --check-prefix=CACHE256
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=872 recompute=none cache-size=512 memory-cost=100" | FileCheck %s --check-prefix=CACHE512
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=872 recompute=none cache-size=256 memory-cost=0" | FileCheck %s --check-prefix=NOCOST
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=872 recompute=none cache-size=0 memory-cost=100" | FileCheck %s --check-prefix=NOCACHE
// RUN: ga-opt %s --ga-choose-micro-batches="max-memory=839 recompute=none cache-size=256 verify-traffic=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: ga-opt %s --ga-accumulate="micro-batches=1" --ga-write-results-in-place="func=step pairs=0:0,1:1,2:2" --ga-memory-report="func=step_in_place" -o /dev/null | FileCheck %s --check-prefix=REPORT-INPLACE1
// RUN: ga-opt %s --ga-accumulate="micro-batches=2" --ga-write-results-in-place="func=step pairs=0:0,1:1,2:2" --ga-memory-report="func=step_in_place" -o /dev/null | FileCheck %s --check-prefix=REPORT-INPLACE2

// The step of ga-memory-report.mlir (B = 12). Its static peaks, from
// --ga-memory-report (checked against the measured heap in
// test/Integration/Memory):
// REPORT: @step   1  {{.*}}  872
// REPORT: @step   2  {{.*}}  848
// REPORT: @step   3  {{.*}}  840
// REPORT: @step   4  {{.*}}  836
// REPORT: @step   6  {{.*}}  832
// REPORT: @step  12  {{.*}}  828

// micro-batch-size=M: N = ceil(B / M); M >= B is the full batch.
// SIZE5: func.func @step({{.*}} attributes {{[{].*}}ga.micro_batches = 3 : i64{{[,}]}}
// SIZE12: func.func @step({{.*}} attributes {{[{].*}}ga.micro_batches = 1 : i64{{[,}]}}
// SIZE1: func.func @step({{.*}} attributes {{[{].*}}ga.micro_batches = 12 : i64{{[,}]}}

// max-memory: the smallest N whose peak fits (peaks are not monotonic in N:
// N = 5 needs two loops and 908 bytes, more than N = 4).
// MEM871: attributes {{[{].*}}ga.micro_batches = 2 : i64{{[,}]}}
// MEM839: attributes {{[{].*}}ga.micro_batches = 4 : i64{{[,}]}}
// MEM835: attributes {{[{].*}}ga.micro_batches = 6 : i64{{[,}]}}
// MEM828: attributes {{[{].*}}ga.micro_batches = 12 : i64{{[,}]}}

// The choice is recorded with its predicted total peak and the work the
// recomputation adds (this step has no element-wise value read twice:
// recomputing changes nothing, and costs nothing).
// CHOICE: attributes {ga.candidates_measured = {{[0-9]+}} : i64, ga.estimated_work = 475 : i64, ga.micro_batches = 4 : i64, ga.moved_bytes = 500 : i64, ga.predicted_peak = 836 : i64, ga.recompute = "none", ga.recompute_work = 0 : i64}

// The estimated time is the work plus memory-cost x the bytes read from
// beyond the cache (by default 6 per byte, and the host's cache, which
// this step fits: every N reads its 500 bytes of arguments once). This
// step's work (475 operations) does not change
// with N (the accumulation is fused into the products): the times tie, and
// ties go to the smaller N.
// Only the candidates up to the first that fits, by estimated time, are
// bufferized: each later one takes at least as long. With recompute=none that is N = 1 .. 4 at 839 bytes (not the 8
// distinct micro-batch sizes of N = 1 .. 12). With auto, the 5 sets
// (none, pointwise, attention, products, layers) have the same work here
// (nothing to recompute), so each N is weighed with every set before the
// next N: 1 candidate at 872 bytes (N = 1 fits), 5 + 1 at 871; at 828
// every N up to 12 of the first set, 36 of the 40 (set, sizes) pairs.
// COUNT839NONE: ga.candidates_measured = 4 : i64
// COUNT872: ga.candidates_measured = 1 : i64, {{.*}}ga.micro_batches = 1 : i64
// COUNT871: ga.candidates_measured = 6 : i64, {{.*}}ga.micro_batches = 2 : i64
// COUNT828: ga.candidates_measured = 36 : i64, {{.*}}ga.micro_batches = 12 : i64

// With a cache smaller than x (12x8 f32, 384 bytes), N = 1 reads x from
// memory again in the backward (vecmat), 1052 bytes in all; at N = 2 its
// slices of 192 bytes still outgrow 256 bytes with the rest of the
// micro-batch (600), and from N = 3 on only the arguments come from
// memory: with a 256-byte cache N = 3 is the fastest (its peak fits 872
// bytes), with 512 bytes N = 2, and without a cost per byte, or without a
// cache (every read from memory: each micro-batch reads w, b and v
// again), N = 1 (without a cost the traffic is not counted: 0).
// CACHE256: ga.estimated_work = 475 : i64, ga.micro_batches = 3 : i64, ga.moved_bytes = 500 : i64
// CACHE512: ga.estimated_work = 475 : i64, ga.micro_batches = 2 : i64, ga.moved_bytes = 500 : i64
// NOCOST: ga.estimated_work = 475 : i64, ga.micro_batches = 1 : i64, ga.moved_bytes = 0 : i64
// NOCACHE: ga.estimated_work = 475 : i64, ga.micro_batches = 1 : i64, ga.moved_bytes = 1216 : i64

// The traffic of every N comes from two rewrites of the set (N = 1 and
// N = B = 12) whose micro-batch loop is replayed with the sizes and trips
// of N; verify-traffic rewrites each N too and remarks both: the same
// here, with N = 5 (loops of 3 and of 2 samples) as with N = 4.
// VERIFY: N = 1, recompute=none: work [[W:[0-9]+]] modeled, [[W]] rewritten; moved 1052 bytes modeled, 1052 rewritten
// VERIFY: N = 2, recompute=none: work [[W]] modeled, [[W]] rewritten; moved 600 bytes modeled, 600 rewritten
// VERIFY: N = 4, recompute=none: work [[W]] modeled, [[W]] rewritten; moved [[M4:[0-9]+]] bytes modeled, [[M4]] rewritten
// VERIFY: N = 5, recompute=none: work [[W]] modeled, [[W]] rewritten; moved [[M5:[0-9]+]] bytes modeled, [[M5]] rewritten

// reserved=R keeps R bytes of the budget for the results' objects the
// caller allocates: N = 1 (872) no longer fits 872 with 1 byte kept, N = 2
// (848) does, and its predicted peak counts the byte.
// RESERVED: ga.micro_batches = 2 : i64, ga.moved_bytes = 500 : i64, ga.predicted_peak = 849 : i64
// micro-batches=N with max-memory fixes N; only the recompute set is
// chosen.
// FIXED3: attributes {{[{].*}}ga.micro_batches = 3 : i64, ga.moved_bytes = 500 : i64, ga.predicted_peak = 840 : i64

// With the results the library writes in place (in-place=, as the PyTorch
// frontend compiles it), a candidate is measured in that form: the new
// w, b and v take no buffers of their own (96 bytes less at every N), and
// the predicted peak is the report of the in-place step, so a budget equal
// to the report of N = 1 chooses N = 1.
// REPORT-INPLACE1: @step_in_place {{.*}} 776
// REPORT-INPLACE2: @step_in_place {{.*}} 752
// INPLACE776: attributes {{[{].*}}ga.micro_batches = 1 : i64, {{.*}}ga.predicted_peak = 776 : i64
// INPLACE775: attributes {{[{].*}}ga.micro_batches = 2 : i64, {{.*}}ga.predicted_peak = 752 : i64

// From --ga-accumulate, the rewrite runs with the chosen N and the attribute
// is gone.
// PIPE5-NOT: ga.micro_batches
// PIPE5: scf.for %{{.*}} = %c0 to %c3 step %c1
// PIPE5: tensor.extract_slice %{{.*}} [4, 8] [1, 1] : tensor<12x8xf32> to tensor<4x8xf32>
// PIPE839: scf.for %{{.*}} = %c0 to %c4 step %c1
// PIPE839: tensor.extract_slice %{{.*}} [3, 8] [1, 1] : tensor<12x8xf32> to tensor<3x8xf32>

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
