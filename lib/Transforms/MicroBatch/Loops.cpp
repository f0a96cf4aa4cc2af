//===- Loops.cpp - emitting the micro-batch loops -------------------------===//
//
// One scf.for per micro-batch size and level, with its loop-carried
// accumulators (ga.accumulate), the reductions replaced by the loops'
// results.
//
//===----------------------------------------------------------------------===//

#include "StepRewriter.h"

#include "ga/IR/GAOps.h"
#include "ga/Utils/Reductions.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::micro_batch;

/// Converts the float tensor `value` to `elementType` elementwise, as a
/// `linalg.generic` (arith casts on tensors do not bufferize).
static Value convertElements(OpBuilder &builder, Location loc, Value value,
                             Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  Value init = tensor::EmptyOp::create(
      builder, loc, tensor::getMixedSizes(builder, loc, value), elementType);
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, ValueRange{value},
      ValueRange{init}, ArrayRef<AffineMap>{identity, identity}, iterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        Value converted =
            elementType.getIntOrFloatBitWidth() >
                    type.getElementType().getIntOrFloatBitWidth()
                ? arith::ExtFOp::create(b, nested, elementType, args[0])
                      .getResult()
                : arith::TruncFOp::create(b, nested, elementType, args[0])
                      .getResult();
        linalg::YieldOp::create(b, nested, converted);
      });
  return generic.getResult(0);
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

SmallVector<Accumulator> StepRewriter::makeAccumulators(const LevelPlan &plan) {
  SmallVector<Accumulator> accs;
  for (Operation *op : plan.accumulated) {
    // A reduction is a destination-style op (linalg, ga.grouped_matmul):
    // its init is where the accumulator enters.
    auto dpsOp = cast<DestinationStyleOpInterface>(op);
    const PerSampleOpInfo *info = analysis.getOpInfo(op);
    for (OpResult result : op->getResults()) {
      Accumulator acc;
      acc.reduction = op;
      acc.resultIndex = result.getResultNumber();
      Value init = dpsOp.getDpsInits()[acc.resultIndex];
      if (!info->hasNamedCombiners) {
        acc.kind = Accumulator::Kind::Ordered;
        acc.init = init;
        accs.push_back(acc);
        continue;
      }
      acc.kind = Accumulator::Kind::Combine;
      acc.combiner = *analysis.getClass(result).combiner;
      auto type = cast<RankedTensorType>(result.getType());
      Type elementType = type.getElementType();
      bool promote = config.accumulatorType && isa<FloatType>(elementType) &&
                     elementType.getIntOrFloatBitWidth() <
                         config.accumulatorType.getWidth();
      Type accElementType = promote ? config.accumulatorType : elementType;
      // A reduction nested in a branch is combined with its init inside the
      // branch after the loop (replaceGuarded): its accumulator starts from
      // the neutral element, sized by the result type or by an init from
      // above (the analysis checked one of them is).
      bool guarded = !isa<func::FuncOp>(op->getParentOp());
      bool chained = !guarded && analysis.getClass(init).isPostReduction();
      if (chained)
        acc.chainedInit = init;
      if (guarded || chained ||
          (promote && isNeutralTensor(init, acc.combiner))) {
        Value empty = tensor::EmptyOp::create(
            builder, loc(),
            type.hasStaticShape()
                ? getAsIndexOpFoldResult(builder.getContext(), type.getShape())
                : tensor::getMixedSizes(builder, loc(), init),
            accElementType);
        Value neutral = arith::ConstantOp::create(
            builder, loc(), getNeutralElement(acc.combiner, accElementType));
        acc.init =
            linalg::FillOp::create(builder, loc(), neutral, empty).getResult(0);
      } else if (promote) {
        acc.init = convertElements(builder, loc(), init, accElementType);
      } else {
        acc.init = init;
      }
      accs.push_back(acc);
    }
  }
  auto assemble = [&](Value value, bool stored) {
    Accumulator acc;
    acc.kind = Accumulator::Kind::Assemble;
    acc.assembled = value;
    acc.stored = stored;
    BatchClass cls = analysis.getClass(value);
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<Value> dynamicSizes;
    if (type.isDynamicDim(cls.dim))
      dynamicSizes.push_back(getFullExtent(cls.factor));
    acc.init = tensor::EmptyOp::create(builder, loc(), type.getShape(),
                                       type.getElementType(), dynamicSizes);
    accs.push_back(acc);
  };
  for (Value value : plan.assembled)
    assemble(value, /*stored=*/false);
  for (Value value : plan.stored)
    assemble(value, /*stored=*/true);
  numStoredValues += plan.stored.size();
  numAccumulators += accs.size();
  return accs;
}

void StepRewriter::emitBody(Instance &inst, const LevelPlan &plan,
                            ArrayRef<Accumulator> accs, ValueRange iterArgs,
                            SmallVectorImpl<Value> &yields) {
  yields.assign(iterArgs.begin(), iterArgs.end());
  DenseSet<Operation *> accumulated(plan.accumulated.begin(),
                                    plan.accumulated.end());
  for (Operation *opPtr : originalOps) {
    Operation &op = *opPtr;
    if (plan.local.count(&op))
      cloneLocal(inst, &op);
    if (plan.loaded.count(&op)) {
      // Computed by an earlier loop: this micro-batch's rows of its store.
      for (Value result : op.getResults()) {
        BatchClass cls = analysis.getClass(result);
        inst.mapping.map(result, sliceFull(inst, storedValues.lookup(result),
                                           cls.dim, cls.factor));
      }
    }
    if (analysis.holdsBatchReductions(&op))
      accumulateGuarded(inst, &op, accs, iterArgs, yields);
    else if (accumulated.count(&op))
      accumulate(inst, &op, accs, iterArgs, yields);
  }
  for (auto [index, acc] : llvm::enumerate(accs)) {
    if (acc.kind != Accumulator::Kind::Assemble)
      continue;
    BatchClass cls = analysis.getClass(acc.assembled);
    Value micro = getMicro(inst, acc.assembled);
    auto type = cast<RankedTensorType>(acc.assembled.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(builder, loc(), micro);
    offsets[cls.dim] = scaledOffset(inst, cls.factor);
    yields[index] = tensor::InsertSliceOp::create(
        builder, loc(), micro, iterArgs[index], offsets, sizes, strides);
  }
}

void StepRewriter::accumulate(Instance &inst, Operation *op,
                              ArrayRef<Accumulator> accs, ValueRange iterArgs,
                              SmallVectorImpl<Value> &yields) {
  auto dpsOp = cast<DestinationStyleOpInterface>(op);
  SmallVector<std::pair<unsigned, Value>> overrides;
  SmallVector<unsigned> accIndices;
  for (auto [index, acc] : llvm::enumerate(accs)) {
    if (acc.reduction != op)
      continue;
    accIndices.push_back(index);
    OpOperand *init = dpsOp.getDpsInitOperand(acc.resultIndex);
    Value start;
    if (acc.kind == Accumulator::Kind::Ordered) {
      start = iterArgs[index];
    } else if (isNeutralTensor(init->get(), acc.combiner) &&
               analysis.getClass(init->get()).isUniform()) {
      start = inst.mapping.lookupOrDefault(init->get());
    } else {
      auto type = cast<RankedTensorType>(init->get().getType());
      Value empty = tensor::EmptyOp::create(
          builder, op->getLoc(),
          tensor::getMixedSizes(builder, op->getLoc(),
                                inst.mapping.lookupOrDefault(init->get())),
          type.getElementType());
      Value neutral = arith::ConstantOp::create(
          builder, op->getLoc(),
          getNeutralElement(acc.combiner, type.getElementType()));
      start = linalg::FillOp::create(builder, op->getLoc(), neutral, empty)
                  .getResult(0);
    }
    overrides.push_back({init->getOperandNumber(), start});
  }
  Operation *clone = materialize(inst, op, overrides);
  if (!clone)
    return;
  for (unsigned index : accIndices) {
    const Accumulator &acc = accs[index];
    Value partial = clone->getResult(acc.resultIndex);
    yields[index] =
        acc.kind == Accumulator::Kind::Ordered
            ? partial
            : AccumulateOp::create(builder, op->getLoc(), acc.combiner, partial,
                                   iterArgs[index])
                  .getResult();
  }
}

void StepRewriter::accumulateGuarded(Instance &inst, Operation *regionOp,
                                     ArrayRef<Accumulator> accs,
                                     ValueRange iterArgs,
                                     SmallVectorImpl<Value> &yields) {
  SmallVector<unsigned> indices;
  SmallVector<Type> types;
  for (auto [index, acc] : llvm::enumerate(accs)) {
    if (acc.reduction && regionOp->isProperAncestor(acc.reduction)) {
      indices.push_back(index);
      types.push_back(iterArgs[index].getType());
    }
  }
  if (indices.empty())
    return;
  auto ifOp = cast<scf::IfOp>(regionOp);
  // The condition does not depend on the samples: every micro-batch takes
  // the branch the full batch takes.
  auto clone =
      scf::IfOp::create(builder, ifOp.getLoc(), types,
                        inst.mapping.lookupOrDefault(ifOp.getCondition()),
                        /*withElseRegion=*/true);
  for (auto [from, to] : llvm::zip(ifOp->getRegions(), clone->getRegions())) {
    OpBuilder::InsertionGuard guard(builder);
    if (to.empty())
      to.emplaceBlock();
    Block &block = to.front();
    if (!block.empty())
      block.getTerminator()->erase();
    builder.setInsertionPointToEnd(&block);
    SmallVector<Value> branchYields(iterArgs);
    if (!from.empty()) {
      for (Operation &op : from.front().without_terminator()) {
        if (analysis.isBatchReduction(&op))
          accumulate(inst, &op, accs, iterArgs, branchYields);
        else if (isGuardedWork(&op))
          cloneLocal(inst, &op);
      }
    }
    SmallVector<Value> selected;
    for (unsigned index : indices)
      selected.push_back(branchYields[index]);
    scf::YieldOp::create(builder, ifOp.getLoc(), selected);
  }
  for (auto [position, index] : llvm::enumerate(indices))
    yields[index] = clone.getResult(position);
}

void StepRewriter::replaceGuarded(const Accumulator &acc, Value value) {
  Operation *op = acc.reduction;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(op);
  Value init =
      cast<DestinationStyleOpInterface>(op).getDpsInits()[acc.resultIndex];
  Value final = value;
  if (!isNeutralTensor(init, acc.combiner))
    final =
        AccumulateOp::create(builder, op->getLoc(), acc.combiner, final, init);
  Value original = op->getResult(acc.resultIndex);
  original.replaceAllUsesWith(final);
  finalValues[original] = final;
}

void StepRewriter::emitLevel(unsigned level, const LevelPlan &plan,
                             ArrayRef<Segment> segments) {
  SmallVector<Accumulator> accs = makeAccumulators(plan);
  SmallVector<Value> current;
  for (const Accumulator &acc : accs)
    current.push_back(acc.init);

  for (const Segment &segment : segments) {
    auto loop = scf::ForOp::create(
        builder, loc(), indexConstant(0), segment.count, indexConstant(1),
        current, [&](OpBuilder &b, Location, Value iv, ValueRange iterArgs) {
          OpBuilder::InsertionGuard guard(builder);
          builder.setInsertionPointToStart(b.getInsertionBlock());
          Instance inst;
          inst.body = b.getInsertionBlock();
          if (segment.size) {
            Value scaled = arith::MulIOp::create(builder, loc(), iv,
                                                 indexConstant(*segment.size));
            inst.offset =
                segment.start
                    ? arith::AddIOp::create(builder, loc(), scaled,
                                            indexConstant(segment.start))
                          .getResult()
                    : scaled;
            inst.size = builder.getIndexAttr(*segment.size);
          } else {
            Value isLong = arith::CmpIOp::create(
                builder, loc(), arith::CmpIPredicate::ult, iv, remainder);
            Value extra = arith::SelectOp::create(
                builder, loc(), isLong, indexConstant(1), indexConstant(0));
            inst.size = arith::AddIOp::create(builder, loc(), quotient, extra)
                            .getResult();
            Value base = arith::MulIOp::create(builder, loc(), iv, quotient);
            Value shift = arith::MinUIOp::create(builder, loc(), iv, remainder);
            inst.offset = arith::AddIOp::create(builder, loc(), base, shift);
            if (shardBegin)
              inst.offset = arith::AddIOp::create(builder, loc(), inst.offset,
                                                  shardBegin);
          }
          SmallVector<Value> yields;
          emitBody(inst, plan, accs, iterArgs, yields);
          scf::YieldOp::create(builder, loc(), yields);
        });
    ++numLoops;
    if (level < analysis.getNumLevels())
      ++numStatisticLoops;
    current.assign(loop.getResults().begin(), loop.getResults().end());
  }

  // Results of the loop replace the reductions and per-sample results.
  Operation *terminator = body.getTerminator();
  for (auto [acc, value] : llvm::zip(accs, current)) {
    if (acc.stored) {
      // Each rank stores and loads the rows of its own shard only.
      storedValues[acc.assembled] = value;
      continue;
    }
    if (config.dataParallel) {
      FailureOr<Value> combined = combineAcrossRanks(acc, value);
      if (failed(combined)) {
        failedDataParallel = true;
        continue;
      }
      value = *combined;
    }
    if (acc.kind == Accumulator::Kind::Assemble) {
      for (OpOperand &operand : terminator->getOpOperands())
        if (operand.get() == acc.assembled)
          operand.set(value);
      continue;
    }
    Value original = acc.reduction->getResult(acc.resultIndex);
    Value final = value;
    if (final.getType() != original.getType())
      final = convertElements(builder, loc(), final,
                              getElementTypeOrSelf(original.getType()));
    if (!isa<func::FuncOp>(acc.reduction->getParentOp())) {
      replaceGuarded(acc, final);
      continue;
    }
    // A chain continues the final value of the reduction it started from,
    // which precedes it (same or earlier loop).
    if (acc.chainedInit)
      final = AccumulateOp::create(builder, loc(), acc.combiner, final,
                                   finalValues.lookup(acc.chainedInit));
    original.replaceAllUsesWith(final);
    finalValues[original] = final;
  }
}
