// RUN: ga-opt %s --ga-memory-report="format=json loop-profile=1 cpu={fuse-elementwise=false share-buffers=0}" -o /dev/null | FileCheck %s

// loop-profile with buffers of a run-time size: the micro-batch's rows
// (%m, at most 4) make three 4x8 f32 buffers (128 bytes each) of the
// chain y1 -> y2 -> y3, each its own heap block from its allocation to
// its deallocation at the end of the loop's body, where the ownership-
// based deallocation frees it (--ga-share-buffers takes static shapes
// only): at y3's first access y1 is no longer read, but still held. The
// accumulator (4 x 8 f32) is live through the loop: 128 bytes at every
// point. Points: the body's start, then the first access of y1, y2, y3.

// CHECK:      "loop_profile": [
// CHECK-NEXT:   [
// CHECK-NEXT:     128,
// CHECK-NEXT:     0,
// CHECK-NEXT:     []
// CHECK-NEXT:   ],
// CHECK-NEXT:   [
// CHECK-NEXT:     256,
// CHECK-NEXT:     0,
// CHECK-NEXT:     []
// CHECK-NEXT:   ],
// CHECK-NEXT:   [
// CHECK-NEXT:     384,
// CHECK-NEXT:     0,
// CHECK-NEXT:     []
// CHECK-NEXT:   ],
// CHECK-NEXT:   [
// CHECK-NEXT:     512,
// CHECK-NEXT:     0,
// CHECK-NEXT:     []
// CHECK-NEXT:   ]
// CHECK-NEXT: ]

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0) -> (4, d0 * -4 + 8)>

func.func @step(%x: tensor<8x8xf32> {ga.role = "inputs"}) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %z) -> (tensor<4x8xf32>) {
    %start = arith.muli %i, %c4 : index
    %m = affine.min #rows(%i)
    %xs = tensor.extract_slice %x[%start, 0] [%m, 8] [1, 1] : tensor<8x8xf32> to tensor<?x8xf32>
    %t1 = tensor.empty(%m) : tensor<?x8xf32>
    %y1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%xs : tensor<?x8xf32>) outs(%t1 : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %0 = arith.mulf %v, %v : f32
      linalg.yield %0 : f32
    } -> tensor<?x8xf32>
    %t2 = tensor.empty(%m) : tensor<?x8xf32>
    %y2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%y1 : tensor<?x8xf32>) outs(%t2 : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %0 = arith.addf %v, %v : f32
      linalg.yield %0 : f32
    } -> tensor<?x8xf32>
    %t3 = tensor.empty(%m) : tensor<?x8xf32>
    %y3 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%y2 : tensor<?x8xf32>) outs(%t3 : tensor<?x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %0 = arith.mulf %v, %v : f32
      linalg.yield %0 : f32
    } -> tensor<?x8xf32>
    %y3s = tensor.cast %y3 : tensor<?x8xf32> to tensor<4x8xf32>
    %s = linalg.add ins(%y3s, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%a : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %s : tensor<4x8xf32>
  }
  return %acc : tensor<4x8xf32>
}
