//===- Passes.td - GPU code generation passes --------------*- tablegen -*-===//
//
// The passes of --ga-lower-to-gpu-loops and --ga-lower-to-nvvm that map a
// bufferized training step onto the GPU: matrix products to cuBLASLt, linalg
// ops to loops mapped to blocks and threads, cooperative loops to launches
// with shared memory, and one stream for the whole step.
//
//===----------------------------------------------------------------------===//

#ifndef GA_CODEGEN_GPU_PASSES_TD
#define GA_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// ContractionsToCublasLt
//===----------------------------------------------------------------------===//

def ContractionsToCublasLt
    : Pass<"ga-contractions-to-cublaslt", "ModuleOp"> {
  let summary = "Rewrite matrix products on device buffers into "
                "`ga.blas_matmul` ops, beta = 1 into accumulators";
  let description = [{
    The library stage of `--ga-lower-to-nvvm="cublas=1"`, on buffers, before
    `--ga-linalg-to-gpu-loops`. A linalg contraction with one M, one N and
    one K dimension (any operand layout that is a plain or transposed
    row-major matrix with unit inner stride), a multiply-add body, inputs of
    one type among f32, f16, bf16 and an f32 output becomes one
    `ga.blas_matmul` (3-d operands for a product with one batch dimension,
    outermost in all three: `batch_matmul`, attention's Q K^T and P V), which
    `--ga-lower-library-ops` turns into a cuBLASLt call. A contraction
    accumulates into its init: `accumulate` (beta = 1), so that a gradient
    accumulator fused into the product stays fused; a zero fill of the
    output right before the product is dropped instead (beta = 0). An f16 or
    bf16 output is left to the generated kernels (the original rounds every
    partial sum). A matrix-vector product takes its vectors as matrices with
    a unit dimension. A broadcast bias add `d[i][j] = c[i][j] + b[j]` right
    after a product with beta = 0 into `c` becomes the op's `bias` (the
    product writes `d`, the add goes) when `c` and `d` are allocations that
    nothing else uses in between and `c` is not read again before it is
    overwritten.

    Before:

    ```mlir
    linalg.matmul ins(%xt, %dy : memref<784x64xf32>, memref<64x1024xf32>)
                  outs(%acc : memref<784x1024xf32>)
    ```

    After:

    ```mlir
    ga.blas_matmul %xt, %dy, %acc {accumulate}
      : memref<784x64xf32>, memref<64x1024xf32>, memref<784x1024xf32>
    ```
  }];
  let statistics = [
    Statistic<"numCalls", "calls", "Unbatched products emitted">,
    Statistic<"numBatchedCalls", "batched-calls",
              "Strided-batched products emitted">,
    Statistic<"numZeroFills", "zero-fills",
              "Zero fills folded into beta = 0">,
    Statistic<"numBiasEpilogues", "bias-epilogues",
              "Bias adds folded into a product as its bias epilogue">
  ];
  let dependentDialects = [
    "ga::GADialect", "memref::MemRefDialect", "arith::ArithDialect"
  ];
}

//===----------------------------------------------------------------------===//
// LowerLibraryOps
//===----------------------------------------------------------------------===//

def LowerLibraryOps : Pass<"ga-lower-library-ops", "ModuleOp"> {
  let summary = "Turn the library ops (`ga.blas_matmul`, the NCCL "
                "collectives, the CUDA graph and stream ops) into their "
                "runtime calls";
  let description = [{
    The end of `--ga-lower-to-gpu-kernels` and `--ga-lower-to-gpu-loops`:
    until here the stream and graph passes order library products by their
    async tokens and ask them what they write (gpu::AsyncOpInterface,
    MemoryEffectOpInterface); this pass alone knows the runtime ABI
    (include/ga-runtime/GARuntimeABI.h). Each op becomes a call of
    `gaCublasLtMatmul` (3-d operands: `gaCublasLtMatmulStridedBatched`)
    whose pointers, leading dimensions and batch strides are read from the
    memref layouts, beta = 1 for `accumulate`, the bias pointer for `bias`.
    Each `ga.nccl_all_reduce` becomes a call of `gaNcclAllReduce` on the
    address and element count of its buffer, whose non-zero status aborts
    (`cf.assert`); `ga.nccl_reduce_scatter` and `ga.nccl_all_gather`
    become checked calls of `gaNcclReduceScatter(stream, input, output,
    count, datatype, reduction)` and `gaNcclAllGather(stream, input, output,
    count, datatype)`, `count` the elements of one rank's part. A
    `ga.graph_capture` becomes `mgpuGraphBeginCapture` on
    its stream, its body in its place, and `mgpuGraphEndCapture` after the
    body's last token (the graph); `ga.graph_launch` becomes
    `mgpuGraphLaunch(graph, stream)`, `ga.graph_destroy`
    `mgpuGraphDestroy(graph)`. After the other ops, the stream ops:
    `ga.stream_wait` becomes, for each other stream, `mgpuEventCreate`,
    `mgpuEventRecord(event, other)`, `mgpuStreamWaitEvent(stream, event)`
    and `mgpuEventDestroy(event)` (tokens of one stream, e.g. the lowered
    ops' streams, share one event); `ga.stream_synchronize`
    `mgpuStreamSynchronize(stream)`; `ga.stream_release`
    `mgpuStreamDestroy(stream)`.
    The stream argument is the op's async dependency, whose token the call
    leaves valid (the work is enqueued on that stream); an op without one
    takes a null stream (the CUDA default stream: the loop stage run on the
    CPU against libga_cublaslt_cpu.so, the same ABI on CBLAS). Ops of one
    module must agree on which (one declaration per function).

    Before:

    ```mlir
    %t1 = ga.blas_matmul async [%t0] %x, %w, %acc {accumulate}
      : memref<8x16xf32>, memref<16x4xf32>, memref<8x4xf32>
    ```

    After:

    ```mlir
    func.call @gaCublasLtMatmul(%t0, %c0_i32, %c0_i32, %m, %n, %k, %px, %ldx,
        %pw, %ldw, %pacc, %ldacc, %c0_i32, %c0_i32, %one, %one, %null)
      : (!gpu.async.token, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr,
         i64, !llvm.ptr, i64, i32, i32, f32, f32, !llvm.ptr) -> ()
    ```
    (uses of `%t1` become uses of `%t0`).
  }];
  let statistics = [
    Statistic<"numCalls", "calls", "gaCublasLtMatmul calls emitted">,
    Statistic<"numBatchedCalls", "batched-calls",
              "gaCublasLtMatmulStridedBatched calls emitted">,
    Statistic<"numAllReduceCalls", "all-reduce-calls",
              "gaNcclAllReduce calls emitted">,
    Statistic<"numShardedCalls", "sharded-calls",
              "gaNcclReduceScatter and gaNcclAllGather calls emitted">,
    Statistic<"numGraphOps", "graph-ops",
              "CUDA graph ops (capture, launch, destroy) lowered">,
    Statistic<"numStreamOps", "stream-ops",
              "Stream ops (wait, synchronize, release) lowered">
  ];
  let dependentDialects = [
    "LLVM::LLVMDialect", "memref::MemRefDialect", "arith::ArithDialect",
    "func::FuncDialect", "cf::ControlFlowDialect"
  ];
}

//===----------------------------------------------------------------------===//
// LinalgToGPULoops
//===----------------------------------------------------------------------===//

def LinalgToGPULoops : Pass<"ga-linalg-to-gpu-loops", "func::FuncOp"> {
  let summary = "Lower linalg ops on buffers to `scf.parallel` loops mapped "
                "to GPU blocks and threads";
  let description = [{
    The loop-mapping stage of `--ga-lower-to-nvvm` (its output is the
    `--ga-lower-to-gpu-loops` form, which `ga-verify` runs on the CPU). Every
    linalg op and `memref.copy` on buffers becomes one `scf.parallel` over
    (block, thread) with a `#gpu.loop_dim_map` mapping, i.e. one kernel after
    `--convert-parallel-loops-to-gpu`. One strategy per op, one file each
    (docs/GPU.md, "How loops become kernels"):

    * one thread per output element (`ThreadPerElement.cpp`, the default):
      the parallel dimensions linearized over `grid x block-size` threads,
      the output's contiguous dimension fastest (coalesced stores); the
      reduction dimensions an `scf.for` in the thread whose `iter_args` keep
      the running value in a register, so an accumulator is read once and
      written once per micro-batch;
    * shared-memory tiles for contractions with a reduction of at least
      `gemm-min-reduction` (`TiledContraction.cpp`: a `ga.cooperative` loop);
    * partial results and a combining kernel for a reduction of at least
      `split-reduction-min` into fewer than 8192 outputs (`SplitReduction.cpp`);
    * with `fuse-rows=1`, a row reduction and the ops after it that read its
      result (or another member's) only at their own row as one kernel with
      one thread per row (`RowFusion.cpp`; same operations in the same order:
      bitwise the separate kernels' results); with rows of at least
      `row-warp-min` elements, a warp per row, or a block from
      `row-block-min` on (`CooperativeRows.cpp`: lanes stride the row,
      reductions combine lane partials in a tree in shared memory; the
      element-wise members compute the same operations per element);
    * with `fuse-siblings=1`, independent element-wise ops and copies as one
      kernel over the concatenation of their thread spaces, and a fill with
      the copies into static slices of its buffer as one write
      (`SiblingFusion.cpp`).

    Also: a fill that the next op overwrites is folded into it; writes of
    allocations nothing reads are erased; copies of a view onto itself are
    dropped; host loads of device memory move into the kernels that use them
    (or a kernel of one thread snapshots the element when the buffer changes
    in between; a value host code needs is read back); host stores into
    device buffers become a kernel of one thread (`HostAccesses.cpp`).
    Discardable `ga.*` attributes of the linalg op are copied to its loop, and
    `ga.kernel` names what the loop computes (`matmul`, `generic`, ...).
    Why not upstream's tile-and-fuse or atomics: docs/Rationale.md, "GPU
    loops: one strategy per op, exact by construction".

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

    With `fuse-rows=1`, softmax's three ops become one kernel:

    ```mlir
    linalg.generic {["parallel", "reduction"]} ins(%l) outs(%max)   // max
    linalg.generic {["parallel", "reduction"]} ins(%l, %max) outs(%sum)
    linalg.generic {["parallel", "parallel"]} ins(%l, %max, %sum) outs(%p)
    // becomes one kernel, thread i: max[i], then sum[i], then p[i, 0..n)
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
           /*default=*/"256",
           "Reductions at least this long into few outputs (fewer than 8192) "
           "are split over several threads per output: a kernel of partial "
           "results, then a kernel that combines them into the output; 0: "
           "never split. A reduction that heads a row kernel (fuse-rows) is "
           "split only from split-row-reduction-min on">,
    Option<"splitRowReductionMin", "split-row-reduction-min", "unsigned",
           /*default=*/"4096",
           "A reduction that would head a row kernel (fuse-rows: its "
           "consumers fused with it) is split instead when it is at least "
           "this long: splitting costs the fusion, so the bar is higher; 0: "
           "never">,
    Option<"fma", "fma", "bool", /*default=*/"false",
           "Allow fused multiply-add in the kernels' floating-point "
           "arithmetic (fastmath<contract>, like nvcc's -fmad=true): faster "
           "multiply-add chains, results no longer bitwise those of the "
           "unfused operations">,
    Option<"fuseRows", "fuse-rows", "bool", /*default=*/"false",
           "Fuse a reduction with one thread per output and the ops after it "
           "that read its result at their own row into one kernel with one "
           "thread per row">,
    Option<"fuseRowsMaxThreads", "fuse-rows-max-threads", "unsigned",
           /*default=*/"16384",
           "With fuse-rows: a consumer with more parallel iterations than "
           "this keeps its own kernel (its own threads)">,
    Option<"rowWarpMin", "row-warp-min", "unsigned", /*default=*/"32",
           "With fuse-rows: a row reduction at least this long over at least "
           "row-min-rows rows heads a row kernel with a warp per row (lanes striding "
           "the row, a tree reduction in shared memory), alone if nothing "
           "fuses with it, and is never split; 0: one thread per row "
           "(bitwise the unfused kernels)">,
    Option<"rowMinRows", "row-min-rows", "unsigned", /*default=*/"128",
           "The fewest rows for a warp or a block per row: fewer leave the "
           "GPU's multiprocessors (132 on an H100/H200) idle, and a split "
           "reduction serves them better">,
    Option<"rowBlockMin", "row-block-min", "unsigned", /*default=*/"1024",
           "With a warp per row: rows (the longest member's) at least this "
           "long get a block per row instead (the largest power of two up to "
           "block-size); 0: never">,
    Option<"fuseSiblings", "fuse-siblings", "bool", /*default=*/"false",
           "Element-wise ops and copies that follow each other and neither "
           "read nor write what another of them writes become one kernel "
           "(of the concatenation of their thread spaces); a fill and the "
           "copies into static slices of its buffer after it become one "
           "write of the buffer">,
    Option<"fuseSiblingsMaxThreads", "fuse-siblings-max-threads", "unsigned",
           /*default=*/"4194304",
           "With fuse-siblings: the bucket, the most threads of a kernel "
           "whose members have different thread spaces (a member of a "
           "thread space already in the kernel adds none); 0: only members "
           "of one thread space">
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "Mapped loops (future kernels) created">,
    Statistic<"numSelfCopies", "self-copies",
              "Copies of a view onto the same elements dropped (no kernel)">,
    Statistic<"numDeadWrites", "dead-writes",
              "Linalg ops that write only allocations nothing reads, erased "
              "(no kernel)">,
    Statistic<"numRowFused", "row-fused-ops",
              "Linalg ops fused into the kernel of a row reduction">,
    Statistic<"numSiblingFused", "sibling-fused-ops",
              "Element-wise ops and copies fused into the kernel of an "
              "independent sibling (fuse-siblings)">,
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
// GPUSingleStream
//===----------------------------------------------------------------------===//

def GPUSingleStream : Pass<"ga-gpu-single-stream", "ModuleOp"> {
  let summary = "Order all GPU work of a function on one stream, carried "
                "through loops, with host waits only where results are needed";
  let description = [{
    The stream stage of `--ga-lower-to-nvvm`, in place of upstream
    `gpu-async-region` (which starts a stream per block of launches and makes
    the host wait for it at the end of the block: once per micro-batch).
    Every synchronous op of a function that implements
    `gpu::AsyncOpInterface` (`gpu.launch_func`, `gpu.alloc`, `gpu.dealloc`,
    `gpu.memcpy`, `gpu.memset`, and the library ops `ga.blas_matmul` and
    `ga.nccl_all_reduce`) becomes asynchronous and depends on the previous one; one `gpu.wait async` starts the chain (one
    stream, `mgpuStreamCreate`), and `scf.for` loops carry the token as an
    iteration argument, so that the host enqueues every micro-batch without
    waiting. The host waits (`ga.stream_synchronize`, then
    `ga.stream_release`: `gpu.wait [%t]` would lower a token carried through
    a loop as an event) only
    before an op that needs the device's results: a host access to a buffer
    that a `gpu.memcpy` reads or writes (a read-back), a call of an external
    function or of a function with GPU work (a library on a stream of its
    own), the return. Other region ops with GPU work (`scf.if`)
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
    ga.stream_synchronize %t
    ga.stream_release %t
    return
    ```
  }];
  let statistics = [
    Statistic<"numAsyncOps", "async-ops", "GPU ops made asynchronous">,
    Statistic<"numStreams", "streams", "Streams started (gpu.wait async)">,
    Statistic<"numSynchronizations", "synchronizations",
              "Host waits for the stream">
  ];
  let dependentDialects = [
    "ga::GADialect", "gpu::GPUDialect", "func::FuncDialect"
  ];
}

//===----------------------------------------------------------------------===//
// DecomposeGroupedGather
//===----------------------------------------------------------------------===//

def DecomposeGroupedGather
    : Pass<"ga-decompose-grouped-gather", "func::FuncOp"> {
  let summary = "Decompose ga.grouped_matmul into linalg.generic gathers "
                "that the GPU loop mapping turns into kernels";
  let description = [{
    The GPU loop stage's form of `ga.grouped_matmul` (mixture-of-experts
    grouped products), on tensors, before `--ga-decompose-aggregated-ops`:
    the CPU's decomposition (an `scf.for` over the groups of products on
    slices of data-dependent size, a CBLAS call each) would put a host loop
    reading device data around the kernels. Here every form becomes
    `linalg.generic` ops with static iteration spaces, whose bodies read the
    row's group and gather the group's matrix element with `tensor.extract`:

    - the group of each row (i64, `E` for a row in no group): with
      `group_ids` the ids themselves (out of `[0, E)`: no group); with group
      ends, `min over g of (ends[g] > r ? g : E)` (a parallel-reduction
      generic over rows and groups, M·E work; the op's clamping and empty
      groups give the same partition);
    - the product (rows x N, reduction over K): `init[r, n] + sum_k
      lhs[r, k] * rhs[group(r), k, n]`, a row in no group adding zeros
      (work M·K·N, each row meets its own group's matrix only);
    - the weights' gradient (`transpose_lhs`, groups x K x N, reduction
      over the rows): `init[g, k, n] + sum_r (group(r) == g ? lhs[r, k] *
      rhs[r, n] : 0)` (work E·M·K·N: every group visits every row).

    Before:

    ```mlir
    %y = ga.grouped_matmul group_ids %x, %w ends %ids into %zero
        : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<12xi64> into tensor<12x16xf32>
    ```

    After (body abbreviated):

    ```mlir
    %y = linalg.generic {iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %ids : tensor<12x8xf32>, tensor<12xi64>) outs(%zero : tensor<12x16xf32>) {
    ^bb0(%a: f32, %g: i64, %acc: f32):
      // %in = 0 <= %g < 4, %gi = index of (%in ? %g : 0)
      %wv = tensor.extract %w[%gi, %k, %n] : tensor<4x8x16xf32>
      // %acc + (%in ? %a * %wv : 0)
    } -> tensor<12x16xf32>
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numDecomposed", "decomposed", "Grouped products decomposed">
  ];
}

//===----------------------------------------------------------------------===//
// MarkAccumulatingOps
//===----------------------------------------------------------------------===//

def MarkAccumulatingOps : Pass<"ga-mark-accumulating-ops", "ModuleOp"> {
  let summary = "Mark the linalg ops that update loop-carried accumulators";
  let description = [{
    The first step of `--ga-lower-to-gpu-loops`, on tensors: every linalg op
    whose init (an output it reads and updates) is a tensor iteration argument
    of an `scf.for` (the accumulators of the micro-batch loops) gets the unit
    attribute `ga.accumulates`. The attribute survives bufferization and the
    loop mapping (`--ga-linalg-to-gpu-loops` copies `ga.*` attributes onto the
    mapped loop, `--ga-contractions-to-cublaslt` onto the library call), and
    `--ga-place-buffers-on-device` names the kernel `..._acc`: the tests and
    `bench/gpu_report.py` check from the names that each accumulation stays
    inside the kernel that produces the micro-batch's contribution. Ops that
    only read an accumulator (as an input) are not marked.

    Before:

    ```mlir
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (tensor<16xf32>) {
      %s = linalg.reduce { arith.addf } ins(%x : tensor<8x16xf32>)
             outs(%acc : tensor<16xf32>) dimensions = [0]
      scf.yield %s : tensor<16xf32>
    }
    ```

    After:

    ```mlir
      %s = linalg.reduce { arith.addf } ins(%x : tensor<8x16xf32>)
             outs(%acc : tensor<16xf32>) dimensions = [0] {ga.accumulates}
    ```
  }];
  let statistics = [
    Statistic<"numMarked", "marked", "Linalg ops marked ga.accumulates">
  ];
}

//===----------------------------------------------------------------------===//
// WrapTensorBoundary
//===----------------------------------------------------------------------===//

def WrapTensorBoundary : Pass<"ga-wrap-tensor-boundary", "ModuleOp"> {
  let summary = "Call bufferized public functions through a wrapper with "
                "their tensor signature";
  let description = [{
    The last step of `--ga-lower-to-gpu-loops="tensor-boundary=1"`, for
    `ga-verify`, which runs tensor-level steps (through `--ga-lower-to-cpu`):
    every public function definition with a memref in its signature is
    renamed `@<name>__gpu_loops` and made private, and a new public `@<name>`
    with the same signature, memrefs replaced by tensors of the same shape and
    element type, calls it through `bufferization.to_buffer` and
    `bufferization.to_tensor` (`restrict writable`): the tool then runs
    exactly the mapped loops. Argument attributes move to the wrapper.
    Memrefs at the boundary must have the identity layout (what
    `--ga-lower-to-gpu-loops` bufferizes to); another layout, or an existing
    symbol named `@<name>__gpu_loops`, is an error at the function.

    Before:

    ```mlir
    func.func @step(%w: memref<4xf32>, %lr: f32) -> memref<4xf32> { ... }
    ```

    After:

    ```mlir
    func.func @step(%w: tensor<4xf32>, %lr: f32) -> tensor<4xf32> {
      %b = bufferization.to_buffer %w : tensor<4xf32> to memref<4xf32>
      %r = call @step__gpu_loops(%b, %lr) : (memref<4xf32>, f32) -> memref<4xf32>
      %t = bufferization.to_tensor %r restrict writable : memref<4xf32> to tensor<4xf32>
      return %t : tensor<4xf32>
    }
    func.func private @step__gpu_loops(%w: memref<4xf32>, %lr: f32) -> memref<4xf32> { ... }
    ```
  }];
  let statistics = [
    Statistic<"numWrapped", "wrapped", "Functions given a tensor wrapper">
  ];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// PlaceBuffersOnDevice
//===----------------------------------------------------------------------===//

def PlaceBuffersOnDevice : Pass<"ga-place-buffers-on-device", "ModuleOp"> {
  let summary = "Device allocations and copies for host buffers, kernel "
                "names for launches";
  let description = [{
    The step of `--ga-lower-to-nvvm` after the mapped loops became
    `gpu.launch` ops, before kernel outlining. In every function with device
    work (host helpers that only compare pointers, such as the
    `dealloc_helper` of ownership-based deallocation, are left alone):

    * `memref.alloc` / `memref.dealloc` on the host become `gpu.alloc` /
      `gpu.dealloc`, and a host `memref.copy` becomes `gpu.memcpy`, except
      for host-only buffers: allocations that only host code loads, stores,
      frees or hands to a host helper (the pointers and ownership flags of
      deallocation) stay host memory;
    * any other host load or store of a buffer that is not host memory
      (`memref.alloca`, `memref.get_global`, a host-only allocation) is an
      error, as is a host copy of a strided view: `--ga-linalg-to-gpu-loops`
      leaves neither;
    * every `gpu.launch` is named `@<func>_k<NN>_<what>[_acc]` in
      `@<func>_kernels` (program order; `<what>` from `ga.kernel`, `_acc`
      from `ga.accumulates`), so that `--gpu-kernel-outlining` outlines one
      GPU module per function with readable kernel names;
    * the discardable `ga.*` attributes of ops are dropped.

    Before:

    ```mlir
    func.func @step(%x: memref<64xf32>) {
      %t = memref.alloc() : memref<64xf32>
      gpu.launch blocks(...) in (...) threads(...) in (...) {
        ...
        gpu.terminator
      } {ga.kernel = "elementwise"}
      memref.copy %t, %x : memref<64xf32> to memref<64xf32>
      memref.dealloc %t : memref<64xf32>
      return
    }
    ```

    After:

    ```mlir
    func.func @step(%x: memref<64xf32>) {
      %t = gpu.alloc () : memref<64xf32>
      gpu.launch blocks(...) in (...) threads(...) in (...) {
        ...
        gpu.terminator
      } {function = @step_k00_elementwise, module = @step_kernels}
      gpu.memcpy %x, %t : memref<64xf32>, memref<64xf32>
      gpu.dealloc %t : memref<64xf32>
      return
    }
    ```
  }];
  let statistics = [
    Statistic<"numAllocs", "allocs", "Host allocations made device ones">,
    Statistic<"numCopies", "copies", "Host copies made gpu.memcpy">,
    Statistic<"numKernels", "kernels", "Launches named">
  ];
  let dependentDialects = ["gpu::GPUDialect"];
}

//===----------------------------------------------------------------------===//
// CheckCUDAToolkit
//===----------------------------------------------------------------------===//

def CheckCUDAToolkit : Pass<"ga-check-cuda-toolkit", "ModuleOp"> {
  let summary = "Check that libdevice can be found when kernels need it";
  let description = [{
    Kernels that use math functions (`math.exp`, `math.log`, `math.tanh`,
    ...) call libdevice, which NVVM serialization links from the CUDA
    toolkit named by `CUDA_ROOT`, `CUDA_HOME` or `CUDA_PATH` (Debian's MLIR
    has no built-in default). Without one of them ptxas fails much later with
    "Unresolved extern function '__nv_expf'". `--ga-lower-to-nvvm` runs this
    check before serialization: when none of the three variables is set
    (non-empty), the first `math` op inside a `gpu.module` is an error that
    says what is missing. The IR is not changed.

    Input (none of the variables set):

    ```mlir
    gpu.module @k {
      gpu.func @f(%x: f32) kernel {
        %e = math.exp %x : f32   // error: this kernel calls libdevice for 'math.exp': set CUDA_HOME ...
        gpu.return
      }
    }
    ```
  }];
}

//===----------------------------------------------------------------------===//
// OverlapAllReduce
//===----------------------------------------------------------------------===//

def OverlapAllReduce : Pass<"ga-overlap-all-reduce", "ModuleOp"> {
  let summary = "Issue each bucket's NCCL all-reduce in the last micro-batch, "
                "right after its last producer, on a communication stream";
  let description = [{
    Runs on the stream-threaded host code of a data-parallel step (after
    `--convert-ga-to-nccl` and `--ga-gpu-single-stream`), where every
    `ga.nccl_all_reduce` of a gradient bucket follows the micro-batch loop.
    For each, in program order:

    1. find the last op before it that may access the bucket (view roots,
       the alias analysis and the ops' memory effects; a call taking a
       pointer of unknown origin may point anywhere);
    2. if that op is the micro-batch `scf.for` (constant bounds, no host wait
       inside), peel its last iteration right after it and search again; the
       remaining loop keeps only stream-ordered work (a CUDA graph can still
       capture it);
    3. move the all-reduce right after that op (the views of its buffer
       cloned; all-reduces placed after one op keep their order, so the
       collectives run in bucket order on every rank); what followed its
       token on the step's stream follows its dependency;
    4. with `comm-stream=1`, order it on a communication stream forked from
       the step's stream (`ga.stream_wait`), and make the step's stream wait
       for the moved all-reduces (`ga.stream_wait`; the later ops are ordered
       after its token) before the first later op that may access a moved
       bucket, waits for the host, has regions, or ends the block; the
       communication stream is then released (`ga.stream_release`). No host
       synchronization is added.

    All-reduces after different loops (a statistics loop's counts, then the
    gradient buckets) are separate runs, each with its own stream and join.
    A bucket whose loop cannot be peeled stays where it is, with a remark.
    An all-reduce not ordered on a stream (the pass ran before
    `--ga-gpu-single-stream`) is an error. Why the last micro-batch:
    docs/Distributed.md.

    Before (after `--ga-gpu-single-stream`):

    ```mlir
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@dw2_acc ... args(%bucket_view0 : ...)
      %b = gpu.launch_func async [%a] @k::@dx ... args(...)
      %c = gpu.launch_func async [%b] @k::@dw1_acc ... args(%bucket_view1 : ...)
      scf.yield %c : !gpu.async.token
    }
    %r = ga.nccl_all_reduce async [%t] %bucket {datatype = 7 : i32, reduction = 4 : i32} : memref<...>
    %u = gpu.launch_func async [%r] @k::@update ... args(%bucket_view1 : ...)
    ```

    After:

    ```mlir
    %t0 = scf.for %i = %c0 to %c3 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      ...  // unchanged body
    }
    %a = gpu.launch_func async [%t0] @k::@dw2_acc ... args(%bucket_view0 : ...)
    %b = gpu.launch_func async [%a] @k::@dx ... args(...)
    %c = gpu.launch_func async [%b] @k::@dw1_acc ... args(%bucket_view1 : ...)
    %comm = gpu.wait async
    %f = ga.stream_wait async [%comm, %c]
    %r = ga.nccl_all_reduce async [%f] %bucket {datatype = 7 : i32, reduction = 4 : i32} : memref<...>
    %j = ga.stream_wait async [%c, %r]
    ga.stream_release %comm
    %u = gpu.launch_func async [%j] @k::@update ... args(%bucket_view1 : ...)
    ```
  }];
  let options = [
    Option<"commStream", "comm-stream", "bool", /*default=*/"true",
           "Enqueue the moved all-reduces on a communication stream forked "
           "from the step's stream by events (false: on the step's stream, "
           "ordered with the backward kernels)">
  ];
  let statistics = [
    Statistic<"numPeeledLoops", "peeled-loops",
              "Micro-batch loops whose last iteration was peeled">,
    Statistic<"numMovedAllReduces", "moved-all-reduces",
              "All-reduces moved into the last micro-batch">,
    Statistic<"numLeftAllReduces", "left-all-reduces",
              "All-reduces left after the loop (with a remark)">
  ];
  let dependentDialects = [
    "arith::ArithDialect", "func::FuncDialect", "ga::GADialect",
    "gpu::GPUDialect", "LLVM::LLVMDialect", "scf::SCFDialect"
  ];
}

//===----------------------------------------------------------------------===//
// DeviceIterationIndex
//===----------------------------------------------------------------------===//

def DeviceIterationIndex : Pass<"ga-device-iteration-index", "func::FuncOp"> {
  let summary = "Make the body of a micro-batch loop of mapped kernels the "
                "same in every iteration: the index lives in a device buffer";
  let description = [{
    The first half of CUDA graph capture (`--ga-capture-cuda-graphs` is the
    second), on mapped loops, after `--ga-linalg-to-gpu-loops`: the form
    that runs on the CPU, so that `ga-verify` checks it. For every `scf.for`
    whose body holds mapped `scf.parallel` loops (kernels), the induction
    variable moves into a 0-d `i64` buffer: a kernel of one thread sets it
    to the lower bound before the loop, and one at the end of the body adds
    the step. What a kernel received from the induction variable (a
    `memref.subview` of a per-sample argument at the micro-batch's offset,
    index math) is recomputed at the start of the kernel from a load of that
    buffer (pure ops without regions only). A view that the host hands to a
    library op (stream-ordered work outside the kernels, `ga.blas_matmul`,
    whose pointers a graph would keep) is staged instead: a copy kernel that reads the index copies the slice into
    a buffer of its own, allocated before the loop, and the call reads that
    buffer; only views of static shape that nothing in the loop writes (by
    the memory effects of its ops) are staged (else a remark says why). A loop whose body would still depend on
    the induction variable after this (a kernel's grid, an allocation's
    size, a view a call writes or of dynamic shape) is left as it is: no
    graph will record it (`--ga-capture-cuda-graphs` says why), and the index
    stays on the host instead of costing a kernel per iteration.

    Before:

    ```mlir
    scf.for %i = %c0 to %c4 step %c1 {
      %o = arith.muli %i, %c6 : index
      %x = memref.subview %arg[%o, 0] [6, 16] [1, 1] : ...
      scf.parallel (%b, %t) = ... { ... memref.load %x[...] ... }
        {mapping = [...]}
    }
    ```

    After:

    ```mlir
    %idx = memref.alloc() : memref<i64>
    scf.parallel ... { memref.store %lb, %idx[] }  // one thread
    scf.for %i = %c0 to %c4 step %c1 {
      scf.parallel (%b, %t) = ... {
        %v = memref.load %idx[] : memref<i64>
        %j = arith.index_cast %v : i64 to index
        %o = arith.muli %j, %c6 : index
        %x = memref.subview %arg[%o, 0] [6, 16] [1, 1] : ...
        ... memref.load %x[...] ...
      } {mapping = [...]}
      scf.parallel ... { %idx[] = %idx[] + step }  // one thread
    }
    ```
  }];
  let statistics = [
    Statistic<"numLoops", "loops", "Loops given a device iteration index">,
    Statistic<"numSunk", "rematerialized",
              "Kernels that recompute values of the index">,
    Statistic<"numStaged", "staged",
              "Views staged into fixed buffers for library calls">
  ];
  let dependentDialects = [
    "arith::ArithDialect", "gpu::GPUDialect", "memref::MemRefDialect",
    "scf::SCFDialect"
  ];
}

//===----------------------------------------------------------------------===//
// CaptureCudaGraphs
//===----------------------------------------------------------------------===//

def CaptureCudaGraphs : Pass<"ga-capture-cuda-graphs", "ModuleOp"> {
  let summary = "Capture the body of a micro-batch loop on one stream as a "
                "CUDA graph and launch it once per iteration";
  let description = [{
    After `--ga-gpu-single-stream`. A host `scf.for` that carries only the
    step's stream token and whose body is the same in every iteration (no
    value depends on the induction variable: `--ga-device-iteration-index`
    made it so) and only enqueues work on that stream (ops that implement
    `gpu::AsyncOpInterface`, chained by their tokens, whose memory effects
    are on device buffers: `gpu.launch_func`, `gpu.memset`, `gpu.memcpy`
    between device buffers, `ga.blas_matmul`) besides pure host ops,
    becomes: a `ga.graph_capture` on the stream whose body is the loop's
    body once (recorded, not executed) and whose results are the
    instantiated graph and the stream after it, a loop of the same bounds
    whose body is one `ga.graph_launch` on the stream, and `ga.graph_destroy`
    after it (the driver frees an executable graph in flight when it
    completes). A loop of two or more remainder micro-batches is a loop too and
    gets a graph of its own; a loop that runs once (N = 1, a remainder of one
    micro-batch) is left alone: a graph replayed once would only add its
    capture and instantiation to the launches it replaces. A body that cannot be captured is left as it is, with
    a remark that names the op and the reason: a host synchronization or
    read-back, a host access to memory, an allocation or free, nested
    control flow (but a nested loop that carries the stream's token through
    capturable work, with bounds independent of the micro-batch, is recorded
    with the body; loops are tried outermost first), a call not ordered on
    the stream, a value that depends on
    the induction variable (a kernel grid sized by a dynamic micro-batch).

    Before:

    ```mlir
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %s) -> (!gpu.async.token) {
      %a = gpu.launch_func async [%d] @k::@a ...
      %b = gpu.launch_func async [%a] @k::@b ...
      scf.yield %b : !gpu.async.token
    }
    ```

    After:

    ```mlir
    %g, %e = ga.graph_capture async [%s] {
      %a = gpu.launch_func async [%s] @k::@a ...
      %b = gpu.launch_func async [%a] @k::@b ...
      ga.graph_yield %b
    }
    %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %e) -> (!gpu.async.token) {
      %r = ga.graph_launch async [%d] %g
      scf.yield %r : !gpu.async.token
    }
    ga.graph_destroy %g : !llvm.ptr
    ```

    `--ga-lower-library-ops` makes these ops the mgpuGraph* calls of
    lib/Runtime/CUDA.
  }];
  let statistics = [
    Statistic<"numCaptured", "loops-captured", "Loops captured as a graph">,
    Statistic<"numLeft", "loops-left",
              "Loops with GPU work left uncaptured (with a remark)">,
    Statistic<"numOnce", "loops-once",
              "Loops that run once, launched directly (no graph)">
  ];
  let dependentDialects = [
    "func::FuncDialect", "gpu::GPUDialect", "LLVM::LLVMDialect",
    "ga::GADialect"
  ];
}

def GPUKernelReport : Pass<"ga-gpu-kernel-report", "ModuleOp"> {
  let summary = "Print static figures of the mapped GPU kernels and the "
                "checks of a step at scale";
  let description = [{
    A test pass (it changes nothing) over the mapped-loop form of a step
    (`--ga-lower-to-gpu-loops` with `library-calls=0`: every kernel an
    outermost `scf.parallel` mapped to blocks and threads, every matrix
    product a `ga.blas_matmul`, whose shape and types it reads). It
    prints, per function with kernels, a markdown table with one line per
    kernel and library call: its threads, the longest walk one of its
    threads makes alone (the product of the trip counts of the `scf.for`
    loops around a load), the bytes of the distinct buffers it touches (each
    once, at its static size), its floating-point operations (2 m n k for a
    product), the types of a library call, and a roofline estimate against an
    H200 (4.8 TB/s; 989 TFLOP/s dense bf16 for bf16 products, 67 TFLOP/s
    fp32 otherwise); then the kernels per micro-batch (and per layer) and
    the checks: no thread walks more than `max-alone` elements alone; every
    product a library call; no allocation with two dimensions of `seq`
    elements (attention scores [B, H, T, T]); at most one allocation of
    `tokens` x `vocab` elements or more with a `vocab` dimension (the
    logits). Each check prints PASS or FAIL. docs/GPU.md ("Static check at
    GPT-2 scale") has the table for GPT-2-124M's widths.

    `format=json` prints one JSON object instead (docs/GPU.md, "The kernel
    report as JSON"): the same figures per function, and, read from the ops
    of any later form, the launch structure: kernels (`gpu.func`) with the
    parameters they load and store, host buffers, launches and library
    products in program order with the outermost micro-batch loop or graph
    capture around each, memcpys in loops, host synchronizations, and the
    PTX of each `gpu.binary` with instruction counts per launched kernel.

    Before (the form of `--ga-lower-to-gpu-loops`):

    ```mlir
    scf.parallel (%b) = (%c0) to (%c1024) step (%c1) {
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) { ... }
    } {ga.cooperative, ga.kernel = "reduce_rows_block", mapping = [...]}
    ```

    After: the same IR; printed:

    ```
    | # | kernel | in loop | threads | alone | MB | GFLOP | types | us |
    | 0 | reduce_rows_block | yes | 262144 | 4 | 8.389 | 0.004 | - | 1.75 |
    check no thread walks more than 256 elements alone: PASS
    ```
  }];
  let options = [
    Option<"seq", "seq", "int64_t", /*default=*/"0",
           "The sequence length T: allocations with two dimensions of T "
           "elements fail the T x T check (0: no check)">,
    Option<"vocab", "vocab", "int64_t", /*default=*/"0",
           "The vocabulary: allocations with a dimension of this size and at "
           "least tokens x vocab elements are copies of the logits">,
    Option<"tokens", "tokens", "int64_t", /*default=*/"0",
           "Tokens per micro-batch (for the logits check)">,
    Option<"layers", "layers", "unsigned", /*default=*/"0",
           "Layers of the model, for kernels per layer (0: not printed)">,
    Option<"maxAlone", "max-alone", "unsigned", /*default=*/"256",
           "The longest walk a thread may make alone">,
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "text (the tables and checks) or json (the same figures, and the "
           "launch structure of a kernel-stage or PTX module)">
  ];
}

#endif // GA_CODEGEN_GPU_PASSES_TD
