//===- LowerLibraryOps.cpp - library ops as runtime calls -----------------===//
//
// The one place where the GPU lowering names the cuBLASLt and NCCL runtimes:
// each `ga.blas_matmul` becomes a call of gaCublasLtMatmul or
// gaCublasLtMatmulStridedBatched (include/ga-runtime/GARuntimeABI.h) with
// the pointers and leading dimensions of its memrefs, each
// `ga.nccl_all_reduce` a checked call of gaNcclAllReduce (and
// `ga.nccl_reduce_scatter` / `ga.nccl_all_gather` of gaNcclReduceScatter /
// gaNcclAllGather), the CUDA graph ops
// (capture, launch, destroy) the mgpuGraph* calls, and last the stream ops
// (wait, synchronize, release) the mgpuEvent* / mgpuStream* calls. The passes
// before (stream, overlap, graph capture, iteration index) reason on the
// ops' interfaces.
//
//===----------------------------------------------------------------------===//

#include "ga/Codegen/GPU/Passes.h"
#include "ga/IR/GALibraryOps.h"
#include "ga/Utils/Gemm.h"
#include "ga/Utils/IRUtils.h"

#include "ga-runtime/GARuntimeABI.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::ga {
#define GEN_PASS_DEF_LOWERLIBRARYOPS
#include "ga/Codegen/GPU/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;

namespace {

constexpr StringLiteral kAllReduce = ga_abi::kNcclAllReduce;
constexpr StringLiteral kReduceScatter = ga_abi::kNcclReduceScatter;
constexpr StringLiteral kAllGather = ga_abi::kNcclAllGather;

/// cudaDataType_t of an element type that the op takes (its verifier).
int64_t cudaType(Type t) {
  if (t.isF16())
    return 2;
  if (t.isBF16())
    return 14;
  return 0; // f32
}

/// The signature of gaCublasLtMatmul (`batched`:
/// gaCublasLtMatmulStridedBatched), with the stream of type `stream`.
FunctionType functionType(OpBuilder &b, Type stream, bool batched) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Type> inputs{stream};
  if (batched)
    llvm::append_range(inputs, TypeRange{i32, i32, i64, i64, i64, ptr, i64, i64,
                                         ptr, i64, i64, ptr, i64, i64, i64, i32,
                                         i32, f32, f32});
  else
    llvm::append_range(inputs,
                       TypeRange{i32, i32, i64, i64, i64, ptr, i64, ptr, i64,
                                 ptr, i64, i32, i32, f32, f32, ptr});
  return b.getFunctionType(inputs, {});
}

struct LowerLibraryOpsPass
    : public ga::impl::LowerLibraryOpsBase<LowerLibraryOpsPass> {
  void runOnOperation() override;
  LogicalResult lower(BlasMatmulOp op);
  LogicalResult lower(NcclAllReduceOp op);
  LogicalResult lower(NcclReduceScatterOp op);
  LogicalResult lower(NcclAllGatherOp op);
  /// The checked call of the NCCL runtime function `name` replacing the
  /// sharded collective `op`: (stream, input, output, count of `part`,
  /// datatype[, reduction]).
  LogicalResult lowerSharded(gpu::AsyncOpInterface op, StringRef name,
                             Value input, Value output, Value part,
                             int32_t datatype,
                             std::optional<int32_t> reduction);
  LogicalResult lower(GraphCaptureOp op);
  LogicalResult lower(GraphLaunchOp op);
  LogicalResult lower(GraphDestroyOp op);
  LogicalResult lower(StreamWaitOp op);
  LogicalResult lower(StreamSynchronizeOp op);
  LogicalResult lower(StreamReleaseOp op);
  /// A call of the stream or event runtime function `name` before `op`;
  /// fails where the module has another function of that name.
  FailureOr<func::CallOp> callStreamRuntime(Operation *op, StringRef name,
                                            TypeRange inputs, TypeRange results,
                                            ValueRange operands);
  /// A call of the CUDA graph runtime function `name` of `type` before
  /// `op`; fails where the module has another function of that name.
  FailureOr<func::CallOp> callGraphRuntime(Operation *op, StringRef name,
                                           TypeRange inputs, TypeRange results,
                                           ValueRange operands);
  /// The stream that the call of `name` replacing the library op `op` takes:
  /// its async dependency, or a null pointer; fails where `op` returns a
  /// token without one, or where another call of `name` takes a stream of
  /// another type.
  FailureOr<Value> getStream(OpBuilder &b, gpu::AsyncOpInterface op,
                             StringRef name);

  /// The stream type of each callee's declaration, from its first call.
  llvm::StringMap<std::pair<Type, Operation *>> streamTypes;
};

} // namespace

FailureOr<Value> LowerLibraryOpsPass::getStream(OpBuilder &b,
                                                gpu::AsyncOpInterface op,
                                                StringRef name) {
  Location loc = op->getLoc();
  Type ptrType = LLVM::LLVMPointerType::get(op->getContext());
  if (op.getAsyncToken() && op.getAsyncDependencies().empty())
    return op->emitOpError()
           << "returns a token but is ordered after none: the call of " << name
           << " has no stream to enqueue on";
  Value stream = op.getAsyncDependencies().empty()
                     ? LLVM::ZeroOp::create(b, loc, ptrType).getResult()
                     : op.getAsyncDependencies().front();
  auto [it, inserted] = streamTypes.try_emplace(name, stream.getType(), op);
  if (!inserted && it->second.first != stream.getType()) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "takes a " << stream.getType()
                              << " stream where another library op of the "
                                 "module takes a "
                              << it->second.first << " (one declaration of "
                              << name << ")";
    diag.attachNote(it->second.second->getLoc()) << "the other library op";
    return diag;
  }
  return stream;
}

/// The call leaves its work on the stream: what followed the library op's
/// token follows the stream's.
static void replaceByCall(gpu::AsyncOpInterface op, Value stream) {
  if (Value token = op.getAsyncToken())
    token.replaceAllUsesWith(stream);
  op->erase();
}

LogicalResult LowerLibraryOpsPass::lower(NcclAllReduceOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  ModuleOp module = getOperation();
  FailureOr<Value> stream = getStream(b, op, kAllReduce);
  if (failed(stream))
    return failure();
  Type ptr = LLVM::LLVMPointerType::get(op.getContext());
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  FunctionType type =
      b.getFunctionType({stream->getType(), ptr, i64, i32, i32}, {i32});
  if (failed(checkExternalFunction(module, kAllReduce, type,
                                   "the NCCL runtime function")))
    return failure();
  Value buffer = op.getBuffer();
  Value count = arith::IndexCastOp::create(
      b, loc, i64, memref::DimOp::create(b, loc, buffer, 0));
  auto cst32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
  };
  auto call = func::CallOp::create(
      b, loc, getOrDeclareFunction(module, kAllReduce, type),
      ValueRange{*stream, getBufferPointer(b, loc, buffer), count,
                 cst32(op.getDatatype()), cst32(op.getReduction())});
  call->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                   call.getResult(0), cst32(0));
  cf::AssertOp::create(b, loc, ok,
                       "ga: gaNcclAllReduce failed (see the message of the "
                       "NCCL runtime above)");
  replaceByCall(op, *stream);
  ++numAllReduceCalls;
  return success();
}

LogicalResult LowerLibraryOpsPass::lowerSharded(
    gpu::AsyncOpInterface op, StringRef name, Value input, Value output,
    Value part, int32_t datatype, std::optional<int32_t> reduction) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  ModuleOp module = getOperation();
  FailureOr<Value> stream = getStream(b, op, name);
  if (failed(stream))
    return failure();
  Type ptr = LLVM::LLVMPointerType::get(op->getContext());
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  SmallVector<Type> inputs{stream->getType(), ptr, ptr, i64, i32};
  if (reduction)
    inputs.push_back(i32);
  FunctionType type = b.getFunctionType(inputs, {i32});
  if (failed(checkExternalFunction(module, name, type,
                                   "the NCCL runtime function")))
    return failure();
  auto cst32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
  };
  Value count = arith::IndexCastOp::create(
      b, loc, i64, memref::DimOp::create(b, loc, part, 0));
  SmallVector<Value> operands{*stream, getBufferPointer(b, loc, input),
                              getBufferPointer(b, loc, output), count,
                              cst32(datatype)};
  if (reduction)
    operands.push_back(cst32(*reduction));
  auto call = func::CallOp::create(
      b, loc, getOrDeclareFunction(module, name, type), operands);
  call->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                   call.getResult(0), cst32(0));
  cf::AssertOp::create(
      b, loc, ok,
      ("ga: " + name + " failed (see the message of the NCCL runtime above)")
          .str());
  replaceByCall(op, *stream);
  ++numShardedCalls;
  return success();
}

LogicalResult LowerLibraryOpsPass::lower(NcclReduceScatterOp op) {
  return lowerSharded(op, kReduceScatter, op.getInput(), op.getOutput(),
                      op.getOutput(), op.getDatatype(), op.getReduction());
}

LogicalResult LowerLibraryOpsPass::lower(NcclAllGatherOp op) {
  return lowerSharded(op, kAllGather, op.getInput(), op.getOutput(),
                      op.getInput(), op.getDatatype(), std::nullopt);
}

FailureOr<func::CallOp>
LowerLibraryOpsPass::callGraphRuntime(Operation *op, StringRef name,
                                      TypeRange inputs, TypeRange results,
                                      ValueRange operands) {
  ModuleOp module = getOperation();
  OpBuilder b(op);
  FunctionType type = b.getFunctionType(inputs, results);
  if (failed(checkExternalFunction(module, name, type,
                                   "a CUDA graph runtime function")))
    return failure();
  return func::CallOp::create(
      b, op->getLoc(), getOrDeclareFunction(module, name, type), operands);
}

LogicalResult LowerLibraryOpsPass::lower(GraphCaptureOp op) {
  // Capture begins on the stream, the body is enqueued (recorded), and the
  // capture ends on the stream after its last work: the graph.
  Value stream = op.getAsyncDependencies().front();
  Type ptr = op.getGraph().getType();
  if (failed(callGraphRuntime(op, ga_abi::kGraphBeginCapture, stream.getType(),
                              {}, stream)))
    return failure();
  Block &body = op.getBody().front();
  auto yield = cast<GraphYieldOp>(body.getTerminator());
  Value end = yield.getToken();
  op->getBlock()->getOperations().splice(op->getIterator(),
                                         body.getOperations(), body.begin(),
                                         std::prev(body.end()));
  FailureOr<func::CallOp> endCall =
      callGraphRuntime(op, ga_abi::kGraphEndCapture, end.getType(), ptr, end);
  if (failed(endCall))
    return failure();
  op.getGraph().replaceAllUsesWith(endCall->getResult(0));
  op.getAsyncToken().replaceAllUsesWith(end);
  op->erase();
  ++numGraphOps;
  return success();
}

LogicalResult LowerLibraryOpsPass::lower(GraphLaunchOp op) {
  Value stream = op.getAsyncDependencies().front();
  Value graph = op.getGraph();
  if (failed(callGraphRuntime(op, ga_abi::kGraphLaunch,
                              {graph.getType(), stream.getType()}, {},
                              {graph, stream})))
    return failure();
  replaceByCall(op, stream);
  ++numGraphOps;
  return success();
}

LogicalResult LowerLibraryOpsPass::lower(GraphDestroyOp op) {
  Value graph = op.getGraph();
  if (failed(callGraphRuntime(op, ga_abi::kGraphDestroy, graph.getType(), {},
                              graph)))
    return failure();
  op->erase();
  ++numGraphOps;
  return success();
}

FailureOr<func::CallOp>
LowerLibraryOpsPass::callStreamRuntime(Operation *op, StringRef name,
                                       TypeRange inputs, TypeRange results,
                                       ValueRange operands) {
  ModuleOp module = getOperation();
  OpBuilder b(op);
  FunctionType type = b.getFunctionType(inputs, results);
  if (failed(
          checkExternalFunction(module, name, type, "a GPU runtime function")))
    return failure();
  return func::CallOp::create(
      b, op->getLoc(), getOrDeclareFunction(module, name, type), operands);
}

/// The token that `token` is on the stream of, through the stream waits not
/// lowered yet (the other library ops are lowered before them: their
/// tokens are their streams' already).
static Value getStreamRoot(Value token) {
  while (auto wait = token.getDefiningOp<StreamWaitOp>())
    token = wait.getStream();
  return token;
}

LogicalResult LowerLibraryOpsPass::lower(StreamWaitOp op) {
  // One event per other stream (tokens of one stream share it): recorded
  // there, waited for on the stream, released (the wait holds on to it).
  Value stream = getStreamRoot(op.getStream());
  Type token = stream.getType();
  Type ptr = LLVM::LLVMPointerType::get(op.getContext());
  SetVector<Value> others;
  for (Value other : op.getWaited())
    if (Value root = getStreamRoot(other); root != stream)
      others.insert(root);
  for (Value other : others) {
    FailureOr<func::CallOp> event =
        callStreamRuntime(op, ga_abi::kEventCreate, {}, ptr, {});
    if (failed(event))
      return failure();
    Value e = event->getResult(0);
    if (failed(callStreamRuntime(op, ga_abi::kEventRecord, {ptr, token}, {},
                                 {e, other})) ||
        failed(callStreamRuntime(op, ga_abi::kStreamWaitEvent, {token, ptr}, {},
                                 {stream, e})) ||
        failed(callStreamRuntime(op, ga_abi::kEventDestroy, ptr, {}, e)))
      return failure();
  }
  op.getAsyncToken().replaceAllUsesWith(op.getStream());
  op->erase();
  ++numStreamOps;
  return success();
}

LogicalResult LowerLibraryOpsPass::lower(StreamSynchronizeOp op) {
  Value stream = op.getStream();
  if (failed(callStreamRuntime(op, ga_abi::kStreamSynchronize, stream.getType(),
                               {}, stream)))
    return failure();
  op->erase();
  ++numStreamOps;
  return success();
}

LogicalResult LowerLibraryOpsPass::lower(StreamReleaseOp op) {
  Value stream = op.getStream();
  if (failed(callStreamRuntime(op, ga_abi::kStreamDestroy, stream.getType(), {},
                               stream)))
    return failure();
  op->erase();
  ++numStreamOps;
  return success();
}

LogicalResult LowerLibraryOpsPass::lower(BlasMatmulOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  ModuleOp module = getOperation();
  Type ptrType = LLVM::LLVMPointerType::get(op.getContext());
  bool batched = op.isBatched();
  StringRef name =
      batched ? ga_abi::kCublasLtMatmulStridedBatched : ga_abi::kCublasLtMatmul;
  FailureOr<Value> maybeStream = getStream(b, op, name);
  if (failed(maybeStream))
    return failure();
  Value stream = *maybeStream;
  FunctionType type = functionType(b, stream.getType(), batched);
  if (failed(checkExternalFunction(module, name, type,
                                   "the cuBLASLt runtime function")))
    return failure();

  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto cst32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
  };
  auto toI64 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, i64, v).getResult();
  };
  auto f32 = [&](double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)).getResult();
  };
  GemmOperands gemm;
  gemm.lhs = op.getLhs();
  gemm.rhs = op.getRhs();
  gemm.out = op.getOut();
  gemm.transposeLhs = op.getTransposeLhs();
  gemm.transposeRhs = op.getTransposeRhs();
  gemm.batched = batched;
  GemmArguments args = buildGemmArguments(b, loc, gemm);
  SmallVector<Value> operands{stream};
  operands.append({cst32(gemm.transposeLhs), cst32(gemm.transposeRhs),
                   toI64(args.m), toI64(args.n), toI64(args.k)});
  for (const MatrixDescriptor *matrix : {&args.lhs, &args.rhs, &args.out}) {
    operands.append({matrix->pointer, toI64(matrix->leadingDim)});
    if (batched)
      operands.push_back(toI64(matrix->batchStride));
  }
  if (batched)
    operands.push_back(toI64(args.batch));
  operands.append({cst32(cudaType(op.getLhs().getType().getElementType())),
                   cst32(cudaType(op.getOut().getType().getElementType())),
                   f32(1.0), f32(op.getAccumulate() ? 1.0 : 0.0)});
  if (!batched)
    operands.push_back(op.getBias()
                           ? getBufferPointer(b, loc, op.getBias())
                           : LLVM::ZeroOp::create(b, loc, ptrType).getResult());
  func::FuncOp fn = getOrDeclareFunction(module, name, type);
  auto call = func::CallOp::create(b, loc, fn, operands);
  call->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  replaceByCall(op, stream);
  ++(batched ? numBatchedCalls : numCalls);
  return success();
}

void LowerLibraryOpsPass::runOnOperation() {
  // Pre-order: a capture's body is spliced out before the ops in it are
  // lowered.
  SmallVector<Operation *> ops;
  getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<BlasMatmulOp, NcclAllReduceOp, NcclReduceScatterOp, NcclAllGatherOp,
            GraphCaptureOp, GraphLaunchOp, GraphDestroyOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    LogicalResult lowered =
        TypeSwitch<Operation *, LogicalResult>(op)
            .Case<BlasMatmulOp, NcclAllReduceOp, NcclReduceScatterOp,
                  NcclAllGatherOp, GraphCaptureOp, GraphLaunchOp,
                  GraphDestroyOp>(
                [&](auto libraryOp) { return lower(libraryOp); });
    if (failed(lowered))
      return signalPassFailure();
  }
  // The stream ops last: the tokens they wait for are their streams then.
  SmallVector<Operation *> streamOps;
  getOperation().walk([&](Operation *op) {
    if (isa<StreamWaitOp, StreamSynchronizeOp, StreamReleaseOp>(op))
      streamOps.push_back(op);
  });
  for (Operation *op : streamOps) {
    LogicalResult lowered =
        TypeSwitch<Operation *, LogicalResult>(op)
            .Case<StreamWaitOp, StreamSynchronizeOp, StreamReleaseOp>(
                [&](auto streamOp) { return lower(streamOp); });
    if (failed(lowered))
      return signalPassFailure();
  }
}
