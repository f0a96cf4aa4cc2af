//===- ga-verify.cpp - prove a rewritten training step exact --------------===//
//
// `ga-verify step.mlir --micro-batches=N` JIT-compiles the training step twice
// in-process (mlir::ExecutionEngine): once as written (the full-batch
// reference) and once after `ga-accumulate{micro-batches=N}` (or any pipeline
// given with --pipeline). Both run on the same seeded input sets; every result
// is compared (floats to a tolerance relative to the largest reference
// magnitude, integers exactly) and printed as a table or as JSON.
//
// A thin driver: the flags become ga::verify::VerifyOptions and the work is
// done by the GAVerify library (include/ga/Verify, lib/Verify), which the C
// API and the Python package use too.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"
#include "ga/Verify/Verify.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

static cl::OptionCategory verifyCategory("ga-verify options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<step.mlir>"),
                                          cl::init("-"),
                                          cl::cat(verifyCategory));
static cl::opt<int64_t>
    microBatches("micro-batches",
                 cl::desc("Number of micro-batches N for the default pipeline "
                          "ga-accumulate{micro-batches=N} (default 4)"),
                 cl::init(4), cl::cat(verifyCategory));
static cl::opt<std::string> funcName(
    "func",
    cl::desc("Step function to verify (default: the only function with "
             "ga.batch arguments, else the only public function)"),
    cl::cat(verifyCategory));
static cl::opt<uint64_t>
    seed("seed",
         cl::desc("Seed of the input generator; alone, the only input set "
                  "(default: --seeds input sets from seed 0)"),
         cl::init(0), cl::cat(verifyCategory));
static cl::opt<unsigned>
    numSeeds("seeds",
             cl::desc("Number of input sets, seeds S, S+1, ... from --seed S "
                      "(default 3; 1 when only --seed is given)"),
             cl::init(3), cl::cat(verifyCategory));
static cl::opt<double> relTol(
    "rtol",
    cl::desc("Compare to the normwise tolerance atol + rtol * max|ref| of each "
             "result instead of the derived per-element error bounds (rtol "
             "by element type unless given: f64 1e-12, f32 1e-5, f16 3e-3, "
             "bf16 2e-2)"),
    cl::cat(verifyCategory));
static cl::opt<double>
    absTol("atol",
           cl::desc("Absolute tolerance of the normwise comparison (see "
                    "--rtol; default 0)"),
           cl::init(0.0), cl::cat(verifyCategory));
static cl::opt<std::string> plantError(
    "plant-error",
    cl::desc("R:M, a self-test of the comparison: adds M times its tolerance "
             "to one element of the rewritten step's result R (the largest "
             "in magnitude among those with a finite bound), which must then "
             "fail"),
    cl::init(""), cl::cat(verifyCategory));
static cl::opt<bool> jsonOutput("json", cl::desc("Print the results as JSON"),
                                cl::cat(verifyCategory));
static cl::opt<std::string> pipelineText(
    "pipeline",
    cl::desc("Pass pipeline under test, in mlir-opt's textual form "
             "(default: builtin.module(ga-accumulate{micro-batches=N})); "
             "a pipeline without a builtin.module(...) anchor is wrapped in "
             "one"),
    cl::cat(verifyCategory));
static cl::opt<std::string> intRange(
    "int-range",
    cl::desc("lo:hi, the range [lo, hi) of integer tensor arguments without "
             "ga.range (default: [0, K) with K the smallest static "
             "non-batch dimension >= 2 of the float arguments, a class or "
             "vocabulary count in typical steps; integer scalars: [1, 10))"),
    cl::cat(verifyCategory));
static cl::opt<int64_t> batchSize(
    "batch-size",
    cl::desc("Size of every dynamic dimension of the arguments (default "
             "4 * N + 3: not a multiple of N, so the remainder path runs)"),
    cl::init(0), cl::cat(verifyCategory));
static cl::opt<std::string>
    lowerOptions("lower-options",
                 cl::desc("Options of ga-lower-to-cpu for both steps, e.g. "
                          "'blas=1' or 'openmp=1'"),
                 cl::init(""), cl::cat(verifyCategory));
static cl::opt<std::string> rewrittenLowerOptions(
    "rewritten-lower-options",
    cl::desc("Options of ga-lower-to-cpu for the rewritten step only (default: "
             "--lower-options); with --pipeline=canonicalize this verifies a "
             "lowering, e.g. 'blas=1', against the plain loops"),
    cl::cat(verifyCategory));
static cl::list<std::string>
    sharedLibs("shared-libs",
               cl::desc("Libraries the compiled steps may call (comma "
                        "separated); with blas=1 a CBLAS is found by itself"),
               cl::CommaSeparated, cl::cat(verifyCategory));
static cl::opt<std::string> referenceLibrary(
    "reference-library",
    cl::desc("Run the reference step from this ahead-of-time shared library "
             "(ga-lower-to-cpu c-interface=1 of the step as written; it must "
             "export _mlir_ciface_<func>) instead of JIT-compiling it"),
    cl::value_desc("path"), cl::cat(verifyCategory));
static cl::opt<std::string> rewrittenLibrary(
    "rewritten-library",
    cl::desc("Run the rewritten step from this ahead-of-time shared library "
             "(the step after the same pipeline, lowered with c-interface=1) "
             "instead of JIT-compiling it"),
    cl::value_desc("path"), cl::cat(verifyCategory));
static cl::opt<unsigned> jitOptLevel(
    "opt-level",
    cl::desc("LLVM optimization level of the JIT (0-3, default 2); both "
             "steps are compiled alike"),
    cl::init(2), cl::cat(verifyCategory));
static cl::opt<bool> dumpInputs("dump-inputs",
                                cl::desc("Print a summary of every generated "
                                         "input to stderr"),
                                cl::cat(verifyCategory));
static cl::opt<bool> dumpRewritten(
    "dump-rewritten",
    cl::desc("Print the module after the pipeline under test to stderr"),
    cl::cat(verifyCategory));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Run each compiled step this many times, on fresh copies "
                    "of the inputs, and report the fastest run (default 1)"),
           cl::init(1), cl::cat(verifyCategory));
static cl::opt<bool> noFork("no-fork",
                            cl::desc("Run the compiled steps in this process "
                                     "(for debuggers; a crash is not caught)"),
                            cl::cat(verifyCategory));

/// The flags as the library's options.
static ga::verify::VerifyOptions getOptions() {
  ga::verify::VerifyOptions options;
  options.inputName = inputFilename;
  options.microBatches = microBatches;
  options.funcName = funcName;
  options.seed = seed;
  // --seed alone: that input set only.
  options.numSeeds =
      seed.getNumOccurrences() && !numSeeds.getNumOccurrences() ? 1 : numSeeds;
  if (relTol.getNumOccurrences())
    options.rtol = relTol;
  options.atol = absTol;
  if (!plantError.empty()) {
    auto [result, multiple] = StringRef(plantError).split(':');
    unsigned r;
    double m;
    if (result.getAsInteger(10, r) || multiple.getAsDouble(m))
      options.plantResult = -2; // reported by verifyStep
    else {
      options.plantResult = r;
      options.plantMultiple = m;
    }
  }
  options.pipeline = pipelineText;
  options.intRange = intRange;
  options.batchSize = batchSize;
  options.referenceLibrary = referenceLibrary;
  options.rewrittenLibrary = rewrittenLibrary;
  options.runner.lowerOptions = lowerOptions;
  if (rewrittenLowerOptions.getNumOccurrences())
    options.runner.rewrittenLowerOptions = rewrittenLowerOptions;
  options.runner.sharedLibs.assign(sharedLibs.begin(), sharedLibs.end());
  options.runner.optLevel = jitOptLevel;
  options.runner.repeat = repeat;
  options.runner.noFork = noFork;
  options.json = jsonOutput;
  options.dumpInputs = dumpInputs;
  options.dumpRewritten = dumpRewritten;
  return options;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  registerAllPasses();
  ga::registerAllGAPasses();
  ga::registerAllGAPipelines();

  cl::HideUnrelatedOptions(verifyCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "ga-verify: run a training step and its gradient-accumulation rewrite "
      "on the same seeded inputs and compare every result\n\n"
      "Exit status: 0 if every result matches, 1 otherwise (a mismatch, or "
      "a step that cannot be verified: the message says which).\n");

  std::string errorMessage;
  auto file = openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << "ga-verify: error: " << errorMessage << "\n";
    return 1;
  }
  ga::verify::VerifyOptions options = getOptions();
  // Forks before the MLIRContext exists (and with it, its thread pool).
  if (noFork)
    return ga::verify::runVerification(std::move(file), options, llvm::outs());
  return ga::verify::runVerificationIsolated(std::move(file), options,
                                             llvm::outs());
}
