//===- BoundBuilder.cpp - error bounds through structured ops -------------===//
//
// The structure of `--ga-forward-error-bound`: a `linalg.generic` is rebuilt
// with its operands' companions as extra inputs and its results' companions
// as extra outputs, its payload extended op by op by the scalar rules;
// `scf.for` and `scf.if` carry companions beside their values; tensor data
// movement applies the same op to the companions.
//
//===----------------------------------------------------------------------===//

#include "ErrorBound.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ga::error_bound;

Type mlir::ga::error_bound::getCompanionType(Type type) {
  MLIRContext *context = type.getContext();
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked && isa<ShapedType>(type))
    return {};
  Type elem = ranked ? ranked.getElementType() : type;
  Type companion;
  if (auto f = dyn_cast<FloatType>(elem))
    companion = f.getWidth() == 64 ? (Type)Float64Type::get(context)
                                   : (Type)Float32Type::get(context);
  else if (isa<IntegerType, IndexType>(elem))
    companion = IntegerType::get(context, 1);
  else
    return {};
  return ranked ? RankedTensorType::get(ranked.getShape(), companion)
                : companion;
}

double mlir::ga::error_bound::getUnitRoundoff(FloatType type) {
  return std::ldexp(1.0, -static_cast<int>(type.getFPMantissaWidth()));
}

/// Whether a value of `type` can carry a companion inside a computation:
/// floats and integers, not index (shapes, offsets and loop counters are
/// exact).
static bool canCarry(Type type) {
  return getCompanionType(type) && !isa<IndexType>(getElementTypeOrSelf(type));
}

bool mlir::ga::error_bound::isDataMovement(Operation *op) {
  return isa<tensor::ExtractSliceOp, tensor::InsertSliceOp,
             tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
             tensor::ReshapeOp, tensor::ConcatOp, tensor::ExtractOp,
             tensor::InsertOp, tensor::FromElementsOp, tensor::SplatOp,
             tensor::PadOp>(op);
}

/// A zero of the companion type of `v` (0.0, or false).
static TypedAttr zeroOf(Type companionElement) {
  if (auto f = dyn_cast<FloatType>(companionElement))
    return FloatAttr::get(f, 0.0);
  return IntegerAttr::get(companionElement, 0);
}

Value BoundBuilder::getOrZero(OpBuilder &b, Location loc, Value v) {
  if (Value c = lookup(v))
    return c;
  Type type = getCompanionType(v.getType());
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return arith::ConstantOp::create(b, loc, zeroOf(type));
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, v), ranked.getElementType());
  Value zero =
      arith::ConstantOp::create(b, loc, zeroOf(ranked.getElementType()));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

LogicalResult BoundBuilder::processBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator()))
    if (failed(processOp(&op)))
      return failure();
  return success();
}

/// Whether `op` creates a float value from nothing inexact.
static bool isExactProducer(Operation *op) {
  return isa<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp>(op);
}

LogicalResult BoundBuilder::processOp(Operation *op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return boundGeneric(generic);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return boundFor(loop);
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return boundIf(branch);
  if (isDataMovement(op))
    return boundDataMovement(op);
  bool scalar = llvm::none_of(op->getResultTypes(),
                              [](Type t) { return isa<ShapedType>(t); });
  StringRef dialect = op->getDialect() ? op->getDialect()->getNamespace() : "";
  if (scalar && op->getNumRegions() == 0 &&
      (dialect == "arith" || dialect == "math")) {
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    return boundScalarOp(b, op, nullptr);
  }
  bool inexactOperand = llvm::any_of(
      op->getOperands(), [&](Value v) { return lookup(v) != nullptr; });
  bool makesData = llvm::any_of(op->getResultTypes(), canCarry);
  if (isa<func::CallOp>(op))
    return op->emitError("calls are not followed by the error bound: inline "
                         "the callee first (--inline)");
  // Shape queries (tensor.dim) and other ops without data results are exact
  // whatever their operands hold.
  if ((!makesData || (!inexactOperand && isExactProducer(op))) &&
      op->getNumRegions() == 0)
    return success();
  return op->emitError("no error-bound rule for '") << op->getName() << "'";
}

/// The number of terms each output element of `op` sums (the product of its
/// reduction loop ranges), as an f64 value built at `b`.
static Value buildNumTerms(OpBuilder &b, linalg::GenericOp op) {
  Location loc = op.getLoc();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  double count = 1;
  bool dynamic = false;
  for (auto [range, iterator] : llvm::zip(ranges, iterators))
    if (iterator == utils::IteratorType::reduction) {
      if (ShapedType::isDynamic(range))
        dynamic = true;
      else
        count *= static_cast<double>(range);
    }
  if (!dynamic)
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(count));
  Value product = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [range, iterator] : llvm::zip(
           cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc),
           iterators))
    if (iterator == utils::IteratorType::reduction)
      product = arith::MulIOp::create(
          b, loc, product, getValueOrCreateConstantIndexOp(b, loc, range.size));
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), product);
  return arith::SIToFPOp::create(b, loc, b.getF64Type(), asInt);
}

LogicalResult BoundBuilder::boundPayload(OpBuilder &b, Block &from,
                                         IRMapping &mapping,
                                         const ReductionContext *reduction) {
  for (Operation &op : from.without_terminator()) {
    if (op.getNumRegions())
      return op.emitError("no error bound through a region inside a "
                          "linalg payload");
    Operation *clone = b.clone(op, mapping);
    if (isa<linalg::IndexOp>(clone))
      continue;
    if (auto extract = dyn_cast<tensor::ExtractOp>(clone)) {
      if (Value c = lookup(extract.getTensor()))
        set(extract.getResult(),
            tensor::ExtractOp::create(b, extract.getLoc(), c,
                                      extract.getIndices()));
      continue;
    }
    StringRef dialect = clone->getDialect()->getNamespace();
    if (dialect != "arith" && dialect != "math") {
      // Index arithmetic (affine.apply, tensor.dim, ...) is exact.
      if (llvm::none_of(clone->getResultTypes(), canCarry))
        continue;
      return op.emitError("no error-bound rule for '")
             << op.getName() << "' in a linalg payload";
    }
    if (failed(boundScalarOp(b, clone, reduction)))
      return failure();
  }
  return success();
}

/// Which outputs of `op` need a companion: those whose accumulator or
/// yielded value is inexact, given the companions of the operands
/// (`isInexact` for values defined outside the payload).
static SmallVector<bool>
outputsWithCompanions(linalg::GenericOp op,
                      llvm::function_ref<bool(Value)> isInexact) {
  Block &body = op.getRegion().front();
  unsigned numInputs = op.getNumDpsInputs();
  llvm::DenseSet<Value> inexact;
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (isInexact(operand))
      inexact.insert(body.getArgument(i));
  auto test = [&](Value v) {
    if (inexact.contains(v))
      return true;
    return !op.getRegion().isAncestor(v.getParentRegion()) && isInexact(v);
  };
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation &inner : body.without_terminator()) {
      bool rounds = llvm::any_of(inner.getResultTypes(),
                                 [](Type t) { return isa<FloatType>(t); }) &&
                    !isa<arith::ConstantOp>(inner);
      if (rounds || llvm::any_of(inner.getOperands(), test))
        for (Value result : inner.getResults())
          inexact.insert(result);
    }
    for (auto [j, value] : llvm::enumerate(yield.getValues())) {
      BlockArgument acc = body.getArgument(numInputs + j);
      if (test(value) && !inexact.contains(acc)) {
        inexact.insert(acc);
        changed = true;
      }
    }
  }
  SmallVector<bool> with;
  for (auto [j, value] : llvm::enumerate(yield.getValues()))
    with.push_back(
        canCarry(op->getResult(j).getType()) &&
        (test(value) || inexact.contains(body.getArgument(numInputs + j))));
  return with;
}

LogicalResult BoundBuilder::boundGeneric(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics())
    return op.emitError("no error bound for a linalg op on buffers");
  Location loc = op.getLoc();
  OpBuilder b(op);
  SmallVector<bool> outWith =
      outputsWithCompanions(op, [&](Value v) { return lookup(v) != nullptr; });
  Block &body = op.getRegion().front();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numInputs = op.getNumDpsInputs(), numOutputs = op.getNumDpsInits();

  SmallVector<Value> inputs(op.getDpsInputs()), outputs(op.getDpsInits());
  SmallVector<AffineMap> newMaps(maps.begin(), maps.begin() + numInputs);
  SmallVector<unsigned> inputsWith;
  for (unsigned i = 0; i < numInputs; ++i)
    if (Value c = lookup(op.getDpsInputs()[i])) {
      inputs.push_back(c);
      newMaps.push_back(maps[i]);
      inputsWith.push_back(i);
    }
  newMaps.append(maps.begin() + numInputs, maps.end());
  SmallVector<Type> resultTypes(op->getResultTypes());
  SmallVector<unsigned> outputsWith;
  for (unsigned j = 0; j < numOutputs; ++j) {
    if (!outWith[j])
      continue;
    Value init = op.getDpsInits()[j];
    Value companionInit;
    if (body.getArgument(numInputs + j).use_empty() && !lookup(init))
      companionInit = tensor::EmptyOp::create(
          b, loc, tensor::getMixedSizes(b, loc, init),
          getElementTypeOrSelf(getCompanionType(init.getType())));
    else
      companionInit = getOrZero(b, loc, init);
    outputs.push_back(companionInit);
    newMaps.push_back(maps[numInputs + j]);
    resultTypes.push_back(companionInit.getType());
    outputsWith.push_back(j);
  }
  ReductionContext reduction;
  bool reduces = op.getNumReductionLoops() > 0;
  if (reduces)
    reduction.numTerms = buildNumTerms(b, op);

  auto newOp = linalg::GenericOp::create(b, loc, resultTypes, inputs, outputs,
                                         newMaps, op.getIteratorTypesArray());
  SmallVector<Type> argTypes;
  for (Value v : llvm::concat<Value>(inputs, outputs))
    argTypes.push_back(getElementTypeOrSelf(v.getType()));
  SmallVector<Location> argLocs(argTypes.size(), loc);
  Block *block = b.createBlock(&newOp.getRegion(), {}, argTypes, argLocs);
  unsigned firstOut = inputs.size();
  IRMapping mapping;
  for (unsigned i = 0; i < numInputs; ++i)
    mapping.map(body.getArgument(i), block->getArgument(i));
  for (auto [k, i] : llvm::enumerate(inputsWith))
    set(block->getArgument(i), block->getArgument(numInputs + k));
  for (unsigned j = 0; j < numOutputs; ++j) {
    BlockArgument acc = block->getArgument(firstOut + j);
    mapping.map(body.getArgument(numInputs + j), acc);
    if (reduces)
      reduction.accumulators.insert(acc);
  }
  for (auto [k, j] : llvm::enumerate(outputsWith))
    set(block->getArgument(firstOut + j),
        block->getArgument(firstOut + numOutputs + k));

  b.setInsertionPointToEnd(block);
  if (failed(boundPayload(b, body, mapping, reduces ? &reduction : nullptr)))
    return failure();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<Value> yielded;
  for (Value v : yield.getValues())
    yielded.push_back(mapping.lookupOrDefault(v));
  for (unsigned j : outputsWith) {
    Value c = lookup(yielded[j]);
    yielded.push_back(
        c ? c
          : arith::ConstantOp::create(
                b, loc,
                zeroOf(getCompanionType(yield.getValues()[j].getType()))));
  }
  linalg::YieldOp::create(b, loc, yielded);

  for (unsigned j = 0; j < numOutputs; ++j)
    op->getResult(j).replaceAllUsesWith(newOp->getResult(j));
  for (auto [k, j] : llvm::enumerate(outputsWith))
    set(newOp->getResult(j), newOp->getResult(numOutputs + k));
  op.erase();
  ++numBounded;
  return success();
}

void BoundBuilder::extendTerminator(Operation *terminator,
                                    ArrayRef<bool> withCompanion) {
  OpBuilder b(terminator);
  SmallVector<Value> values(terminator->getOperands());
  for (auto [v, with] : llvm::zip(terminator->getOperands(), withCompanion))
    if (with)
      values.push_back(getOrZero(b, terminator->getLoc(), v));
  terminator->setOperands(values);
}

LogicalResult BoundBuilder::boundFor(scf::ForOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<bool> with;
  SmallVector<Value> inits(op.getInitArgs());
  for (Value init : op.getInitArgs()) {
    with.push_back(canCarry(init.getType()));
    if (with.back())
      inits.push_back(getOrZero(b, loc, init));
  }
  unsigned n = op.getNumResults();
  auto newOp = scf::ForOp::create(
      b, loc, op.getLowerBound(), op.getUpperBound(), op.getStep(), inits,
      [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
        IRMapping mapping;
        mapping.map(op.getInductionVar(), iv);
        for (unsigned k = 0, c = n; k < n; ++k) {
          mapping.map(op.getRegionIterArgs()[k], args[k]);
          if (with[k])
            set(args[k], args[c++]);
        }
        for (Operation &inner : *op.getBody())
          nb.clone(inner, mapping);
      });
  if (failed(processBlock(*newOp.getBody())))
    return failure();
  extendTerminator(newOp.getBody()->getTerminator(), with);
  for (unsigned k = 0, c = n; k < n; ++k) {
    op->getResult(k).replaceAllUsesWith(newOp->getResult(k));
    if (with[k])
      set(newOp->getResult(k), newOp->getResult(c++));
  }
  op.erase();
  ++numBounded;
  return success();
}

LogicalResult BoundBuilder::boundIf(scf::IfOp op) {
  if (op.getNumResults() == 0)
    return failure(failed(processBlock(*op.thenBlock())) ||
                   (op.elseBlock() && failed(processBlock(*op.elseBlock()))));
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<bool> with;
  SmallVector<Type> types(op->getResultTypes());
  for (Type t : op->getResultTypes()) {
    with.push_back(canCarry(t));
    if (with.back())
      types.push_back(getCompanionType(t));
  }
  auto newOp = scf::IfOp::create(b, loc, types, op.getCondition(),
                                 /*addThenBlock=*/false,
                                 /*addElseBlock=*/false);
  IRMapping mapping;
  op.getThenRegion().cloneInto(&newOp.getThenRegion(), mapping);
  op.getElseRegion().cloneInto(&newOp.getElseRegion(), mapping);
  for (Region *region : {&newOp.getThenRegion(), &newOp.getElseRegion()}) {
    if (failed(processBlock(region->front())))
      return failure();
    extendTerminator(region->front().getTerminator(), with);
  }
  b.setInsertionPointAfter(newOp);
  Value flag = lookup(op.getCondition());
  unsigned n = op.getNumResults();
  for (unsigned k = 0, c = n; k < n; ++k) {
    op->getResult(k).replaceAllUsesWith(newOp->getResult(k));
    if (!with[k])
      continue;
    Value companion = newOp->getResult(c++);
    if (flag) {
      // Either branch may run where the condition may flip: no bound there
      // (an infinite bound, a set flag).
      Type elem = getElementTypeOrSelf(companion.getType());
      TypedAttr everywhere =
          isa<FloatType>(elem)
              ? (TypedAttr)FloatAttr::get(
                    elem, std::numeric_limits<double>::infinity())
              : (TypedAttr)IntegerAttr::get(elem, 1);
      Value unbounded = arith::ConstantOp::create(b, loc, everywhere);
      if (isa<RankedTensorType>(companion.getType())) {
        Value empty = tensor::EmptyOp::create(
            b, loc, tensor::getMixedSizes(b, loc, companion), elem);
        unbounded =
            linalg::FillOp::create(b, loc, unbounded, empty).getResult(0);
      }
      companion = arith::SelectOp::create(b, loc, flag, unbounded, companion);
    }
    set(newOp->getResult(k), companion);
  }
  op.erase();
  ++numBounded;
  return success();
}

LogicalResult BoundBuilder::boundDataMovement(Operation *op) {
  auto moves = [&](unsigned index) {
    return !(isa<tensor::ReshapeOp>(op) && index == 1) &&
           canCarry(op->getOperand(index).getType());
  };
  bool inexact = false;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    inexact |= moves(i) && lookup(op->getOperand(i));
  if (!inexact)
    return success();
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    if (lookup(
            pad.getConstantPaddingValue()
                ? Value()
                : cast<tensor::YieldOp>(pad.getRegion().front().getTerminator())
                      .getValue()))
      return op->emitError("no error bound for padding with an inexact "
                           "value");
  OpBuilder b(op);
  IRMapping mapping;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    if (moves(i))
      mapping.map(op->getOperand(i),
                  getOrZero(b, op->getLoc(), op->getOperand(i)));
  b.setInsertionPointAfter(op);
  Operation *clone = b.clone(*op, mapping);
  for (Value result : clone->getResults())
    result.setType(getCompanionType(result.getType()));
  if (auto pad = dyn_cast<tensor::PadOp>(clone)) {
    // The padding value is exact: its companion is zero.
    auto yield = cast<tensor::YieldOp>(pad.getRegion().front().getTerminator());
    OpBuilder inner(yield);
    yield->setOperand(0, arith::ConstantOp::create(
                             inner, yield.getLoc(),
                             zeroOf(pad.getResultType().getElementType())));
  }
  for (auto [result, companion] :
       llvm::zip(op->getResults(), clone->getResults()))
    set(result, companion);
  ++numBounded;
  return success();
}
