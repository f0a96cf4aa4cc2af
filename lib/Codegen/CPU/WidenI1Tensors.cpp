//===- WidenI1Tensors.cpp - i1 tensors of linalg ops as i8 ----------------===//
//
// --ga-widen-i1-tensors: the i1 tensors that linalg ops on tensors compute
// (masks: comparisons, one-hot encodings, "any"/"all" reductions) become i8
// tensors holding 0 or 1, so that their buffers can be read and written as
// vectors by ga-vectorize-linalg. Each payload reads such an operand through
// an `arith.trunci` and writes such a result through an `arith.extui`.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_WIDENI1TENSORS
#include "ga/Codegen/CPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

/// Whether `type` is a ranked tensor of i1.
static bool isI1Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isInteger(1);
}

/// `type` (a ranked tensor) with element type `elem`.
static RankedTensorType withElement(Type type, Type elem) {
  return cast<RankedTensorType>(type).clone(elem);
}

/// Whether a linalg op reads `value`, directly or through reshapes: whether
/// an i8 form of it can be read without a narrowing copy (see
/// Widener::wideOf).
static bool readByLinalg(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
      return readByLinalg(user->getResult(0));
    return isa<linalg::LinalgOp>(user);
  });
}

/// The rewrite of one function: linalg ops in program order, each i1 tensor
/// it defines replaced by an i8 one, and by a narrowing copy (i8 -> i1) for
/// the users that are not rewritten; the narrowing copies nobody reads are
/// erased at the end.
class Widener {
public:
  explicit Widener(MLIRContext *ctx)
      : rewriter(ctx), i8(IntegerType::get(ctx, 8)) {}

  /// Rewrites `op` if it reads or writes an i1 tensor that has (or can be
  /// given) an i8 form; returns whether it did.
  bool widen(linalg::LinalgOp op);

  /// Erases the narrowing copies (and their tensor.empty) and the i1
  /// reshapes nobody reads.
  void eraseUnusedNarrowings();

private:
  Value wideOf(Value value, bool isInit, bool create);
  Value narrow(Location loc, Value wideValue);
  bool widenFill(linalg::FillOp fill);

  IRRewriter rewriter;
  Type i8;
  /// An i1 tensor -> the i8 tensor with its values (0 or 1).
  DenseMap<Value, Value> wide;
  SmallVector<linalg::GenericOp> narrowings;
  /// The i1 reshapes given an i8 form, in the order they were met.
  SmallVector<Operation *> reshapes;
};

/// The i8 form of the i1 tensor `value`: the widened result it narrows or,
/// if `create`, a new one: an i8 tensor.empty for an init that is a
/// tensor.empty, an i8 constant for a dense i1 constant; null if there is
/// none (`value` stays i1).
Value Widener::wideOf(Value value, bool isInit, bool create) {
  if (!isI1Tensor(value.getType()))
    return {};
  if (Value known = wide.lookup(value))
    return known;
  if (!create)
    return {};
  Operation *def = value.getDefiningOp();
  OpBuilder::InsertionGuard guard(rewriter);
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def); empty && isInit) {
    rewriter.setInsertionPointAfter(empty);
    return wide[value] = tensor::EmptyOp::create(
               rewriter, empty.getLoc(), withElement(value.getType(), i8),
               empty.getDynamicSizes());
  }
  // A reshape of a widened tensor (a mask unsqueezed to broadcast along
  // a row: `expand_shape` of [B, H, T] into [B, H, T, 1]) reshapes its i8
  // form, so that its reader reads i8 too.
  if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def) &&
      !isInit) {
    Value source = def->getOperand(0);
    Value wideSource = wideOf(source, /*isInit=*/false, /*create=*/false);
    if (!wideSource)
      return {};
    rewriter.setInsertionPointAfter(def);
    auto type = withElement(value.getType(), i8);
    Operation *reshape =
        isa<tensor::ExpandShapeOp>(def)
            ? tensor::ExpandShapeOp::create(
                  rewriter, def->getLoc(), type, wideSource,
                  cast<tensor::ExpandShapeOp>(def).getReassociationIndices(),
                  cast<tensor::ExpandShapeOp>(def).getMixedOutputShape())
                  .getOperation()
            : tensor::CollapseShapeOp::create(
                  rewriter, def->getLoc(), type, wideSource,
                  cast<tensor::CollapseShapeOp>(def).getReassociationIndices())
                  .getOperation();
    reshapes.push_back(def);
    return wide[value] = reshape->getResult(0);
  }
  DenseElementsAttr dense;
  if (auto cst = dyn_cast_or_null<arith::ConstantOp>(def))
    dense = dyn_cast<DenseElementsAttr>(cst.getValue());
  if (dense) {
    rewriter.setInsertionPointAfter(def);
    auto type = withElement(value.getType(), i8);
    auto attr =
        dense.mapValues(i8, [](const APInt &bit) { return bit.zext(8); });
    return wide[value] =
               arith::ConstantOp::create(rewriter, def->getLoc(), type, attr);
  }
  return {};
}

/// An i1 tensor with the values of the i8 tensor `wideValue`, for the users
/// that read i1: `linalg.generic` of `arith.trunci`.
Value Widener::narrow(Location loc, Value wideValue) {
  auto type = cast<RankedTensorType>(wideValue.getType());
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, wideValue);
  Value init =
      tensor::EmptyOp::create(rewriter, loc, sizes, rewriter.getIntegerType(1));
  AffineMap id = rewriter.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  auto copy = linalg::GenericOp::create(
      rewriter, loc, init.getType(), wideValue, init,
      ArrayRef<AffineMap>{id, id}, parallel,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value bit = arith::TruncIOp::create(b, l, b.getI1Type(), args[0]);
        linalg::YieldOp::create(b, l, bit);
      });
  narrowings.push_back(copy);
  Value result = copy.getResult(0);
  wide[result] = wideValue;
  return result;
}

/// A linalg.fill of an i1 tensor whose init has an i8 form: a fill of that
/// form with the scalar widened.
bool Widener::widenFill(linalg::FillOp fill) {
  Value init = fill.getDpsInits()[0];
  Value wideInit =
      wideOf(init, /*isInit=*/true, readByLinalg(fill->getResult(0)));
  if (!wideInit || !fill.hasPureTensorSemantics())
    return false;
  rewriter.setInsertionPoint(fill);
  Value scalar = arith::ExtUIOp::create(rewriter, fill.getLoc(), i8,
                                        fill.getDpsInputs()[0]);
  auto wideFill = linalg::FillOp::create(rewriter, fill.getLoc(),
                                         ValueRange{scalar}, wideInit);
  rewriter.setInsertionPointAfter(wideFill);
  rewriter.replaceOp(fill, narrow(fill.getLoc(), wideFill.getResult(0)));
  return true;
}

bool Widener::widen(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return false;
  if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation()))
    return widenFill(fill);
  // Which operands have an i8 form; an init without one keeps its result i1.
  SmallVector<Value> operands;
  SmallVector<bool> widened;
  for (OpOperand &operand : op->getOpOperands()) {
    // A new i8 form for an input, or for an init whose result a linalg op
    // reads (a result that only leaves would need a narrowing copy).
    bool isInit = op.isDpsInit(&operand);
    Value w = wideOf(operand.get(), isInit,
                     !isInit || readByLinalg(op.getTiedOpResult(&operand)));
    operands.push_back(w ? w : operand.get());
    widened.push_back(static_cast<bool>(w));
  }
  if (llvm::none_of(widened, [](bool w) { return w; }))
    return false;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    // Named ops (linalg.map, linalg.reduce, ...) through their generic form,
    // whose payload can be rewritten.
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> general =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(general))
      return false;
    generic = *general;
  }

  unsigned numInputs = generic.getNumDpsInputs();
  SmallVector<Value> inputs(operands.begin(), operands.begin() + numInputs);
  SmallVector<Value> inits(operands.begin() + numInputs, operands.end());
  SmallVector<Type> resultTypes;
  for (Value init : inits)
    resultTypes.push_back(init.getType());
  rewriter.setInsertionPoint(generic);
  auto rewritten = linalg::GenericOp::create(
      rewriter, generic.getLoc(), resultTypes, inputs, inits,
      generic.getIndexingMapsArray(), generic.getIteratorTypesArray());
  rewritten->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(generic.getRegion(), rewritten.getRegion(),
                              rewritten.getRegion().end());
  Block &body = rewritten.getRegion().front();
  // Widened block arguments are read through a truncation (0 or 1 -> i1),
  // widened results written through a zero extension.
  rewriter.setInsertionPointToStart(&body);
  for (auto [arg, w] : llvm::zip_equal(body.getArguments(), widened)) {
    if (!w)
      continue;
    arg.setType(i8);
    if (arg.use_empty())
      continue;
    Value bit = arith::TruncIOp::create(rewriter, arg.getLoc(),
                                        rewriter.getI1Type(), arg);
    rewriter.replaceAllUsesExcept(arg, bit, bit.getDefiningOp());
  }
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  rewriter.setInsertionPoint(yield);
  for (unsigned r = 0, e = inits.size(); r < e; ++r)
    if (widened[numInputs + r])
      yield->setOperand(r, arith::ExtUIOp::create(rewriter, yield.getLoc(), i8,
                                                  yield->getOperand(r)));

  // Results: the i8 ones through a narrowing copy for their users (rewritten
  // later to read the i8 form where they can).
  rewriter.setInsertionPointAfter(rewritten);
  SmallVector<Value> replacements;
  for (unsigned r = 0, e = inits.size(); r < e; ++r) {
    Value result = rewritten.getResult(r);
    replacements.push_back(
        widened[numInputs + r] ? narrow(generic.getLoc(), result) : result);
  }
  rewriter.replaceOp(generic, replacements);
  return true;
}

void Widener::eraseUnusedNarrowings() {
  // The i1 reshapes whose readers all read their i8 forms (a reshape of a
  // reshape after it).
  for (Operation *reshape : llvm::reverse(reshapes)) {
    if (!reshape->use_empty())
      continue;
    wide.erase(reshape->getResult(0));
    rewriter.eraseOp(reshape);
  }
  for (linalg::GenericOp copy : llvm::reverse(narrowings)) {
    if (!copy->use_empty())
      continue;
    Operation *empty = copy.getDpsInits()[0].getDefiningOp();
    wide.erase(copy.getResult(0));
    rewriter.eraseOp(copy);
    if (empty && empty->use_empty())
      rewriter.eraseOp(empty);
  }
  // The i1 tensor.empty and constants replaced by their i8 forms.
  for (auto [narrowValue, wideValue] : wide) {
    Operation *def = narrowValue.getDefiningOp();
    if (isa_and_nonnull<tensor::EmptyOp, arith::ConstantOp>(def) &&
        def->use_empty())
      rewriter.eraseOp(def);
  }
}

struct WidenI1TensorsPass
    : public ga::impl::WidenI1TensorsBase<WidenI1TensorsPass> {
  void runOnOperation() override {
    // Program order: producers before their users, so a user finds its
    // operand's i8 form.
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](linalg::LinalgOp op) { ops.push_back(op); });
    Widener widener(&getContext());
    for (linalg::LinalgOp op : ops)
      if (widener.widen(op))
        ++numWidened;
    widener.eraseUnusedNarrowings();
  }
};

} // namespace
