//===- ShardPlan.cpp - the sharded-parameter plan under a budget ----------===//
//
// The choice that --ga-shard-parameters executes: per bucket of parameters,
// gathered once and kept across the micro-batch loop or re-gathered where
// the loop reads it, and the gradient reduce-scattered per micro-batch into
// a shard accumulator or once after the loop from the full accumulator;
// jointly with N, under a per-rank budget, with the fewest bytes moved.
// --ga-shard-plan prints it (the frontend runs the pass and compiles the
// plan it prints).
//
//===----------------------------------------------------------------------===//

#include "ShardPlan.h"
#include "StepMemory.h"

#include "ga/IR/Diagnostics.h"
#include "ga/IR/GAShardOps.h"
#include "ga/Memory/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <numeric>

namespace mlir::ga {
#define GEN_PASS_DEF_SHARDPLAN
#include "ga/Memory/Passes.h.inc"
} // namespace mlir::ga

using namespace mlir;
using namespace mlir::ga;
using namespace mlir::ga::detail;

//===----------------------------------------------------------------------===//
// The analysis
//===----------------------------------------------------------------------===//

SmallVector<ShardBucket>
ga::detail::bucketParameters(ArrayRef<ShardedParameter> parameters,
                             int64_t capBytes) {
  SmallVector<ShardBucket> buckets;
  for (auto [i, p] : llvm::enumerate(parameters)) {
    if (buckets.empty() || capBytes <= 0 ||
        buckets.back().bytes + p.bytes > capBytes)
      buckets.emplace_back();
    buckets.back().members.push_back(i);
    buckets.back().bytes += p.bytes;
  }
  return buckets;
}

/// What the full accumulator of `p` adds over the shard accumulator on the
/// rank that holds the fewest rows (the largest difference).
static int64_t fullAccumulatorExtra(const ShardedParameter &p, int64_t world) {
  if (p.rows <= 0)
    return p.bytes;
  int64_t fewest = p.rows / world; // rank r holds (r+1)D/W - rD/W rows
  return p.bytes - p.bytes / p.rows * fewest;
}

void ga::detail::evaluateBucket(ShardBucket &bucket,
                                ArrayRef<ShardedParameter> parameters,
                                int64_t n, int64_t world) {
  bucket.allGathers = bucket.reduceScatters = bucket.moved = 0;
  bucket.resident = 0;
  for (unsigned i : bucket.members) {
    const ShardedParameter &p = parameters[i];
    bool kept = bucket.keepGathered && p.gathersPerMicroBatch > 0;
    bool deferred = bucket.reduceAfterLoop && p.scattersPerMicroBatch > 0;
    int64_t gathers = kept ? 1 : n * p.gathersPerMicroBatch + p.gathersOutside;
    int64_t scatters =
        deferred ? 1 : n * p.scattersPerMicroBatch + p.scattersOutside;
    bucket.allGathers += gathers;
    bucket.reduceScatters += scatters;
    bucket.moved += (gathers + scatters) * p.bytes;
    // Kept: the whole parameter lives through the loop (counted whole: the
    // default plan's transient copy is not subtracted, an upper bound).
    if (kept)
      bucket.resident += p.bytes;
    if (deferred)
      bucket.resident += fullAccumulatorExtra(p, world);
  }
}

namespace {
/// One binary decision of one bucket: keep it gathered, or reduce after the
/// loop. What it saves (bytes moved, collectives) and what it costs.
struct Item {
  unsigned bucket;
  bool gather;
  int64_t saved, savedCalls, extra;
};
} // namespace

/// The decisions worth taking at `n` micro-batches (those that save bytes).
static SmallVector<Item> getItems(ArrayRef<ShardedParameter> parameters,
                                  ArrayRef<ShardBucket> buckets, int64_t n,
                                  int64_t world) {
  SmallVector<Item> items;
  for (auto [b, bucket] : llvm::enumerate(buckets)) {
    Item gather{static_cast<unsigned>(b), true, 0, 0, 0};
    Item reduce{static_cast<unsigned>(b), false, 0, 0, 0};
    for (unsigned i : bucket.members) {
      const ShardedParameter &p = parameters[i];
      if (p.gathersPerMicroBatch > 0) {
        int64_t calls = n * p.gathersPerMicroBatch + p.gathersOutside - 1;
        gather.savedCalls += calls;
        gather.saved += calls * p.bytes;
        gather.extra += p.bytes;
      }
      if (p.scattersPerMicroBatch > 0) {
        int64_t calls = n * p.scattersPerMicroBatch + p.scattersOutside - 1;
        reduce.savedCalls += calls;
        reduce.saved += calls * p.bytes;
        reduce.extra += fullAccumulatorExtra(p, world);
      }
    }
    for (const Item &item : {gather, reduce})
      if (item.saved > 0)
        items.push_back(item);
  }
  return items;
}

/// The subset of `items` of largest saving (then most collectives saved,
/// then least extra memory) whose extra memory is at most `room`: every
/// subset for up to 16 items, else greedily by saving per extra byte.
static SmallVector<Item> selectItems(ArrayRef<Item> items, int64_t room) {
  if (items.size() <= 16) {
    uint32_t best = 0;
    std::tuple<int64_t, int64_t, int64_t> bestScore{0, 0, 0};
    for (uint32_t mask = 1; mask < (1u << items.size()); ++mask) {
      int64_t saved = 0, calls = 0, extra = 0;
      for (auto [k, item] : llvm::enumerate(items))
        if (mask & (1u << k)) {
          saved += item.saved;
          calls += item.savedCalls;
          extra += item.extra;
        }
      std::tuple<int64_t, int64_t, int64_t> score{saved, calls, -extra};
      if (extra <= room && score > bestScore) {
        best = mask;
        bestScore = score;
      }
    }
    SmallVector<Item> chosen;
    for (auto [k, item] : llvm::enumerate(items))
      if (best & (1u << k))
        chosen.push_back(item);
    return chosen;
  }
  SmallVector<Item> sorted(items);
  llvm::sort(sorted, [](const Item &a, const Item &b) {
    // a.saved / a.extra > b.saved / b.extra, without division; ties in
    // program order.
    __int128 left =
        static_cast<__int128>(a.saved) * std::max<int64_t>(b.extra, 1);
    __int128 right =
        static_cast<__int128>(b.saved) * std::max<int64_t>(a.extra, 1);
    if (left != right)
      return left > right;
    return std::make_pair(a.bucket, !a.gather) <
           std::make_pair(b.bucket, !b.gather);
  });
  SmallVector<Item> chosen;
  for (const Item &item : sorted)
    if (item.extra <= room) {
      chosen.push_back(item);
      room -= item.extra;
    }
  return chosen;
}

std::optional<ShardPlan>
ga::detail::chooseShardPlan(ArrayRef<ShardedParameter> parameters,
                            ArrayRef<ShardBucket> buckets, int64_t world,
                            ArrayRef<std::pair<int64_t, int64_t>> basePeaks,
                            std::optional<int64_t> budget) {
  std::optional<ShardPlan> best;
  auto score = [](const ShardPlan &plan) {
    return std::make_tuple(plan.moved, plan.microBatches, plan.calls,
                           plan.predictedPeak);
  };
  for (auto [n, base] : basePeaks) {
    if (budget && base > *budget)
      continue;
    ShardPlan plan;
    plan.microBatches = n;
    plan.basePeak = plan.predictedPeak = base;
    plan.buckets.assign(buckets.begin(), buckets.end());
    if (budget)
      for (const Item &item :
           selectItems(getItems(parameters, buckets, n, world), *budget - base))
        (item.gather ? plan.buckets[item.bucket].keepGathered
                     : plan.buckets[item.bucket].reduceAfterLoop) = true;
    for (ShardBucket &bucket : plan.buckets) {
      evaluateBucket(bucket, parameters, n, world);
      plan.moved += bucket.moved;
      plan.calls += bucket.allGathers + bucket.reduceScatters;
      plan.predictedPeak += bucket.resident;
    }
    if (!best || score(plan) < score(*best))
      best = std::move(plan);
    if (!budget)
      break; // The default plan, at the first candidate.
  }
  return best;
}

//===----------------------------------------------------------------------===//
// --ga-shard-plan
//===----------------------------------------------------------------------===//

namespace {
struct ShardPlanPass : public ga::impl::ShardPlanBase<ShardPlanPass> {
  using Base::Base;

  void runOnOperation() override;

  /// The sharded parameters of `func` as the file `costs` describes them,
  /// in program order (of their first all-gather), their rows read from the
  /// whole type of that all-gather; failure with an error at `func`.
  FailureOr<SmallVector<ShardedParameter>> readParameters(func::FuncOp func);
  /// Writes `plan` (text or JSON) to `output`.
  LogicalResult print(func::FuncOp func, const ShardPlan &plan,
                      ArrayRef<ShardedParameter> parameters,
                      std::optional<int64_t> budget);
};
} // namespace

FailureOr<SmallVector<ShardedParameter>>
ShardPlanPass::readParameters(func::FuncOp func) {
  auto buffer = llvm::MemoryBuffer::getFile(costs);
  if (!buffer)
    return func.emitError("ga-shard-plan: cannot read '")
           << costs << "': " << buffer.getError().message();
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    std::string message = llvm::toString(json.takeError());
    return func.emitError("ga-shard-plan: '") << costs << "': " << message;
  }
  const llvm::json::Array *rows = json->getAsArray();
  if (!rows)
    return func.emitError("ga-shard-plan: '")
           << costs << "' is not the JSON array --ga-shard-parameters writes";
  // Program order: the position of each op in a walk of the function.
  DenseMap<Operation *, int64_t> order;
  func.walk([&](Operation *op) { order.try_emplace(op, order.size()); });
  SmallVector<std::pair<int64_t, ShardedParameter>> found;
  for (const llvm::json::Value &value : *rows) {
    const llvm::json::Object *row = value.getAsObject();
    auto get = [&](StringRef key) -> std::optional<int64_t> {
      return row ? row->getInteger(key) : std::nullopt;
    };
    ShardedParameter p;
    std::optional<int64_t> fields[] = {get("argument"),
                                       get("result"),
                                       get("gathers_per_micro_batch"),
                                       get("gathers_outside_loops"),
                                       get("scatters_per_micro_batch"),
                                       get("scatters_outside_loops"),
                                       get("gathered_bytes"),
                                       get("scattered_bytes")};
    if (llvm::any_of(fields, [](auto f) { return !f; }) || *fields[0] < 0 ||
        *fields[0] >= static_cast<int64_t>(func.getNumArguments()))
      return func.emitError("ga-shard-plan: '")
             << costs << "': a row without the fields of "
             << "--ga-shard-parameters' plan-output, or out of range";
    p.argument = *fields[0];
    p.result = *fields[1];
    p.gathersPerMicroBatch = *fields[2];
    p.gathersOutside = *fields[3];
    p.scattersPerMicroBatch = *fields[4];
    p.scattersOutside = *fields[5];
    p.bytes = std::max(*fields[6], *fields[7]);
    int64_t first = std::numeric_limits<int64_t>::max();
    for (Operation *user : func.getArgument(p.argument).getUsers())
      if (auto gather = dyn_cast<AllGatherOp>(user)) {
        first = std::min(first, order.lookup(user));
        p.rows = cast<RankedTensorType>(gather.getType()).getDimSize(0);
      }
    found.emplace_back(first, p);
  }
  llvm::sort(found, [](const auto &a, const auto &b) {
    return std::make_pair(a.first, a.second.argument) <
           std::make_pair(b.first, b.second.argument);
  });
  return llvm::to_vector(
      llvm::map_range(found, [](const auto &pair) { return pair.second; }));
}

/// "0,1,2".
static std::string joinIndices(ArrayRef<int64_t> indices) {
  return llvm::join(
      llvm::map_range(indices, [](int64_t i) { return std::to_string(i); }),
      ",");
}

LogicalResult ShardPlanPass::print(func::FuncOp func, const ShardPlan &plan,
                                   ArrayRef<ShardedParameter> parameters,
                                   std::optional<int64_t> budget) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(output, &error);
  if (!file)
    return func.emitError("ga-shard-plan: ") << error;
  SmallVector<int64_t> kept, deferred;
  for (const ShardBucket &bucket : plan.buckets)
    for (unsigned i : bucket.members) {
      if (bucket.keepGathered && parameters[i].gathersPerMicroBatch > 0)
        kept.push_back(parameters[i].argument);
      if (bucket.reduceAfterLoop && parameters[i].scattersPerMicroBatch > 0)
        deferred.push_back(parameters[i].result);
    }
  llvm::sort(kept);
  llvm::sort(deferred);
  if (format == "text")
    file->os() << "shard plan of @" << func.getSymName()
               << ": N = " << plan.microBatches << ", predicted per-rank peak "
               << plan.predictedPeak
               << " bytes (every bucket resharded: " << plan.basePeak << "), "
               << plan.moved << " bytes moved by " << plan.calls
               << " collectives per step; keep-gathered=" << joinIndices(kept)
               << " reduce-after-loop=" << joinIndices(deferred) << "\n";
  llvm::json::Array buckets;
  for (auto [k, bucket] : llvm::enumerate(plan.buckets)) {
    SmallVector<int64_t> arguments, results;
    for (unsigned i : bucket.members) {
      arguments.push_back(parameters[i].argument);
      results.push_back(parameters[i].result);
    }
    StringRef gathered = bucket.keepGathered ? "once" : "per micro-batch";
    StringRef reduced =
        bucket.reduceAfterLoop ? "after the loop" : "per micro-batch";
    if (format == "text") {
      file->os() << "bucket " << k << ": arguments " << joinIndices(arguments)
                 << " (" << bucket.bytes << " bytes): gathered " << gathered
                 << ", reduced " << reduced << ": " << bucket.allGathers
                 << " all-gathers, " << bucket.reduceScatters
                 << " reduce-scatters, " << bucket.moved << " bytes moved, +"
                 << bucket.resident << " resident\n";
      continue;
    }
    buckets.push_back(
        llvm::json::Object{{"arguments", llvm::json::Array(arguments)},
                           {"results", llvm::json::Array(results)},
                           {"bytes", bucket.bytes},
                           {"gathered", gathered},
                           {"reduced", reduced},
                           {"all_gathers", bucket.allGathers},
                           {"reduce_scatters", bucket.reduceScatters},
                           {"moved", bucket.moved},
                           {"resident", bucket.resident}});
  }
  if (format == "json")
    file->os() << llvm::json::Value(llvm::json::Object{
                      {"function", func.getSymName()},
                      {"micro_batches", plan.microBatches},
                      {"base_peak", plan.basePeak},
                      {"predicted_peak", plan.predictedPeak},
                      {"budget", budget ? llvm::json::Value(*budget)
                                        : llvm::json::Value(nullptr)},
                      {"moved", plan.moved},
                      {"calls", plan.calls},
                      {"keep_gathered", llvm::json::Array(kept)},
                      {"reduce_after_loop", llvm::json::Array(deferred)},
                      {"buckets", std::move(buckets)}})
               << "\n";
  file->keep();
  return success();
}

void ShardPlanPass::runOnOperation() {
  auto func = getOperation().lookupSymbol<func::FuncOp>(funcName);
  if (!func || func.isExternal()) {
    getOperation().emitError("ga-shard-plan: no function @") << funcName;
    return signalPassFailure();
  }
  if (world < 1 || microBatches.empty() ||
      microBatches.size() != basePeaks.size() ||
      llvm::any_of(
          microBatches, [](int64_t n) { return n < 1; }) ||
      (format != "text" && format != "json")) {
    func.emitError("ga-shard-plan: needs world >= 1, as many base-peaks as "
                   "micro-batches (each >= 1), and format text or json");
    return signalPassFailure();
  }
  std::optional<int64_t> budget;
  if (!maxMemory.empty()) {
    FailureOr<int64_t> parsed = parseByteCount(maxMemory);
    if (failed(parsed)) {
      func.emitError()
          << DiagnosticCode::InvalidMaxMemory << "invalid max-memory '"
          << maxMemory
          << "': expected a number of bytes, optionally followed by "
          << getByteCountUnits();
      return signalPassFailure();
    }
    budget = *parsed;
  }
  FailureOr<SmallVector<ShardedParameter>> parameters = readParameters(func);
  if (failed(parameters))
    return signalPassFailure();
  SmallVector<std::pair<int64_t, int64_t>> candidates;
  for (auto [n, peak] : llvm::zip(microBatches, basePeaks))
    candidates.emplace_back(n, peak);
  SmallVector<ShardBucket> buckets = bucketParameters(*parameters, bucketSize);
  std::optional<ShardPlan> plan =
      chooseShardPlan(*parameters, buckets, world, candidates, budget);
  if (!plan) {
    auto smallest = *llvm::min_element(candidates, [](auto a, auto b) {
      return std::make_pair(a.second, a.first) <
             std::make_pair(b.second, b.first);
    });
    func.emitError() << DiagnosticCode::BudgetNotMet
                     << "no sharded-parameter plan fits max-memory="
                     << maxMemory << " per rank: the smallest per-rank peak "
                     << "is " << formatByteCount(smallest.second)
                     << ", with N = " << smallest.first
                     << " and every bucket resharded after use; a per-rank "
                     << "budget of at least that fits";
    return signalPassFailure();
  }
  numBuckets = plan->buckets.size();
  if (failed(print(func, *plan, *parameters, budget)))
    return signalPassFailure();
}
