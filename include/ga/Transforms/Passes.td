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
// CheckConstantIndices
//===----------------------------------------------------------------------===//

def CheckConstantIndices : Pass<"ga-check-constant-indices"> {
  let summary = "Refuse constant dimension indices outside the rank they "
                "index, and casts whose shapes disagree";
  let description = [{
    A `tensor.dim` or `memref.dim` whose index is a constant outside
    `[0, rank)` of its ranked source is valid IR (the verifiers leave it
    alone, since folding can create it) whose result is undefined at run
    time. The ga pipelines (`--ga-accumulate`, `--ga-lower-to-cpu`,
    `--ga-lower-to-gpu-loops`, `--ga-lower-to-nvvm`, `--ga-lower-to-cpu-mpi`)
    run this check first: each such op is an error at its location and the
    pipeline stops, instead of handing it to passes that index a shape with
    it (upstream canonicalization patterns crash on `memref.dim` with index
    -1 once the GPU dialects are loaded). The IR is not changed.

    Input:

    ```mlir
    %c = arith.constant -1 : index
    %d = tensor.dim %x, %c : tensor<8x3xf32>
    ```

    Output: `error: 'tensor.dim' op dimension index -1 is out of range for a
    source of rank 2 (undefined at run time)`.

    Likewise a `tensor.cast` / `memref.cast` whose static result shape
    contradicts the static shape its chain of casts starts from (each cast
    verifies alone; canonicalization folds the chain into ops that then
    fail verification far from the cause):

    ```mlir
    %a = tensor.cast %x : tensor<8x8xf32> to tensor<?x?xf32>
    %b = tensor.cast %a : tensor<?x?xf32> to tensor<8x1xf32>
    ```

    Output: `error: 'tensor.cast' op casts 'tensor<8x8xf32>' to
    'tensor<8x1xf32>': dimension 1 is 8, not 1 (the shapes disagree;
    undefined at run time)`.
  }];
  let statistics = [
    Statistic<"numChecked", "checked-dims",
              "Number of tensor.dim / memref.dim ops checked">,
    Statistic<"numCasts", "checked-casts",
              "Number of tensor.cast / memref.cast ops checked">
  ];
}

//===----------------------------------------------------------------------===//
// FoldIotaOperands
//===----------------------------------------------------------------------===//

def FoldIotaOperands : Pass<"ga-fold-iota-operands"> {
  let summary = "Read constant index tensors of linalg.generic ops that "
                "count along their loops as the loop indices";
  let description = [{
    torch-mlir lowers a gather whose indices are constants (a strided
    slice, the backward of a write into a slice, `x[..., 0::2]`, or a list
    index `x[:, [2]]`) to a `linalg.generic` whose inputs are integer
    tensors, constants or iotas (a generic yielding its own `linalg.index`,
    possibly through `tensor.expand_shape`), and whose payload extracts
    from the source at those values. When such an
    operand is `c0 + sum_j c_j * d_j` over the loops `d_j` that index it,
    with every `c >= 0`, its payload argument is replaced by that
    expression of `linalg.index` values and the operand dropped:
    the gather then says which loop it reads at, which the batch analysis
    needs to see a read at the sample's own position. Constants that do not
    fit, and those with a negative coefficient (a reversal or a wrap-around,
    which read other samples), are left alone. A generic whose only input
    was such a count (a count broadcast or repeated) is an iota once that
    input is dropped, and its own users are folded in turn: the pass runs to
    a fixpoint, so running it again changes nothing (the memory planner
    runs it before the rewrite that runs it again, and must measure the
    step the library is built from).

    Before:

    ```mlir
    %i = arith.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>
    %r = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel", "parallel"]}
        ins(%i : tensor<2x2xi64>) outs(%e : tensor<2x2xf32>) {
    ^bb0(%in: i64, %out: f32):
      %k = arith.index_cast %in : i64 to index
      %v = tensor.extract %x[%k] : tensor<4xf32>
      linalg.yield %v : f32
    } -> tensor<2x2xf32>
    ```

    After (`%in` is `2 * d0 + d1`):

    ```mlir
    %r = linalg.generic {indexing_maps = [#id],
                         iterator_types = ["parallel", "parallel"]}
        outs(%e : tensor<2x2xf32>) {
    ^bb0(%out: f32):
      %0 = linalg.index 0 : index
      %1 = linalg.index 1 : index
      ...
      %in = arith.index_cast %sum : index to i64
      ...
    } -> tensor<2x2xf32>
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numFolded", "folded-operands",
              "Constant operands read as loop indices">
  ];
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
           "earlier loop over the micro-batches (one pass per statistic "
           "level; per-sample work that reads an earlier statistic is "
           "stored at full batch size for later loops, not recomputed)">
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
    exactly in an earlier loop ("statistics loop"), and so are statistics
    that depend on the parameters only through integer values (counts of
    top-k choices, as a mixture-of-experts load-balancing loss takes them):
    they are piecewise constant in the parameters, no gradient flows through
    them, and their loop is forward-only; a batch size that
    `micro-batches` does not divide is split into micro-batches of sizes
    ceil(B/N) and floor(B/N) (two loops when shapes are static, one loop with
    dynamic sizes otherwise); per-sample results are assembled with
    `tensor.insert_slice`. Anything else that would not be exact is refused
    with a located error (see `--ga-check-training-step`).

    With `recompute-statistics`, statistics that depend on the parameters
    (BatchNorm's mean and variance, and the sums of its backward) are
    computed exactly too, one loop per level of such statistics: the loop of
    level k reads the final statistics of levels < k. A per-sample value
    that reads such a statistic is computed once, in the first loop that
    needs it, and stored at full batch size (`tensor.insert_slice` into a
    loop-carried tensor) for the later loops that read it, so that every
    loop does only its own level's work and the cost of the step does not
    grow with the number of levels (the price: those values' full-batch
    memory). Per-sample work on the inputs alone is recomputed.

    Data parallel: a function with the unit attribute `ga.data_parallel`
    is the step on the GLOBAL batch, the concatenation of the ranks' shards.
    It gets two more `index` arguments, this rank's first and one-past-last
    sample; its loops run N micro-batches of run-time sizes over those
    samples only (offsets, and `linalg.index` along the batch, stay global;
    the batch arguments are read at those rows only), and every reduction
    over the batch is combined across ranks by a `ga.all_reduce` (sum, max
    or min, as its combiner) right after its loop: the data-only statistics
    after the statistics loop, before the main loop that needs them. The
    attribute is removed. A per-sample result of the step and a reduction
    that no collective combines (a product) are refused, located
    (docs/Distributed.md).

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
           "earlier loop over the micro-batches (one pass per statistic "
           "level; per-sample work that reads an earlier statistic is "
           "stored at full batch size for later loops, not recomputed)">,
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
              "Per-sample ops placed in a loop body">,
    Statistic<"numStoredValues", "stored-values",
              "Per-sample values stored by one loop for later loops">
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
// ShardOptimizer
//===----------------------------------------------------------------------===//

def ShardOptimizer : Pass<"ga-shard-optimizer", "ModuleOp"> {
  let summary = "ZeRO-1: each rank updates its rows of the parameters and "
                "holds only its rows of the optimizer state";
  let description = [{
    Runs on a data-parallel step after `--ga-accumulate` (gradients reduced
    by `ga.all_reduce` after the micro-batch loop), compiled for rank `rank`
    of `world`. Rank r owns rows [r D / world, (r + 1) D / world) of every
    parameter of dimension 0 of size D (`ga.reduce_scatter`'s split).

    * The results `params` (new parameters) become `ga.all_gather` of this
      rank's rows; the results `state-results` (new optimizer states) and
      their arguments `state-args` become tensors of this rank's rows.
    * Restriction to the rows follows what ops declare: a `linalg.generic`
      whose result row dimension is a parallel loop is rebuilt on the rows
      of the operands that loop indexes (through their own producers);
      operands that do not depend on it (0-d hyper-parameters, the global
      norm) are read whole. `linalg.fill` and `tensor.empty` are rebuilt
      at the rows' shape; anything else is read whole and sliced.
    * A `ga.all_reduce` whose every reader takes this rank's rows becomes a
      `ga.reduce_scatter` (the gradient of an elementwise update); one read
      in full (clipping's global norm) stays an all-reduce.

    The result is exactly the unsharded step's on every rank: the same
    arithmetic on each element, the rows exchanged afterwards.

    Before (rank 1 of 2, SGD with momentum):

    ```mlir
    func.func @train_step(%w: tensor<4x8xf32>, %m: tensor<4x8xf32>, ...)
        -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) {
      %r:2 = scf.for ...
      %g = ga.all_reduce <sum> %r#0 : tensor<4x8xf32>
      %m2 = linalg.generic ... ins(%g, %m) ...      // momentum
      %w2 = linalg.generic ... ins(%w, %m2) ...     // update
      return %w2, %m2, %loss
    }
    ```

    After (`params=0 state-results=1 state-args=1 rank=1 world=2`):

    ```mlir
    func.func @train_step(%w: tensor<4x8xf32>, %m: tensor<2x8xf32>, ...)
        -> (tensor<4x8xf32>, tensor<2x8xf32>, tensor<f32>) {
      %r:2 = scf.for ...
      %g = ga.reduce_scatter <sum> %r#0 shard 1 of 2
          : tensor<4x8xf32> -> tensor<2x8xf32>
      %m2 = linalg.generic ... ins(%g, %m) ...      // rows [2, 4)
      %w1 = tensor.extract_slice %w[2, 0] [2, 8] [1, 1]
      %w2 = linalg.generic ... ins(%w1, %m2) ...
      %wa = ga.all_gather %w2 shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
      return %wa, %m2, %loss
    }
    ```

    Refused with an error on the op: a state argument still read in full
    after the restriction (an optimizer whose state is not updated row by
    row), a parameter or state without static shape or of rank 0 (pass
    only those of rank >= 1), mismatched state types, out-of-range indices.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"train_step\"",
           "The step to shard">,
    Option<"rank", "rank", "int64_t", /*default=*/"0", "This rank">,
    Option<"world", "world", "int64_t", /*default=*/"1",
           "Ranks of the data-parallel group">,
    ListOption<"params", "params", "int64_t",
               "Result indices of the new parameters (all-gathered)">,
    ListOption<"stateResults", "state-results", "int64_t",
               "Result indices of the new optimizer states (sharded)">,
    ListOption<"stateArgs", "state-args", "int64_t",
               "Argument indices of the optimizer states, one per "
               "state result (sharded)">
  ];
  let statistics = [
    Statistic<"numRestricted", "restricted", "Ops rebuilt on this rank's rows">,
    Statistic<"numReduceScatters", "reduce-scatters",
              "All-reduces turned into reduce-scatters">,
    Statistic<"numAllGathers", "all-gathers", "Parameters all-gathered">
  ];
  let dependentDialects = ["ga::GADialect", "tensor::TensorDialect",
                           "linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// ForwardErrorBound
//===----------------------------------------------------------------------===//

def ForwardErrorBound : Pass<"ga-forward-error-bound", "ModuleOp"> {
  let summary = "Add a function that computes a step's results together with "
                "a bound of their rounding error, element by element";
  let description = [{
    For each selected function `@f`, adds `@f_error_bound` (the suffix is an
    option): the same computation, returning `@f`'s results followed by one
    companion per result. A floating-point result's companion is a tensor of
    the same shape (f32, or f64 for f64 results) whose element `i` bounds
    `|computed_i - exact_i|`, where `exact` is the result in real
    arithmetic on the same inputs and `computed` is any evaluation of `@f`
    that performs the same operations with correctly rounded basic
    operations, library functions within a few ulps, and **sums in any
    order**. An integer or `i1` result's companion is an `i1` tensor that
    is true where the value may differ between such evaluations (it derives
    from a comparison of floats closer than their bounds).

    The bound is a forward error analysis run beside the computation: every
    value carries its bound `e`, and each op maps its operands' bounds to its
    result's, with `u` the unit roundoff of the op's type:
    `e(a + b) = e(a) + e(b) + u|r|`, `e(a * b) = |a| e(b) + |b| e(a) +
    e(a) e(b) + u|r|`, `e(a / b) = (e(a) + |r| e(b)) / (|b| - e(b)) + u|r|`
    (infinite when `b` may be 0), `e(exp a) = |r| expm1(e(a)) + 8u|r|`,
    and so on; `max`, `select`, comparisons and data movement propagate
    bounds without adding any. A sum over the `K` iterations of a
    `linalg` reduction adds `K u |x|` per term instead of the running
    `u|partial sum|`, so the bound holds for every order in which a blocked,
    vectorized, multi-threaded or BLAS evaluation may add the terms, and for
    the rewritten step's split of the batch into micro-batches. `ga-verify`
    compares the reference and the rewritten step element by element to the
    smaller of twice this bound and 8 spreads of `--ga-perturb-roundings`
    (tools/ga-verify/README.md): deep steps make this bound loose.

    Named linalg ops and elementwise ops on tensors are generalized first;
    `linalg.generic` (payloads of arith and math ops, `linalg.index`,
    `tensor.extract`), `tensor` data movement, `scf.for` and `scf.if` are
    followed. Anything else that touches a float is an error at the op:
    `func.call` (run `--inline` first), `scf.while`, `arith.bitcast` of an
    inexact value, unknown math functions.

    Before (`--ga-forward-error-bound`):

    ```mlir
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %0 = arith.addf %a, %b : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    ```

    After (the original is kept; the new function, abridged):

    ```mlir
    func.func @f_error_bound(%a: tensor<4xf32>, %b: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>) {
      %0:2 = linalg.generic ... ins(%a, %b ...) outs(%e, %e2 ...) {
      ^bb0(%x: f32, %y: f32, %o: f32, %oe: f32):
        %s = arith.addf %x, %y : f32
        %m = math.absf %s : f32
        %bound = arith.mulf %m, %u : f32        // u = 2^-24
        linalg.yield %s, %bound : f32, f32
      } -> (tensor<4xf32>, tensor<4xf32>)
      return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
    }
    ```
  }];
  let options = [
    ListOption<"funcNames", "func", "std::string",
               "Functions to bound (default: every public function with a "
               "body)">,
    Option<"suffix", "suffix", "std::string", "\"_error_bound\"",
           "Suffix of the name of each added function">
  ];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "scf::SCFDialect",
                           "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numBounded", "bounded-ops",
              "Number of ops whose results got a bound or a flag">
  ];
}

//===----------------------------------------------------------------------===//
// PerturbRoundings
//===----------------------------------------------------------------------===//

def PerturbRoundings : Pass<"ga-perturb-roundings", "ModuleOp"> {
  let summary = "Add a copy of a step whose every rounding is perturbed at "
                "random by up to its unit in the last place";
  let description = [{
    Monte Carlo arithmetic: for each selected function `@f`, adds
    `@f_perturbed` (the suffix is an option) with one more argument, an
    `i64` seed, that computes the same results with every rounding op's
    result `r` replaced by `r + xi * units * 2u |r|` (rounded back to the
    op's type), `u` the unit roundoff of the type, `xi` uniform in
    `[-1, 1)` drawn by a counter-based hash of the seed, the op and the
    loop indices of its element (every partial sum of a reduction gets its
    own), `units` 1 for the basic operations and 4 for library functions.
    Exact ops (max, min, select, negation, comparisons, `extf`, data
    movement) are not perturbed.

    Runs of `@f_perturbed` on several seeds show how far each element of
    `@f`'s results moves when its roundings do: the spread that any other
    order of the same operations (blocked, vectorized, threaded, BLAS,
    micro-batched) may produce, with the step's own cancellations and
    amplifications (a saturated softmax, a LayerNorm of nearly constant
    rows), which a worst-case bound cannot see. `ga-verify` compares each
    element to a multiple of it (and to `--ga-forward-error-bound`'s
    rigorous bound, whichever is smaller).

    Named linalg ops and elementwise ops on tensors are generalized first.

    Before (`--ga-perturb-roundings`):

    ```mlir
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %0 = arith.addf %a, %b : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    ```

    After (the original is kept; abridged):

    ```mlir
    func.func @f_perturbed(%a: tensor<4xf32>, %b: tensor<4xf32>,
                           %seed: i64) -> tensor<4xf32> {
      %0 = linalg.generic ... ins(%a, %b ...) outs(...) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %s = arith.addf %x, %y : f32
        %i = linalg.index 0 : index
        %xi = ... hash of %seed, the op's number and %i, in [-1, 1) ...
        %p = ... %s + %xi * 2^-23 * |%s|, computed in f64, truncated ...
        linalg.yield %p : f32
      } -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    ```
  }];
  let options = [
    ListOption<"funcNames", "func", "std::string",
               "Functions to perturb (default: every public function with a "
               "body)">,
    Option<"suffix", "suffix", "std::string", "\"_perturbed\"",
           "Suffix of the name of each added function">
  ];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numPerturbed", "perturbed-ops",
              "Number of rounding ops perturbed">
  ];
}

//===----------------------------------------------------------------------===//
// Rematerialize
//===----------------------------------------------------------------------===//

def Rematerialize : Pass<"ga-rematerialize", "func::FuncOp"> {
  let summary = "Recompute element-wise values where they are read instead "
                "of keeping them";
  let description = [{
    Trades work for memory in a training step on tensors (before
    bufferization; on the full-batch step or inside the micro-batch loop that
    `--ga-accumulate` builds, where the pipeline runs it with `recompute=`).
    A value that the forward computes and the backward reads again (an
    activation such as the output of a GELU, a normalized input, a dropout
    mask) is otherwise one buffer that lives from the forward to the
    backward: the CPU bufferization frees a buffer at the end of the block
    that allocates it and `--ga-lower-to-cpu`'s element-wise fusion only
    absorbs a producer with one user, so a value with several users is a
    buffer of its own in every micro-batch. With `recompute=pointwise`, such
    a value is replaced at each of its users but the first by a copy of the
    element-wise op that computes it, placed right before that user and
    reading the same operands (its checkpoints: the values that are kept,
    products, reductions and arguments); the copies make the operands of the
    copied op shared in turn, so a whole element-wise chain is recomputed
    from its checkpoints. Each copy then has one user, which the fusion of
    `--ga-lower-to-cpu` (fuse-elementwise=1) absorbs: the buffer disappears
    and the value is computed again where it is read.

    A value is recomputed only when every user is element-wise (an
    all-parallel `linalg.generic` that reads it as an input through a
    projected permutation, or an element-wise arith/math op on tensors,
    which the CPU pipeline turns into one), so that the copy can always be
    absorbed and the vectorized arithmetic per element is the same; the op
    that computes it is an element-wise op on tensors or a `linalg.generic`
    with one result, all loops parallel, pure tensor semantics, a
    permutation as the map of its result, a payload of at most `max-ops`
    operations without regions or memory effects that does not read its
    init; and the value has at most `max-users` users.

    Exact by construction: a copy is the same op on the same operands, so it
    computes bitwise the same values (the same operations in the same order
    per element; no reduction is recomputed, and random numbers, which the
    PyTorch frontend draws from a counter-based generator keyed by the
    sample's index, are recomputed from the same keys and indices).
    `ga-verify --rtol=0` checks it against the step without it.

    With `recompute=products`, the products (contractions and convolutions)
    are the checkpoints and everything else the backward reads is computed
    again: in every block that yields values (the micro-batch loop's body,
    or the function's own), the ops before the first op whose result the
    block yields (the loss, which ends the forward) are the forward; an op
    after it that reads a forward value that is not a product (a LayerNorm,
    its statistics, a softmax, a GELU, a dropout mask, a residual sum) reads
    a copy instead, made once, right before the first such op, from copies
    of the forward values it reads in turn and from the products and values
    defined before the block. The copies are the same ops on the same
    operands (reductions included, in the same order), so the results are
    bitwise those of the step without the pass. The forward's buffers then
    die with the forward; `--ga-lower-to-cpu="share-buffers=1"` gives the
    copies the storage of values dead by then.

    Two more block-wide sets follow the same copies, with the checkpoints
    chosen from the forward's dataflow alone (no op or value names):

    * `attention`: in program order, an op of the forward is recomputed
      when its results take more bytes than the kept values it would be
      computed from (its operands that are kept, and the sources of its
      operands that are recomputed, each counted once): the [B,H,T,T]
      scores of `Q K^T` (from two [B,H,T,D] operands when T > 2D), the
      softmax of them (from the scores' sources and the row statistics),
      dropout masks (from a key and sample indices), masks and broadcasts.
      The product `P V` and every other output no larger than its sources
      are kept, so the rule recomputes only what costs memory beyond the
      values kept anyway; so is the operand of `P V` itself (the
      probabilities, after dropout), by the fusion rule below.
    * `layers`: the checkpoints are the activations (forward values that
      depend on the micro-batch through more than slices of the inputs)
      that are the only activation live after their op, counting forward
      readers only: every later forward op reads the micro-batch through
      them or through the inputs themselves. In a residual network they
      are the residual stream between blocks (and between the attention
      and the MLP of a transformer block), the final normalization, the
      logits. Every other forward value the backward reads is recomputed,
      products included, from the checkpoints, the inputs and the
      parameters: the whole segment is computed again before its backward.

    In all three, an op whose copy would change what the CPU pipeline fuses
    stays a checkpoint (an element-wise op left with one user that is not
    element-wise, such as a reduction or a product, which it would be fused
    into), so that every product is the same library call on the same
    operands and no value moves into another loop; the copies carry
    `ga.recomputed` (what the memory report counts as `recomputed`).

    Policies: `none` (nothing), `pointwise` (every value above),
    `attention`, `products` (every value but the products) and `layers`
    (getRecomputeSets(), in that order, is the list the planner and the
    benchmarks enumerate); with
    `values=i,j`, only the values of the element-wise ops (`linalg.generic`
    ops and element-wise arith/math ops on tensors) at those positions
    (0-based, in the order they appear in the function) are candidates: an
    explicit recompute set, for tools that choose one.

    Before (`--ga-rematerialize="recompute=pointwise"`):

    ```mlir
    %a = linalg.generic {iterator_types = ["parallel"]}
        ins(%h : tensor<8xf32>) outs(%e : tensor<8xf32>) { math.tanh }
    %y = linalg.generic {...} ins(%a : ...) { arith.mulf }   // forward
    %g = linalg.generic {...} ins(%a, %dy : ...) { ... }     // backward
    ```

    After:

    ```mlir
    %a = linalg.generic {...} ins(%h : tensor<8xf32>) { math.tanh }
    %y = linalg.generic {...} ins(%a : ...) { arith.mulf }
    %a2 = linalg.generic {...} ins(%h : tensor<8xf32>) { math.tanh }
    %g = linalg.generic {...} ins(%a2, %dy : ...) { ... }
    ```
  }];
  let options = [
    Option<"recompute", "recompute", "std::string", /*default=*/"\"pointwise\"",
           "What to recompute: none, pointwise, attention, products or "
           "layers">,
    ListOption<"values", "values", "int64_t",
               "Only the element-wise ops at these positions of the "
               "function, in order (default: all that qualify)">,
    Option<"maxOps", "max-ops", "unsigned", /*default=*/"16",
           "Most payload operations of an op that is recomputed">,
    Option<"maxUsers", "max-users", "unsigned", /*default=*/"8",
           "Most users of a value that is recomputed">
  ];
  let statistics = [
    Statistic<"numRecomputed", "recomputed-values",
              "Values recomputed at their users">,
    Statistic<"numCopies", "copies", "Copies of element-wise ops added">
  ];
}

//===----------------------------------------------------------------------===//
// ShardParameters
//===----------------------------------------------------------------------===//

def ShardParameters : Pass<"ga-shard-parameters", "ModuleOp"> {
  let summary = "FSDP/ZeRO-3: each rank holds its rows of the parameters and "
                "gradients; parameters all-gathered where the loop reads them";
  let description = [{
    Runs after `--ga-shard-optimizer` with the same `rank` and `world` (its
    new parameters are `ga.all_gather`s of this rank's updated rows). The
    parameter arguments `param-args` and results `param-results` become
    tensors of this rank's rows of dimension 0 (uneven when `world` does not
    divide them, as `ga.reduce_scatter` splits them):

    * The update reads the argument's rows directly; every other reader gets
      a `ga.all_gather` of the rows placed before it: inside each micro-batch
      loop one before the first reader that the loss (result `loss`)
      depends on (the forward) and one before the first other reader (the
      backward), so the whole parameter lives only while one of them runs
      (FSDP's resharding after forward and after backward); outside the
      loops one before the first reader. Ops before the loops that compute
      on the whole parameter and whose results only the loops read (a
      transposed weight, computed once by `--ga-accumulate`) move into each
      loop first, so that the whole parameter is needed only inside. A
      parameter in `keep-gathered` is gathered once, before its first
      reader, and stays gathered across the loops.
    * A gradient `ga.reduce_scatter <sum>`ed after its loop whose loop-carried
      accumulator is provably a sum from zero (each link of the chain from
      the iteration argument to the yielded value is the single init of a
      linalg op whose combiner adds it) becomes a shard accumulator: each
      micro-batch's contribution is computed from a zero full tensor made
      right before the op that accumulates it, reduce-scattered right after
      that op (as FSDP reduces each layer's gradient as the backward leaves
      it) and added to this rank's rows; a remainder loop
      continues from the main loop's shard. The gradients of the
      parameters whose results are listed in `reduce-after-loop`, and
      those that are not provably sums, keep the full accumulator and the
      reduce-scatter after the loop.

    Exact: the reduce-scatter is linear, so the sum over micro-batches of
    the reduced contributions is the reduction of the sum (up to the order
    of the additions).

    Before (rank 1 of 2, after `--ga-shard-optimizer`):

    ```mlir
    func.func @train_step(%w: tensor<4x8xf32>, ...) -> (tensor<4x8xf32>, ...) {
      %r:2 = scf.for ... iter_args(%acc = %zero, %l = %l0) {
        %y = linalg.matmul ins(%x, %w ...)           // forward: reads %w
        %g = linalg.matmul ins(%dy, %w ...)          // backward: reads %w
        %a = linalg.matmul ins(..) outs(%acc)        // gradient += ...
        scf.yield %a, %lsum
      }
      %gw = ga.reduce_scatter <sum> %r#0 shard 1 of 2
          : tensor<4x8xf32> -> tensor<2x8xf32>
      %wr = tensor.extract_slice %w[2, 0] [2, 8] [1, 1]
      %w2 = linalg.generic ... ins(%wr, %gw ...)
      %wa = ga.all_gather %w2 shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
      return %wa, ...
    }
    ```

    After (`param-args=0 param-results=0 loss=2`):

    ```mlir
    func.func @train_step(%w: tensor<2x8xf32>, ...) -> (tensor<2x8xf32>, ...) {
      %r:2 = scf.for ... iter_args(%acc = %zero_rows, %l = %l0) {
        %wf = ga.all_gather %w shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
        %y = linalg.matmul ins(%x, %wf ...)
        %wb = ga.all_gather %w shard 1 of 2 : tensor<2x8xf32> -> tensor<4x8xf32>
        %g = linalg.matmul ins(%dy, %wb ...)
        %a = linalg.matmul ins(..) outs(%zero_full)
        %s = ga.reduce_scatter <sum> %a shard 1 of 2
        %acc2 = linalg.add ins(%acc, %s ...)
        scf.yield %acc2, %lsum
      }
      %w2 = linalg.generic ... ins(%w, %r#0 ...)
      return %w2, ...
    }
    ```

    Refused with an error: indices out of range, a parameter result that is
    not the all-gathered rows of its argument.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"train_step\"",
           "The step to shard">,
    Option<"rank", "rank", "int64_t", /*default=*/"0", "This rank">,
    Option<"world", "world", "int64_t", /*default=*/"1",
           "Ranks of the data-parallel group">,
    ListOption<"paramArgs", "param-args", "int64_t",
               "Argument indices of the sharded parameters">,
    ListOption<"paramResults", "param-results", "int64_t",
               "Result indices of their new values, one per argument">,
    Option<"loss", "loss", "int64_t", /*default=*/"-1",
           "Result index of the loss (its dependencies are the forward); "
           "-1: one gather per loop">,
    ListOption<"keepGathered", "keep-gathered", "int64_t",
               "Parameter arguments gathered once and kept across the loops">,
    ListOption<"reduceAfterLoop", "reduce-after-loop", "int64_t",
               "Parameter results whose gradients keep a full accumulator, "
               "reduce-scattered once after the loop">,
    Option<"planOutput", "plan-output", "std::string", /*default=*/"\"\"",
           "A file to write the plan to, as JSON (per parameter result: "
           "all-gathers and reduce-scatters per micro-batch and outside the "
           "loops, bytes of the whole tensor each)">
  ];
  let statistics = [
    Statistic<"numAllGathers", "all-gathers", "All-gathers placed">,
    Statistic<"numScatteredPerMicroBatch", "scattered-per-micro-batch",
              "Gradients reduce-scattered per micro-batch">,
    Statistic<"numSunk", "sunk",
              "Readers of whole parameters moved into the loops">
  ];
  let dependentDialects = ["ga::GADialect", "tensor::TensorDialect",
                           "linalg::LinalgDialect", "scf::SCFDialect"];
}

#endif // GA_TRANSFORMS_PASSES_TD
