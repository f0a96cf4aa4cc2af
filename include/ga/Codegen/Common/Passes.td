//===- Passes.td - passes shared by the lowerings ----------*- tablegen -*-===//
//
// Steps that both --ga-lower-to-cpu and --ga-lower-to-nvvm take: preparing
// function signatures for the LLVM dialect, splitting shared fills before
// bufferization, and checking the contract of a pipeline's output.
//
//===----------------------------------------------------------------------===//

#ifndef GA_CODEGEN_COMMON_PASSES_TD
#define GA_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// PrepareFunctionsForLLVM
//===----------------------------------------------------------------------===//

def PrepareFunctionsForLLVM
    : Pass<"ga-prepare-functions-for-llvm", "ModuleOp"> {
  let summary = "Request C wrappers on public functions and drop ga.* "
                "argument attributes before lowering to LLVM";
  let description = [{
    The `ga.*` argument attributes (`ga.batch`, `ga.init`, `ga.range`) describe
    a training step at the tensor level and mean nothing below it: they are
    dropped from every function. With `c-interface=1`, every public function
    definition also gets `llvm.emit_c_interface`, so that func-to-llvm emits a
    `_mlir_ciface_<name>` wrapper taking memref descriptors by pointer (what a
    C caller, an ahead-of-time library or `ga-verify --reference-library`
    calls).

    Before (`--ga-prepare-functions-for-llvm=c-interface=1`):

    ```mlir
    func.func @step(%x: memref<8x4xf32> {ga.batch = 0 : i64}) { ... }
    ```

    After:

    ```mlir
    func.func @step(%x: memref<8x4xf32>) attributes {llvm.emit_c_interface} { ... }
    ```
  }];
  let options = [
    Option<"cInterface", "c-interface", "bool", /*default=*/"false",
           "Add llvm.emit_c_interface to every public function definition">
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// DuplicateSharedFills
//===----------------------------------------------------------------------===//

def DuplicateSharedFills : Pass<"ga-duplicate-shared-fills", "func::FuncOp"> {
  let summary = "Give every use of a fill on tensors its own fill";
  let description = [{
    One fill that several ops write into (the inits of several reductions,
    the accumulators of a micro-batch loop) must be copied once per writer by
    one-shot bufferization; a fill per use is written in place instead: a
    cheaper write, no read and no copy. Which ops count as fills: `kind`
    (`named`: `linalg.fill`; `fill-like`: also the generics that
    `linalg-morph-ops` makes of it). Where the fills go: `placement`
    (`next-to-each-user`: a copy right before every user, inside the user's
    region, and the original erased, so that a zero fill next to a matrix
    product can become beta = 0 of a BLAS call; `keep-first-copy-at-user`:
    the first use keeps the fill where it is, every other use gets a copy
    before its user). A use inside a linalg body gets its copy before that
    linalg op.

    Before:

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %a = linalg.reduce ins(%x : tensor<8x4xf32>) outs(%z : tensor<4xf32>) dimensions = [0] ...
    %b = linalg.reduce ins(%y : tensor<8x4xf32>) outs(%z : tensor<4xf32>) dimensions = [0] ...
    ```

    After (`placement=next-to-each-user`):

    ```mlir
    %z0 = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %a = linalg.reduce ins(%x : tensor<8x4xf32>) outs(%z0 : tensor<4xf32>) dimensions = [0] ...
    %z1 = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %b = linalg.reduce ins(%y : tensor<8x4xf32>) outs(%z1 : tensor<4xf32>) dimensions = [0] ...
    ```
  }];
  let options = [
    Option<"kind", "kind", "::mlir::ga::FillKind",
           /*default=*/"::mlir::ga::FillKind::Named",
           "Which ops count as fills",
           [{::llvm::cl::values(
             clEnumValN(::mlir::ga::FillKind::Named, "named",
                        "linalg.fill only"),
             clEnumValN(::mlir::ga::FillKind::FillLike, "fill-like",
                        "every fill-like linalg op (also generics)"))}]>,
    Option<"placement", "placement", "::mlir::ga::FillPlacement",
           /*default=*/"::mlir::ga::FillPlacement::NextToEachUser",
           "Where the fills go",
           [{::llvm::cl::values(
             clEnumValN(::mlir::ga::FillPlacement::NextToEachUser,
                        "next-to-each-user",
                        "a copy before every user, the original erased"),
             clEnumValN(::mlir::ga::FillPlacement::KeepFirstCopyAtUser,
                        "keep-first-copy-at-user",
                        "the first use keeps the fill, the others get a "
                        "copy before their user"))}]>
  ];
  let statistics = [
    Statistic<"numCopies", "copies", "Copies of fills made">
  ];
  let dependentDialects = ["linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// VerifyLowered
//===----------------------------------------------------------------------===//

def VerifyLowered : Pass<"ga-verify-lowered", "ModuleOp"> {
  let summary = "Check that only the ops a pipeline may leave are left";
  let description = [{
    The contract of a pipeline's output: every op in the module (other than
    the module itself) belongs to one of `allowed-dialects` or is one of
    `allowed-ops`. The first op that is not is reported at its location as
    "'<op>' was not lowered <by>" and the pass fails, so that a partial
    conversion never goes unnoticed. The pipelines add it last:
    `--ga-lower-to-cpu` with `allowed-dialects=llvm,omp`, `--ga-lower-to-nvvm`
    with `allowed-dialects=llvm allowed-ops=gpu.binary,gpu.launch_func`.

    Input (`--ga-verify-lowered=allowed-dialects=llvm`):

    ```mlir
    llvm.func @f(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32   // error: 'arith.addf' was not lowered
      llvm.return %y : f32
    }
    ```

    The IR is not changed.
  }];
  let options = [
    ListOption<"allowedDialects", "allowed-dialects", "std::string",
               "Dialects whose ops may be left">,
    ListOption<"allowedOps", "allowed-ops", "std::string",
               "Ops (by name) that may be left">,
    Option<"byWhat", "by", "std::string",
           /*default=*/"\"by the pipeline\"",
           "What should have lowered them, for the message">
  ];
}

#endif // GA_CODEGEN_COMMON_PASSES_TD
