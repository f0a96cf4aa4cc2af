//===- GPUKernelReport.cpp - print the static figures of the kernels
//-------===//
//
// --ga-gpu-kernel-report: prints the KernelReport (KernelReport.h) of every
// function with kernels as a markdown table and the checks of issue 41 (no
// thread walks a long row alone, every product a library call, no T x T
// buffer, at most one copy of the logits), each PASS or FAIL. The IR is left
// unchanged; the checks are figures, not diagnostics, so that a test can
// assert each one (and expect one to fail while its fix is missing).
//
//===----------------------------------------------------------------------===//

#include "KernelReport.h"
#include "LaunchReport.h"

#include "ga/Codegen/GPU/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::ga {
#define GEN_PASS_DEF_GPUKERNELREPORT
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {
struct GPUKernelReportPass
    : public ga::impl::GPUKernelReportBase<GPUKernelReportPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  void print(func::FuncOp func, const KernelReport &report,
             raw_ostream &os) const;
  void printJson(raw_ostream &os);
};
} // namespace

static std::string typeOf(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getResult(0).getType();
  return s;
}

static void printCheck(raw_ostream &os, StringRef what,
                       ArrayRef<std::string> bad) {
  os << "check " << what << ": " << (bad.empty() ? "PASS" : "FAIL");
  if (!bad.empty()) {
    os << " (" << bad.size() << ":";
    for (const std::string &b : llvm::ArrayRef(bad).take_front(4))
      os << " " << b;
    if (bad.size() > 4)
      os << " ...";
    os << ")";
  }
  os << "\n";
}

void GPUKernelReportPass::print(func::FuncOp func, const KernelReport &report,
                                raw_ostream &os) const {
  RooflineTarget target;
  os << "GPU kernel report: @" << func.getSymName()
     << " (roofline: 4.8 TB/s, 989 TFLOP/s bf16, 67 TFLOP/s fp32)\n";
  os << "| # | kernel | in loop | threads | alone | MB | GFLOP | types | us |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  double loopSeconds = 0, allSeconds = 0;
  unsigned loopKernels = 0, loopCalls = 0;
  SmallVector<std::string> alone;
  for (auto [i, k] : llvm::enumerate(report.kernels)) {
    double seconds = k.estimate(target);
    allSeconds += seconds;
    if (k.inMicroBatchLoop) {
      loopSeconds += seconds;
      ++(k.library ? loopCalls : loopKernels);
    }
    if (!k.library && k.aloneWalk > static_cast<int64_t>(maxAlone))
      alone.push_back(k.name + "#" + std::to_string(i) + "=" +
                      std::to_string(k.aloneWalk));
    os << "| " << i << " | " << k.name << " | "
       << (k.inMicroBatchLoop ? "yes" : "no") << " | "
       << (k.library ? std::string("library") : std::to_string(k.threads))
       << " | " << (k.library ? std::string("-") : std::to_string(k.aloneWalk))
       << " | " << llvm::format("%.3f", k.bytes / 1e6) << " | "
       << llvm::format("%.3f", k.flops / 1e9) << " | "
       << (k.types.empty() ? "-" : k.types) << " | "
       << llvm::format("%.2f", seconds * 1e6) << (k.dynamic ? "+" : "")
       << " |\n";
  }
  os << "kernels per micro-batch: " << loopKernels << " kernels, " << loopCalls
     << " library calls";
  if (layers > 0)
    os << "; per layer: "
       << llvm::format("%.1f", (loopKernels + loopCalls) /
                                   static_cast<double>(layers.getValue()));
  os << "\n";
  os << "roofline estimate: " << llvm::format("%.1f", loopSeconds * 1e6)
     << " us per micro-batch, " << llvm::format("%.1f", allSeconds * 1e6)
     << " us in all (each micro-batch loop body counted once)\n";
  printCheck(os,
             ("no thread walks more than " + std::to_string(maxAlone) +
              " elements alone")
                 .c_str(),
             alone);
  SmallVector<std::string> products, square, logits;
  for (Operation *op : report.productKernels)
    products.push_back(
        op->getAttrOfType<StringAttr>("ga.kernel").getValue().str());
  printCheck(os, "every product a library call", products);
  for (Operation *op : report.squareBuffers)
    square.push_back(typeOf(op));
  printCheck(os, ("no T x T buffer (T = " + std::to_string(seq) + ")").c_str(),
             square);
  for (Operation *op : report.logitBuffers)
    logits.push_back(typeOf(op));
  os << "logit-sized buffers (vocabulary " << vocab << ", " << tokens
     << " tokens): " << logits.size() << "\n";
  printCheck(os, "at most one copy of the logits",
             logits.size() <= 1 ? SmallVector<std::string>() : logits);
}

/// The figures of every function with kernels, then the launch structure
/// (LaunchReport.h), as one JSON object.
void GPUKernelReportPass::printJson(raw_ostream &os) {
  RooflineTarget target;
  llvm::json::OStream json(os, /*IndentSize=*/1);
  json.object([&] {
    json.attributeArray("functions", [&] {
      getOperation().walk([&](func::FuncOp func) {
        KernelReport report(func, seq, vocab, tokens);
        if (report.kernels.empty())
          return;
        json.object([&] {
          json.attribute("name", func.getSymName());
          json.attributeArray("kernels", [&] {
            for (const KernelFigures &k : report.kernels)
              json.object([&] {
                json.attribute("name", k.name);
                json.attribute("library", k.library);
                json.attribute("in_loop", k.inMicroBatchLoop);
                json.attribute("threads", k.threads);
                json.attribute("alone", k.aloneWalk);
                json.attribute("bytes", k.bytes);
                json.attribute("flops", k.flops);
                json.attribute("types", k.types);
                json.attribute("dynamic", k.dynamic);
                json.attribute("seconds", k.estimate(target));
              });
          });
        });
      });
    });
    writeLaunchReport(getOperation(), json);
  });
  os << "\n";
}

void GPUKernelReportPass::runOnOperation() {
  if (format != "text" && format != "json") {
    getOperation().emitError() << "ga-gpu-kernel-report: unknown format '"
                               << format << "' (expected text or json)";
    return signalPassFailure();
  }
  if (vocab > 0 && tokens <= 0) {
    getOperation().emitError()
        << "ga-gpu-kernel-report: vocab needs tokens (the tokens per "
           "micro-batch) to size the logits";
    return signalPassFailure();
  }
  if (format == "json")
    return printJson(llvm::outs());
  getOperation().walk([&](func::FuncOp func) {
    KernelReport report(func, seq, vocab, tokens);
    if (report.kernels.empty())
      return;
    print(func, report, llvm::outs());
  });
}
