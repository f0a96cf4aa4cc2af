//===- GpuObjects.cpp - C API: the objects of gpu.binary ops --------------===//
//
// Implements include/ga-c/GpuObjects.h: parse, walk the gpu.binary ops, hand
// each `#gpu.object` to the caller and rebuild the ones it replaces as
// fatbins, so that the caller never reads or edits printed IR.
//
//===----------------------------------------------------------------------===//

#include "ga-c/GpuObjects.h"

#include "InputSession.h"

#include "mlir/CAPI/Support.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <string>

using namespace mlir;

/// `object` and the caller's replacement: the object itself, or a fatbin
/// object with its target, properties and kernels; null when the callback
/// failed (reported at `binary`).
static gpu::ObjectAttr rewriteObject(gpu::BinaryOp binary,
                                     gpu::ObjectAttr object,
                                     MlirGAGpuObjectCallback callback,
                                     void *userData, intptr_t &replaced) {
  std::string target;
  llvm::raw_string_ostream os(target);
  object.getTarget().print(os);
  StringRef format = gpu::stringifyCompilationTarget(object.getFormat());
  MlirGAGpuObject view = {wrap(binary.getSymName()), wrap(StringRef(target)),
                          wrap(format), wrap(object.getObject().getValue())};
  MlirStringRef fatbin = {nullptr, 0};
  if (mlirLogicalResultIsFailure(callback(&view, &fatbin, userData))) {
    binary.emitError() << "the caller could not replace an object (" << format
                       << " for " << target << ")";
    return nullptr;
  }
  if (!fatbin.length)
    return object;
  ++replaced;
  MLIRContext *ctx = binary.getContext();
  return gpu::ObjectAttr::get(ctx, object.getTarget(),
                              gpu::CompilationTarget::Fatbin,
                              StringAttr::get(ctx, unwrap(fatbin)),
                              object.getProperties(), object.getKernels());
}

MlirLogicalResult
mlirGARewriteGpuObjects(MlirStringRef input, MlirStringRef bufferName,
                        MlirGAGpuObjectCallback objectCallback,
                        MlirStringCallback outputCallback,
                        MlirStringCallback diagnosticCallback, void *userData,
                        intptr_t *numObjects) {
  return ga::capi::withParsedInput(
      input, bufferName, diagnosticCallback, userData,
      [&](ga::capi::InputSession &session, ModuleOp module) -> LogicalResult {
        intptr_t replaced = 0;
        WalkResult walk = module->walk([&](gpu::BinaryOp binary) {
          SmallVector<Attribute> objects;
          for (Attribute attr : binary.getObjects()) {
            gpu::ObjectAttr rewritten =
                rewriteObject(binary, cast<gpu::ObjectAttr>(attr),
                              objectCallback, userData, replaced);
            if (!rewritten)
              return WalkResult::interrupt();
            objects.push_back(rewritten);
          }
          binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
          return WalkResult::advance();
        });
        if (walk.wasInterrupted())
          return failure();
        if (numObjects)
          *numObjects = replaced;
        session.print(module, outputCallback);
        return success();
      });
}
