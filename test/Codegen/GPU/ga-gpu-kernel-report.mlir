// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-rows=1 split-reduction-min=0" -ga-gpu-kernel-report="seq=64 vocab=1000 tokens=4" -o /dev/null | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// A row sum over 256 rows of 64 and the division by it: one kernel with a
// warp per row (32 blocks of 256 threads); each lane walks 64 / 32 = 2
// elements of a row alone. Bytes: the two 256x64 buffers and the sums, once
// each: 2 * 65536 + 1024 = 132096.
// CHECK-LABEL: GPU kernel report: @rows
// CHECK:       | # | kernel | in loop | threads | alone | MB | GFLOP | types | us |
// CHECK:       | 0 | reduce_rows_warp | no | 8192 | 2 | 0.132 | {{.*}} | - | {{.*}} |
// CHECK:       check no thread walks more than 256 elements alone: PASS
// CHECK:       check every product a library call: PASS
// CHECK:       check no T x T buffer (T = 64): PASS
func.func @rows(%l: memref<256x64xf32>, %sum: memref<256xf32>, %p: memref<256x64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<256x64xf32>) outs(%sum : memref<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%l, %sum : memref<256x64xf32>, memref<256xf32>) outs(%p : memref<256x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>

// Four rows of 1000 (too few rows for a warp each, splitting off): one
// thread per row walks 1000 elements alone; a 2x64x64 buffer is T x T for
// T = 64; two buffers of 4 x 1000 elements with a dimension of 1000 are two
// copies of the logits.
// CHECK-LABEL: GPU kernel report: @refused
// CHECK:       | 0 | reduce | no | 32 | 1000 |
// CHECK:       check no thread walks more than 256 elements alone: FAIL (1: reduce#0=1000)
// CHECK:       check every product a library call: PASS
// CHECK:       check no T x T buffer (T = 64): FAIL (1: memref<2x64x64xf32>)
// CHECK:       logit-sized buffers (vocabulary 1000, 4 tokens): 2
// CHECK:       check at most one copy of the logits: FAIL (2: memref<4x1000xf32> memref<4x1000xf32>)
func.func @refused(%l: memref<4x1000xf32>, %sum: memref<4xf32>) {
  %scores = memref.alloc() : memref<2x64x64xf32>
  %c1 = memref.alloc() : memref<4x1000xf32>
  %c2 = memref.alloc() : memref<4x1000xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : memref<4x1000xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  memref.dealloc %scores : memref<2x64x64xf32>
  memref.dealloc %c1 : memref<4x1000xf32>
  memref.dealloc %c2 : memref<4x1000xf32>
  return
}
