//===- GACublasLtProblem.h - the gaCublasLtMatmul ABI as a GEMM -*- C++ -*-===//
//
// The one translation of a gaCublasLtMatmul / gaCublasLtMatmulStridedBatched
// call (row-major matrices as MLIR's identity-layout memrefs store them) into
// the column-major GEMM problem that cuBLASLt (libga_cublaslt_runtime.so) and
// the CPU implementation of the same ABI on CBLAS (libga_cublaslt_cpu.so)
// both execute. Pure: no CUDA, no BLAS, no allocation; so that running the
// CPU library against an independent oracle checks the translation that the
// GPU library uses.
//
// A row-major C (m x n, leading dimension ldc) is the column-major C^T
// (n x m, same leading dimension). C = op(A) op(B) is therefore
// C^T = op(B)^T op(A)^T: the column-major GEMM takes B as its first operand
// and A as its second, with m and n swapped, and no data moves. A row-major
// matrix stored transposed is a column-major matrix stored plain, so the
// transpose flags carry over unchanged. The bias of a row-major C (one value
// per column of C) is one value per row of the column-major D, which is what
// CUBLASLT_EPILOGUE_BIAS broadcasts.
//
//===----------------------------------------------------------------------===//

#ifndef GA_RUNTIME_CUDA_GACUBLASLTPROBLEM_H
#define GA_RUNTIME_CUDA_GACUBLASLTPROBLEM_H

#include "GACublasLt.h"

#include <algorithm>
#include <cstdint>

namespace ga::cublaslt {

/// The arguments of one call, as the lowered code passes them (row-major).
struct RowMajorCall {
  int32_t transA = 0, transB = 0;
  int64_t m = 0, n = 0, k = 0;
  const void *a = nullptr;
  int64_t lda = 0, strideA = 0;
  const void *b = nullptr;
  int64_t ldb = 0, strideB = 0;
  void *c = nullptr;
  int64_t ldc = 0, strideC = 0;
  int64_t batchCount = 1;
  int32_t abType = GA_CUDA_R_32F, cType = GA_CUDA_R_32F;
  float alpha = 1, beta = 0;
  const void *bias = nullptr;
};

/// The arguments of gaCublasLtMatmul (one product, optional bias).
inline RowMajorCall plainCall(int32_t transA, int32_t transB, int64_t m,
                              int64_t n, int64_t k, const void *a, int64_t lda,
                              const void *b, int64_t ldb, void *c, int64_t ldc,
                              int32_t abType, int32_t cType, float alpha,
                              float beta, const void *bias) {
  RowMajorCall call;
  call.transA = transA, call.transB = transB;
  call.m = m, call.n = n, call.k = k;
  call.a = a, call.lda = lda;
  call.b = b, call.ldb = ldb;
  call.c = c, call.ldc = ldc;
  call.abType = abType, call.cType = cType;
  call.alpha = alpha, call.beta = beta;
  call.bias = bias;
  return call;
}

/// The arguments of gaCublasLtMatmulStridedBatched (no bias).
inline RowMajorCall
stridedBatchedCall(int32_t transA, int32_t transB, int64_t m, int64_t n,
                   int64_t k, const void *a, int64_t lda, int64_t strideA,
                   const void *b, int64_t ldb, int64_t strideB, void *c,
                   int64_t ldc, int64_t strideC, int64_t batchCount,
                   int32_t abType, int32_t cType, float alpha, float beta) {
  RowMajorCall call = plainCall(transA, transB, m, n, k, a, lda, b, ldb, c, ldc,
                                abType, cType, alpha, beta, nullptr);
  call.strideA = strideA, call.strideB = strideB, call.strideC = strideC;
  call.batchCount = batchCount;
  return call;
}

/// One column-major matrix operand as BLAS and cuBLASLt describe it: stored
/// `rows` x `cols` with leading dimension `ld` (>= max(1, rows)), element
/// (i, j) of batch `p` at `data + p * batchStride + i + j * ld` elements.
struct ColumnMajorMatrix {
  const void *data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0, batchStride = 0;
  bool transposed = false; ///< op() of the GEMM (not of C).
};

/// D = alpha op(first) op(second) + beta C (+ bias[i] on every element of row
/// i), column-major, `rows` x `cols`, reduction `depth`, `batchCount` times;
/// D is C (in place).
struct ColumnMajorGemm {
  ColumnMajorMatrix first, second, c;
  int64_t rows = 0, cols = 0, depth = 0, batchCount = 1;
  int32_t abType = GA_CUDA_R_32F, cType = GA_CUDA_R_32F;
  float alpha = 1, beta = 0;
  const void *bias = nullptr; ///< `rows` values of cType, or null.
};

/// Whether the types are ones the ABI accepts: A and B f32, f16 or bf16, C
/// f32 or the type of A and B.
inline bool isSupportedTypes(int32_t abType, int32_t cType) {
  bool ab = abType == GA_CUDA_R_32F || abType == GA_CUDA_R_16F ||
            abType == GA_CUDA_R_16BF;
  return ab && (cType == GA_CUDA_R_32F || cType == abType);
}

/// Translates `call` into `gemm`. Returns null on success, else what is wrong
/// with the call (the caller reports it): unsupported types, a negative size
/// or stride, a leading dimension smaller than a stored row, a batch count
/// below 1.
inline const char *translate(const RowMajorCall &call, ColumnMajorGemm &gemm) {
  if (!isSupportedTypes(call.abType, call.cType))
    return "unsupported types (A and B: f32, f16 or bf16; C: f32 or the type "
           "of A and B)";
  if (call.m < 0 || call.n < 0 || call.k < 0)
    return "negative size";
  if (call.batchCount < 1)
    return "batch count below 1";
  if (call.strideA < 0 || call.strideB < 0 || call.strideC < 0)
    return "negative batch stride";
  // Row-major stored shapes: A is m x k (k x m transposed), B k x n (n x k).
  int64_t aCols = call.transA ? call.m : call.k;
  int64_t bCols = call.transB ? call.k : call.n;
  if (call.lda < std::max<int64_t>(1, aCols) ||
      call.ldb < std::max<int64_t>(1, bCols) ||
      call.ldc < std::max<int64_t>(1, call.n))
    return "leading dimension smaller than a row";
  gemm = ColumnMajorGemm();
  gemm.rows = call.n;
  gemm.cols = call.m;
  gemm.depth = call.k;
  gemm.batchCount = call.batchCount;
  gemm.abType = call.abType;
  gemm.cType = call.cType;
  gemm.alpha = call.alpha;
  gemm.beta = call.beta;
  gemm.bias = call.bias;
  // A row-major r x c matrix with leading dimension ld is the column-major
  // c x r matrix with the same leading dimension.
  gemm.first = {call.b,   bCols,        call.transB ? call.n : call.k,
                call.ldb, call.strideB, call.transB != 0};
  gemm.second = {call.a,   aCols,        call.transA ? call.k : call.m,
                 call.lda, call.strideA, call.transA != 0};
  gemm.c = {call.c, call.n, call.m, call.ldc, call.strideC, false};
  return nullptr;
}

} // namespace ga::cublaslt

#endif // GA_RUNTIME_CUDA_GACUBLASLTPROBLEM_H
