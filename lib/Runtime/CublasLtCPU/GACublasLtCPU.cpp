//===- GACublasLtCPU.cpp - the gaCublasLtMatmul ABI on CBLAS --------------===//
//
// libga_cublaslt_cpu.so: the functions of lib/Runtime/CUDA/GACublasLt.h, with
// the same names and signatures, on the CPU with CBLAS (cblas_sgemm of
// OpenBLAS). ga-verify loads it (--shared-libs) to run the output of
// --ga-lower-to-gpu-loops with cublas=1 on the CPU, so that the library-call
// lowering (which operands, transposes, leading dimensions, offsets, batch
// strides, beta, bias) is checked against the full-batch step. The row-major
// call becomes the column-major problem through GACublasLtProblem.h, the
// translation libga_cublaslt_runtime.so hands to cuBLASLt, and that problem
// is what runs here: cblas_sgemm(CblasColMajor, ...) per batch, then the bias
// per row of the column-major D.
//
// The stream is ignored (everything runs when called). f16 and bf16 operands
// are converted to f32 (exactly) and multiplied by cblas_sgemm, like
// cuBLASLt's fp32 accumulation; a C of f16 or bf16 is converted to f32 before
// and rounded back (to nearest even) after.
//
//===----------------------------------------------------------------------===//

#include "GACublasLt.h"
#include "GACublasLtProblem.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// CBLAS (cblas.h of OpenBLAS or the reference CBLAS): declared here so that
// only the library, not its header, is needed.
extern "C" void cblas_sgemm(int order, int transA, int transB, int m, int n,
                            int k, float alpha, const float *a, int lda,
                            const float *b, int ldb, float beta, float *c,
                            int ldc);

namespace {

using ga::cublaslt::ColumnMajorGemm;
using ga::cublaslt::ColumnMajorMatrix;
using ga::cublaslt::RowMajorCall;

constexpr int kColMajor = 102, kNoTrans = 111, kTrans = 112;

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "ga-cublaslt-cpu: error: %s\n", what);
  std::fflush(stderr);
  std::exit(3);
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a (quiet) NaN.
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

float loadElement(const void *base, int64_t index, int32_t type) {
  switch (type) {
  case GA_CUDA_R_32F:
    return static_cast<const float *>(base)[index];
  case GA_CUDA_R_16F:
    return static_cast<float>(static_cast<const _Float16 *>(base)[index]);
  default:
    return bf16ToFloat(static_cast<const uint16_t *>(base)[index]);
  }
}

void storeElement(void *base, int64_t index, int32_t type, float value) {
  switch (type) {
  case GA_CUDA_R_32F:
    static_cast<float *>(base)[index] = value;
    return;
  case GA_CUDA_R_16F:
    static_cast<_Float16 *>(base)[index] = static_cast<_Float16>(value);
    return;
  default:
    static_cast<uint16_t *>(base)[index] = floatToBf16(value);
  }
}

/// Batch `p` of column-major matrix `m` as f32 with the same leading
/// dimension: the memory itself for f32, else a converted copy in `buffer`.
float *asFloat(const ColumnMajorMatrix &m, int32_t type, int64_t p,
               std::vector<float> &buffer) {
  int64_t first = p * m.batchStride;
  if (type == GA_CUDA_R_32F)
    return const_cast<float *>(static_cast<const float *>(m.data) + first);
  buffer.assign(static_cast<size_t>(m.ld * m.cols), 0.0f);
  for (int64_t j = 0; j < m.cols; ++j)
    for (int64_t i = 0; i < m.rows; ++i)
      buffer[i + j * m.ld] = loadElement(m.data, first + i + j * m.ld, type);
  return buffer.data();
}

int toInt(int64_t v) {
  if (v > 0x7fffffff)
    fail("a size or leading dimension does not fit CBLAS's int");
  return static_cast<int>(v);
}

void run(const RowMajorCall &call) {
  ColumnMajorGemm g;
  if (const char *error = ga::cublaslt::translate(call, g))
    fail(error);
  if (g.rows == 0 || g.cols == 0)
    return;
  std::vector<float> firstBuf, secondBuf, cBuf;
  for (int64_t p = 0; p < g.batchCount; ++p) {
    const float *first = asFloat(g.first, g.abType, p, firstBuf);
    const float *second = asFloat(g.second, g.abType, p, secondBuf);
    float *c = asFloat(g.c, g.cType, p, cBuf);
    // k = 0 (an empty sum) still scales C by beta, as cuBLASLt does; CBLAS
    // wants its leading dimensions at least 1 also then.
    cblas_sgemm(kColMajor, g.first.transposed ? kTrans : kNoTrans,
                g.second.transposed ? kTrans : kNoTrans, toInt(g.rows),
                toInt(g.cols), toInt(g.depth), g.alpha, first,
                toInt(g.first.ld), second, toInt(g.second.ld), g.beta, c,
                toInt(g.c.ld));
    if (g.bias)
      for (int64_t j = 0; j < g.cols; ++j)
        for (int64_t i = 0; i < g.rows; ++i)
          c[i + j * g.c.ld] += loadElement(g.bias, i, g.cType);
    if (g.cType != GA_CUDA_R_32F)
      for (int64_t j = 0; j < g.cols; ++j)
        for (int64_t i = 0; i < g.rows; ++i)
          storeElement(const_cast<void *>(g.c.data),
                       p * g.c.batchStride + i + j * g.c.ld, g.cType,
                       c[i + j * g.c.ld]);
  }
}

} // namespace

extern "C" int64_t gaCublasLtWorkspaceSize(void) { return 0; }

extern "C" void gaCublasLtMatmul(GAStream, int32_t transA, int32_t transB,
                                 int64_t m, int64_t n, int64_t k, const void *a,
                                 int64_t lda, const void *b, int64_t ldb,
                                 void *c, int64_t ldc, int32_t abType,
                                 int32_t cType, float alpha, float beta,
                                 const void *bias) {
  run(ga::cublaslt::plainCall(transA, transB, m, n, k, a, lda, b, ldb, c, ldc,
                              abType, cType, alpha, beta, bias));
}

extern "C" void gaCublasLtMatmulStridedBatched(
    GAStream, int32_t transA, int32_t transB, int64_t m, int64_t n, int64_t k,
    const void *a, int64_t lda, int64_t strideA, const void *b, int64_t ldb,
    int64_t strideB, void *c, int64_t ldc, int64_t strideC, int64_t batchCount,
    int32_t abType, int32_t cType, float alpha, float beta) {
  run(ga::cublaslt::stridedBatchedCall(transA, transB, m, n, k, a, lda, strideA,
                                       b, ldb, strideB, c, ldc, strideC,
                                       batchCount, abType, cType, alpha, beta));
}
