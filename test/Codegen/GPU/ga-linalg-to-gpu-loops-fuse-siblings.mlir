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

// -----

// Forty independent copies of different shapes: one kernel would take 80
// memref descriptors (56 bytes each at rank 2: two pointers, an offset, two
// sizes, two strides; 4480 bytes in all). A sibling kernel's parameters stay
// within 3840 bytes (ptxas takes at most 4352 before PTX ISA 8.1), so the
// copies are two kernels: 34 (3808 bytes), then 6.
// CHECK-LABEL: func.func @many_tensors(
// CHECK-COUNT-34: memref.store
// CHECK-NOT:     memref.store
// CHECK:         ga.kernel = "copy_siblings"
// CHECK-COUNT-6: memref.store
// CHECK-NOT:     memref.store
// CHECK:         ga.kernel = "copy_siblings"
// CHECK-NOT:     ga.kernel
// Without concatenation (BUCKET): one kernel per copy.
// BUCKET-LABEL: func.func @many_tensors(
// BUCKET-COUNT-40: ga.kernel = "copy"
// BUCKET-NOT:     ga.kernel
func.func @many_tensors(%a0: memref<1x2xf32>, %b0: memref<1x2xf32>, %a1: memref<2x2xf32>, %b1: memref<2x2xf32>, %a2: memref<3x2xf32>, %b2: memref<3x2xf32>, %a3: memref<4x2xf32>, %b3: memref<4x2xf32>, %a4: memref<5x2xf32>, %b4: memref<5x2xf32>, %a5: memref<6x2xf32>, %b5: memref<6x2xf32>, %a6: memref<7x2xf32>, %b6: memref<7x2xf32>, %a7: memref<8x2xf32>, %b7: memref<8x2xf32>, %a8: memref<9x2xf32>, %b8: memref<9x2xf32>, %a9: memref<10x2xf32>, %b9: memref<10x2xf32>, %a10: memref<11x2xf32>, %b10: memref<11x2xf32>, %a11: memref<12x2xf32>, %b11: memref<12x2xf32>, %a12: memref<13x2xf32>, %b12: memref<13x2xf32>, %a13: memref<14x2xf32>, %b13: memref<14x2xf32>, %a14: memref<15x2xf32>, %b14: memref<15x2xf32>, %a15: memref<16x2xf32>, %b15: memref<16x2xf32>, %a16: memref<17x2xf32>, %b16: memref<17x2xf32>, %a17: memref<18x2xf32>, %b17: memref<18x2xf32>, %a18: memref<19x2xf32>, %b18: memref<19x2xf32>, %a19: memref<20x2xf32>, %b19: memref<20x2xf32>, %a20: memref<21x2xf32>, %b20: memref<21x2xf32>, %a21: memref<22x2xf32>, %b21: memref<22x2xf32>, %a22: memref<23x2xf32>, %b22: memref<23x2xf32>, %a23: memref<24x2xf32>, %b23: memref<24x2xf32>, %a24: memref<25x2xf32>, %b24: memref<25x2xf32>, %a25: memref<26x2xf32>, %b25: memref<26x2xf32>, %a26: memref<27x2xf32>, %b26: memref<27x2xf32>, %a27: memref<28x2xf32>, %b27: memref<28x2xf32>, %a28: memref<29x2xf32>, %b28: memref<29x2xf32>, %a29: memref<30x2xf32>, %b29: memref<30x2xf32>, %a30: memref<31x2xf32>, %b30: memref<31x2xf32>, %a31: memref<32x2xf32>, %b31: memref<32x2xf32>, %a32: memref<33x2xf32>, %b32: memref<33x2xf32>, %a33: memref<34x2xf32>, %b33: memref<34x2xf32>, %a34: memref<35x2xf32>, %b34: memref<35x2xf32>, %a35: memref<36x2xf32>, %b35: memref<36x2xf32>, %a36: memref<37x2xf32>, %b36: memref<37x2xf32>, %a37: memref<38x2xf32>, %b37: memref<38x2xf32>, %a38: memref<39x2xf32>, %b38: memref<39x2xf32>, %a39: memref<40x2xf32>, %b39: memref<40x2xf32>) {
  memref.copy %a0, %b0 : memref<1x2xf32> to memref<1x2xf32>
  memref.copy %a1, %b1 : memref<2x2xf32> to memref<2x2xf32>
  memref.copy %a2, %b2 : memref<3x2xf32> to memref<3x2xf32>
  memref.copy %a3, %b3 : memref<4x2xf32> to memref<4x2xf32>
  memref.copy %a4, %b4 : memref<5x2xf32> to memref<5x2xf32>
  memref.copy %a5, %b5 : memref<6x2xf32> to memref<6x2xf32>
  memref.copy %a6, %b6 : memref<7x2xf32> to memref<7x2xf32>
  memref.copy %a7, %b7 : memref<8x2xf32> to memref<8x2xf32>
  memref.copy %a8, %b8 : memref<9x2xf32> to memref<9x2xf32>
  memref.copy %a9, %b9 : memref<10x2xf32> to memref<10x2xf32>
  memref.copy %a10, %b10 : memref<11x2xf32> to memref<11x2xf32>
  memref.copy %a11, %b11 : memref<12x2xf32> to memref<12x2xf32>
  memref.copy %a12, %b12 : memref<13x2xf32> to memref<13x2xf32>
  memref.copy %a13, %b13 : memref<14x2xf32> to memref<14x2xf32>
  memref.copy %a14, %b14 : memref<15x2xf32> to memref<15x2xf32>
  memref.copy %a15, %b15 : memref<16x2xf32> to memref<16x2xf32>
  memref.copy %a16, %b16 : memref<17x2xf32> to memref<17x2xf32>
  memref.copy %a17, %b17 : memref<18x2xf32> to memref<18x2xf32>
  memref.copy %a18, %b18 : memref<19x2xf32> to memref<19x2xf32>
  memref.copy %a19, %b19 : memref<20x2xf32> to memref<20x2xf32>
  memref.copy %a20, %b20 : memref<21x2xf32> to memref<21x2xf32>
  memref.copy %a21, %b21 : memref<22x2xf32> to memref<22x2xf32>
  memref.copy %a22, %b22 : memref<23x2xf32> to memref<23x2xf32>
  memref.copy %a23, %b23 : memref<24x2xf32> to memref<24x2xf32>
  memref.copy %a24, %b24 : memref<25x2xf32> to memref<25x2xf32>
  memref.copy %a25, %b25 : memref<26x2xf32> to memref<26x2xf32>
  memref.copy %a26, %b26 : memref<27x2xf32> to memref<27x2xf32>
  memref.copy %a27, %b27 : memref<28x2xf32> to memref<28x2xf32>
  memref.copy %a28, %b28 : memref<29x2xf32> to memref<29x2xf32>
  memref.copy %a29, %b29 : memref<30x2xf32> to memref<30x2xf32>
  memref.copy %a30, %b30 : memref<31x2xf32> to memref<31x2xf32>
  memref.copy %a31, %b31 : memref<32x2xf32> to memref<32x2xf32>
  memref.copy %a32, %b32 : memref<33x2xf32> to memref<33x2xf32>
  memref.copy %a33, %b33 : memref<34x2xf32> to memref<34x2xf32>
  memref.copy %a34, %b34 : memref<35x2xf32> to memref<35x2xf32>
  memref.copy %a35, %b35 : memref<36x2xf32> to memref<36x2xf32>
  memref.copy %a36, %b36 : memref<37x2xf32> to memref<37x2xf32>
  memref.copy %a37, %b37 : memref<38x2xf32> to memref<38x2xf32>
  memref.copy %a38, %b38 : memref<39x2xf32> to memref<39x2xf32>
  memref.copy %a39, %b39 : memref<40x2xf32> to memref<40x2xf32>
  return
}
