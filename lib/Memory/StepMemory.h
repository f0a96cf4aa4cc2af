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

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

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

/// The cache of one core of this host (its L2, from sysconf), or 1 MiB
/// where the system does not say.
int64_t getHostCacheBytes();

/// Adds the dialects of the pipelines estimateStepMemory runs (for the
/// getDependentDialects of the passes that call it).
void getStepMemoryDialects(DialectRegistry &registry);

/// Parses a byte count: a number (with an optional fraction), optionally
/// followed by B, KiB, MiB or GiB; the result is rounded down to whole bytes.
FailureOr<int64_t> parseByteCount(StringRef text);

/// "1.50 MiB (1572864 bytes)".
std::string formatByteCount(int64_t bytes);

} // namespace mlir::ga::detail

#endif // GA_LIB_MEMORY_STEPMEMORY_H
