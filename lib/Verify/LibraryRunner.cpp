//===- LibraryRunner.cpp - steps from ahead-of-time libraries -------------===//
//
// With --reference-library / --rewritten-library a step is not JIT-compiled
// from its body but taken from a shared library built by the README recipe
// (ga-lower-to-cpu{c-interface=1}, exporting `_mlir_ciface_<func>`). The step
// becomes a declaration with a C interface, so the lowered entry wrapper calls
// the library through the same descriptors.
//
//===----------------------------------------------------------------------===//

#include "ga/Verify/Runner.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <dlfcn.h>
#include <link.h>

using namespace mlir;
using namespace mlir::ga::verify;

/// Whether the library of `handle` was linked with -Bsymbolic (DF_SYMBOLIC):
/// its references to its own functions bind to them.
static bool isSymbolic(void *handle) {
  struct link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_ld)
    return false;
  for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_SYMBOLIC ||
        (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_SYMBOLIC)))
      return true;
  return false;
}

/// Opens the shared library of the `which` step and returns the address of
/// `_mlir_ciface_<func>` in it. RTLD_LOCAL because the reference and the
/// rewritten library define the same names: opened globally (as
/// ExecutionEngine's sharedLibPaths are), the second library's
/// `_mlir_ciface_f` would bind its own call of `f` to the first library's, and
/// the JIT would resolve `_mlir_ciface_f` to the first library's too. RTLD_NOW
/// so that a missing dependency (a blas=1 library linked without -lopenblas) is
/// refused here rather than crashing the step. Without -Bsymbolic the
/// library's call of `f` binds to an `f` of the global scope if there is one
/// (a step named `exp` would call libm's): refused too, though symbols that
/// dlsym cannot see (libc's compat-only `step`) slip through and crash. The
/// library stays loaded until the process ends.
llvm::Expected<void *> mlir::ga::verify::openStepLibrary(StringRef path,
                                                         StringRef func,
                                                         StringRef which) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        ("the " + which + " library '" + path + "' " + why).str());
  };
  if (!llvm::sys::fs::exists(path))
    return fail("does not exist");
  // dlopen searches the library path for a name without a slash.
  SmallString<256> absolute(path);
  if (std::error_code ec = llvm::sys::fs::make_absolute(absolute))
    return fail("cannot be located: " + ec.message());
  dlerror();
  void *handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail(llvm::Twine("cannot be loaded: ") + dlerror());
  std::string symbol = ("_mlir_ciface_" + func).str();
  void *address = dlsym(handle, symbol.c_str());
  if (!address)
    return fail("does not export " + symbol +
                ": build it from the step with "
                "--ga-lower-to-cpu=\"c-interface=1\" (which gives public "
                "functions a C interface)");
  if (void *other = dlsym(RTLD_DEFAULT, func.str().c_str());
      other && !isSymbolic(handle)) {
    Dl_info info;
    std::string owner = dladdr(other, &info) && info.dli_fname
                            ? info.dli_fname
                            : "another library";
    return fail("would call " + owner + "'s " + func + ", not its own @" +
                func + ": link it with -Wl,-Bsymbolic");
  }
  return address;
}

/// Replaces the body of `step` (called by the entry wrapper) by a declaration
/// of the function the library defines: the same tensor signature, private (a
/// declaration cannot be public) and with `llvm.emit_c_interface`.
/// ga-lower-to-cpu bufferizes it across function boundaries with identity
/// layouts as it did the library's definition, and func-to-llvm then emits a
/// `@<func>` that packs the descriptors and calls `_mlir_ciface_<func>`, the
/// library's C interface. Functions only the step called are dropped.
///
/// Nothing in the library records the signature it was built from: a library
/// built from another step (or another pipeline) is called with the wrong
/// arguments. Results whose static sizes disagree with the step are refused
/// (see checkResults); a crash is reported as one.
LogicalResult mlir::ga::verify::externalizeStep(ModuleOp module,
                                                func::FuncOp step) {
  step.eraseBody();
  step.setPrivate();
  step->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(module.getContext()));
  PassManager pm(module.getContext());
  pm.addPass(createSymbolDCEPass());
  return pm.run(module);
}
