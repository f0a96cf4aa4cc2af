//===- Passes.td - conversions of ga collectives -----------*- tablegen -*-===//

#ifndef GA_CONVERSION_PASSES_TD
#define GA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// ConvertGAToMPI
//===----------------------------------------------------------------------===//

def ConvertGAToMPI : Pass<"convert-ga-to-mpi", "ModuleOp"> {
  let summary = "Lower data-parallel all-reduces to the upstream `mpi` "
                "dialect (MPI_Allreduce in place on MPI_COMM_WORLD)";
  let description = [{
    Lowers every `ga.all_reduce` and every `shard.all_reduce` over all axes
    of its grid (the data-parallel group is the whole job) to one in-place
    `mpi.allreduce` on `MPI_COMM_WORLD`. It runs on tensors, before
    bufferization: the reduced tensor becomes a buffer with
    `bufferization.to_buffer`, is reduced in place, and the result is that
    buffer again (`bufferization.to_tensor restrict writable`).

    In place is only safe when nothing else can see the buffer. The pass
    proves it for accumulators: a result of `scf.for` (chains of loops
    included) with no other use, started from a `linalg.fill` of a
    `tensor.empty`, which the pass makes private to the loop when it is
    shared. That is the form of every gradient after `--ga-accumulate`, and
    of every bucket after `--ga-bucket-gradients`, so after one-shot
    bufferization the collective runs on the accumulation buffer itself, with
    no copy. Any other input is first copied into a fresh tensor
    (`bufferization.alloc_tensor() copy(...)`).

    * `sum`, `max`, `min` (and `shard` `product`, `bitwise_*`) map to the MPI
      reduction; `mean` (`shard` `average`) is a sum divided by the world size
      (`mpi.comm_size`), in place.
    * `ga.all_reduce` ops that share a `bucket` id in one block become one
      collective over a packed buffer (a copy in and out; use
      `--ga-bucket-gradients` to avoid it).
    * A `shard.grid` with a static shape must match the number of ranks: the
      function checks it at run time (`cf.assert`) before its first
      collective. Grids no longer referenced are erased.
    * Element types: f32, f64 and signless integers of 8 to 64 bits (what
      MLIR 22's MPI-to-LLVM lowering knows); others are an error.
    * The buffer handed to MPI is 1-d (`memref.collapse_shape`): MLIR 22's
      lowering of `mpi.allreduce` passes the first dimension as the count.

    Once per process: the pass adds `func.func @ga_mpi_init()` and
    `@ga_mpi_finalize()` (callable from C), which call `MPI_Init` /
    `MPI_Finalize` unless MPI is already initialized / finalized; with
    `entry=<name>`, that function calls them at its start and before each
    return instead (a `main` run by `mlir-runner`). The module gets the
    attribute `dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">` that
    selects the ABI of the lowering to LLVM.

    Before:

    ```mlir
    %r = ga.all_reduce <mean> %acc bucket 0 : tensor<874xf32>
    ```

    After:

    ```mlir
    %m = bufferization.to_buffer %acc : tensor<874xf32> to memref<874xf32>
    %comm = mpi.comm_world : !mpi.comm
    mpi.allreduce(%m, %m, MPI_SUM, %comm) : memref<874xf32>, memref<874xf32>
    %t = bufferization.to_tensor %m restrict writable
        : memref<874xf32> to tensor<874xf32>
    %size = mpi.comm_size(%comm) : i32
    %n = arith.sitofp %size : i32 to f32
    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]} outs(%t : tensor<874xf32>) {
    ^bb0(%x: f32):
      %q = arith.divf %x, %n : f32
      linalg.yield %q : f32
    } -> tensor<874xf32>
    ```
  }];
  let options = [
    Option<"implementation", "implementation", "std::string",
           /*default=*/"\"MPICH\"",
           "MPI ABI recorded in the module's dlti.map (MPICH or OpenMPI; "
           "MLIR 22 mis-lowers OpenMPI reductions)">,
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Function that initializes and finalizes MPI itself (default: "
           "none; call ga_mpi_init/ga_mpi_finalize)">
  ];
  let statistics = [
    Statistic<"numCollectives", "collectives", "MPI_Allreduce calls emitted">,
    Statistic<"numInPlace", "in-place",
              "Collectives on their accumulator, without a copy">,
    Statistic<"numCopied", "copied",
              "Collectives whose input had to be copied first">
  ];
  let dependentDialects = [
    "mpi::MPIDialect", "bufferization::BufferizationDialect",
    "memref::MemRefDialect", "linalg::LinalgDialect", "arith::ArithDialect",
    "cf::ControlFlowDialect", "scf::SCFDialect", "LLVM::LLVMDialect",
    "DLTIDialect"
  ];
}

//===----------------------------------------------------------------------===//
// LowerMPICommSize
//===----------------------------------------------------------------------===//

def LowerMPICommSize : Pass<"ga-lower-mpi-comm-size", "ModuleOp"> {
  let summary = "Lower `mpi.comm_size` to a call of MPI_Comm_size";
  let description = [{
    MLIR 22's `mpi` to LLVM lowering (part of `--convert-to-llvm`) has no
    pattern for `mpi.comm_size`, which the `mean` reductions of
    `--convert-ga-to-mpi` use for the world size. This pass lowers it, and
    the `mpi.comm_world` it reads, to LLVM calls for the ABI selected by the
    module's `dlti.map` ("MPI:Implementation", MPICH by default); the other
    `mpi` ops are left to `--convert-to-llvm`.

    Before:

    ```mlir
    %comm = mpi.comm_world : !mpi.comm
    %size = mpi.comm_size(%comm) : i32
    ```

    After (MPICH):

    ```mlir
    %c = llvm.mlir.constant(1140850688 : i64) : i64   // MPI_COMM_WORLD
    %h = llvm.trunc %c : i64 to i32
    %p = llvm.alloca %one x i32 : (i32) -> !llvm.ptr
    %rc = llvm.call @MPI_Comm_size(%h, %p) : (i32, !llvm.ptr) -> i32
    %size = llvm.load %p : !llvm.ptr -> i32
    ```
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// ConvertGAToNCCL
//===----------------------------------------------------------------------===//

def ConvertGAToNCCL : Pass<"convert-ga-to-nccl", "ModuleOp"> {
  let summary = "Lower data-parallel all-reduces, reduce-scatters and "
                "all-gathers to in-place NCCL library ops on their buffers";
  let description = [{
    The GPU counterpart of `--convert-ga-to-mpi`: every `ga.all_reduce` and
    every `shard.all_reduce` over a whole grid becomes one
    `ga.nccl_all_reduce` in place on the accumulator's buffer (same in-place
    rules, same `to_buffer`/`to_tensor` form as the MPI lowering), with
    NCCL's own `ncclDataType_t` / `ncclRedOp_t` codes; `mean` is NCCL's
    `ncclAvg`, so no world size is needed, and f16/bf16 are supported.

    ```mlir
    // before
    %r = ga.all_reduce <mean> %acc bucket 0 : tensor<4x3xf32>
    // after
    %buf = bufferization.to_buffer %acc : tensor<4x3xf32> to memref<4x3xf32>
    %flat = memref.collapse_shape %buf [[0, 1]] : memref<4x3xf32> into memref<12xf32>
    ga.nccl_all_reduce %flat {datatype = 7 : i32, reduction = 4 : i32} : memref<12xf32>
    %r = bufferization.to_tensor %buf restrict writable : memref<4x3xf32> to tensor<4x3xf32>
    ```

    The collectives of sharded steps (`ga.reduce_scatter`, `ga.all_gather`)
    become NCCL's in-place `ga.nccl_reduce_scatter` / `ga.nccl_all_gather`
    on a buffer of the whole tensor, this rank's part a view of it: the
    reduce-scatter reduces the input's buffer (the accumulator itself when
    private) and reads back this rank's rows; the all-gather writes this
    rank's rows into a new buffer that NCCL completes.

    ```mlir
    // before (rank 1 of 2)
    %g = ga.reduce_scatter <sum> %acc shard 1 of 2 : tensor<4x3xf32> -> tensor<2x3xf32>
    // after
    %buf = bufferization.to_buffer %acc : tensor<4x3xf32> to memref<4x3xf32>
    %flat = memref.collapse_shape %buf [[0, 1]] : memref<4x3xf32> into memref<12xf32>
    %mine = memref.subview %flat[6] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: 6>>
    ga.nccl_reduce_scatter %flat, %mine {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64}
        : memref<12xf32>, memref<6xf32, strided<[1], offset: 6>>
    %t = bufferization.to_tensor %buf restrict writable : memref<4x3xf32> to tensor<4x3xf32>
    %g = tensor.extract_slice %t[2, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
    ```

    NCCL's parts are equal, while rank r of W holds the rows
    [r D / W, (r + 1) D / W) of D rows (uneven when W does not divide D, the
    host collectives' layout, kept so that a rank's shard is the same on
    both targets). Such a collective works on a padded buffer of W parts of
    ceil(D / W) rows each: rank q's rows at the start of part q, the rest of
    the part zero. The reduce-scatter copies the input into it part by part
    and reads back the start of this rank's part; the all-gather writes this
    rank's rows at the start of its part and copies every rank's rows out of
    the gathered buffer into the whole tensor. No padding row is read by
    anything but NCCL.

    ```mlir
    // before (rank 1 of 2, 3 rows: rank 0 holds row 0, rank 1 rows 1 and 2)
    %w = ga.all_gather %mine shard 1 of 2 : tensor<2x4xf32> -> tensor<3x4xf32>
    // after
    %pad = bufferization.alloc_tensor() : tensor<4x4xf32>
    %in = tensor.insert_slice %mine into %pad[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
    %buf = bufferization.to_buffer %in : tensor<4x4xf32> to memref<4x4xf32>
    %flat = memref.collapse_shape %buf [[0, 1]] : memref<4x4xf32> into memref<16xf32>
    %part = memref.subview %flat[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
    ga.nccl_all_gather %part, %flat {datatype = 7 : i32, world = 2 : i64}
        : memref<8xf32, strided<[1], offset: 8>>, memref<16xf32>
    %t = bufferization.to_tensor %buf restrict writable : memref<4x4xf32> to tensor<4x4xf32>
    %whole = bufferization.alloc_tensor() : tensor<3x4xf32>
    %r0 = tensor.extract_slice %t[0, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<1x4xf32>
    %w0 = tensor.insert_slice %r0 into %whole[0, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<3x4xf32>
    %r1 = tensor.extract_slice %t[2, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
    %w = tensor.insert_slice %r1 into %w0[1, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<3x4xf32>
    ```

    The ops are synchronous (the runtime waits for the device) until
    `--ga-gpu-single-stream` orders them on the step's stream;
    `--ga-lower-library-ops` makes it a call of `gaNcclAllReduce` (lib/Runtime/NCCL).
    The buffer must be device memory when the call runs: this pass belongs
    to a GPU lowering in which the accumulators live on the device.
  }];
  let statistics = [
    Statistic<"numCollectives", "collectives",
              "NCCL collective ops emitted">,
    Statistic<"numPadded", "padded",
              "Reduce-scatters and all-gathers on a padded buffer (uneven "
              "rows)">
  ];
  let dependentDialects = [
    "bufferization::BufferizationDialect", "memref::MemRefDialect",
    "linalg::LinalgDialect", "arith::ArithDialect", "gpu::GPUDialect",
    "func::FuncDialect", "tensor::TensorDialect", "ga::GADialect"
  ];
}

//===----------------------------------------------------------------------===//
// ConvertGAToHostCollectives
//===----------------------------------------------------------------------===//

def ConvertGAToHostCollectives
    : Pass<"convert-ga-to-host-collectives", "ModuleOp"> {
  let summary = "Lower data-parallel collectives to start/wait ops on the "
                "buffers that a host runtime hands to the program's engine";
  let description = [{
    For programs whose communication engine is their own (the PyTorch
    frontend: torch.distributed with gloo or NCCL). Every `ga.all_reduce`
    (one per bucket after `--ga-bucket-gradients`) and every
    `shard.all_reduce` over a whole grid becomes, in place on the
    accumulator's buffer (the same in-place rules and `to_buffer`/`to_tensor`
    form as `--convert-ga-to-mpi`), a `ga.host_collective_start` where the
    collective was (right after the micro-batch loop that produced the
    bucket), and a `ga.host_collective_wait` followed by the read-back of
    the reduced tensor before the first op that reads it (views of the
    bucket's gradients move down with it). Everything in between overlaps
    the collective. `datatype`: 0 f32, 1 f64, 2 f16, 3 bf16, 4 i8, 5 i16,
    6 i32, 7 i64; `reduction`: 0 sum, 1 mean, 2 max, 3 min; `id` numbers the
    collectives of the module in order.

    ZeRO-1's and FSDP's `ga.reduce_scatter` and `ga.all_gather`
    (`--ga-shard-optimizer`, `--ga-shard-parameters`) become the same ops
    with `rows`, on a buffer of the whole tensor of `rows` rows: the
    reduce-scatter reduces the accumulator's buffer in place (this rank's
    rows are read back); the all-gather starts on a new buffer from this
    rank's rows (`input`, written at `input_offset`; the engine fills in the
    others). Their ids follow the all-reduces'.

    The ops are memref ops that declare their effects: after bufferization
    their buffers live from the start to the wait, which deallocation and
    `--ga-share-buffers` see (a gathered parameter's buffer is shared with
    temporaries dead before it). `--ga-lower-host-collectives` makes them
    the runtime's calls at the end of bufferization.

    Before:

    ```mlir
    %r:2 = scf.for ... -> (tensor<4096xf32>, tensor<f32>)
    %g = ga.all_reduce <sum> %r#0 bucket 0 : tensor<4096xf32>
    %w = tensor.extract_slice %g[0] [1024] [1] : tensor<4096xf32> to tensor<1024xf32>
    %n = ... %r#1 ...                   // does not read the bucket
    %u = linalg.generic ... ins(%w ...) // the optimizer
    ```

    After:

    ```mlir
    %r:2 = scf.for ... -> (tensor<4096xf32>, tensor<f32>)
    %b = bufferization.to_buffer %r#0 : tensor<4096xf32> to memref<4096xf32>
    ga.host_collective_start %b {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32} : memref<4096xf32>
    %n = ... %r#1 ...
    ga.host_collective_wait %b {id = 0 : i64} : memref<4096xf32>
    %g = bufferization.to_tensor %b restrict writable : memref<4096xf32> to tensor<4096xf32>
    %w = tensor.extract_slice %g[0] [1024] [1] : tensor<4096xf32> to tensor<1024xf32>
    %u = linalg.generic ... ins(%w ...)
    ```
  }];
  let statistics = [
    Statistic<"numCollectives", "collectives",
              "ga.host_collective_start ops emitted">
  ];
  let dependentDialects = [
    "bufferization::BufferizationDialect", "memref::MemRefDialect",
    "linalg::LinalgDialect", "arith::ArithDialect", "tensor::TensorDialect",
    "ga::GADialect"
  ];
}

def LowerHostCollectives : Pass<"ga-lower-host-collectives", "ModuleOp"> {
  let summary = "Lower the host collectives' start/wait ops on buffers to "
                "the host runtime's calls";
  let description = [{
    The last step of `--convert-ga-to-host-collectives`, run on buffers
    after deallocation and `--ga-share-buffers` (in `--ga-lower-to-cpu`,
    before the loops): `ga.host_collective_start` becomes

    ```c
    int32_t gaHostAllReduceStart(void *buffer, int64_t count, int32_t dtype,
                                 int32_t op, int64_t id);
    int32_t gaHostShardedStart(void *buffer, int64_t count, int32_t dtype,
                               int32_t op, int64_t id, int32_t kind,
                               int64_t rows);
    ```

    (the second with `rows`: kind 0 a reduce-scatter, kind 1 an all-gather,
    whose `input` is first copied into its rows of the buffer), and
    `ga.host_collective_wait` becomes `int32_t gaHostAllReduceWait(int64_t
    id)`. The runtime (`libGAHostCollectives.so`,
    lib/Runtime/HostCollectives) forwards the calls to callbacks registered
    with `gaHostCollectivesRegister`. The status of the calls is the
    runtime's to report: the PyTorch frontend raises the engine's error
    after the call.

    Before:

    ```mlir
    ga.host_collective_start %b {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32} : memref<4096xf32>
    ga.host_collective_wait %b {id = 0 : i64} : memref<4096xf32>
    ```

    After:

    ```mlir
    %p = llvm.inttoptr %a : i64 to !llvm.ptr   // the first element's address
    %s = func.call @gaHostAllReduceStart(%p, %c4096, %c0_i32, %c0_i32, %c0) : (!llvm.ptr, i64, i32, i32, i64) -> i32
    %t = func.call @gaHostAllReduceWait(%c0) : (i64) -> i32
    ```
  }];
  let statistics = [
    Statistic<"numCalls", "calls", "runtime calls emitted">
  ];
  let dependentDialects = [
    "memref::MemRefDialect", "arith::ArithDialect", "func::FuncDialect",
    "LLVM::LLVMDialect"
  ];
}

//===----------------------------------------------------------------------===//
// ConvertLinalgToBLAS
//===----------------------------------------------------------------------===//

def ConvertLinalgToBLAS : Pass<"convert-linalg-to-blas", "ModuleOp"> {
  let summary = "Rewrite f32/f64 matrix products on buffers into CBLAS gemm "
                "calls";
  let description = [{
    Rewrites matrix products on buffers into CBLAS calls:
    `cblas_sgemm(RowMajor, transA, transB, M, N, K, 1, A, lda, B, ldb, beta,
    C, ldc)` (`cblas_dgemm` for f64), declaring the function once per module.
    Linalg contractions accumulate into their init (C += A B), which is BLAS
    with beta = 1: an accumulator that the micro-batch rewrite fused into a
    GEMM stays fused. When C was just filled with +0.0 (the fill precedes the
    product with only side-effect-free ops in between, or C is a buffer of its
    own that nothing else touches in between), the fill is dropped and
    beta = 0 (C = A B): BLAS then neither reads C nor needs it written first.

    Handled: what `matchGemm` takes (include/ga/Utils/Gemm.h, shared with
    `--ga-contractions-to-cublaslt`): `linalg.matmul` (also with transposing
    indexing maps) and any linalg contraction with one M, one N and one K
    dimension, a multiply-add body, one element type (f32 or f64) and 2-d
    operands whose innermost stride is 1; a matrix-vector product (a GEMM
    with N = 1 or M = 1); and a batched product (one more dimension,
    outermost in all three operands, e.g. `linalg.batch_matmul`) as an
    `scf.for` over the batch with one gemm call per matrix, at the batch
    strides of the operands (CBLAS has no strided-batched gemm, and Debian's
    OpenBLAS 0.3.21 exports no `cblas_sgemm_batch`). Everything else is left
    unchanged for the loop lowering.

    With `avoid-allocating-kernels` (the default), a product that OpenBLAS
    may compute by allocating memory in the call is left to the loop
    lowering too, so that what a step holds is what its memory report
    says. On CPUs with AVX-512, OpenBLAS runs products of at most 10^6
    multiply-adds through "small-matrix" kernels; the one for untransposed
    operands mallocs a copy of A's last rows when N mod 16 is 1 to 8 (f32;
    N mod 8 is 1 to 4 for f64) and K >= 32 (f32; 16 for f64). These are
    small products (a 6 x 8 x 36 one in a CNN's step), so the loops cost
    little; OpenBLAS's AVX-512 kernels, which run the large products twice
    as fast as its AVX2 ones on such CPUs, can then be used. A size that is
    not static counts as one that may allocate.

    With `parallel-blocks` = P > 1 (`--ga-lower-to-cpu openmp=1
    num-threads=P` sets it), a product of at least `min-parallel-work`
    multiply-adds (batch x M x N x K; a dynamic size counts as large) runs on
    P threads as an `scf.parallel`: a batched one over its matrices, an
    unbatched one as P calls, each on a block of C's rows (M >= N) or columns
    (A's rows or B's columns with it). The products then run on the same
    OpenMP threads as the step's loops, one pool instead of two that take
    the cores from each other; the CBLAS must then run each call on one
    thread (`OPENBLAS_NUM_THREADS=1`, which the PyTorch frontend's loader
    sets for such a step). The blocks partition C, so the result is the
    sequential call's, up to the summation order inside the library.

    The pass fails only where the module has a symbol
    named `cblas_sgemm` or `cblas_dgemm` that is not a function of the CBLAS
    type (an error at it). Link the result with a CBLAS
    (OpenBLAS, or Debian's libblas.so.3).

    Before:

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
    linalg.matmul ins(%a, %b : memref<4x5xf32>, memref<5x3xf32>)
                  outs(%c : memref<4x3xf32>)
    ```

    After (pointers and leading dimensions from
    `memref.extract_strided_metadata`):

    ```mlir
    func.func private @cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr,
                                   i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
    func.call @cblas_sgemm(%c101, %c111, %c111, %m, %n, %k, %one, %pa, %lda,
                           %pb, %ldb, %zero, %pc, %ldc) : (...) -> ()
    ```
  }];
  let options = [
    Option<"parallelBlocks", "parallel-blocks", "unsigned", /*default=*/"0",
           "Threads to split each large product over as an scf.parallel (0 "
           "or 1: one call on the calling thread)">,
    Option<"minParallelWork", "min-parallel-work", "uint64_t",
           /*default=*/"32768",
           "With parallel-blocks, the multiply-adds below which a product "
           "stays one call">,
    Option<"avoidAllocatingKernels", "avoid-allocating-kernels", "bool",
           /*default=*/"true",
           "Leave to the loops the products that OpenBLAS's AVX-512 "
           "small-matrix kernels compute with a malloc'ed buffer">
  ];
  let statistics = [
    Statistic<"numConverted", "converted", "Contractions rewritten into gemm "
              "calls">,
    Statistic<"numParallel", "parallel", "Products among them split over "
              "parallel-blocks threads (an scf.parallel)">,
    Statistic<"numBatched", "batched", "Batched contractions among them (a "
              "loop of gemm calls)">,
    Statistic<"numKeptInLoops", "kept-in-loops", "Products left to the "
              "loops because OpenBLAS may allocate in their calls">
  ];
  let dependentDialects = ["LLVM::LLVMDialect", "memref::MemRefDialect",
                           "arith::ArithDialect", "func::FuncDialect",
                           "scf::SCFDialect"];
}

#endif // GA_CONVERSION_PASSES_TD
