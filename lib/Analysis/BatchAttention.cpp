//===- BatchAttention.cpp - the batch analysis of attention ops -----------===//
//
// The transfer function of `ga.attention` and `ga.attention_backward`: the
// batch loop is read off the indexing maps of the per-sample operands, as
// for linalg ops (BatchLinalg.cpp), and must be a batch loop of the
// attention (one that indexes query, key, value and output): along any
// other loop a query attends to the keys of other samples, or a sample's
// scores are split over micro-batches. A micro-batch is a tile of that loop:
// every operand it indexes is sliced along the dimension it indexes, the
// others are read whole, and each result keeps the loop where its map has
// it.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDataFlow.h"
#include "ga/Analysis/BatchTransferOpInterface.h"
#include "ga/Analysis/MicroBatchBuilder.h"
#include "ga/IR/Diagnostics.h"
#include "ga/IR/GAAttentionOps.h"
#include "ga/IR/GADialect.h"

using namespace mlir;
using namespace mlir::ga;

namespace {
/// The maps through which an attention op reads its operands and writes its
/// results, in operand and result order.
struct AttentionMaps {
  SmallVector<AffineMap> operands, results;
  AttentionLoops loops;
};
} // namespace

/// The maps of `op`'s operands and results: the forward reads query, key,
/// value and mask through their maps; the backward reads output and
/// grad_output through the output's map, logsumexp through its own, and
/// writes each gradient through the map of its operand.
template <typename OpTy> static AttentionMaps getAttentionMaps(OpTy op) {
  AttentionMaps maps;
  maps.loops = op.getLoops();
  maps.operands = {op.getQueryMap(), op.getKeyMap(), op.getValueMap()};
  if constexpr (std::is_same_v<OpTy, AttentionOp>) {
    maps.results = {op.getOutputMap(), op.getLogsumexpMap()};
  } else {
    maps.operands.append(
        {op.getOutputMap(), op.getOutputMap(), op.getLogsumexpMap()});
    maps.results = {op.getQueryMap(), op.getKeyMap(), op.getValueMap()};
  }
  // The mask is the last operand of both ops.
  if (op.getMask())
    maps.operands.push_back(op.getMaskMap());
  return maps;
}

static AttentionMaps getAttentionMaps(Operation *op) {
  if (auto forward = dyn_cast<AttentionOp>(op))
    return getAttentionMaps(forward);
  return getAttentionMaps(cast<AttentionBackwardOp>(op));
}

/// The position of loop `loop` among the results of `map`, if it indexes it.
static std::optional<unsigned> positionOf(AffineMap map, int64_t loop) {
  return map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
}

/// The batch loop of `op` and the factor of its samples: the loop that
/// indexes every per-sample operand along its per-sample dimension, which
/// must be a batch loop of the attention; none (and `op` refused) otherwise.
static std::optional<std::pair<int64_t, int64_t>>
findAttentionBatchLoop(BatchTransfer &t, Operation *op,
                       const AttentionMaps &maps) {
  int64_t loop = -1, factor = 1;
  unsigned first = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    BatchClass cls = t.getClass(operand.get());
    if (!cls.isBatched())
      continue;
    AffineMap map = maps.operands[operand.getOperandNumber()];
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(cls.dim));
    if (!dim) {
      t.error(op) << DiagnosticCode::BatchDimensionMoved << "operand #"
                  << operand.getOperandNumber()
                  << " is broadcast along its per-sample dimension " << cls.dim;
      return std::nullopt;
    }
    int64_t position = dim.getPosition();
    if (loop >= 0 && (position != loop || cls.factor != factor)) {
      t.error(op) << DiagnosticCode::SamplesCombined << "operands #" << first
                  << " and #" << operand.getOperandNumber()
                  << " are per-sample along different loops (d" << loop
                  << " and d" << position
                  << "), which attends every sample to every other";
      return std::nullopt;
    }
    if (loop < 0)
      first = operand.getOperandNumber();
    loop = position;
    factor = cls.factor;
  }
  if (loop < 0)
    return std::nullopt;
  AttentionLoops::Role role = maps.loops.roles[loop];
  if (role != AttentionLoops::Role::Batch) {
    t.error(op) << DiagnosticCode::SamplesCombined << "operand #" << first
                << " is per-sample along the "
                << AttentionLoops::getRoleName(role) << " loop d" << loop
                << " of the attention: only a batch loop (one that indexes "
                   "query, key, value and output) keeps samples apart";
    return std::nullopt;
  }
  return std::make_pair(loop, factor);
}

/// The transfer function of both attention ops.
static void transferAttention(BatchTransfer &t) {
  Operation *op = t.getOp();
  AttentionMaps maps = getAttentionMaps(op);
  std::optional<std::pair<int64_t, int64_t>> batchLoop =
      findAttentionBatchLoop(t, op, maps);
  if (!batchLoop)
    return;
  auto [loop, factor] = *batchLoop;
  SmallVector<Value> inputs = getOpInputs(op);
  PerSampleOpInfo info;
  info.batchLoop = loop;
  info.factor = factor;
  for (AffineMap map : maps.operands)
    info.operandDims.push_back(positionOf(map, loop));
  unsigned level = t.checkCoupling(inputs);
  bool dependsOnParams = t.joinInputs(inputs).dependsOnParams;
  for (OpResult result : op->getResults()) {
    // A batch loop indexes every result (AttentionLoops::infer).
    BatchClass cls = BatchClass::getBatched(
        *positionOf(maps.results[result.getResultNumber()], loop), factor);
    cls.level = level;
    cls.dependsOnParams = dependsOnParams;
    t.setResult(result.getResultNumber(), cls);
  }
  t.setPerSample(info);
}

/// The per-sample attention op `op` for one micro-batch: a tile of its
/// batch loop, each operand the loop indexes sliced along that dimension
/// (its micro-batch copy when per-sample, its tile otherwise), the others
/// read whole.
static Operation *materializeAttention(MicroBatchBuilder &b, Operation *op) {
  const PerSampleOpInfo *info = b.getAnalysis().getOpInfo(op);
  if (!info || info->operandDims.size() != op->getNumOperands())
    return nullptr;
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<unsigned> dim = info->operandDims[operand.getOperandNumber()];
    Value value = operand.get();
    operands.push_back(dim ? b.getAlong(value, *dim, info->factor)
                           : b.getUniform(value));
  }
  Operation *clone = b.clone(op, operands);
  AttentionMaps maps = getAttentionMaps(op);
  for (OpResult result : clone->getResults()) {
    unsigned dim =
        *positionOf(maps.results[result.getResultNumber()], info->batchLoop);
    result.setType(b.getMicroType(result.getType(), dim, info->factor));
  }
  return clone;
}

namespace {
template <typename OpTy>
struct AttentionModel
    : BatchTransferOpInterface::ExternalModel<AttentionModel<OpTy>, OpTy> {
  void transferBatch(Operation *, BatchTransfer &t) const {
    transferAttention(t);
  }
  Operation *materializeAtMicroBatch(Operation *op,
                                     MicroBatchBuilder &b) const {
    return materializeAttention(b, op);
  }
};
} // namespace

void mlir::ga::registerAttentionBatchModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, GADialect *) {
    AttentionOp::attachInterface<AttentionModel<AttentionOp>>(*ctx);
    AttentionBackwardOp::attachInterface<AttentionModel<AttentionBackwardOp>>(
        *ctx);
  });
}
