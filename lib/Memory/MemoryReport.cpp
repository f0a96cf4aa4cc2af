//===- MemoryReport.cpp - the static memory report of training steps ------===//
//
// --ga-memory-report prints the byte counts of the memory-usage analysis for
// each training step, as it is or for each N of a sweep, as a table or JSON.
// It runs the rewrite and the CPU or GPU bufferization (GAPipelineStages) on
// copies of the step.
//
//===----------------------------------------------------------------------===//

#include "StepMemory.h"

#include "ga/IR/GADialect.h"
#include "ga/Memory/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::ga {
#define GEN_PASS_DEF_MEMORYREPORT
#include "ga/Memory/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

namespace {
/// One line of the report.
struct ReportRow {
  std::string function;
  /// The number of micro-batches of the sweep; 0 for a function as it is.
  int64_t microBatches = 0;
  /// The batch size (0 when unknown or dynamic).
  int64_t batchSize = 0;
  MemoryUsage usage;
};

/// The columns of the report, in order, with their values. total_peak is
/// everything the step holds (arguments, heap allocations, static storage);
/// temporaries (static ones included), recomputed (the part of temporaries
/// that holds values --ga-rematerialize recomputes) and static are parts of
/// it. A GPU step (target=cuda) has two more: the library workspaces (part
/// of total_peak) and the host buffers (apart from it).
SmallVector<std::pair<StringRef, int64_t>> getColumns(const ReportRow &row,
                                                      bool device) {
  const MemoryUsage &u = row.usage;
  SmallVector<std::pair<StringRef, int64_t>> columns = {
      {"parameters", u.get(BufferRole::Parameters)},
      {"optimizer_state", u.get(BufferRole::OptimizerState)},
      {"inputs", u.get(BufferRole::Inputs)},
      {"accumulators", u.get(BufferRole::Accumulators)},
      {"results", u.get(BufferRole::Results)},
      {"temporaries", u.get(BufferRole::Temporaries)},
      {"recomputed", u.recomputedBytes},
      {"static", u.staticBytes}};
  if (device)
    columns.push_back({"workspaces", u.workspaceBytes});
  columns.push_back({"total_peak", u.getTotalPeak()});
  if (device)
    columns.push_back({"host", u.hostPeak});
  return columns;
}

struct MemoryReportPass : public ga::impl::MemoryReportBase<MemoryReportPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    getStepMemoryDialects(registry);
  }

  void runOnOperation() override;
  void printTable(raw_ostream &os, ArrayRef<ReportRow> rows);
  void printJSON(raw_ostream &os, ArrayRef<ReportRow> rows);
};
} // namespace

/// Whether `func` still has tensors (is not bufferized yet).
static bool hasTensors(func::FuncOp func) {
  auto isTensor = [](Type type) { return isa<TensorType>(type); };
  if (llvm::any_of(func.getArgumentTypes(), isTensor) ||
      llvm::any_of(func.getResultTypes(), isTensor))
    return true;
  WalkResult result = func.walk([&](Operation *op) {
    return llvm::any_of(op->getResultTypes(), isTensor)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return result.wasInterrupted();
}

void MemoryReportPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (format != "table" && format != "json") {
    emitError(module.getLoc()) << "--ga-memory-report: unknown format '"
                               << format << "' (expected table or json)";
    return signalPassFailure();
  }
  for (int64_t n : sweep)
    if (n < 1) {
      emitError(module.getLoc())
          << "--ga-memory-report: sweep values must be >= 1, "
             "got "
          << n;
      return signalPassFailure();
    }

  // The functions to report.
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    bool isStep = llvm::any_of(llvm::seq(func.getNumArguments()), [&](auto i) {
      return func.getArgAttr(i, GADialect::getBatchAttrName());
    });
    if (funcNames.empty() ? (isStep || sweep.empty())
                          : llvm::is_contained(funcNames, func.getSymName()))
      funcs.push_back(func);
  }
  for (const std::string &name : funcNames)
    if (!module.lookupSymbol<func::FuncOp>(name)) {
      emitError(module.getLoc())
          << "--ga-memory-report: no function named '" << name << "'";
      return signalPassFailure();
    }

  FailureOr<SmallVector<BufferRole>> roles =
      parseRoles(argumentRoles, module.getLoc());
  if (failed(roles))
    return signalPassFailure();
  FailureOr<MeasuredLowering> lowering =
      parseMeasuredLowering(target, cpuOptions, gpuOptions, module.getLoc());
  if (failed(lowering))
    return signalPassFailure();
  SmallVector<ReportRow> rows;
  for (func::FuncOp func : funcs) {
    if (!roles->empty() && roles->size() != func.getNumArguments()) {
      func.emitError() << "memory report: " << roles->size()
                       << " roles given for the " << func.getNumArguments()
                       << " arguments of '" << func.getSymName() << "'";
      return signalPassFailure();
    }
    ReportRow row;
    row.function = func.getSymName().str();
    std::optional<int64_t> batchSize = getStepBatchSize(func);
    if (batchSize && ShapedType::isDynamic(*batchSize)) {
      func.emitError() << "memory report: the batch of '" << func.getSymName()
                       << "' is only known at run time, and so are the sizes "
                          "of its buffers";
      return signalPassFailure();
    }
    if (batchSize)
      row.batchSize = *batchSize;
    if (sweep.empty()) {
      if (hasTensors(func)) {
        FailureOr<MemoryUsage> usage = estimateStepMemory(
            module, func, 0, accumulateOptions, *lowering, *roles);
        if (failed(usage))
          return signalPassFailure();
        row.usage = *usage;
      } else {
        MemoryUsageAnalysis analysis(func, *roles, /*inferOptimizerState=*/
                                     false, lowering->cuda);
        if (!analysis.succeeded())
          return signalPassFailure();
        row.usage = analysis.getUsage();
      }
      rows.push_back(row);
      continue;
    }
    for (int64_t n : sweep) {
      FailureOr<MemoryUsage> usage = estimateStepMemory(
          module, func, n, accumulateOptions, *lowering, *roles);
      if (failed(usage))
        return signalPassFailure();
      row.microBatches = n;
      row.usage = *usage;
      rows.push_back(row);
    }
  }

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(
      output.empty() ? std::string("-") : output.getValue(), &error);
  if (!file) {
    emitError(module.getLoc()) << "--ga-memory-report: " << error;
    return signalPassFailure();
  }
  if (format == "json")
    printJSON(file->os(), rows);
  else
    printTable(file->os(), rows);
  file->keep();
}

void MemoryReportPass::printTable(raw_ostream &os, ArrayRef<ReportRow> rows) {
  // Column widths: the header or the widest figure.
  bool device = target == "cuda";
  SmallVector<std::string> headers = {"function", "N", "micro"};
  for (auto &[name, value] : getColumns(ReportRow(), device))
    headers.push_back(name.str());
  SmallVector<SmallVector<std::string>> cells;
  for (const ReportRow &row : rows) {
    SmallVector<std::string> line = {"@" + row.function};
    // The micro-batch size: the largest micro-batch.
    bool known = row.microBatches && row.batchSize;
    line.push_back(row.microBatches ? std::to_string(row.microBatches) : "-");
    line.push_back(known ? std::to_string(llvm::divideCeil(row.batchSize,
                                                           row.microBatches))
                         : "-");
    for (auto &[name, value] : getColumns(row, device))
      line.push_back(std::to_string(value));
    cells.push_back(line);
  }
  SmallVector<size_t> widths;
  for (const std::string &header : headers)
    widths.push_back(header.size());
  for (auto &line : cells)
    for (auto [i, cell] : llvm::enumerate(line))
      widths[i] = std::max(widths[i], cell.size());
  auto printLine = [&](ArrayRef<std::string> line) {
    for (auto [i, cell] : llvm::enumerate(line)) {
      if (i)
        os << "  ";
      if (i == 0)
        os << llvm::left_justify(cell, widths[i]);
      else
        os << llvm::right_justify(cell, widths[i]);
    }
    os << "\n";
  };
  printLine(headers);
  for (auto &line : cells)
    printLine(line);
}

void MemoryReportPass::printJSON(raw_ostream &os, ArrayRef<ReportRow> rows) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.arrayBegin();
  for (const ReportRow &row : rows) {
    json.objectBegin();
    json.attribute("function", row.function);
    if (row.microBatches)
      json.attribute("micro_batches", row.microBatches);
    else
      json.attribute("micro_batches", nullptr);
    if (row.batchSize)
      json.attribute("batch_size", row.batchSize);
    else
      json.attribute("batch_size", nullptr);
    for (auto &[name, value] : getColumns(row, target == "cuda"))
      json.attribute(name, value);
    json.attribute("arguments", row.usage.argumentBytes);
    json.attribute("heap_peak", row.usage.getHeapPeak());
    json.attribute("allocation_peak", row.usage.allocationPeak);
    json.attribute("allocations", row.usage.numAllocations);
    json.attribute("target", target.getValue());
    if (loopProfile)
      json.attributeArray("loop_profile", [&] {
        for (const LoopPoint &point : row.usage.loopProfile)
          json.array([&] {
            json.value(point.bytes);
            json.value(point.scattered);
            json.array([&] {
              for (auto [argument, bytes] : point.gathered)
                json.array([&] {
                  json.value(argument);
                  json.value(bytes);
                });
            });
          });
      });
    json.objectEnd();
  }
  json.arrayEnd();
  os << "\n";
}
