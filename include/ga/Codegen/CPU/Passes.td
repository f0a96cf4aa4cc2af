//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
//
// The passes of --ga-lower-to-cpu that shape the code for the host CPU after
// bufferization: static storage for temporaries and vectorization of the
// linalg ops that are not handed to a BLAS.
//
//===----------------------------------------------------------------------===//

#ifndef GA_CODEGEN_CPU_PASSES_TD
#define GA_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// HoistInvariantExtracts
//===----------------------------------------------------------------------===//

def HoistInvariantExtracts
    : Pass<"ga-hoist-invariant-extracts", "func::FuncOp"> {
  let summary = "Move tensor.extract of values from above out of linalg "
                "bodies";
  let description = [{
    `linalg-inline-scalar-operands` turns a 0-d operand of a linalg op (a
    learning rate, say) into a `tensor.extract` inside the body. Left there it
    becomes a load per element, and a body that loads from memory is not
    vectorized. This pass moves every `tensor.extract` in the body of a linalg
    op on tensors whose operands are all defined outside that op to right
    before the op. Nothing else moves: an extract that reads a value of the
    body stays.

    Before:

    ```mlir
    %r = linalg.generic {...} ins(%g : tensor<64xf32>) outs(%w : tensor<64xf32>) {
    ^bb0(%gi: f32, %wi: f32):
      %lr = tensor.extract %rate[] : tensor<f32>
      %s = arith.mulf %lr, %gi : f32
      %u = arith.subf %wi, %s : f32
      linalg.yield %u : f32
    } -> tensor<64xf32>
    ```

    After:

    ```mlir
    %lr = tensor.extract %rate[] : tensor<f32>
    %r = linalg.generic {...} ins(%g : tensor<64xf32>) outs(%w : tensor<64xf32>) {
    ^bb0(%gi: f32, %wi: f32):
      %s = arith.mulf %lr, %gi : f32
      %u = arith.subf %wi, %s : f32
      linalg.yield %u : f32
    } -> tensor<64xf32>
    ```
  }];
  let statistics = [
    Statistic<"numHoisted", "hoisted", "tensor.extract ops moved out of "
              "linalg bodies">
  ];
}

//===----------------------------------------------------------------------===//
// PeelFirstAccumulation
//===----------------------------------------------------------------------===//

def PeelFirstAccumulation
    : Pass<"ga-peel-first-accumulation", "func::FuncOp"> {
  let summary = "Peel the first iteration of loops that accumulate matrix "
                "products into zero-filled values";
  let description = [{
    A micro-batch loop accumulates the products of its gradient GEMMs into
    loop-carried values that start as zero `linalg.fill`s. This pass peels
    the first iteration of every `scf.for` that runs at least twice
    (statically) and has such a value (a zero-filled init that is the output
    of a contraction in the body): in the peeled iteration the product writes
    into the zero fill itself, which `--convert-linalg-to-blas` turns into
    beta = 0 without the fill. The accumulators are then neither zeroed nor
    read by the first micro-batch. The arithmetic is unchanged (0 + x == x).
    Loops with a dynamic or single trip count are left alone, and so are
    loops whose body has tensors of a run-time size (a data-parallel
    rank's micro-batch): peeled, the first micro-batch's temporaries would
    be held through the loop (the function's block frees them at its end,
    or, where the report's bound shard folds their sizes, in static
    storage) beside the loop's own, whose storage `--ga-share-buffers`
    cannot share (it takes static shapes only).

    Before:

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %g = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> tensor<4x3xf32> {
      %p = linalg.matmul ins(%a, %b : ...) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
      scf.yield %p : tensor<4x3xf32>
    }
    ```

    After (the peeled iteration is a loop of one trip, which canonicalization
    folds into its body):

    ```mlir
    %p0 = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %z) -> tensor<4x3xf32> {
      %p = linalg.matmul ins(%a, %b : ...) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
      scf.yield %p : tensor<4x3xf32>
    }
    %g = scf.for %i = %c1 to %c4 step %c1 iter_args(%acc = %p0) -> tensor<4x3xf32> {
      %p = linalg.matmul ins(%a, %b : ...) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
      scf.yield %p : tensor<4x3xf32>
    }
    ```
  }];
  let statistics = [
    Statistic<"numPeeled", "peeled", "Loops whose first iteration was peeled">
  ];
  let dependentDialects = ["scf::SCFDialect", "affine::AffineDialect"];
}

//===----------------------------------------------------------------------===//
// PromoteBuffersToGlobals
//===----------------------------------------------------------------------===//

def PromoteBuffersToGlobals
    : Pass<"ga-promote-buffers-to-globals", "ModuleOp"> {
  let summary = "Keep the fixed-size temporaries of a step in static storage";
  let description = [{
    A training step allocates the same temporaries on every call: activations,
    gradient accumulators, softmax scratch. On the heap they cost a
    `malloc`/`free` pair each, and, for the megabyte-sized ones, fresh pages
    from the kernel on every call (the allocator returns large blocks to the
    system when they are freed), which can take longer than the arithmetic.
    This pass moves every statically shaped `memref.alloc` whose buffer never
    leaves its function, and never outlives one iteration of a loop that
    contains it, to a private uninitialized `memref.global` (zero-filled
    `.bss`: mapped once, then reused by every call).

    Run it after bufferization and before buffer deallocation (the moved
    buffers need no `dealloc`). A buffer escapes, and stays on the heap, when
    it (or a view of it) is returned, yielded out of a loop iteration that
    allocates it, or used by an op the pass does not know to only read or
    write it (a call, say). Buffers allocated in parallel regions also stay
    on the heap (several instances are live at once).

    The function becomes non-reentrant: two calls must not run at the same
    time (threads inside one call are fine). Recursive functions are left
    alone with a warning.

    Before:

    ```mlir
    func.func @step(%x: memref<256x1024xf32>) -> f32 {
      %t = memref.alloc() {alignment = 64 : i64} : memref<256x1024xf32>
      linalg.generic ... ins(%x) outs(%t)
      ...
    }
    ```

    After:

    ```mlir
    memref.global "private" @__ga_buffer_step_0 : memref<256x1024xf32>
        = uninitialized {alignment = 64 : i64}
    func.func @step(%x: memref<256x1024xf32>) -> f32 {
      %t = memref.get_global @__ga_buffer_step_0 : memref<256x1024xf32>
      linalg.generic ... ins(%x) outs(%t)
      ...
    }
    ```
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"0",
           "Leave buffers smaller than this many bytes on the heap">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Minimum alignment of the globals in bytes (a power of two)">
  ];
  let statistics = [
    Statistic<"numPromoted", "promoted", "Buffers moved to static storage">,
    Statistic<"numBytes", "bytes", "Bytes of static storage created">
  ];
  let dependentDialects = ["memref::MemRefDialect"];
}

//===----------------------------------------------------------------------===//
// VectorizeLinalg
//===----------------------------------------------------------------------===//

def VectorizeLinalg : Pass<"ga-vectorize-linalg", "func::FuncOp"> {
  let summary = "Tile linalg ops on buffers along their contiguous innermost "
                "dimension and vectorize the tiles";
  let description = [{
    The CPU lowering turns linalg ops that are not matrix products (bias
    additions, activations and their derivatives, bias gradients, optimizer
    updates, their accumulation into gradient buffers) into loops. Lowered
    one element at a time, LLVM rarely vectorizes them afterwards: an update
    that reads four buffers and writes three needs more run-time alias checks
    than its loop vectorizer allows. This pass vectorizes them in MLIR, where
    the semantics of the linalg op say which accesses may be reordered.

    An op qualifies when its loop ranges are static, its innermost loop is
    parallel, and every operand either does not depend on that loop (it is
    broadcast) or is indexed by it in its last dimension with unit stride:
    by the loop alone, or by the loop plus other loops times constants (`ow
    + kw`, the window that a convolution's im2col copy reads). Inside a
    tile the other loops take one value, so such an index is the loop
    alone: each tile's maps are rewritten so (`oh * 2 + kh` -> `oh`, both 0
    in the tile) and linalg::vectorize reads the window as one vector. An
    operand read at the constant 0 in some of its dimensions (a size-1
    dimension broadcast: BatchNorm's per-channel scale at `(0, c, 0, 0)`)
    is read through a rank-reduced view without them, since
    linalg::vectorize takes only maps of plain loop dimensions.
    Ops with a buffer whose element type is stored differently in a buffer
    and in a vector are left alone: LLVM packs `vector<8xi1>` into one byte
    and pads odd widths (`i24`), where a memref gives each element its own
    byte-aligned slot, so a vector load of an `i1` mask would read garbage.
    Each such op is tiled by 1 along the outer loops and by
    `vector-width / bits` along the innermost one (`bits` = the widest element
    type of its operands; a shorter innermost range is taken whole; a range
    that the vector length does not divide ends in a masked tile), and each
    tile is vectorized by `linalg::vectorize`. The element-wise arithmetic is
    unchanged: results are bit-identical to the scalar loops. Other ops are
    left to the scalar lowering.

    Before (`--ga-vectorize-linalg=vector-width=256`):

    ```mlir
    linalg.generic {indexing_maps = [#id, #row, #id],
                    iterator_types = ["parallel", "parallel"]}
        ins(%z, %bias : memref<64x1024xf32>, memref<1024xf32>)
        outs(%a : memref<64x1024xf32>) {
    ^bb0(%v: f32, %b: f32, %o: f32):
      %s = arith.addf %v, %b : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    }
    ```

    After:

    ```mlir
    scf.for %i = %c0 to %c64 step %c1 {
      scf.for %j = %c0 to %c1024 step %c8 {
        %v = vector.transfer_read %z[%i, %j], %pad : memref<64x1024xf32>, vector<8xf32>
        %b = vector.transfer_read %bias[%j], %pad : memref<1024xf32>, vector<8xf32>
        %s = arith.addf %v, %b : vector<8xf32>
        %r = arith.maximumf %s, %zeros : vector<8xf32>
        vector.transfer_write %r, %a[%i, %j] : vector<8xf32>, memref<64x1024xf32>
      }
    }
    ```
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "unsigned", /*default=*/"256",
           "Vector register width in bits, a power of two >= 64 (128: "
           "SSE/NEON, 256: AVX2, 512: AVX-512); 0 turns the pass off">,
    Option<"parallelLoops", "parallel-loops", "bool", /*default=*/"false",
           "Iterate over the tiles of parallel dimensions with scf.parallel "
           "(for OpenMP) instead of scf.for">
  ];
  let statistics = [
    Statistic<"numVectorized", "vectorized", "Linalg ops vectorized">
  ];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "vector::VectorDialect"];
}

//===----------------------------------------------------------------------===//
// VectorizeMath
//===----------------------------------------------------------------------===//

def VectorizeMath : Pass<"ga-vectorize-math", "func::FuncOp"> {
  let summary = "Replace math functions on f32 vectors by polynomial "
                "approximations that stay vectors";
  let description = [{
    `ga-vectorize-linalg` turns the exponentials of a softmax or a
    cross-entropy, the `erf` of an exact GELU and the `tanh` of its
    approximate form into math ops on vectors. LLVM has no instruction for
    them: it splits each vector back into scalars and calls libm once per
    element (`expf`, `erff`, `tanhf`), so a vectorized softmax or GELU still
    runs one call per element (about a fifth of the GPT-style step of
    bench/torch_accumulation.py before this pass).

    This pass rewrites each math op listed in `ops` whose operand is an f32
    vector into upstream's polynomial approximation
    (`populateMathPolynomialApproximationPatterns`: range reduction, a
    polynomial or rational function, special cases for 0, infinities, NaN
    and the ends of the range), which is vector arithmetic only. With
    `scalars`, the f32 scalar ops of the same names take the same
    approximations: a function that computes `exp` both in a vectorized loop
    and in one the vectorizer leaves (a reduction, a recomputed copy fused
    into another loop) then computes it one way, lane for lane, and a value
    computed again is the kept one bit for bit. Without it, scalar ops keep
    libm (ga-lower-to-cpu sets `scalars`). Other element types keep libm.
    The approximations are not bit-exact:
    test/Integration/CPU/math-approximations.test measures each default
    one against float64 over the whole f32 range (`Inputs/math_oracle.py`):
    at most 4 ulp (exp 1, tanh 2) where libm is within 2, with infinities,
    NaN and overflow as libm has them. `exp` is not upstream's approximation
    (4 ulp) but 2^k exp(r) with r = x - k ln 2 reduced by two fmas and
    exp(r) by its Taylor series to r^7: within 1 ulp, so that exp rounds as
    libm's correctly rounded `expf` does for most inputs (an AdamW step
    amplifies the difference of a 4-ulp exp in its smallest gradients).
    `tanh` is not upstream's rational approximation (5 ulp) but computed as
    libm computes it: its Taylor series below 0.3, else
    `1 - 2 / (exp(2|x|) + 1)` with the sign of x, the exp as above. `log`
    and `log2` are not in the default set: their approximations read a
    subnormal input as the smallest normal number.

    Before (`--ga-vectorize-math`):

    ```mlir
    %e = math.exp %x : vector<8xf32>
    ```

    After (abridged):

    ```mlir
    %k = math.roundeven (%x * log2(e)) : vector<8xf32>  // %x clamped
    %r = %x - %k * ln(2)                    // two fmas
    %p = 1 + (%r + %r^2 * (1/2 + %r * ...)) // Taylor series to r^7
    %e = %p * 2^(%k >> 1) * 2^(%k - (%k >> 1))   // exponent bits
    ```
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Math ops to approximate on f32 vectors, by name without the "
               "dialect (default: exp, expm1, log1p, tanh, erf, erfc; log "
               "and log2 are left out: their approximations flush "
               "subnormal inputs)">,
    Option<"scalars", "scalars", "bool", /*default=*/"false",
           "Approximate the f32 scalar ops of the same names too, so that a "
           "function computes each math function one way whether its loop "
           "was vectorized or not">
  ];
  let statistics = [
    Statistic<"numApproximated", "approximated",
              "Math ops replaced by approximations">
  ];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

//===----------------------------------------------------------------------===//
// SerializeSmallParallelLoops
//===----------------------------------------------------------------------===//

def SerializeSmallParallelLoops
    : Pass<"ga-serialize-small-parallel-loops", "func::FuncOp"> {
  let summary = "Run the parallel loops too small to pay for an OpenMP "
                "parallel region as sequential loops";
  let description = [{
    With `openmp`, `--ga-lower-to-cpu` lowers every linalg op to an
    `scf.parallel`, and `convert-scf-to-openmp` makes each one an
    `omp.parallel` region: a fork and a join of the thread team (a few
    microseconds with spinning workers, tens with sleeping ones). A training
    step has hundreds of such ops per micro-batch, most of them a bias, a
    row statistic or an optimizer update of a few thousand elements, which
    one core finishes faster than the team starts. It also nests the
    `scf.parallel` of a tiled op inside another: a nested region, which
    OpenMP serializes, at the cost of a region.

    This pass estimates the work of each outermost `scf.parallel` (the
    operations of its body, each counted once per iteration of the loops
    around it; a call, or a loop whose bounds are not constants, counts as
    unbounded) and rewrites the loop into nested `scf.for` loops
    (`scf::parallelForToNestedFors`) when the estimate is below `min-work`,
    or when it has a single iteration. The `scf.parallel` loops inside a loop
    that stays parallel are serialized too, so that each kept loop is one
    flat region; those inside a serialized loop are considered in turn.
    A kept loop stays parallel only in its fewest outermost dimensions that
    have `parallel-iterations` iterations together; the inner dimensions
    become `scf.for` loops in its body (OpenMP would collapse them into one
    worksharing loop and recover each index by a division per element).
    Loops with reductions (results) are kept whole. Each iteration computes
    what it computed before: results are bit-identical.

    Before (`--ga-serialize-small-parallel-loops=min-work=4096`):

    ```mlir
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%i] : memref<64xf32>
      %r = arith.addf %v, %v : f32
      memref.store %r, %y[%i] : memref<64xf32>
    }
    scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c512) step (%c1, %c8) {
      scf.parallel (%k) = (%c0) to (%c8) step (%c1) { ... }
    }
    ```

    After:

    ```mlir
    scf.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i] : memref<64xf32>
      %r = arith.addf %v, %v : f32
      memref.store %r, %y[%i] : memref<64xf32>
    }
    scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
      scf.for %j = %c0 to %c512 step %c8 {
        scf.for %k = %c0 to %c8 step %c1 { ... }
      }
    }
    ```
  }];
  let dependentDialects = ["scf::SCFDialect"];
  let options = [
    Option<"minWork", "min-work", "uint64_t", /*default=*/"32768",
           "The estimated operations (each op counted once per iteration) "
           "below which a parallel loop runs sequentially; 0 keeps every "
           "outermost loop with more than one iteration parallel">,
    Option<"parallelIterations", "parallel-iterations", "uint64_t",
           /*default=*/"64",
           "A kept loop stays parallel in its fewest outermost dimensions "
           "with at least this many iterations together; its other "
           "dimensions run as scf.for loops in each iteration">
  ];
  let statistics = [
    Statistic<"numSerialized", "serialized", "scf.parallel loops rewritten "
              "into scf.for loops">,
    Statistic<"numKept", "kept", "outermost scf.parallel loops left parallel">
  ];
}

//===----------------------------------------------------------------------===//
// SplitRowReductions
//===----------------------------------------------------------------------===//

def SplitRowReductions : Pass<"ga-split-row-reductions", "func::FuncOp"> {
  let summary = "Reduce each row of a linalg op on buffers into one vector "
                "of partial results, then combine the lanes";
  let description = [{
    The statistics of a softmax, a LayerNorm, an RMSNorm and a cross-entropy
    (a row's maximum, sum, sum of squares, log-sum-exp) and their gradients
    are linalg ops whose innermost loop is a reduction over a contiguous
    row. `ga-vectorize-linalg` vectorizes only ops whose innermost loop is
    parallel, so these ran as scalar loops that add one element at a time
    into the row's result in memory.

    This pass rewrites such an op (static ranges, one result, its innermost
    loop a reduction that every operand reading it indexes in its
    unit-stride last dimension, other operands read through projected
    permutations, a
    payload that folds one value into the result with one combiner that has
    a neutral element: `arith.addf`, `arith.maximumf`, `arith.mulf`,
    `arith.addi`, ...; rows of at least two vectors) into a loop over its
    rows (every other loop tiled by 1) whose body

    1. fills a stack buffer of `lanes = vector-width / bits` elements (the
       bits of the result's element type) with the combiner's neutral
       element;
    2. reduces the row's first `lanes * floor(n / lanes)` elements lane-wise
       into it: the same payload over [n / lanes, lanes], a linalg op whose
       innermost loop is parallel, which `ga-vectorize-linalg` (run after)
       turns into one vector operation per `lanes` elements;
    3. folds the lanes into the row's result (the combiner, `lanes` times);
    4. folds the remaining `n mod lanes` elements in, as before.

    Maxima and minima are unchanged; sums and products are reassociated:
    each lane sums every `lanes`-th element, which rounds no worse than the
    sequential sum (the corpus checks the lowering against the plain loops
    and float64). The order depends on the row's length and the result's
    type only, never on what element-wise fusion brought into the payload:
    an operand of a wider type (the i64 random bits of a dropout mask) does
    not change `lanes`, a payload that reads its loop indices (a one-hot
    selection) is split with the row's index rewritten (`k * lanes + l`,
    and the tail's offset). A value that `--ga-rematerialize` copies into a
    reduction is then summed as the kept one was. (Rows read across a
    strided dimension are left alone: splitting them splits the products
    that run without BLAS, whose kept and recomputed forms then round
    apart, `recompute-products.test`.) With `parallel-rows` (the pipeline's `openmp`), the loop
    over the rows is an `scf.parallel` and its body (an automatic allocation
    scope: one per iteration) allocates the lane buffer, so that rows
    reduced by different threads share no buffer.

    Before (`--ga-split-row-reductions=vector-width=256`):

    ```mlir
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                     affine_map<(i, j) -> (i)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<4x20xf32>) outs(%sum : memref<4xf32>) {
    ^bb0(%v: f32, %s: f32):
      %e = math.exp %v : f32
      %a = arith.addf %e, %s : f32
      linalg.yield %a : f32
    }
    ```

    After:

    ```mlir
    %acc = memref.alloca() : memref<8xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %row = memref.subview %x[%i, 0] [1, 20] [1, 1]
      %out = memref.subview %sum[%i] [1] [1]
      linalg.fill ins(%zero : f32) outs(%acc : memref<8xf32>)
      %body = memref.subview %row[0, 0] [1, 16] [1, 1]
      %chunks = memref.expand_shape %body [[0], [1, 2]] output_shape [1, 2, 8]
      linalg.generic {indexing_maps = [affine_map<(i, k, l) -> (i, k, l)>,
                                       affine_map<(i, k, l) -> (l)>],
                      iterator_types = ["parallel", "reduction", "parallel"]}
          ins(%chunks : memref<1x2x8xf32, ...>) outs(%acc : memref<8xf32>) {
        // the payload above
      }
      linalg.generic {... iterator_types = ["parallel", "reduction"]}
          ins(%acc : memref<8xf32>) outs(%out : memref<1xf32, ...>) {
      ^bb0(%a: f32, %s: f32):
        %r = arith.addf %a, %s : f32
        linalg.yield %r : f32
      }
      %tail = memref.subview %row[0, 16] [1, 4] [1, 1]
      linalg.generic {... the op above on %tail ...}
    }
    ```
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "unsigned", /*default=*/"256",
           "Vector register width in bits (as ga-vectorize-linalg's); 0 "
           "turns the pass off">,
    Option<"parallelRows", "parallel-rows", "bool", /*default=*/"false",
           "Iterate over the rows with scf.parallel (OpenMP), each row's "
           "lane buffer allocated in its iteration">
  ];
  let statistics = [
    Statistic<"numSplit", "split", "Row reductions split into lanes">
  ];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "memref::MemRefDialect", "scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// WidenI1Tensors
//===----------------------------------------------------------------------===//

def WidenI1Tensors : Pass<"ga-widen-i1-tensors", "func::FuncOp"> {
  let summary = "Compute the i1 tensors of linalg ops as i8 tensors of 0 and "
                "1, so that their buffers can be vectorized";
  let description = [{
    A memref of `i1` holds one byte per element, while a vector of `i1`
    packs eight elements into a byte, so `ga-vectorize-linalg` leaves every
    op that reads or writes an `i1` buffer to the scalar lowering. The
    masks of a transformer's step are such buffers: the causal mask, the
    one-hot and ignore-index masks of a cross-entropy and its gradient, the
    "row has a finite value" flags of a softmax (19 scalar ops, 3.7 M
    element-iterations per micro-batch of the GPT-style step of
    bench/torch_accumulation.py).

    This pass runs on tensors, before bufferization. It visits the linalg
    ops in program order; an op whose init is an `i1` tensor that has an
    `i8` form (the result of an op rewritten before, or a `tensor.empty`
    when a linalg op reads the result: a mask that only leaves the function
    stays `i1`) is rewritten to compute that `i8` form instead, and so is
    an op that reads such a tensor (or a dense `i1` constant, which becomes
    an `i8` one): each payload reads a widened operand
    through `arith.trunci` and writes a widened result through
    `arith.extui`, so an `i8` element is always 0 or 1. Named ops are
    rewritten through their generic form, except `linalg.fill`, which fills
    the `i8` tensor with the widened scalar. A `tensor.expand_shape` or
    `tensor.collapse_shape` of a widened tensor that a linalg op reads (a
    row mask unsqueezed to broadcast along the row, `empty[..., None]`)
    reshapes the `i8` form, and the i1 reshape is erased when nobody reads
    it. Other users that are not linalg ops
    (a `return`, a `tensor.insert_slice`, an `scf.yield`) read an `i1` copy
    (a `linalg.generic` of `arith.trunci`), which is erased when nobody
    reads it. Function arguments and results keep their types. Only the
    element types decide: no op is recognised by its name.

    Before (`--ga-widen-i1-tensors`):

    ```mlir
    %e = tensor.empty() : tensor<64x512xi1>
    %hot = linalg.generic {...} ins(%labels, %classes : tensor<64x1xi64>, tensor<1x512xi64>)
        outs(%e : tensor<64x512xi1>) {
    ^bb0(%l: i64, %c: i64, %o: i1):
      %eq = arith.cmpi eq, %l, %c : i64
      linalg.yield %eq : i1
    } -> tensor<64x512xi1>
    %g = linalg.generic {...} ins(%hot, %p : tensor<64x512xi1>, tensor<64x512xf32>)
        outs(%out : tensor<64x512xf32>) {
    ^bb0(%h: i1, %v: f32, %o: f32):
      %s = arith.select %h, %one, %zero : f32
      %d = arith.subf %v, %s : f32
      linalg.yield %d : f32
    } -> tensor<64x512xf32>
    ```

    After:

    ```mlir
    %e8 = tensor.empty() : tensor<64x512xi8>
    %hot = linalg.generic {...} ins(%labels, %classes : ...) outs(%e8 : tensor<64x512xi8>) {
    ^bb0(%l: i64, %c: i64, %o8: i8):
      %eq = arith.cmpi eq, %l, %c : i64
      %w = arith.extui %eq : i1 to i8
      linalg.yield %w : i8
    } -> tensor<64x512xi8>
    %g = linalg.generic {...} ins(%hot, %p : tensor<64x512xi8>, tensor<64x512xf32>) ... {
    ^bb0(%h8: i8, %v: f32, %o: f32):
      %h = arith.trunci %h8 : i8 to i1
      %s = arith.select %h, %one, %zero : f32
      ...
    } -> tensor<64x512xf32>
    ```
  }];
  let statistics = [
    Statistic<"numWidened", "widened",
              "Linalg ops that compute or read i8 forms of i1 tensors">
  ];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// CheckLibraryOpsLowered
//===----------------------------------------------------------------------===//

def CheckLibraryOpsLowered
    : Pass<"ga-check-library-ops-lowered", "ModuleOp"> {
  let summary = "Refuse the GPU library ops that only --ga-lower-library-ops "
                "lowers";
  let description = [{
    The ops of GALibraryOps.td (`ga.blas_matmul`, `ga.nccl_all_reduce`, the
    CUDA graph ops) become calls of the runtimes by `--ga-lower-library-ops`
    and by nothing else: the CPU lowering has no pattern for them, and
    without this check upstream's conversion fails late with an
    `unrealized_conversion_cast` of their operands. `--ga-lower-to-cpu` runs
    this pass first; the first library op is reported at its location, with
    the pass that lowers it (code `not-lowered`), and the pass fails.

    Input:

    ```mlir
    func.func @f(%g: memref<12xf32>) {
      // error: 'ga.nccl_all_reduce' op is a library call that
      // --ga-lower-to-cpu does not lower: run --ga-lower-library-ops first
      ga.nccl_all_reduce %g {datatype = 7 : i32, reduction = 0 : i32} : memref<12xf32>
      return
    }
    ```

    The IR is not changed.
  }];
}

//===----------------------------------------------------------------------===//
// ShareBuffers
//===----------------------------------------------------------------------===//

def ShareBuffers : Pass<"ga-share-buffers", "func::FuncOp"> {
  let summary = "One buffer for temporaries whose lifetimes do not overlap";
  let description = [{
    After bufferization and the hoisting of allocations out of loops, every
    temporary of a micro-batch (an activation, its gradient, a recomputed
    value) is one allocation that lives for the whole loop, even when it is
    only used between two points of one iteration. This pass gives
    temporaries of the same element type and number of elements whose live
    ranges are disjoint one buffer (a reshape of all of it gives each its
    shape),
    so that a value recomputed in the backward (`--ga-rematerialize`) takes
    the storage of values that are dead by then instead of adding to the
    peak, and the loop's temporaries the storage of the peeled first
    micro-batch's (`--ga-peel-first-accumulation`), dead before the loop.
    Static temporaries (`--ga-promote-buffers-to-globals`, run after it)
    then share one global.

    A statically shaped `memref.alloc` is a candidate when every access to it
    (through views) is by an op with declared memory effects, none yields,
    returns or passes it on, and the first access in the innermost block
    that holds them all is an op of that block that writes every element
    without reading it: a `linalg.fill`, a `memref.copy` into it, a linalg
    op whose init it is, with a permutation as its map, a payload that does
    not read the init, and which does not also read it, or the
    `ga.host_collective_start` of an all-gather into all of it (a gathered
    parameter: its buffer lives from the gather to its wait's last
    reader); or the first accesses are ops of that block that each write all
    of one piece of it without reading it (a subview with static offsets
    and sizes and unit strides, through which the op alone accesses it),
    the pieces disjoint, until they cover it, with only ops between them
    that access pieces already written (the pieces of a concatenation, each
    copied into its subview; a row statistic filled, then reduced into its
    piece). Its contents then
    never outlive one execution of that block, and its live range is the
    ops of the block from that write to the last access, with everything
    nested in them. Candidates of one element type, number of elements
    and memory space (any identity-layout shape of rank >= 1; otherwise of
    one type), allocated in the same innermost parallel loop (or none),
    share a buffer, first come first served, when their live ranges do not
    overlap, whichever blocks hold them (a range holds all of a loop or none
    of it: a temporary of the loop's body can take the buffer of one dead
    before the loop), and the first allocation dominates the others or sits
    in the same block (it is then moved up). A buffer allocated in a
    parallel loop's body is one per iteration: it never takes one from
    outside, which iterations running at once would share. Exact: a buffer
    is reused only after its last access, by ops that write all of it
    before reading any of it.

    With `pack=true` (off by default; `--ga-lower-to-cpu="share-buffers=1"`
    and `compile_train_step(share_buffers=True)` run the pass with it),
    first, candidates of different sizes share storage: those of one block,
    memory space, and category of the memory report (written by a recomputation or not, and the number of loops of
    the entry block before their last use: an arena is never used in a loop
    and after it, as an accumulator is; none that is, an accumulator itself)
    get byte offsets of one `i8`
    allocation, first fit by decreasing size over their live ranges (each
    at the lowest offset, aligned to 64 bytes or the largest alignment,
    that no buffer live at the same time holds), and each becomes a
    `memref.view` of it, which the memory report and
    `--ga-promote-buffers-to-globals` follow to the arena. Only when the
    arena is smaller than the buffers; a buffer allocated with operands or
    in a parallel loop, of a layout other than the identity, of rank 0 or
    of an element type that is not whole bytes is not packed. The sharing
    of equal sizes above then takes what packing left.

    Before:

    ```mlir
    %a = memref.alloc() : memref<8xf32>
    %b = memref.alloc() : memref<8xf32>
    linalg.fill ins(%c0 : f32) outs(%a : memref<8xf32>)
    linalg.generic ... ins(%a, %x) outs(%y)   // the last access to %a
    linalg.fill ins(%c1 : f32) outs(%b : memref<8xf32>)
    linalg.generic ... ins(%b, %x) outs(%z)
    ```

    After:

    ```mlir
    %a = memref.alloc() : memref<8xf32>
    linalg.fill ins(%c0 : f32) outs(%a : memref<8xf32>)
    linalg.generic ... ins(%a, %x) outs(%y)
    linalg.fill ins(%c1 : f32) outs(%a : memref<8xf32>)
    linalg.generic ... ins(%a, %x) outs(%z)
    ```

    With `pack=true`, a buffer of 32 floats dead before two of 16 and 8
    floats live at once:

    ```mlir
    %arena = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
    %a = memref.view %arena[%c0][] : memref<128xi8> to memref<32xf32>
    %b = memref.view %arena[%c0][] : memref<128xi8> to memref<16xf32>
    %c = memref.view %arena[%c64][] : memref<128xi8> to memref<8xf32>
    ```
  }];
  let options = [
    Option<"pack", "pack", "bool", /*default=*/"false",
           "Then pack the buffers of different sizes at byte offsets of one "
           "i8 allocation per block (memref.view), first fit by decreasing "
           "size over their live ranges">,
  ];
  let statistics = [
    Statistic<"numShared", "shared-buffers",
              "Allocations replaced by an earlier one">,
    Statistic<"numPacked", "packed-buffers",
              "Buffers replaced by a view of an arena">,
    Statistic<"numArenas", "arenas", "Arenas allocated (pack=true)">,
  ];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

#endif // GA_CODEGEN_CPU_PASSES_TD
