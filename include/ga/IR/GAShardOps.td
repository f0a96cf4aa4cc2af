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


#endif // GA_IR_GASHARDOPS_TD
