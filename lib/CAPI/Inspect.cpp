//===- Inspect.cpp - C API: what a module's functions declare -------------===//
//
// Implements include/ga-c/Inspect.h: parse, look the function up in the
// module's symbol table, and read its type and attributes through
// FunctionOpInterface, so the answer does not depend on how IR is printed.
//
//===----------------------------------------------------------------------===//

#include "ga-c/Inspect.h"

#include "InputSession.h"

#include "ga/Pipelines/Pipelines.h"

#include "mlir/CAPI/Support.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;

/// `type` as MLIR prints it.
static std::string printType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// Passes each type of `types` to `callback`: printed, and for a ranked
/// tensor its element type and shape.
static void forEachType(TypeRange types, int isResult,
                        MlirGATypeCallback callback, void *userData) {
  for (Type type : types) {
    std::string text = printType(type);
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::string element = tensor ? printType(tensor.getElementType()) : text;
    callback(isResult, wrap(StringRef(text)), wrap(StringRef(element)),
             tensor ? tensor.getRank() : -1,
             tensor ? tensor.getShape().data() : nullptr, userData);
  }
}

MlirLogicalResult
mlirGAInspectFunction(MlirStringRef input, MlirStringRef bufferName,
                      MlirStringRef funcName, MlirGAFunctionInfo *info,
                      MlirGATypeCallback typeCallback,
                      MlirStringCallback diagnosticCallback, void *userData) {
  return ga::capi::withParsedInput(
      input, bufferName, diagnosticCallback, userData,
      [&](ga::capi::InputSession &session, ModuleOp module) -> LogicalResult {
        auto function = dyn_cast_or_null<FunctionOpInterface>(
            SymbolTable::lookupSymbolIn(module, unwrap(funcName)));
        if (!function)
          return emitError(session.getFileLocation())
                 << "no function @" << unwrap(funcName) << " in the module";

        info->numArguments = function.getNumArguments();
        info->numResults = function.getNumResults();
        info->microBatches = -1;
        if (auto n =
                function->getAttrOfType<IntegerAttr>(ga::kMicroBatchesAttrName))
          info->microBatches = n.getInt();
        if (typeCallback) {
          forEachType(function.getArgumentTypes(), /*isResult=*/0, typeCallback,
                      userData);
          forEachType(function.getResultTypes(), /*isResult=*/1, typeCallback,
                      userData);
        }
        return success();
      });
}
