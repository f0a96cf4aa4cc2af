//===- Tolerance.cpp - tolerances derived from the step -------------------===//
//
// Builds, compiles and runs the analysis step: the step as written with its
// rigorous rounding-error bounds and with its roundings perturbed, one call
// per seed; the spread of the perturbed runs around the reference.
//
//===----------------------------------------------------------------------===//

#include "ga/Verify/Tolerance.h"

#include "ga/Transforms/Passes.h"
#include "ga/Verify/Isolation.h"
#include "ga/Verify/Verify.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace mlir::ga::verify;

/// The LLVM optimization level of the analysis step: its runs are short
/// and its functions long.
static constexpr unsigned kAnalysisOptLevel = 0;

/// Builds `@__ga_verify_analysis` in `module` from the bound (if any) and
/// perturbed copies of the step.
static func::FuncOp buildAnalysisFunction(ModuleOp module, func::FuncOp bound,
                                          func::FuncOp perturbed) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = perturbed.getLoc();
  size_t n = perturbed.getNumResults();
  SmallVector<Type> resultTypes;
  if (bound)
    llvm::append_range(resultTypes, bound.getResultTypes().drop_front(n));
  llvm::append_range(resultTypes, perturbed.getResultTypes());
  auto analysis = func::FuncOp::create(
      b, loc, "__ga_verify_analysis",
      b.getFunctionType(perturbed.getArgumentTypes(), resultTypes));
  Block *body = analysis.addEntryBlock();
  b.setInsertionPointToStart(body);
  ValueRange args = body->getArguments();
  SmallVector<Value> results;
  if (bound)
    llvm::append_range(results,
                       func::CallOp::create(b, loc, bound, args.drop_back())
                           .getResults()
                           .drop_front(n));
  llvm::append_range(
      results, func::CallOp::create(b, loc, perturbed, args).getResults());
  func::ReturnOp::create(b, loc, results);
  return analysis;
}

llvm::Expected<AnalysisStep>
mlir::ga::verify::deriveAnalysisStep(MLIRContext &context, ModuleOp original,
                                     func::FuncOp step) {
  setPhase("deriving the rounding-error analysis of @" + step.getSymName());
  AnalysisStep analysis;
  analysis.module = original.clone();
  std::string name = step.getSymName().str();
  PassManager pm(&context, ModuleOp::getOperationName());
  pm.addPass(createInlinerPass());
  ga::PerturbRoundingsOptions perturbOptions;
  perturbOptions.funcNames = {name};
  pm.addPass(ga::createPerturbRoundings(perturbOptions));
  if (failed(pm.run(*analysis.module)))
    return llvm::createStringError(
        "cannot derive the rounding-error tolerances of @" + name +
        " (see the diagnostic above); --rtol/--atol compare to a normwise "
        "tolerance instead");
  // The rigorous bound follows fewer ops (no scf.while, say): without it,
  // the spread alone is the tolerance, and the report says why.
  ga::ForwardErrorBoundOptions boundOptions;
  boundOptions.funcNames = {name};
  OwningOpRef<ModuleOp> attempt = analysis.module->clone();
  PassManager boundPm(&context, ModuleOp::getOperationName());
  boundPm.addPass(ga::createForwardErrorBound(boundOptions));
  {
    ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diagnostic) {
      if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
          analysis.noBound.empty())
        analysis.noBound = diagnostic.str();
      return success();
    });
    if (succeeded(boundPm.run(*attempt))) {
      analysis.module = std::move(attempt);
      analysis.noBound.clear();
    }
  }
  auto lookup = [&](StringRef suffix) {
    return analysis.module->lookupSymbol<func::FuncOp>(
        (step.getSymName() + suffix).str());
  };
  func::FuncOp function = buildAnalysisFunction(
      *analysis.module,
      analysis.noBound.empty() ? lookup(boundOptions.suffix) : func::FuncOp(),
      lookup(perturbOptions.suffix));
  for (auto [i, t] : llvm::enumerate(function.getResultTypes())) {
    auto slot = describeSlot(t, "result", i);
    if (!slot)
      return slot.takeError();
    analysis.results.push_back(*slot);
  }
  addEntryWrapper(*analysis.module, function);
  return analysis;
}

std::string mlir::ga::verify::plantError(const HostArray &ref, HostArray &got,
                                         const DerivedTolerance &derived,
                                         double multiple) {
  int64_t at = -1;
  double largest = -1, maxRef = 0;
  for (int64_t i = 0, n = ref.numElements(); i < n; ++i) {
    double r = std::fabs(readElement(ref, i)), tol = derived.at(i);
    if (std::isfinite(r))
      maxRef = std::max(maxRef, r);
    if (std::isfinite(tol) && tol > 0 && std::isfinite(r) && r > largest) {
      largest = r;
      at = i;
    }
  }
  if (at < 0)
    return "nothing planted: no element has a finite positive tolerance";
  double tolerance = derived.at(at);
  writeElement(got, at, readElement(got, at) + multiple * tolerance);
  return llvm::formatv("planted {0:e3} at {1}: {2} times its tolerance, "
                       "{3:e2} of max|ref|",
                       multiple * tolerance, formatIndex(at, ref.shape),
                       multiple, tolerance / maxRef)
      .str();
}

llvm::Expected<std::vector<HostArray>> mlir::ga::verify::runAnalysisStep(
    AnalysisStep &analysis, const std::vector<HostArray> &inputs,
    const std::vector<HostArray> &ref, std::vector<DerivedTolerance> &derived,
    const VerifyOptions &options, VerifyReport &run) {
  if (!analysis.compiled) {
    auto start = std::chrono::steady_clock::now();
    // Its runs are short and many ops long: compile it fast.
    RunnerOptions fast = options.runner;
    fast.optLevel = std::min(fast.optLevel, kAnalysisOptLevel);
    auto compiled = compile(*analysis.module, "error-analysis", nullptr, fast);
    if (!compiled)
      return compiled.takeError();
    analysis.compiled = std::move(*compiled);
    std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
    run.boundCompileSeconds = d.count();
  }
  size_t n = ref.size();
  std::vector<HostArray> bounds;
  derived.assign(n, DerivedTolerance());
  RunnerOptions once = options.runner;
  once.repeat = 1;
  for (unsigned k = 0; k < kPerturbedRuns; ++k) {
    std::vector<HostArray> seeded = inputs;
    HostArray seed;
    seed.kind = ElemKind::I64;
    seed.bytes.resize(8);
    writeElement(seed, 0, static_cast<double>(k + 1));
    seeded.push_back(std::move(seed));
    double seconds;
    auto results = runStep(*analysis.compiled, seeded, analysis.results,
                           "error-analysis", seconds, once);
    if (!results)
      return results.takeError();
    size_t first = analysis.noBound.empty() ? n : 0;
    if (k == 0 && first)
      bounds.assign(std::make_move_iterator(results->begin()),
                    std::make_move_iterator(results->begin() + n));
    for (size_t i = 0; i < n; ++i) {
      const HostArray &moved = (*results)[first + i];
      if (!isFloatKind(moved.kind))
        continue;
      std::vector<double> &spread = derived[i].spread;
      spread.resize(moved.numElements(), 0);
      for (int64_t j = 0, m = moved.numElements(); j < m; ++j) {
        double r = readElement(ref[i], j), p = readElement(moved, j);
        double d = r == p ? 0 : std::fabs(p - r); // inf - inf is NaN
        spread[j] = std::isnan(d) ? d : std::max(spread[j], d);
      }
    }
  }
  return bounds;
}
