//===- GAToNCCL.cpp - data-parallel collectives to the NCCL runtime -------===//
//
// --convert-ga-to-nccl: `ga.all_reduce` / `shard.all_reduce` to in-place
// calls of gaNcclAllReduce (lib/Runtime/NCCL), NCCL's own datatype and
// reduction codes, `mean` as ncclAvg. The stream (first operand) is null
// here; --ga-gpu-single-stream replaces it with the step's stream.
//
//===----------------------------------------------------------------------===//

#include "ga/Conversion/Passes.h"

#include "../CollectiveLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "ga-runtime/GARuntimeABI.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CONVERTGATONCCL
#include "ga/Conversion/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

/// The NCCL runtime's entry point (include/ga-runtime/GARuntimeABI.h).
static constexpr StringLiteral kAllReduceFn = ga_abi::kNcclAllReduce;

/// NCCL's ncclDataType_t (nccl.h; stable across NCCL 2.x).
static std::optional<int32_t> toNcclDatatype(Type type) {
  if (type.isF16())
    return 6;
  if (type.isF32())
    return 7;
  if (type.isF64())
    return 8;
  if (type.isBF16())
    return 9;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer || integer.isSigned())
    return std::nullopt;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 8:
    return isUnsigned ? 1 : 0; // ncclUint8 : ncclInt8
  case 32:
    return isUnsigned ? 3 : 2; // ncclUint32 : ncclInt32
  case 64:
    return isUnsigned ? 5 : 4; // ncclUint64 : ncclInt64
  default:
    return std::nullopt;
  }
}

/// NCCL's ncclRedOp_t: ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg.
static std::optional<int32_t> toNcclOp(Reduction reduction) {
  switch (reduction) {
  case Reduction::Sum:
    return 0;
  case Reduction::Product:
    return 1;
  case Reduction::Max:
    return 2;
  case Reduction::Min:
    return 3;
  case Reduction::Mean:
    return 4;
  case Reduction::And:
  case Reduction::Or:
  case Reduction::Xor:
    return std::nullopt;
  }
  return std::nullopt;
}

namespace {
struct ConvertGAToNCCLPass
    : public ga::impl::ConvertGAToNCCLBase<ConvertGAToNCCLPass> {
  using ConvertGAToNCCLBase::ConvertGAToNCCLBase;

  void runOnOperation() override;

private:
  func::FuncOp getOrDeclareRuntime(ModuleOp module);
};
} // namespace

func::FuncOp ConvertGAToNCCLPass::getOrDeclareRuntime(ModuleOp module) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(kAllReduceFn))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(&getContext());
  auto fn =
      func::FuncOp::create(b, module.getLoc(), kAllReduceFn,
                           b.getFunctionType({ptr, ptr, b.getI64Type(),
                                              b.getI32Type(), b.getI32Type()},
                                             {b.getI32Type()}));
  fn.setPrivate();
  return fn;
}

void ConvertGAToNCCLPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  for (func::FuncOp func : funcs) {
    if (func.isExternal())
      continue;
    FailureOr<SmallVector<CollectiveGroup>> groups = collectCollectives(func);
    if (failed(groups))
      return signalPassFailure();
    for (CollectiveGroup &group : *groups) {
      Operation *anchor = group.ops.back();
      Location loc = anchor->getLoc();
      auto type = cast<RankedTensorType>(anchor->getOperand(0).getType());
      std::optional<int32_t> dtype = toNcclDatatype(type.getElementType());
      std::optional<int32_t> op = toNcclOp(group.reduction);
      if (!dtype || !op) {
        anchor->emitError() << "NCCL has no all-reduce of this kind on "
                            << type.getElementType() << " elements";
        return signalPassFailure();
      }
      func::FuncOp runtime = getOrDeclareRuntime(module);
      OpBuilder b(anchor);
      CollectiveBuffer buf = prepareBuffer(b, loc, group);

      // The device address of the first element: aligned base + offset.
      auto flatType = cast<MemRefType>(buf.flat.getType());
      Value base =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buf.flat);
      auto metadata =
          memref::ExtractStridedMetadataOp::create(b, loc, buf.flat);
      unsigned bytes = flatType.getElementTypeBitWidth() / 8;
      Value offsetBytes =
          arith::MulIOp::create(b, loc, metadata.getOffset(),
                                arith::ConstantIndexOp::create(b, loc, bytes));
      Value address = arith::AddIOp::create(b, loc, base, offsetBytes);
      Value address64 =
          arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
      auto ptr = LLVM::LLVMPointerType::get(&getContext());
      Value pointer = LLVM::IntToPtrOp::create(b, loc, ptr, address64);
      Value count = arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                                 flatType.getNumElements());
      Value dtypeValue =
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), *dtype);
      Value opValue = arith::ConstantIntOp::create(b, loc, b.getI32Type(), *op);
      // No stream yet: the runtime waits for the device itself, correct in any
      // lowering; --ga-gpu-single-stream passes the step's stream instead.
      Value stream = LLVM::ZeroOp::create(b, loc, ptr);
      auto call = func::CallOp::create(
          b, loc, runtime,
          ValueRange{stream, pointer, count, dtypeValue, opValue});
      Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       call.getResult(0), zero);
      cf::AssertOp::create(b, loc, ok,
                           "ga: gaNcclAllReduce failed (see the message of "
                           "the NCCL runtime above)");
      ++numCollectives;
      replaceWithReduced(b, loc, group, buf, nullptr);
    }
  }
  eraseUnusedGrids(module);
}
