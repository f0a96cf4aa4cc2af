//===- IRUtils.cpp - small IR helpers shared by the passes ----------------===//

#include "ga/Utils/IRUtils.h"
#include "ga/Utils/FlatViews.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

bool mlir::ga::isZeroFill(linalg::FillOp fill) {
  auto value = fill.getInputs().front().getDefiningOp<arith::ConstantOp>();
  auto zero = value ? dyn_cast<FloatAttr>(value.getValue()) : FloatAttr();
  return zero && zero.getValue().isPosZero();
}

Value mlir::ga::getViewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

bool mlir::ga::isHostMemory(Value value) {
  Operation *def = getViewRoot(value).getDefiningOp();
  return isa_and_nonnull<memref::AllocaOp, memref::GetGlobalOp>(def);
}

LogicalResult mlir::ga::checkExternalFunction(ModuleOp module, StringRef name,
                                              FunctionType type,
                                              StringRef what) {
  Operation *existing = module.lookupSymbol(name);
  if (!existing)
    return success();
  auto fn = dyn_cast<func::FuncOp>(existing);
  if (fn && fn.getFunctionType() == type)
    return success();
  return existing->emitOpError() << "has the name of " << what
                                 << " with another type; expected " << type;
}

func::FuncOp mlir::ga::getOrDeclareFunction(ModuleOp module, StringRef name,
                                            FunctionType type) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  auto b = OpBuilder::atBlockBegin(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
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

SmallVector<ReassociationIndices>
mlir::ga::getCollapseAllReassociation(int64_t rank) {
  if (rank == 0)
    return {};
  ReassociationIndices all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  return {all};
}

/// `value` reshaped into `type` when one of the two is 1-d (unchanged when
/// both have the same rank): an expand_shape from the lower rank to the higher
/// one, a collapse_shape the other way (a 0-d tensor is the lower rank of a 1-d
/// one of one element).
static Value reshapeThroughFlat(OpBuilder &b, Location loc, Value value,
                                RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getRank() == type.getRank())
    return value;
  int64_t rank = std::max(from.getRank(), type.getRank());
  auto reassociation = ga::getCollapseAllReassociation(rank == 1 ? 0 : rank);
  if (from.getRank() < type.getRank() ||
      (from.getRank() == 0 && type.getRank() == 1))
    return tensor::ExpandShapeOp::create(b, loc, type, value, reassociation);
  return tensor::CollapseShapeOp::create(b, loc, type, value, reassociation);
}

Value mlir::ga::flattenTensor(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return reshapeThroughFlat(
      b, loc, value,
      RankedTensorType::get({type.getNumElements()}, type.getElementType()));
}

Value mlir::ga::unflattenTensor(OpBuilder &b, Location loc, Value flat,
                                RankedTensorType type) {
  return reshapeThroughFlat(b, loc, flat, type);
}

Value mlir::ga::extractFlatView(OpBuilder &b, Location loc, Value flat,
                                int64_t offset, RankedTensorType type) {
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, flat, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(type.getNumElements())},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return unflattenTensor(b, loc, slice, type);
}

Value mlir::ga::insertFlatView(OpBuilder &b, Location loc, Value value,
                               Value flat, int64_t offset) {
  auto type = cast<RankedTensorType>(value.getType());
  return tensor::InsertSliceOp::create(
      b, loc, flattenTensor(b, loc, value), flat,
      ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(type.getNumElements())},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}
