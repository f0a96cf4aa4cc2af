//===- BatchSlicing.cpp - how a micro-batch slices a linalg op ------------===//
//
// The slicing of a linalg op's operands by a tile of one of its loops (see
// BatchSlicing.h): one rule, used by the analysis and the rewrite.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchSlicing.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ga;

FailureOr<LoopSlicing> mlir::ga::getLoopSlicing(linalg::LinalgOp op,
                                                unsigned loop,
                                                OpOperand **culprit,
                                                std::string *reason) {
  LoopSlicing slicing;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> sliced;
    unsigned uses = 0;
    bool compound = false;
    for (auto [position, expr] : llvm::enumerate(map.getResults())) {
      if (!expr.isFunctionOfDim(loop))
        continue;
      ++uses;
      if (isa<AffineDimExpr>(expr))
        sliced = position;
      else
        compound = true;
    }
    if (uses > 1 || compound) {
      if (culprit)
        *culprit = &operand;
      if (reason) {
        llvm::raw_string_ostream os(*reason);
        os << "operand #" << operand.getOperandNumber() << " is read through "
           << map << ", which uses the batch loop d" << loop
           << (uses > 1 ? " in more than one dimension"
                        : " in a compound expression")
           << ": a micro-batch slices an operand only along one dimension "
              "indexed by the plain batch loop";
      }
      return failure();
    }
    slicing.operandDims.push_back(sliced);
  }
  return slicing;
}
