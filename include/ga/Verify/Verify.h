//===- Verify.h - prove a rewritten training step exact ---------*- C++ -*-===//
//
// The library behind `ga-verify`: JIT-compiles a training step twice
// in-process, once as written (the full-batch reference) and once after
// `ga-accumulate{micro-batches=N}` (or any pipeline), runs both on the same
// seeded input sets and compares every result. The parts:
//   Inputs.h      the step, its signature and the seeded inputs
//   Runner.h      the entry wrapper, the JIT and ahead-of-time runners
//   Isolation.h   child processes, so that a crash is an error
//   Comparison.h  results against the reference
//   Verify.h      the whole verification and its report (table or JSON)
//
//===----------------------------------------------------------------------===//

#ifndef GA_VERIFY_VERIFY_H
#define GA_VERIFY_VERIFY_H

#include "ga/Verify/Comparison.h"
#include "ga/Verify/Runner.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mlir::ga::verify {

/// What to verify and how; the flags of ga-verify.
struct VerifyOptions {
  /// The input's name in reports.
  std::string inputName = "-";
  /// N of the default pipeline ga-accumulate{micro-batches=N}, and the value
  /// of `index` arguments the pipeline appends.
  int64_t microBatches = 4;
  /// The step function; empty: see findStep.
  std::string funcName;
  /// Input sets: seeds seed, seed + 1, ..., numSeeds of them.
  uint64_t seed = 0;
  unsigned numSeeds = 3;
  /// A normwise tolerance `atol + rtol * max|ref|` instead of the derived
  /// per-element bounds (either given: rtol defaults by element type).
  std::optional<double> rtol;
  double atol = 0;

  /// Whether results are compared to derived per-element error bounds.
  bool derivesTolerance() const { return !rtol && atol == 0; }
  /// A self-test of the comparison (--plant-error=R:M): result R of the
  /// rewritten step gets M times its tolerance added to one element. -1:
  /// none; -2: a malformed request.
  int plantResult = -1;
  double plantMultiple = 0;
  /// The pipeline under test in mlir-opt's textual form; empty: the default.
  std::string pipeline;
  /// lo:hi of integer arguments without ga.range; empty: see defaultIntRange.
  std::string intRange;
  /// Size of every dynamic dimension; 0: 4 * N + 3.
  int64_t batchSize = 0;
  /// Ahead-of-time libraries of the reference and the rewritten step.
  std::string referenceLibrary, rewrittenLibrary;
  RunnerOptions runner;
  /// Print the results as JSON instead of a table.
  bool json = false;
  /// Print every input (stderr), the module after the pipeline (stderr).
  bool dumpInputs = false, dumpRewritten = false;
};

/// What a verification found.
struct VerifyReport {
  std::string funcName;
  std::string pipeline;
  int64_t batch = -1;
  bool dynamicBatch = false;         // some argument has a dynamic dimension
  bool changed = true;               // the pipeline changed the step function
  std::string libraries[2];          // reference, rewritten: AOT libraries
  std::string error;                 // why the step could not be verified
  double compileSeconds[2] = {0, 0}; // reference, rewritten: lower + JIT
  double runSeconds[2] = {0, 0};     // fastest run
  double boundCompileSeconds = 0;    // the error-bound step, when needed
  bool boundsUsed = false;           // some result was not bitwise equal
  std::string noRigorousBound;       // why the step has none (the spread
                                     // alone is then the tolerance)
  SmallVector<uint64_t> seeds;       // the input sets
  /// Per result: the comparison of the input set with the worst outcome.
  std::vector<Comparison> comparisons;

  /// Whether every result matched.
  bool passed() const;
};

/// Verifies the step in the module of `sourceMgr` (parsed in `context`):
/// fills `report` and returns 0, or returns 1 with `report.error` set (also
/// printed to stderr) if the step cannot be verified. Mismatches are in the
/// report, not in the status.
int verifyStep(MLIRContext &context, llvm::SourceMgr &sourceMgr,
               const VerifyOptions &options, VerifyReport &report);

/// Prints `report` as the table ga-verify prints.
void printTable(const VerifyReport &report, const VerifyOptions &options,
                llvm::raw_ostream &os);

/// Prints `report` as one JSON document; `status` is verifyStep's.
void printJson(const VerifyReport &report, int status,
               const VerifyOptions &options, llvm::raw_ostream &os);

/// Parses `input` in a context with every dialect, verifies its step and
/// prints the report (per `options.json`) to `out`; diagnostics go to stderr.
/// Returns the exit status of ga-verify: 0 if every result matches, else 1.
/// Runs the steps in child processes unless `options.runner.noFork`, but not
/// itself: a crash of the pipeline under test takes the caller down.
int runVerification(std::unique_ptr<llvm::MemoryBuffer> input,
                    const VerifyOptions &options, llvm::raw_ostream &out);

/// runVerification in a child process (see runIsolated): a crash (in the
/// pipeline under test, say) is reported as an error naming the phase, in
/// the report (JSON with `options.json`) and on stderr. Call it before any
/// MLIRContext exists in the process. The passes and pipelines must be
/// registered and the native target initialized.
int runVerificationIsolated(std::unique_ptr<llvm::MemoryBuffer> input,
                            const VerifyOptions &options,
                            llvm::raw_ostream &out);

} // namespace mlir::ga::verify

#endif // GA_VERIFY_VERIFY_H
