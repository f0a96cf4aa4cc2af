//===- ShardPlan.h - the sharded-parameter plan under a budget --*- C++ -*-===//
//
// What --ga-shard-plan computes (and what a frontend that compiles sharded
// parameters asks for): buckets of the sharded parameters in program order,
// and per bucket whether it stays gathered across the micro-batch loop and
// whether its gradient is reduce-scattered once after the loop, chosen with
// the number of micro-batches N so that the predicted per-rank peak fits a
// budget with the fewest bytes moved by the collectives. Internal to
// lib/Memory.
//
//===----------------------------------------------------------------------===//

#ifndef GA_LIB_MEMORY_SHARDPLAN_H
#define GA_LIB_MEMORY_SHARDPLAN_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::ga::detail {

/// One sharded parameter as the default plan of --ga-shard-parameters moves
/// it (every parameter re-gathered where the loop reads it, every gradient
/// that is provably a sum reduce-scattered per micro-batch).
struct ShardedParameter {
  /// Its argument and result indices in the step.
  int64_t argument = 0, result = 0;
  /// Bytes of the whole tensor and its rows (dimension 0).
  int64_t bytes = 0, rows = 0;
  /// Collectives of the default plan: per micro-batch and outside the loops.
  int64_t gathersPerMicroBatch = 0, gathersOutside = 0;
  int64_t scattersPerMicroBatch = 0, scattersOutside = 0;
};

/// A group of consecutive parameters (program order) and its choice.
struct ShardBucket {
  /// Indices into the parameters.
  SmallVector<unsigned> members;
  /// Bytes of its whole parameters.
  int64_t bytes = 0;
  bool keepGathered = false, reduceAfterLoop = false;
  /// Per step, for the chosen N: collectives, bytes of the whole tensors
  /// they move, and what the choice adds to the per-rank peak.
  int64_t allGathers = 0, reduceScatters = 0, moved = 0, resident = 0;
};

/// The plan of one step.
struct ShardPlan {
  int64_t microBatches = 0;
  /// The per-rank peak of the default plan at this N (measured) and the
  /// predicted one (with what the kept buckets add).
  int64_t basePeak = 0, predictedPeak = 0;
  /// Per step: bytes moved, collectives.
  int64_t moved = 0, calls = 0;
  SmallVector<ShardBucket> buckets;
};

/// The parameters grouped in program order (`parameters` given in it) into
/// buckets of at most `capBytes` bytes each (a larger parameter alone; 0:
/// one bucket per parameter).
SmallVector<ShardBucket> bucketParameters(ArrayRef<ShardedParameter> parameters,
                                          int64_t capBytes);

/// The bucket `bucket` with the choice it holds evaluated at `n` micro-batches
/// on `world` ranks (its collectives, bytes moved and resident bytes).
void evaluateBucket(ShardBucket &bucket, ArrayRef<ShardedParameter> parameters,
                    int64_t n, int64_t world);

/// The plan of fewest bytes moved (then smallest N, then fewest collectives,
/// then lowest peak) among the candidates `basePeaks` (N and the per-rank
/// peak of the default plan at that N) whose predicted peak fits `budget`;
/// without a budget, every bucket resharded at the first candidate's N.
/// std::nullopt when no candidate fits.
std::optional<ShardPlan>
chooseShardPlan(ArrayRef<ShardedParameter> parameters,
                ArrayRef<ShardBucket> buckets, int64_t world,
                ArrayRef<std::pair<int64_t, int64_t>> basePeaks,
                std::optional<int64_t> budget);

} // namespace mlir::ga::detail

#endif // GA_LIB_MEMORY_SHARDPLAN_H
