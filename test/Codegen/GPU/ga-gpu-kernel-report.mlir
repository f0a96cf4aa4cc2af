// RUN: ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="fuse-rows=1 split-reduction-min=0" -ga-gpu-kernel-report="seq=64 vocab=1000 tokens=4" -o /dev/null | FileCheck %s
// RUN: echo 'module {}' | ga-opt --ga-lower-to-gpu-loops --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=CALLS
// RUN: echo 'module {}' | ga-opt --ga-lower-to-gpu-loops="library-calls=0" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPS

// The loop stage ends with the products as calls, unless library-calls=0
// leaves them as ga.blas_matmul for this report.
// CALLS: ga-linalg-to-gpu-loops
// CALLS: ga-lower-library-ops
// OPS: ga-linalg-to-gpu-loops
// OPS-NOT: ga-lower-library-ops

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

// -----

#id = affine_map<(i, j) -> (i, j)>

// Library products, read from the `ga.blas_matmul` ops (their types and
// attributes): in the micro-batch loop, a bf16 product accumulated into f32
// (m 64, n 32, k 128: 2mnk = 524288 flops; A and B once in bf16, C read and
// written in f32: (64*128 + 128*32) * 2 + 2 * 64*32 * 4 = 40960 bytes), and
// after it a batch of 4 f32 products with A transposed (m 64, n 128, k 256:
// 16777216 flops; (64*256 + 256*128) * 4 + 64*128 * 4 bytes per product,
// C written only: 917504 bytes).
// CHECK-LABEL: GPU kernel report: @products
// CHECK:       | 0 | {{.*}} | yes | 2048 |
// CHECK:       | 1 | blas_matmul | yes | library | - | 0.041 | 0.001 | ab=bf16 c=f32 compute=f32 |
// CHECK:       | 2 | blas_matmul_batched | no | library | - | 0.918 | 0.017 | ab=f32 c=f32 compute=f32 |
// CHECK:       kernels per micro-batch: 1 kernels, 1 library calls
// CHECK:       check every product a library call: PASS
func.func @products(%x: memref<64x128xbf16>, %w: memref<128x32xbf16>, %acc: memref<64x32xf32>,
                    %a: memref<4x256x64xf32>, %b: memref<4x256x128xf32>, %c: memref<4x64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
        outs(%acc : memref<64x32xf32>) {
    ^bb0(%o: f32):
      %d = arith.addf %o, %o : f32
      linalg.yield %d : f32
    }
    ga.blas_matmul %x, %w, %acc {accumulate} : memref<64x128xbf16>, memref<128x32xbf16>, memref<64x32xf32>
  }
  ga.blas_matmul %a, %b, %c {transpose_lhs} : memref<4x256x64xf32>, memref<4x256x128xf32>, memref<4x64x128xf32>
  return
}
