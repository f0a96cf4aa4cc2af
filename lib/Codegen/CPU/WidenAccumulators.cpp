//===- WidenAccumulators.cpp - bf16/f16 reductions accumulated in f32 -----===//
//
// --ga-widen-accumulators: a linalg op with a reduction loop whose init is a
// bf16 or f16 tensor (a matrix product, a sum, a norm of a low-precision
// tensor) is rewritten to accumulate into an f32 copy of its init, its
// payload computing in f32, and its result rounded to the original type
// once, as PyTorch's CPU kernels do (their accumulator type for bf16 and
// f16 is float).
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CastInterfaces.h"

namespace mlir::ga {
#define GEN_PASS_DEF_WIDENACCUMULATORS
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Whether `type` is a float type that PyTorch accumulates in float.
static bool isLowFloat(Type type) { return type.isBF16() || type.isF16(); }

/// The type a payload value of type `type` has once widened.
static Type widened(Type type) {
  return isLowFloat(type) ? Float32Type::get(type.getContext()) : type;
}

static bool hasLowElement(Value tensor) {
  return isLowFloat(getElementTypeOrSelf(tensor.getType()));
}

/// Whether `op` computes the same function on f32 as on its low-precision
/// type, only rounding less: an element-wise arith or math op without
/// regions whose float operands and results all have one type (results may
/// also be integers: comparisons). Casts are not: their meaning depends on
/// the types (a bitcast reads the bits).
static bool computesInAnyFloat(Operation *op) {
  if (op->getNumRegions() != 0 || isa<CastOpInterface>(op) ||
      !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      !op->hasTrait<OpTrait::Elementwise>())
    return false;
  Type floatType;
  for (Type type : llvm::concat<Type>(llvm::to_vector(op->getOperandTypes()),
                                      llvm::to_vector(op->getResultTypes()))) {
    if (!isa<FloatType>(type))
      continue;
    if (floatType && type != floatType)
      return false;
    floatType = type;
  }
  return true;
}

/// Whether every op of `payload` has a faithful f32 form: an op that reads a
/// low-precision value must be an `arith.extf` or compute in any float
/// type; an op that only produces one (a constant, a `truncf`, a
/// conversion from an integer) is kept, its result extended. Ops with
/// regions are left alone.
static bool canWiden(Block &payload) {
  for (Operation &op : payload.without_terminator()) {
    if (op.getNumRegions() != 0)
      return false;
    bool readsLow = llvm::any_of(op.getOperandTypes(), isLowFloat);
    if (readsLow && !isa<arith::ExtFOp>(op) && !computesInAnyFloat(&op))
      return false;
  }
  return true;
}

/// The tensor `value` converted element-wise to `elem` by a linalg.generic
/// of `arith.extf` (`extend`) or `arith.truncf`.
static Value convert(OpBuilder &b, Location loc, Value value, Type elem,
                     bool extend) {
  auto type = cast<RankedTensorType>(value.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, value), elem);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), value, init, ArrayRef<AffineMap>{id, id},
      parallel, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v =
            extend ? arith::ExtFOp::create(nb, l, elem, args[0]).getResult()
                   : arith::TruncFOp::create(nb, l, elem, args[0]).getResult();
        linalg::YieldOp::create(nb, l, v);
      });
  return generic.getResult(0);
}

/// The f32 form of the init `init`: a fill of f32 with the extended scalar
/// when `init` is a fill (a zero accumulator), else an extended copy.
static Value extendInit(OpBuilder &b, Location loc, Value init) {
  Type f32 = b.getF32Type();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics())
    return convert(b, loc, init, f32, /*extend=*/true);
  Value scalar = fill.getDpsInputs()[0];
  if (isLowFloat(scalar.getType()))
    scalar = arith::ExtFOp::create(b, loc, f32, scalar);
  else if (scalar.getType() != f32)
    return convert(b, loc, init, f32, /*extend=*/true);
  Value empty =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, init), f32);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, empty).getResult(0);
}

/// Clones a payload into a new body with every low-precision value in f32.
class PayloadWidener {
public:
  explicit PayloadWidener(OpBuilder &b) : b(b), f32(b.getF32Type()) {}

  /// The new value of `old`: its widened form; a low-precision value from
  /// outside the payload is extended where it is first read.
  Value lookup(Value old) {
    if (Value known = map.lookupOrNull(old))
      return known;
    if (!isLowFloat(old.getType()))
      return old;
    Value wide = arith::ExtFOp::create(b, old.getLoc(), f32, old);
    map.map(old, wide);
    return wide;
  }

  void bind(Value old, Value value) { map.map(old, value); }

  /// Adds the f32 form of `op` (canWiden holds) at the builder's point.
  void widen(Operation &op) {
    Location loc = op.getLoc();
    if (auto ext = dyn_cast<arith::ExtFOp>(op);
        ext && isLowFloat(ext.getIn().getType())) {
      Value wide = lookup(ext.getIn());
      map.map(
          ext.getResult(),
          ext.getType() == f32
              ? wide
              : arith::ExtFOp::create(b, loc, ext.getType(), wide).getResult());
      return;
    }
    if (llvm::any_of(op.getOperandTypes(), isLowFloat)) {
      // Computes in any float type: the same op on f32 operands.
      OperationState state(loc, op.getName());
      for (Value operand : op.getOperands())
        state.addOperands(lookup(operand));
      for (Type type : op.getResultTypes())
        state.addTypes(widened(type));
      state.addAttributes(op.getAttrs());
      Operation *wide = b.create(state);
      for (auto [old, now] : llvm::zip(op.getResults(), wide->getResults()))
        map.map(old, now);
      return;
    }
    // Reads no low-precision value: kept as it is, a low-precision result
    // (a rounding the step asked for) extended.
    Operation *copy = b.clone(op, map);
    for (auto [old, now] : llvm::zip(op.getResults(), copy->getResults()))
      map.map(old, isLowFloat(now.getType())
                       ? arith::ExtFOp::create(b, loc, f32, now).getResult()
                       : now);
  }

private:
  OpBuilder &b;
  Type f32;
  IRMapping map;
};

/// Rewrites `op` to accumulate in f32 (see the pass description).
static void widenAccumulators(linalg::LinalgOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (Value init : op.getDpsInits()) {
    inits.push_back(hasLowElement(init) ? extendInit(b, loc, init) : init);
    types.push_back(inits.back().getType());
  }
  auto generic = linalg::GenericOp::create(b, loc, types, op.getDpsInputs(),
                                           inits, op.getIndexingMapsArray(),
                                           op.getIteratorTypesArray());
  Block *payload = op.getBlock();
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    argTypes.push_back(op.isDpsInit(&operand) ? widened(arg.getType())
                                              : arg.getType());
    argLocs.push_back(arg.getLoc());
  }
  Block *body = b.createBlock(&generic.getRegion(), {}, argTypes, argLocs);
  PayloadWidener widener(b);
  for (auto [old, now] :
       llvm::zip(payload->getArguments(), body->getArguments()))
    widener.bind(
        old,
        isLowFloat(now.getType())
            ? arith::ExtFOp::create(b, loc, b.getF32Type(), now).getResult()
            : now);
  for (Operation &inner : payload->without_terminator())
    widener.widen(inner);
  SmallVector<Value> yielded;
  for (Value value : payload->getTerminator()->getOperands())
    yielded.push_back(widener.lookup(value));
  linalg::YieldOp::create(b, loc, yielded);

  b.setInsertionPointAfter(generic);
  SmallVector<Value> results;
  for (auto [old, now] : llvm::zip(op->getResults(), generic.getResults()))
    results.push_back(old.getType() == now.getType()
                          ? Value(now)
                          : convert(b, loc, now,
                                    getElementTypeOrSelf(old.getType()),
                                    /*extend=*/false));
  op->replaceAllUsesWith(results);
  op->erase();
}

struct WidenAccumulators
    : public mlir::ga::impl::WidenAccumulatorsBase<WidenAccumulators> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0 &&
          llvm::any_of(op.getDpsInits(), hasLowElement) &&
          canWiden(*op.getBlock()))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      widenAccumulators(op);
    numWidened += candidates.size();
  }
};

} // namespace
