//===- GAShardOps.td - sharded collectives of ga -----------*- tablegen -*-===//
//
// The collectives of a sharded optimizer (ZeRO-1, --ga-shard-optimizer),
// in a file of their own so that their generated declarations are included
// only where they are used.
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GASHARDOPS_TD
#define GA_IR_GASHARDOPS_TD

include "ga/IR/GADialect.td"
include "ga/IR/GAEnums.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class GA_ShardOp<string mnemonic, list<Trait> traits = []>
    : Op<GA_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// ReduceScatterOp
//===----------------------------------------------------------------------===//

def GA_ReduceScatterOp : GA_ShardOp<"reduce_scatter", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "reduce a tensor over the data-parallel group, keep this "
                "rank's rows";
  let description = [{
    Every rank of a group of `world` ranks contributes `input`; rank `rank`
    gets rows [rank * D / world, (rank + 1) * D / world) (integer division,
    D the size of dimension 0) of the elementwise `sum`, `mean`, `max` or
    `min` over the group. With `ga.all_gather` it is the gradient and
    parameter synchronization of a sharded optimizer (ZeRO-1): see
    `--ga-shard-optimizer`. A collective, like `ga.all_reduce`.

    Example (rank 1 of 3 holds rows [5, 10) of 16):

    ```mlir
    %g = ga.reduce_scatter <sum> %dw shard 1 of 3
        : tensor<16x10xf32> -> tensor<5x10xf32>
    ```
  }];
  let arguments = (ins GA_CollectiveKindAttr:$kind, AnyRankedTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$rank,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $kind $input `shard` $rank `of` $world attr-dict `:` type($input) `->`
    type($result)
  }];
  let extraClassDeclaration = [{
    /// The rows [begin, end) of `rows` that rank `rank` of `world` holds.
    static std::pair<int64_t, int64_t> shardRows(int64_t rows, int64_t world,
                                                 int64_t rank) {
      return {rank * rows / world, (rank + 1) * rows / world};
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

def GA_AllGatherOp : GA_ShardOp<"all_gather", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "concatenate the ranks' rows of a tensor";
  let description = [{
    Rank `rank` of a group of `world` ranks contributes `input`, its rows
    [rank * D / world, (rank + 1) * D / world) of the result (see
    `ga.reduce_scatter`); every rank gets the whole result, the ranks' rows
    in rank order. A collective, like `ga.all_reduce`.

    Example (rank 1 of 3):

    ```mlir
    %w = ga.all_gather %w1 shard 1 of 3 : tensor<5x10xf32> -> tensor<16x10xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$rank,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `shard` $rank `of` $world attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Host collectives on buffers
//===----------------------------------------------------------------------===//

def GA_HostCollectiveStartOp : GA_ShardOp<"host_collective_start",
    [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "start a collective of the host program's engine on a buffer";
  let description = [{
    Hands `buffer` (every element of a tensor, contiguous) to the
    communication engine of the host program (torch.distributed in the
    PyTorch frontend), which works on it in place until the
    `ga.host_collective_wait` of the same `id`; the ops in between overlap
    the collective. `datatype` and `reduction` are the runtime's codes (see
    --convert-ga-to-host-collectives).

    - Without `rows`: an all-reduce; every rank's buffer becomes the
      reduction of all ranks' buffers.
    - With `rows` and no `input`: a reduce-scatter of a tensor of `rows`
      rows; this rank's rows of the buffer become the reduction.
    - With `rows` and `input` (this rank's rows): an all-gather; the op
      writes `input` at element `input_offset` of the buffer and the engine
      fills in the other ranks' rows. The buffer is not read: the op writes
      every element of it (--ga-share-buffers may give it the storage of a
      temporary dead before it).

    Being an op on memrefs that declares what it reads and writes (unlike
    the runtime call it becomes), it lets bufferization's deallocation,
    --ga-share-buffers and the memory report see the buffer's live range:
    from the op to its wait. --ga-lower-host-collectives makes it a call of
    `gaHostAllReduceStart` or `gaHostShardedStart` after them.

    ```mlir
    ga.host_collective_start %grads {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32} : memref<12xf32>
    ga.host_collective_start %full from %mine : memref<1x8xf32>
        {datatype = 0 : i32, id = 1 : i64, input_offset = 8 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
    ```
  }];
  let arguments = (ins MemRefRankOf<[AnyType], [1]>:$buffer,
      Optional<AnyStaticShapeMemRef>:$input,
      ConfinedAttr<I64Attr, [IntNonNegative]>:$id, I32Attr:$datatype,
      I32Attr:$reduction, OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$rows,
      OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$input_offset);
  let assemblyFormat = [{
    $buffer (`from` $input^ `:` type($input))? attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

def GA_HostCollectiveWaitOp : GA_ShardOp<"host_collective_wait"> {
  let summary = "wait for a collective of the host program's engine";
  let description = [{
    Returns when the collective `id` started by `ga.host_collective_start`
    on `buffer` is complete: the buffer holds its result. Until then the
    engine may read and write the buffer, which the op declares (so the
    buffer lives up to here). --ga-lower-host-collectives makes it a call of
    `gaHostAllReduceWait(id)`.

    ```mlir
    ga.host_collective_wait %grads {id = 0 : i64} : memref<12xf32>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[AnyType], [1]>,
          "the buffer the engine reads and writes until the wait returns",
          [MemRead, MemWrite]>:$buffer,
      ConfinedAttr<I64Attr, [IntNonNegative]>:$id);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
}

#endif // GA_IR_GASHARDOPS_TD
