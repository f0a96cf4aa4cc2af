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

    Discardable attributes of the dialect, each verified where it is attached
    (argument attributes by the dialect's verifier, at parse time):

    * `ga.batch = <dim> : i64` on a function argument that holds per-sample
      data: the dimension that indexes samples (ranked tensor or memref of
      rank >= 1, `dim` in range). What the micro-batch rewrite slices.
    * `ga.init = "normal" | "uniform" | "positive" | "mask" | "zeros" |
      "ones"` and `ga.range = [lo, hi]` (two numbers, lo < hi) on a function
      argument: the distribution of the inputs that `ga-verify` (and
      `ga_mlir.verify`) draws for it. They are part of the training-step
      contract, not of one tool: a step is written once with its domain
      (labels in [0, classes), positive variances), and a typo is an error at
      parse time in every tool rather than a silently different input
      distribution (see docs/Rationale.md). No pass reads them;
      `--ga-prepare-functions-for-llvm` drops every `ga.*` argument attribute.
    * `ga.cooperative` (a unit attribute) on an `scf.parallel` mapped to GPU
      blocks: its body is one block of threads that cooperates through
      workgroup memory and barriers. Made by `--ga-linalg-to-gpu-loops` for
      tiled contractions, consumed by `--ga-cooperative-loops-to-gpu`.
    * `ga.kernel = "<what>"` on an `scf.parallel` mapped to the GPU (later its
      `gpu.launch`): what the kernel computes (`matmul`, `generic`, `store`,
      ...). Set by `--ga-linalg-to-gpu-loops`; `--ga-place-buffers-on-device`
      names the outlined kernel after it.
    * `ga.accumulates` (a unit attribute) on a linalg op, and after it on its
      mapped loop, launch or library call: the op updates an accumulator
      carried by a micro-batch loop (`--ga-mark-accumulating-ops`); kernel
      names end in `_acc`.

    Everything else in a training step is written in upstream dialects.
  }];
  // The library ops take and return `!gpu.async.token`s and the CUDA graph
  // ops an `!llvm.ptr` handle: their parsers build those types.
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let hasRegionArgAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Name of the argument attribute that marks per-sample arguments.
    static constexpr ::llvm::StringLiteral getBatchAttrName() {
      return ::llvm::StringLiteral("ga.batch");
    }
    /// Names of the input-domain attributes of a step's arguments (read by
    /// ga-verify's input generator, lib/Verify/Inputs.cpp).
    static constexpr ::llvm::StringLiteral getInitAttrName() {
      return ::llvm::StringLiteral("ga.init");
    }
    static constexpr ::llvm::StringLiteral getRangeAttrName() {
      return ::llvm::StringLiteral("ga.range");
    }
    /// Name of the argument attribute that declares the memory report's
    /// class of an argument ("parameters", "optimizer_state" or "inputs"),
    /// where the caller knows it (the PyTorch frontend's steps); without it
    /// the report infers the class.
    static constexpr ::llvm::StringLiteral getRoleAttrName() {
      return ::llvm::StringLiteral("ga.role");
    }
    /// Name of the unit attribute on an `scf.parallel` over GPU blocks whose
    /// body cooperates through workgroup memory and barriers.
    static constexpr ::llvm::StringLiteral getCooperativeAttrName() {
      return ::llvm::StringLiteral("ga.cooperative");
    }
    /// Name of the string attribute that says what a mapped loop (kernel)
    /// computes.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("ga.kernel");
    }
    /// Name of the unit attribute on an op (a mapped loop, a kernel, a
    /// library call) that updates a micro-batch loop's accumulator.
    static constexpr ::llvm::StringLiteral getAccumulatesAttrName() {
      return ::llvm::StringLiteral("ga.accumulates");
    }
  }];
}

#endif // GA_IR_GADIALECT_TD
