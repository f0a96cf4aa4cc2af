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

/// NCCL's ncclDataType_t (nccl.h; stable across NCCL 2.x): ncclInt8,
/// ncclInt32, ncclInt64 for signless integers, the ncclUint* for unsigned
/// ones, no 16-bit integers.
static constexpr ElementTypeCodes kNcclDatatypes = {
    /*f16=*/6,
    /*bf16=*/9,
    /*f32=*/7,
    /*f64=*/8,
    /*signless=*/{0, -1, 2, 4},
    /*signedInt=*/{-1, -1, -1, -1},
    /*unsignedInt=*/{1, -1, 3, 5}};

/// NCCL's ncclRedOp_t in the order of `Reduction`: ncclSum, ncclAvg,
/// ncclMax, ncclMin, ncclProd; no bitwise reductions.
static constexpr ReductionCodes kNcclOps = {0, 4, 2, 3, 1, -1, -1, -1};

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
      OpBuilder b(anchor);
      FailureOr<RuntimeCallOperands> operands =
          prepareRuntimeCall(b, group, kNcclDatatypes, kNcclOps, "NCCL");
      if (failed(operands))
        return signalPassFailure();
      func::FuncOp runtime = getOrDeclareRuntime(module);
      auto ptr = LLVM::LLVMPointerType::get(&getContext());
      // No stream yet: the runtime waits for the device itself, correct in any
      // lowering; --ga-gpu-single-stream passes the step's stream instead.
      Value stream = LLVM::ZeroOp::create(b, loc, ptr);
      auto call = func::CallOp::create(
          b, loc, runtime,
          ValueRange{stream, operands->address, operands->count,
                     operands->datatype, operands->reduction});
      Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       call.getResult(0), zero);
      cf::AssertOp::create(b, loc, ok,
                           "ga: gaNcclAllReduce failed (see the message of "
                           "the NCCL runtime above)");
      ++numCollectives;
      replaceWithReduced(b, loc, group, operands->buf, nullptr);
    }
  }
  eraseUnusedGrids(module);
}
