//===- StepMemory.cpp - memory of a step rewritten and bufferized ---------===//

#include "StepMemory.h"

#include "ga-runtime/GARuntimeABI.h"
#include "ga/Analysis/BatchDependence.h"
#include "ga/Codegen/Common/Passes.h"
#include "ga/IR/Diagnostics.h"
#include "ga/IR/GADialect.h"
#include "ga/IR/GALibraryOps.h"
#include "ga/Pipelines/Pipelines.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ga;

SmallVector<BufferRole> mlir::ga::detail::getArgumentRoles(func::FuncOp func) {
  // Only the classes are needed here; what the analysis refuses is reported
  // by the rewrite itself.
  ScopedDiagnosticHandler silence(func.getContext(),
                                  [](Diagnostic &) { return success(); });
  BatchDependence::Options options;
  options.allowGhostBatch = true;
  BatchDependence deps(func, options);
  if (!deps.succeeded() || deps.getBatchArgs().empty())
    return {};
  SmallVector<BufferRole> roles;
  for (BlockArgument arg : func.getArguments()) {
    if (func.getArgAttr(arg.getArgNumber(), GADialect::getBatchAttrName())) {
      roles.push_back(BufferRole::Inputs);
      continue;
    }
    // Follow the uniform values computed from `arg` to a per-sample op.
    SmallVector<Value> worklist{arg};
    DenseSet<Value> seen{arg};
    bool readPerSample = false;
    while (!worklist.empty() && !readPerSample) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        // A use in the body of a per-sample op (a gather) counts as one.
        if (llvm::any_of(
                user->getParentOp() == func
                    ? ArrayRef<Operation *>{user}
                    : ArrayRef<Operation *>{user,
                                            func.getBody()
                                                .front()
                                                .findAncestorOpInBlock(*user)},
                [&](Operation *op) { return op && deps.isPerSample(op); })) {
          readPerSample = true;
          break;
        }
        for (Value result : user->getResults())
          if (deps.getClass(result).isUniform() && seen.insert(result).second)
            worklist.push_back(result);
      }
    }
    roles.push_back(readPerSample ? BufferRole::Parameters
                                  : BufferRole::OptimizerState);
  }
  return roles;
}

SmallVector<BufferRole> mlir::ga::detail::getDeclaredRoles(func::FuncOp func) {
  SmallVector<BufferRole> roles;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto role =
        func.getArgAttrOfType<StringAttr>(i, GADialect::getRoleAttrName());
    if (!role)
      return {};
    roles.push_back(role.getValue() == "parameters" ? BufferRole::Parameters
                    : role.getValue() == "inputs" ? BufferRole::Inputs
                                                  : BufferRole::OptimizerState);
  }
  return roles;
}

std::optional<int64_t> mlir::ga::detail::getStepBatchSize(func::FuncOp func) {
  ScopedDiagnosticHandler silence(func.getContext(),
                                  [](Diagnostic &) { return success(); });
  BatchDependence::Options options;
  options.allowGhostBatch = true;
  BatchDependence deps(func, options);
  if (deps.getBatchArgs().empty() || deps.getBatchSize() == 0)
    return std::nullopt;
  return deps.getBatchSize();
}

FailureOr<SmallVector<BufferRole>>
mlir::ga::detail::parseRoles(ArrayRef<std::string> names, Location where) {
  SmallVector<BufferRole> roles;
  for (StringRef name : names) {
    std::optional<BufferRole> role =
        llvm::StringSwitch<std::optional<BufferRole>>(name)
            .Case("parameters", BufferRole::Parameters)
            .Case("optimizer_state", BufferRole::OptimizerState)
            .Case("inputs", BufferRole::Inputs)
            .Default(std::nullopt);
    if (!role)
      return emitError(where)
             << "memory report: unknown argument role '" << name
             << "' (expected parameters, optimizer_state or "
                "inputs)";
    roles.push_back(*role);
  }
  return roles;
}

LogicalResult
mlir::ga::detail::addMicroBatchRewrite(OpPassManager &pm, func::FuncOp func,
                                       int64_t microBatches,
                                       StringRef accumulateOptions) {
  std::string text =
      llvm::formatv("micro-batches={0} func={1} {2}", microBatches,
                    func.getSymName(), accumulateOptions);
  auto options = AccumulatePipelineOptions::createFromString(text);
  if (!options)
    return func.emitError() << DiagnosticCode::InvalidOptions
                            << "memory report: invalid --ga-accumulate "
                               "options '"
                            << accumulateOptions << "'";
  buildMicroBatchRewritePipeline(pm, *options);
  return success();
}

FailureOr<mlir::ga::detail::MeasuredLowering>
mlir::ga::detail::parseMeasuredLowering(StringRef target, StringRef cpuOptions,
                                        StringRef gpuOptions, Location where) {
  if (target != "cpu" && target != "cuda")
    return emitError(where) << DiagnosticCode::InvalidOptions
                            << "memory report: unknown target '" << target
                            << "' (expected cpu or cuda)";
  MeasuredLowering lowering;
  lowering.cuda = target == "cuda";
  lowering.options = (lowering.cuda ? gpuOptions : cpuOptions).str();
  return lowering;
}

/// Adds to `pm` the bufferization of `lowering`, or fails with an error at
/// `func` when its options do not parse.
static LogicalResult
addBufferization(OpPassManager &pm, func::FuncOp func,
                 const ga::detail::MeasuredLowering &lowering) {
  if (lowering.cuda) {
    auto gpu = LowerToNVVMOptions::createFromString(lowering.options);
    if (!gpu)
      return func.emitError() << DiagnosticCode::InvalidOptions
                              << "memory report: invalid --ga-lower-to-nvvm "
                                 "options '"
                              << lowering.options << "'";
    buildBufferizeForGPUPipeline(pm, *gpu);
    return success();
  }
  auto cpu = LowerToCPUOptions::createFromString(lowering.options);
  if (!cpu)
    return func.emitError() << DiagnosticCode::InvalidOptions
                            << "memory report: invalid --ga-lower-to-cpu "
                               "options '"
                            << lowering.options << "'";
  buildBufferizeForCPUPipeline(pm, *cpu);
  return success();
}

FailureOr<MemoryUsage> mlir::ga::detail::estimateStepMemory(
    ModuleOp module, func::FuncOp func, int64_t microBatches,
    StringRef accumulateOptions, const MeasuredLowering &lowering,
    ArrayRef<BufferRole> givenRoles, ArrayRef<std::string> inPlace) {
  PassManager pm(module.getContext());
  if (microBatches &&
      failed(addMicroBatchRewrite(pm, func, microBatches, accumulateOptions)))
    return failure();
  // The library's form: the new parameters and states written into their
  // arguments' buffers, which then take none of their own.
  std::string measured = func.getSymName().str();
  if (!inPlace.empty()) {
    WriteResultsInPlaceOptions write;
    write.funcName = measured;
    write.pairs.assign(inPlace.begin(), inPlace.end());
    pm.addPass(createWriteResultsInPlace(write));
    measured += "_in_place";
  }
  if (failed(addBufferization(pm, func, lowering)))
    return failure();

  // The roles come from the tensor-level step (the lowering drops ga.batch):
  // from batch dependence, or else (a step already rewritten) inputs from
  // ga.batch and the rest inferred from the micro-batch loops.
  SmallVector<BufferRole> roles = getArgumentRoles(func);
  bool inferOptimizerState = roles.empty();
  // Classes the caller declares (`ga.role`) take precedence.
  if (SmallVector<BufferRole> declared = getDeclaredRoles(func);
      !declared.empty()) {
    roles = declared;
    inferOptimizerState = false;
  }
  if (!givenRoles.empty()) {
    roles.assign(givenRoles.begin(), givenRoles.end());
    inferOptimizerState = false;
  }
  if (roles.empty())
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      roles.push_back(func.getArgAttr(i, GADialect::getBatchAttrName())
                          ? BufferRole::Inputs
                          : BufferRole::Parameters);
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  FailureOr<MemoryUsage> usage = failure();
  // Diagnostics point at the step's own locations; the bufferized copy
  // would only be noise next to them.
  MLIRContext *context = module.getContext();
  bool printOp = context->shouldPrintOpOnDiagnostic();
  context->printOpOnDiagnostic(false);
  llvm::scope_exit restore([&] { context->printOpOnDiagnostic(printOp); });
  if (succeeded(pm.run(*copy))) {
    auto bufferized = copy->lookupSymbol<func::FuncOp>(measured);
    if (!bufferized)
      return func.emitError() << "memory report: internal error: no @"
                              << measured << " after the bufferization";
    MemoryUsageAnalysis analysis(bufferized, roles, inferOptimizerState,
                                 lowering.cuda);
    if (analysis.succeeded())
      usage = analysis.getUsage();
    // The runtime's one cuBLASLt workspace, allocated at the first product
    // and held while the step runs (lib/Runtime/CUDA/GACublasLt.cpp).
    if (succeeded(usage) && lowering.cuda &&
        bufferized.walk([](BlasMatmulOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      usage->workspaceBytes =
          static_cast<int64_t>(ga_abi::kCublasLtWorkspaceBytes);
  }
  return usage;
}

void mlir::ga::detail::getStepMemoryDialects(DialectRegistry &registry) {
  OpPassManager pm(ModuleOp::getOperationName());
  buildMicroBatchRewritePipeline(pm, AccumulatePipelineOptions());
  buildBufferizeForCPUPipeline(pm, LowerToCPUOptions());
  buildBufferizeForGPUPipeline(pm, LowerToNVVMOptions());
  pm.getDependentDialects(registry);
}

FailureOr<int64_t> mlir::ga::parseByteCount(StringRef text) {
  StringRef rest = text.trim();
  StringRef number = rest.take_while([](char c) { return llvm::isDigit(c); });
  StringRef fraction;
  rest = rest.drop_front(number.size());
  if (rest.consume_front("."))
    fraction = rest.take_while([](char c) { return llvm::isDigit(c); });
  rest = rest.drop_front(fraction.size());
  if (number.empty() && fraction.empty())
    return failure();
  // Binary units as the reports print them; decimal ones as device memory
  // is sold and as `nvidia-smi` and accelerate's max_memory write it.
  uint64_t scale = llvm::StringSwitch<uint64_t>(rest.trim().lower())
                       .Cases({"", "b"}, 1)
                       .Case("kib", uint64_t(1) << 10)
                       .Case("mib", uint64_t(1) << 20)
                       .Case("gib", uint64_t(1) << 30)
                       .Case("tib", uint64_t(1) << 40)
                       .Case("kb", 1000)
                       .Case("mb", 1000 * 1000)
                       .Case("gb", 1000 * 1000 * 1000)
                       .Case("tb", uint64_t(1000) * 1000 * 1000 * 1000)
                       .Default(0);
  if (scale == 0)
    return failure();
  // In integers, so that "0.000839GB" is 839 bytes, not 838.99...: the
  // digits as one integer times the scale, over 10^(fraction digits), with
  // room for any count below 2^63 (digits past the 30th cannot change the
  // whole bytes of such a count).
  fraction = fraction.take_front(30);
  unsigned width = 256;
  APInt digits(width, 0), ten(width, 10), power(width, 1);
  for (char c : number) {
    digits = digits * ten + APInt(width, c - '0');
    if (digits.getActiveBits() > 128)
      return failure();
  }
  for (char c : fraction) {
    digits = digits * ten + APInt(width, c - '0');
    power *= ten;
  }
  APInt bytes = (digits * APInt(width, scale)).udiv(power);
  if (bytes.getActiveBits() > 63)
    return failure();
  return static_cast<int64_t>(bytes.getZExtValue());
}

StringRef mlir::ga::getByteCountUnits() {
  return "B, KiB, MiB, GiB, TiB, kB, MB, GB or TB";
}

std::string mlir::ga::formatByteCount(int64_t bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB"};
  double value = bytes;
  unsigned unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0)
    return llvm::formatv("{0} bytes", bytes);
  return llvm::formatv("{0:F2} {1} ({2} bytes)", value, units[unit], bytes);
}
