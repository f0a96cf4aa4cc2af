//===- Report.cpp - the driver's memory report ----------------------------===//
//
// DriverTarget::Report: --ga-memory-report of the step as the CPU library
// (or, with memoryTarget CUDA, the GPU step) bufferizes it, at the driver's N,
// in the form the library has (results written in place, collectives lowered),
// and for a data-parallel step on one rank's shard, whose bounds are bound as
// constants by a wrapper built here as IR. DriverTarget::ShardPlan:
// --ga-shard-plan of the sharded step, read back the same way.
//
//===----------------------------------------------------------------------===//

#include "Stages.h"

#include "ga/Conversion/Passes.h"
#include "ga/Memory/Passes.h"
#include "ga/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::driver;

/// The name of the function that binds a data-parallel step's shard.
static constexpr StringLiteral kShardReportName = "ga_shard_report";

/// Adds to `module` a function @ga_shard_report that calls the
/// data-parallel step @`name` with its last two (index) arguments bound to
/// the shard [begin, end), its arguments declaring their report classes
/// (`ga.role`) and batch dimensions (`ga.batch`). Inlined and
/// canonicalized, its micro-batches have sizes.
static LogicalResult bindShard(ModuleOp module, StringRef name,
                               const DriverOptions &options) {
  auto step = module.lookupSymbol<func::FuncOp>(name);
  FunctionType type = step ? step.getFunctionType() : FunctionType();
  if (!step || type.getNumInputs() < 2 ||
      !llvm::all_of(type.getInputs().take_back(2),
                    [](Type t) { return t.isIndex(); }))
    return emitError(module.getLoc())
           << "internal error: no data-parallel step @" << name
           << " (its shard's bounds as its last two index arguments)";
  MLIRContext *context = module.getContext();
  Location loc = step.getLoc();
  auto builder = OpBuilder::atBlockEnd(module.getBody());
  auto wrapper = func::FuncOp::create(
      builder, loc, kShardReportName,
      FunctionType::get(context, type.getInputs().drop_back(2),
                        type.getResults()));
  unsigned arguments = type.getNumInputs() - 2;
  for (unsigned i = 0; i < arguments && i < options.reportRoles.size(); ++i)
    wrapper.setArgAttr(i, "ga.role",
                       StringAttr::get(context, options.reportRoles[i]));
  for (auto [argument, dimension] : options.batchArgs)
    if (argument < arguments)
      wrapper.setArgAttr(
          argument, "ga.batch",
          IntegerAttr::get(IntegerType::get(context, 64), dimension));
  Block *entry = wrapper.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  SmallVector<Value> values(entry->getArguments());
  auto [begin, end] = *options.reportShard;
  values.push_back(arith::ConstantIndexOp::create(builder, loc, begin));
  values.push_back(arith::ConstantIndexOp::create(builder, loc, end));
  auto call = func::CallOp::create(builder, loc, step, values);
  func::ReturnOp::create(builder, loc, call.getResults());
  return success();
}

/// Runs the passes `build` adds on `module`, the last of which writes the
/// file it is given (`what`, for the messages), and reads that file into
/// `text`.
static LogicalResult
runWritingFile(ModuleOp module, StringRef what,
               function_ref<void(OpPassManager &, StringRef)> build,
               std::string &text) {
  SmallString<128> path;
  if (std::error_code error =
          llvm::sys::fs::createTemporaryFile("ga-driver", "json", path))
    return emitError(module.getLoc()) << "internal error: cannot create the "
                                      << what << "'s file: " << error.message();
  LogicalResult ran =
      runPasses(module, [&](OpPassManager &pm) { build(pm, path); });
  auto buffer = llvm::MemoryBuffer::getFile(path);
  llvm::sys::fs::remove(path);
  if (failed(ran))
    return failure();
  if (!buffer)
    return emitError(module.getLoc())
           << "internal error: cannot read the " << what;
  text = (*buffer)->getBuffer().str();
  return success();
}

/// Runs --ga-memory-report (`report`, its output set here) on `module` and
/// reads its JSON into `json`.
static LogicalResult runReportPass(ModuleOp module, MemoryReportOptions report,
                                   function_ref<void(OpPassManager &)> before,
                                   std::string &json) {
  return runWritingFile(
      module, "memory report",
      [&](OpPassManager &pm, StringRef path) {
        report.output = path.str();
        before(pm);
        pm.addPass(createMemoryReport(report));
      },
      json);
}

LogicalResult driver::runShardPlan(ModuleOp rewritten,
                                   const DriverOptions &options,
                                   DriverResult &result) {
  const ShardParameters &fsdp = options.shardParameters;
  if (fsdp.world <= 0 || fsdp.planOutput.empty())
    return emitError(rewritten.getLoc())
           << "internal error: the shard plan needs the parameters sharded "
              "with a plan-output file (its costs)";
  ShardPlanOptions plan;
  plan.funcName = options.funcName;
  plan.costs = fsdp.planOutput;
  plan.world = fsdp.world;
  plan.microBatches.assign(options.shardPlan.microBatches.begin(),
                           options.shardPlan.microBatches.end());
  plan.basePeaks.assign(options.shardPlan.basePeaks.begin(),
                        options.shardPlan.basePeaks.end());
  plan.maxMemory = options.shardPlan.maxMemory;
  plan.bucketSize = options.bucketSize;
  plan.format = "json";
  return runWritingFile(
      rewritten, "shard plan",
      [&](OpPassManager &pm, StringRef path) {
        plan.output = path.str();
        pm.addPass(createShardPlan(plan));
      },
      result.shardPlan);
}

LogicalResult driver::runReport(ModuleOp module, ModuleOp rewritten,
                                const DriverOptions &options,
                                DriverResult &result) {
  MemoryReportOptions report;
  report.format = "json";
  report.cpuOptions = printOptions(options.cpu);
  if (options.measuresDevice()) {
    report.target = "cuda";
    report.gpuOptions = printOptions(options.nvvm);
  }
  bool shard = options.reportShard.has_value();
  // A data-parallel step's rows carry the loop's profile (the sharded-
  // parameter planner's lower bound; cheap beside the bufferization).
  report.loopProfile = shard;
  if (options.inPlace.empty() && !shard) {
    // The step before the rewrite, which the report's sweep rewrites at N:
    // its rows name N.
    OwningOpRef<ModuleOp> step = module.clone();
    AccumulatePipelineOptions rewrite;
    getRewriteOptions(options, result.microBatches, result.recompute, rewrite);
    report.sweep = {result.microBatches};
    report.accumulateOptions = printRewriteOptions(rewrite);
    if (!result.recompute.empty())
      report.accumulateOptions += " recompute=" + result.recompute;
    report.argumentRoles.assign(options.reportRoles.begin(),
                                options.reportRoles.end());
    report.funcNames = {options.funcName};
    return runReportPass(
        *step, report,
        [&](OpPassManager &pm) {
          if (options.batchArgs.empty())
            return;
          MarkBatchArgsOptions mark;
          for (auto [argument, dimension] : options.batchArgs)
            mark.batchArgs.push_back(std::to_string(argument) + ":" +
                                     std::to_string(dimension));
          pm.addPass(createMarkBatchArgs(mark));
        },
        result.memoryReport);
  }

  // The form of the library: collectives lowered, results written in place
  // (the private function then does the work).
  OwningOpRef<ModuleOp> step = rewritten.clone();
  std::string name = options.funcName;
  if (failed(runPasses(
          *step, [&](OpPassManager &pm) { buildCollectives(pm, options); })))
    return failure();
  if (!options.inPlace.empty()) {
    if (failed(writeResultsInPlace(*step, options)))
      return failure();
    name += "_in_place";
  }
  if (!shard) {
    report.argumentRoles.assign(options.reportRoles.begin(),
                                options.reportRoles.end());
    report.funcNames = {name};
    return runReportPass(
        *step, report, [](OpPassManager &) {}, result.memoryReport);
  }
  if (failed(bindShard(*step, name, options)))
    return failure();
  report.funcNames = {kShardReportName.str()};
  return runReportPass(
      *step, report,
      [&](OpPassManager &pm) {
        // The GPU step's collectives are NCCL's, lowered by its
        // bufferization; lowered here, before the inliner, which does not
        // inline a `shard.all_reduce` (the shard dialect has no inliner
        // interface). The bufferization's own run then finds none.
        if (options.measuresDevice())
          pm.addPass(createConvertGAToNCCL());
        pm.addPass(createInlinerPass());
        pm.addPass(createCanonicalizerPass());
      },
      result.memoryReport);
}
