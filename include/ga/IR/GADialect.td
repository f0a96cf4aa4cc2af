//===- GADialect.td - the gradient-accumulation dialect ----*- tablegen -*-===//
//
// The `ga` dialect names what the gradient-accumulation passes reason about:
// accumulation into gradient buffers and data-parallel collectives.
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GADIALECT_TD
#define GA_IR_GADIALECT_TD

include "mlir/IR/OpBase.td"

def GA_Dialect : Dialect {
  let name = "ga";
  let cppNamespace = "::mlir::ga";
  let summary = "Gradient accumulation: micro-batch loops, gradient buffers and "
                "deferred collectives";
  let description = [{
    The `ga` dialect carries the few concepts that the gradient-accumulation
    passes need and that upstream dialects do not already say:

    * `ga.accumulate` combines a micro-batch partial result into a loop-carried
      accumulator (a gradient buffer, a loss sum, a metric maximum). It is what
      `--ga-micro-batch` produces and what `--ga-fuse-accumulation` folds into
      the producer of the partial result.
    * `ga.all_reduce` is a reduction over the data-parallel group. Because it
      is linear for `sum`/`mean`, the rewrite places it after the micro-batch
      loop: once per effective batch instead of once per micro-batch.

    Function arguments that hold per-sample data carry the discardable
    attribute `ga.batch = <dim> : i64`, the dimension that indexes samples.
    `ga-verify` reads `ga.init` (`"normal"`, `"uniform"`, `"positive"`,
    `"mask"`, `"zeros"`, `"ones"`) and `ga.range = [lo, hi]` to seed inputs.
    Everything else in a training step is written in upstream dialects.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
  let hasRegionArgAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Name of the argument attribute that marks per-sample arguments.
    static constexpr ::llvm::StringLiteral getBatchAttrName() {
      return ::llvm::StringLiteral("ga.batch");
    }
    /// Names of the input-seeding attributes read by `ga-verify`.
    static constexpr ::llvm::StringLiteral getInitAttrName() {
      return ::llvm::StringLiteral("ga.init");
    }
    static constexpr ::llvm::StringLiteral getRangeAttrName() {
      return ::llvm::StringLiteral("ga.range");
    }
  }];
}

#endif // GA_IR_GADIALECT_TD
