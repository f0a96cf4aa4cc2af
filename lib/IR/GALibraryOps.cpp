//===- GALibraryOps.cpp - library calls of the GPU lowering ---------------===//

#include "ga/IR/GALibraryOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ga;

/// `[async] [[%dep, ...]]`: the token result, if any, and the async
/// dependencies, as gpu.launch_func writes them (its directive is private to
/// the GPU dialect). The GPU and LLVM dialects, whose types these ops use, are
/// dependent dialects of ga.
static ParseResult
parseAsyncToken(OpAsmParser &parser, Type &tokenType,
                SmallVectorImpl<OpAsmParser::UnresolvedOperand> &deps) {
  if (succeeded(parser.parseOptionalKeyword("async")))
    tokenType = gpu::AsyncTokenType::get(parser.getContext());
  return parser.parseCommaSeparatedList(
      OpAsmParser::Delimiter::OptionalSquare,
      [&] { return parser.parseOperand(deps.emplace_back()); });
}

/// Prints the token and the dependencies followed by a space, or nothing for
/// the synchronous form without dependencies: the formats suppress the
/// space before the next element, so that no form has two spaces.
static void printAsyncToken(OpAsmPrinter &p, Operation *, Type tokenType,
                            OperandRange deps) {
  if (tokenType)
    p << "async ";
  if (!deps.empty())
    p << '[' << deps << "] ";
}

#define GET_OP_CLASSES
#include "ga/IR/GALibraryOps.cpp.inc"

/// Whether the sizes `a` and `b` may be equal (equal, or one dynamic).
static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult BlasMatmulOp::verify() {
  MemRefType lhs = getLhs().getType(), rhs = getRhs().getType(),
             out = getOut().getType();
  int64_t rank = out.getRank();
  if ((rank != 2 && rank != 3) || lhs.getRank() != rank ||
      rhs.getRank() != rank)
    return emitOpError("needs three matrices (2-d) or three batches of "
                       "matrices (3-d), not ")
           << lhs << ", " << rhs << " and " << out;
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("needs lhs and rhs of one element type, not ")
           << lhs.getElementType() << " and " << rhs.getElementType();
  for (MemRefType type : {lhs, rhs, out})
    if (!type.isLastDimUnitStride())
      return emitOpError("needs rows with unit stride (a BLAS matrix), not ")
             << type;
  if (getAsyncDependencies().size() > 1)
    return emitOpError("is ordered on one stream: at most one async "
                       "dependency, not ")
           << getAsyncDependencies().size();
  // The matrix dimensions are the last two; a batch is the first.
  auto dim = [&](MemRefType t, int64_t i) {
    return t.getDimSize(rank - 2 + i);
  };
  int64_t m = getTransposeLhs() ? dim(lhs, 1) : dim(lhs, 0);
  int64_t k = getTransposeLhs() ? dim(lhs, 0) : dim(lhs, 1);
  int64_t kr = getTransposeRhs() ? dim(rhs, 1) : dim(rhs, 0);
  int64_t n = getTransposeRhs() ? dim(rhs, 0) : dim(rhs, 1);
  if (!compatible(k, kr) || !compatible(m, dim(out, 0)) ||
      !compatible(n, dim(out, 1)))
    return emitOpError("has shapes that do not make a product: ")
           << lhs << " times " << rhs << " into " << out;
  if (rank == 3 && (!compatible(lhs.getDimSize(0), out.getDimSize(0)) ||
                    !compatible(rhs.getDimSize(0), out.getDimSize(0))))
    return emitOpError("has batches of different sizes: ")
           << lhs << ", " << rhs << " and " << out;
  if (Value bias = getBias()) {
    auto biasType = cast<MemRefType>(bias.getType());
    if (rank != 2 || getAccumulate())
      return emitOpError("takes a bias only as the epilogue of an unbatched "
                         "product that overwrites its output");
    if (!biasType.isLastDimUnitStride() ||
        !compatible(biasType.getDimSize(0), n))
      return emitOpError("needs a bias of the output's columns with unit "
                         "stride, not ")
             << biasType;
  }
  return success();
}

void BlasMatmulOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  auto *resource = SideEffects::DefaultResource::get();
  effects.emplace_back(MemoryEffects::Read::get(), &getLhsMutable(), resource);
  effects.emplace_back(MemoryEffects::Read::get(), &getRhsMutable(), resource);
  if (getBias())
    effects.emplace_back(MemoryEffects::Read::get(), &getBiasMutable()[0],
                         resource);
  // beta = 1 reads C; beta = 0 does not (cuBLASLt ignores C then).
  if (getAccumulate())
    effects.emplace_back(MemoryEffects::Read::get(), &getOutMutable(),
                         resource);
  effects.emplace_back(MemoryEffects::Write::get(), &getOutMutable(), resource);
}

LogicalResult NcclAllReduceOp::verify() {
  MemRefType type = getBuffer().getType();
  if (!type.isLastDimUnitStride())
    return emitOpError("needs a contiguous buffer (NCCL reduces count "
                       "consecutive elements), not ")
           << type;
  if (getAsyncDependencies().size() > 1)
    return emitOpError("is ordered on one stream: at most one async "
                       "dependency, not ")
           << getAsyncDependencies().size();
  // I32Attr reads back unsigned: the codes as NCCL's (signed) enums.
  int32_t datatype = static_cast<int32_t>(getDatatype());
  int32_t reduction = static_cast<int32_t>(getReduction());
  if (datatype < 0 || reduction < 0)
    return emitOpError("needs NCCL's codes of a datatype and a reduction "
                       "(non-negative), not ")
           << datatype << " and " << reduction;
  return success();
}

/// Fails with "is ordered on one stream: one async dependency, not <n>"
/// unless `op` has exactly one.
static LogicalResult verifyOneStream(Operation *op, ValueRange deps) {
  if (deps.size() == 1)
    return success();
  return op->emitOpError("is ordered on one stream: one async dependency, "
                         "not ")
         << deps.size();
}

LogicalResult GraphCaptureOp::verify() {
  if (failed(verifyOneStream(*this, getAsyncDependencies())))
    return failure();
  if (!getAsyncToken())
    return emitOpError("returns the stream after the capture: it is `async`");
  if (getBody().front().getNumArguments() != 0)
    return emitOpError("has a body without arguments (it reads the stream "
                       "from above)");
  auto yield = cast<GraphYieldOp>(getBody().front().getTerminator());
  if (!yield.getToken())
    return yield.emitOpError("ends a capture with the token of its last "
                             "stream work, and has none");
  return success();
}

LogicalResult GraphLaunchOp::verify() {
  return verifyOneStream(*this, getAsyncDependencies());
}

/// The checks that the NCCL collectives share with `ga.nccl_all_reduce`:
/// contiguous buffers of one element type, at most one stream, NCCL's
/// (non-negative) codes; and `full` (static) is `world` times `part`.
static LogicalResult verifyShardedCollective(Operation *op, MemRefType part,
                                             MemRefType full, int64_t world,
                                             ValueRange deps,
                                             ArrayRef<int32_t> codes) {
  for (MemRefType type : {part, full})
    if (!type.isLastDimUnitStride())
      return op->emitOpError("needs contiguous buffers (NCCL reads and "
                             "writes count consecutive elements), not ")
             << type;
  if (part.getElementType() != full.getElementType())
    return op->emitOpError("needs buffers of one element type, not ")
           << part.getElementType() << " and " << full.getElementType();
  if (deps.size() > 1)
    return op->emitOpError("is ordered on one stream: at most one async "
                           "dependency, not ")
           << deps.size();
  if (llvm::any_of(codes, [](int32_t code) { return code < 0; })) {
    InFlightDiagnostic diag =
        op->emitOpError("needs NCCL's codes (non-negative), not ");
    llvm::interleaveComma(codes, diag);
    return diag;
  }
  int64_t partSize = part.getDimSize(0), fullSize = full.getDimSize(0);
  if (ShapedType::isDynamic(partSize) || ShapedType::isDynamic(fullSize))
    return success();
  if (partSize * world != fullSize)
    return op->emitOpError("needs the whole buffer ")
           << world << " (the world) times the size of one rank's part, not "
           << fullSize << " and " << partSize;
  return success();
}

LogicalResult NcclReduceScatterOp::verify() {
  return verifyShardedCollective(*this, getOutput().getType(),
                                 getInput().getType(), getWorld(),
                                 getAsyncDependencies(),
                                 {static_cast<int32_t>(getDatatype()),
                                  static_cast<int32_t>(getReduction())});
}

LogicalResult NcclAllGatherOp::verify() {
  return verifyShardedCollective(
      *this, getInput().getType(), getOutput().getType(), getWorld(),
      getAsyncDependencies(), {static_cast<int32_t>(getDatatype())});
}

LogicalResult StreamWaitOp::verify() {
  if (getAsyncDependencies().size() < 2)
    return emitOpError("makes the stream of its first async dependency wait "
                       "for the streams of the others: at least two, not ")
           << getAsyncDependencies().size();
  if (llvm::is_contained(getWaited(), getStream()))
    return emitOpError("makes a stream wait for itself");
  return success();
}

LogicalResult StreamReleaseOp::verify() {
  // A use of the token after the release in its block (the uses in other
  // blocks are not ordered with it here).
  for (Operation *user : getStream().getUsers())
    if (user != *this && user->getBlock() == (*this)->getBlock() &&
        (*this)->isBeforeInBlock(user)) {
      InFlightDiagnostic diag =
          emitOpError("releases a stream that a later op uses");
      diag.attachNote(user->getLoc()) << "the later use";
      return diag;
    }
  return success();
}
