//===- WrapTensorBoundary.cpp - tensor-typed wrappers of mapped steps -----===//
//
// --ga-wrap-tensor-boundary: for ga-verify, which runs tensor-level steps,
// every public function with memrefs in its signature keeps its tensor
// signature through a wrapper that calls the bufferized, mapped body.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::ga {
#define GEN_PASS_DEF_WRAPTENSORBOUNDARY
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

/// The tensor type of the memref type `t` (same shape and element type);
/// other types unchanged.
static Type toTensor(Type t) {
  if (auto m = dyn_cast<MemRefType>(t))
    return RankedTensorType::get(m.getShape(), m.getElementType());
  return t;
}

namespace {
struct WrapTensorBoundaryPass
    : public ga::impl::WrapTensorBoundaryBase<WrapTensorBoundaryPass> {
  void runOnOperation() override;
  LogicalResult wrap(func::FuncOp fn, SymbolTable &symbols);
};
} // namespace

LogicalResult WrapTensorBoundaryPass::wrap(func::FuncOp fn,
                                           SymbolTable &symbols) {
  FunctionType type = fn.getFunctionType();
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults()))
    if (auto m = dyn_cast<MemRefType>(t); m && !m.getLayout().isIdentity())
      return fn.emitError() << "tensor-boundary needs identity layouts at the "
                               "function boundary, got "
                            << m;
  std::string name = fn.getSymName().str();
  std::string inner = name + "__gpu_loops";
  if (symbols.lookup(inner))
    return fn.emitError() << "cannot rename the function to '" << inner
                          << "': the symbol exists";
  SmallVector<Type> ins = llvm::map_to_vector(type.getInputs(), toTensor);
  SmallVector<Type> outs = llvm::map_to_vector(type.getResults(), toTensor);
  OpBuilder b(fn);
  Location loc = fn.getLoc();
  auto wrapper =
      func::FuncOp::create(b, loc, name, b.getFunctionType(ins, outs));
  if (ArrayAttr argAttrs = fn.getAllArgAttrs())
    wrapper.setAllArgAttrs(argAttrs);
  if (failed(symbols.rename(fn, inner)))
    return failure();
  fn.setPrivate();
  symbols.insert(wrapper);
  Block *entry = wrapper.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> args;
  for (auto [arg, t] : llvm::zip(entry->getArguments(), type.getInputs()))
    args.push_back(
        isa<MemRefType>(t)
            ? bufferization::ToBufferOp::create(b, loc, t, arg).getResult()
            : Value(arg));
  auto call = func::CallOp::create(b, loc, fn, args);
  SmallVector<Value> results;
  for (auto [r, t] : llvm::zip(call.getResults(), outs))
    results.push_back(isa<MemRefType>(r.getType())
                          ? bufferization::ToTensorOp::create(
                                b, loc, t, r, /*restrict=*/b.getUnitAttr(),
                                /*writable=*/b.getUnitAttr())
                                .getResult()
                          : Value(r));
  func::ReturnOp::create(b, loc, results);
  ++numWrapped;
  return success();
}

void WrapTensorBoundaryPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  for (func::FuncOp fn : funcs) {
    if (!fn.isPublic() || fn.isExternal())
      continue;
    FunctionType type = fn.getFunctionType();
    auto hasMemRef = [](TypeRange types) {
      return llvm::any_of(types, llvm::IsaPred<MemRefType>);
    };
    if (!hasMemRef(type.getInputs()) && !hasMemRef(type.getResults()))
      continue;
    if (failed(wrap(fn, symbols)))
      return signalPassFailure();
  }
}
