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

Value mlir::ga::flattenTensor(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  auto flatType =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flatType, value,
                                         getCollapseAllReassociation(0));
  return tensor::CollapseShapeOp::create(
      b, loc, flatType, value, getCollapseAllReassociation(type.getRank()));
}

Value mlir::ga::unflattenTensor(OpBuilder &b, Location loc, Value flat,
                                RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           getCollapseAllReassociation(0));
  return tensor::ExpandShapeOp::create(
      b, loc, type, flat, getCollapseAllReassociation(type.getRank()));
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
