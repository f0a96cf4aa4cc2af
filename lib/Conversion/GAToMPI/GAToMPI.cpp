//===- GAToMPI.cpp - data-parallel collectives to the mpi dialect ---------===//
//
// --convert-ga-to-mpi: `ga.all_reduce` / `shard.all_reduce` to in-place
// `mpi.allreduce` on MPI_COMM_WORLD, plus once-per-process initialization.
// --ga-lower-mpi-comm-size: the one lowering MLIR 22's MPIToLLVM lacks.
// Memory-effect models for the `mpi` ops, without which buffer deallocation
// refuses them.
//
//===----------------------------------------------------------------------===//

#include "ga/Conversion/Passes.h"

#include "../CollectiveLowering.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::ga {
#define GEN_PASS_DEF_CONVERTGATOMPI
#define GEN_PASS_DEF_LOWERMPICOMMSIZE
#include "ga/Conversion/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

static constexpr StringLiteral kImplementationKey = "MPI:Implementation";

//===----------------------------------------------------------------------===//
// Memory effects of the mpi ops
//===----------------------------------------------------------------------===//

namespace {
using EffectList =
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>;

/// Collectives and point-to-point ops: what they read and write, plus a
/// write of the default resource so that nothing moves them across each
/// other or across init/finalize.
struct AllReduceEffects
    : public MemoryEffectOpInterface::ExternalModel<AllReduceEffects,
                                                    mpi::AllReduceOp> {
  void getEffects(Operation *op, EffectList &effects) const {
    auto allReduce = cast<mpi::AllReduceOp>(op);
    effects.emplace_back(MemoryEffects::Read::get(),
                         &allReduce.getSendbufMutable());
    effects.emplace_back(MemoryEffects::Write::get(),
                         &allReduce.getRecvbufMutable());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

template <typename OpT, bool Writes>
struct BufferEffects
    : public MemoryEffectOpInterface::ExternalModel<BufferEffects<OpT, Writes>,
                                                    OpT> {
  void getEffects(Operation *op, EffectList &effects) const {
    OpOperand &ref = op->getOpOperand(0);
    if (Writes)
      effects.emplace_back(MemoryEffects::Write::get(), &ref);
    else
      effects.emplace_back(MemoryEffects::Read::get(), &ref);
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

/// init, finalize, barrier, wait: global state only.
template <typename OpT>
struct GlobalEffects
    : public MemoryEffectOpInterface::ExternalModel<GlobalEffects<OpT>, OpT> {
  void getEffects(Operation *op, EffectList &effects) const {
    effects.emplace_back(MemoryEffects::Write::get());
  }
};
} // namespace

void mlir::ga::registerMPIMemoryEffectModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, mpi::MPIDialect *) {
    mpi::AllReduceOp::attachInterface<AllReduceEffects>(*ctx);
    mpi::SendOp::attachInterface<BufferEffects<mpi::SendOp, false>>(*ctx);
    mpi::ISendOp::attachInterface<BufferEffects<mpi::ISendOp, false>>(*ctx);
    mpi::RecvOp::attachInterface<BufferEffects<mpi::RecvOp, true>>(*ctx);
    mpi::IRecvOp::attachInterface<BufferEffects<mpi::IRecvOp, true>>(*ctx);
    mpi::InitOp::attachInterface<GlobalEffects<mpi::InitOp>>(*ctx);
    mpi::FinalizeOp::attachInterface<GlobalEffects<mpi::FinalizeOp>>(*ctx);
    mpi::Barrier::attachInterface<GlobalEffects<mpi::Barrier>>(*ctx);
    mpi::Wait::attachInterface<GlobalEffects<mpi::Wait>>(*ctx);
  });
}

//===----------------------------------------------------------------------===//
// --convert-ga-to-mpi
//===----------------------------------------------------------------------===//

static std::optional<mpi::MPI_ReductionOpEnum> toMPIOp(Reduction reduction) {
  switch (reduction) {
  case Reduction::Sum:
  case Reduction::Mean:
    return mpi::MPI_ReductionOpEnum::MPI_SUM;
  case Reduction::Max:
    return mpi::MPI_ReductionOpEnum::MPI_MAX;
  case Reduction::Min:
    return mpi::MPI_ReductionOpEnum::MPI_MIN;
  case Reduction::Product:
    return mpi::MPI_ReductionOpEnum::MPI_PROD;
  case Reduction::And:
    return mpi::MPI_ReductionOpEnum::MPI_BAND;
  case Reduction::Or:
    return mpi::MPI_ReductionOpEnum::MPI_BOR;
  case Reduction::Xor:
    return mpi::MPI_ReductionOpEnum::MPI_BXOR;
  }
  return std::nullopt;
}

/// The element types MLIR 22's MPI-to-LLVM lowering has a datatype for.
static bool hasMPIDatatype(Type type) {
  if (type.isF32() || type.isF64())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  return integer && !integer.isSigned() &&
         llvm::is_contained({8u, 16u, 32u, 64u}, integer.getWidth());
}

/// `func.func private @<name>(!llvm.ptr) -> i32`, declared once.
static func::FuncOp declareQuery(ModuleOp module, StringRef name) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  auto decl = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType({ptr}, {b.getI32Type()}));
  decl.setPrivate();
  return decl;
}

/// Emits `if (!<query>()) <body>`, where query is MPI_Initialized or
/// MPI_Finalized (ABI-independent: they take an `int *`).
static void emitUnless(OpBuilder &b, Location loc, ModuleOp module,
                       StringRef query,
                       function_ref<void(OpBuilder &, Location)> body) {
  func::FuncOp decl = declareQuery(module, query);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value one = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  Value flag = LLVM::AllocaOp::create(b, loc, ptr, b.getI32Type(), one);
  func::CallOp::create(b, loc, decl, ValueRange{flag});
  Value value = LLVM::LoadOp::create(b, loc, b.getI32Type(), flag);
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value unset =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, value, zero);
  scf::IfOp::create(b, loc, unset, [&](OpBuilder &nested, Location l) {
    body(nested, l);
    scf::YieldOp::create(nested, l);
  });
}

static void emitInit(OpBuilder &b, Location loc, ModuleOp module) {
  emitUnless(b, loc, module, "MPI_Initialized",
             [](OpBuilder &nested, Location l) {
               mpi::InitOp::create(nested, l, Type());
             });
}

static void emitFinalize(OpBuilder &b, Location loc, ModuleOp module) {
  emitUnless(b, loc, module, "MPI_Finalized",
             [](OpBuilder &nested, Location l) {
               mpi::FinalizeOp::create(nested, l, Type());
             });
}

namespace {
struct ConvertGAToMPIPass
    : public ga::impl::ConvertGAToMPIBase<ConvertGAToMPIPass> {
  using ConvertGAToMPIBase::ConvertGAToMPIBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    ConvertGAToMPIBase::getDependentDialects(registry);
    registerMPIMemoryEffectModels(registry);
  }

  void runOnOperation() override;

private:
  LogicalResult setImplementation(ModuleOp module);
  LogicalResult lowerFunction(func::FuncOp func);
  void addInitFunctions(ModuleOp module);
};
} // namespace

LogicalResult ConvertGAToMPIPass::setImplementation(ModuleOp module) {
  if (implementation != "MPICH" && implementation != "OpenMPI")
    return module.emitError() << "convert-ga-to-mpi: implementation must be "
                                 "MPICH or OpenMPI, got '"
                              << implementation << "'";
  auto name = StringAttr::get(&getContext(), kImplementationKey);
  auto value = StringAttr::get(&getContext(), implementation);
  SmallVector<DataLayoutEntryInterface> entries;
  if (auto map = module->getAttrOfType<MapAttr>("dlti.map")) {
    for (DataLayoutEntryInterface entry : map.getEntries()) {
      auto key = dyn_cast<StringAttr>(entry.getKey());
      if (key && key == name) {
        if (entry.getValue() != value)
          return module.emitError()
                 << "the module's dlti.map says MPI:Implementation = "
                 << entry.getValue() << ", the pass option says \""
                 << implementation << "\"";
        return success();
      }
      entries.push_back(entry);
    }
  }
  entries.push_back(DataLayoutEntryAttr::get(name, value));
  module->setAttr("dlti.map", MapAttr::get(&getContext(), entries));
  return success();
}

LogicalResult ConvertGAToMPIPass::lowerFunction(func::FuncOp func) {
  FailureOr<SmallVector<CollectiveGroup>> groups = collectCollectives(func);
  if (failed(groups))
    return failure();
  for (CollectiveGroup &group : *groups) {
    Operation *anchor = group.ops.back();
    Type elementType = cast<RankedTensorType>(anchor->getOperand(0).getType())
                           .getElementType();
    if (!hasMPIDatatype(elementType))
      return anchor->emitError()
             << "all-reduce of " << elementType
             << " elements: MLIR 22 lowers mpi.allreduce for f32, f64 and "
                "8- to 64-bit integers only (accumulate in f32, or use the "
                "NCCL lowering on the GPU)";
  }

  bool checkedGrid = false;
  for (CollectiveGroup &group : *groups) {
    Operation *anchor = group.ops.back();
    Location loc = anchor->getLoc();
    OpBuilder b(anchor);
    auto commType = mpi::CommType::get(&getContext());
    Value comm = mpi::CommWorldOp::create(b, loc, commType);
    Value size;
    auto getSize = [&]() {
      if (!size)
        size = mpi::CommSizeOp::create(b, loc, TypeRange{b.getI32Type()}, comm)
                   .getSize();
      return size;
    };

    // A static grid must have as many devices as the job has ranks.
    if (group.grid && !checkedGrid &&
        !ShapedType::isDynamicShape(group.grid.getShape())) {
      checkedGrid = true;
      int64_t devices = 1;
      for (int64_t extent : group.grid.getShape())
        devices *= extent;
      Value expected =
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), devices);
      Value matches = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            getSize(), expected);
      std::string message;
      llvm::raw_string_ostream(message)
          << "ga: shard.grid @" << group.grid.getSymName() << " has " << devices
          << " devices, but the MPI job has a different number "
          << "of ranks";
      cf::AssertOp::create(b, loc, matches, message);
    }

    CollectiveBuffer buf = prepareBuffer(b, loc, group);
    mpi::AllReduceOp::create(b, loc, TypeRange(), buf.flat, buf.flat,
                             *toMPIOp(group.reduction), comm);
    ++numCollectives;
    if (buf.copied)
      ++numCopied;
    else
      ++numInPlace;
    replaceWithReduced(b, loc, group, buf, [&](Value reduced) -> Value {
      if (group.reduction != Reduction::Mean)
        return reduced;
      auto floatType = cast<FloatType>(
          cast<RankedTensorType>(reduced.getType()).getElementType());
      Value count = arith::SIToFPOp::create(b, loc, floatType, getSize());
      return divideInPlace(b, loc, reduced, count);
    });
  }
  return success();
}

void ConvertGAToMPIPass::addInitFunctions(ModuleOp module) {
  Location loc = module.getLoc();
  if (!entry.empty()) {
    auto fn = module.lookupSymbol<func::FuncOp>(entry);
    if (!fn || fn.isExternal()) {
      module.emitError() << "convert-ga-to-mpi: no function with a body "
                            "named '"
                         << entry << "' (option entry)";
      return signalPassFailure();
    }
    OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
    emitInit(b, fn.getLoc(), module);
    fn.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      emitFinalize(b, ret.getLoc(), module);
    });
    return;
  }
  auto define = [&](StringRef name,
                    function_ref<void(OpBuilder &, Location, ModuleOp)> emit) {
    if (module.lookupSymbol(name))
      return;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
    b.setInsertionPointToStart(fn.addEntryBlock());
    emit(b, loc, module);
    func::ReturnOp::create(b, loc);
  };
  define("ga_mpi_init", emitInit);
  define("ga_mpi_finalize", emitFinalize);
}

void ConvertGAToMPIPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(setImplementation(module)))
    return signalPassFailure();
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  for (func::FuncOp func : funcs)
    if (!func.isExternal() && failed(lowerFunction(func)))
      return signalPassFailure();
  eraseUnusedGrids(module);
  addInitFunctions(module);
}

//===----------------------------------------------------------------------===//
// --ga-lower-mpi-comm-size
//===----------------------------------------------------------------------===//

namespace {
/// `mpi.comm_size` to `MPI_Comm_size(comm, &size)`; the communicator arrives
/// as the i64 of the upstream lowering and is narrowed to the ABI's handle
/// (an int for MPICH, a pointer for OpenMPI).
struct CommSizeLowering : public ConvertOpToLLVMPattern<mpi::CommSizeOp> {
  CommSizeLowering(const LLVMTypeConverter &converter, bool openMPI)
      : ConvertOpToLLVMPattern(converter), openMPI(openMPI) {}

  LogicalResult
  matchAndRewrite(mpi::CommSizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getRetval())
      return rewriter.notifyMatchFailure(op, "has an !mpi.retval result");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Type i32 = rewriter.getI32Type();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Value comm = adaptor.getComm();
    comm = openMPI
               ? LLVM::IntToPtrOp::create(rewriter, loc, ptr, comm).getResult()
               : LLVM::TruncOp::create(rewriter, loc, i32, comm).getResult();

    auto module = op->getParentOfType<ModuleOp>();
    auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>("MPI_Comm_size");
    if (!decl) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      decl = LLVM::LLVMFuncOp::create(
          rewriter, loc, "MPI_Comm_size",
          LLVM::LLVMFunctionType::get(i32, {comm.getType(), ptr}));
    }
    Value one = LLVM::ConstantOp::create(rewriter, loc, i32, 1);
    Value slot = LLVM::AllocaOp::create(rewriter, loc, ptr, i32, one);
    LLVM::CallOp::create(rewriter, loc, decl, ValueRange{comm, slot});
    Value size = LLVM::LoadOp::create(rewriter, loc, i32, slot);
    rewriter.replaceOp(op, size);
    return success();
  }

  bool openMPI;
};

struct LowerMPICommSizePass
    : public ga::impl::LowerMPICommSizeBase<LowerMPICommSizePass> {
  using LowerMPICommSizeBase::LowerMPICommSizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool openMPI = false;
    FailureOr<Attribute> impl =
        dlti::query(module, {kImplementationKey}, /*emitError=*/false);
    if (succeeded(impl))
      if (auto name = dyn_cast<StringAttr>(*impl))
        openMPI = name.getValue() == "OpenMPI";

    LLVMTypeConverter converter(&getContext());
    converter.addConversion([](mpi::CommType type) -> Type {
      return IntegerType::get(type.getContext(), 64);
    });
    RewritePatternSet patterns(&getContext());
    patterns.add<CommSizeLowering>(converter, openMPI);
    ConversionTarget target(getContext());
    target.addIllegalOp<mpi::CommSizeOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
