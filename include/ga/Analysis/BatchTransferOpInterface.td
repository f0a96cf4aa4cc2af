//===- BatchTransferOpInterface.td - how an op relates to the batch -------===//
//
// The op interface through which an op family states how it maps the batch
// dimension of per-sample values: the batch analysis calls it instead of
// matching op classes, and the rewrite calls it to re-create the op for one
// micro-batch. Upstream ops get it as external models, attached per op
// family (BatchTensorOps.cpp, BatchRegions.cpp, BatchLinalg.cpp,
// BatchDataFlow.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_BATCHTRANSFEROPINTERFACE
#define GA_ANALYSIS_BATCHTRANSFEROPINTERFACE

include "mlir/IR/OpBase.td"

def BatchTransferOpInterface : OpInterface<"BatchTransferOpInterface"> {
  let description = [{
    The transfer function of an op in the batch analysis (BatchDataFlow.h):
    given the batch classes of the op's inputs (through `BatchTransfer`), it
    sets the class of each result, marks the op per-sample, and refuses with
    a located reason what a micro-batch rewrite could not keep exact.

    Elementwise-mappable ops without memory effects need no model: their
    traits say it. Every linalg structured op gets one model that reads its
    indexing maps (attached by the `linalg::LinalgOp` interface it
    declares). Any other op on per-sample values without a model is
    refused.

    The same model re-creates the op for one micro-batch in the rewrite
    (`materializeAtMicroBatch`, `recomputeTile`, through a
    `MicroBatchBuilder`): what the transfer function accepts, the model
    knows how to slice, so no other place has a rule of its own for the op.

    Adding an op family: write its transfer function and its
    materialization and attach both as an external model in the extension
    that `registerBatchTransferModels` installs for the op's dialect.
  }];
  let cppNamespace = "::mlir::ga";
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Applies the transfer function to this op: reads the classes of its
        inputs from `transfer` and sets the classes of its results there.
        Called for an op that reads a per-sample value (for a region op, on
        every visit).
      }],
      /*retTy=*/"void",
      /*methodName=*/"transferBatch",
      /*args=*/(ins "::mlir::ga::BatchTransfer &":$transfer)
    >,
    InterfaceMethod<
      /*desc=*/[{
        Whether the op's regions hold code of the training step (scf.if,
        scf.for, scf.while), whose per-sample ops the rewrite re-creates in
        the micro-batch loop, rather than a payload that computes one
        element. Its results are joined by the data-flow framework through
        `RegionBranchOpInterface`; the transfer function checks them.
      }],
      /*retTy=*/"bool",
      /*methodName=*/"holdsStepCode",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return false;"
    >,
    InterfaceMethod<
      /*desc=*/[{
        Whether the op keeps track of whole batches stacked one after the
        other along the batch dimension (a reshape of the stacks into an
        outer dimension, a cast, a concatenation); any other op refuses them.
      }],
      /*retTy=*/"bool",
      /*methodName=*/"keepsStackedBatches",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return false;"
    >,
    InterfaceMethod<
      /*desc=*/[{
        Re-creates this op, which the transfer function marked per-sample,
        for the micro-batch of `builder` (its per-sample results at
        micro-batch size) and returns the copy. The default is for ops the
        transfer function never marks per-sample: null.
      }],
      /*retTy=*/"::mlir::Operation *",
      /*methodName=*/"materializeAtMicroBatch",
      /*args=*/(ins "::mlir::ga::MicroBatchBuilder &":$builder),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return nullptr;"
    >,
    InterfaceMethod<
      /*desc=*/[{
        For an op that is not per-sample but whose `result` has a dimension
        `dim` that spans the batch (`factor` entries per sample; a broadcast
        bias, a table of per-sample weights, an empty tensor): recomputes
        the micro-batch's tile of it from tiles of the operands when that is
        exact, or returns null (the default): the rewrite then slices the
        full value.
      }],
      /*retTy=*/"::mlir::Value",
      /*methodName=*/"recomputeTile",
      /*args=*/(ins "::mlir::ga::MicroBatchBuilder &":$builder,
                    "::mlir::OpResult":$result, "int64_t":$dim,
                    "int64_t":$factor),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return nullptr;"
    >,
  ];
}

#endif // GA_ANALYSIS_BATCHTRANSFEROPINTERFACE
