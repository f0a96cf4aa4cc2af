//===- GACublasLt.h - matrix products through cuBLASLt ----------*- C++ -*-===//
//
// The library that GPU code calls for matrix products instead of generated
// kernels (libga_cublaslt_runtime.so, on cuBLASLt from the CUDA toolkit).
// One cuBLASLt handle and one device workspace per process, created at the
// first call and kept for its lifetime; every product is enqueued on the
// caller's stream (the step's one stream), so that it is ordered with the
// step's kernels without a host wait.
//
// Matrices are row-major, as MLIR's identity-layout memrefs: element (i, j)
// of a matrix with leading dimension `ld` is at `ptr[i * ld + j]`. The call
//
//   gaCublasLtMatmul(stream, transA, transB, m, n, k, A, lda, B, ldb,
//                    C, ldc, abType, cType, alpha, beta, bias)
//
// computes C = alpha * op(A) * op(B) + beta * C (+ bias broadcast over the
// rows of C when `bias` is not null), where op(A) is m x k and op(B) is
// k x n. beta = 1 accumulates into C (a gradient accumulator carried across
// micro-batches: Megatron's fused weight-gradient accumulation); beta = 0
// overwrites it. Products accumulate in fp32 (CUBLAS_COMPUTE_32F): A and B
// are f32, f16 or bf16 (`abType`), C is f32 or the type of A and B
// (`cType`); types are CUDA's cudaDataType_t values (GA_CUDA_R_*).
//
// Batched products (a batch of independent products, each operand at a
// constant element stride from the previous one) go through
//
//   gaCublasLtMatmulStridedBatched(stream, transA, transB, m, n, k,
//                                  A, lda, strideA, B, ldb, strideB,
//                                  C, ldc, strideC, batchCount,
//                                  abType, cType, alpha, beta)
//
// (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and _STRIDED_BATCH_OFFSET).
//
// The translation of these arguments into the column-major problem that is
// executed is GACublasLtProblem.h, shared with libga_cublaslt_cpu.so, the
// same ABI on CBLAS that ga-verify runs on the CPU.
//
// Nothing in a call synchronizes or allocates after the first call of a
// problem shape: the handle and workspace are created at the first call, and
// the descriptors and the algorithm that cuBLASLt's heuristic picks are kept
// per problem shape (and operand alignment), so the calls can be captured in
// a CUDA graph.
//
// Errors: as in lib/Runtime/CUDA, a failure names the call and the status
// on stderr and exits with status 3; without a usable driver or GPU it says
// so.
//
//===----------------------------------------------------------------------===//

#ifndef GA_RUNTIME_CUDA_GACUBLASLT_H
#define GA_RUNTIME_CUDA_GACUBLASLT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// cudaDataType_t values of the element types the wrapper accepts.
enum {
  GA_CUDA_R_32F = 0,
  GA_CUDA_R_16F = 2,
  GA_CUDA_R_16BF = 14,
};

/// An opaque CUstream (the mgpu* streams of lib/Runtime/CUDA).
typedef struct CUstream_st *GAStream;

void gaCublasLtMatmul(GAStream stream, int32_t transA, int32_t transB,
                      int64_t m, int64_t n, int64_t k, const void *a,
                      int64_t lda, const void *b, int64_t ldb, void *c,
                      int64_t ldc, int32_t abType, int32_t cType, float alpha,
                      float beta, const void *bias);

void gaCublasLtMatmulStridedBatched(
    GAStream stream, int32_t transA, int32_t transB, int64_t m, int64_t n,
    int64_t k, const void *a, int64_t lda, int64_t strideA, const void *b,
    int64_t ldb, int64_t strideB, void *c, int64_t ldc, int64_t strideC,
    int64_t batchCount, int32_t abType, int32_t cType, float alpha, float beta);

/// Bytes of the device workspace handed to cuBLASLt (32 MiB).
int64_t gaCublasLtWorkspaceSize(void);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // GA_RUNTIME_CUDA_GACUBLASLT_H
