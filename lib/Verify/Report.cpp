//===- Report.cpp - ga-verify's table and JSON ----------------------------===//

#include "ga/Verify/Verify.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ga::verify;

bool VerifyReport::passed() const {
  return llvm::all_of(comparisons,
                      [](const Comparison &c) { return c.passed(); });
}

void mlir::ga::verify::printTable(const VerifyReport &run,
                                  const VerifyOptions &options,
                                  llvm::raw_ostream &os) {
  os << "ga-verify: @" << run.funcName << " with " << run.pipeline;
  if (run.batch >= 0)
    os << ", batch " << run.batch;
  if (run.seeds.size() == 1) {
    os << ", seed " << run.seeds.front() << "\n";
  } else {
    os << ", seeds ";
    llvm::interleaveComma(run.seeds, os);
    os << "\n";
  }
  for (int k = 0; k < 2; ++k)
    if (!run.libraries[k].empty())
      os << "  " << (k == 0 ? "reference" : "rewritten")
         << " step: ahead-of-time library " << run.libraries[k] << "\n";
  if (!run.changed)
    os << "  note: the pipeline left @" << run.funcName << " unchanged"
       << (options.pipeline.empty() ? " (no ga.batch arguments?)" : "") << "\n";
  if (run.seeds.size() > 1) {
    os << "  inputs: per-sample data without ga.init drawn as ";
    llvm::interleave(
        run.seeds, os,
        [&](uint64_t s) {
          os << describeDataMode(dataMode(s)) << " (seed " << s << ")";
        },
        "; ");
    os << "; scalar i1 flags = seed % 2\n";
  }
  if (options.derivesTolerance())
    os << "  tolerance: per element, derived from the step: the smaller of 2 "
          "rounding-error bounds and 8 spreads of 16 runs with perturbed "
          "roundings (err/tol <= 1 passes)\n";
  else
    os << "  tolerance: atol + rtol * max|ref| of each result (--rtol/--atol)"
          "\n";
  if (!run.noRigorousBound.empty())
    os << "  note: no rigorous error bound (" << run.noRigorousBound
       << "): the tolerance is 8 spreads alone\n";
  os << llvm::formatv("  {0,-7} {1,-28} {2,-12} {3,-12} {4,-12} {5,-9} {6}\n",
                      "result", "type", "max-abs-err", "max-rel-err",
                      "tolerance", "err/tol", "status");
  unsigned passed = 0;
  for (const Comparison &c : run.comparisons) {
    std::string type =
        c.type.size() > 28 ? c.type.substr(0, 25) + "..." : c.type;
    // The tolerance of the worst element; none is needed where the results
    // are bitwise equal.
    std::string tolerance = !c.isFloat ? std::string("exact")
                            : c.derived && c.maxAbs == 0
                                ? std::string("-")
                                : llvm::formatv("{0:e3}", c.tolerance).str();
    os << llvm::formatv("  #{0,-6} {1,-28} {2,-12} {3,-12} {4,-12} {5,-9} {6}",
                        c.index, type, llvm::formatv("{0:e3}", c.maxAbs),
                        llvm::formatv("{0:e3}", c.maxRel), tolerance,
                        llvm::formatv("{0:f3}", c.ratio), c.status);
    if (c.status != "PASS" && c.worst >= 0)
      os << " at " << formatIndex(c.worst, c.shape);
    if (c.status != "PASS" && run.seeds.size() > 1)
      os << " with seed " << c.seed;
    if (!c.note.empty())
      os << " (" << c.note << ")";
    os << "\n";
    passed += c.status == "PASS";
  }
  os << (passed == run.comparisons.size() ? "PASS" : "FAIL") << ": " << passed
     << "/" << run.comparisons.size() << " results match";
  if (run.seeds.size() > 1)
    os << " on all " << run.seeds.size() << " input sets";
  os << "\n";
  os << llvm::format("time: run %.3f ms reference, %.3f ms rewritten",
                     run.runSeconds[0] * 1e3, run.runSeconds[1] * 1e3);
  if (options.runner.repeat > 1)
    os << " (fastest of " << options.runner.repeat << ")";
  os << llvm::format("; lower + JIT %.2f s, %.2f s", run.compileSeconds[0],
                     run.compileSeconds[1]);
  if (run.boundsUsed)
    os << llvm::format(", error bounds %.2f s", run.boundCompileSeconds);
  os << "\n";
}

void mlir::ga::verify::printJson(const VerifyReport &run, int status,
                                 const VerifyOptions &options,
                                 llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 2);
  auto number = [](double v) -> llvm::json::Value {
    if (std::isfinite(v))
      return v;
    return nullptr;
  };
  j.object([&] {
    j.attribute("file", options.inputName);
    j.attribute("func", run.funcName);
    j.attribute("pipeline", run.pipeline);
    j.attribute("micro_batches", options.microBatches);
    j.attribute("seed",
                static_cast<int64_t>(run.seeds.empty() ? options.seed
                                                       : run.seeds.front()));
    j.attributeArray("seeds", [&] {
      for (uint64_t s : run.seeds)
        j.value(static_cast<int64_t>(s));
    });
    if (run.batch >= 0)
      j.attribute("batch", run.batch);
    j.attribute("dynamic_batch", run.dynamicBatch);
    if (!run.libraries[0].empty())
      j.attribute("reference_library", run.libraries[0]);
    if (!run.libraries[1].empty())
      j.attribute("rewritten_library", run.libraries[1]);
    bool pass = status == 0 && run.passed();
    j.attribute("pass", pass);
    j.attribute("changed", run.changed);
    j.attribute("tolerance_rule",
                options.derivesTolerance() ? "derived" : "normwise");
    if (!run.noRigorousBound.empty())
      j.attribute("no_rigorous_bound", run.noRigorousBound);
    if (!run.error.empty())
      j.attribute("error", run.error);
    j.attributeObject("time", [&] {
      j.attribute("reference_run_s", run.runSeconds[0]);
      j.attribute("rewritten_run_s", run.runSeconds[1]);
      j.attribute("reference_compile_s", run.compileSeconds[0]);
      j.attribute("rewritten_compile_s", run.compileSeconds[1]);
      if (run.boundsUsed)
        j.attribute("error_bound_compile_s", run.boundCompileSeconds);
      j.attribute("repeat", static_cast<int64_t>(options.runner.repeat));
    });
    j.attributeArray("results", [&] {
      for (const Comparison &c : run.comparisons)
        j.object([&] {
          j.attribute("index", c.index);
          j.attribute("type", c.type);
          j.attribute("max_abs_err", number(c.maxAbs));
          j.attribute("max_rel_err", number(c.maxRel));
          j.attribute("max_abs_ref", number(c.maxRef));
          if (c.isFloat)
            j.attribute("tolerance", number(c.tolerance));
          else
            j.attribute("mismatches", c.mismatches);
          j.attribute("error_over_tolerance", number(c.ratio));
          if (c.undetermined)
            j.attribute("undetermined", c.undetermined);
          if (c.worst >= 0)
            j.attribute("worst_index", formatIndex(c.worst, c.shape));
          j.attribute("status", c.status);
          j.attribute("seed", static_cast<int64_t>(c.seed));
          if (!c.note.empty())
            j.attribute("note", c.note);
        });
    });
  });
  os << "\n";
}

/// Parses, rewrites, compiles, runs and compares; prints the report. Returns
