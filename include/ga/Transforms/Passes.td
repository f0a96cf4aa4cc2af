//===- Passes.td - gradient-accumulation passes ------------*- tablegen -*-===//

#ifndef GA_TRANSFORMS_PASSES_TD
#define GA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// MarkBatchArgs
//===----------------------------------------------------------------------===//

def MarkBatchArgs : Pass<"ga-mark-batch-args", "ModuleOp"> {
  let summary = "Mark per-sample function arguments with `ga.batch`";
  let description = [{
    For input that does not carry `ga.batch` argument attributes (IR exported
    by a framework, say), this pass adds them from the command line: each
    entry of `batch-args` is an argument index, optionally followed by
    `:<dim>` for a batch dimension other than 0.

    Before (`--ga-mark-batch-args="func=step batch-args=2,3:1"`):

    ```mlir
    func.func @step(%w: tensor<4x8xf32>, %b: tensor<8xf32>,
                    %x: tensor<32x4xf32>, %y: tensor<8x32xf32>)
    ```

    After:

    ```mlir
    func.func @step(%w: tensor<4x8xf32>, %b: tensor<8xf32>,
                    %x: tensor<32x4xf32> {ga.batch = 0 : i64},
                    %y: tensor<8x32xf32> {ga.batch = 1 : i64})
    ```
  }];
  let options = [
    ListOption<"funcNames", "func", "std::string",
               "Functions to mark (default: every public function)">,
    ListOption<"batchArgs", "batch-args", "std::string",
               "Per-sample arguments as `index` or `index:dim`">
  ];
  let dependentDialects = ["ga::GADialect"];
}

//===----------------------------------------------------------------------===//
// FuseAccumulation
//===----------------------------------------------------------------------===//

def FuseAccumulation : Pass<"ga-fuse-accumulation"> {
  let summary = "Accumulate into gradient buffers inside their producers";
  let description = [{
    Folds `ga.accumulate %p into %acc` into the op that produces `%p` when
    that op is a `linalg` reduction whose init is the combiner's neutral
    element and whose result has no other use: the accumulator becomes the
    op's init, so `C = fill(0); C += A * B; acc += C` becomes `acc += A * B`.
    There is then no per-micro-batch gradient temporary and no separate add;
    after bufferization the GEMM writes into the gradient buffer in place.

    When the accumulator is wider than the partial (bf16 gradients with
    `accumulator-type=f32`), the producer is rewritten to compute in the
    accumulator's type: named contractions take the wider init directly,
    other ops are generalized and their combiner extended.

    Before:

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
    %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>)
                       outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
    %r = ga.accumulate <add> %p into %acc : tensor<4x2xf32> into tensor<4x2xf32>
    ```

    After:

    ```mlir
    %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>)
                       outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFused", "fused", "Accumulations fused into their producer">,
    Statistic<"numNotFused", "not-fused",
              "Accumulations left as a separate combine">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// ExpandAccumulate
//===----------------------------------------------------------------------===//

def ExpandAccumulate : Pass<"ga-expand-accumulate"> {
  let summary = "Lower the remaining `ga.accumulate` ops to `linalg.generic`";
  let description = [{
    Each `ga.accumulate` becomes one elementwise `linalg.generic` whose init is
    the accumulator (so it updates the buffer in place after bufferization),
    extending the partial when it is narrower. After this pass a rewritten
    step without collectives uses upstream dialects only.

    Before:

    ```mlir
    %r = ga.accumulate <maxnumf> %p into %acc : tensor<f32> into tensor<f32>
    ```

    After:

    ```mlir
    %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                         iterator_types = []}
        ins(%p : tensor<f32>) outs(%acc : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maxnumf %out, %in : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    ```
  }];
  let statistics = [
    Statistic<"numExpanded", "expanded", "ga.accumulate ops expanded">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// CleanupMicroBatchLoops
//===----------------------------------------------------------------------===//

def CleanupMicroBatchLoops : Pass<"ga-cleanup", "func::FuncOp"> {
  let summary = "Remove dead code and hoist loop-invariant code after the "
                "micro-batch rewrite";
  let description = [{
    A cheap cleanup that only does what the rewrite leaves behind, so that the
    whole `--ga-accumulate` pipeline costs less than a canonicalization of the
    same IR: it erases ops whose results became unused (the full-batch inits
    that the loop re-creates at micro-batch size, for example) and hoists
    loop-invariant side-effect-free ops out of every `scf.for`.

    Before:

    ```mlir
    %full = tensor.empty() : tensor<256x10xf32>        // dead after the rewrite
    scf.for %i = %c0 to %c4 step %c1 iter_args(...) {
      %e = tensor.empty() : tensor<64x10xf32>          // loop invariant
      ...
    }
    ```

    After:

    ```mlir
    %e = tensor.empty() : tensor<64x10xf32>
    scf.for %i = %c0 to %c4 step %c1 iter_args(...) {
      ...
    }
    ```
  }];
  let statistics = [
    Statistic<"numErased", "erased", "Dead ops erased">,
    Statistic<"numHoisted", "hoisted", "Loop-invariant ops hoisted">
  ];
}

#endif // GA_TRANSFORMS_PASSES_TD
