//===- GALibraryOps.td - library calls of the GPU lowering -*- tablegen -*-===//
//
// The library work that the GPU lowering hands to cuBLASLt and NCCL, as ops on
// memrefs that implement upstream's async-ordering (gpu::AsyncOpInterface)
// and memory-effect interfaces: the stream and graph passes order and record
// them as they do gpu.launch_func, and ask them what they read and write.
// The CUDA graphs and the streams' waits and releases are ops too.
// --ga-lower-library-ops turns them into the runtime calls of
// include/ga-runtime/GARuntimeABI.h at the end of the GPU lowering.
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GALIBRARYOPS_TD
#define GA_IR_GALIBRARYOPS_TD

include "ga/IR/GADialect.td"
include "mlir/Dialect/GPU/IR/GPUBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def GA_BlasFloat : AnyTypeOf<[F32, F16, BF16]>;

def GA_BlasMatmulOp : Op<GA_Dialect, "blas_matmul",
    [GPU_AsyncOpInterface, AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "a (strided-batched) matrix product by the BLAS library";
  let description = [{
    `out = op(lhs) * op(rhs) + (accumulate ? out : 0)`, row-major, with an
    fp32 accumulator: cuBLASLt's `C = alpha op(A) op(B) + beta C` with
    `alpha = 1` and `beta = 1` (`accumulate`, a gradient accumulator fused
    into its product) or `beta = 0`. Without `transpose_lhs`, `lhs` is
    `M x K` (with it, `K x M`); without `transpose_rhs`, `rhs` is `K x N`
    (with it, `N x K`); `out` is `M x N`. With 3-d operands, the outermost
    dimension is a batch of independent products (a strided-batched GEMM).
    `bias` (an unbatched product only) is added to every row of the result
    (`CUBLASLT_EPILOGUE_BIAS`, in fp32 on the finished sum).

    Operands are views with contiguous rows; their leading dimensions and
    batch strides are read from the memref layouts when the op is lowered.
    As `gpu.launch_func`, the op is ordered on a stream by its async
    dependencies (at most one) and returns a token when asynchronous.

    ```mlir
    %t1 = ga.blas_matmul async [%t0] %x, %w, %y {accumulate, transpose_rhs}
        : memref<8x16xf32>, memref<4x16xf32>, memref<8x4xf32>
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies,
      MemRefOf<[F32, F16, BF16]>:$lhs, MemRefOf<[F32, F16, BF16]>:$rhs,
      MemRefOf<[F32]>:$out, Optional<MemRefRankOf<[F32], [1]>>:$bias,
      UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs,
      UnitAttr:$accumulate);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncToken>(type($asyncToken), $asyncDependencies)
    `` $lhs `,` $rhs `,` $out (`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict
    `:` type($lhs) `,` type($rhs) `,` type($out)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the operands are batches of matrices (3-d).
    bool isBatched() { return getOut().getType().getRank() == 3; }
  }];
}

def GA_NcclAllReduceOp : Op<GA_Dialect, "nccl_all_reduce",
    [GPU_AsyncOpInterface]> {
  let summary = "an in-place all-reduce of a device buffer by NCCL";
  let description = [{
    Every rank's `buffer` is replaced by the reduction of all ranks' buffers
    (`ncclAllReduce` in place), `datatype` and `reduction` being NCCL's codes
    (`ncclDataType_t`, `ncclRedOp_t`; --convert-ga-to-nccl chooses them from
    the collective's element type and reduction). As `gpu.launch_func`, the op
    is ordered on a stream by its async dependencies (at most one) and returns
    a token when asynchronous; without a dependency the runtime waits for the
    device itself. --ga-lower-library-ops makes it a call of
    `gaNcclAllReduce(stream, address, count, datatype, reduction)` whose
    failure aborts.

    ```mlir
    %t1 = ga.nccl_all_reduce async [%t0] %grads {datatype = 7 : i32, reduction = 4 : i32}
        : memref<12xf32>
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies,
      Arg<MemRefRankOf<[AnyType], [1]>,
          "every rank's buffer, read and overwritten by the reduction",
          [MemRead, MemWrite]>:$buffer,
      I32Attr:$datatype, I32Attr:$reduction);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncToken>(type($asyncToken), $asyncDependencies)
    `` $buffer attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// CUDA graphs
//===----------------------------------------------------------------------===//

def GA_GraphHandle : Type<
    CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self)">,
    "an executable CUDA graph (an opaque pointer)">,
    BuildableType<"::mlir::LLVM::LLVMPointerType::get($_builder.getContext())">;

def GA_GraphCaptureOp : Op<GA_Dialect, "graph_capture",
    [GPU_AsyncOpInterface, RecursiveMemoryEffects,
     SingleBlockImplicitTerminator<"GraphYieldOp">]> {
  let summary = "the stream work of a region recorded as a CUDA graph";
  let description = [{
    The ops of the body, ordered on the stream of the op's one async
    dependency by their tokens, are recorded into a graph instead of run
    (stream capture), and the graph is instantiated: `graph` is the
    executable graph, `asyncToken` the stream after the capture (the
    body's last token, yielded by `ga.graph_yield`). Nothing of the body
    runs until `ga.graph_launch`. --ga-lower-library-ops makes it
    `mgpuGraphBeginCapture(stream)`, the body, and
    `mgpuGraphEndCapture(end)`.

    ```mlir
    %g, %t1 = ga.graph_capture async [%t0] {
      %a = gpu.launch_func async [%t0] @k::@a ...
      ga.graph_yield %a
    }
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies);
  let results = (outs GA_GraphHandle:$graph,
      Optional<GPU_AsyncToken>:$asyncToken);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<AsyncToken>(type($asyncToken), $asyncDependencies) `` $body attr-dict
  }];
  let hasVerifier = 1;
}

def GA_GraphYieldOp : Op<GA_Dialect, "graph_yield",
    [Pure, Terminator, ReturnLike, HasParent<"GraphCaptureOp">]> {
  let summary = "the last token of a captured body";
  let description = [{
    Ends the body of `ga.graph_capture` with the token of its last stream
    work: the end of the capture.
  }];
  let arguments = (ins Optional<GPU_AsyncToken>:$token);
  let assemblyFormat = "($token^)? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, Value()); }]>];
}

def GA_GraphLaunchOp : Op<GA_Dialect, "graph_launch",
    [GPU_AsyncOpInterface,
     MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a replay of an executable CUDA graph on a stream";
  let description = [{
    Enqueues the work recorded by `ga.graph_capture` once more on the stream
    of its one async dependency (it reads and writes what the recorded work
    does). --ga-lower-library-ops makes it `mgpuGraphLaunch(graph, stream)`.

    ```mlir
    %t1 = ga.graph_launch async [%t0] %g
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies,
      GA_GraphHandle:$graph);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncToken>(type($asyncToken), $asyncDependencies) `` $graph attr-dict
  }];
  let hasVerifier = 1;
}

def GA_GraphDestroyOp : Op<GA_Dialect, "graph_destroy"> {
  let summary = "the release of an executable CUDA graph";
  let description = [{
    Frees the graph (the driver releases a graph in flight when its launches
    complete: no stream wait). --ga-lower-library-ops makes it
    `mgpuGraphDestroy(graph)`.

    ```mlir
    ga.graph_destroy %g : !llvm.ptr
    ```
  }];
  let arguments = (ins Arg<GA_GraphHandle, "the graph", [MemFree]>:$graph);
  let assemblyFormat = "$graph attr-dict `:` type($graph)";
}

//===----------------------------------------------------------------------===//
// NCCL reduce-scatter and all-gather (sharded steps)
//===----------------------------------------------------------------------===//

def GA_NcclReduceScatterOp : Op<GA_Dialect, "nccl_reduce_scatter",
    [GPU_AsyncOpInterface]> {
  let summary = "a reduce-scatter of a device buffer by NCCL";
  let description = [{
    Every rank of a group of `world` ranks contributes `input` (all its
    elements); `output`, `1/world` of them, receives this rank's part of the
    elementwise reduction (`ncclReduceScatter`: rank r gets elements
    [r * n, (r + 1) * n) of the reduction, n the size of `output`).
    `datatype` and `reduction` are NCCL's codes, as for `ga.nccl_all_reduce`.
    `output` may be this rank's part of `input` itself (NCCL's in-place
    reduce-scatter; --convert-ga-to-nccl makes it so). Ordered on a stream
    as `ga.nccl_all_reduce`; --ga-lower-library-ops makes it a call of
    `gaNcclReduceScatter(stream, input, output, n, datatype, reduction)`
    whose failure aborts.

    ```mlir
    %t1 = ga.nccl_reduce_scatter async [%t0] %grads, %mine
        {datatype = 7 : i32, reduction = 0 : i32, world = 2 : i64}
        : memref<12xf32>, memref<6xf32, strided<[1], offset: 6>>
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies,
      Arg<MemRefRankOf<[AnyType], [1]>, "what this rank contributes",
          [MemRead]>:$input,
      Arg<MemRefRankOf<[AnyType], [1]>, "what this rank receives",
          [MemWrite]>:$output,
      I32Attr:$datatype,
      I32Attr:$reduction, ConfinedAttr<I64Attr, [IntPositive]>:$world);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncToken>(type($asyncToken), $asyncDependencies)
    `` $input `,` $output attr-dict `:` type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def GA_NcclAllGatherOp : Op<GA_Dialect, "nccl_all_gather",
    [GPU_AsyncOpInterface]> {
  let summary = "an all-gather of device buffers by NCCL";
  let description = [{
    Every rank of a group of `world` ranks contributes `input`; every rank's
    `output`, `world` times its size, receives the ranks' inputs in rank
    order (`ncclAllGather`). `datatype` is NCCL's code, as for
    `ga.nccl_all_reduce`. `input` may be this rank's part of `output`
    itself (NCCL's in-place all-gather; --convert-ga-to-nccl makes it so).
    Ordered on a stream as `ga.nccl_all_reduce`; --ga-lower-library-ops
    makes it a call of `gaNcclAllGather(stream, input, output, n, datatype)`
    (n the size of `input`) whose failure aborts.

    ```mlir
    %t1 = ga.nccl_all_gather async [%t0] %mine, %params
        {datatype = 7 : i32, world = 2 : i64}
        : memref<6xf32, strided<[1], offset: 6>>, memref<12xf32>
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies,
      Arg<MemRefRankOf<[AnyType], [1]>, "what this rank contributes",
          [MemRead]>:$input,
      Arg<MemRefRankOf<[AnyType], [1]>, "what this rank receives",
          [MemWrite]>:$output,
      I32Attr:$datatype,
      ConfinedAttr<I64Attr, [IntPositive]>:$world);
  let results = (outs Optional<GPU_AsyncToken>:$asyncToken);
  let assemblyFormat = [{
    custom<AsyncToken>(type($asyncToken), $asyncDependencies)
    `` $input `,` $output attr-dict `:` type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Streams: a wait between streams, the host's wait, the release
//===----------------------------------------------------------------------===//

def GA_StreamWaitOp : Op<GA_Dialect, "stream_wait", [GPU_AsyncOpInterface]> {
  let summary = "the stream of a token made to wait for other streams";
  let description = [{
    The work enqueued after this op on the stream of the first async
    dependency starts once the work enqueued so far on the streams of the
    others is done; the host does not wait. `asyncToken` is the first
    dependency's stream after the wait. A fork (a second stream that
    starts where the first is) and a join (the first waits for the
    second) are both this op. --ga-lower-library-ops makes it, per other
    stream, `mgpuEventCreate`, `mgpuEventRecord(event, other)`,
    `mgpuStreamWaitEvent(stream, event)` and `mgpuEventDestroy(event)`.

    No memory effects are declared (as for `gpu.wait`): the op touches no
    memory, but nothing may move across it or drop it.

    ```mlir
    %c1 = ga.stream_wait async [%comm, %step]
    ```
  }];
  let arguments = (ins Variadic<GPU_AsyncToken>:$asyncDependencies);
  // Always asynchronous: a wait of the host is `ga.stream_synchronize`.
  let results = (outs GPU_AsyncToken:$asyncToken);
  let assemblyFormat = "`async` ` ` `[` $asyncDependencies `]` attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The token of the stream that waits.
    Value getStream() { return getAsyncDependencies().front(); }
    /// The tokens of the streams waited for.
    OperandRange getWaited() { return getAsyncDependencies().drop_front(); }
  }];
}

def GA_StreamSynchronizeOp : Op<GA_Dialect, "stream_synchronize",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "the host's wait for the work of a stream";
  let description = [{
    The host waits until the work enqueued on the stream of `stream` is
    done: its reads of host and device memory after the op see what that
    work wrote (hence the declared read and write effects, which keep host
    memory accesses on their side of it). Not `gpu.wait [%t]`: its lowering
    takes a token that is not the result of a stream creation (one carried
    through a loop) for an event. --ga-lower-library-ops makes it
    `mgpuStreamSynchronize(stream)`.

    ```mlir
    ga.stream_synchronize %t
    ```
  }];
  let arguments = (ins GPU_AsyncToken:$stream);
  let assemblyFormat = "$stream attr-dict";
}

def GA_StreamReleaseOp : Op<GA_Dialect, "stream_release"> {
  let summary = "the release of a stream";
  let description = [{
    Releases the stream of `stream` without a host wait: the work enqueued
    on it still runs, and streams made to wait for it (`ga.stream_wait`)
    still wait. No op may use the token after it. --ga-lower-library-ops
    makes it `mgpuStreamDestroy(stream)`.

    ```mlir
    ga.stream_synchronize %t
    ga.stream_release %t
    ```
  }];
  let arguments = (ins Arg<GPU_AsyncToken, "the stream", [MemFree]>:$stream);
  let assemblyFormat = "$stream attr-dict";
  let hasVerifier = 1;
}

#endif // GA_IR_GALIBRARYOPS_TD
