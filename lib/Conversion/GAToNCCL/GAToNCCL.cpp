//===- GAToNCCL.cpp - data-parallel collectives to the NCCL runtime -------===//
//
// --convert-ga-to-nccl: `ga.all_reduce` / `shard.all_reduce` to in-place
// `ga.nccl_all_reduce` ops on their buffers, with NCCL's own datatype and
// reduction codes, `mean` as ncclAvg. The op is synchronous here;
// --ga-gpu-single-stream orders it on the step's stream and
// --ga-lower-library-ops makes it a call of gaNcclAllReduce (lib/Runtime/NCCL).
//
//===----------------------------------------------------------------------===//

#include "ga/Conversion/Passes.h"
#include "ga/IR/GALibraryOps.h"

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
};
} // namespace

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
      // prepareRuntimeCall's codes and buffer; the address and count are the
      // op's lowering's (--ga-lower-library-ops), from the memref.
      FailureOr<RuntimeCodes> codes =
          getRuntimeCodes(group, kNcclDatatypes, kNcclOps, "NCCL");
      if (failed(codes))
        return signalPassFailure();
      Location loc = group.ops.back()->getLoc();
      OpBuilder b(group.ops.back());
      CollectiveBuffer buf = prepareBuffer(b, loc, group);
      // No stream yet: --ga-gpu-single-stream orders the op on the step's.
      NcclAllReduceOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                              buf.flat, codes->datatype, codes->reduction);
      ++numCollectives;
      replaceWithReduced(b, loc, group, buf, nullptr);
    }
  }
  eraseUnusedGrids(module);
}
