// RUN: ga-opt %s --ga-lower-to-cpu="blas=1 approximate-math=0" | FileCheck %s

// With blas=1, matrix products on buffers become CBLAS calls with beta = 1
// (C += A B, the semantics of a linalg contraction, so an accumulator fused
// into the GEMM stays fused): row-major (101), NoTrans (111) / Trans (112)
// from the indexing maps, f64 through cblas_dgemm. A matrix-vector product
// is a GEMM with N = 1. (approximate-math=0: the exp that separates a fill
// from its product below stays one intrinsic to check for.)

// CHECK-DAG: llvm.func @cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
// CHECK-DAG: llvm.func @cblas_dgemm(i32, i32, i32, i32, i32, i32, f64, !llvm.ptr, i32, !llvm.ptr, i32, f64, !llvm.ptr, i32)
// CHECK-LABEL: llvm.func @products(
// CHECK-DAG:   %[[ROW:.*]] = llvm.mlir.constant(101 : i32) : i32
// CHECK-DAG:   %[[N:.*]] = llvm.mlir.constant(111 : i32) : i32
// CHECK-DAG:   %[[T:.*]] = llvm.mlir.constant(112 : i32) : i32
// CHECK:       llvm.call @cblas_sgemm(%[[ROW]], %[[N]], %[[N]],
// CHECK:       llvm.call @cblas_sgemm(%[[ROW]], %[[N]], %[[T]],
// CHECK:       llvm.call @cblas_sgemm(%[[ROW]], %[[T]], %[[N]],
// CHECK:       llvm.call @cblas_dgemm(%[[ROW]], %[[N]], %[[N]],
// CHECK:       llvm.call @cblas_sgemm(%[[ROW]],
// CHECK-NOT:   llvm.call @cblas
// CHECK:       llvm.return

func.func @products(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x5xf32>,
                    %bt: tensor<5x3xf32>, %at: tensor<3x4xf32>,
                    %da: tensor<4x3xf64>, %db: tensor<3x5xf64>, %dc: tensor<4x5xf64>,
                    %v: tensor<3xf32>, %w: tensor<4xf32>)
    -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf64>, tensor<4xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>)
                     outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                       affine_map<(m, n, k) -> (n, k)>,
                                       affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %bt : tensor<4x3xf32>, tensor<5x3xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r3 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                       affine_map<(m, n, k) -> (k, n)>,
                                       affine_map<(m, n, k) -> (m, n)>]
        ins(%at, %b : tensor<3x4xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r4 = linalg.matmul ins(%da, %db : tensor<4x3xf64>, tensor<3x5xf64>)
                      outs(%dc : tensor<4x5xf64>) -> tensor<4x5xf64>
  %r5 = linalg.matvec ins(%a, %v : tensor<4x3xf32>, tensor<3xf32>)
                      outs(%w : tensor<4xf32>) -> tensor<4xf32>
  return %r, %r2, %r3, %r4, %r5 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf64>, tensor<4xf32>
}

// A product into a fresh zero fill: beta = 0 and no fill (BLAS does not read
// C); the same zero fill shared with an accumulation that reads it first
// keeps its own fill and beta = 1.
// CHECK-LABEL: llvm.func @fresh(
// CHECK-DAG:   %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-DAG:   %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK:       llvm.call @cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %{{.*}}, %{{.*}})
// CHECK:       llvm.fadd
// CHECK:       llvm.call @cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
// CHECK:       llvm.return
func.func @fresh(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %d: tensor<4x5xf32>)
    -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>)
                     outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %s = linalg.add ins(%z, %d : tensor<4x5xf32>, tensor<4x5xf32>)
                  outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %t = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>)
                     outs(%s : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r, %t : tensor<4x5xf32>, tensor<4x5xf32>
}

// An accumulator zero-filled before a one-iteration micro-batch loop (N = 1):
// once the loop is folded, other work separates the fill from the product,
// but nothing else touches the accumulator in between: beta = 0. In a real
// loop the fill runs once and the product N times: beta = 1.
// CHECK-LABEL: llvm.func @folded_loop(
// CHECK-DAG:   %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK:       llvm.intr.exp
// CHECK:       llvm.call @cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %{{.*}}, %{{.*}})
// CHECK-LABEL: llvm.func @real_loop(
// CHECK-DAG:   %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK:       llvm.call @cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}})
// With 4 iterations known, the first is peeled: it writes (beta = 0), the
// other 3 accumulate (beta = 1).
// CHECK-LABEL: llvm.func @static_loop(
// CHECK-DAG:   %[[ONE4:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-DAG:   %[[ZERO4:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK:       llvm.call @cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE4]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO4]], %{{.*}}, %{{.*}})
// CHECK:       llvm.br
// CHECK:       llvm.call @cblas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE4]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE4]], %{{.*}}, %{{.*}})
func.func @folded_loop(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>)
    -> (tensor<4x5xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ub = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %ea = tensor.empty() : tensor<4x3xf32>
  %r:2 = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %z, %prev = %a)
      -> (tensor<4x5xf32>, tensor<4x3xf32>) {
    %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x3xf32>) outs(%ea : tensor<4x3xf32>) {
    ^bb0(%v: f32, %o: f32):
      %ex = math.exp %v : f32
      linalg.yield %ex : f32
    } -> tensor<4x3xf32>
    %m = linalg.matmul ins(%x, %b : tensor<4x3xf32>, tensor<3x5xf32>)
                       outs(%acc : tensor<4x5xf32>) -> tensor<4x5xf32>
    scf.yield %m, %x : tensor<4x5xf32>, tensor<4x3xf32>
  }
  return %r#0, %r#1 : tensor<4x5xf32>, tensor<4x3xf32>
}

func.func @real_loop(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %ub: index)
    -> (tensor<4x5xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %ea = tensor.empty() : tensor<4x3xf32>
  %r:2 = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %z, %prev = %a)
      -> (tensor<4x5xf32>, tensor<4x3xf32>) {
    %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x3xf32>) outs(%ea : tensor<4x3xf32>) {
    ^bb0(%v: f32, %o: f32):
      %ex = math.exp %v : f32
      linalg.yield %ex : f32
    } -> tensor<4x3xf32>
    %m = linalg.matmul ins(%x, %b : tensor<4x3xf32>, tensor<3x5xf32>)
                       outs(%acc : tensor<4x5xf32>) -> tensor<4x5xf32>
    scf.yield %m, %x : tensor<4x5xf32>, tensor<4x3xf32>
  }
  return %r#0, %r#1 : tensor<4x5xf32>, tensor<4x3xf32>
}

func.func @static_loop(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>)
    -> (tensor<4x5xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ub = arith.constant 4 : index
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %ea = tensor.empty() : tensor<4x3xf32>
  %r:2 = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %z, %prev = %a)
      -> (tensor<4x5xf32>, tensor<4x3xf32>) {
    %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x3xf32>) outs(%ea : tensor<4x3xf32>) {
    ^bb0(%v: f32, %o: f32):
      %ex = math.exp %v : f32
      linalg.yield %ex : f32
    } -> tensor<4x3xf32>
    %m = linalg.matmul ins(%x, %b : tensor<4x3xf32>, tensor<3x5xf32>)
                       outs(%acc : tensor<4x5xf32>) -> tensor<4x5xf32>
    scf.yield %m, %x : tensor<4x5xf32>, tensor<4x3xf32>
  }
  return %r#0, %r#1 : tensor<4x5xf32>, tensor<4x3xf32>
}
