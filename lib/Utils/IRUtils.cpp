//===- IRUtils.cpp - small IR helpers shared by the passes ----------------===//

#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

bool mlir::ga::isZeroFill(linalg::FillOp fill) {
  auto value = fill.getInputs().front().getDefiningOp<arith::ConstantOp>();
  auto zero = value ? dyn_cast<FloatAttr>(value.getValue()) : FloatAttr();
  return zero && zero.getValue().isPosZero();
}

int64_t mlir::ga::eraseDeadOps(Block &block) {
  int64_t erased = 0;
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
    if (isOpTriviallyDead(&op)) {
      op.erase();
      ++erased;
      continue;
    }
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        erased += eraseDeadOps(nested);
  }
  return erased;
}
