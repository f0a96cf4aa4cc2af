//===- BatchTransferOpInterface.h - ops and the batch -----------*- C++ -*-===//
//
// The op interface through which op families state their transfer function
// in the batch analysis (see BatchTransferOpInterface.td), and the external
// models that give it to upstream ops.
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_BATCHTRANSFEROPINTERFACE_H
#define GA_ANALYSIS_BATCHTRANSFEROPINTERFACE_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::ga {
class BatchTransfer;
class MicroBatchBuilder;
} // namespace mlir::ga

#include "ga/Analysis/BatchTransferOpInterface.h.inc"

namespace mlir::ga {

/// Attaches the batch transfer models of every op family the analysis
/// understands (tensor, scf, linalg and ga attention ops).
void registerBatchTransferModels(DialectRegistry &registry);
/// The models of tensor ops (BatchTensorOps.cpp).
void registerTensorBatchModels(DialectRegistry &registry);
/// The models of scf.if, scf.for and scf.while (BatchRegions.cpp).
void registerRegionBatchModels(DialectRegistry &registry);
/// The model of every linalg structured op (BatchLinalg.cpp).
void registerLinalgBatchModels(DialectRegistry &registry);
/// The model of ga.grouped_matmul (BatchGrouped.cpp).
void registerGroupedBatchModels(DialectRegistry &registry);
/// The models of ga.attention and ga.attention_backward (BatchAttention.cpp).
void registerAttentionBatchModels(DialectRegistry &registry);

} // namespace mlir::ga

#endif // GA_ANALYSIS_BATCHTRANSFEROPINTERFACE_H
