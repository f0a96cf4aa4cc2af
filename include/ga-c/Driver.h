//===- Driver.h - C API: compile a training step in one call ------*- C -*-===//
//
// The compiler driver of ga-mlir (include/ga/Driver/Driver.h) for C and
// Python clients: typed options in (N, or a micro-batch size, or a memory
// budget; the per-sample arguments; the rewrite's and the lowering's
// options; the results to write in place), the chosen N and the lowered step
// out, each diagnostic with its stable code. No pass pipeline text crosses
// this interface.
//
//===----------------------------------------------------------------------===//

#ifndef GA_C_DRIVER_H
#define GA_C_DRIVER_H

#include "ga-c/Diagnostics.h"

#include "mlir-c/Support.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What the step is lowered to.
enum MlirGATarget {
  /// The LLVM dialect for the host CPU (--ga-lower-to-cpu).
  MlirGATargetCPU,
  /// Nothing: the rewritten step.
  MlirGATargetNone,
  /// Nothing but the choice of N (and of the recompute set): no rewrite.
  MlirGATargetChoice,
  /// The LLVM dialect for the host with the kernels for an NVIDIA GPU
  /// embedded (--ga-lower-to-nvvm).
  MlirGATargetCUDA,
  /// The static memory report (--ga-memory-report, JSON) of the step as the
  /// CPU library bufferizes it.
  MlirGATargetReport,
  /// The sharded-parameter plan under a per-rank budget (--ga-shard-plan,
  /// JSON) of the step sharded with the default plan.
  MlirGATargetShardPlan,
};
typedef enum MlirGATarget MlirGATarget;

/// --ga-lower-to-nvvm's options of the same names, for MlirGATargetCUDA: a
/// switch or count left at -1 and a string left empty keep the pipeline's
/// default.
typedef struct MlirGANVVMOptions {
  /// The GPU architecture (sm_90), PTX features (+ptx80), embedded code (isa,
  /// bin, fatbin), extra ptxas options.
  MlirStringRef chip;
  MlirStringRef features;
  MlirStringRef format;
  MlirStringRef ptxasOptions;
  int64_t optLevel;
  /// The loop mapping and the kernels.
  int64_t blockSize;
  int fuseElementwise;
  int foldUnitDims;
  int fuseRows;
  int fuseSiblings;
  int recomputeShared;
  int64_t gemmTile;
  int64_t gemmMinReduction;
  int64_t splitReductionMin;
  int64_t splitRowReductionMin;
  int64_t rowWarpMin;
  int64_t rowBlockMin;
  int64_t rowMinRows;
  int fma;
  int cublas;
  int cudaGraphs;
  int cInterface;
} MlirGANVVMOptions;

/// The options of one compilation. Initialize with mlirGACompileOptionsInit:
/// a switch or count left at -1 keeps the pipeline's default.
typedef struct MlirGACompileOptions {
  /// The training step (default `train_step`).
  MlirStringRef funcName;
  /// N, the samples per micro-batch, the memory budget (bytes, or with
  /// KiB/MiB/GiB): 0 or empty when not given.
  int64_t microBatches;
  int64_t microBatchSize;
  MlirStringRef maxMemory;
  /// The per-sample arguments: `numBatchArgs` pairs (argument, dimension),
  /// flattened.
  const int64_t *batchArgs;
  intptr_t numBatchArgs;
  /// The rewrite (--ga-accumulate's options of the same names).
  int allowGhostBatch;
  int recomputeStatistics;
  int fuse;
  MlirStringRef accumulatorType;
  MlirStringRef recompute;
  /// Results to write into arguments' buffers: `numInPlace` pairs (result,
  /// argument), flattened. All are, or none when bufferization cannot keep
  /// one in place.
  const int64_t *inPlace;
  intptr_t numInPlace;
  MlirGATarget target;
  /// --ga-lower-to-cpu's options of the same names.
  int blas;
  int fuseElementwise;
  int staticTemporaries;
  int openmp;
  int splitRowReductions;
  int approximateMath;
  int shareBuffers;
  int cInterface;
  int outParams;
  int64_t vectorWidth;
  int64_t numThreads;
  int64_t minParallelWork;
  /// The lowering's options for MlirGATargetCUDA.
  MlirGANVVMOptions nvvm;
  /// 0: no rewrite, the step is lowered as it is (-1, 1: rewritten).
  int rewrite;
  /// A data-parallel step's collectives: gradient buckets of `bucketSize`
  /// bytes (0: none), the collectives as torch.distributed's host calls
  /// (0 or 1) or as MPI_Allreduce calls (0 or 1, for the CPU) with the MPI
  /// ABI `mpiImplementation` (MPICH or OpenMPI; empty: MPICH) and the
  /// function `mpiEntry` that initializes and finalizes MPI (empty: none),
  /// ZeRO-1 for rank `shardRank` of `shardWorld` (0: not sharded) with its
  /// parameters, state results and state arguments.
  int64_t bucketSize;
  int hostCollectives;
  int mpiCollectives;
  MlirStringRef mpiImplementation;
  MlirStringRef mpiEntry;
  int64_t shardRank;
  int64_t shardWorld;
  const int64_t *shardParams;
  intptr_t numShardParams;
  const int64_t *shardStateResults;
  intptr_t numShardStateResults;
  const int64_t *shardStateArgs;
  intptr_t numShardStateArgs;
  /// FSDP (--ga-shard-parameters) for rank `fsdpRank` of `fsdpWorld` (0:
  /// not sharded): the sharded parameters' arguments and results, the
  /// loss's result, the file the shard plan is written to, the parameter
  /// arguments kept gathered across the loop and the parameter results
  /// reduce-scattered after it (the plan chosen under a budget).
  int64_t fsdpRank;
  int64_t fsdpWorld;
  int64_t fsdpLoss;
  const int64_t *fsdpParamArgs;
  intptr_t numFsdpParamArgs;
  const int64_t *fsdpParamResults;
  intptr_t numFsdpParamResults;
  MlirStringRef fsdpPlanOutput;
  const int64_t *fsdpKeepGathered;
  intptr_t numFsdpKeepGathered;
  const int64_t *fsdpReduceAfterLoop;
  intptr_t numFsdpReduceAfterLoop;
  /// For MlirGATargetReport: the class of each argument, and a
  /// data-parallel step's shard [begin, end) (-1: none).
  const MlirStringRef *reportRoles;
  intptr_t numReportRoles;
  int64_t reportShardBegin;
  int64_t reportShardEnd;
  /// For MlirGATargetShardPlan: the candidate numbers of micro-batches, the
  /// per-rank peak of the default plan at each (bytes), the per-rank budget
  /// (empty: every bucket resharded); buckets of `bucketSize` bytes.
  const int64_t *shardPlanMicroBatches;
  intptr_t numShardPlanMicroBatches;
  const int64_t *shardPlanBasePeaks;
  intptr_t numShardPlanBasePeaks;
  MlirStringRef shardPlanMaxMemory;
  /// The target whose bufferization the memory report (MlirGATargetReport)
  /// and a budget (maxMemory, for MlirGATargetChoice or a lowering)
  /// measure: MlirGATargetCPU (heap bytes of the CPU library) or
  /// MlirGATargetCUDA (device bytes of the GPU step, with the `nvvm`
  /// options, and its library workspaces). A budget for MlirGATargetCUDA is
  /// device bytes whatever this says.
  MlirGATarget memoryTarget;
  /// Bytes that a budget (maxMemory) keeps for what the caller allocates
  /// when it returns the step's results (the frontend's tensors): counted in
  /// the predicted peak and in the smallest budget a refusal names (0: none).
  int64_t reservedBytes;
} MlirGACompileOptions;

/// What a compilation chose and produced, valid during the callback.
typedef struct MlirGACompileResult {
  /// N and the recompute set of the rewrite.
  int64_t microBatches;
  MlirStringRef recompute;
  /// Under a budget, the predicted total peak (bytes) and the work the
  /// recomputation adds (operations per step); -1 otherwise.
  int64_t predictedPeak;
  int64_t recomputeWork;
  /// The results written in place: `numInPlace` pairs (result, argument),
  /// flattened (0 when the copying form is used).
  const int64_t *inPlace;
  intptr_t numInPlace;
  /// The printed step: lowered for the target (MlirGATargetNone: the
  /// rewritten step; MlirGATargetChoice: empty).
  MlirStringRef module;
  /// For MlirGATargetReport: the report's rows (JSON).
  MlirStringRef memoryReport;
  /// For MlirGATargetShardPlan: the plan (JSON).
  MlirStringRef shardPlan;
} MlirGACompileResult;

typedef void (*MlirGACompileResultCallback)(const MlirGACompileResult *result,
                                            void *userData);

/// The recompute sets of --ga-rematerialize, from the least to the most
/// recomputation, comma-separated (\"none,pointwise,...\"): what the
/// planner weighs with recompute=auto and what `recompute` may name.
MLIR_CAPI_EXPORTED MlirStringRef mlirGAGetRecomputeSets(void);

/// Reads a byte count as max-memory takes it (a number, optionally followed
/// by B, KiB, MiB, GiB, TiB, kB, MB, GB or TB) into `*bytes`, rounded down;
/// fails on anything else. The one reader of budgets, for the bindings.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirGAParseByteCount(MlirStringRef text,
                                                          int64_t *bytes);

/// Sets every field of `options` to its default.
MLIR_CAPI_EXPORTED void mlirGACompileOptionsInit(MlirGACompileOptions *options);

/// Parses `input` (located as `bufferName`), compiles its step under
/// `options` and hands the result to `resultCallback` once. Each diagnostic
/// goes to `diagnosticCallback` (with its code). Returns failure after an
/// error (the result callback is then not called).
MLIR_CAPI_EXPORTED MlirLogicalResult
mlirGACompile(MlirStringRef input, MlirStringRef bufferName,
              const MlirGACompileOptions *options,
              MlirGACompileResultCallback resultCallback,
              MlirGADiagnosticCallback diagnosticCallback, void *userData);

#ifdef __cplusplus
}
#endif

#endif // GA_C_DRIVER_H
