// RUN: ga-opt %s -convert-linalg-to-blas -split-input-file | FileCheck %s
// RUN: ga-opt %s -convert-linalg-to-blas="parallel-blocks=3 min-parallel-work=100" \
// RUN:   -split-input-file | FileCheck %s --check-prefix=PAR
// RUN: ga-opt %s -convert-linalg-to-blas="avoid-allocating-kernels=0" \
// RUN:   -split-input-file | FileCheck %s --check-prefix=ALL

// A product into a zero-filled C: the fill is dropped, beta = 0; one
// declaration per routine.
// CHECK-LABEL: func.func private @cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
// CHECK-LABEL: func.func @matmul_zero
// CHECK-NOT:     linalg.fill
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ROW:.*]] = arith.constant 101 : i32
// CHECK-NEXT:    %[[NT:.*]] = arith.constant 111 : i32
// CHECK:         call @cblas_sgemm(%[[ROW]], %[[NT]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]],
// CHECK-NOT:     linalg.matmul
func.func @matmul_zero(%a: memref<4x5xf32>, %b: memref<5x3xf32>, %c: memref<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x5xf32>, memref<5x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// -----

// Accumulation into C (beta = 1) with a transposed B (stored [n][k]), f64.
// CHECK-LABEL: func.func @matmul_acc_transposed
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-DAG:     %[[NT:.*]] = arith.constant 111 : i32
// CHECK-DAG:     %[[T:.*]] = arith.constant 112 : i32
// CHECK:         call @cblas_dgemm(%{{.*}}, %[[NT]], %[[T]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]],
func.func @matmul_acc_transposed(%a: memref<4x5xf64>, %b: memref<3x5xf64>, %c: memref<4x3xf64>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<4x5xf64>, memref<3x5xf64>) outs(%c : memref<4x3xf64>)
  return
}

// -----

// A read of C between the fill and the product keeps the fill: beta = 1.
// CHECK-LABEL: func.func @fill_read_before
// CHECK:         linalg.fill
// CHECK:         memref.load
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         call @cblas_sgemm({{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]],
func.func @fill_read_before(%a: memref<4x5xf32>, %b: memref<5x3xf32>, %c: memref<4x3xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  %v = memref.load %c[%i, %i] : memref<4x3xf32>
  linalg.matmul ins(%a, %b : memref<4x5xf32>, memref<5x3xf32>) outs(%c : memref<4x3xf32>)
  return %v : f32
}

// -----

// A batched product into a zero-filled C: a loop over the batch with one
// call per matrix (beta = 0), each operand's pointer advanced by its batch
// stride (here the micro-batch slice of a larger A: stride 20 elements).
// CHECK-LABEL: func.func @batched
// CHECK-NOT:     linalg.fill
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-COUNT-3:   llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:           %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           call @cblas_sgemm({{.*}}, %[[BETA]],
// CHECK:         }
// CHECK-NOT:     linalg.batch_matmul
func.func @batched(%a: memref<3x4x5xf32, strided<[20, 5, 1], offset: ?>>, %b: memref<3x5x6xf32>, %c: memref<3x4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x4x6xf32>)
  linalg.batch_matmul ins(%a, %b : memref<3x4x5xf32, strided<[20, 5, 1], offset: ?>>, memref<3x5x6xf32>) outs(%c : memref<3x4x6xf32>)
  return
}

// -----

// A matrix-vector product with the matrix transposed (y += A^T x): a GEMM
// with N = 1 on views of the vectors as K x 1 and M x 1 matrices.
// CHECK-LABEL: func.func @matvec_transposed
// CHECK-DAG:     %[[T:.*]] = arith.constant 112 : i32
// CHECK-DAG:     %[[NT:.*]] = arith.constant 111 : i32
// CHECK-DAG:     memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [5, 1] : memref<5xf32> into memref<5x1xf32>
// CHECK-DAG:     memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [3, 1] : memref<3xf32> into memref<3x1xf32>
// CHECK:         call @cblas_sgemm(%{{.*}}, %[[T]], %[[NT]],
func.func @matvec_transposed(%a: memref<5x3xf32>, %x: memref<5xf32>, %y: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, k) -> (k, m)>,
                                   affine_map<(m, k) -> (k)>,
                                   affine_map<(m, k) -> (m)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %x : memref<5x3xf32>, memref<5xf32>) outs(%y : memref<3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Products that OpenBLAS's AVX-512 small-matrix kernel would compute with a
// malloc'ed copy of A's last rows (untransposed, at most 10^6 multiply-adds,
// N mod 16 in 1..8 and K >= 32 for f32; N mod 8 in 1..4 and K >= 16 for f64)
// stay linalg ops; each neighbour just outside the rule becomes a call.
// CHECK-LABEL: func.func @allocating_kernels
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT:     linalg.matmul
// CHECK:         linalg.matvec
// CHECK-NOT:     linalg.matvec
// CHECK:         linalg.matmul
// CHECK-NOT:     linalg.matmul
// CHECK-COUNT-5: call @cblas_
// CHECK-NOT:     call @cblas_
// CHECK:         return
// ALL-LABEL: func.func @allocating_kernels
// ALL-NOT:     linalg.mat
// ALL-COUNT-9: call @cblas_
// ALL-NOT:     linalg.mat
func.func @allocating_kernels(%a: memref<6x36xf32>, %b: memref<36x8xf32>, %c: memref<6x8xf32>,
                              %b17: memref<36x17xf32>, %c17: memref<6x17xf32>,
                              %b9: memref<36x9xf32>, %c9: memref<6x9xf32>,
                              %a31: memref<6x31xf32>, %b31: memref<31x8xf32>,
                              %bt: memref<8x36xf32>,
                              %big: memref<100x100xf32>, %bb: memref<100x101xf32>, %cb: memref<100x101xf32>,
                              %x: memref<36xf32>, %y: memref<6xf32>,
                              %ad: memref<6x16xf64>, %bd: memref<16x4xf64>, %cd: memref<6x4xf64>,
                              %bd5: memref<16x5xf64>, %cd5: memref<6x5xf64>) {
  // Kept: 6 x 8 x 36 (tail 8), 6 x 17 x 36 (tail 1).
  linalg.matmul ins(%a, %b : memref<6x36xf32>, memref<36x8xf32>) outs(%c : memref<6x8xf32>)
  linalg.matmul ins(%a, %b17 : memref<6x36xf32>, memref<36x17xf32>) outs(%c17 : memref<6x17xf32>)
  // Kept: a matrix-vector product is a GEMM with N = 1.
  linalg.matvec ins(%a, %x : memref<6x36xf32>, memref<36xf32>) outs(%y : memref<6xf32>)
  // Kept: f64, 6 x 4 x 16 (tail 4).
  linalg.matmul ins(%ad, %bd : memref<6x16xf64>, memref<16x4xf64>) outs(%cd : memref<6x4xf64>)
  // Calls: tail 9; K = 31; B transposed; 100 x 101 x 100 > 10^6; f64 tail 5.
  linalg.matmul ins(%a, %b9 : memref<6x36xf32>, memref<36x9xf32>) outs(%c9 : memref<6x9xf32>)
  linalg.matmul ins(%a31, %b31 : memref<6x31xf32>, memref<31x8xf32>) outs(%c : memref<6x8xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
                ins(%a, %bt : memref<6x36xf32>, memref<8x36xf32>) outs(%c : memref<6x8xf32>)
  linalg.matmul ins(%big, %bb : memref<100x100xf32>, memref<100x101xf32>) outs(%cb : memref<100x101xf32>)
  linalg.matmul ins(%ad, %bd5 : memref<6x16xf64>, memref<16x5xf64>) outs(%cd5 : memref<6x5xf64>)
  return
}

// -----

// parallel-blocks = 3: a product of at least min-parallel-work = 100
// multiply-adds is split over 3 threads. M = 30 >= N = 4: blocks of
// ceil(30 / 3) rows, each call on its rows of A (a row offset: lo x lda) and
// of C (lo x ldc), B whole. A product below the threshold (2 x 3 x 4 = 24)
// stays one call.
// PAR-LABEL: func.func @split_rows
// PAR:         %[[SIZE:.*]] = arith.ceildivsi %{{.*}}, %[[P:.*]] : index
// PAR:         scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%[[P]]) step
// PAR:           %[[START:.*]] = arith.muli %[[J]], %[[SIZE]] : index
// PAR:           %[[LO:.*]] = arith.minsi %[[START]], %{{.*}} : index
// PAR:           %[[END:.*]] = arith.addi %[[LO]], %[[SIZE]] : index
// PAR:           %[[HI:.*]] = arith.minsi %[[END]], %{{.*}} : index
// PAR:           %[[COUNT:.*]] = arith.subi %[[HI]], %[[LO]] : index
// PAR:           arith.muli %[[LO]], %{{.*}} : index
// PAR:           llvm.getelementptr
// PAR:           arith.muli %[[LO]], %{{.*}} : index
// PAR:           llvm.getelementptr
// PAR:           %[[M:.*]] = arith.index_cast %[[COUNT]] : index to i32
// PAR:           call @cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]],
// PAR:         }
// PAR-NOT:     scf.parallel
// PAR:         call @cblas_sgemm
// PAR:         return
func.func @split_rows(%a: memref<30x5xf32>, %b: memref<5x4xf32>, %c: memref<30x4xf32>,
                      %x: memref<2x4xf32>, %y: memref<4x3xf32>, %z: memref<2x3xf32>) {
  linalg.matmul ins(%a, %b : memref<30x5xf32>, memref<5x4xf32>) outs(%c : memref<30x4xf32>)
  linalg.matmul ins(%x, %y : memref<2x4xf32>, memref<4x3xf32>) outs(%z : memref<2x3xf32>)
  return
}

// -----

// N = 40 > M = 4, B transposed (stored [n][k]): blocks of C's columns, each
// call on its rows of the stored B (lo x ldb) and its columns of C (lo).
// PAR-LABEL: func.func @split_columns_transposed
// PAR:         scf.parallel (%[[J:.*]]) =
// PAR:           %[[LO:.*]] = arith.minsi
// PAR:           %[[COUNT:.*]] = arith.subi %{{.*}}, %[[LO]] : index
// PAR:           arith.muli %[[LO]], %{{.*}} : index
// PAR:           llvm.getelementptr
// PAR:           arith.index_cast %[[LO]] : index to i64
// PAR:           llvm.getelementptr
// PAR:           %[[N:.*]] = arith.index_cast %[[COUNT]] : index to i32
// PAR:           call @cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[N]],
func.func @split_columns_transposed(%a: memref<4x5xf32>, %b: memref<40x5xf32>, %c: memref<4x40xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
                ins(%a, %b : memref<4x5xf32>, memref<40x5xf32>) outs(%c : memref<4x40xf32>)
  return
}

// -----

// A batched product of 3 x 4 x 6 x 5 = 360 multiply-adds: its loop over
// the batch is the scf.parallel, each matrix one call.
// PAR-LABEL: func.func @batched_parallel
// PAR:         scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step
// PAR-COUNT-3:   llvm.getelementptr
// PAR:           call @cblas_sgemm
// PAR-NOT:     scf.for
func.func @batched_parallel(%a: memref<3x4x5xf32>, %b: memref<3x5x6xf32>, %c: memref<3x4x6xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x4x5xf32>, memref<3x5x6xf32>) outs(%c : memref<3x4x6xf32>)
  return
}

// -----

// A product that may not allocate (4 x 12 x 36: N mod 16 = 12) whose
// column blocks would (12 / 3 = 4 columns each) stays one call.
// PAR-LABEL: func.func @blocks_would_allocate
// PAR-NOT:     scf.parallel
// PAR:         call @cblas_sgemm
// PAR-NOT:     scf.parallel
// PAR:         return
func.func @blocks_would_allocate(%a: memref<4x36xf32>, %b: memref<36x12xf32>, %c: memref<4x12xf32>) {
  linalg.matmul ins(%a, %b : memref<4x36xf32>, memref<36x12xf32>) outs(%c : memref<4x12xf32>)
  return
}
