// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops -cse | FileCheck %s
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="block-size=64" -cse | FileCheck %s --check-prefix=B64
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fma=1" | FileCheck %s --check-prefix=FMA
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops -convert-parallel-loops-to-gpu | FileCheck %s --check-prefix=LAUNCH

// A weight gradient accumulated in place (dW += X^T dY, the reduction over the
// 6 samples of a micro-batch): one mapped loop over the 16x32 elements of dW,
// the column (contiguous in dW) fastest; each thread reads its element of the
// accumulator once, sums the micro-batch in a register and writes once.
// CHECK-LABEL: func.func @weight_grad(
// CHECK-SAME:      %[[XT:.*]]: memref<16x6xf32>, %[[DY:.*]]: memref<6x32xf32>, %[[ACC:.*]]: memref<16x32xf32>)
// CHECK:         scf.parallel (%[[B:.*]], %[[T:.*]]) = (%{{.*}}, %{{.*}}) to (%c2, %c256)
// CHECK:           %[[LIN:.*]] = arith.addi
// CHECK-NEXT:      %[[J:.*]] = arith.remui %[[LIN]], %c32
// CHECK-NEXT:      %[[I:.*]] = arith.divui %[[LIN]], %c32
// CHECK-NEXT:      %[[INIT:.*]] = memref.load %[[ACC]][%[[I]], %[[J]]]
// CHECK-NEXT:      %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c6 step %{{.*}} iter_args(%[[S:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        memref.load %[[XT]][%[[I]], %[[K]]]
// CHECK-NEXT:        memref.load %[[DY]][%[[K]], %[[J]]]
// CHECK-NEXT:        arith.mulf
// CHECK-NEXT:        arith.addf %[[S]]
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[SUM]], %[[ACC]][%[[I]], %[[J]]]
// CHECK-NOT:       memref.store
// CHECK:         } {ga.accumulates, ga.kernel = "matmul", mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// B64-LABEL: func.func @weight_grad(
// B64:         scf.parallel ({{.*}}) = ({{.*}}) to (%c8, %c64)
func.func @weight_grad(%xt: memref<16x6xf32>, %dy: memref<6x32xf32>, %acc: memref<16x32xf32>) {
  linalg.matmul {ga.accumulates} ins(%xt, %dy : memref<16x6xf32>, memref<6x32xf32>)
                outs(%acc : memref<16x32xf32>)
  return
}

// -----

// A bias gradient (sum over the micro-batch, dimension 0): parallel over the
// 10 outputs (one block of 32 threads, a bounds check), the samples in the
// thread, not one kernel per sample.
// CHECK-LABEL: func.func @bias_grad(
// CHECK-SAME:      %[[DY:.*]]: memref<6x10xf32>, %[[DB:.*]]: memref<10xf32>)
// CHECK:         scf.parallel ({{.*}}) = ({{.*}}) to (%c1, %c32)
// CHECK:           %[[LIN:.*]] = arith.addi
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %c10
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK-NEXT:        %[[INIT:.*]] = memref.load %[[DB]][%[[LIN]]]
// CHECK-NEXT:        %[[SUM:.*]] = scf.for %[[K:.*]] = {{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// CHECK-NEXT:          memref.load %[[DY]][%[[K]], %[[LIN]]]
// CHECK:             memref.store %[[SUM]], %[[DB]][%[[LIN]]]
// CHECK:         } {ga.kernel = "reduce", mapping
// CHECK-NOT:     scf.parallel
func.func @bias_grad(%dy: memref<6x10xf32>, %db: memref<10xf32>) {
  linalg.reduce ins(%dy : memref<6x10xf32>) outs(%db : memref<10xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// The loss of a micro-batch summed into a 0-d accumulator: one thread.
// CHECK-LABEL: func.func @loss_sum(
// CHECK:         scf.parallel ({{.*}}) = ({{.*}}) to (%c1, %c32)
// CHECK:           arith.cmpi ult, %{{.*}}, %c1
// CHECK:           memref.load %{{.*}}[] : memref<f32>
// CHECK:           scf.for
// CHECK:           memref.store %{{.*}}[] : memref<f32>
// CHECK:         } {ga.kernel = "reduce", mapping
func.func @loss_sum(%l: memref<6xf32>, %acc: memref<f32>) {
  linalg.reduce ins(%l : memref<6xf32>) outs(%acc : memref<f32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Coalescing follows the output: a transpose stores along the contiguous
// dimension of %b (size 6) and reads %a with a stride.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:      %[[A:.*]]: memref<6x10xf32>, %[[B:.*]]: memref<10x6xf32>)
// CHECK:         %[[C:.*]] = arith.remui %{{.*}}, %c6
// CHECK-NEXT:    %[[R:.*]] = arith.divui %{{.*}}, %c6
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[A]][%[[C]], %[[R]]]
// CHECK-NEXT:    memref.store %[[V]], %[[B]][%[[R]], %[[C]]]
func.func @transpose(%a: memref<6x10xf32>, %b: memref<10x6xf32>) {
  linalg.transpose ins(%a : memref<6x10xf32>) outs(%b : memref<10x6xf32>) permutation = [1, 0]
  return
}

// -----

// A fill of the output that the next op overwrites is folded into it: one
// kernel that starts from 0 instead of a fill kernel plus a read.
// CHECK-LABEL: func.func @fill_folded(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT:     linalg.fill
// CHECK:         scf.parallel
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32)
// CHECK:         } {ga.kernel = "matmul"
// CHECK-NOT:     scf.parallel
func.func @fill_folded(%a: memref<6x16xf32>, %w: memref<16x32xf32>, %out: memref<6x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<6x32xf32>)
  linalg.matmul ins(%a, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%out : memref<6x32xf32>)
  return
}

// -----

// The same fill read by something else before the overwrite stays a kernel.
// CHECK-LABEL: func.func @fill_read_in_between(
// CHECK:         scf.parallel
// CHECK:         } {ga.kernel = "fill"
// CHECK:         } {ga.kernel = "copy"
// CHECK:         } {ga.kernel = "matmul"
func.func @fill_read_in_between(%a: memref<6x16xf32>, %w: memref<16x32xf32>, %out: memref<6x32xf32>, %keep: memref<6x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<6x32xf32>)
  memref.copy %out, %keep : memref<6x32xf32> to memref<6x32xf32>
  linalg.matmul ins(%a, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%out : memref<6x32xf32>)
  return
}

// -----

// A 0-d device value feeding scalar math feeding a kernel (a clipping factor
// from a gradient norm): the load and the math move into the kernel.
// CHECK-LABEL: func.func @sink(
// CHECK-SAME:      %[[N:.*]]: memref<f32>,
// CHECK:         scf.parallel
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[N]][] : memref<f32>
// CHECK-NEXT:      %[[S:.*]] = math.sqrt %[[V]] : f32
// CHECK:           arith.mulf %{{.*}}, %[[S]] : f32
func.func @sink(%n: memref<f32>, %p: memref<32xf32>, %q: memref<32xf32>) {
  %v = memref.load %n[] : memref<f32>
  %s = math.sqrt %v : f32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%p : memref<32xf32>) outs(%q : memref<32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A 0-d device value the host itself needs (a scalar result) is read back
// through a host buffer (a device-to-host copy after the GPU lowering).
// CHECK-LABEL: func.func @read_back(
// CHECK-SAME:      %[[N:.*]]: memref<f32>) -> f32
// CHECK-NEXT:    %[[H:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:    memref.copy %[[N]], %[[H]]
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[H]][]
// CHECK-NEXT:    return %[[V]]
func.func @read_back(%n: memref<f32>) -> f32 {
  %v = memref.load %n[] : memref<f32>
  return %v : f32
}

// -----

// Dynamic sizes: the grid is computed at run time, every thread checks bounds.
// CHECK-LABEL: func.func @copy_dynamic(
// CHECK:         %[[D:.*]] = memref.dim %{{.*}}, %c1
// CHECK:         %[[N:.*]] = arith.muli %c4, %[[D]]
// CHECK:         %[[G:.*]] = arith.ceildivui %[[N]], %c256
// CHECK:         scf.parallel ({{.*}}) = ({{.*}}) to (%[[G]], %c256)
// CHECK:           arith.cmpi ult, %{{.*}}, %[[N]]
// CHECK:         } {ga.kernel = "copy"
func.func @copy_dynamic(%a: memref<4x?xf32>, %b: memref<4x?xf32>) {
  memref.copy %a, %b : memref<4x?xf32> to memref<4x?xf32>
  return
}

// -----

// linalg.index and a gather inside the payload (an embedding lookup).
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[TOK:.*]]: memref<6xi64>, %[[EMB:.*]]: memref<20x16xf32>, %[[OUT:.*]]: memref<6x16xf32>)
// CHECK:         %[[C:.*]] = arith.remui %{{.*}}, %c16
// CHECK-NEXT:    %[[R:.*]] = arith.divui %{{.*}}, %c16
// CHECK-NEXT:    %[[T:.*]] = memref.load %[[TOK]][%[[R]]]
// CHECK-NEXT:    %[[TI:.*]] = arith.index_cast %[[T]]
// CHECK-NEXT:    %[[E:.*]] = memref.load %[[EMB]][%[[TI]], %[[C]]]
// CHECK-NEXT:    memref.store %[[E]], %[[OUT]][%[[R]], %[[C]]]
func.func @gather(%tok: memref<6xi64>, %emb: memref<20x16xf32>, %out: memref<6x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, d) -> (b)>, affine_map<(b, d) -> (b, d)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tok : memref<6xi64>) outs(%out : memref<6x16xf32>) {
  ^bb0(%t: i64, %o: f32):
    %d = linalg.index 1 : index
    %ti = arith.index_cast %t : i64 to index
    %e = memref.load %emb[%ti, %d] : memref<20x16xf32>
    linalg.yield %e : f32
  }
  return
}

// -----

// A contraction with a long enough reduction (gemm-min-reduction, default 64)
// becomes a block-cooperative loop (ga.cooperative): 16x16 threads per block,
// one block per 16x16 tile of the output; tiles of both operands staged in
// block-scope buffers (shared memory on the GPU, padded to 17 columns), the
// running values in a third one, read from the accumulator once and written
// back once. dW = X^T dY with X stored (k, i): the thread index along the
// contiguous dimension (tx) walks i there, k for dY (coalesced loads).
// CHECK-LABEL: func.func @weight_grad_tiled(
// CHECK-SAME:      %[[X:.*]]: memref<64x40xf32>, %[[DY:.*]]: memref<64x48xf32>, %[[ACC:.*]]: memref<40x48xf32>)
// CHECK:         scf.parallel (%{{.*}}, %[[BI:.*]], %[[BJ:.*]]) = ({{.*}}) to (%c1, %{{.*}}, %{{.*}})
// CHECK:           %[[AS:.*]] = memref.alloc() : memref<16x17xf32>
// CHECK-NEXT:      %[[BS:.*]] = memref.alloc() : memref<16x17xf32>
// CHECK-NEXT:      %[[CS:.*]] = memref.alloc() : memref<16x17xf32>
// CHECK-NEXT:      scf.parallel (%[[TY:.*]], %[[TX:.*]]) = (%c0, %c0) to (%c16, %c16)
// CHECK:             memref.load %[[ACC]]
// CHECK-NEXT:        memref.store %{{.*}}, %[[CS]][%[[TY]], %[[TX]]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK-NEXT:      scf.for %[[K0:.*]] = %c0 to %c64 step %c16 {
// CHECK:             memref.load %[[X]][%{{.*}}, %{{.*}}]
// CHECK-NEXT:        memref.store %{{.*}}, %[[AS]]
// CHECK:             memref.load %[[DY]]
// CHECK-NEXT:        memref.store %{{.*}}, %[[BS]]
// CHECK:             scf.for {{.*}} iter_args
// CHECK-NEXT:          memref.load %[[AS]]
// CHECK-NEXT:          memref.load %[[BS]]
// CHECK:           memref.store %{{.*}}, %[[ACC]]
// CHECK:         } {ga.accumulates, ga.cooperative, ga.kernel = "gemm", mapping = [#gpu.loop_dim_map<processor = block_z, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}
func.func @weight_grad_tiled(%x: memref<64x40xf32>, %dy: memref<64x48xf32>, %acc: memref<40x48xf32>) {
  linalg.matmul
      indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>]
      ins(%x, %dy : memref<64x40xf32>, memref<64x48xf32>) outs(%acc : memref<40x48xf32>) {ga.accumulates}
  return
}

// -----

// A long reduction into few outputs (split-reduction-min, default 256) is
// split: 256 threads each reduce a chunk of 32 from the neutral element, then
// one kernel adds the partial results into the accumulator (the accumulation
// stays in that kernel).
// CHECK-LABEL: func.func @loss_sum_split(
// CHECK-SAME:      %[[L:.*]]: memref<8192xf32>, %[[ACC:.*]]: memref<f32>)
// CHECK:         %[[P:.*]] = memref.alloc() : memref<256x1xf32>
// CHECK:         scf.parallel ({{.*}}) = ({{.*}}) to (%c1, %c256)
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args(%{{.*}} = %cst) -> (f32) {
// CHECK:           memref.store %{{.*}}, %[[P]]
// CHECK:         } {ga.kernel = "reduce_part"
// CHECK:         scf.parallel
// CHECK:           %[[INIT:.*]] = memref.load %[[ACC]][]
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        memref.load %[[P]]
// CHECK:           memref.store %{{.*}}, %[[ACC]][]
// CHECK:         } {ga.kernel = "reduce"
func.func @loss_sum_split(%l: memref<8192xf32>, %acc: memref<f32>) {
  linalg.reduce ins(%l : memref<8192xf32>) outs(%acc : memref<f32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// fma=1 lets the kernels contract multiply-adds (like nvcc -fmad=true).
// CHECK-LABEL: func.func @no_fma_by_default(
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:         arith.addf %{{.*}}, %{{.*}} : f32
// FMA-LABEL:   func.func @no_fma_by_default(
// FMA:           arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// FMA:           arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
func.func @no_fma_by_default(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// Host code that needs an element of a device buffer of rank 1 (a printed
// or returned metric): a kernel of one thread copies it into a 0-d device
// buffer, which is read back through a host buffer.
// CHECK-LABEL: func.func @read_back_rank1(
// CHECK-SAME:      %[[M:.*]]: memref<4xf32>) -> f32
// CHECK:         %[[SNAP:.*]] = memref.alloc() : memref<f32>
// CHECK:         scf.parallel
// CHECK:           %[[E:.*]] = memref.load %[[M]][%c1] : memref<4xf32>
// CHECK:           memref.store %[[E]], %[[SNAP]][] : memref<f32>
// CHECK:         } {ga.kernel = "snapshot"
// CHECK:         %[[HOST:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT:    memref.copy %[[SNAP]], %[[HOST]]
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[HOST]][]
// CHECK-NEXT:    return %[[V]] : f32
func.func @read_back_rank1(%m: memref<4xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  %v = memref.load %m[%c1] : memref<4xf32>
  return %v : f32
}

// -----

// A host load that feeds a kernel, of a buffer that is overwritten before the
// kernel runs: the kernel reads a copy of the element taken at the load
// (moving the load itself into the kernel would read the new value).
// CHECK-LABEL: func.func @overwritten(
// CHECK-SAME:      %[[N:[^:]*]]: memref<f32>, %[[P:[^:]*]]: memref<8xf32>, %[[Q:[^:]*]]: memref<8xf32>)
// CHECK:         %[[SNAP:.*]] = memref.alloc() : memref<f32>
// CHECK:         scf.parallel
// CHECK:           %[[E:.*]] = memref.load %[[N]][] : memref<f32>
// CHECK:           memref.store %[[E]], %[[SNAP]][] : memref<f32>
// CHECK:         } {ga.kernel = "snapshot"
// CHECK:         scf.parallel
// CHECK:           memref.store %{{.*}}, %[[N]][] : memref<f32>
// CHECK:         } {ga.kernel = "fill"
// CHECK:         scf.parallel
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[SNAP]][] : memref<f32>
// CHECK:           arith.mulf %{{.*}}, %[[V]] : f32
// CHECK:         } {ga.kernel = "elementwise"
func.func @overwritten(%n: memref<f32>, %p: memref<8xf32>, %q: memref<8xf32>) {
  %v = memref.load %n[] : memref<f32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%n : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%p : memref<8xf32>) outs(%q : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %v : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A kernel that reads a host-loaded value and writes the same buffer would
// race with itself once the load moves inside: its threads read the copy.
// CHECK-LABEL: func.func @self_overwrite(
// CHECK-SAME:      %[[N:.*]]: memref<4xf32>)
// CHECK:         %[[SNAP:.*]] = memref.alloc() : memref<f32>
// CHECK:         } {ga.kernel = "snapshot"
// CHECK:         scf.parallel
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[SNAP]][] : memref<f32>
// CHECK:           %[[O:.*]] = memref.load %[[N]][%{{.*}}] : memref<4xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[O]], %[[V]] : f32
// CHECK-NEXT:      memref.store %[[S]], %[[N]][%{{.*}}] : memref<4xf32>
func.func @self_overwrite(%n: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %n[%c0] : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%n : memref<4xf32>) {
  ^bb0(%o: f32):
    %m = arith.addf %o, %v : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Host stores into device buffers (tensor.from_elements of a scaled loss and
// of a step counter after bufferization): one kernel of one thread for the
// adjacent stores; the device load they depend on is computed inside it,
// before the stores (one thread: no race with its own write).
// CHECK-LABEL: func.func @from_elements(
// CHECK-SAME:      %[[L:[^:]*]]: memref<f32>, %[[S:[^:]*]]: memref<2xi32>, %[[F:[^:]*]]: f32, %[[K:[^:]*]]: i32)
// CHECK-NOT:     memref.alloc
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c1, %c32)
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[L]][] : memref<f32>
// CHECK-NEXT:      %[[W:.*]] = arith.mulf %[[V]], %[[F]] : f32
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %[[W]], %[[L]][] : memref<f32>
// CHECK-NEXT:        memref.store %[[K]], %[[S]][%c0] : memref<2xi32>
// CHECK-NEXT:        memref.store %[[K]], %[[S]][%c1] : memref<2xi32>
// CHECK:         } {ga.kernel = "store"
// CHECK-NOT:     scf.parallel
// CHECK:         return
func.func @from_elements(%loss: memref<f32>, %step: memref<2xi32>, %s: f32, %k: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %loss[] : memref<f32>
  %w = arith.mulf %v, %s : f32
  memref.store %w, %loss[] : memref<f32>
  memref.store %k, %step[%c0] : memref<2xi32>
  memref.store %k, %step[%c1] : memref<2xi32>
  return
}

// -----

// A copy of a slice onto an equal slice of the same buffer (bucketing copies
// a gradient's slice of the bucket onto itself) changes nothing: no kernel.
// A copy onto a different slice, or onto the same slice of another buffer,
// stays a kernel.
// CHECK-LABEL: func.func @self_copies(
// CHECK-NOT:     memref.copy
// CHECK-COUNT-2: scf.parallel
// CHECK-NOT:     scf.parallel
// CHECK:         return
func.func @self_copies(%bucket: memref<64xf32>, %i: index, %other: memref<64xf32>) {
  %a = memref.subview %bucket[8] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: 8>>
  %b = memref.subview %bucket[8] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: 8>>
  memref.copy %a, %b : memref<16xf32, strided<[1], offset: 8>> to memref<16xf32, strided<[1], offset: 8>>
  %c = memref.subview %bucket[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
  %d = memref.subview %bucket[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
  memref.copy %c, %d : memref<16xf32, strided<[1], offset: ?>> to memref<16xf32, strided<[1], offset: ?>>
  memref.copy %a, %a : memref<16xf32, strided<[1], offset: 8>> to memref<16xf32, strided<[1], offset: 8>>
  %e = memref.subview %bucket[32] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: 32>>
  memref.copy %a, %e : memref<16xf32, strided<[1], offset: 8>> to memref<16xf32, strided<[1], offset: 32>>
  %f = memref.subview %other[8] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: 8>>
  memref.copy %a, %f : memref<16xf32, strided<[1], offset: 8>> to memref<16xf32, strided<[1], offset: 8>>
  return
}

// -----

// A gather checked the way torch-mlir checks it (cf.assert on the index in
// the payload): the assertion becomes a branch to a failing assertion, so
// that --convert-parallel-loops-to-gpu converts the loop (it leaves a loop
// with an assertion at the top of its body alone) and only a thread whose
// index is out of range fails.
// CHECK-LABEL: func.func @checked_gather(
// CHECK:         scf.parallel
// CHECK:           %[[OK:.*]] = arith.cmpi slt
// CHECK:           %[[BAD:.*]] = arith.xori %[[OK]], %true
// CHECK:           scf.if %[[BAD]] {
// CHECK:             cf.assert %false, "index must be smaller than dim size"
// CHECK:         } {ga.kernel = "elementwise"
// LAUNCH-LABEL: func.func @checked_gather(
// LAUNCH:         gpu.launch
// LAUNCH-NOT:     scf.parallel
func.func @checked_gather(%ids: memref<64xi64>, %table: memref<16xi64>,
                          %out: memref<64xi64>) {
  %c16 = arith.constant 16 : index
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%ids : memref<64xi64>) outs(%out : memref<64xi64>) {
  ^bb0(%id: i64, %o: i64):
    %i = arith.index_cast %id : i64 to index
    %ok = arith.cmpi slt, %i, %c16 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = memref.load %table[%i] : memref<16xi64>
    linalg.yield %v : i64
  }
  return
}
