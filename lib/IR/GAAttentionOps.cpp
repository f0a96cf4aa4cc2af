//===- GAAttentionOps.cpp - fused attention of the ga dialect -------------===//
//
// The verifiers of `ga.attention` and `ga.attention_backward`: the roles of
// the loops are read off the indexing maps (AttentionLoops::infer), then
// every operand's shape is checked against the loop extents the others
// give, so that a micro-batch tile of a batch loop slices every operand
// that the loop indexes by the same amount.
//
//===----------------------------------------------------------------------===//

#include "ga/IR/GAAttentionOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ga;

StringRef AttentionLoops::getRoleName(Role role) {
  switch (role) {
  case Role::Batch:
    return "batch";
  case Role::M:
    return "query position (m)";
  case Role::K1:
    return "query/key head dimension (k1)";
  case Role::K2:
    return "key position (k2)";
  case Role::N:
    return "value head dimension (n)";
  }
  llvm_unreachable("unknown attention loop role");
}

/// The loops that `map` indexes as plain dimensions, or failure when one of
/// its results is not a plain loop or names a loop twice.
static FailureOr<llvm::SmallBitVector> plainLoops(AffineMap map) {
  llvm::SmallBitVector used(map.getNumDims());
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || used.test(dim.getPosition()))
      return failure();
    used.set(dim.getPosition());
  }
  return used;
}

FailureOr<AttentionLoops> AttentionLoops::infer(ArrayRef<AffineMap> maps,
                                                std::string *reason) {
  auto fail = [&](const Twine &why) -> FailureOr<AttentionLoops> {
    if (reason)
      *reason = why.str();
    return failure();
  };
  if (maps.size() != 5 && maps.size() != 6)
    return fail("expects 5 indexing maps (query, key, value, output, "
                "logsumexp) or 6 (with the mask), got " +
                Twine(maps.size()));
  unsigned numLoops = maps[0].getNumDims();
  for (AffineMap map : maps)
    if (map.getNumDims() != numLoops || map.getNumSymbols() != 0)
      return fail("indexing maps must have the same " + Twine(numLoops) +
                  " loops and no symbols");
  static constexpr const char *names[] = {"query", "key", "value", "output",
                                          "logsumexp"};
  SmallVector<AffineMap> roleMaps = {maps[0], maps[1], maps[2],
                                     maps[maps.size() - 2], maps.back()};
  SmallVector<llvm::SmallBitVector> used;
  for (auto [name, map] : llvm::zip_equal(names, roleMaps)) {
    FailureOr<llvm::SmallBitVector> loops = plainLoops(map);
    if (failed(loops))
      return fail(Twine("the map of ") + name +
                  " must index it by distinct plain loops");
    used.push_back(*loops);
  }
  AttentionLoops result;
  int k1 = -1, k2 = -1, n = -1;
  for (unsigned loop = 0; loop < numLoops; ++loop) {
    bool q = used[0].test(loop), k = used[1].test(loop), v = used[2].test(loop),
         o = used[3].test(loop);
    Role role;
    if (q && k && v && o)
      role = Role::Batch;
    else if (q && o && !k && !v)
      role = Role::M;
    else if (q && k && !v && !o)
      role = Role::K1;
    else if (k && v && !q && !o)
      role = Role::K2;
    else if (v && o && !q && !k)
      role = Role::N;
    else
      return fail("loop d" + Twine(loop) +
                  " has no attention role: a loop indexes query, key, value "
                  "and output (batch), query and output (m), query and key "
                  "(k1), key and value (k2) or value and output (n)");
    int *single = role == Role::K1   ? &k1
                  : role == Role::K2 ? &k2
                  : role == Role::N  ? &n
                                     : nullptr;
    if (single && *single >= 0)
      return fail("loops d" + Twine(*single) + " and d" + Twine(loop) +
                  " are both " + getRoleName(role) +
                  " loops; there must be exactly one");
    if (single)
      *single = loop;
    result.roles.push_back(role);
  }
  if (k1 < 0 || k2 < 0 || n < 0 || !llvm::is_contained(result.roles, Role::M))
    return fail("the maps need an m, a k1, a k2 and an n loop");
  result.k1 = k1;
  result.k2 = k2;
  result.n = n;
  for (AffineExpr expr : maps[0].getResults()) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    if (result.roles[loop] == Role::M)
      result.queryPosition = loop;
  }
  // The logsumexp is the output without its n loop, in the same order.
  SmallVector<AffineExpr> expected;
  for (AffineExpr expr : roleMaps[3].getResults())
    if (cast<AffineDimExpr>(expr).getPosition() != result.n)
      expected.push_back(expr);
  if (ArrayRef<AffineExpr>(expected) != roleMaps[4].getResults())
    return fail("the map of logsumexp must be the output's without its n "
                "loop d" +
                Twine(result.n));
  return result;
}

namespace {
/// The extents of the loops of one attention op, collected from its
/// operands and results and checked to agree.
class LoopExtents {
public:
  LoopExtents(Operation *op, unsigned numLoops)
      : op(op), extents(numLoops, ShapedType::kDynamic), sources(numLoops, "") {
  }

  /// Records the extents that `type`, read through `map`, gives its loops;
  /// `name` says which operand it is. A constant `0` result (the mask's
  /// broadcast dimensions) needs size 1.
  LogicalResult add(StringRef name, ShapedType type, AffineMap map) {
    if (map.getNumResults() != type.getRank())
      return op->emitOpError()
             << "the map of " << name << " has " << map.getNumResults()
             << " results for its rank " << type.getRank();
    for (auto [position, expr] : llvm::enumerate(map.getResults())) {
      int64_t size = type.getDimSize(position);
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim) {
        if (size != 1)
          return op->emitOpError()
                 << "dimension " << position << " of " << name
                 << " is broadcast (a constant index) but has size " << size
                 << ", not 1";
        continue;
      }
      int64_t &extent = extents[dim.getPosition()];
      if (ShapedType::isDynamic(size))
        continue;
      if (!ShapedType::isDynamic(extent) && extent != size)
        return op->emitOpError()
               << "loop d" << dim.getPosition() << " has extent " << extent
               << " in " << sources[dim.getPosition()] << " but " << size
               << " in " << name;
      extent = size;
      sources[dim.getPosition()] = name;
    }
    return success();
  }

private:
  Operation *op;
  SmallVector<int64_t> extents;
  SmallVector<StringRef> sources;
};
} // namespace

/// The type the scores and the softmax are computed in for `element`: f64
/// for f64, f32 for every narrower float.
static Type getComputeType(Type element) {
  return element.isF64() ? element : Float32Type::get(element.getContext());
}

/// The checks both attention ops share: the maps, the loop extents of the
/// forward's operands and results, and their element types.
static FailureOr<AttentionLoops>
verifyAttentionOperands(Operation *op, ArrayAttr mapsAttr, Value query,
                        Value key, Value value, Value mask, Type outputType,
                        Type logsumexpType) {
  SmallVector<AffineMap> maps =
      llvm::to_vector(mapsAttr.getAsValueRange<AffineMapAttr>());
  std::string reason;
  FailureOr<AttentionLoops> loops = AttentionLoops::infer(maps, &reason);
  if (failed(loops))
    return op->emitOpError() << reason;
  if (maps.size() != (mask ? 6u : 5u))
    return op->emitOpError()
           << "has " << maps.size() << " indexing maps, expected "
           << (mask ? 6 : 5) << (mask ? " (with the mask)" : " (no mask)");
  auto shaped = [](Type type) { return cast<ShapedType>(type); };
  LoopExtents extents(op, loops->getNumLoops());
  if (failed(extents.add("query", shaped(query.getType()), maps[0])) ||
      failed(extents.add("key", shaped(key.getType()), maps[1])) ||
      failed(extents.add("value", shaped(value.getType()), maps[2])) ||
      failed(
          extents.add("output", shaped(outputType), maps[maps.size() - 2])) ||
      failed(extents.add("logsumexp", shaped(logsumexpType), maps.back())))
    return failure();
  if (mask) {
    for (AffineExpr expr : maps[3].getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim)
        continue;
      AttentionLoops::Role role = loops->roles[dim.getPosition()];
      if (role == AttentionLoops::Role::K1 || role == AttentionLoops::Role::N)
        return op->emitOpError()
               << "the mask is indexed by the "
               << AttentionLoops::getRoleName(role) << " loop d"
               << dim.getPosition()
               << "; it may be indexed by batch, m and k2 loops only";
    }
    if (failed(extents.add("mask", shaped(mask.getType()), maps[3])))
      return failure();
    if (!isa<FloatType>(getElementTypeOrSelf(mask.getType())))
      return op->emitOpError()
             << "the mask must hold floats (added to the scores, -inf where "
                "masked), got "
             << mask.getType();
  }
  Type element = getElementTypeOrSelf(query.getType());
  if (!isa<FloatType>(element) ||
      getElementTypeOrSelf(key.getType()) != element ||
      getElementTypeOrSelf(value.getType()) != element)
    return op->emitOpError()
           << "query, key and value must hold the same float type, got "
           << query.getType() << ", " << key.getType() << " and "
           << value.getType();
  if (getElementTypeOrSelf(outputType) != element)
    return op->emitOpError() << "the output must hold " << element
                             << " like the query, got " << outputType;
  Type compute = getComputeType(element);
  if (getElementTypeOrSelf(logsumexpType) != compute)
    return op->emitOpError()
           << "the logsumexp must hold the compute type " << compute << " of "
           << element << ", got " << logsumexpType;
  return loops;
}

LogicalResult AttentionOp::verify() {
  return verifyAttentionOperands(*this, getIndexingMaps(), getQuery(), getKey(),
                                 getValue(), getMask(), getOutput().getType(),
                                 getLogsumexp().getType());
}

LogicalResult AttentionBackwardOp::verify() {
  if (failed(verifyAttentionOperands(
          *this, getIndexingMaps(), getQuery(), getKey(), getValue(), getMask(),
          getOutput().getType(), getLogsumexp().getType())))
    return failure();
  if (getGradOutput().getType() != getOutput().getType())
    return emitOpError() << "grad_output " << getGradOutput().getType()
                         << " must have the type of output "
                         << getOutput().getType();
  std::pair<Value, Value> gradients[] = {{getQuery(), getGradQuery()},
                                         {getKey(), getGradKey()},
                                         {getValue(), getGradValue()}};
  static constexpr const char *names[] = {"query", "key", "value"};
  for (auto [name, pair] : llvm::zip_equal(names, gradients))
    if (pair.first.getType() != pair.second.getType())
      return emitOpError() << "the gradient of " << name << " "
                           << pair.second.getType() << " must have its type "
                           << pair.first.getType();
  return success();
}

#define GET_OP_CLASSES
#include "ga/IR/GAAttentionOps.cpp.inc"
