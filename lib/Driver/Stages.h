//===- Stages.h - the driver's stages, shared by its files ------*- C++ -*-===//
//
// Private to lib/Driver: the stages runDriver (Driver.cpp) and the memory
// report (Report.cpp) both run.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_DRIVER_STAGES_H
#define GA_LIB_DRIVER_STAGES_H

#include "ga/Driver/Driver.h"

#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::ga::driver {

/// Adds the rewrite's options of `options` at N = `microBatches` with the
/// recompute set `recompute` to `rewrite`.
void getRewriteOptions(const DriverOptions &options, int64_t microBatches,
                       StringRef recompute, AccumulatePipelineOptions &rewrite);
/// `options` as the text of a pass option, for the memory passes.
std::string printOptions(const ::mlir::detail::PassOptions &options);
/// Runs `build`'s passes on `module`.
LogicalResult runPasses(ModuleOp module,
                        function_ref<void(OpPassManager &)> build);
/// Adds the lowering of the collectives (buckets, host collectives).
void buildCollectives(OpPassManager &pm, const DriverOptions &options);
/// Runs --ga-write-results-in-place for `options.inPlace` on `module`.
LogicalResult writeResultsInPlace(ModuleOp module,
                                  const DriverOptions &options);
/// The memory report of the rewritten step `rewritten` (or of `module`
/// before the rewrite, as --ga-memory-report's sweep rewrites it) into
/// `result.memoryReport`.
LogicalResult runReport(ModuleOp module, ModuleOp rewritten,
                        const DriverOptions &options, DriverResult &result);
/// --ga-shard-plan of the step `rewritten` (with the default plan of
/// `options.shardParameters`, whose plan-output it reads) into
/// `result.shardPlan`.
LogicalResult runShardPlan(ModuleOp rewritten, const DriverOptions &options,
                           DriverResult &result);
} // namespace mlir::ga::driver

#endif // GA_LIB_DRIVER_STAGES_H
