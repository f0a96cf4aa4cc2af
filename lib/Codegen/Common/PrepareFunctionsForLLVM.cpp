//===- PrepareFunctionsForLLVM.cpp - signatures for the LLVM dialect ------===//
//
// --ga-prepare-functions-for-llvm: drops the tensor-level `ga.*` argument
// attributes and, with c-interface=1, requests C wrappers on public functions.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::ga {
#define GEN_PASS_DEF_PREPAREFUNCTIONSFORLLVM
#include "ga/Codegen/Common/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

struct PrepareFunctionsForLLVMPass
    : public ga::impl::PrepareFunctionsForLLVMBase<
          PrepareFunctionsForLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (cInterface && fn.isPublic() && !fn.isExternal())
        fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&getContext()));
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
        SmallVector<StringAttr> dropped;
        if (DictionaryAttr attrs = fn.getArgAttrDict(i))
          for (NamedAttribute attr : attrs)
            if (attr.getName().strref().starts_with("ga."))
              dropped.push_back(attr.getName());
        for (StringAttr name : dropped)
          fn.removeArgAttr(i, name);
      }
    }
  }
};

} // namespace
