//===- DuplicatePerUse.cpp - clones of a pure op for groups of its uses ---===//
//
// The rule that ga-duplicate-shared-fills and ga-duplicate-shared-empties
// share: a destination that is only an allocation or a fill means the same
// to each of its users whether they share it or each has a copy; what
// sharing changes is bufferization's work (a copy per writer of a fill, an
// analysis quadratic in the writers of one empty) and its buffer reuse.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

unsigned mlir::ga::duplicateForUses(
    Operation *op, ArrayRef<OpOperand *> uses, unsigned usesPerCopy,
    bool keepFirst, llvm::function_ref<Operation *(OpOperand &)> placeFor) {
  assert(op->getNumResults() == 1 && usesPerCopy > 0 &&
         "one result, shared by groups of at least one use");
  OpBuilder builder(op);
  unsigned copies = 0;
  for (size_t begin = keepFirst ? usesPerCopy : 0; begin < uses.size();
       begin += usesPerCopy) {
    ArrayRef<OpOperand *> group =
        uses.slice(begin, std::min<size_t>(usesPerCopy, uses.size() - begin));
    Operation *before = placeFor(*group.front());
    builder.setInsertionPoint(before ? before : op);
    Value copy = builder.clone(*op)->getResult(0);
    for (OpOperand *use : group)
      use->set(copy);
    ++copies;
  }
  if (!keepFirst)
    op->erase();
  return copies;
}
