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
// CheckTrainingStep
//===----------------------------------------------------------------------===//

def CheckTrainingStep : Pass<"ga-check-training-step", "ModuleOp"> {
  let summary = "Check that training steps can be split into micro-batches "
                "exactly";
  let description = [{
    Enforces the training-step contract (docs/TrainingStepContract.md) on every
    function selected by `func` (default: every function with a `ga.batch`
    argument) and reports every violation at its location, without changing
    the IR:

    * the per-sample arguments agree on the batch size, and `micro-batches`
      does not exceed a static batch size;
    * every op that touches per-sample values is one the batch-dependence
      analysis understands (no unknown calls, side effects or unregistered
      ops in the per-sample region);
    * no statistic reduced over the batch flows back into per-sample math
      (batch coupling, e.g. BatchNorm), unless it depends on data only,
      decided per result of a multi-result op (then it is computed exactly
      in an earlier loop), or `allow-ghost-batch` is set (then it is a
      warning);
    * samples are not mixed by indexing (slicing, padding or concatenating
      along the batch dimension; an indexing map that uses the batch loop
      twice or in a compound expression; a linalg payload that reads a
      captured per-sample value at another sample than its own).

    The batch-dependence analysis is a sparse forward data-flow analysis
    (`mlir::dataflow`, with dead-code analysis and constant propagation) over
    a lattice of batch classes (uniform, per-sample along a dimension,
    reduced, derived, data-only or parameter-dependent, unknown): region
    control flow (`scf.if`, `scf.for`, `scf.while`) is solved to a fixpoint
    through `RegionBranchOpInterface`, each result of a multi-result op gets
    its own class, and branches that never run are not checked. Whatever
    comes out unknown is refused, located at the op with the reason.

    A function that passes this check is rewritten by `--ga-micro-batch`
    without further errors. The analysis stays cached: a `--ga-micro-batch`
    that follows in the same pass manager reuses it and does not report its
    diagnostics (ghost-batch warnings) a second time. Example of a refusal:

    ```mlir
    %mean = linalg.reduce ins(%h : tensor<32x8xf32>) ... dimensions = [0]
    // error: batch coupling: per-sample computation uses a statistic reduced
    //        over the whole batch; micro-batches would see different values
    // note:  the statistic is reduced over the batch here
    %c = linalg.sub ins(%h, %mean_b : ...)
    ```
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Number of micro-batches the step will be split into">,
    ListOption<"funcNames", "func", "std::string",
               "Functions to check (default: every function with ga.batch "
               "arguments)">,
    Option<"allowGhostBatch", "allow-ghost-batch", "bool", /*default=*/"false",
           "Accept batch coupling as per-micro-batch statistics (a warning)">,
    Option<"recomputeStatistics", "recompute-statistics", "bool",
           /*default=*/"false",
           "Make batch coupling exact: compute each coupled statistic in an "
           "earlier loop over the micro-batches, recomputing the per-sample "
           "work it depends on (one more pass per statistic level)">
  ];
  let dependentDialects = ["ga::GADialect"];
}

//===----------------------------------------------------------------------===//
// MicroBatch
//===----------------------------------------------------------------------===//

def MicroBatch : Pass<"ga-micro-batch", "ModuleOp"> {
  let summary = "Rewrite a training step into a loop over micro-batches";
  let description = [{
    The heart of gradient accumulation. Using the batch-dependence analysis
    (uniform / batched(d) / reduced(kind) values), the pass splits each
    selected function into:

    1. the uniform part (independent of the batch), left before the loop;
    2. one `scf.for` over `micro-batches` micro-batches that slices every
       per-sample argument with `tensor.extract_slice`, recomputes the
       per-sample part at micro-batch size and combines every reduction over
       the batch into a loop-carried accumulator with `ga.accumulate`
       (initialised with the reduction's original init, so any init is exact);
    3. everything computed from reductions (loss normalization, gradient
       clipping, collectives, the optimizer) after the loop, unchanged.

    Exactness rules: `tensor.dim` of the batch dimension is the full batch size
    wherever it is used as a number and the micro-batch size where it shapes a
    tensor; `linalg.index` along the batch is offset by the micro-batch start;
    reductions over the batch that only depend on per-sample *data* (token
    counts of a padding mask) but feed back into per-sample math are computed
    exactly in an earlier loop ("statistics loop"); a batch size that
    `micro-batches` does not divide is split into micro-batches of sizes
    ceil(B/N) and floor(B/N) (two loops when shapes are static, one loop with
    dynamic sizes otherwise); per-sample results are assembled with
    `tensor.insert_slice`. Anything else that would not be exact is refused
    with a located error (see `--ga-check-training-step`).

    Before:

    ```mlir
    func.func @step(%w: tensor<4x2xf32>, %x: tensor<8x4xf32> {ga.batch = 0 : i64})
        -> tensor<4x2xf32> {
      %dy = ... : tensor<8x2xf32>                       // per-sample
      %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
      %dw = linalg.matmul ins(%xt, %dy : tensor<4x8xf32>, tensor<8x2xf32>)
                          outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
      %w2 = ... %w, %dw ...                             // optimizer
      return %w2 : tensor<4x2xf32>
    }
    ```

    After (`--ga-micro-batch=micro-batches=4`):

    ```mlir
    %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z) -> (tensor<4x2xf32>) {
      %off = arith.muli %i, %c2 : index
      %xs = tensor.extract_slice %x[%off, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
      ...
      %pz = linalg.fill ins(%c0 : f32) outs(%pe : tensor<4x2xf32>) -> tensor<4x2xf32>
      %p = linalg.matmul ins(%xst, %dys : tensor<4x2xf32>, tensor<2x2xf32>)
                         outs(%pz : tensor<4x2xf32>) -> tensor<4x2xf32>
      %a2 = ga.accumulate <add> %p into %a : tensor<4x2xf32> into tensor<4x2xf32>
      scf.yield %a2 : tensor<4x2xf32>
    }
    %w2 = ... %w, %acc ...
    ```
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Number of micro-batches N (>= 1)">,
    ListOption<"funcNames", "func", "std::string",
               "Functions to rewrite (default: every function with ga.batch "
               "arguments)">,
    Option<"allowGhostBatch", "allow-ghost-batch", "bool", /*default=*/"false",
           "Compute batch-coupled statistics per micro-batch (inexact; warns)">,
    Option<"recomputeStatistics", "recompute-statistics", "bool",
           /*default=*/"false",
           "Make batch coupling exact: compute each coupled statistic in an "
           "earlier loop over the micro-batches, recomputing the per-sample "
           "work it depends on (one more pass per statistic level)">,
    Option<"accumulatorType", "accumulator-type", "std::string",
           /*default=*/"\"\"",
           "Float type (f32, f64) in which narrower float reductions are "
           "accumulated; empty keeps each reduction's own type">,
    Option<"dynamicMicroBatches", "dynamic-micro-batches", "bool",
           /*default=*/"false",
           "Append an `index` argument holding N at run time (>= 1); "
           "`micro-batches` is then ignored">
  ];
  let statistics = [
    Statistic<"numFunctions", "functions", "Functions rewritten">,
    Statistic<"numLoops", "loops", "Micro-batch loops created">,
    Statistic<"numStatisticLoops", "statistics-loops",
              "Loops created for data-only statistics">,
    Statistic<"numAccumulators", "accumulators",
              "Loop-carried accumulators">,
    Statistic<"numPerSampleOps", "per-sample-ops",
              "Per-sample ops placed in a loop body">
  ];
  let dependentDialects = [
    "ga::GADialect", "scf::SCFDialect", "tensor::TensorDialect",
    "arith::ArithDialect", "linalg::LinalgDialect", "cf::ControlFlowDialect"
  ];
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
  let options = [
    Option<"requireFusion", "require-fusion", "bool", /*default=*/"false",
           "Report an error at every accumulation that stays a separate "
           "combine, with the reason (for users who rely on in-place "
           "accumulation)">
  ];
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
    loop-invariant side-effect-free ops out of every `scf.for`, except
    destination-style ops (a hoisted `linalg.fill` would be copied on every
    iteration after bufferization instead of being written in place).

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

//===----------------------------------------------------------------------===//
// LinalgToGPULoops
//===----------------------------------------------------------------------===//

def ContractionsToCublasLt
    : Pass<"ga-contractions-to-cublaslt", "ModuleOp"> {
  let summary = "Rewrite matrix products on device buffers into cuBLASLt "
                "calls, beta = 1 into accumulators";
  let description = [{
    The library stage of `--ga-lower-to-nvvm="cublas=1"`, on buffers, before
    `--ga-linalg-to-gpu-loops`. A linalg contraction with one M, one N and
    one K dimension (any operand layout that is a plain or transposed
    row-major matrix with unit inner stride), a multiply-add body, inputs of
    one type among f32, f16, bf16 and an f32 output (or one of the input
    type) becomes one call of `gaCublasLtMatmul` (lib/Runtime/CUDA/
    GACublasLt.h): a linalg contraction accumulates into its init, which is
    cuBLASLt with beta = 1, so that a gradient accumulator that the
    micro-batch rewrite fused into the product stays fused (Megatron's fused
    weight-gradient accumulation into an fp32 buffer). A zero fill of the
    output right before the product is dropped and beta = 0. Products with
    a batch dimension and other shapes are left to the generated kernels.
    `--ga-gpu-single-stream` later gives the call the step's stream as its
    first argument.

    Before:

    ```mlir
    linalg.matmul ins(%xt, %dy : memref<784x64xf32>, memref<64x1024xf32>)
                  outs(%acc : memref<784x1024xf32>)
    ```

    After:

    ```mlir
    func.call @gaCublasLtMatmul(%c0_i32, %c0_i32, %m, %n, %k, %pxt, %ldxt,
        %pdy, %lddy, %pacc, %ldacc, %c0_i32, %c0_i32, %one, %one, %null)
      : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr,
         i64, i32, i32, f32, f32, !llvm.ptr) -> ()
    ```
  }];
  let statistics = [
    Statistic<"numCalls", "calls", "gaCublasLtMatmul calls emitted">,
    Statistic<"numZeroFills", "zero-fills",
              "Zero fills folded into beta = 0">
  ];
  let dependentDialects = [
    "LLVM::LLVMDialect", "memref::MemRefDialect", "arith::ArithDialect",
    "func::FuncDialect"
  ];
}

def GPUSingleStream : Pass<"ga-gpu-single-stream", "ModuleOp"> {
  let summary = "Order all GPU work of a function on one stream, carried "
                "through loops, with host waits only where results are needed";
  let description = [{
    The stream stage of `--ga-lower-to-nvvm`, in place of upstream
    `gpu-async-region` (which starts a stream per block of launches and makes
    the host wait for it at the end of the block: once per micro-batch).
    Every synchronous `gpu.launch_func`, `gpu.alloc`, `gpu.dealloc`,
    `gpu.memcpy` and `gpu.memset` of a function becomes asynchronous and
    depends on the previous one; one `gpu.wait async` starts the chain (one
    stream, `mgpuStreamCreate`), and `scf.for` loops carry the token as an
    iteration argument, so that the host enqueues every micro-batch without
    waiting. The host waits (a call of `mgpuStreamSynchronize`, then
    `mgpuStreamDestroy`: `gpu.wait [%t]` would lower a token carried through
    a loop as an event) only
    before an op that needs the device's results: a host access to a buffer
    that a `gpu.memcpy` reads or writes (a read-back), a call of an external
    function or of a function with GPU work (a library on a stream of its
    own, e.g. NCCL), the return. Other region ops with GPU work (`scf.if`)
    are waited for before and inside, with streams of their own.

    Before:

    ```mlir
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.launch_func @k::@a blocks in (...) threads in (...) args(...)
      gpu.launch_func @k::@b blocks in (...) threads in (...) args(...)
    }
    return
    ```

    After:

    ```mlir
    %s = gpu.wait async
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@a ...
      %b = gpu.launch_func async [%a] @k::@b ...
      scf.yield %b : !gpu.async.token
    }
    func.call @mgpuStreamSynchronize(%t) : (!gpu.async.token) -> ()
    func.call @mgpuStreamDestroy(%t) : (!gpu.async.token) -> ()
    return
    ```
  }];
  let statistics = [
    Statistic<"numAsyncOps", "async-ops", "GPU ops made asynchronous">,
    Statistic<"numStreams", "streams", "Streams started (gpu.wait async)">,
    Statistic<"numSynchronizations", "synchronizations",
              "Host waits for the stream">,
    Statistic<"numLibraryCalls", "library-calls",
              "Library calls given the stream (gaCublasLtMatmul)">
  ];
  let dependentDialects = ["gpu::GPUDialect", "func::FuncDialect"];
}

def LinalgToGPULoops : Pass<"ga-linalg-to-gpu-loops", "func::FuncOp"> {
  let summary = "Lower linalg ops on buffers to `scf.parallel` loops mapped "
                "to GPU blocks and threads";
  let description = [{
    The loop-mapping stage of `--ga-lower-to-nvvm` (its output is the
    `--ga-lower-to-gpu-loops` form, which `ga-verify` runs on the CPU). Every
    linalg op and `memref.copy` on buffers becomes one `scf.parallel` over
    (block, thread) with a `#gpu.loop_dim_map` mapping, i.e. one kernel after
    `--convert-parallel-loops-to-gpu`:

    * the parallel dimensions are linearized over `grid x block-size` threads
      (a bounds check when they do not fill the grid), the dimension that
      indexes the contiguous dimension of the first output varying fastest so
      that a warp's stores are coalesced;
    * each thread computes one output element; the reduction dimensions are an
      `scf.for` nest inside the thread whose `iter_args` keep the running value
      in a register: the output is read once before the loop and written once
      after it. For a gradient accumulator (the buffer carried across
      micro-batches) this is the whole accumulation: no separate kernel, no
      extra pass over the buffer. A reduction over the samples of the
      micro-batch (a weight gradient `dW += X^T dY`) is parallel over the
      elements of `dW` and sequential over the micro-batch only;
    * a `linalg.fill` of an output buffer that the op then overwrites, with
      no other access in between, is folded into the op: it starts from the
      fill value (one kernel and one pass over the buffer fewer);
    * loads of device memory left on the host (`tensor.extract` of a 0-d
      result feeding scalar math, as in gradient clipping) are moved, with the
      pure scalar math that uses them, into every kernel that needs them. If
      the buffer may change between the load and such a kernel, a kernel of
      one thread copies the element at the load into a 0-d buffer of its own
      and the kernels read that copy. A value that host code itself needs (a
      scalar result of the step, host control flow) is read back instead:
      `memref.copy` of the 0-d buffer (of such a copy for a buffer of higher
      rank) into a `memref.alloca`, a device-to-host copy after the GPU
      lowering;
    * host stores into device buffers (`tensor.from_elements` or
      `tensor.insert` of a host scalar: a loss, a step counter) become a
      kernel of one thread (adjacent stores: one kernel).

    Discardable `ga.*` attributes of the linalg op are copied to its loop, and
    `ga.kernel` names what the loop computes (`matmul`, `generic`, ...).

    Before:

    ```mlir
    linalg.matmul ins(%xt, %dy : memref<16x6xf32>, memref<6x32xf32>)
                  outs(%acc : memref<16x32xf32>)
    ```

    After (`block-size=256`):

    ```mlir
    scf.parallel (%b, %t) = (%c0, %c0) to (%c2, %c256) step (%c1, %c1) {
      %lin = ...                          // %b * 256 + %t
      %i = arith.divui %lin, %c32 : index
      %j = arith.remui %lin, %c32 : index
      %init = memref.load %acc[%i, %j] : memref<16x32xf32>
      %sum = scf.for %k = %c0 to %c6 step %c1 iter_args(%s = %init) -> (f32) {
        %a = memref.load %xt[%i, %k] : memref<16x6xf32>
        %d = memref.load %dy[%k, %j] : memref<6x32xf32>
        %p = arith.mulf %a, %d : f32
        %n = arith.addf %s, %p : f32
        scf.yield %n : f32
      }
      memref.store %sum, %acc[%i, %j] : memref<16x32xf32>
      scf.reduce
    } {ga.kernel = "matmul", mapping = [#gpu.loop_dim_map<processor = block_x, ...>,
                                        #gpu.loop_dim_map<processor = thread_x, ...>]}
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "unsigned", /*default=*/"256",
           "Threads per block (a multiple of 32, at most 1024); smaller "
           "iteration spaces get the next multiple of 32">,
    Option<"gemmTile", "gemm-tile", "unsigned", /*default=*/"16",
           "Tile of the shared-memory contraction kernels (tile x tile "
           "threads, tile x tile blocks of the operands); 0: no tiling">,
    Option<"gemmMinReduction", "gemm-min-reduction", "unsigned",
           /*default=*/"64",
           "Contractions whose reduction is at least this long (or dynamic) "
           "are tiled through shared memory; shorter ones use one thread per "
           "output element">,
    Option<"splitReductionMin", "split-reduction-min", "unsigned",
           /*default=*/"4096",
           "Reductions at least this long into few outputs (fewer than 8192) "
           "are split over several threads per output: a kernel of partial "
           "results, then a kernel that combines them into the output; 0: "
           "never split">,
    Option<"fma", "fma", "bool", /*default=*/"false",
           "Allow fused multiply-add in the kernels' floating-point "
           "arithmetic (fastmath<contract>, like nvcc's -fmad=true): faster "
           "multiply-add chains, results no longer bitwise those of the "
           "unfused operations">
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "Mapped loops (future kernels) created">,
    Statistic<"numSunk", "sunk-host-loads",
              "Host loads of device memory moved into kernels">,
    Statistic<"numReadBacks", "read-backs",
              "0-d device values copied to the host for host code">,
    Statistic<"numSnapshots", "snapshots",
              "Device elements copied at a host load because the buffer "
              "changes before a kernel that uses the value">,
    Statistic<"numSplit", "split-reductions",
              "Reductions split into partial results and a combination">,
    Statistic<"numTiled", "tiled-contractions",
              "Contractions tiled through block-scope (shared) memory">,
    Statistic<"numFoldedFills", "folded-fills",
              "linalg.fill ops folded into the op that overwrites them">
  ];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "gpu::GPUDialect", "memref::MemRefDialect",
                           "scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// BucketGradients
//===----------------------------------------------------------------------===//

def BucketGradients : Pass<"ga-bucket-gradients", "func::FuncOp"> {
  let summary = "Coalesce the deferred gradient all-reduces into buckets, "
                "each one collective over one contiguous accumulator";
  let description = [{
    Runs after `--ga-accumulate`, which has already moved every all-reduce of
    an accumulated gradient after the micro-batch loop (one collective per
    gradient per effective step). This pass merges those collectives into
    buckets of at most `bucket-size` bytes, like PyTorch DDP's gradient
    buckets, so that a step issues one collective per bucket.

    The gradients of a bucket are not packed into a buffer after the loop:
    the loop carries ONE flat accumulator per bucket (`tensor<S x T>`, S the
    total number of elements) and every gradient of the bucket is accumulated
    in a view of it (`tensor.extract_slice` plus `tensor.expand_shape` before
    the op that updates it, `tensor.collapse_shape` plus
    `tensor.insert_slice` after). One-shot bufferization turns the views into
    `memref.subview`/`memref.expand_shape` of the flat buffer and updates them
    in place, so the collective reads and writes the accumulators themselves:
    no pack or unpack copy. After the loop, the bucket's collective reduces
    the flat tensor and each gradient is a view of its result.

    Buckets are filled and launched in the order in which the backward of a
    micro-batch produces the gradients (the position in the loop body of the
    op that last updates each accumulator): the gradients of the last layers,
    finished first, go into bucket 0. This is the reverse of the parameter
    order, as in DDP, so that a later stage can start reducing a bucket while
    the last micro-batch's backward still computes the gradients of the next
    ones. Bucket ids (`bucket` of `ga.all_reduce`, discardable `ga.bucket` of
    `shard.all_reduce`) number the collectives of a function in launch order.

    Both input forms are handled: `ga.all_reduce` and upstream
    `shard.all_reduce` (on tensors, same input and result type). Collectives
    join a bucket when they are of the same op, kind, element type (and grid
    and grid axes), reduce a result of the same `scf.for` that has no other
    use, have a static shape, and the accumulators' live ranges in the loop
    body do not overlap. Other collectives (a loss reduced after scaling, a
    data-only statistic) stay as they are, one bucket each. A gradient larger
    than `bucket-size` is a bucket of its own. A collective nested in a loop
    is an error: it would run once per micro-batch.

    Before:

    ```mlir
    %acc:2 = scf.for %i = %c0 to %c4 step %c1
        iter_args(%gw = %zw, %gb = %zb) -> (tensor<16x32xf32>, tensor<32xf32>) {
      ...
      %gb2 = linalg.reduce { arith.addf } ins(%dz : tensor<6x32xf32>)
                 outs(%gb : tensor<32xf32>) dimensions = [0]
      %gw2 = linalg.matmul ins(%xt, %dz : tensor<16x6xf32>, tensor<6x32xf32>)
                           outs(%gw : tensor<16x32xf32>) -> tensor<16x32xf32>
      scf.yield %gw2, %gb2 : tensor<16x32xf32>, tensor<32xf32>
    }
    %dw = ga.all_reduce <mean> %acc#0 : tensor<16x32xf32>
    %db = ga.all_reduce <mean> %acc#1 : tensor<32xf32>
    ```

    After:

    ```mlir
    %e = tensor.empty() : tensor<544xf32>
    %z = linalg.fill ins(%cst : f32) outs(%e : tensor<544xf32>) -> tensor<544xf32>
    %flat = scf.for %i = %c0 to %c4 step %c1 iter_args(%f = %z) -> (tensor<544xf32>) {
      ...
      %vb = tensor.extract_slice %f[0] [32] [1] : tensor<544xf32> to tensor<32xf32>
      %gb2 = linalg.reduce { arith.addf } ins(%dz : tensor<6x32xf32>)
                 outs(%vb : tensor<32xf32>) dimensions = [0]
      %f1 = tensor.insert_slice %gb2 into %f[0] [32] [1] : tensor<32xf32> into tensor<544xf32>
      %sw = tensor.extract_slice %f1[32] [512] [1] : tensor<544xf32> to tensor<512xf32>
      %vw = tensor.expand_shape %sw [[0, 1]] output_shape [16, 32]
          : tensor<512xf32> into tensor<16x32xf32>
      %gw2 = linalg.matmul ins(%xt, %dz : tensor<16x6xf32>, tensor<6x32xf32>)
                           outs(%vw : tensor<16x32xf32>) -> tensor<16x32xf32>
      %cw = tensor.collapse_shape %gw2 [[0, 1]] : tensor<16x32xf32> into tensor<512xf32>
      %f2 = tensor.insert_slice %cw into %f1[32] [512] [1] : tensor<512xf32> into tensor<544xf32>
      scf.yield %f2 : tensor<544xf32>
    }
    %r = ga.all_reduce <mean> %flat bucket 0 : tensor<544xf32>
    %db = tensor.extract_slice %r[0] [32] [1] : tensor<544xf32> to tensor<32xf32>
    %rw = tensor.extract_slice %r[32] [512] [1] : tensor<544xf32> to tensor<512xf32>
    %dw = tensor.expand_shape %rw [[0, 1]] output_shape [16, 32]
        : tensor<512xf32> into tensor<16x32xf32>
    ```
  }];
  let options = [
    Option<"bucketSize", "bucket-size", "int64_t", /*default=*/"26214400",
           "Maximum size of a bucket in bytes (default 25 MiB, PyTorch "
           "DDP's bucket_cap_mb); a larger gradient is a bucket of its own">
  ];
  let statistics = [
    Statistic<"numCollectivesBefore", "collectives-before",
              "Collectives after the micro-batch loops before bucketing">,
    Statistic<"numBuckets", "buckets",
              "Collectives per effective step after bucketing">,
    Statistic<"numCoalesced", "coalesced",
              "Gradients accumulated in a view of a shared bucket buffer">,
    Statistic<"numBytes", "bytes",
              "Bytes reduced per effective step (sum over buckets)">
  ];
  let dependentDialects = ["ga::GADialect", "scf::SCFDialect",
                           "tensor::TensorDialect", "linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// CooperativeLoopsToGPU
//===----------------------------------------------------------------------===//

def CooperativeLoopsToGPU : Pass<"ga-cooperative-loops-to-gpu"> {
  let summary = "Turn block-cooperative mapped loops into `gpu.launch` with "
                "workgroup memory and barriers";
  let description = [{
    A cooperative loop is an `scf.parallel` mapped to GPU blocks and marked
    `ga.cooperative` (`--ga-linalg-to-gpu-loops` makes one for each tiled
    contraction). Its body is what the threads of one block do together:
    allocate block-scope buffers (`memref.alloc` of static shape), then run
    thread-level `scf.parallel` loops (mapped to `thread_x/y/z`, constant
    extents) one after the other, possibly inside uniform `scf.for` loops;
    every thread-level loop sees what the previous ones wrote. Executed
    sequentially, e.g. on the CPU, that is ordinary loop semantics. This pass
    makes each such loop one `gpu.launch`: the block-scope buffers become
    workgroup attributions (shared memory), each thread-level loop becomes
    its body executed by every thread (bounds-checked if its extent is smaller
    than the block), followed by a `gpu.barrier`. `ga.*` attributes move to
    the launch. Run it before `--convert-parallel-loops-to-gpu`, which only
    maps loop nests with side effects in the innermost loop.

    Before:

    ```mlir
    scf.parallel (%bi, %bj) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
      %tile = memref.alloc() : memref<16x17xf32>
      scf.for %k0 = %c0 to %k step %c16 {
        scf.parallel (%ty, %tx) = (%c0, %c0) to (%c16, %c16) step (%c1, %c1) {
          ...  memref.store %a, %tile[%ty, %tx]
        } {mapping = [#gpu.loop_dim_map<processor = thread_y, ...>, ...]}
        scf.parallel (%ty, %tx) = (%c0, %c0) to (%c16, %c16) step (%c1, %c1) {
          ...  memref.load %tile[%ty, %kk]
        } {mapping = ...}
      }
    } {ga.cooperative, mapping = [#gpu.loop_dim_map<processor = block_y, ...>, ...]}
    ```

    After:

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %m, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c16, %sz = %c1)
               workgroup(%tile : memref<16x17xf32, #gpu.address_space<workgroup>>) {
      scf.for %k0 = %c0 to %k step %c16 {
        ...  memref.store %a, %tile[%ty, %tx]
        gpu.barrier
        ...  memref.load %tile[%ty, %kk]
        gpu.barrier
      }
      gpu.terminator
    }
    ```
  }];
  let statistics = [
    Statistic<"numConverted", "converted", "Cooperative loops converted">
  ];
  let dependentDialects = ["arith::ArithDialect", "gpu::GPUDialect",
                           "memref::MemRefDialect", "scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// ChooseMicroBatches (implemented in lib/Pipelines: it runs the rewrite and
// the CPU bufferization on copies of the step)
//===----------------------------------------------------------------------===//

def ChooseMicroBatches : Pass<"ga-choose-micro-batches", "ModuleOp"> {
  let summary = "Choose the number of micro-batches from a micro-batch size "
                "or a memory budget";
  let description = [{
    Resolves the configuration in the words of Megatron and DeepSpeed into the
    number of micro-batches N of each training step (every function with
    `ga.batch` arguments, or those named by `func`), and records it on the
    function as the discardable attribute `ga.micro_batches`:

    * `micro-batch-size=M`: N = ceil(B / M) for the step's batch size B
      (M >= B gives N = 1; a remainder is handled as by `--ga-micro-batch`).
    * `max-memory=<bytes>` (a number of bytes, optionally followed by `KiB`,
      `MiB` or `GiB`): the smallest N whose static peak fits the budget. The
      peak of a candidate is the total peak of `--ga-memory-report`: a copy
      of the module is rewritten by `--ga-accumulate` with N micro-batches and
      bufferized as `--ga-lower-to-cpu` (default options) bufferizes it, and
      the memory-usage analysis counts its buffers. Candidates run from
      N = 1 up to B; N with the same micro-batch sizes (ceil(B/N),
      floor(B/N)) have the same buffers and are measured once. When no N
      fits, the error at the function names the smallest peak and its N.

    Both need a batch size known at compile time: a dynamic batch is refused
    at the function (use `dynamic-micro-batches=true` and pass N at run
    time). The options contradict each other (an error) when `micro-batches`,
    `micro-batch-size`, `max-memory` or `dynamic-micro-batches` are given
    together. With `apply`, the pass then runs the whole `--ga-accumulate`
    rewrite of each step with its N and drops the attribute: this is how
    `--ga-accumulate="micro-batch-size=M"` and `"max-memory=..."` work.

    Before (`--ga-choose-micro-batches="micro-batch-size=5"`):

    ```mlir
    func.func @step(%w: tensor<8xf32>, %x: tensor<12x8xf32> {ga.batch = 0 : i64}) ...
    ```

    After:

    ```mlir
    func.func @step(%w: tensor<8xf32>, %x: tensor<12x8xf32> {ga.batch = 0 : i64})
        ... attributes {ga.micro_batches = 3 : i64}
    ```
  }];
  let options = [
    Option<"microBatchSize", "micro-batch-size", "int64_t", /*default=*/"0",
           "Samples per micro-batch M (>= 1): N = ceil(B / M)">,
    Option<"maxMemory", "max-memory", "std::string", /*default=*/"\"\"",
           "Memory budget (bytes, or with KiB/MiB/GiB): the smallest N whose "
           "static peak fits">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"0",
           "A number of micro-batches given as well (0: none); only checked "
           "for contradiction">,
    Option<"dynamicMicroBatches", "dynamic-micro-batches", "bool",
           /*default=*/"false",
           "Whether N is a run-time argument; only checked for "
           "contradiction">,
    ListOption<"funcNames", "func", "std::string",
               "Functions to configure (default: every function with "
               "ga.batch arguments)">,
    Option<"accumulateOptions", "accumulate", "std::string",
           /*default=*/"\"\"",
           "Further --ga-accumulate options for the rewrite of the "
           "candidates and for `apply` (e.g. `recompute-statistics=1`)">,
    Option<"apply", "apply", "bool", /*default=*/"false",
           "Run the --ga-accumulate rewrite with the chosen N">
  ];
  let statistics = [
    Statistic<"numCandidates", "candidates",
              "Candidate micro-batch counts rewritten and measured">
  ];
}

//===----------------------------------------------------------------------===//
// MemoryReport (implemented in lib/Pipelines, like ChooseMicroBatches)
//===----------------------------------------------------------------------===//

def MemoryReport : Pass<"ga-memory-report", "ModuleOp"> {
  let summary = "Report the static memory use of training steps";
  let description = [{
    Prints, for each training step, how many heap bytes its buffers take once
    bufferized as `--ga-lower-to-cpu` bufferizes it (one-shot bufferization
    with in-place accumulators, buffer-loop-hoisting, deallocation):
    parameters, optimizer state, per-sample inputs, gradient accumulators,
    returned buffers, the peak of the temporaries live at the same time
    (activations, their gradients, scratch), and the total peak (every
    argument plus the peak of the step's own allocations). Bytes are what the
    lowered code asks `malloc` for: elements plus the allocation's alignment.
    See docs/Memory.md for how each class is defined and how the figures
    compare with the heap measured while the compiled step runs.

    Without `sweep`, each function is reported as it is (a step already
    rewritten, or the full-batch step). With `sweep=1,2,4,8`, each step with
    `ga.batch` arguments is rewritten by `--ga-accumulate` with each N (and
    the options in `accumulate`) on a copy, and reported per N. The module is
    not changed.

    Example (`--ga-memory-report="sweep=1,4"` on
    test/Integration/Inputs/steps/linreg_mean.mlir, B = 12; bytes):

    ```
    function     N  micro  parameters  optimizer_state  inputs  accumulators  results  temporaries  static  total_peak
    @train_step  1     12          36                0     432             0      232          276       0         976
    @train_step  4      3          36                0     432           232      164           76       0         940
    ```
  }];
  let options = [
    ListOption<"sweep", "sweep", "int64_t",
               "Numbers of micro-batches to report (default: the functions "
               "as they are)">,
    Option<"format", "format", "std::string", /*default=*/"\"table\"",
           "table or json">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "File to write the report to (-: standard output)">,
    ListOption<"funcNames", "func", "std::string",
               "Functions to report (default: every function with ga.batch "
               "arguments, or every function definition without sweep)">,
    Option<"accumulateOptions", "accumulate", "std::string",
           /*default=*/"\"\"",
           "Further --ga-accumulate options for the sweep (e.g. "
           "`recompute-statistics=1`)">,
    Option<"cpuOptions", "cpu", "std::string", /*default=*/"\"\"",
           "--ga-lower-to-cpu options whose bufferization is measured (e.g. "
           "`blas=1 out-params=1`)">
  ];
}

#endif // GA_TRANSFORMS_PASSES_TD
