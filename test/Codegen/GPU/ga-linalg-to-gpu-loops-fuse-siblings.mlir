// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-siblings=1" -cse | FileCheck %s
// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops | FileCheck %s --check-prefix=OFF

#in = affine_map<(b, s, h, d) -> (b, s, h, d)>
#out = affine_map<(b, s, h, d) -> (b, h, s, d)>

// Attention's head split: Q, K and V transposed out of slices of one
// projection into three buffers: the same thread space, nothing read that
// another writes. One kernel; thread t computes element t of each, in order.
// The copy after them has another thread space: a kernel of its own.
// CHECK-LABEL: func.func @head_split(
// CHECK:         scf.parallel
// CHECK:           %[[Q:.*]] = memref.load %subview[
// CHECK:           memref.store %[[Q]], %arg2
// CHECK:           %[[K:.*]] = memref.load %subview_0[
// CHECK:           arith.mulf %[[K]]
// CHECK:           memref.store %{{.*}}, %arg3
// CHECK:           memref.store %{{.*}}, %arg4
// CHECK:         ga.kernel = "elementwise_siblings"
// CHECK:         ga.kernel = "copy"
// CHECK-NOT:     ga.kernel
// OFF-LABEL:   func.func @head_split(
// OFF-COUNT-3:   ga.kernel = "elementwise"
// OFF:           ga.kernel = "copy"
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
// element would be read), the third writes what the first reads, and an
// accumulator's producer keeps its own kernel. Copies of the same shape
// into separate buffers are siblings.
// CHECK-LABEL: func.func @dependent(
// CHECK:         ga.kernel = "elementwise"
// CHECK:         ga.kernel = "elementwise"
// CHECK:         ga.kernel = "elementwise"
// CHECK:         ga.accumulates, ga.kernel = "elementwise"
// CHECK:         ga.kernel = "copy_siblings"
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
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
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
// embedding's backward is). The first copy writes the first fill's buffer:
// neither a sibling of the fill nor passed over it, so the fill keeps its
// kernel. The second fill commutes with the first copy (other buffers): it
// is passed over, and the two copies are siblings. Per pair, the copy still
// runs after its fill.
// CHECK-LABEL: func.func @fills_and_copies(
// CHECK:         memref.store %{{.*}}, %arg2
// CHECK:         ga.kernel = "fill"
// CHECK:         memref.store %{{.*}}, %arg3
// CHECK:         ga.kernel = "fill"
// CHECK:         memref.store %{{.*}}, %subview
// CHECK:         memref.store %{{.*}}, %subview
// CHECK:         ga.kernel = "copy_siblings"
// CHECK-NOT:     ga.kernel
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
