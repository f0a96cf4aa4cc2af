//===- MemoryUsage.h - static memory use of a bufferized step ---*- C++ -*-===//
//
// The memory-usage analysis reads a bufferized function (explicit
// `memref.alloc`/`memref.dealloc`, as the CPU lowering's bufferization and
// deallocation leave it, or `gpu.alloc`/`gpu.dealloc` of device memory, as
// the GPU lowering leaves it after --ga-place-buffers-on-device) and
// computes how many bytes its buffers take: the
// arguments by role (parameters, optimizer state, per-sample inputs), the
// gradient accumulators, the returned buffers, and the peak of the
// temporaries that are live at the same time. It is what
// `--ga-memory-report` prints and what `--ga-accumulate="max-memory=..."`
// compares with the budget.
//
//===----------------------------------------------------------------------===//

#ifndef GA_ANALYSIS_MEMORYUSAGE_H
#define GA_ANALYSIS_MEMORYUSAGE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <array>

namespace mlir::ga {

/// The attribute --ga-rematerialize puts on the ops it adds (copies of
/// forward ops computed again for the backward), which the analysis counts
/// as `recomputed`.
inline constexpr llvm::StringLiteral kRecomputedAttrName = "ga.recomputed";

/// What a buffer of a training step holds.
enum class BufferRole : uint8_t {
  /// Non-per-sample arguments that the per-sample computation reads.
  Parameters,
  /// Non-per-sample arguments that only the optimizer reads (moments,
  /// velocities, step counters, hyper-parameters).
  OptimizerState,
  /// Per-sample arguments (`ga.batch`).
  Inputs,
  /// Allocations that carry partial results from one micro-batch to the next:
  /// written inside a micro-batch loop and read after it.
  Accumulators,
  /// Allocations the function returns (and out-parameters).
  Results,
  /// Every other allocation: activations, their gradients, scratch.
  Temporaries,
};
constexpr unsigned kNumBufferRoles = 6;

/// The name of a role as the report prints it ("parameters", ...).
StringRef stringifyBufferRole(BufferRole role);

/// One point of the micro-batch loop's body in the memory profile
/// (MemoryUsage::loopProfile): the bytes of the buffers whose contents are
/// live there, by the ops that access them (a buffer of a run-time size:
/// from its allocation to its deallocation).
struct LoopPoint {
  /// Every buffer live at the point (allocations and static storage, their
  /// elements only) other than an argument and a buffer of a host
  /// all-gather or reduce-scatter (`ga.host_collective_start` with `rows`).
  int64_t bytes = 0;
  /// The all-gather buffers live at the point: (the argument gathered,
  /// bytes).
  SmallVector<std::pair<unsigned, int64_t>> gathered;
  /// The reduce-scatter buffers live at the point.
  int64_t scattered = 0;
};

/// The byte counts of one bufferized function. All counts are heap bytes as
/// the CPU lowering requests them from `malloc`: the buffer's elements, plus
/// its alignment when the allocation has one (the LLVM lowering of
/// `memref.alloc` over-allocates by the alignment and aligns by hand).
struct MemoryUsage {
  /// Arguments: the sum over the arguments of each role (Parameters,
  /// OptimizerState, Inputs; out-parameters count as Results).
  /// Accumulators and Results: the sum over the allocations and static
  /// buffers of that role.
  /// Temporaries: the static temporaries plus the peak of the heap
  /// temporaries live at the same time.
  std::array<int64_t, kNumBufferRoles> bytes{};
  /// Bytes of the function's buffer arguments (all roles).
  int64_t argumentBytes = 0;
  /// The peak of all live allocations (accumulators, results, temporaries)
  /// at one point of the function.
  int64_t allocationPeak = 0;
  /// Static storage the function uses through `memref.get_global` of
  /// mutable globals (`static-temporaries=1`): not on the heap, but held for
  /// the whole call (and between calls). Each buffer is also counted in its
  /// role (Accumulators or Temporaries), at its size rounded up to its
  /// alignment, as the linker lays it out.
  int64_t staticBytes = 0;
  /// The part of the Temporaries peak (static temporaries included) held
  /// by buffers that ops recomputed by --ga-rematerialize (`ga.recomputed`)
  /// write, at the point where the Temporaries peak is reached.
  int64_t recomputedBytes = 0;
  /// Number of `memref.alloc` ops (`gpu.alloc` ops of a device step).
  unsigned numAllocations = 0;
  /// A device step (MemoryUsageAnalysis with `device`): the counts above
  /// are device bytes (`gpu.alloc`, the arguments), and the host
  /// allocations that are left (deallocation's bookkeeping) are only
  /// `hostPeak`, the peak of those live at the same time, outside the total.
  bool device = false;
  int64_t hostPeak = 0;
  /// Library workspaces the runtime holds for the step (the cuBLASLt
  /// workspace of a GPU step with library products), set by the caller.
  int64_t workspaceBytes = 0;
  /// The points of the micro-batch loop's body (see computeLoopProfile),
  /// empty without a micro-batch loop or for a device step.
  SmallVector<LoopPoint> loopProfile;

  int64_t get(BufferRole role) const {
    return bytes[static_cast<unsigned>(role)];
  }
  /// Everything the function holds at its peak: every argument buffer
  /// (allocated by the caller), the peak of its own heap (or device)
  /// allocations, its static storage and the library workspaces. This is the
  /// figure a memory budget constrains.
  int64_t getTotalPeak() const {
    return argumentBytes + allocationPeak + staticBytes + workspaceBytes;
  }
  /// The heap part of the total peak: arguments and allocations.
  int64_t getHeapPeak() const { return argumentBytes + allocationPeak; }
};

/// Computes the MemoryUsage of a bufferized `func.func` by executing its
/// allocations and deallocations symbolically in program order: a region
/// (a loop body, a branch) is counted once, and must free what it allocates
/// (the hoisting and deallocation passes guarantee it). Refuses, with an
/// error at the op, what it cannot count exactly: an allocation whose size
/// is only known at run time, a deallocation it cannot trace to an
/// allocation of the function, a region that leaks allocations.
class MemoryUsageAnalysis {
public:
  /// `argRoles` gives the role of each argument in order (non-buffer
  /// arguments are ignored; arguments past its end are out-parameters that
  /// the lowering appended, Results); when empty, arguments with `ga.batch`
  /// are Inputs and the others Parameters. With `inferOptimizerState` (and
  /// always when `argRoles` is empty), a Parameter that is not read inside a
  /// micro-batch loop (a loop that takes a subview of an input) is
  /// OptimizerState; without such a loop all stay Parameters. With
  /// `device`, `func` is a GPU step: its `gpu.alloc` buffers are counted by
  /// role and its `memref.alloc` ones only in MemoryUsage::hostPeak.
  MemoryUsageAnalysis(func::FuncOp func, ArrayRef<BufferRole> argRoles = {},
                      bool inferOptimizerState = false, bool device = false);

  bool succeeded() const { return ok; }
  const MemoryUsage &getUsage() const { return usage; }
  /// The role the analysis gave an allocation (Temporaries if unknown).
  BufferRole getRole(Operation *alloc) const;

  /// Prints the role and size of every allocation, then the totals.
  void print(raw_ostream &os) const;

private:
  void classify(ArrayRef<BufferRole> argRoles, bool inferOptimizerState);
  void computeLoopProfile(ArrayRef<BufferRole> argRoles);
  LogicalResult simulate(Block &block);
  LogicalResult simulate(Operation *op);

  func::FuncOp func;
  bool ok = true;
  MemoryUsage usage;
  /// Role and heap bytes of every allocation, in program order.
  SmallVector<std::tuple<Operation *, BufferRole, int64_t>> allocations;
  llvm::DenseMap<Operation *, unsigned> allocationIndex;
  /// Live bytes during the symbolic execution.
  int64_t live = 0, liveTemporaries = 0;
  /// A device step's host allocations and their live bytes.
  llvm::DenseMap<Operation *, int64_t> hostAllocations;
  int64_t liveHost = 0;
  /// Bytes of the static buffers that are temporaries.
  int64_t staticTemporaries = 0;
  /// The buffers (allocations and static storage) that a recomputed op
  /// writes, and the bytes of those live now (static ones included).
  SmallPtrSet<Operation *, 8> recomputedBuffers;
  int64_t liveRecomputed = 0;
};

} // namespace mlir::ga

#endif // GA_ANALYSIS_MEMORYUSAGE_H
