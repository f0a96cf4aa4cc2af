//===- StepMemory.h - memory of a step rewritten and bufferized -*- C++ -*-===//
//
// What --ga-memory-report and --ga-choose-micro-batches share: the static
// memory use of a training step after the --ga-accumulate rewrite with N
// micro-batches and the bufferization of --ga-lower-to-cpu, computed on a
// copy of the module. Internal to lib/Memory.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_MEMORY_STEPMEMORY_H
#define GA_LIB_MEMORY_STEPMEMORY_H

#include "ga/Analysis/MemoryUsage.h"
#include "ga/Memory/ByteCount.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <optional>

namespace mlir::ga::detail {

/// The roles of the arguments of a tensor-level training step: `ga.batch`
/// arguments are Inputs; another argument is a Parameter when a per-sample op
/// reads it (directly or through uniform values), OptimizerState otherwise.
/// Empty when the batch-dependence analysis fails on `func` (the memory-usage
/// analysis then infers the roles from the bufferized micro-batch loops).
SmallVector<BufferRole> getArgumentRoles(func::FuncOp func);

/// The roles that every argument of `func` declares with `ga.role`, or empty
/// when one does not declare it.
SmallVector<BufferRole> getDeclaredRoles(func::FuncOp func);

/// The batch size of a training step as the batch-dependence analysis sees
/// it (ShapedType::kDynamic when only known at run time), or std::nullopt
/// when it has none.
std::optional<int64_t> getStepBatchSize(func::FuncOp func);

/// The lowering whose bufferization a step's memory is measured after: the
/// CPU library's (--ga-lower-to-cpu with `options`: heap bytes) or, with
/// `cuda`, the GPU library's (--ga-lower-to-nvvm with `options`, up to
/// --ga-place-buffers-on-device: device bytes of the `gpu.alloc` buffers in
/// the element types the GPU step has, bf16 activations included, plus the
/// cuBLASLt workspace of include/ga-runtime/GARuntimeABI.h when the step
/// calls cuBLASLt; its host buffers apart).
struct MeasuredLowering {
  bool cuda = false;
  std::string options;
};

/// The lowering named by a pass's `target` option ("cpu" or "cuda") with
/// the options of that lowering, or failure with an error at `where`.
FailureOr<MeasuredLowering> parseMeasuredLowering(StringRef target,
                                                  StringRef cpuOptions,
                                                  StringRef gpuOptions,
                                                  Location where);

/// The memory use of `func`, a function of `module`, rewritten by
/// --ga-accumulate with `microBatches` micro-batches (0: as it is) and the
/// further options `accumulateOptions`, then bufferized as `lowering`
/// bufferizes it. The pipelines run on a copy
/// of `module` with a pass manager of their own; errors (of the rewrite, or
/// refusals of the analysis) are reported at their ops. `roles`, when not
/// empty, gives the role of every argument (as `ga.role` would). With
/// `inPlace` ("result:argument" pairs), the rewritten step writes those
/// results into their arguments (--ga-write-results-in-place) before the
/// bufferization, as the library does, and the usage is that of
/// `@<func>_in_place`, which does the work.
FailureOr<MemoryUsage> estimateStepMemory(ModuleOp module, func::FuncOp func,
                                          int64_t microBatches,
                                          StringRef accumulateOptions,
                                          const MeasuredLowering &lowering,
                                          ArrayRef<BufferRole> roles = {},
                                          ArrayRef<std::string> inPlace = {});

/// Adds to `pm` the micro-batch rewrite of `func` into `microBatches`
/// micro-batches with the --ga-accumulate options `accumulateOptions`, or
/// fails with an error at `func` when those options do not parse.
LogicalResult addMicroBatchRewrite(OpPassManager &pm, func::FuncOp func,
                                   int64_t microBatches,
                                   StringRef accumulateOptions);

/// The roles named in `names` ("parameters", "optimizer_state", "inputs"),
/// or failure with an error at `where` for another name.
FailureOr<SmallVector<BufferRole>> parseRoles(ArrayRef<std::string> names,
                                              Location where);

/// What a candidate configuration of a step costs, counted on its tensor
/// ops: the time --ga-choose-micro-batches compares candidates by is
/// `work + memoryCost * movedBytes`.
struct StepCost {
  /// The sum over its linalg ops of their iterations times the operations
  /// of their payload, and over the element-wise ops on tensors of their
  /// elements, times the constant trip counts of the loops around them.
  int64_t work = 0;
  /// The bytes its ops read from beyond a cache of the given size: an LRU
  /// cache replayed over the tensors the ops read, in the order they run,
  /// a value taking the storage bufferization gives it and a dead storage
  /// leaving the cache (its buffer is reused); the step's arguments come
  /// from memory.
  int64_t movedBytes = 0;
};

/// The cost of `func` rewritten by --ga-accumulate with `microBatches`
/// micro-batches and the options `accumulateOptions` (a recompute set),
/// with a cache of `cacheBytes`.
FailureOr<StepCost> estimateStepCost(ModuleOp module, func::FuncOp func,
                                     int64_t microBatches,
                                     StringRef accumulateOptions,
                                     int64_t cacheBytes);

/// The cost of a step for every N from two rewrites of a recompute set
/// instead of one per N: the step rewritten with N = 1 (one trip of the
/// whole batch) is a template whose micro-batch loop is walked as the loops
/// of N micro-batches (B mod N of ceil(B / N) samples, then floor(B / N)),
/// the bytes of its per-sample values and the work of its per-sample ops
/// scaled by the micro-batch size. Which ones are per sample, and by how
/// much, is read off the rewrite with N = B (one sample a trip): the two
/// must have the same ops on tensors with the same sizes, except inside the
/// micro-batch loop where a value's bytes (an op's work) may be B times
/// the N = B one, linear in the size. A step whose rewrites differ in
/// another way has no model (weigh each N by its own rewrite).
class StepCostModel {
public:
  /// The model of `func` (a batch of `batchSize`) with the --ga-accumulate
  /// options `accumulateOptions`; failure when the rewrite with N = 1 fails
  /// (with its errors), nullptr when there is no model.
  static FailureOr<std::unique_ptr<StepCostModel>>
  build(ModuleOp module, func::FuncOp func, int64_t batchSize,
        StringRef accumulateOptions);

  /// What estimateStepCost counts on the rewrite with `microBatches`.
  StepCost getCost(int64_t microBatches, int64_t cacheBytes) const;

private:
  StepCostModel() = default;
  /// Finds the micro-batch loop and the per-sample values and ops of `step`
  /// against `single`, the rewrite with N = B; false when they differ
  /// otherwise.
  bool match(func::FuncOp single);

  int64_t batchSize = 1;
  OwningOpRef<ModuleOp> rewritten;
  func::FuncOp step;
  /// The micro-batch loops of the template.
  SmallPtrSet<Operation *, 2> loops;
  /// Bytes (work) per sample of the micro-batch.
  DenseMap<Value, int64_t> sampleBytes;
  DenseMap<Operation *, int64_t> sampleWork;
};

/// The cache of one core of this host (its L2, from sysconf), or 1 MiB
/// where the system does not say.
int64_t getHostCacheBytes();

/// Adds the dialects of the pipelines estimateStepMemory runs (for the
/// getDependentDialects of the passes that call it).
void getStepMemoryDialects(DialectRegistry &registry);

} // namespace mlir::ga::detail

#endif // GA_LIB_MEMORY_STEPMEMORY_H
