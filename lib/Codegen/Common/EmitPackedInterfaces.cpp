//===- EmitPackedInterfaces.cpp - one-array entry points ------------------===//
//
// --ga-emit-packed-interfaces: for every function with a C wrapper
// `_mlir_ciface_<name>`, a packed entry point `_ga_packed_<name>(void **)`
// that reads the wrapper's parameters from one array (upstream's
// ExecutionEngine convention, emitted ahead of time).
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::ga {
#define GEN_PASS_DEF_EMITPACKEDINTERFACES
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

constexpr llvm::StringLiteral kWrapperPrefix = "_mlir_ciface_";
constexpr llvm::StringLiteral kPackedPrefix = "_ga_packed_";

/// The address that slot `index` of `args` (a `void **`) holds.
static Value loadSlot(OpBuilder &b, Location loc, Value args, int64_t index) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, args,
                                   ArrayRef<LLVM::GEPArg>{index});
  return LLVM::LoadOp::create(b, loc, ptr, slot);
}

/// Builds `@<packed>(void **args)` calling `wrapper` with its parameters read
/// through the slots of `args`, and storing its result (if any) at the
/// address of the slot after them.
static void buildPackedEntry(OpBuilder &b, LLVM::LLVMFuncOp wrapper,
                             StringRef packed) {
  Location loc = wrapper.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
  auto entry = LLVM::LLVMFuncOp::create(b, loc, packed, type);
  Block *body = entry.addEntryBlock(b);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  Value args = body->getArgument(0);
  LLVM::LLVMFunctionType signature = wrapper.getFunctionType();
  SmallVector<Value> operands;
  for (auto [i, paramType] : llvm::enumerate(signature.getParams()))
    operands.push_back(LLVM::LoadOp::create(
        b, loc, paramType, loadSlot(b, loc, args, static_cast<int64_t>(i))));
  auto call = LLVM::CallOp::create(b, loc, wrapper, operands);
  if (!isa<LLVM::LLVMVoidType>(signature.getReturnType()))
    LLVM::StoreOp::create(
        b, loc, call.getResult(),
        loadSlot(b, loc, args, static_cast<int64_t>(signature.getNumParams())));
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

struct EmitPackedInterfacesPass
    : public ga::impl::EmitPackedInterfacesBase<EmitPackedInterfacesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    StringRef mark = LLVM::LLVMDialect::getEmitCWrapperAttrName();
    // The functions whose C interface was asked for, less the wrappers
    // themselves (func-to-llvm copies the mark onto them).
    SmallVector<LLVM::LLVMFuncOp> marked;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!fn->hasAttr(mark) || fn.isExternal())
        continue;
      StringRef name = fn.getName();
      if (name.starts_with(kWrapperPrefix) &&
          symbols.lookup(name.drop_front(kWrapperPrefix.size())))
        continue;
      marked.push_back(fn);
    }
    OpBuilder b(&getContext());
    for (LLVM::LLVMFuncOp fn : marked) {
      std::string wrapperName = (kWrapperPrefix + fn.getName()).str();
      std::string packedName = (kPackedPrefix + fn.getName()).str();
      auto wrapper = symbols.lookup<LLVM::LLVMFuncOp>(wrapperName);
      if (!wrapper || wrapper.isExternal()) {
        fn.emitError() << "'" << fn.getName() << "' asks for a C interface ("
                       << mark << ") but the module defines no @" << wrapperName
                       << ": run --ga-emit-packed-interfaces after "
                          "--convert-func-to-llvm";
        return signalPassFailure();
      }
      if (wrapper.isVarArg()) {
        wrapper.emitError() << "@" << wrapperName
                            << " is variadic: a packed entry point needs a "
                               "fixed list of parameters";
        return signalPassFailure();
      }
      if (Operation *taken = symbols.lookup(packedName)) {
        taken->emitError()
            << "the symbol @" << packedName
            << " exists already: it is the name of the packed entry point of @"
            << fn.getName();
        return signalPassFailure();
      }
      b.setInsertionPointAfter(wrapper);
      buildPackedEntry(b, wrapper, packedName);
      ++numEmitted;
    }
  }
};

} // namespace
