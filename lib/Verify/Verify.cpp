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
#include "ga/Verify/Tolerance.h"

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
#include <cmath>

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

namespace {
/// What verifyStep reads from the step's signature before compiling lowers
/// it away: the arguments it feeds, how it draws them, the results it reads.
struct StepSignature {
  SmallVector<Slot> args, results;
  SmallVector<InitSpec> specs;
};
} // namespace

static const char *const kSides[2] = {"reference", "rewritten"};

/// Whether `a` and `b` hold the same bytes.
static bool bitwiseEqual(const HostArray &a, const HostArray &b) {
  return a.shape == b.shape && a.bytes == b.bytes;
}

/// Opens the ahead-of-time libraries named by `options`, checked before any
/// work is done.
static llvm::Error loadLibraries(const VerifyOptions &options,
                                 VerifyReport &run,
                                 LibraryStep (&libraries)[2]) {
  for (int k = 0; k < 2; ++k) {
    StringRef path =
        k == 0 ? options.referenceLibrary : options.rewrittenLibrary;
    if (path.empty())
      continue;
    setPhase(llvm::Twine("loading the ") + kSides[k] + " library '" + path +
             "'");
    auto address = openStepLibrary(path, run.funcName, kSides[k]);
    if (!address)
      return address.takeError();
    libraries[k] = {path.str(), "_mlir_ciface_" + run.funcName, *address};
    run.libraries[k] = path.str();
  }
  return llvm::Error::success();
}

/// The arguments and results of `step` that we can feed and read. A bad
/// --int-range is the user's error, not the step's, so it is reported alone.
static llvm::Expected<StepSignature>
describeSignature(func::FuncOp step, const VerifyOptions &options) {
  if (!options.intRange.empty())
    if (auto range = parseRangeOption(options.intRange); !range)
      return range.takeError();
  std::string cannot = "cannot verify @" + step.getSymName().str() + ": ";
  StepSignature signature;
  auto inputs = describeInputs(step, options.intRange);
  if (!inputs)
    return llvm::createStringError(cannot + llvm::toString(inputs.takeError()));
  signature.args = std::move(inputs->args);
  signature.specs = std::move(inputs->specs);
  for (auto [i, t] : llvm::enumerate(step.getResultTypes())) {
    auto slot = describeSlot(t, "result", i);
    if (!slot)
      return llvm::createStringError(cannot + llvm::toString(slot.takeError()));
    signature.results.push_back(*slot);
  }
  if (signature.results.empty())
    return llvm::createStringError("@" + step.getSymName().str() +
                                   " has no results: nothing to compare");
  return signature;
}

/// Records in `run` whether some argument is dynamic and the batch size the
/// step sees (`dynSize` for a dynamic batch dimension).
static void describeBatch(func::FuncOp step, ArrayRef<Slot> args,
                          int64_t dynSize, VerifyReport &run) {
  for (const Slot &slot : args)
    run.dynamicBatch |= llvm::any_of(slot.dims, ShapedType::isDynamic);
  for (auto [i, slot] : llvm::enumerate(args))
    if (auto dim = step.getArgAttrOfType<IntegerAttr>(
            i, GADialect::getBatchAttrName()))
      if (run.batch < 0 && dim.getInt() < (int64_t)slot.dims.size()) {
        int64_t s = slot.dims[dim.getInt()];
        run.batch = ShapedType::isDynamic(s) ? dynSize : s;
      }
}

/// Runs the pipeline under test on `rewritten` (a clone of the original) and
/// returns the step it leaves; sets `run.pipeline` and `run.changed`.
static llvm::Expected<func::FuncOp>
runPipelineUnderTest(MLIRContext &context, ModuleOp rewritten,
                     func::FuncOp step, const VerifyOptions &options,
                     VerifyReport &run) {
  run.pipeline = options.pipeline.empty()
                     ? llvm::formatv("builtin.module(ga-accumulate{{"
                                     "micro-batches={0}})",
                                     options.microBatches)
                           .str()
                     : anchorPipeline(options.pipeline);
  setPhase("running the pipeline '" + run.pipeline + "' on @" + run.funcName);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  FailureOr<OpPassManager> parsed =
      parsePassPipeline(run.pipeline, errorStream);
  if (failed(parsed))
    return llvm::createStringError("invalid pipeline '" + run.pipeline +
                                   "': " + errors);
  if (parsed->getOpAnchorName() != ModuleOp::getOperationName())
    return llvm::createStringError("the pipeline '" + run.pipeline +
                                   "' must be anchored on builtin.module");
  PassManager pm(&context, ModuleOp::getOperationName());
  static_cast<OpPassManager &>(pm) = *parsed;
  if (failed(pm.run(rewritten)))
    return llvm::createStringError("the pipeline '" + run.pipeline +
                                   "' failed on @" + run.funcName +
                                   "; see its diagnostics above");
  if (options.dumpRewritten)
    rewritten->print(llvm::errs());
  auto rewrittenStep = rewritten.lookupSymbol<func::FuncOp>(run.funcName);
  if (!rewrittenStep || rewrittenStep.isExternal())
    return llvm::createStringError("the pipeline removed the body of @" +
                                   run.funcName);
  auto printed = [](Operation *op) {
    std::string s;
    llvm::raw_string_ostream os(s);
    op->print(os, OpPrintingFlags().printGenericOpForm());
    return s;
  };
  run.changed = printed(step) != printed(rewrittenStep);
  return rewrittenStep;
}

/// How many `index` arguments the pipeline appended to the step (a run-time
/// micro-batch count; they get --micro-batches); any other change of the
/// signature is an error.
static llvm::Expected<size_t> countAppendedArguments(func::FuncOp step,
                                                     func::FuncOp rewritten) {
  ArrayRef<Type> before = step.getArgumentTypes();
  ArrayRef<Type> after = rewritten.getArgumentTypes();
  bool sameResults = step.getResultTypes() == rewritten.getResultTypes();
  bool prefix = after.size() >= before.size() &&
                after.take_front(before.size()) == before &&
                llvm::all_of(after.drop_front(before.size()),
                             [](Type t) { return t.isIndex(); });
  if (!sameResults || !prefix)
    return llvm::createStringError(
        "the pipeline changed the signature of @" + step.getSymName().str() +
        " from " + typeToString(step.getFunctionType()) + " to " +
        typeToString(rewritten.getFunctionType()));
  return after.size() - before.size();
}

/// The least precise float type that either step computes in: the default
/// tolerance follows it (a bf16 step accumulated in f32 is compared to a few
/// bf16 ulps).
static FloatType leastPreciseFloatType(func::FuncOp a, func::FuncOp b) {
  FloatType leastPrecise;
  for (func::FuncOp side : {a, b})
    if (FloatType type = getLeastPreciseFloatType(side))
      if (!leastPrecise ||
          type.getFPMantissaWidth() < leastPrecise.getFPMantissaWidth())
        leastPrecise = type;
  return leastPrecise;
}

/// Runs every input set through both compiled steps and keeps, per result,
/// the comparison with the worst outcome in `run.comparisons`.
static llvm::Error
compareOnInputSets(Compiled &reference, Compiled &test, AnalysisStep *analysis,
                   const StepSignature &signature, size_t numAppended,
                   int64_t dynSize, FloatType leastPrecise,
                   const VerifyOptions &options, VerifyReport &run) {
  for (auto [k, setSeed] : llvm::enumerate(run.seeds)) {
    std::vector<HostArray> inputs = makeInputs(
        signature.args, signature.specs, setSeed, dynSize, options.dumpInputs);
    std::vector<HostArray> rewrittenInputs = inputs;
    for (size_t j = 0; j < numAppended; ++j) {
      HostArray a;
      a.kind = ElemKind::Index;
      a.bytes.resize(8);
      writeElement(a, 0, static_cast<double>(options.microBatches));
      rewrittenInputs.push_back(std::move(a));
    }
    // Which input set failed, when there are several.
    std::string ofSet =
        run.seeds.size() > 1
            ? (" (inputs of seed " + llvm::Twine(setSeed) + ")").str()
            : std::string();
    double seconds[2];
    auto refResults = runStep(reference, inputs, signature.results, kSides[0],
                              seconds[0], options.runner);
    if (!refResults)
      return llvm::createStringError(llvm::toString(refResults.takeError()) +
                                     ofSet);
    auto testResults = runStep(test, rewrittenInputs, signature.results,
                               kSides[1], seconds[1], options.runner);
    if (!testResults)
      return llvm::createStringError(llvm::toString(testResults.takeError()) +
                                     ofSet);
    for (int side = 0; side < 2; ++side)
      run.runSeconds[side] =
          k == 0 ? seconds[side]
                 : std::min(run.runSeconds[side], seconds[side]);
    // Bounds are only needed where the results are not bitwise equal.
    std::vector<HostArray> boundArrays;
    std::vector<DerivedTolerance> derived;
    bool equal =
        llvm::all_of(llvm::seq<size_t>(0, refResults->size()), [&](size_t i) {
          return bitwiseEqual((*refResults)[i], (*testResults)[i]);
        });
    bool planting = options.plantResult >= 0;
    if (analysis && (!equal || planting)) {
      auto computed = runAnalysisStep(*analysis, inputs, *refResults, derived,
                                      options, run);
      if (!computed)
        return llvm::createStringError(llvm::toString(computed.takeError()) +
                                       ofSet);
      boundArrays = std::move(*computed);
      for (auto [d, b] : llvm::zip(derived, boundArrays))
        d.bound = &b;
      run.boundsUsed = true;
    }
    std::string planted;
    if (planting)
      planted = plantError((*refResults)[options.plantResult],
                           (*testResults)[options.plantResult],
                           derived[options.plantResult], options.plantMultiple);
    for (auto [i, slot] : llvm::enumerate(signature.results)) {
      Comparison c = compareResult(
          i, slot, (*refResults)[i], (*testResults)[i],
          derived.empty() ? nullptr : &derived[i],
          options.rtol ? options.rtol
                       : getStepTolerance(slot.kind, leastPrecise),
          options.atol);
      c.derived = analysis != nullptr;
      if (planting && static_cast<int>(i) == options.plantResult)
        c.note = planted + (c.note.empty() ? "" : "; " + c.note);
      c.seed = setSeed;
      if (k == 0)
        run.comparisons.push_back(std::move(c));
      else if (isWorse(c, run.comparisons[i]))
        run.comparisons[i] = std::move(c);
    }
  }
  return llvm::Error::success();
}

int mlir::ga::verify::verifyStep(MLIRContext &context,
                                 llvm::SourceMgr &sourceMgr,
                                 const VerifyOptions &options,
                                 VerifyReport &run) {
  auto fail = [&](const llvm::Twine &message) {
    run.error = message.str();
    llvm::errs() << "ga-verify: error: " << run.error << "\n";
    return 1;
  };
  auto failWith = [&](llvm::Error error) {
    return fail(llvm::toString(std::move(error)));
  };
  if (options.microBatches < 1)
    return fail("--micro-batches must be >= 1");
  if (options.numSeeds < 1)
    return fail("--seeds must be >= 1");
  if (options.plantResult == -2)
    return fail("--plant-error must be R:M (a result index and a multiple)");
  if (options.plantResult >= 0 && !options.derivesTolerance())
    return fail("--plant-error tests the derived bounds: drop --rtol/--atol");

  OwningOpRef<ModuleOp> original =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!original)
    return fail("could not parse '" + options.inputName + "'");
  auto stepOr = findStep(*original, options.funcName);
  if (!stepOr)
    return failWith(stepOr.takeError());
  func::FuncOp step = *stepOr;
  run.funcName = step.getSymName().str();

  LibraryStep libraries[2];
  if (llvm::Error error = loadLibraries(options, run, libraries))
    return failWith(std::move(error));
  auto libraryOf = [&](int k) -> const LibraryStep * {
    return libraries[k].address ? &libraries[k] : nullptr;
  };

  // Read now: compiling lowers the step away.
  auto signature = describeSignature(step, options);
  if (!signature)
    return failWith(signature.takeError());
  if (options.plantResult >= static_cast<int>(signature->results.size()) ||
      (options.plantResult >= 0 &&
       !isFloatKind(signature->results[options.plantResult].kind)))
    return fail("--plant-error: result " + llvm::Twine(options.plantResult) +
                " is not a float result of @" + run.funcName);
  int64_t dynSize =
      options.batchSize > 0 ? options.batchSize : 4 * options.microBatches + 3;
  describeBatch(step, signature->args, dynSize, run);
  for (unsigned k = 0; k < options.numSeeds; ++k)
    run.seeds.push_back(options.seed + k);

  OwningOpRef<ModuleOp> rewritten = original->clone();
  auto rewrittenStep =
      runPipelineUnderTest(context, *rewritten, step, options, run);
  if (!rewrittenStep)
    return failWith(rewrittenStep.takeError());
  auto numAppended = countAppendedArguments(step, *rewrittenStep);
  if (!numAppended)
    return failWith(numAppended.takeError());
  FloatType leastPrecise = leastPreciseFloatType(step, *rewrittenStep);

  // Derived before the wrapper is added: the bound follows the step alone.
  std::optional<AnalysisStep> analysis;
  if (options.derivesTolerance()) {
    auto derived = deriveAnalysisStep(context, *original, step);
    if (!derived)
      return failWith(derived.takeError());
    analysis = std::move(*derived);
    run.noRigorousBound = analysis->noBound;
  }

  addEntryWrapper(*original, step);
  addEntryWrapper(*rewritten, *rewrittenStep);
  ModuleOp modules[2] = {*original, *rewritten};
  func::FuncOp steps[2] = {step, *rewrittenStep};
  for (int k = 0; k < 2; ++k)
    if (libraryOf(k) && failed(externalizeStep(modules[k], steps[k])))
      return fail(llvm::Twine("could not replace the ") + kSides[k] +
                  " step by a declaration of its library's function");

  auto clock = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    auto now = std::chrono::steady_clock::now();
    std::chrono::duration<double> d = now - clock;
    clock = now;
    return d.count();
  };
  auto reference = compile(*original, kSides[0], libraryOf(0), options.runner);
  if (!reference)
    return failWith(reference.takeError());
  run.compileSeconds[0] = elapsed();
  auto test = compile(*rewritten, kSides[1], libraryOf(1), options.runner);
  if (!test)
    return failWith(test.takeError());
  run.compileSeconds[1] = elapsed();

  if (llvm::Error error = compareOnInputSets(
          *reference, *test, analysis ? &*analysis : nullptr, *signature,
          *numAppended, dynSize, leastPrecise, options, run))
    return failWith(std::move(error));
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
