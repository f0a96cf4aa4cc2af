//===- Inputs.h - the step's signature and its seeded inputs ----*- C++ -*-===//
//
// What ga-verify feeds a training step: the step function, the slots of its
// arguments and results, and the seeded input sets drawn for its arguments
// (per `ga.init` / `ga.range`, else by element type; see docs/GAPasses.md).
//
//===----------------------------------------------------------------------===//

#ifndef GA_VERIFY_INPUTS_H
#define GA_VERIFY_INPUTS_H

#include "ga/Verify/HostArray.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cmath>
#include <string>
#include <utility>

namespace mlir::ga::verify {

/// One argument or result of the step as the entry wrapper sees it.
struct Slot {
  Type type;                 // the step's type (tensor or scalar)
  ElemKind kind;             // element kind
  SmallVector<int64_t> dims; // shape, ShapedType::kDynamic for `?`
  bool scalar = false;       // passed as a 0-d tensor by the wrapper
};

/// How an argument's values are drawn.
struct InitSpec {
  std::string kind; // normal, uniform, positive, mask, zeros, ones, int
  double lo = 0, hi = 1;
  bool hasRange = false;
  /// Per-sample data (a `ga.batch` argument) with no `ga.init`/`ga.range`:
  /// its distribution varies with the seed (see dataMode).
  bool variesWithSeed = false;
  /// A scalar `i1` (a flag) with no attribute: seed % 2, so that a branch on
  /// it takes both sides over two consecutive seeds.
  bool flag = false;
};

/// How per-sample data without an explicit distribution is drawn for `seed`:
/// seed % 3 = 0 as usual, 1 skewed up, 2 skewed down. Branches on data (an
/// `scf.if` on the sign of a sum, a mask that is empty in some micro-batch)
/// then take both sides over the default three seeds, and `--seed=S` alone
/// reproduces exactly the inputs of seed S.
enum class DataMode { Centered, High, Low };
DataMode dataMode(uint64_t seed);
/// How `mode` draws per-sample data, for reports.
StringRef describeDataMode(DataMode mode);

/// A splitmix64 stream with uniform and normal draws.
struct RandomStream {
  uint64_t state;
  explicit RandomStream(uint64_t s) : state(s) {}
  uint64_t next() { // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
  /// Standard normal (Box-Muller).
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300)
      u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

/// Describes the argument or result `index` (`what`) of type `type`, or
/// refuses it.
llvm::Expected<Slot> describeSlot(Type type, StringRef what, unsigned index);

/// The step function: `funcName` if not empty, else the only function with
/// `ga.batch` arguments, else the only public function definition.
llvm::Expected<func::FuncOp> findStep(ModuleOp module, StringRef funcName);

/// Parses the `lo:hi` of --int-range.
llvm::Expected<std::pair<double, double>> parseRangeOption(StringRef text);

/// The default range [lo, hi) of integer tensor arguments without `ga.range`:
/// `intRange` if not empty, else [0, K) with K the smallest static non-batch
/// dimension >= 2 of the float tensor arguments (a class or vocabulary count
/// in typical steps), else [0, 2).
llvm::Expected<std::pair<double, double>>
defaultIntRange(func::FuncOp step, ArrayRef<Slot> args, StringRef intRange);

/// Reads `ga.init` / `ga.range` of argument `i` and picks the distribution;
/// `intRangeGiven` says whether `intDefault` came from --int-range (integer
/// scalars then use it too, else [1, 10)).
InitSpec getInitSpec(func::FuncOp fn, unsigned i, const Slot &slot,
                     std::pair<double, double> intDefault, bool intRangeGiven);

/// The arguments of a step as ga-verify feeds them: one slot and one
/// distribution per argument.
struct StepInputs {
  SmallVector<Slot> args;
  SmallVector<InitSpec> specs;
};

/// Describes the arguments of `step` and how each is drawn (`intRange` as
/// --int-range, empty for the default), or says why it cannot be fed. The
/// one description of the inputs that ga-verify and the C API
/// (mlirGADrawInputs) share.
llvm::Expected<StepInputs> describeInputs(func::FuncOp step,
                                          StringRef intRange);

/// Draws every element of `a` per `spec` from `rng`, for input set `setSeed`.
void fillArray(HostArray &a, const InitSpec &spec, RandomStream &rng,
               uint64_t setSeed);

/// The input set of `setSeed`: one array per argument, dynamic dimensions of
/// size `dynSize`.
std::vector<HostArray> makeInputs(ArrayRef<Slot> args, ArrayRef<InitSpec> specs,
                                  uint64_t setSeed, int64_t dynSize, bool dump);

/// Prints a one-line summary of input `i` to stderr (--dump-inputs).
void summarizeInput(unsigned i, const Slot &slot, const InitSpec &spec,
                    const HostArray &a);

} // namespace mlir::ga::verify

#endif // GA_VERIFY_INPUTS_H
