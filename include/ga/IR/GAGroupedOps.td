//===- GAGroupedOps.td - grouped products of the ga dialect -*- tablegen -*-===//
//
// The grouped matrix product of mixture-of-experts layers: rows sorted by
// group, each group of rows times its own matrix, the group ends data.
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GAGROUPEDOPS_TD
#define GA_IR_GAGROUPEDOPS_TD

include "ga/IR/GADialect.td"
include "mlir/Dialect/Linalg/IR/LinalgInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def GA_GroupedMatmulOp : Op<GA_Dialect, "grouped_matmul",
    [Pure, AllTypesMatch<["init", "result"]>,
     DestinationStyleOpInterface,
     DeclareOpInterfaceMethods<AggregatedOpInterface, ["decomposeOperation"]>]> {
  let summary = "a product per group of consecutive rows (mixture of experts)";
  let description = [{
    The rows of `lhs` (`M x K`) are partitioned into `E` consecutive groups
    by the group ends `ends` (`E` integers, data: row `r` belongs to group
    `g` when `ends[g-1] <= r < ends[g]`, with `ends[-1] = 0`); ends are
    clamped to `[0, M]` and a group whose end is below the previous one is
    empty. Rows past `ends[E-1]` belong to no group. This is the grouped
    product of mixture-of-experts layers (`torch._grouped_mm`): the
    token-expert pairs sorted by expert, each expert's rows times its
    weights. Shapes are static but for the rows (a micro-batch of a size
    known at run time); the partition is data, so one op serves every
    routing of the batch.

    Without `transpose_lhs`, `rhs` is `E x K x N` and the result (`M x N`)
    is `init` plus, on the rows of group `g`, `lhs[rows of g] * rhs[g]`;
    rows in no group keep `init`. With `transpose_lhs` (the weights'
    gradient), `rhs` is `M x N` (one row per row of `lhs`) and the result
    (`E x K x N`) is `init` plus, for each `g`,
    `lhs[rows of g]^T * rhs[rows of g]` (nothing for an empty group).

    With `group_ids`, `ends` holds the group of each row instead (`M`
    integers, data; a row whose id is outside `[0, E)` belongs to no
    group): the rows need not be sorted by group. This is the form the
    trace gives transformers' experts (`_moe.py`): their sort of the
    token-expert pairs by expert, undone before the sum over each token's
    experts, is left out, so the rows stay in token order and a
    micro-batch's rows are its own samples' pairs (docs/Rationale.md,
    "the permutation rule").

    The work is proportional to `M` (each row meets one group's matrix).
    The GPU pipeline first decomposes it with `--ga-decompose-grouped-gather`
    (`linalg.generic` ops gathering the row's group matrix with
    `tensor.extract`, mapped to kernels; the weights' gradient visits every
    row for each group). Otherwise
    `--ga-decompose-aggregated-ops` (after `--ga-accumulate`) replaces it by
    an `scf.for` over the groups of
    `linalg.matmul` on `tensor.extract_slice`s of data-dependent size, which
    the CPU pipeline lowers to one CBLAS call per group (with `group_ids`,
    an `scf.for` over the rows of a product of the row by its group's
    matrix: the same work, a smaller call per row).

    Example:

    ```mlir
    %y = ga.grouped_matmul %x, %w ends %ends into %zero
        : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<4xi32> into tensor<12x16xf32>
    %dw = ga.grouped_matmul transpose_lhs %x, %dy ends %ends into %zw
        : tensor<12x8xf32>, tensor<12x16xf32>, tensor<4xi32> into tensor<4x8x16xf32>
    %z = ga.grouped_matmul group_ids %x, %w ends %ids into %zero
        : tensor<12x8xf32>, tensor<4x8x16xf32>, tensor<12xi64> into tensor<12x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       AnyRankedTensor:$ends, AnyRankedTensor:$init,
                       UnitAttr:$transpose_lhs, UnitAttr:$group_ids);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    (`transpose_lhs` $transpose_lhs^)? (`group_ids` $group_ids^)? $lhs `,` $rhs `ends` $ends `into` $init
    attr-dict `:` type($lhs) `,` type($rhs) `,` type($ends) `into` type($init)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    /// The number of groups (E): the ends', or with `group_ids` the
    /// matrices' (the result's with `transpose_lhs`).
    int64_t getNumGroups() {
      if (!getGroupIds())
        return getEnds().getType().getDimSize(0);
      return (getTransposeLhs() ? getInit() : getRhs()).getType().getDimSize(0);
    }
  }];
}

#endif // GA_IR_GAGROUPEDOPS_TD
