// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-siblings=1" -cse | FileCheck %s
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops | FileCheck %s --check-prefix=OFF
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-siblings=1 fuse-siblings-max-threads=0" -cse | FileCheck %s --check-prefix=BUCKET

#in = affine_map<(b, s, h, d) -> (b, s, h, d)>
#out = affine_map<(b, s, h, d) -> (b, h, s, d)>

// Attention's head split: Q, K and V transposed out of slices of one
// projection into three buffers: the same thread space, nothing read that
// another writes. One segment of 256 threads; thread t computes element t of
// each, in order. The copy after them has another thread space (16): a
// second segment, threads 256 to 271, each under a check of its range
// (multi-tensor apply). With a bucket of 0 threads (BUCKET), only members of
// one thread space share a kernel: the copy keeps its own.
// CHECK-LABEL: func.func @head_split(
// CHECK:         scf.parallel
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[T:.*]], %c272
// CHECK:           scf.if %[[IN]]
// CHECK:             %[[Q:.*]] = memref.load %subview[
// CHECK:             memref.store %[[Q]], %arg2
// CHECK:             %[[K:.*]] = memref.load %subview_0[
// CHECK:             arith.mulf %[[K]]
// CHECK:             memref.store %{{.*}}, %arg3
// CHECK:             memref.store %{{.*}}, %arg4
// CHECK:           %[[U:.*]] = arith.subi %[[T]], %c256
// CHECK:           %[[SEG:.*]] = arith.cmpi ult, %[[U]], %c16
// CHECK:           scf.if %[[SEG]]
// CHECK:             arith.remui %[[U]], %c4
// CHECK:             memref.store %{{.*}}, %arg6
// CHECK:         ga.kernel = "elementwise_siblings"
// CHECK-NOT:     ga.kernel
// OFF-LABEL:   func.func @head_split(
// OFF-COUNT-3:   ga.kernel = "elementwise"
// OFF:           ga.kernel = "copy"
// BUCKET-LABEL: func.func @head_split(
// BUCKET:         ga.kernel = "elementwise_siblings"
// BUCKET:         ga.kernel = "copy"
func.func @head_split(%c: f32, %qkv: memref<2x8x2x24xf32>, %q: memref<2x2x8x8xf32>,
                      %k: memref<2x2x8x8xf32>, %v: memref<2x2x8x8xf32>,
                      %x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %sq = memref.subview %qkv[0, 0, 0, 0] [2, 8, 2, 8] [1, 1, 1, 1] : memref<2x8x2x24xf32> to memref<2x8x2x8xf32, strided<[384, 48, 24, 1]>>
  %sk = memref.subview %qkv[0, 0, 0, 8] [2, 8, 2, 8] [1, 1, 1, 1] : memref<2x8x2x24xf32> to memref<2x8x2x8xf32, strided<[384, 48, 24, 1], offset: 8>>
  %sv = memref.subview %qkv[0, 0, 0, 16] [2, 8, 2, 8] [1, 1, 1, 1] : memref<2x8x2x24xf32> to memref<2x8x2x8xf32, strided<[384, 48, 24, 1], offset: 16>>
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sq : memref<2x8x2x8xf32, strided<[384, 48, 24, 1]>>) outs(%q : memref<2x2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sk : memref<2x8x2x8xf32, strided<[384, 48, 24, 1], offset: 8>>) outs(%k : memref<2x2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sv : memref<2x8x2x8xf32, strided<[384, 48, 24, 1], offset: 16>>) outs(%v : memref<2x2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.copy %x, %y : memref<4x4xf32> to memref<4x4xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Not siblings: the second op reads what the first writes (another thread's
// element would be read, through the transpose), the third reads what the
// second writes (transposed again), and an accumulator's producer keeps its
// own kernel (passed over: it commutes with the third op). The copy of what
// the third op writes, at the element its thread wrote, and a copy of the
// same shape into a separate buffer are siblings of the third op.
// CHECK-LABEL: func.func @dependent(
// CHECK:         ga.kernel = "elementwise"
// CHECK:         ga.kernel = "elementwise"
// CHECK:         ga.accumulates, ga.kernel = "elementwise"
// CHECK:           memref.store %[[A:.*]], %arg0[%[[I:.*]], %[[J:.*]]]
// CHECK:           memref.load %arg0[%[[I]], %[[J]]]
// CHECK:         ga.kernel = "elementwise_siblings"
// CHECK-NOT:     ga.kernel
func.func @dependent(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>,
                     %acc: memref<4x4xf32>, %d: memref<4x4xf32>, %e: memref<4x4xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x4xf32>) outs(%b : memref<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<4x4xf32>) outs(%c : memref<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x4xf32>) outs(%a : memref<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x4xf32>) outs(%acc : memref<4x4xf32>) attrs = {ga.accumulates} {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  }
  memref.copy %a, %d : memref<4x4xf32> to memref<4x4xf32>
  memref.copy %b, %e : memref<4x4xf32> to memref<4x4xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// A fill of a buffer, a copy into half of it, then the same for a second
// buffer (a slice's gradient padded with zeros, as Llama's rotary
// embedding's backward is). Each fill and the copy into its buffer are one
// member over the buffer: a thread writes its element of the copy's source
// when the element is in the slice (0 <= j - 4 < 4, unsigned), else the fill
// value. The two members have one thread space: one kernel of 32 threads
// (without fuse-siblings: four kernels, the copies after their fills).
// CHECK-LABEL: func.func @fills_and_copies(
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.parallel
// CHECK:           %[[J:.*]] = arith.remui %{{.*}}, %c8
// CHECK:           %[[I:.*]] = arith.divui %{{.*}}, %c8
// CHECK:           %[[I0:.*]] = arith.subi %[[I]], %c0
// CHECK:           arith.cmpi ult, %[[I0]], %c4
// CHECK:           %[[J4:.*]] = arith.subi %[[J]], %c4
// CHECK:           arith.cmpi ult, %[[J4]], %c4
// CHECK:           %[[IN:.*]] = arith.andi
// CHECK:           %[[A:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:             %[[X:.*]] = memref.load %arg0[%[[I0]], %[[J4]]]
// CHECK:             scf.yield %[[X]]
// CHECK:           } else {
// CHECK:             scf.yield %[[ZERO]]
// CHECK:           memref.store %[[A]], %arg2[%[[I]], %[[J]]]
// CHECK:           %[[B:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:             memref.load %arg1[%[[I0]], %[[J4]]]
// CHECK:           memref.store %[[B]], %arg3[%[[I]], %[[J]]]
// CHECK:         ga.kernel = "fill_siblings"
// CHECK-NOT:     ga.kernel
// OFF-LABEL:   func.func @fills_and_copies(
// OFF:           ga.kernel = "fill"
// OFF:           ga.kernel = "copy"
// OFF:           ga.kernel = "fill"
// OFF:           ga.kernel = "copy"
func.func @fills_and_copies(%x: memref<4x4xf32>, %y: memref<4x4xf32>,
                            %a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<4x8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %sa = memref.subview %a[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %x, %sa : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%b : memref<4x8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  %sb = memref.subview %b[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %y, %sb : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// A concatenation: an op and a copy write the two halves of one buffer,
// provably disjoint static slices, so they are independent (one segment of
// 16 threads); then a fill of another buffer and copies into slices of it
// that overlap, the last copy written where they overlap (a second segment,
// 32 threads). A copy that reads the filled buffer is not one of its
// copies (it would read other threads' elements): it has its own kernel.
// BUCKET (no concatenation): the fill is passed over (it stays before the
// kernel), and the first copy into its buffer, of the first segment's
// thread space and independent of it, joins that segment; the second copy
// into the fill's buffer overlaps the first: a kernel of its own.
// CHECK-LABEL: func.func @concat_and_pad(
// CHECK:         scf.parallel
// CHECK:           memref.store %{{.*}}, %subview[
// CHECK:           memref.store %{{.*}}, %subview_0[
// CHECK:           %[[A:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:             memref.load %arg1[
// CHECK:           %[[B:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:             memref.load %arg2[
// CHECK:           } else {
// CHECK:             scf.yield %[[A]]
// CHECK:           memref.store %[[B]], %arg4[
// CHECK:         ga.kernel = "elementwise_siblings"
// CHECK:         ga.kernel = "copy"
// CHECK-NOT:     ga.kernel
// BUCKET-LABEL: func.func @concat_and_pad(
// BUCKET:         ga.kernel = "fill"
// BUCKET:         ga.kernel = "elementwise_siblings"
// BUCKET:         ga.kernel = "copy"
// BUCKET:         ga.kernel = "copy"
func.func @concat_and_pad(%x: memref<4x4xf32>, %y: memref<4x4xf32>, %z: memref<4x4xf32>,
                          %cat: memref<4x8xf32>, %pad: memref<4x8xf32>, %w: memref<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %lo = memref.subview %cat[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  %hi = memref.subview %cat[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x4xf32>) outs(%lo : memref<4x4xf32, strided<[8, 1]>>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.copy %x, %hi : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  linalg.fill ins(%zero : f32) outs(%pad : memref<4x8xf32>)
  %p1 = memref.subview %pad[0, 1] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 1>>
  memref.copy %y, %p1 : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1], offset: 1>>
  %p2 = memref.subview %pad[0, 3] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 3>>
  memref.copy %z, %p2 : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1], offset: 3>>
  %p3 = memref.subview %pad[0, 2] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 2>>
  memref.copy %p3, %w : memref<4x4xf32, strided<[8, 1], offset: 2>> to memref<4x4xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#s = affine_map<(i, j) -> ()>

// An optimizer's per-tensor updates (m, then the parameter in place from
// m) for two parameters of different shapes: the parameter update reads m
// and overwrites p at the element its own thread wrote or read, so thread t
// runs both in order: one kernel of 16 + 8 threads. A read of another
// thread's element of what a member writes stays dependent: the transpose
// of m starts the next kernel, with a 0-d op (one thread) that is
// independent of it; the broadcast of that op's 0-d result is read by every
// thread: a kernel of its own.
// CHECK-LABEL: func.func @updates(
// CHECK:         scf.parallel
// CHECK:           %[[U:.*]] = arith.subi %{{.*}}, %c0
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[U]], %c16
// CHECK:           scf.if %[[IN]] {
// CHECK:             memref.store %{{.*}}, %arg2[
// CHECK:             memref.load %arg2[
// CHECK:             memref.store %{{.*}}, %arg0[
// CHECK:           }
// CHECK:           arith.cmpi ult, %{{.*}}, %c8
// CHECK:             memref.store %{{.*}}, %arg5[
// CHECK:             memref.store %{{.*}}, %arg3[
// CHECK:         ga.kernel = "elementwise_siblings"
// CHECK:           memref.store %{{.*}}, %arg6[
// CHECK:           memref.store %{{.*}}, %arg7[]
// CHECK:         ga.kernel = "elementwise_siblings"
// CHECK:           memref.load %arg7[]
// CHECK:           memref.store %{{.*}}, %arg8[
// CHECK:         ga.kernel = "elementwise"
// CHECK-NOT:     ga.kernel
// Without concatenation (BUCKET), one kernel per thread space of the
// updates; the 0-d op is passed over (it stays before the next kernel) and
// the broadcast of its result joins the transpose.
// BUCKET-LABEL: func.func @updates(
// BUCKET:         ga.kernel = "elementwise_siblings"
// BUCKET:         ga.kernel = "elementwise_siblings"
// BUCKET:         memref.store %{{.*}}, %arg7[]
// BUCKET:         ga.kernel = "elementwise"
// BUCKET:         ga.kernel = "elementwise_siblings"
// BUCKET-NOT:     ga.kernel
func.func @updates(%p: memref<4x4xf32>, %g: memref<4x4xf32>, %m: memref<4x4xf32>,
                   %q: memref<2x4xf32>, %h: memref<2x4xf32>, %n: memref<2x4xf32>,
                   %w: memref<4x4xf32>, %sum: memref<f32>, %x: memref<4x4xf32>,
                   %c: memref<f32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<4x4xf32>) outs(%m : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<4x4xf32>) outs(%p : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.subf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<2x4xf32>) outs(%n : memref<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n : memref<2x4xf32>) outs(%q : memref<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.subf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<4x4xf32>) outs(%w : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%c : memref<f32>) outs(%sum : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#s, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<f32>) outs(%x : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
