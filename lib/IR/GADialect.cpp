//===- GADialect.cpp - the ga dialect -------------------------------------===//

#include "ga/IR/GADialect.h"
#include "ga/IR/GAAttentionOps.h"
#include "ga/IR/GAGroupedOps.h"
#include "ga/IR/GALibraryOps.h"
#include "ga/IR/GAOps.h"
#include "ga/IR/GAShardOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ga;

#include "ga/IR/GADialect.cpp.inc"
#include "ga/IR/GAEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ga/IR/GAAttrs.cpp.inc"

namespace {
/// Which ga ops a call may be inlined with: the host collectives and NCCL's
/// on buffers (a rank's bound step in the memory report is inlined after
/// --convert-ga-to-host-collectives, or for the GPU --convert-ga-to-nccl),
/// which hold no region and refer to no symbol. Other ga ops keep their
/// function as it is (no change of what the passes see where they run).
struct GAInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *op, Region *, bool, IRMapping &) const final {
    return isa<HostCollectiveStartOp, HostCollectiveWaitOp, NcclAllReduceOp,
               NcclReduceScatterOp, NcclAllGatherOp>(op);
  }
};
} // namespace

void GADialect::initialize() {
  addInterfaces<GAInlinerInterface>();
  addOperations<
#define GET_OP_LIST
#include "ga/IR/GAOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ga/IR/GAShardOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ga/IR/GAAttentionOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ga/IR/GAGroupedOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ga/IR/GALibraryOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ga/IR/GAAttrs.cpp.inc"
      >();
}

/// Verifies the argument attributes `ga.batch`, `ga.init`, `ga.range` and
/// `ga.role`.
LogicalResult GADialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned regionIndex,
                                                  unsigned argIndex,
                                                  NamedAttribute attribute) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || regionIndex != 0)
    return op->emitOpError() << "'" << attribute.getName()
                             << "' is only valid on function arguments";
  Type argType = fn.getArgumentTypes()[argIndex];
  StringRef name = attribute.getName().strref();
  auto located = [&]() {
    return op->emitOpError() << "argument #" << argIndex << ": ";
  };

  if (name == getBatchAttrName()) {
    auto dim = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!dim || !dim.getType().isInteger(64))
      return located() << "'" << name << "' must be an i64 dimension index";
    // Memrefs too: the attribute survives bufferization of a step.
    auto shapedType = dyn_cast<ShapedType>(argType);
    if (!shapedType || !shapedType.hasRank() || shapedType.getRank() == 0)
      return located() << "'" << name
                       << "' needs a ranked tensor or memref of rank >= 1, got "
                       << argType;
    int64_t d = dim.getInt();
    if (d < 0 || d >= shapedType.getRank())
      return located() << "batch dimension " << d << " is out of range for "
                       << shapedType;
    return success();
  }
  if (name == getInitAttrName()) {
    auto kind = dyn_cast<StringAttr>(attribute.getValue());
    if (!kind || !llvm::is_contained(
                     {"normal", "uniform", "positive", "mask", "zeros", "ones"},
                     kind.getValue()))
      return located() << "'" << name
                       << "' must be one of \"normal\", \"uniform\", "
                          "\"positive\", \"mask\", \"zeros\", \"ones\"";
    return success();
  }
  if (name == getRangeAttrName()) {
    auto range = dyn_cast<ArrayAttr>(attribute.getValue());
    auto isNumber = [](Attribute a) { return isa<IntegerAttr, FloatAttr>(a); };
    if (!range || range.size() != 2 || !isNumber(range[0]) ||
        !isNumber(range[1]))
      return located() << "'" << name << "' must be [lo, hi] with two numbers";
    auto asDouble = [](Attribute a) {
      if (auto i = dyn_cast<IntegerAttr>(a))
        return static_cast<double>(i.getValue().getSExtValue());
      return cast<FloatAttr>(a).getValueAsDouble();
    };
    if (!(asDouble(range[0]) < asDouble(range[1])))
      return located() << "'" << name << "' must have lo < hi";
    return success();
  }
  if (name == getRoleAttrName()) {
    auto role = dyn_cast<StringAttr>(attribute.getValue());
    if (!role ||
        !llvm::is_contained({"parameters", "optimizer_state", "inputs"},
                            role.getValue()))
      return located() << "'" << name
                       << "' must be one of \"parameters\", "
                          "\"optimizer_state\", \"inputs\"";
    return success();
  }
  return op->emitOpError() << "unknown ga argument attribute '" << name << "'";
}
