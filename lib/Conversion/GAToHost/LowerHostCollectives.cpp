//===- LowerHostCollectives.cpp - host collective ops to runtime calls ----===//
//
// --ga-lower-host-collectives: `ga.host_collective_start` and
// `ga.host_collective_wait` (made by --convert-ga-to-host-collectives) to
// calls of the host collectives runtime (lib/Runtime/HostCollectives). It
// runs after bufferization, deallocation and --ga-share-buffers: until
// then the ops tell those passes which buffers the engine reads and writes,
// and until when; the calls take a raw address, which tells them nothing.
//
//===----------------------------------------------------------------------===//

#include "ga/Conversion/Passes.h"

#include "../CollectiveLowering.h"
#include "ga/IR/GAShardOps.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::ga {
#define GEN_PASS_DEF_LOWERHOSTCOLLECTIVES
#include "ga/Conversion/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

static constexpr StringLiteral kStartFn = "gaHostAllReduceStart";
static constexpr StringLiteral kWaitFn = "gaHostAllReduceWait";
static constexpr StringLiteral kShardedStartFn = "gaHostShardedStart";

/// The private declaration of the runtime function `name` in `module`
/// (returning the runtime's i32 status), created on first use.
static func::FuncOp declare(ModuleOp module, StringRef name,
                            ArrayRef<Type> inputs) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 b.getFunctionType(inputs, {b.getI32Type()}));
  fn.setPrivate();
  return fn;
}

/// Copies the all-gather's `input` (this rank's rows) into its rows of the
/// 1-d `buffer`, starting at element `offset`.
static void copyRows(OpBuilder &b, Location loc, Value input, Value buffer,
                     int64_t offset) {
  auto inputType = cast<MemRefType>(input.getType());
  int64_t count = inputType.getNumElements();
  Value rows =
      memref::SubViewOp::create(b, loc, buffer, ArrayRef<int64_t>{offset},
                                ArrayRef<int64_t>{count}, ArrayRef<int64_t>{1});
  if (inputType.getRank() != 1) {
    // The rows in the input's shape: a view of contiguous elements.
    rows = memref::ExpandShapeOp::create(
        b, loc, inputType.getShape(), rows,
        getCollapseAllReassociation(inputType.getRank()));
  }
  memref::CopyOp::create(b, loc, input, rows);
}

/// Replaces `start` by the runtime's start call.
static void lowerStart(ModuleOp module, HostCollectiveStartOp start) {
  OpBuilder b(start);
  Location loc = start.getLoc();
  MemRefType type = start.getBuffer().getType();
  if (Value input = start.getInput())
    copyRows(b, loc, input, start.getBuffer(),
             static_cast<int64_t>(*start.getInputOffset()));
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto constant = [&](Type type, int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, type, value);
  };
  Value count = type.hasStaticShape()
                    ? constant(i64, type.getNumElements())
                    : arith::IndexCastOp::create(
                          b, loc, i64,
                          memref::DimOp::create(b, loc, start.getBuffer(), 0));
  SmallVector<Value> operands{
      getFirstElementAddress(b, loc, start.getBuffer()), count,
      constant(i32, static_cast<int32_t>(start.getDatatype())),
      constant(i32, static_cast<int32_t>(start.getReduction())),
      constant(i64, static_cast<int64_t>(start.getId()))};
  func::FuncOp fn;
  if (std::optional<uint64_t> rows = start.getRows()) {
    operands.push_back(constant(i32, start.getInput() ? 1 : 0));
    operands.push_back(constant(i64, static_cast<int64_t>(*rows)));
    fn = declare(module, kShardedStartFn, {ptr, i64, i32, i32, i64, i32, i64});
  } else {
    fn = declare(module, kStartFn, {ptr, i64, i32, i32, i64});
  }
  func::CallOp::create(b, loc, fn, operands);
  start.erase();
}

/// Replaces `wait` by the runtime's wait call.
static void lowerWait(ModuleOp module, HostCollectiveWaitOp wait) {
  OpBuilder b(wait);
  Type i64 = b.getI64Type();
  func::FuncOp fn = declare(module, kWaitFn, {i64});
  Value id = arith::ConstantIntOp::create(b, wait.getLoc(), i64,
                                          static_cast<int64_t>(wait.getId()));
  func::CallOp::create(b, wait.getLoc(), fn, ValueRange{id});
  wait.erase();
}

namespace {
struct LowerHostCollectivesPass
    : public ga::impl::LowerHostCollectivesBase<LowerHostCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<HostCollectiveStartOp, HostCollectiveWaitOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto start = dyn_cast<HostCollectiveStartOp>(op))
        lowerStart(module, start);
      else
        lowerWait(module, cast<HostCollectiveWaitOp>(op));
      ++numCalls;
    }
  }
};
} // namespace
