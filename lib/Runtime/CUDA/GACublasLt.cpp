//===- GACublasLt.cpp - matrix products through cuBLASLt ------------------===//
//
// See GACublasLt.h. A row-major product C = op(A) op(B) is the column-major
// product C^T = op(B)^T op(A)^T: cuBLASLt gets B as its first operand and A
// as its second, with m and n swapped, and no data moves. The bias of a
// row-major C (one value per column) is then one value per row of the
// column-major D, which is what CUBLASLT_EPILOGUE_BIAS adds.
//
//===----------------------------------------------------------------------===//

#include "GACublasLt.h"

#include "CudaErrors.h"

#include <cublasLt.h>
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

using ga::cuda::kExitStatus;
constexpr size_t kWorkspaceBytes = 32u << 20;

[[noreturn]] void failBlas(cublasStatus_t s, const char *call) {
  std::fprintf(stderr, "ga-cublaslt: error: %s failed: %s (%d)\n", call,
               cublasLtGetStatusName(s), static_cast<int>(s));
  std::fflush(stderr);
  std::exit(kExitStatus);
}

[[noreturn]] void failUsage(const char *what) {
  std::fprintf(stderr, "ga-cublaslt: error: %s\n", what);
  std::fflush(stderr);
  std::exit(kExitStatus);
}

#define GA_CU_CHECK(expr)                                                      \
  do {                                                                         \
    CUresult gaResult_ = (expr);                                               \
    if (gaResult_ != CUDA_SUCCESS)                                             \
      ga::cuda::failDriverCall("ga-cublaslt", gaResult_, #expr,                \
                               "cuBLASLt needs one to run", __FILE__,          \
                               __LINE__);                                      \
  } while (false)

#define GA_BLAS_CHECK(expr)                                                    \
  do {                                                                         \
    cublasStatus_t gaStatus_ = (expr);                                         \
    if (gaStatus_ != CUBLAS_STATUS_SUCCESS)                                    \
      failBlas(gaStatus_, #expr);                                              \
  } while (false)

/// The process-wide handle and workspace, created at the first product on
/// the primary context of device 0 (the context lib/Runtime/CUDA uses).
struct State {
  cublasLtHandle_t handle = nullptr;
  CUdeviceptr workspace = 0;
};

State &state() {
  static State s;
  static std::once_flag once;
  std::call_once(once, [] {
    GA_CU_CHECK(cuInit(0));
    CUdevice device = 0;
    GA_CU_CHECK(cuDeviceGet(&device, 0));
    CUcontext context = nullptr;
    GA_CU_CHECK(cuDevicePrimaryCtxRetain(&context, device));
    GA_CU_CHECK(cuCtxSetCurrent(context));
    GA_BLAS_CHECK(cublasLtCreate(&s.handle));
    GA_CU_CHECK(cuMemAlloc(&s.workspace, kWorkspaceBytes));
  });
  return s;
}

bool isSupported(int32_t abType, int32_t cType) {
  bool ab =
      abType == CUDA_R_32F || abType == CUDA_R_16F || abType == CUDA_R_16BF;
  return ab && (cType == CUDA_R_32F || cType == abType);
}

/// Owns the descriptors of one call.
struct Descriptors {
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~Descriptors() {
    if (preference)
      cublasLtMatmulPreferenceDestroy(preference);
    for (cublasLtMatrixLayout_t l : {a, b, c})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
    if (matmul)
      cublasLtMatmulDescDestroy(matmul);
  }
};

} // namespace

extern "C" int64_t gaCublasLtWorkspaceSize(void) { return kWorkspaceBytes; }

extern "C" void gaCublasLtMatmul(GAStream stream, int32_t transA,
                                 int32_t transB, int64_t m, int64_t n,
                                 int64_t k, const void *a, int64_t lda,
                                 const void *b, int64_t ldb, void *c,
                                 int64_t ldc, int32_t abType, int32_t cType,
                                 float alpha, float beta, const void *bias) {
  if (!isSupported(abType, cType))
    failUsage("gaCublasLtMatmul: unsupported types (A and B: f32, f16 or "
              "bf16; C: f32 or the type of A and B)");
  if (m < 0 || n < 0 || k < 0)
    failUsage("gaCublasLtMatmul: negative size");
  State &s = state();
  if (m == 0 || n == 0)
    return;
  auto ab = static_cast<cudaDataType_t>(abType);
  auto ct = static_cast<cudaDataType_t>(cType);
  Descriptors d;
  GA_BLAS_CHECK(
      cublasLtMatmulDescCreate(&d.matmul, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // Column-major view: first operand B (n x k after its op), second A.
  cublasOperation_t opFirst = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
      d.matmul, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst)));
  GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
      d.matmul, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof(opSecond)));
  if (bias) {
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
        d.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
        d.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
        d.matmul, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &ct, sizeof(ct)));
  }
  // Stored shapes (column-major rows x cols) of the row-major operands.
  GA_BLAS_CHECK(cublasLtMatrixLayoutCreate(&d.b, ab, transB ? k : n,
                                           transB ? n : k, ldb));
  GA_BLAS_CHECK(cublasLtMatrixLayoutCreate(&d.a, ab, transA ? m : k,
                                           transA ? k : m, lda));
  GA_BLAS_CHECK(cublasLtMatrixLayoutCreate(&d.c, ct, n, m, ldc));
  GA_BLAS_CHECK(cublasLtMatmulPreferenceCreate(&d.preference));
  size_t workspace = kWorkspaceBytes;
  GA_BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      d.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
      sizeof(workspace)));
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  GA_BLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(s.handle, d.matmul, d.b, d.a,
                                               d.c, d.c, d.preference, 1,
                                               &heuristic, &found));
  if (found == 0)
    failUsage("gaCublasLtMatmul: cuBLASLt has no algorithm for this product");
  GA_BLAS_CHECK(cublasLtMatmul(s.handle, d.matmul, &alpha, b, d.b, a, d.a,
                               &beta, c, d.c, c, d.c, &heuristic.algo,
                               reinterpret_cast<void *>(s.workspace), workspace,
                               reinterpret_cast<cudaStream_t>(stream)));
}
