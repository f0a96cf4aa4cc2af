//===- Verify.cpp - prove a rewritten training step exact -----------------===//
//
// The verification itself: find the step, run the pipeline under test on a
// clone, add the entry wrappers, compile both modules, run both on every
// input set and keep the worst comparison per result.
//
//===----------------------------------------------------------------------===//

#include "ga/Verify/Verify.h"

#include "ga/IR/GADialect.h"
#include "ga/InitAllGA.h"
#include "ga/Verify/Isolation.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace mlir;
using namespace mlir::ga::verify;
using mlir::ga::GADialect;

/// Wraps `text` in builtin.module(...) unless it is already anchored there.
static std::string anchorPipeline(StringRef text) {
  StringRef t = text.trim();
  if (t.starts_with("builtin.module("))
    return t.str();
  return ("builtin.module(" + t + ")").str();
}

int mlir::ga::verify::verifyStep(MLIRContext &context,
                                 llvm::SourceMgr &sourceMgr,
                                 const VerifyOptions &options,
                                 VerifyReport &run) {
  int64_t microBatches = options.microBatches;
  auto fail = [&](const llvm::Twine &message) {
    run.error = message.str();
    llvm::errs() << "ga-verify: error: " << run.error << "\n";
    return 1;
  };
  if (microBatches < 1)
    return fail("--micro-batches must be >= 1");

  OwningOpRef<ModuleOp> original =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!original)
    return fail("could not parse '" + options.inputName + "'");

  auto stepOr = findStep(*original, options.funcName);
  if (!stepOr)
    return fail(llvm::toString(stepOr.takeError()));
  func::FuncOp step = *stepOr;
  run.funcName = step.getSymName().str();

  // Ahead-of-time libraries, checked before any work is done.
  LibraryStep libraries[2];
  const char *sides[2] = {"reference", "rewritten"};
  for (int k = 0; k < 2; ++k) {
    StringRef path =
        k == 0 ? options.referenceLibrary : options.rewrittenLibrary;
    if (path.empty())
      continue;
    setPhase(llvm::Twine("loading the ") + sides[k] + " library '" + path +
             "'");
    auto address = openStepLibrary(path, run.funcName, sides[k]);
    if (!address)
      return fail(llvm::toString(address.takeError()));
    libraries[k] = {path.str(), "_mlir_ciface_" + run.funcName, *address};
    run.libraries[k] = path.str();
  }
  auto libraryOf = [&](int k) -> const LibraryStep * {
    return libraries[k].address ? &libraries[k] : nullptr;
  };

  // Signature: arguments and results we can feed and read.
  // Read now: compiling lowers the step away. A bad --int-range is the
  // user's error, not the step's.
  if (!options.intRange.empty())
    if (auto range = parseRangeOption(options.intRange); !range)
      return fail(llvm::toString(range.takeError()));
  SmallVector<Slot> args, results;
  SmallVector<InitSpec> specs;
  if (auto inputs = describeInputs(step, options.intRange)) {
    args = std::move(inputs->args);
    specs = std::move(inputs->specs);
  } else {
    return fail("cannot verify @" + run.funcName + ": " +
                llvm::toString(inputs.takeError()));
  }
  for (auto [i, t] : llvm::enumerate(step.getResultTypes())) {
    auto slot = describeSlot(t, "result", i);
    if (!slot)
      return fail("cannot verify @" + run.funcName + ": " +
                  llvm::toString(slot.takeError()));
    results.push_back(*slot);
  }
  if (results.empty())
    return fail("@" + run.funcName + " has no results: nothing to compare");

  // Sizes of dynamic dimensions, batch size for the report.
  int64_t dynSize =
      options.batchSize > 0 ? options.batchSize : 4 * microBatches + 3;
  for (const Slot &slot : args)
    run.dynamicBatch |= llvm::any_of(slot.dims, ShapedType::isDynamic);
  for (auto [i, slot] : llvm::enumerate(args))
    if (auto dim = step.getArgAttrOfType<IntegerAttr>(
            i, GADialect::getBatchAttrName()))
      if (run.batch < 0 && dim.getInt() < (int64_t)slot.dims.size()) {
        int64_t s = slot.dims[dim.getInt()];
        run.batch = ShapedType::isDynamic(s) ? dynSize : s;
      }

  // Input sets: --seeds of them from --seed, or the one of --seed alone.
  if (options.numSeeds < 1)
    return fail("--seeds must be >= 1");
  for (unsigned k = 0; k < options.numSeeds; ++k)
    run.seeds.push_back(options.seed + k);

  // The module under test: the pipeline on a clone.
  OwningOpRef<ModuleOp> rewritten = original->clone();
  run.pipeline = options.pipeline.empty()
                     ? llvm::formatv("builtin.module(ga-accumulate{{"
                                     "micro-batches={0}})",
                                     microBatches)
                           .str()
                     : anchorPipeline(options.pipeline);
  setPhase("running the pipeline '" + run.pipeline + "' on @" + run.funcName);
  {
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    FailureOr<OpPassManager> parsed =
        parsePassPipeline(run.pipeline, errorStream);
    if (failed(parsed))
      return fail("invalid pipeline '" + run.pipeline + "': " + errors);
    if (parsed->getOpAnchorName() != ModuleOp::getOperationName())
      return fail("the pipeline '" + run.pipeline +
                  "' must be anchored on builtin.module");
    PassManager pm(&context, ModuleOp::getOperationName());
    static_cast<OpPassManager &>(pm) = *parsed;
    if (failed(pm.run(*rewritten)))
      return fail("the pipeline '" + run.pipeline + "' failed on @" +
                  run.funcName + "; see its diagnostics above");
  }
  if (options.dumpRewritten)
    rewritten->print(llvm::errs());
  auto printed = [](Operation *op) {
    std::string s;
    llvm::raw_string_ostream os(s);
    op->print(os, OpPrintingFlags().printGenericOpForm());
    return s;
  };

  auto rewrittenStep = rewritten->lookupSymbol<func::FuncOp>(run.funcName);
  if (!rewrittenStep || rewrittenStep.isExternal())
    return fail("the pipeline removed the body of @" + run.funcName);
  run.changed = printed(step) != printed(rewrittenStep);
  // A pipeline may append `index` arguments (a run-time micro-batch count):
  // they get --micro-batches.
  size_t numAppended = 0;
  {
    ArrayRef<Type> before = step.getArgumentTypes();
    ArrayRef<Type> after = rewrittenStep.getArgumentTypes();
    bool sameResults = step.getResultTypes() == rewrittenStep.getResultTypes();
    bool prefix = after.size() >= before.size() &&
                  after.take_front(before.size()) == before &&
                  llvm::all_of(after.drop_front(before.size()),
                               [](Type t) { return t.isIndex(); });
    if (!sameResults || !prefix)
      return fail("the pipeline changed the signature of @" + run.funcName +
                  " from " + typeToString(step.getFunctionType()) + " to " +
                  typeToString(rewrittenStep.getFunctionType()));
    numAppended = after.size() - before.size();
  }

  // The default tolerance follows the least precise float type that either
  // step computes in (a bf16 step accumulated in f32 is compared to a few
  // bf16 ulps).
  FloatType leastPrecise;
  for (func::FuncOp side : {step, rewrittenStep})
    if (FloatType type = getLeastPreciseFloatType(side))
      if (!leastPrecise ||
          type.getFPMantissaWidth() < leastPrecise.getFPMantissaWidth())
        leastPrecise = type;

  addEntryWrapper(*original, step);
  addEntryWrapper(*rewritten, rewrittenStep);
  ModuleOp modules[2] = {*original, *rewritten};
  func::FuncOp steps[2] = {step, rewrittenStep};
  for (int k = 0; k < 2; ++k)
    if (libraryOf(k) && failed(externalizeStep(modules[k], steps[k])))
      return fail(llvm::Twine("could not replace the ") + sides[k] +
                  " step by a declaration of its library's function");

  auto clock = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    auto now = std::chrono::steady_clock::now();
    std::chrono::duration<double> d = now - clock;
    clock = now;
    return d.count();
  };
  auto reference =
      compile(*original, "reference", libraryOf(0), options.runner);
  if (!reference)
    return fail(llvm::toString(reference.takeError()));
  run.compileSeconds[0] = elapsed();
  auto test = compile(*rewritten, "rewritten", libraryOf(1), options.runner);
  if (!test)
    return fail(llvm::toString(test.takeError()));
  run.compileSeconds[1] = elapsed();

  // Every input set through both steps; per result, the worst outcome.
  for (auto [k, setSeed] : llvm::enumerate(run.seeds)) {
    std::vector<HostArray> inputs =
        makeInputs(args, specs, setSeed, dynSize, options.dumpInputs);
    std::vector<HostArray> rewrittenInputs = inputs;
    for (size_t j = 0; j < numAppended; ++j) {
      HostArray a;
      a.kind = ElemKind::Index;
      a.bytes.resize(8);
      writeElement(a, 0, static_cast<double>(microBatches));
      rewrittenInputs.push_back(std::move(a));
    }
    // Which input set failed, when there are several.
    std::string ofSet =
        run.seeds.size() > 1
            ? (" (inputs of seed " + llvm::Twine(setSeed) + ")").str()
            : std::string();
    double seconds[2];
    auto refResults = runStep(*reference, inputs, results, "reference",
                              seconds[0], options.runner);
    if (!refResults)
      return fail(llvm::toString(refResults.takeError()) + ofSet);
    auto testResults = runStep(*test, rewrittenInputs, results, "rewritten",
                               seconds[1], options.runner);
    if (!testResults)
      return fail(llvm::toString(testResults.takeError()) + ofSet);
    for (int side = 0; side < 2; ++side)
      run.runSeconds[side] =
          k == 0 ? seconds[side]
                 : std::min(run.runSeconds[side], seconds[side]);
    for (auto [i, slot] : llvm::enumerate(results)) {
      Comparison c = compareResult(
          i, slot, (*refResults)[i], (*testResults)[i],
          options.rtol ? options.rtol
                       : getStepTolerance(slot.kind, leastPrecise),
          options.atol);
      c.seed = setSeed;
      if (k == 0)
        run.comparisons.push_back(std::move(c));
      else if (isWorse(c, run.comparisons[i]))
        run.comparisons[i] = std::move(c);
    }
  }
  return 0;
}

int mlir::ga::verify::runVerification(std::unique_ptr<llvm::MemoryBuffer> input,
                                      const VerifyOptions &options,
                                      llvm::raw_ostream &out) {
  setPhase("parsing the input");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  ga::registerAllGADialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the op by location; whole-op dumps are noise here.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Refusals go to stderr; in JSON mode the document says so too.
  VerifyReport report;
  int status = verifyStep(context, sourceMgr, options, report);
  if (options.json)
    printJson(report, status, options, out);
  else if (status == 0)
    printTable(report, options, out);
  if (status)
    return status;
  return report.passed() ? 0 : 1;
}

int mlir::ga::verify::runVerificationIsolated(
    std::unique_ptr<llvm::MemoryBuffer> input, const VerifyOptions &options,
    llvm::raw_ostream &out) {
  std::string output, crash;
  int status = runIsolated(
      [&](llvm::raw_ostream &childOut) {
        return runVerification(std::move(input), options, childOut);
      },
      output, crash);
  out << output;
  if (status >= 0)
    return status;
  VerifyReport report;
  report.error = crash + ": a bug in the code of that phase (see the stack "
                         "dump above)";
  llvm::errs() << "ga-verify: error: " << report.error << "\n";
  if (options.json)
    printJson(report, 1, options, out);
  return 1;
}
