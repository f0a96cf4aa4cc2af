//===- Driver.h - one call from a training step to its library --*- C++ -*-===//
//
// The compiler driver of ga-mlir: what compile_train_step (through the C API,
// include/ga-c/Driver.h) and the tools ask of the compiler, as typed options
// in and a typed result out. It chooses N (given, from a micro-batch size, or
// under a memory budget, with the recompute set), runs the rewrite at that N,
// writes the chosen results in place when bufferization proves it, and
// lowers the step for its target, all in one process and one context. Every
// refusal on the way is a located diagnostic with its code
// (ga/IR/Diagnostics.h), emitted to the context's handlers.
//
//===----------------------------------------------------------------------===//

#ifndef GA_DRIVER_DRIVER_H
#define GA_DRIVER_DRIVER_H

#include "ga/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir::ga {

/// The code a step is lowered to.
enum class DriverTarget {
  /// The LLVM dialect for the host CPU (--ga-lower-to-cpu).
  CPU,
  /// No lowering: the rewritten step only.
  None,
  /// Nothing but the choice of N (and of the recompute set) under a budget
  /// or from a micro-batch size: no rewrite.
  Choice,
  /// The LLVM dialect for the host with the kernels for an NVIDIA GPU
  /// embedded (--ga-lower-to-nvvm).
  CUDA,
  /// The static memory report of the step as the CPU library bufferizes it
  /// (--ga-memory-report, JSON): DriverResult::memoryReport.
  Report,
  /// The sharded-parameter plan under a per-rank budget (--ga-shard-plan,
  /// JSON) of the step rewritten with the default plan of
  /// DriverOptions::shardParameters: DriverResult::shardPlan.
  ShardPlan,
};

/// ZeRO-1 for one rank (--ga-shard-optimizer's options): the parameters
/// whose rows this rank updates, and their states among the step's results
/// and arguments.
struct ShardOptimizer {
  int64_t rank = 0;
  /// The number of ranks; 0: the optimizer is not sharded.
  int64_t world = 0;
  SmallVector<int64_t> params;
  SmallVector<int64_t> stateResults;
  SmallVector<int64_t> stateArgs;
};

/// FSDP for one rank (--ga-shard-parameters's options): the parameters
/// (arguments and results) sharded by rows, the loss's result, where the
/// shard plan is written, and the plan chosen under a budget (the parameter
/// arguments kept gathered across the loop, the parameter results whose
/// gradients are reduce-scattered once after it; empty: every parameter
/// resharded after use).
struct ShardParameters {
  int64_t rank = 0;
  /// The number of ranks; 0: the parameters are not sharded.
  int64_t world = 0;
  int64_t loss = -1;
  SmallVector<int64_t> paramArgs;
  SmallVector<int64_t> paramResults;
  std::string planOutput;
  SmallVector<int64_t> keepGathered;
  SmallVector<int64_t> reduceAfterLoop;
};

/// For DriverTarget::ShardPlan (--ga-shard-plan's options): the candidate
/// numbers of micro-batches, the per-rank peak of the default plan at each
/// (bytes), and the per-rank budget (empty: every bucket resharded). The
/// buckets hold DriverOptions::bucketSize bytes of parameters at most.
struct ShardPlanRequest {
  SmallVector<int64_t> microBatches;
  SmallVector<int64_t> basePeaks;
  std::string maxMemory;
};

/// A pair of indices: (result, argument) or (argument, dimension).
using IndexPair = std::pair<unsigned, unsigned>;

/// What to compile and how.
struct DriverOptions {
  /// The training step.
  std::string funcName = "train_step";
  /// How N is set: given (microBatches), from a micro-batch size, or under a
  /// memory budget (bytes, or with KiB/MiB/GiB); 0 and empty are unset.
  /// microBatches with maxMemory fixes N and chooses the recompute set;
  /// other combinations are refused (contradictory-options).
  int64_t microBatches = 0;
  int64_t microBatchSize = 0;
  std::string maxMemory;
  /// The per-sample arguments and their batch dimensions; empty: the step's
  /// own `ga.batch` argument attributes.
  SmallVector<IndexPair> batchArgs;
  /// Options of the rewrite (as --ga-accumulate names them).
  bool allowGhostBatch = false;
  bool recomputeStatistics = false;
  bool fuse = true;
  std::string accumulatorType;
  /// none, pointwise; empty: none, or chosen with N under a budget.
  std::string recompute;
  /// Results written into the buffers of arguments: (result, argument). All
  /// of them are, or (when bufferization cannot prove one) none.
  SmallVector<IndexPair> inPlace;
  /// false: no rewrite, the step is lowered as it is (N unset).
  bool rewrite = true;
  /// A data-parallel step's collectives (a `ga.data_parallel` step, whose
  /// reductions the rewrite all-reduces): ZeRO-1 after the rewrite; before
  /// the lowering, gradient buckets of `bucketSize` bytes (0: one collective
  /// per all-reduce; --ga-bucket-gradients), and the collectives as calls
  /// of torch.distributed's (--convert-ga-to-host-collectives;
  /// --ga-lower-to-nvvm lowers them to NCCL itself), or for the CPU as
  /// MPI_Allreduce calls (mpiCollectives: --convert-ga-to-mpi, as
  /// --ga-lower-to-cpu-mpi lowers them) with the MPI ABI `mpiImplementation`
  /// (MPICH or OpenMPI; empty: MPICH) and `mpiEntry`, the function that
  /// initializes and finalizes MPI itself (empty: none). Host and MPI
  /// collectives together, or MPI for the GPU, are refused
  /// (contradictory-options).
  ShardOptimizer shardOptimizer;
  ShardParameters shardParameters;
  int64_t bucketSize = 0;
  bool hostCollectives = false;
  bool mpiCollectives = false;
  std::string mpiImplementation;
  std::string mpiEntry;
  DriverTarget target = DriverTarget::CPU;
  /// For DriverTarget::Report: the class of each argument (parameters,
  /// optimizer_state, inputs), and for a data-parallel step this rank's
  /// shard [begin, end) of the global batch, bound as constants so that its
  /// micro-batches have sizes.
  SmallVector<std::string> reportRoles;
  std::optional<std::pair<int64_t, int64_t>> reportShard;
  /// For DriverTarget::ShardPlan: what the plan is chosen from.
  ShardPlanRequest shardPlan;
  /// The lowering's options: `cpu` for DriverTarget::CPU (and the
  /// bufferization a budget is measured after), `nvvm` for DriverTarget::CUDA.
  LowerToCPUOptions cpu;
  LowerToNVVMOptions nvvm;
  /// The target whose bufferization the memory report (DriverTarget::Report)
  /// and a budget (maxMemory) measure: CPU (the heap of the CPU library,
  /// with `cpu`) or CUDA (the device memory of the GPU step, with `nvvm`).
  /// A budget for DriverTarget::CUDA is device bytes whatever this says.
  DriverTarget memoryTarget = DriverTarget::CPU;
  /// Bytes that a budget (maxMemory) keeps for what the caller allocates to
  /// return the step's results (--ga-choose-micro-batches' `reserved`).
  int64_t reservedBytes = 0;

  /// Whether the report and the budget measure the GPU step.
  bool measuresDevice() const {
    return target == DriverTarget::CUDA || memoryTarget == DriverTarget::CUDA;
  }
};

/// What the driver chose and produced.
struct DriverResult {
  /// The number of micro-batches and the recompute set of the rewrite.
  int64_t microBatches = 0;
  std::string recompute;
  /// Under a budget: the predicted total peak (bytes) and the arithmetic
  /// work the recomputation adds (operations per step).
  std::optional<int64_t> predictedPeak;
  std::optional<int64_t> recomputeWork;
  /// The results written in place (DriverOptions::inPlace, or empty).
  SmallVector<IndexPair> inPlace;
  /// The step after the rewrite (null for DriverTarget::Choice), and lowered
  /// for the target (null for DriverTarget::None and Choice).
  OwningOpRef<ModuleOp> rewritten;
  OwningOpRef<ModuleOp> lowered;
  /// For DriverTarget::Report: the rows of --ga-memory-report (JSON).
  std::string memoryReport;
  /// For DriverTarget::ShardPlan: the plan of --ga-shard-plan (JSON).
  std::string shardPlan;
};

/// Compiles the step `options.funcName` of `module` (left unchanged) into
/// `result`. Fails after emitting located diagnostics.
LogicalResult runDriver(ModuleOp module, const DriverOptions &options,
                        DriverResult &result);

} // namespace mlir::ga

#endif // GA_DRIVER_DRIVER_H
