//===- GPULoops.h - the strategies of ga-linalg-to-gpu-loops ----*- C++ -*-===//
//
// Internal to lib/Codegen/GPU. --ga-linalg-to-gpu-loops (LinalgToGPULoops.cpp)
// lowers every linalg op and memref.copy on buffers to `scf.parallel` loops
// mapped to GPU blocks and threads. It picks one strategy per op, each in a
// file of its own:
//
// * ThreadPerElement.cpp: one thread per output element, the reductions a
//   sequential loop inside the thread (the general case; copies too);
// * TiledContraction.cpp: contractions as block-cooperative loops over tiles
//   of the operands in block-scope (shared) memory;
// * SplitReduction.cpp: long reductions into few outputs as a kernel of
//   partial results and a kernel that combines them;
// * RowFusion.cpp: a reduction and the ops after it that read its result at
//   their own row as one kernel (fuse-rows): one thread per short row;
// * CooperativeRows.cpp: the kernel of a row group with long rows, a warp
//   or a block per row (row-warp-min, row-block-min);
// * HostAccesses.cpp: what is left on the host that touches device memory
//   (stores of host scalars, loads feeding scalar math) moved into kernels.
//
// KernelLoops.cpp builds the loops all of them share.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_CODEGEN_GPU_GPULOOPS_H
#define GA_LIB_CODEGEN_GPU_GPULOOPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <string>

namespace mlir::ga::gpu_loops {

//===----------------------------------------------------------------------===//
// Mapped loops (KernelLoops.cpp)
//===----------------------------------------------------------------------===//

/// True if `op` is (inside) an `scf.parallel` mapped to the GPU.
bool isInsideMappedLoop(Operation *op);

/// The outermost mapped `scf.parallel` around `op`, or null.
scf::ParallelOp getOutermostMappedLoop(Operation *op);

/// An `arith.constant` of index type.
Value constIndex(OpBuilder &b, Location loc, int64_t v);

/// Maps the induction variables of `loop`, in order, to `processors`.
void setProcessors(scf::ParallelOp loop, ArrayRef<gpu::Processor> processors);

/// Builds one kernel-shaped loop over the iteration space `sizes` (row-major:
/// the last size varies fastest):
///
///   scf.parallel (%b, %t) = (0, 0) to (%grid, %block) step (1, 1) {
///     %lin = %b * %block + %t
///     scf.if %lin < %total {          // unless the sizes fill the grid
///       body(delinearize(%lin))
///     }
///   } {mapping = [block_x, thread_x]}
///
/// A block has `maxBlockSize` threads, or the next multiple of 32 above a
/// smaller static iteration space.
scf::ParallelOp
buildKernelLoop(OpBuilder &b, Location loc, unsigned maxBlockSize,
                ArrayRef<Value> sizes,
                function_ref<void(OpBuilder &, Location, ValueRange)> body);

/// Loads `memref` at the indices `map` gives for `ivs` (one value per loop
/// dimension).
Value loadOperand(OpBuilder &b, Location loc, Value memref, AffineMap map,
                  ArrayRef<Value> ivs);

/// The indices `map` gives for `ivs`.
SmallVector<Value> indicesFor(OpBuilder &b, Location loc, AffineMap map,
                              ArrayRef<Value> ivs);

/// Clones the payload of `op` with its block arguments bound to `args` (null
/// for arguments the payload does not use) and `linalg.index` bound to `ivs`;
/// returns the yielded values.
SmallVector<Value> clonePayload(OpBuilder &b, linalg::LinalgOp op,
                                ValueRange args, ArrayRef<Value> ivs);

/// The value the fill-like op `fill` writes at `ivs` (its payload on its
/// scalar inputs).
Value fillValue(OpBuilder &b, linalg::LinalgOp fill, ArrayRef<Value> ivs);

/// Computes the outputs of `op` at the parallel loop values of `ivs` (one
/// value per loop dimension; the entries of reduction dimensions are
/// ignored) and stores them: inputs loaded once unless they depend on a
/// reduction dimension, each output read once (or started from its entry of
/// `folded`, the fills `op` absorbs) and carried through an `scf.for` nest
/// over the reduction dimensions (sizes `loopSizes`), in the order of the
/// linalg-to-loops lowering. The body of a one-thread-per-element kernel
/// (ThreadPerElement.cpp).
void computeElement(OpBuilder &b, Location loc, linalg::LinalgOp op,
                    ArrayRef<Value> ivs, ArrayRef<Value> loopSizes,
                    ArrayRef<linalg::LinalgOp> folded);

/// The parallel dimensions of `op` in the order the one-thread-per-element
/// strategy linearizes them: the one that indexes the contiguous dimension
/// of the first output last (fastest), the others in order.
SmallVector<unsigned> threadOrder(linalg::LinalgOp op);

/// True if `op` (or an op nested in it) may access a view of the buffer
/// `root` (with `writesOnly`: write or free it), or has effects that cannot
/// be seen through (an unknown op, a call).
bool mayAccessBuffer(Operation *op, Value root, bool writesOnly);

/// True if `op` (a linalg op on buffers or a copy) may run before ops that
/// read the buffers `readRoots` and write `writtenRoots` (view roots) which
/// came before it: it reads nothing they write and writes nothing they read
/// or write. A fused kernel placed after `op` may then take those ops.
bool commutesBefore(Operation *op, ArrayRef<Value> readRoots,
                    ArrayRef<Value> writtenRoots);

/// Names the mapped loop after what it computes (`kind`, the `ga.kernel`
/// attribute) and copies the other `ga.*` attributes of `from` onto it.
void annotateKernel(scf::ParallelOp loop, Operation *from, StringRef kind);

/// What a linalg op computes, for kernel names: the named op, or for a
/// `linalg.generic` its shape (`fill`, `matmul` for contractions with an M
/// and an N dimension (GEMM-shaped), `reduce` for other reductions,
/// `elementwise`).
std::string describeKernel(linalg::LinalgOp op);

/// A member of a row kernel and its loop dimensions that index the row (in
/// the order of the kernel's row space).
struct RowMember {
  linalg::LinalgOp op;
  SmallVector<unsigned> rowDims;
};

/// The elements one row of `m` covers: the product of its loop sizes outside
/// the row dimensions (its other parallel dimensions and its reductions).
int64_t rowLength(const RowMember &m);

//===----------------------------------------------------------------------===//
// The lowering of one function
//===----------------------------------------------------------------------===//

/// The options of --ga-linalg-to-gpu-loops the strategies read.
struct LoweringOptions {
  unsigned blockSize = 256;
  unsigned gemmTile = 16;
  unsigned gemmMinReduction = 64;
  unsigned splitReductionMin = 256;
  unsigned splitRowReductionMin = 4096;
  bool fuseRows = false;
  unsigned fuseRowsMaxThreads = 16384;
  bool fuseSiblings = false;
  unsigned fuseSiblingsMaxThreads = 1u << 22;
  unsigned rowWarpMin = 32;
  unsigned rowBlockMin = 1024;
  unsigned rowMinRows = 128;
};

/// What the strategies did, for the pass statistics.
struct LoweringCounts {
  unsigned kernels = 0, sunk = 0, readBacks = 0, snapshots = 0, split = 0,
           tiled = 0, foldedFills = 0, rowFused = 0, siblingFused = 0;
};

/// Lowers the linalg ops, copies and host accesses of one function; each
/// member function is one strategy (see the file comment).
class FunctionLowering {
public:
  FunctionLowering(const LoweringOptions &options, LoweringCounts &counts)
      : options(options), counts(counts) {}

  /// One thread per output element (ThreadPerElement.cpp).
  LogicalResult lowerPerElement(linalg::LinalgOp op);
  /// One thread per element of the copy (ThreadPerElement.cpp).
  LogicalResult lowerCopy(memref::CopyOp op);
  /// A contraction as a block-cooperative loop nest with tiles of its
  /// operands in block-scope buffers (shared memory on the GPU); failure,
  /// with the IR unchanged, if `op` does not have the shape it handles
  /// (TiledContraction.cpp).
  FailureOr<scf::ParallelOp> lowerTiledContraction(linalg::LinalgOp op);
  /// A long reduction into few outputs as two kernels: partial results of
  /// chunks of the reduction, then their combination into the output (the
  /// accumulation stays in that second kernel); failure, with the IR
  /// unchanged, if `op` is not such a reduction (SplitReduction.cpp).
  /// `minLength`: the shortest reduction worth splitting (0: none).
  LogicalResult lowerSplitReduction(linalg::LinalgOp op, unsigned minLength);

  /// A reduction with one thread per output (a row) and the linalg ops
  /// after it (`following`, in order; `absorbed`: the fills other ops
  /// absorb) that read its result at their own row, or write their own
  /// rows of the same row space, as one kernel with one thread per row;
  /// returns the ops it fused, `root` first, now erased (none: the IR
  /// unchanged) (RowFusion.cpp).
  SmallVector<Operation *>
  lowerFusedRows(linalg::LinalgOp root, ArrayRef<Operation *> following,
                 const llvm::SmallPtrSetImpl<Operation *> &absorbed);

  /// Non-zero when the row group `root` heads runs cooperatively (long
  /// rows, enough of them): then the group is lowered even alone, and no
  /// split reduction is tried before it.
  unsigned rowLanes(linalg::LinalgOp root) const;

  /// The kernel of the row group `members` (rows of shape `rowShape`) with
  /// `lanes` threads per row (32: a warp, or a block) as a block-cooperative
  /// loop built before `before`: reductions by lanes striding the row and a
  /// tree in block-scope memory, the other members per element by the same
  /// lanes (CooperativeRows.cpp).
  scf::ParallelOp buildCooperativeRows(Operation *before,
                                       ArrayRef<RowMember> members,
                                       ArrayRef<int64_t> rowShape,
                                       unsigned lanes);

  /// `first` (an element-wise linalg op or a copy) and the element-wise ops
  /// and copies right after it (`following`; `absorbed`: the fills other
  /// ops absorb) that neither read nor write what another of them writes
  /// (copies into static slices of a member fill's buffer go with the
  /// fill), as one kernel whose thread space is the concatenation of
  /// theirs (up to fuseSiblingsMaxThreads); returns the ops it fused,
  /// `first` first, now erased (none: the IR unchanged)
  /// (SiblingFusion.cpp).
  SmallVector<Operation *>
  lowerFusedSiblings(Operation *first, ArrayRef<Operation *> following,
                     const llvm::SmallPtrSetImpl<Operation *> &absorbed);

  /// Host stores into device buffers as kernels of one thread
  /// (HostAccesses.cpp).
  void wrapHostStores(func::FuncOp func);
  /// Host loads of device memory moved into the kernels that use them, or
  /// read back for host code (HostAccesses.cpp).
  LogicalResult sinkHostLoads(func::FuncOp func);

  /// Records that `op` starts its outputs from the values of `fills` (one
  /// entry per output, null where there is none) instead of reading them.
  void setFoldedFills(Operation *op, SmallVector<linalg::LinalgOp> fills) {
    foldedFills[op] = std::move(fills);
  }

private:
  /// Erases the members of a lowered row group; returns them.
  SmallVector<Operation *> finishRowGroup(ArrayRef<RowMember> members);
  /// Per output of `op`, the fill it absorbs (or null).
  SmallVector<linalg::LinalgOp> getFoldedFills(linalg::LinalgOp op) const;
  /// Erases `op` and the fills it absorbed; counts `kernels` new kernels.
  void replaced(linalg::LinalgOp op, ArrayRef<linalg::LinalgOp> fills,
                unsigned kernels);
  /// A kernel loop with the block size of the options.
  scf::ParallelOp
  buildKernel(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
              function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    return buildKernelLoop(b, loc, options.blockSize, sizes, body);
  }
  Value snapshotHostLoad(memref::LoadOp load);

  const LoweringOptions &options;
  LoweringCounts &counts;
  DenseMap<Operation *, SmallVector<linalg::LinalgOp>> foldedFills;
};

} // namespace mlir::ga::gpu_loops

#endif // GA_LIB_CODEGEN_GPU_GPULOOPS_H
