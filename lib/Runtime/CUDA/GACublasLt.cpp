//===- GACublasLt.cpp - matrix products through cuBLASLt ------------------===//
//
// See GACublasLt.h. The row-major call becomes a column-major problem in
// GACublasLtProblem.h (shared with the CPU implementation of the ABI); this
// file only hands that problem to cuBLASLt.
//
//===----------------------------------------------------------------------===//

#include "GACublasLt.h"

#include "CudaErrors.h"
#include "GACublasLtProblem.h"
#include "ga-runtime/GARuntimeABI.h"

#include <cublasLt.h>
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <unordered_map>

// The declarations above are the ABI the passes emit calls to: the stream,
// then the operands of GARuntimeABI.h, C (the only output) where it says.
static_assert(ga_abi::checkCublasLtABI<decltype(&gaCublasLtMatmul),
                                       ga_abi::kCublasLtMatmulArity,
                                       ga_abi::kCublasLtMatmulOutput>(),
              "gaCublasLtMatmul differs from GARuntimeABI.h");
static_assert(
    ga_abi::checkCublasLtABI<decltype(&gaCublasLtMatmulStridedBatched),
                             ga_abi::kCublasLtMatmulStridedBatchedArity,
                             ga_abi::kCublasLtMatmulStridedBatchedOutput>(),
    "gaCublasLtMatmulStridedBatched differs from GARuntimeABI.h");

namespace {

using ga::cuda::kExitStatus;
constexpr size_t kWorkspaceBytes = ga_abi::kCublasLtWorkspaceBytes;

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

using ga::cublaslt::ColumnMajorGemm;
using ga::cublaslt::ColumnMajorMatrix;
using ga::cublaslt::RowMajorCall;

/// The descriptors and the algorithm of one problem shape, created at its
/// first call and kept for the process.
struct Plan {
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo = {};
};

/// What a plan depends on: everything but the addresses, of which only the
/// alignment matters to the algorithm.
struct PlanKey {
  int64_t values[20];
  bool operator==(const PlanKey &o) const {
    return std::equal(std::begin(values), std::end(values),
                      std::begin(o.values));
  }
};

struct PlanKeyHash {
  size_t operator()(const PlanKey &key) const {
    size_t h = 0;
    for (int64_t v : key.values)
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};

/// The largest power of two up to 16 that divides `p` (bytes).
int64_t alignmentOf(const void *p) {
  auto v = reinterpret_cast<uintptr_t>(p);
  int64_t align = 16;
  while (align > 1 && v % align != 0)
    align /= 2;
  return align;
}

PlanKey keyOf(const ColumnMajorGemm &g) {
  return {{g.rows,
           g.cols,
           g.depth,
           g.batchCount,
           g.abType,
           g.cType,
           g.first.transposed,
           g.first.ld,
           g.first.batchStride,
           g.second.transposed,
           g.second.ld,
           g.second.batchStride,
           g.c.ld,
           g.c.batchStride,
           g.bias != nullptr,
           alignmentOf(g.first.data),
           alignmentOf(g.second.data),
           alignmentOf(g.c.data),
           g.bias ? alignmentOf(g.bias) : 0,
           0}};
}

cublasLtMatrixLayout_t makeLayout(const ColumnMajorMatrix &m, int32_t type,
                                  int64_t batchCount) {
  cublasLtMatrixLayout_t layout = nullptr;
  GA_BLAS_CHECK(cublasLtMatrixLayoutCreate(
      &layout, static_cast<cudaDataType_t>(type), m.rows, m.cols, m.ld));
  if (batchCount > 1) {
    int32_t count = static_cast<int32_t>(batchCount);
    GA_BLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    int64_t stride = m.batchStride;
    GA_BLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
        sizeof(stride)));
  }
  return layout;
}

/// Creates the plan of `g`: descriptors, and the first algorithm of
/// cuBLASLt's heuristic for them.
Plan makePlan(State &s, const ColumnMajorGemm &g) {
  Plan p;
  GA_BLAS_CHECK(
      cublasLtMatmulDescCreate(&p.matmul, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opFirst = g.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = g.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
      p.matmul, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst)));
  GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
      p.matmul, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof(opSecond)));
  if (g.bias) {
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    auto ct = static_cast<cudaDataType_t>(g.cType);
    GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
        p.matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
        p.matmul, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &ct, sizeof(ct)));
  }
  p.first = makeLayout(g.first, g.abType, g.batchCount);
  p.second = makeLayout(g.second, g.abType, g.batchCount);
  p.c = makeLayout(g.c, g.cType, g.batchCount);
  cublasLtMatmulPreference_t preference = nullptr;
  GA_BLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  size_t workspace = kWorkspaceBytes;
  GA_BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
      sizeof(workspace)));
  // The algorithm may rely on the alignment of these operands only.
  std::pair<cublasLtMatmulPreferenceAttributes_t, const void *> aligned[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, g.first.data},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, g.second.data},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, g.c.data},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, g.c.data}};
  for (auto [attr, ptr] : aligned) {
    uint32_t bytes = static_cast<uint32_t>(alignmentOf(ptr));
    GA_BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, attr, &bytes,
                                                       sizeof(bytes)));
  }
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  GA_BLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(s.handle, p.matmul, p.first,
                                               p.second, p.c, p.c, preference,
                                               1, &heuristic, &found));
  cublasLtMatmulPreferenceDestroy(preference);
  if (found == 0)
    failUsage("gaCublasLtMatmul: cuBLASLt has no algorithm for this product");
  p.algo = heuristic.algo;
  return p;
}

/// Enqueues `g` on `stream`: plans are looked up (created at the first call
/// of a shape) under a lock; the bias pointer, the one attribute that
/// changes between calls of a shape, is set on the plan's descriptor under
/// the same lock, right before the enqueue.
void run(GAStream stream, const RowMajorCall &call) {
  ColumnMajorGemm g;
  if (const char *error = ga::cublaslt::translate(call, g))
    failUsage(error);
  State &s = state();
  if (g.rows == 0 || g.cols == 0)
    return;
  static std::mutex mutex;
  static std::unordered_map<PlanKey, Plan, PlanKeyHash> plans;
  std::lock_guard<std::mutex> lock(mutex);
  PlanKey key = keyOf(g);
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans.emplace(key, makePlan(s, g)).first;
  Plan &p = it->second;
  if (g.bias)
    GA_BLAS_CHECK(cublasLtMatmulDescSetAttribute(
        p.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof(g.bias)));
  GA_BLAS_CHECK(cublasLtMatmul(
      s.handle, p.matmul, &g.alpha, g.first.data, p.first, g.second.data,
      p.second, &g.beta, g.c.data, p.c, const_cast<void *>(g.c.data), p.c,
      &p.algo, reinterpret_cast<void *>(s.workspace), kWorkspaceBytes,
      reinterpret_cast<cudaStream_t>(stream)));
}

} // namespace

extern "C" int64_t gaCublasLtWorkspaceSize(void) { return kWorkspaceBytes; }

extern "C" void gaCublasLtMatmul(GAStream stream, int32_t transA,
                                 int32_t transB, int64_t m, int64_t n,
                                 int64_t k, const void *a, int64_t lda,
                                 const void *b, int64_t ldb, void *c,
                                 int64_t ldc, int32_t abType, int32_t cType,
                                 float alpha, float beta, const void *bias) {
  run(stream,
      ga::cublaslt::plainCall(transA, transB, m, n, k, a, lda, b, ldb, c, ldc,
                              abType, cType, alpha, beta, bias));
}

extern "C" void gaCublasLtMatmulStridedBatched(
    GAStream stream, int32_t transA, int32_t transB, int64_t m, int64_t n,
    int64_t k, const void *a, int64_t lda, int64_t strideA, const void *b,
    int64_t ldb, int64_t strideB, void *c, int64_t ldc, int64_t strideC,
    int64_t batchCount, int32_t abType, int32_t cType, float alpha,
    float beta) {
  run(stream, ga::cublaslt::stridedBatchedCall(
                  transA, transB, m, n, k, a, lda, strideA, b, ldb, strideB, c,
                  ldc, strideC, batchCount, abType, cType, alpha, beta));
}
