//===- BatchLattice.cpp - the lattice of batch classes --------------------===//
//
// The join of two batch classes: what a value that may come from either of
// two places (the branches of an scf.if, the initial and the yielded value of
// a loop-carried argument, two visits of a transfer function while the
// solver iterates) is.
//
//===----------------------------------------------------------------------===//

#include "ga/Analysis/BatchDependence.h"
#include "ga/IR/GAGroupedOps.h"

using namespace mlir;
using namespace mlir::ga;

using Kind = BatchClass::Kind;

/// The rank of a kind in the order of the lattice. Each transfer function
/// must be monotone in it: an input that turns per-sample turns a uniform or
/// derived result into a per-sample or reduced one, so reduced values rank
/// above derived ones and per-sample values above both.
static int getRank(Kind kind) {
  switch (kind) {
  case Kind::Uninitialized:
    return 0;
  case Kind::LoopIndex:
    return 1;
  case Kind::Uniform:
    return 2;
  case Kind::Derived:
    return 3;
  case Kind::Reduced:
    return 4;
  case Kind::Batched:
  case Kind::Element:
    return 5;
  case Kind::Unknown:
    return 6;
  }
  llvm_unreachable("unknown kind");
}

/// The kind of the join of two initialized, known classes, or Unknown when
/// they contradict each other.
static Kind joinKinds(const BatchClass &lhs, const BatchClass &rhs) {
  Kind a = lhs.kind, b = rhs.kind;
  // A value that is per-sample on one path is per-sample (the rewrite
  // re-creates the other paths' values at micro-batch size), as long as
  // every per-sample path agrees on the layout.
  if (a == Kind::Batched && b == Kind::Batched)
    return lhs.dim == rhs.dim && lhs.factor == rhs.factor &&
                   lhs.stacks == rhs.stacks
               ? Kind::Batched
               : Kind::Unknown;
  if (getRank(a) == 5 && getRank(b) == 5 && a != b)
    return Kind::Unknown;
  // One loop index stays that index; two are a uniform index.
  if (a == Kind::LoopIndex && b == Kind::LoopIndex && lhs.dim != rhs.dim)
    return Kind::Uniform;
  return getRank(a) >= getRank(b) ? a : b;
}

BatchClass BatchClass::join(const BatchClass &lhs, const BatchClass &rhs) {
  if (lhs.isUninitialized())
    return rhs;
  if (rhs.isUninitialized() || lhs.isUnknown())
    return lhs;
  if (rhs.isUnknown())
    return rhs;

  BatchClass joined;
  joined.kind = joinKinds(lhs, rhs);
  if (joined.kind == Kind::Unknown) {
    // The region op whose paths disagree reports it (no origin here).
    return joined;
  }
  joined.dependsOnParams = lhs.dependsOnParams || rhs.dependsOnParams;
  joined.level = std::max(lhs.level, rhs.level);
  // A size turns into the batch extent when its source turns per-sample;
  // two different extents are none (-1, the top of this component).
  if (!lhs.extentFactor)
    joined.extentFactor = rhs.extentFactor;
  else if (!rhs.extentFactor || lhs.extentFactor == rhs.extentFactor)
    joined.extentFactor = lhs.extentFactor;
  else
    joined.extentFactor = -1;
  switch (joined.kind) {
  case Kind::Batched: {
    const BatchClass &batched = lhs.isBatched() ? lhs : rhs;
    joined.dim = batched.dim;
    joined.factor = batched.factor;
    joined.stacks = batched.stacks;
    break;
  }
  case Kind::LoopIndex:
    joined.dim = lhs.dim;
    break;
  case Kind::Reduced:
    // Different combiners: a reduction that is not one associative op.
    if (lhs.isPostReduction() && rhs.isPostReduction() &&
        lhs.kind == rhs.kind && lhs.combiner != rhs.combiner)
      joined.combiner = std::nullopt;
    else
      joined.combiner = lhs.kind == Kind::Reduced ? lhs.combiner : rhs.combiner;
    break;
  default:
    break;
  }
  if (joined.isPostReduction())
    joined.origin = lhs.origin ? lhs.origin : rhs.origin;
  return joined;
}

BatchClass BatchClass::readAt(Value value) const {
  if (kind != Kind::Reduced || value.getDefiningOp<linalg::LinalgOp>() ||
      value.getDefiningOp<GroupedMatmulOp>())
    return *this;
  BatchClass derived = *this;
  derived.kind = Kind::Derived;
  derived.combiner = std::nullopt;
  return derived;
}

bool BatchClass::operator==(const BatchClass &other) const {
  return kind == other.kind && dim == other.dim && factor == other.factor &&
         stacks == other.stacks && combiner == other.combiner &&
         dependsOnParams == other.dependsOnParams && level == other.level &&
         extentFactor == other.extentFactor && origin == other.origin;
}

void BatchClass::print(raw_ostream &os) const {
  switch (kind) {
  case Kind::Uninitialized:
    os << "unreached";
    return;
  case Kind::Unknown:
    os << "unknown";
    return;
  case Kind::LoopIndex:
    os << "index(d" << dim << ")";
    return;
  case Kind::Uniform:
    os << "uniform";
    return;
  case Kind::Batched:
    os << "batched(" << dim;
    if (factor != 1)
      os << " x" << factor;
    if (stacks != 1)
      os << ", " << stacks << " stacked";
    os << ")";
    break;
  case Kind::Element:
    os << "element";
    break;
  case Kind::Reduced:
    os << "reduced("
       << (combiner ? vector::stringifyCombiningKind(*combiner) : "custom")
       << ")";
    break;
  case Kind::Derived:
    os << "derived";
    break;
  }
  if (!dependsOnParams)
    os << " data";
}
