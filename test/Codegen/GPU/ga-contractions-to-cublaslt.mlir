// RUN: ga-opt %s -split-input-file -ga-contractions-to-cublaslt -canonicalize | FileCheck %s

// A weight gradient accumulated in place (dW += X^T dY over the micro-batch):
// one library product with beta = 1 (accumulate), A transposed (X stored
// [k][m]).
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME:      %[[X:[^:]+]]: memref<6x16xf32>, %[[DY:[^:]+]]: memref<6x32xf32>, %[[ACC:[^:]+]]: memref<16x32xf32>
// CHECK:         ga.blas_matmul %[[X]], %[[DY]], %[[ACC]] {accumulate, transpose_lhs} : memref<6x16xf32>, memref<6x32xf32>, memref<16x32xf32>
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @weight_gradient(%x: memref<6x16xf32>, %dy: memref<6x32xf32>, %acc: memref<16x32xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : memref<6x16xf32>, memref<6x32xf32>) outs(%acc : memref<16x32xf32>)
  return
}

// -----

// A bf16 product into an f32 buffer right after its zero fill: beta = 0
// (the fill is dropped), inputs bf16, output f32.
// CHECK-LABEL: func.func @forward_bf16(
// CHECK-NOT:     linalg.fill
// CHECK:         ga.blas_matmul %{{.*}}, %{{.*}}, %{{.*}} : memref<8x16xbf16>, memref<16x4xbf16>, memref<8x4xf32>
// CHECK-NOT:     linalg.
func.func @forward_bf16(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %c: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xbf16>, memref<16x4xbf16>) outs(%c : memref<8x4xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// What the library does not take stays a linalg op for the generated
// kernels: f64, an operand whose rows are not contiguous, a bf16 output (the
// original rounds every partial sum to bf16), a batch dimension that is not
// the outermost of every operand.
// CHECK-LABEL: func.func @left_alone(
// CHECK:         linalg.matmul
// CHECK:         linalg.matmul
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK-NOT:     ga.blas_matmul
func.func @left_alone(%d: memref<4x8xf64>, %e: memref<8x4xf64>, %f: memref<4x4xf64>,
                      %g: memref<4x8xf32, strided<[16, 2]>>, %h: memref<8x4xf32>, %i: memref<4x4xf32>,
                      %j: memref<4x8xbf16>, %k: memref<8x4xbf16>, %l: memref<4x4xbf16>,
                      %x: memref<4x2x8xf32>, %y: memref<2x8x4xf32>, %z: memref<2x4x4xf32>) {
  linalg.matmul ins(%d, %e : memref<4x8xf64>, memref<8x4xf64>) outs(%f : memref<4x4xf64>)
  linalg.matmul ins(%g, %h : memref<4x8xf32, strided<[16, 2]>>, memref<8x4xf32>) outs(%i : memref<4x4xf32>)
  linalg.matmul ins(%j, %k : memref<4x8xbf16>, memref<8x4xbf16>) outs(%l : memref<4x4xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (m, b, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<4x2x8xf32>, memref<2x8x4xf32>) outs(%z : memref<2x4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Attention's scores S = Q K^T per batch (K stored [b][n][k]: B transposed),
// after a zero fill: one batched product (3-d operands), beta = 0.
// CHECK-LABEL: func.func @attention_scores(
// CHECK-NOT:     linalg.
// CHECK:         ga.blas_matmul %{{.*}}, %{{.*}}, %{{.*}} {transpose_rhs} : memref<4x6x8xf32>, memref<4x6x8xf32>, memref<4x6x6xf32>
// CHECK-NOT:     linalg.
func.func @attention_scores(%q: memref<4x6x8xf32>, %k: memref<4x6x8xf32>, %s: memref<4x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<4x6x6xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<4x6x8xf32>, memref<4x6x8xf32>) outs(%s : memref<4x6x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// The gradient of P V with respect to V, accumulated (dV += P^T dO): A
// transposed, beta = 1.
// CHECK-LABEL: func.func @attention_value_gradient(
// CHECK:         ga.blas_matmul %{{.*}}, %{{.*}}, %{{.*}} {accumulate, transpose_lhs} : memref<2x6x6xf32>, memref<2x6x8xf32>, memref<2x6x8xf32>
func.func @attention_value_gradient(%p: memref<2x6x6xf32>, %do: memref<2x6x8xf32>, %dv: memref<2x6x8xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%p, %do : memref<2x6x6xf32>, memref<2x6x8xf32>) outs(%dv : memref<2x6x8xf32>)
  return
}

// -----

// The forward x W + b (as ga-fuse-elementwise leaves it): a product with
// beta = 0 into %c, then the broadcast bias add into %d, which the product's
// product now writes with the bias as its epilogue; the add is gone (and
// %d's allocation moves before the product). %c is only overwritten
// afterwards (the ReLU), never read.
// CHECK-LABEL: func.func @bias_epilogue(
// CHECK-SAME:      %[[X:[^:]+]]: memref<6x16xf32>, %[[W:[^:]+]]: memref<16x32xf32>, %[[B:[^:]+]]: memref<32xf32>
// CHECK:         %[[C:.*]] = memref.alloc() : memref<6x32xf32>
// CHECK:         %[[D:.*]] = memref.alloc() : memref<6x32xf32>
// CHECK-NEXT:    ga.blas_matmul %[[X]], %[[W]], %[[D]] bias(%[[B]] : memref<32xf32>) : memref<6x16xf32>, memref<16x32xf32>, memref<6x32xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[D]] : memref<6x32xf32>) outs(%[[C]] : memref<6x32xf32>)
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.generic
// CHECK:         return
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @bias_epilogue(%x: memref<6x16xf32>, %w: memref<16x32xf32>, %b: memref<32xf32>, %out: memref<6x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x32xf32>)
  linalg.matmul ins(%x, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%c : memref<6x32xf32>)
  %d = memref.alloc() : memref<6x32xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<6x32xf32>, memref<32xf32>) outs(%d : memref<6x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %q, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : memref<6x32xf32>) outs(%c : memref<6x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.maximumf %p, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %c, %out : memref<6x32xf32> to memref<6x32xf32>
  memref.dealloc %c : memref<6x32xf32>
  memref.dealloc %d : memref<6x32xf32>
  return
}

// -----

// The add in place (bufferization writes it into the product's own buffer
// when nothing else reads the product): the product writes %c with the
// bias.
// CHECK-LABEL: func.func @bias_epilogue_in_place(
// CHECK-SAME:      %[[X:[^:]+]]: memref<6x16xf32>, %[[W:[^:]+]]: memref<16x32xf32>, %[[B:[^:]+]]: memref<32xf32>
// CHECK:         %[[C:.*]] = memref.alloc() : memref<6x32xf32>
// CHECK-NEXT:    ga.blas_matmul %[[X]], %[[W]], %[[C]] bias(%[[B]] : memref<32xf32>) : memref<6x16xf32>, memref<16x32xf32>, memref<6x32xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         memref.copy %[[C]]
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @bias_epilogue_in_place(%x: memref<6x16xf32>, %w: memref<16x32xf32>, %b: memref<32xf32>, %out: memref<6x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x32xf32>)
  linalg.matmul ins(%x, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%c : memref<6x32xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<6x32xf32>, memref<32xf32>) outs(%c : memref<6x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %out : memref<6x32xf32> to memref<6x32xf32>
  memref.dealloc %c : memref<6x32xf32>
  return
}

// -----

// No epilogue where the bias gets its value between the product and the add
// (a sharded step's all-gather of the bias, into a buffer allocated there):
// the product would read it before it exists.
// CHECK-LABEL: func.func @no_bias_epilogue_late_bias(
// CHECK:         ga.blas_matmul %{{.*}}, %{{.*}}, %[[C:[^ ]+]] : memref<6x16xf32>
// CHECK:         ga.nccl_all_gather
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @no_bias_epilogue_written_bias(
// CHECK:         ga.blas_matmul %{{.*}}, %{{.*}}, %[[C:[^ ]+]] : memref<6x16xf32>
// CHECK:         ga.nccl_all_gather
// CHECK:         linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @no_bias_epilogue_late_bias(%x: memref<6x16xf32>, %w: memref<16x32xf32>, %mine: memref<16xf32>, %out: memref<6x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x32xf32>)
  linalg.matmul ins(%x, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%c : memref<6x32xf32>)
  %b = memref.alloc() : memref<32xf32>
  ga.nccl_all_gather %mine, %b {datatype = 7 : i32, world = 2 : i64} : memref<16xf32>, memref<32xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<6x32xf32>, memref<32xf32>) outs(%c : memref<6x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %out : memref<6x32xf32> to memref<6x32xf32>
  memref.dealloc %c : memref<6x32xf32>
  memref.dealloc %b : memref<32xf32>
  return
}
func.func @no_bias_epilogue_written_bias(%x: memref<6x16xf32>, %w: memref<16x32xf32>, %mine: memref<16xf32>, %b: memref<32xf32>, %out: memref<6x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x32xf32>)
  linalg.matmul ins(%x, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%c : memref<6x32xf32>)
  ga.nccl_all_gather %mine, %b {datatype = 7 : i32, world = 2 : i64} : memref<16xf32>, memref<32xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<6x32xf32>, memref<32xf32>) outs(%c : memref<6x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %out : memref<6x32xf32> to memref<6x32xf32>
  memref.dealloc %c : memref<6x32xf32>
  return
}

// -----

// No epilogue where the product without the bias is still needed (%c is read
// after the add), nor where the add is not a broadcast over the rows (a bias
// per row, j -> i), nor after a product with beta = 1: the add stays.
// CHECK-LABEL: func.func @no_bias_epilogue(
// CHECK:         ga.blas_matmul %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} :
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK:         ga.blas_matmul %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} :
// CHECK:         linalg.generic
// CHECK:         ga.blas_matmul %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {accumulate} :
// CHECK:         linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
func.func @no_bias_epilogue(%x: memref<6x16xf32>, %w: memref<16x32xf32>, %b: memref<32xf32>, %r: memref<6xf32>,
                            %acc: memref<6x32xf32>, %out: memref<6x32xf32>, %out2: memref<6x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<6x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x32xf32>)
  linalg.matmul ins(%x, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%c : memref<6x32xf32>)
  %d = memref.alloc() : memref<6x32xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<6x32xf32>, memref<32xf32>) outs(%d : memref<6x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %d : memref<6x32xf32>, memref<6x32xf32>) outs(%out : memref<6x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  }
  %e = memref.alloc() : memref<6x32xf32>
  linalg.fill ins(%zero : f32) outs(%e : memref<6x32xf32>)
  linalg.matmul ins(%x, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%e : memref<6x32xf32>)
  %f = memref.alloc() : memref<6x32xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %r : memref<6x32xf32>, memref<6xf32>) outs(%f : memref<6x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%x, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%acc : memref<6x32xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc, %b : memref<6x32xf32>, memref<32xf32>) outs(%out2 : memref<6x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<6x32xf32>
  memref.dealloc %d : memref<6x32xf32>
  memref.dealloc %e : memref<6x32xf32>
  memref.dealloc %f : memref<6x32xf32>
  return
}

// -----

// In a loop, %c of the previous iteration is read before its zero fill: the
// product must keep writing it, so the bias add stays.
// CHECK-LABEL: func.func @no_bias_epilogue_loop(
// CHECK:         scf.for
// CHECK:           linalg.copy
// CHECK:           ga.blas_matmul
// CHECK:           linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @no_bias_epilogue_loop(%x: memref<6x16xf32>, %w: memref<16x32xf32>, %b: memref<32xf32>,
                                 %prev: memref<6x32xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c = memref.alloc() : memref<6x32xf32>
  %d = memref.alloc() : memref<6x32xf32>
  scf.for %i = %c0 to %n step %c1 {
    linalg.copy ins(%c : memref<6x32xf32>) outs(%prev : memref<6x32xf32>)
    linalg.fill ins(%zero : f32) outs(%c : memref<6x32xf32>)
    linalg.matmul ins(%x, %w : memref<6x16xf32>, memref<16x32xf32>) outs(%c : memref<6x32xf32>)
    linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%c, %b : memref<6x32xf32>, memref<32xf32>) outs(%d : memref<6x32xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    }
  }
  memref.dealloc %c : memref<6x32xf32>
  memref.dealloc %d : memref<6x32xf32>
  return
}

// -----

// Matrix-vector products are GEMMs with a unit dimension: y = A x as M x 1
// (x viewed as K x 1, y as M x 1: leading dimension 1), after its zero fill
// (beta = 0); g += r^T X with no M dimension as 1 x N (r viewed as 1 x K)
// into an accumulator (beta = 1).
// CHECK-LABEL: func.func @vector_products(
// CHECK:         %[[XM:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [16, 1] : memref<16xf32> into memref<16x1xf32>
// CHECK:         %[[YM:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [6, 1] : memref<6xf32> into memref<6x1xf32>
// CHECK:         ga.blas_matmul %{{.*}}, %[[XM]], %[[YM]] : memref<6x16xf32>, memref<16x1xf32>, memref<6x1xf32>
// CHECK:         %[[RM:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 6] : memref<6xf32> into memref<1x6xf32>
// CHECK:         %[[GM:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 16] : memref<16xf32> into memref<1x16xf32>
// CHECK:         ga.blas_matmul %[[RM]], %{{.*}}, %[[GM]] {accumulate} : memref<1x6xf32>, memref<6x16xf32>, memref<1x16xf32>
// CHECK-NOT:     linalg.
func.func @vector_products(%a: memref<6x16xf32>, %x: memref<16xf32>, %y: memref<6xf32>,
                           %r: memref<6xf32>, %g: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<6xf32>)
  linalg.matvec ins(%a, %x : memref<6x16xf32>, memref<16xf32>) outs(%y : memref<6xf32>)
  linalg.vecmat ins(%r, %a : memref<6xf32>, memref<6x16xf32>) outs(%g : memref<16xf32>)
  return
}
