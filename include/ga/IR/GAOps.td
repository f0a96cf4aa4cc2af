//===- GAOps.td - operations of the ga dialect -------------*- tablegen -*-===//

#ifndef GA_IR_GAOPS_TD
#define GA_IR_GAOPS_TD

include "ga/IR/GADialect.td"
include "ga/IR/GAEnums.td"
include "mlir/Dialect/Vector/IR/VectorAttributes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class GA_Op<string mnemonic, list<Trait> traits = []>
    : Op<GA_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// AccumulateOp
//===----------------------------------------------------------------------===//

def GA_AccumulateOp : GA_Op<"accumulate",
    [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "combine a micro-batch partial result into an accumulator";
  let description = [{
    Combines `partial`, the contribution of one micro-batch, elementwise into
    the loop-carried accumulator `acc` with the associative and commutative
    combiner `kind` (the upstream `vector` combining kinds: `add`, `mul`,
    `maxnumf`, `maximumf`, `minsi`, ...). The result has the type of `acc`.

    `partial` has the shape of `acc`. Its element type is either that of
    `acc` or, for floats, a narrower float that is extended before combining:
    this is how bf16/f16 gradients are accumulated in an f32 buffer.

    `--ga-micro-batch` emits this op for every reduction over the batch;
    `--ga-fuse-accumulation` removes it again by making the accumulator the
    destination of the op that produces `partial` when that op starts from the
    combiner's neutral element (`linalg.fill 0` then `C += A * B` becomes
    `C_acc += A * B`). Ops that remain are expanded into one elementwise
    `linalg.generic` by `--ga-expand-accumulate`.

    Example:

    ```mlir
    %g = ga.accumulate <add> %dw into %acc : tensor<784x1024xbf16> into tensor<784x1024xf32>
    %m = ga.accumulate <maxnumf> %loss_max into %m_acc : tensor<f32> into tensor<f32>
    ```
  }];
  let arguments = (ins Vector_CombiningKindAttr:$kind,
                       AnyRankedTensor:$partial,
                       AnyRankedTensor:$acc);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $kind $partial `into` $acc attr-dict `:` type($partial) `into` type($acc)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

def GA_AllReduceOp : GA_Op<"all_reduce",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "reduce a tensor over the data-parallel group";
  let description = [{
    Every rank of the data-parallel group contributes `input`; every rank gets
    the elementwise `sum`, `mean`, `max` or `min` over the group. This is the
    gradient synchronization of data-parallel training.

    The op is a collective: every rank must execute it the same number of
    times and in the same order, so it is not pure and is never erased or
    merged by generic folding. Reductions with the same `bucket` id are
    lowered together as one collective over one contiguous buffer.

    `sum` and `mean` are linear, so `--ga-micro-batch` places an all-reduce
    of an accumulated gradient after the micro-batch loop: once per effective
    batch instead of once per micro-batch.

    Example:

    ```mlir
    %g = ga.all_reduce <mean> %dw bucket 0 : tensor<784x1024xf32>
    ```
  }];
  let arguments = (ins GA_CollectiveKindAttr:$kind, AnyRankedTensor:$input,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$bucket);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $kind $input (`bucket` $bucket^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

#endif // GA_IR_GAOPS_TD
