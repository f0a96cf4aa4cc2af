// RUN: ga-opt %s --convert-ga-to-host-collectives --ga-memory-report="format=json loop-profile=1 cpu={fuse-elementwise=false share-buffers=0}" -o /dev/null | FileCheck %s
// RUN: ga-opt %s --convert-ga-to-host-collectives --ga-memory-report="format=json cpu={fuse-elementwise=false share-buffers=0}" -o /dev/null | FileCheck %s --check-prefix=NOPROFILE

// loop-profile: the points of the micro-batch loop's body (at its start
// and at the first access of each buffer in it), each [bytes live, bytes
// of reduce-scatter buffers, [[argument, bytes] gathered]]. Rank 1 of 2
// holds 2 rows of the 4x8 weight (argument 0); the loop gathers it
// (4 x 8 f32 = 128 bytes, from the all-gather to its last reader), then
// computes a 4x8 product (128 bytes) and adds it into the accumulator
// (4 x 8 f32, live through the loop: 128 bytes at every point). The
// arguments are not counted. Without the option the rows have no profile.

// CHECK:      "loop_profile": [
// CHECK-NEXT:   [
// CHECK-NEXT:     128,
// CHECK-NEXT:     0,
// CHECK-NEXT:     []
// CHECK-NEXT:   ],
// CHECK-NEXT:   [
// CHECK-NEXT:     128,
// CHECK-NEXT:     0,
// CHECK-NEXT:     [
// CHECK-NEXT:       [
// CHECK-NEXT:         0,
// CHECK-NEXT:         128
// CHECK-NEXT:       ]
// CHECK-NEXT:     ]
// CHECK-NEXT:   ],
// CHECK-NEXT:   [
// CHECK-NEXT:     256,
// CHECK-NEXT:     0,
// CHECK-NEXT:     [
// CHECK-NEXT:       [
// CHECK-NEXT:         0,
// CHECK-NEXT:         128
// CHECK-NEXT:       ]
// CHECK-NEXT:     ]
// CHECK-NEXT:   ]
// NOPROFILE-NOT: loop_profile

#id2 = affine_map<(d0, d1) -> (d0, d1)>

func.func @step(%u: tensor<2x8xf32> {ga.role = "parameters"},
                %x: tensor<8x8xf32> {ga.role = "inputs"}) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %z) -> (tensor<4x8xf32>) {
    %start = arith.muli %i, %c4 : index
    %xs = tensor.extract_slice %x[%start, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
    %w = ga.all_gather %u shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
    %t = tensor.empty() : tensor<4x8xf32>
    %y = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%xs, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%t : tensor<4x8xf32>) {
    ^bb0(%xv: f32, %wv: f32, %o: f32):
      %0 = arith.mulf %xv, %wv : f32
      linalg.yield %0 : f32
    } -> tensor<4x8xf32>
    %s = linalg.add ins(%y, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%a : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %s : tensor<4x8xf32>
  }
  return %acc : tensor<4x8xf32>
}
