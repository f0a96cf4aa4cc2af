//===- UserLocation.cpp - the source line a diagnostic names --------------===//

#include "ga/Analysis/UserLocation.h"

#include "mlir/IR/Location.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;

bool ga::hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location inner) {
    if (isa<FileLineColLoc>(inner)) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

Location ga::getUserLocation(Operation *op, unsigned limit) {
  if (hasFileLocation(op->getLoc()))
    return op->getLoc();
  llvm::DenseSet<Operation *> seen{op};
  SmallVector<Operation *> frontier{op};
  while (!frontier.empty() && seen.size() < limit) {
    SmallVector<Operation *> next;
    auto visit = [&](Operation *other) {
      if (!other || !seen.insert(other).second)
        return false;
      if (hasFileLocation(other->getLoc()))
        return true;
      next.push_back(other);
      return false;
    };
    for (Operation *current : frontier) {
      // Users first: an op without a line of its own was most often made
      // for the op that reads its result (the sum of a tensor's gradients
      // for the backward of the op that made the tensor).
      for (Operation *user : current->getUsers())
        if (visit(user))
          return user->getLoc();
      for (Value operand : current->getOperands())
        if (visit(operand.getDefiningOp()))
          return operand.getDefiningOp()->getLoc();
      // An op nested in a region without a line: its parent's.
      Operation *parent = current->getParentOp();
      if (parent && !isa<FunctionOpInterface>(parent) && visit(parent))
        return parent->getLoc();
    }
    frontier = std::move(next);
  }
  return op->getLoc();
}

void ga::attachOriginNote(Diagnostic &diag, Operation *origin,
                          const Twine &message) {
  if (origin)
    diag.attachNote(getUserLocation(origin)) << message;
}
