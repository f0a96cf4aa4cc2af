//===- WriteResultsInPlace.cpp - results into argument buffers ------------===//
//
// --ga-write-results-in-place: the step writes chosen results into the
// tensors of chosen arguments (bufferization.materialize_in_destination) in
// a private function, and a public wrapper of the same name returns the
// others. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SmallSet.h"

namespace mlir::ga {
#define GEN_PASS_DEF_WRITERESULTSINPLACE
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// One `result:argument` pair.
struct InPlacePair {
  unsigned result;
  unsigned argument;
};

struct WriteResultsInPlacePass
    : public ga::impl::WriteResultsInPlaceBase<WriteResultsInPlacePass> {
  using Base::Base;

  void runOnOperation() override;

  /// The pairs of the `pairs` option, checked against `fn`; failure after
  /// a diagnostic.
  FailureOr<SmallVector<InPlacePair>> parsePairs(func::FuncOp fn);
};

} // namespace

FailureOr<SmallVector<InPlacePair>>
WriteResultsInPlacePass::parsePairs(func::FuncOp fn) {
  SmallVector<InPlacePair> out;
  llvm::SmallSet<unsigned, 8> results, arguments;
  for (StringRef text : pairs) {
    auto [r, a] = text.split(':');
    InPlacePair p;
    if (a.empty() || r.trim().getAsInteger(10, p.result) ||
        a.trim().getAsInteger(10, p.argument))
      return fn.emitError() << "ga-write-results-in-place: '" << text
                            << "' is not a result:argument pair";
    if (p.result >= fn.getNumResults() || p.argument >= fn.getNumArguments())
      return fn.emitError()
             << "ga-write-results-in-place: pair " << text << " out of range: @"
             << fn.getSymName() << " has " << fn.getNumResults()
             << " results and " << fn.getNumArguments() << " arguments";
    Type resultType = fn.getResultTypes()[p.result];
    Type argType = fn.getArgumentTypes()[p.argument];
    if (resultType != argType || !isa<RankedTensorType>(argType))
      return fn.emitError()
             << "ga-write-results-in-place: result " << p.result << " ("
             << resultType << ") cannot be written into argument " << p.argument
             << " (" << argType
             << "): the types must be the same ranked tensor";
    if (!results.insert(p.result).second ||
        !arguments.insert(p.argument).second)
      return fn.emitError()
             << "ga-write-results-in-place: result " << p.result
             << " or argument " << p.argument << " is named twice";
    out.push_back(p);
  }
  return out;
}

void WriteResultsInPlacePass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  auto fn = symbols.lookup<func::FuncOp>(funcName);
  if (!fn || fn.isExternal()) {
    module.emitError() << "ga-write-results-in-place: no function @" << funcName
                       << " with a body";
    return signalPassFailure();
  }
  std::string implName = funcName + "_in_place";
  if (symbols.lookup(implName)) {
    fn.emitError() << "ga-write-results-in-place: @" << implName
                   << " exists already";
    return signalPassFailure();
  }
  FailureOr<SmallVector<InPlacePair>> parsed = parsePairs(fn);
  if (failed(parsed))
    return signalPassFailure();
  if (fn.getBody().getBlocks().size() != 1) {
    fn.emitError() << "ga-write-results-in-place: @" << funcName
                   << " must have one block";
    return signalPassFailure();
  }

  // The function itself becomes the private implementation; its return
  // writes each chosen result into its argument.
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  OpBuilder b(ret);
  llvm::SmallSet<unsigned, 8> dropped;
  for (const InPlacePair &p : *parsed) {
    Value dest = fn.getArgument(p.argument);
    auto materialized = bufferization::MaterializeInDestinationOp::create(
        b, ret.getLoc(), ret.getOperand(p.result), dest);
    ret.setOperand(p.result, materialized.getResult());
    dropped.insert(p.result);
    ++numWritten;
  }
  FunctionType type = fn.getFunctionType();
  b.setInsertionPointAfter(fn);
  SmallVector<Type> kept;
  for (auto [i, t] : llvm::enumerate(type.getResults()))
    if (!dropped.contains(i))
      kept.push_back(t);
  auto wrapper = func::FuncOp::create(
      b, fn.getLoc(), funcName,
      FunctionType::get(&getContext(), type.getInputs(), kept));
  // The renaming keeps the body and the function's attributes with the
  // implementation.
  fn.setSymName(implName);
  fn.setPrivate();
  Block *entry = wrapper.addEntryBlock();
  OpBuilder wb = OpBuilder::atBlockBegin(entry);
  auto call = func::CallOp::create(wb, fn.getLoc(), fn, entry->getArguments());
  SmallVector<Value> returned;
  for (auto [i, v] : llvm::enumerate(call.getResults()))
    if (!dropped.contains(i))
      returned.push_back(v);
  func::ReturnOp::create(wb, fn.getLoc(), returned);
}
