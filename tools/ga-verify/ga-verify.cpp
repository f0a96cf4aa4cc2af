//===- ga-verify.cpp - prove a rewritten training step exact --------------===//
//
// `ga-verify step.mlir --micro-batches=N` JIT-compiles the training step twice
// in-process (mlir::ExecutionEngine): once as written (the full-batch
// reference) and once after `ga-accumulate{micro-batches=N}` (or any pipeline
// given with --pipeline). Both run on the same seeded inputs; every result is
// compared (floats to a tolerance relative to the largest reference
// magnitude, integers exactly) and printed as a table or as JSON.
//
// ABI: a wrapper `func.func @__ga_verify_entry` is added to each module after
// the pipeline under test. It takes every argument of the step as a tensor
// (scalars as 0-d tensors), calls the step and returns every result as a
// tensor, and carries `llvm.emit_c_interface`. After bufferization all of its
// arguments and results are memref descriptors, so one generic caller
// (`_mlir_ciface___ga_verify_entry(results*, desc*...)`, through
// ExecutionEngine::invokePacked) serves every step signature.
//
// Each invocation runs in a forked child (unless --no-fork) so that a step
// that crashes (an out-of-range label, a failed cf.assert) is reported as an
// error instead of taking the tool down.
//
// Ahead of time: with --reference-library / --rewritten-library that step is
// not JIT-compiled from its body but taken from a shared library built by the
// README recipe (ga-lower-to-cpu{c-interface=1}, exporting
// `_mlir_ciface_<func>`). The step becomes a declaration with a C interface,
// so the lowered wrapper calls the library through the same descriptors; see
// externalizeStep.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"
#include "ga/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <link.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

static cl::OptionCategory verifyCategory("ga-verify options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<step.mlir>"),
                                          cl::init("-"),
                                          cl::cat(verifyCategory));
static cl::opt<int64_t>
    microBatches("micro-batches",
                 cl::desc("Number of micro-batches N for the default pipeline "
                          "ga-accumulate{micro-batches=N} (default 4)"),
                 cl::init(4), cl::cat(verifyCategory));
static cl::opt<std::string> funcName(
    "func",
    cl::desc("Step function to verify (default: the only function with "
             "ga.batch arguments, else the only public function)"),
    cl::cat(verifyCategory));
static cl::opt<uint64_t>
    seed("seed",
         cl::desc("Seed of the input generator; alone, the only input set "
                  "(default: --seeds input sets from seed 0)"),
         cl::init(0), cl::cat(verifyCategory));
static cl::opt<unsigned>
    numSeeds("seeds",
             cl::desc("Number of input sets, seeds S, S+1, ... from --seed S "
                      "(default 3; 1 when only --seed is given)"),
             cl::init(3), cl::cat(verifyCategory));
static cl::opt<double>
    relTol("rtol",
           cl::desc("Relative tolerance, times max|ref| of each result "
                    "(default by element type: f64 1e-12, f32 1e-5, "
                    "f16 3e-3, bf16 2e-2)"),
           cl::cat(verifyCategory));
static cl::opt<double> absTol("atol",
                              cl::desc("Absolute tolerance (default 0)"),
                              cl::init(0.0), cl::cat(verifyCategory));
static cl::opt<bool> jsonOutput("json", cl::desc("Print the results as JSON"),
                                cl::cat(verifyCategory));
static cl::opt<std::string> pipelineText(
    "pipeline",
    cl::desc("Pass pipeline under test, in mlir-opt's textual form "
             "(default: builtin.module(ga-accumulate{micro-batches=N})); "
             "a pipeline without a builtin.module(...) anchor is wrapped in "
             "one"),
    cl::cat(verifyCategory));
static cl::opt<std::string> intRange(
    "int-range",
    cl::desc("lo:hi, the range [lo, hi) of integer tensor arguments without "
             "ga.range (default: [0, K) with K the smallest static "
             "non-batch dimension >= 2 of the float arguments, a class or "
             "vocabulary count in typical steps; integer scalars: [1, 10))"),
    cl::cat(verifyCategory));
static cl::opt<int64_t> batchSize(
    "batch-size",
    cl::desc("Size of every dynamic dimension of the arguments (default "
             "4 * N + 3: not a multiple of N, so the remainder path runs)"),
    cl::init(0), cl::cat(verifyCategory));
static cl::opt<std::string>
    lowerOptions("lower-options",
                 cl::desc("Options of ga-lower-to-cpu for both steps, e.g. "
                          "'blas=1' or 'openmp=1'"),
                 cl::init(""), cl::cat(verifyCategory));
static cl::opt<std::string> rewrittenLowerOptions(
    "rewritten-lower-options",
    cl::desc("Options of ga-lower-to-cpu for the rewritten step only (default: "
             "--lower-options); with --pipeline=canonicalize this verifies a "
             "lowering, e.g. 'blas=1', against the plain loops"),
    cl::cat(verifyCategory));
static cl::list<std::string>
    sharedLibs("shared-libs",
               cl::desc("Libraries the compiled steps may call (comma "
                        "separated); with blas=1 a CBLAS is found by itself"),
               cl::CommaSeparated, cl::cat(verifyCategory));
static cl::opt<std::string> referenceLibrary(
    "reference-library",
    cl::desc("Run the reference step from this ahead-of-time shared library "
             "(ga-lower-to-cpu c-interface=1 of the step as written; it must "
             "export _mlir_ciface_<func>) instead of JIT-compiling it"),
    cl::value_desc("path"), cl::cat(verifyCategory));
static cl::opt<std::string> rewrittenLibrary(
    "rewritten-library",
    cl::desc("Run the rewritten step from this ahead-of-time shared library "
             "(the step after the same pipeline, lowered with c-interface=1) "
             "instead of JIT-compiling it"),
    cl::value_desc("path"), cl::cat(verifyCategory));
static cl::opt<unsigned> jitOptLevel(
    "opt-level",
    cl::desc("LLVM optimization level of the JIT (0-3, default 2); both "
             "steps are compiled alike"),
    cl::init(2), cl::cat(verifyCategory));
static cl::opt<bool> dumpInputs("dump-inputs",
                                cl::desc("Print a summary of every generated "
                                         "input to stderr"),
                                cl::cat(verifyCategory));
static cl::opt<bool> dumpRewritten(
    "dump-rewritten",
    cl::desc("Print the module after the pipeline under test to stderr"),
    cl::cat(verifyCategory));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Run each compiled step this many times, on fresh copies "
                    "of the inputs, and report the fastest run (default 1)"),
           cl::init(1), cl::cat(verifyCategory));
static cl::opt<bool> noFork("no-fork",
                            cl::desc("Run the compiled steps in this process "
                                     "(for debuggers; a crash is not caught)"),
                            cl::cat(verifyCategory));

//===----------------------------------------------------------------------===//
// Phases (for crash reports)
//===----------------------------------------------------------------------===//

/// Write end of the pipe to the supervising process, -1 without one.
static int phaseFd = -1;

/// Tells the supervising process what the verifier is doing now, so that a
/// crash can be reported with it.
static void setPhase(const llvm::Twine &phase) {
  if (phaseFd < 0)
    return;
  std::string line = phase.str() + "\n";
  ssize_t unused = write(phaseFd, line.data(), line.size());
  (void)unused;
}

//===----------------------------------------------------------------------===//
// Host buffers
//===----------------------------------------------------------------------===//

namespace {

enum class ElemKind { F16, BF16, F32, F64, I1, I8, I16, I32, I64, Index };

/// A dense row-major host array with the element layout the lowered code uses.
struct HostArray {
  ElemKind kind;
  SmallVector<int64_t> shape;
  std::vector<char> bytes;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
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
static DataMode dataMode(uint64_t s) {
  return s % 3 == 0 ? DataMode::Centered
                    : (s % 3 == 1 ? DataMode::High : DataMode::Low);
}
static StringRef describeDataMode(DataMode m) {
  switch (m) {
  case DataMode::Centered:
    return "N(0,1) floats, masks p=1/2";
  case DataMode::High:
    return "|N(0,1)| floats, masks p=7/8";
  case DataMode::Low:
    return "-|N(0,1)| floats, masks p=1/8";
  }
  return "";
}

/// One argument or result of the step as the wrapper sees it.
struct Slot {
  Type type;                 // the step's type (tensor or scalar)
  ElemKind kind;             // element kind
  SmallVector<int64_t> dims; // shape, ShapedType::kDynamic for `?`
  bool scalar = false;       // passed as a 0-d tensor by the wrapper
};

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

} // namespace

static bool isFloatKind(ElemKind k) {
  return k == ElemKind::F16 || k == ElemKind::BF16 || k == ElemKind::F32 ||
         k == ElemKind::F64;
}

static size_t elemSize(ElemKind k) {
  switch (k) {
  case ElemKind::I1:
  case ElemKind::I8:
    return 1;
  case ElemKind::F16:
  case ElemKind::BF16:
  case ElemKind::I16:
    return 2;
  case ElemKind::F32:
  case ElemKind::I32:
    return 4;
  case ElemKind::F64:
  case ElemKind::I64:
  case ElemKind::Index:
    return 8;
  }
  llvm_unreachable("unknown element kind");
}

static std::optional<ElemKind> getElemKind(Type t) {
  if (t.isF16())
    return ElemKind::F16;
  if (t.isBF16())
    return ElemKind::BF16;
  if (t.isF32())
    return ElemKind::F32;
  if (t.isF64())
    return ElemKind::F64;
  if (t.isIndex())
    return ElemKind::Index;
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
      return ElemKind::I1;
    case 8:
      return ElemKind::I8;
    case 16:
      return ElemKind::I16;
    case 32:
      return ElemKind::I32;
    case 64:
      return ElemKind::I64;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

static uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = ((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff)
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp >= 31)
    return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10)
      return sign;
    mant |= 0x800000;
    uint32_t shift = 14 - exp;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = sign | (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    ++half;
  return half;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      x = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000 | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

static uint16_t floatToBF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (x >> 16) | 0x40;
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return (x + rounding) >> 16;
}

static float bf16ToFloat(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// Reads element `i` of `a` as a double (integers exactly up to 2^53).
static double readElement(const HostArray &a, int64_t i) {
  const char *p = a.bytes.data() + i * elemSize(a.kind);
  switch (a.kind) {
  case ElemKind::F16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return halfToFloat(v);
  }
  case ElemKind::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return bf16ToFloat(v);
  }
  case ElemKind::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case ElemKind::F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case ElemKind::I1:
    return (*p & 1) ? 1 : 0;
  case ElemKind::I8:
    return static_cast<int8_t>(*p);
  case ElemKind::I16: {
    int16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case ElemKind::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case ElemKind::I64:
  case ElemKind::Index: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  }
  llvm_unreachable("unknown element kind");
}

/// Reads element `i` of an integer array exactly.
static int64_t readInteger(const HostArray &a, int64_t i) {
  const char *p = a.bytes.data() + i * elemSize(a.kind);
  switch (a.kind) {
  case ElemKind::I64:
  case ElemKind::Index: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  default:
    return static_cast<int64_t>(readElement(a, i));
  }
}

static void writeElement(HostArray &a, int64_t i, double value) {
  char *p = a.bytes.data() + i * elemSize(a.kind);
  switch (a.kind) {
  case ElemKind::F16: {
    uint16_t v = floatToHalf(static_cast<float>(value));
    std::memcpy(p, &v, 2);
    return;
  }
  case ElemKind::BF16: {
    uint16_t v = floatToBF16(static_cast<float>(value));
    std::memcpy(p, &v, 2);
    return;
  }
  case ElemKind::F32: {
    float v = static_cast<float>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case ElemKind::F64:
    std::memcpy(p, &value, 8);
    return;
  case ElemKind::I1:
    *p = value != 0 ? 1 : 0;
    return;
  case ElemKind::I8:
    *p = static_cast<int8_t>(value);
    return;
  case ElemKind::I16: {
    int16_t v = static_cast<int16_t>(value);
    std::memcpy(p, &v, 2);
    return;
  }
  case ElemKind::I32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case ElemKind::I64:
  case ElemKind::Index: {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(p, &v, 8);
    return;
  }
  }
}

static std::string typeToString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

//===----------------------------------------------------------------------===//
// Step signature
//===----------------------------------------------------------------------===//

/// Describes the argument or result `index` of type `type`, or refuses.
static llvm::Expected<Slot> describeSlot(Type type, StringRef what,
                                         unsigned index) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::formatv("{0} #{1} has type {2}: {3}",
                                                 what, index,
                                                 typeToString(type), why)
                                       .str());
  };
  Slot slot;
  slot.type = type;
  Type elem = type;
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (tensor.getEncoding())
      return fail("tensors with an encoding are not supported");
    elem = tensor.getElementType();
    slot.dims.assign(tensor.getShape().begin(), tensor.getShape().end());
  } else if (isa<TensorType>(type)) {
    return fail("unranked tensors are not supported");
  } else if (isa<FloatType, IntegerType, IndexType>(type)) {
    slot.scalar = true;
  } else {
    return fail("ga-verify runs steps on tensors and scalars (f16, bf16, "
                "f32, f64, i1, i8, i16, i32, i64, index) only");
  }
  std::optional<ElemKind> kind = getElemKind(elem);
  if (!kind)
    return fail("unsupported element type " + typeToString(elem) +
                " (supported: f16, bf16, f32, f64, i1, i8, i16, i32, i64, "
                "index)");
  slot.kind = *kind;
  return slot;
}

/// Picks the step function (see --func).
static llvm::Expected<func::FuncOp> findStep(ModuleOp module) {
  if (!funcName.empty()) {
    auto fn = module.lookupSymbol<func::FuncOp>(funcName);
    if (!fn)
      return llvm::createStringError("no func.func named @" + funcName +
                                     " in the input");
    if (fn.isExternal())
      return llvm::createStringError("@" + funcName +
                                     " is a declaration without a body");
    return fn;
  }
  SmallVector<func::FuncOp> batched, pub;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    if (fn.isPublic())
      pub.push_back(fn);
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      if (fn.getArgAttr(i, "ga.batch")) {
        batched.push_back(fn);
        break;
      }
  }
  auto names = [](ArrayRef<func::FuncOp> fns) {
    std::string s;
    for (auto fn : fns)
      s += (s.empty() ? "@" : ", @") + fn.getSymName().str();
    return s;
  };
  if (batched.size() == 1)
    return batched.front();
  if (batched.size() > 1)
    return llvm::createStringError(
        "several functions have ga.batch arguments (" + names(batched) +
        "); choose one with --func");
  if (pub.size() == 1)
    return pub.front();
  if (pub.empty())
    return llvm::createStringError("the input has no public function "
                                   "definition to verify");
  return llvm::createStringError("several public functions (" + names(pub) +
                                 "); choose one with --func");
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

static llvm::Expected<std::pair<double, double>>
parseRangeOption(StringRef text) {
  auto [loText, hiText] = text.split(':');
  double lo, hi;
  if (loText.trim().getAsDouble(lo) || hiText.trim().getAsDouble(hi) ||
      !(lo < hi))
    return llvm::createStringError("--int-range must be lo:hi with lo < hi, "
                                   "got '" +
                                   text + "'");
  return std::make_pair(lo, hi);
}

/// Reads `ga.init` / `ga.range` of argument `i` and picks the distribution.
static InitSpec getInitSpec(func::FuncOp fn, unsigned i, const Slot &slot,
                            std::pair<double, double> intDefault) {
  InitSpec spec;
  if (auto range = fn.getArgAttrOfType<ArrayAttr>(i, "ga.range")) {
    auto asDouble = [](Attribute a) {
      if (auto v = dyn_cast<IntegerAttr>(a))
        return static_cast<double>(v.getValue().getSExtValue());
      if (auto v = dyn_cast<FloatAttr>(a))
        return v.getValueAsDouble();
      return 0.0;
    };
    if (range.size() == 2) {
      spec.lo = asDouble(range[0]);
      spec.hi = asDouble(range[1]);
      spec.hasRange = true;
    }
  }
  if (auto init = fn.getArgAttrOfType<StringAttr>(i, "ga.init")) {
    spec.kind = init.getValue().str();
    return spec;
  }
  if (spec.hasRange) {
    spec.kind = "uniform";
    return spec;
  }
  bool perSample = static_cast<bool>(fn.getArgAttr(i, "ga.batch"));
  if (slot.kind == ElemKind::I1) {
    spec.kind = "mask";
    spec.variesWithSeed = perSample;
    spec.flag = slot.dims.empty();
    return spec;
  }
  if (!isFloatKind(slot.kind)) {
    spec.kind = "uniform";
    if (slot.dims.empty() && intRange.empty()) {
      spec.lo = 1; // integer scalars: step counters and the like
      spec.hi = 10;
    } else {
      spec.lo = intDefault.first;
      spec.hi = intDefault.second;
    }
    spec.hasRange = true;
    return spec;
  }
  spec.kind = "normal";
  spec.variesWithSeed = perSample;
  return spec;
}

static void fillArray(HostArray &a, const InitSpec &spec, RandomStream &rng,
                      uint64_t setSeed) {
  bool isFloat = isFloatKind(a.kind);
  if (spec.flag) {
    writeElement(a, 0, static_cast<double>(setSeed % 2));
    return;
  }
  DataMode mode = dataMode(setSeed);
  if (!spec.variesWithSeed)
    mode = DataMode::Centered;
  double maskP = mode == DataMode::Centered
                     ? 0.5
                     : (mode == DataMode::High ? 0.875 : 0.125);
  int64_t n = a.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    if (spec.kind == "zeros") {
      v = 0;
    } else if (spec.kind == "ones") {
      v = 1;
    } else if (spec.kind == "mask") {
      v = rng.uniform() < maskP ? 1 : 0;
    } else if (spec.kind == "positive") {
      v = isFloat
              ? std::fabs(rng.normal()) + 0.1
              : 1 + std::floor(
                        rng.uniform() *
                        std::max(1.0, (spec.hasRange ? spec.hi : 10.0) - 1));
    } else if (spec.kind == "uniform" || !isFloat) {
      double lo = spec.hasRange ? spec.lo : 0.0;
      double hi = spec.hasRange ? spec.hi : (isFloat ? 1.0 : 2.0);
      if (isFloat) {
        v = lo + (hi - lo) * rng.uniform();
      } else {
        double ilo = std::ceil(lo), ihi = std::ceil(hi); // [lo, hi)
        v = ilo + std::floor(rng.uniform() * std::max(1.0, ihi - ilo));
      }
    } else { // normal
      v = rng.normal();
      if (mode != DataMode::Centered)
        v = mode == DataMode::High ? std::fabs(v) : -std::fabs(v);
    }
    writeElement(a, i, v);
  }
}

//===----------------------------------------------------------------------===//
// The wrapper (ABI)
//===----------------------------------------------------------------------===//

static constexpr StringLiteral kEntryName = "__ga_verify_entry";

/// Adds `func.func @__ga_verify_entry` that calls `step` with all arguments
/// and results as tensors (scalars as 0-d tensors) and a C interface.
static void addEntryWrapper(ModuleOp module, func::FuncOp step) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = step.getLoc();
  auto asTensor = [](Type t) -> Type {
    if (isa<TensorType>(t))
      return t;
    return RankedTensorType::get({}, t);
  };
  SmallVector<Type> argTypes, resultTypes;
  for (Type t : step.getArgumentTypes())
    argTypes.push_back(asTensor(t));
  for (Type t : step.getResultTypes())
    resultTypes.push_back(asTensor(t));
  auto entry = func::FuncOp::create(b, loc, kEntryName,
                                    b.getFunctionType(argTypes, resultTypes));
  entry->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
  Block *body = entry.addEntryBlock();
  b.setInsertionPointToStart(body);
  SmallVector<Value> args;
  for (auto [arg, t] : llvm::zip(body->getArguments(), step.getArgumentTypes()))
    args.push_back(isa<TensorType>(t) ? Value(arg)
                                      : Value(tensor::ExtractOp::create(
                                            b, loc, arg, ValueRange{})));
  auto call = func::CallOp::create(b, loc, step, args);
  SmallVector<Value> results;
  for (Value r : call.getResults())
    results.push_back(isa<TensorType>(r.getType())
                          ? r
                          : Value(tensor::FromElementsOp::create(
                                b, loc, RankedTensorType::get({}, r.getType()),
                                ValueRange{r})));
  func::ReturnOp::create(b, loc, results);
}

//===----------------------------------------------------------------------===//
// Ahead-of-time libraries
//===----------------------------------------------------------------------===//

/// Whether the library of `handle` was linked with -Bsymbolic (DF_SYMBOLIC):
/// its references to its own functions bind to them.
static bool isSymbolic(void *handle) {
  struct link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_ld)
    return false;
  for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_SYMBOLIC ||
        (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_SYMBOLIC)))
      return true;
  return false;
}

/// Opens the shared library of the `which` step and returns the address of
/// `_mlir_ciface_<func>` in it. RTLD_LOCAL because the reference and the
/// rewritten library define the same names: opened globally (as
/// ExecutionEngine's sharedLibPaths are), the second library's
/// `_mlir_ciface_f` would bind its own call of `f` to the first library's, and
/// the JIT would resolve `_mlir_ciface_f` to the first library's too. RTLD_NOW
/// so that a missing dependency (a blas=1 library linked without -lopenblas) is
/// refused here rather than crashing the step. Without -Bsymbolic the
/// library's call of `f` binds to an `f` of the global scope if there is one
/// (a step named `exp` would call libm's): refused too, though symbols that
/// dlsym cannot see (libc's compat-only `step`) slip through and crash. The
/// library stays loaded until the process ends.
static llvm::Expected<void *> openStepLibrary(StringRef path, StringRef func,
                                              StringRef which) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        ("the " + which + " library '" + path + "' " + why).str());
  };
  if (!llvm::sys::fs::exists(path))
    return fail("does not exist");
  // dlopen searches the library path for a name without a slash.
  SmallString<256> absolute(path);
  if (std::error_code ec = llvm::sys::fs::make_absolute(absolute))
    return fail("cannot be located: " + ec.message());
  dlerror();
  void *handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail(llvm::Twine("cannot be loaded: ") + dlerror());
  std::string symbol = ("_mlir_ciface_" + func).str();
  void *address = dlsym(handle, symbol.c_str());
  if (!address)
    return fail("does not export " + symbol +
                ": build it from the step with "
                "--ga-lower-to-cpu=\"c-interface=1\" (which gives public "
                "functions a C interface)");
  if (void *other = dlsym(RTLD_DEFAULT, func.str().c_str());
      other && !isSymbolic(handle)) {
    Dl_info info;
    std::string owner = dladdr(other, &info) && info.dli_fname
                            ? info.dli_fname
                            : "another library";
    return fail("would call " + owner + "'s " + func + ", not its own @" +
                func + ": link it with -Wl,-Bsymbolic");
  }
  return address;
}

/// Replaces the body of `step` (called by the entry wrapper) by a declaration
/// of the function the library defines: the same tensor signature, private (a
/// declaration cannot be public) and with `llvm.emit_c_interface`.
/// ga-lower-to-cpu bufferizes it across function boundaries with identity
/// layouts as it did the library's definition, and func-to-llvm then emits a
/// `@<func>` that packs the descriptors and calls `_mlir_ciface_<func>`, the
/// library's C interface. Functions only the step called are dropped.
///
/// Nothing in the library records the signature it was built from: a library
/// built from another step (or another pipeline) is called with the wrong
/// arguments. Results whose static sizes disagree with the step are refused
/// (see checkResults); a crash is reported as one.
static LogicalResult externalizeStep(ModuleOp module, func::FuncOp step) {
  step.eraseBody();
  step.setPrivate();
  step->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(module.getContext()));
  PassManager pm(module.getContext());
  pm.addPass(createSymbolDCEPass());
  return pm.run(module);
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// Reads `fd` until end of file (retrying interrupted reads) and closes it.
static std::string drainPipe(int fd) {
  std::string data;
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    data.append(buf, n);
  }
  close(fd);
  return data;
}

/// Waits for child `pid` (retrying interrupted waits); its wait status.
static int waitForChild(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

namespace {
/// A memref descriptor built by hand: allocated, aligned, offset,
/// sizes[rank], strides[rank] (all 8-byte words).
struct Descriptor {
  std::vector<int64_t> words;
};

/// A compiled module ready to run.
struct Compiled {
  std::unique_ptr<ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  std::string library; // where the step itself comes from, if not the JIT
};

/// A step taken from an ahead-of-time library (see openStepLibrary).
struct LibraryStep {
  std::string path;
  std::string symbol;      // _mlir_ciface_<func>
  void *address = nullptr; // of `symbol` in the library
};
} // namespace

static Descriptor makeDescriptor(HostArray &a) {
  Descriptor d;
  int64_t rank = a.shape.size();
  d.words.resize(3 + 2 * rank);
  int64_t ptr = reinterpret_cast<int64_t>(a.bytes.data());
  d.words[0] = ptr;
  d.words[1] = ptr;
  d.words[2] = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    d.words[3 + i] = a.shape[i];
    d.words[3 + rank + i] = stride;
    stride *= a.shape[i];
  }
  return d;
}

/// Serializes result descriptors (read with their strides) as
/// [rank, sizes..., dense bytes] per result.
static std::string serializeResults(ArrayRef<int64_t> words,
                                    ArrayRef<Slot> results) {
  std::string out;
  size_t pos = 0;
  for (const Slot &slot : results) {
    int64_t rank = slot.dims.size();
    const char *aligned = reinterpret_cast<const char *>(words[pos + 1]);
    int64_t offset = words[pos + 2];
    SmallVector<int64_t> sizes(words.begin() + pos + 3,
                               words.begin() + pos + 3 + rank);
    SmallVector<int64_t> strides(words.begin() + pos + 3 + rank,
                                 words.begin() + pos + 3 + 2 * rank);
    pos += 3 + 2 * rank;
    int64_t r = rank;
    out.append(reinterpret_cast<const char *>(&r), 8);
    int64_t n = 1;
    for (int64_t s : sizes) {
      out.append(reinterpret_cast<const char *>(&s), 8);
      n *= s;
    }
    size_t es = elemSize(slot.kind);
    SmallVector<int64_t> idx(rank, 0);
    for (int64_t e = 0; e < n; ++e) {
      int64_t lin = offset;
      for (int64_t k = 0; k < rank; ++k)
        lin += idx[k] * strides[k];
      out.append(aligned + lin * es, es);
      for (int64_t k = rank - 1; k >= 0; --k) {
        if (++idx[k] < sizes[k])
          break;
        idx[k] = 0;
      }
    }
  }
  return out;
}

/// Checks the result descriptors the step returned against the step's result
/// types (the rank is implied; static sizes must agree) before they are read:
/// a step from a library built from another signature gets refused here when
/// it gets this far. Empty if they fit.
static std::string checkResults(ArrayRef<int64_t> words,
                                ArrayRef<Slot> results) {
  size_t pos = 0;
  for (auto [i, slot] : llvm::enumerate(results)) {
    int64_t rank = slot.dims.size();
    int64_t n = 1;
    for (int64_t k = 0; k < rank; ++k) {
      int64_t size = words[pos + 3 + k];
      if (size < 0 ||
          (!ShapedType::isDynamic(slot.dims[k]) && size != slot.dims[k]))
        return llvm::formatv("result #{0} has size {1} in dimension {2}, the "
                             "step declares {3}",
                             i, size, k, typeToString(slot.type));
      n *= size;
    }
    if (n > 0 && !words[pos + 1])
      return llvm::formatv("result #{0} has no buffer", i);
    pos += 3 + 2 * rank;
  }
  return "";
}

/// Reads what invokeEntry produced: 'R', the run time and the results, or 'E'
/// and why the results cannot be read.
static llvm::Expected<std::vector<HostArray>>
deserializeResults(StringRef data, ArrayRef<Slot> results, double &seconds,
                   const Compiled &compiled, StringRef which) {
  if (data.consume_front("E"))
    return llvm::createStringError(
        ("the " + which +
         " step returned results that do not fit its type: " + data +
         (compiled.library.empty()
              ? ""
              : "; was '" + compiled.library +
                    "' built from this step and pipeline?"))
            .str());
  if (!data.consume_front("R"))
    return llvm::createStringError("the " + which.str() +
                                   " step returned no results");
  std::vector<HostArray> out;
  size_t pos = 0;
  auto read = [&](void *dst, size_t n) {
    if (pos + n > data.size())
      return false;
    std::memcpy(dst, data.data() + pos, n);
    pos += n;
    return true;
  };
  if (!read(&seconds, sizeof(seconds)))
    return llvm::createStringError("the step returned no results");
  for (const Slot &slot : results) {
    HostArray a;
    a.kind = slot.kind;
    int64_t rank;
    if (!read(&rank, 8) || rank != (int64_t)slot.dims.size())
      return llvm::createStringError("truncated result data");
    a.shape.resize(rank);
    for (int64_t k = 0; k < rank; ++k)
      if (!read(&a.shape[k], 8))
        return llvm::createStringError("truncated result data");
    a.bytes.resize(a.numElements() * elemSize(slot.kind));
    if (!read(a.bytes.data(), a.bytes.size()))
      return llvm::createStringError("truncated result data");
    out.push_back(std::move(a));
  }
  return out;
}

/// Calls the entry on copies of `inputs` (--repeat times) and returns 'R', the
/// fastest run time in seconds and the serialized results of the last run, or
/// 'E' and a message if the results do not fit the step's result types.
static std::string invokeEntry(Compiled &compiled,
                               const std::vector<HostArray> &inputs,
                               ArrayRef<Slot> results) {
  double best = std::numeric_limits<double>::infinity();
  size_t resultWords = 0;
  for (const Slot &s : results)
    resultWords += 3 + 2 * s.dims.size();
  std::vector<int64_t> resultStorage(resultWords, 0);
  for (unsigned r = 0, e = std::max(1u, repeat.getValue()); r < e; ++r) {
    std::vector<HostArray> copy = inputs; // the step may update in place
    std::vector<Descriptor> descs;
    descs.reserve(copy.size());
    for (HostArray &a : copy)
      descs.push_back(makeDescriptor(a));
    std::vector<void *> pointers;
    pointers.push_back(resultStorage.data());
    for (Descriptor &d : descs)
      pointers.push_back(d.words.data());
    std::vector<void *> packed;
    for (void *&p : pointers)
      packed.push_back(&p);
    auto start = std::chrono::steady_clock::now();
    compiled.entry(packed.data());
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
    // Results of earlier repetitions are not freed: the step owns nothing
    // after returning, and the (child) process ends soon.
  }
  std::string bad = checkResults(resultStorage, results);
  if (!bad.empty())
    return "E" + bad;
  std::string out(reinterpret_cast<const char *>(&best), sizeof(best));
  return "R" + out + serializeResults(resultStorage, results);
}

/// Runs the entry, in a child process unless --no-fork.
static llvm::Expected<std::vector<HostArray>>
runStep(Compiled &compiled, const std::vector<HostArray> &inputs,
        ArrayRef<Slot> results, StringRef which, double &seconds) {
  setPhase("running the " + which + " step");
  if (noFork)
    return deserializeResults(invokeEntry(compiled, inputs, results), results,
                              seconds, compiled, which);
  int fds[2];
  if (pipe(fds) != 0)
    return llvm::createStringError("pipe() failed");
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0)
    return llvm::createStringError("fork() failed");
  if (pid == 0) {
    close(fds[0]);
    // A crash of the step is reported by the parent: no LLVM stack dump here.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP})
      signal(sig, SIG_DFL);
    // Whatever the step prints (cf.assert messages) goes to stderr, so that
    // --json output on stdout stays a single document.
    dup2(2, 1);
    setvbuf(stdout, nullptr, _IONBF, 0);
    std::string data = invokeEntry(compiled, inputs, results);
    const char *p = data.data();
    size_t left = data.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0)
        _exit(3);
      p += n;
      left -= n;
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string data = drainPipe(fds[0]);
  int status = waitForChild(pid);
  if (WIFSIGNALED(status))
    return llvm::createStringError(
        llvm::formatv("the {0} step crashed ({1}) while running; an "
                      "out-of-range index (check ga.range of integer "
                      "arguments), a failed assertion, {2}",
                      which, strsignal(WTERMSIG(status)),
                      compiled.library.empty()
                          ? "or a miscompile"
                          : "a miscompile, or '" + compiled.library +
                                "' does not run this step (built from another "
                                "step or pipeline, or linked without "
                                "-Wl,-Bsymbolic and calling another library's "
                                "function of the step's name)")
            .str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return llvm::createStringError(
        llvm::formatv("the {0} step exited with status {1} while running",
                      which, WEXITSTATUS(status))
            .str());
  return deserializeResults(data, results, seconds, compiled, which);
}

/// A shared library that exports cblas_sgemm: OpenBLAS, else the reference
/// BLAS (Debian's libblas.so.3 includes CBLAS). Empty if none is found.
static std::string findCBLAS() {
  for (const char *dir :
       {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
        "/usr/lib", "/usr/local/lib"})
    for (const char *name : {"libopenblas.so.0", "libopenblas.so",
                             "libcblas.so.3", "libblas.so.3"}) {
      std::string path = std::string(dir) + "/" + name;
      if (llvm::sys::fs::exists(path))
        return path;
    }
  return "";
}

/// Lowers `module` to LLVM and JIT-compiles it. With `library`, the step in
/// `module` is a declaration (externalizeStep) whose C interface the library
/// provides.
static llvm::Expected<Compiled> compile(ModuleOp module, StringRef which,
                                        const LibraryStep *library) {
  setPhase("lowering the " + which + " step with ga-lower-to-cpu");
  PassManager pm(module.getContext());
  std::string optionText =
      which == "rewritten" && rewrittenLowerOptions.getNumOccurrences()
          ? rewrittenLowerOptions.getValue()
          : lowerOptions.getValue();
  auto options = ga::LowerToCPUOptions::createFromString(optionText);
  if (!options)
    return llvm::createStringError("invalid ga-lower-to-cpu options '" +
                                   optionText + "'");
  // ga-verify calls its own wrapper: it needs no other C interface, and
  // takes results as return values (out-params=1 only changes how a caller
  // receives them, not what they are).
  options->cInterface = false;
  options->outParams = false;
  ga::buildLowerToCPUPipeline(pm, *options);
  if (failed(pm.run(module)))
    return llvm::createStringError(
        ("lowering the " + which +
         " step to the CPU (ga-lower-to-cpu) failed; see the diagnostics "
         "above")
            .str());
  setPhase("JIT-compiling the " + which + " step");
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(jitOptLevel, 0, nullptr);
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(std::min(jitOptLevel.getValue(), 3u));
  SmallVector<StringRef> libs;
  std::string runnerUtils =
      std::string(GA_MLIR_LIB_DIR) + "/libmlir_c_runner_utils.so";
  if (llvm::sys::fs::exists(runnerUtils))
    libs.push_back(runnerUtils);
  for (const std::string &lib : sharedLibs)
    libs.push_back(lib);
  std::string omp = std::string(GA_MLIR_LIB_DIR) + "/libomp.so";
  if (options->openmp && llvm::sys::fs::exists(omp))
    libs.push_back(omp);
  std::string blas;
  if (options->blas && sharedLibs.empty() && !library) {
    blas = findCBLAS();
    if (blas.empty())
      return llvm::createStringError(
          "blas=1 needs a CBLAS library (libopenblas0 or libblas3); none "
          "found, give one with --shared-libs");
    libs.push_back(blas);
  }
  engineOptions.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return llvm::createStringError(
        "JIT compilation of the " + which.str() +
        " step failed: " + llvm::toString(engine.takeError()));
  Compiled compiled;
  compiled.engine = std::move(*engine);
  if (library) {
    compiled.library = library->path;
    compiled.engine->registerSymbols([&](llvm::orc::MangleAndInterner mangle) {
      llvm::orc::SymbolMap symbols;
      symbols[mangle(library->symbol)] = {
          llvm::orc::ExecutorAddr::fromPtr(library->address),
          llvm::JITSymbolFlags::Exported};
      return symbols;
    });
  }
  auto entry =
      compiled.engine->lookupPacked(("_mlir_ciface_" + kEntryName).str());
  if (!entry)
    return llvm::createStringError(
        "the compiled " + which.str() +
        " step has no entry point: " + llvm::toString(entry.takeError()));
  compiled.entry = *entry;
  return compiled;
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

namespace {
struct Comparison {
  unsigned index;
  std::string type;
  bool isFloat;
  double maxAbs = 0, maxRel = 0, maxRef = 0, tolerance = 0;
  int64_t mismatches = 0;
  int64_t worst = -1;
  SmallVector<int64_t> shape;
  std::string status; // PASS, FAIL
  std::string note;
  uint64_t seed = 0; // the input set of this comparison
};
} // namespace

static double defaultRtol(ElemKind k) {
  switch (k) {
  case ElemKind::F64:
    return 1e-12;
  case ElemKind::F16:
    return 3e-3;
  case ElemKind::BF16:
    return 2e-2;
  default:
    return 1e-5;
  }
}

static Comparison compareResult(unsigned index, const Slot &slot,
                                const HostArray &ref, const HostArray &got) {
  Comparison c;
  c.index = index;
  c.type = typeToString(slot.type);
  c.isFloat = isFloatKind(slot.kind);
  c.shape = ref.shape;
  if (ref.shape != got.shape) {
    c.status = "FAIL";
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "shape mismatch: reference [";
    llvm::interleave(ref.shape, os, ",");
    os << "], rewritten [";
    llvm::interleave(got.shape, os, ",");
    os << "]";
    c.note = s;
    c.maxAbs = c.maxRel = std::numeric_limits<double>::infinity();
    return c;
  }
  int64_t n = ref.numElements();
  if (!c.isFloat) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = readInteger(ref, i), g = readInteger(got, i);
      c.maxRef = std::max(c.maxRef, std::fabs(static_cast<double>(r)));
      if (r != g) {
        ++c.mismatches;
        double d = std::fabs(static_cast<double>(r) - static_cast<double>(g));
        if (d > c.maxAbs || c.worst < 0) {
          c.maxAbs = d;
          c.worst = i;
        }
      }
    }
    c.maxRel = c.maxRef > 0 ? c.maxAbs / c.maxRef : (c.maxAbs > 0 ? 1 : 0);
    c.tolerance = 0;
    c.status = c.mismatches == 0 ? "PASS" : "FAIL";
    if (c.mismatches)
      c.note = llvm::formatv("{0} of {1} elements differ (integers must be "
                             "exact)",
                             c.mismatches, n)
                   .str();
    return c;
  }
  int64_t refNonFinite = 0, patternMismatch = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = readElement(ref, i), g = readElement(got, i);
    bool rf = std::isfinite(r), gf = std::isfinite(g);
    if (!rf)
      ++refNonFinite;
    if (!rf || !gf) {
      bool same = (std::isnan(r) && std::isnan(g)) || r == g;
      if (!same) {
        ++patternMismatch;
        if (c.worst < 0)
          c.worst = i;
      }
      continue;
    }
    c.maxRef = std::max(c.maxRef, std::fabs(r));
    double d = std::fabs(r - g);
    if (d > c.maxAbs) {
      c.maxAbs = d;
      c.worst = i;
    }
  }
  double r =
      relTol.getNumOccurrences() ? relTol.getValue() : defaultRtol(slot.kind);
  c.tolerance = absTol + r * c.maxRef;
  c.maxRel = c.maxRef > 0
                 ? c.maxAbs / c.maxRef
                 : (c.maxAbs > 0 ? std::numeric_limits<double>::infinity() : 0);
  bool ok = c.maxAbs <= c.tolerance && patternMismatch == 0;
  if (patternMismatch) {
    c.maxAbs = c.maxRel = std::numeric_limits<double>::infinity();
    c.note = llvm::formatv("{0} elements are NaN/Inf in only one of the two "
                           "results",
                           patternMismatch)
                 .str();
  }
  if (refNonFinite && !patternMismatch) {
    ok = false;
    c.note = llvm::formatv("the reference has {0} NaN/Inf elements: the "
                           "inputs are outside the step's domain (annotate "
                           "arguments with ga.init / ga.range)",
                           refNonFinite)
                 .str();
  }
  c.status = ok ? "PASS" : "FAIL";
  return c;
}

static std::string formatIndex(int64_t linear, ArrayRef<int64_t> shape) {
  if (linear < 0)
    return "-";
  if (shape.empty())
    return "[]";
  SmallVector<int64_t> idx(shape.size());
  for (int64_t k = shape.size() - 1; k >= 0; --k) {
    idx[k] = shape[k] ? linear % shape[k] : 0;
    linear = shape[k] ? linear / shape[k] : 0;
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k)
    s += (k ? "," : "") + std::to_string(idx[k]);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Main
//===----------------------------------------------------------------------===//

namespace {
struct Run {
  std::string funcName;
  std::string pipeline;
  int64_t batch = -1;
  bool dynamicBatch = false;         // some argument has a dynamic dimension
  bool changed = true;               // the pipeline changed the step function
  std::string libraries[2];          // reference, rewritten: AOT libraries
  std::string error;                 // why the step could not be verified
  double compileSeconds[2] = {0, 0}; // reference, rewritten: lower + JIT
  double runSeconds[2] = {0, 0};     // fastest run
  SmallVector<uint64_t> seeds;       // the input sets
  /// Per result: the comparison of the input set with the worst outcome.
  std::vector<Comparison> comparisons;
};
} // namespace

/// Wraps `text` in builtin.module(...) unless it is already anchored there.
static std::string anchorPipeline(StringRef text) {
  StringRef t = text.trim();
  if (t.starts_with("builtin.module("))
    return t.str();
  return ("builtin.module(" + t + ")").str();
}

static void summarizeInput(unsigned i, const Slot &slot, const InitSpec &spec,
                           const HostArray &a) {
  auto &os = llvm::errs();
  os << "input #" << i << ": " << typeToString(slot.type)
     << " init=" << spec.kind;
  if (spec.hasRange)
    os << llvm::format(" range=[%g, %g)", spec.lo, spec.hi);
  os << " shape=[";
  llvm::interleave(a.shape, os, ",");
  os << "]";
  int64_t n = a.numElements();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    double v = readElement(a, k);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  if (n)
    os << llvm::format(" min=%g max=%g mean=%g", lo, hi, sum / n);
  os << " first=[";
  for (int64_t k = 0; k < std::min<int64_t>(n, 6); ++k)
    os << (k ? ", " : "") << llvm::format("%g", readElement(a, k));
  os << (n > 6 ? ", ...]" : "]") << "\n";
}

static int verify(MLIRContext &context, llvm::SourceMgr &sourceMgr, Run &run) {
  auto fail = [&](const llvm::Twine &message) {
    run.error = message.str();
    llvm::errs() << "ga-verify: error: " << run.error << "\n";
    return 1;
  };
  if (microBatches < 1)
    return fail("--micro-batches must be >= 1");

  OwningOpRef<ModuleOp> original =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!original)
    return fail("could not parse '" + inputFilename + "'");

  auto stepOr = findStep(*original);
  if (!stepOr)
    return fail(llvm::toString(stepOr.takeError()));
  func::FuncOp step = *stepOr;
  run.funcName = step.getSymName().str();

  // Ahead-of-time libraries, checked before any work is done.
  LibraryStep libraries[2];
  const char *sides[2] = {"reference", "rewritten"};
  for (int k = 0; k < 2; ++k) {
    StringRef path = k == 0 ? referenceLibrary : rewrittenLibrary;
    if (path.empty())
      continue;
    setPhase(llvm::Twine("loading the ") + sides[k] + " library '" + path +
             "'");
    auto address = openStepLibrary(path, run.funcName, sides[k]);
    if (!address)
      return fail(llvm::toString(address.takeError()));
    libraries[k] = {path.str(), "_mlir_ciface_" + run.funcName, *address};
    run.libraries[k] = path.str();
  }
  auto libraryOf = [&](int k) -> const LibraryStep * {
    return libraries[k].address ? &libraries[k] : nullptr;
  };

  // Signature: arguments and results we can feed and read.
  SmallVector<Slot> args, results;
  for (auto [i, t] : llvm::enumerate(step.getArgumentTypes())) {
    auto slot = describeSlot(t, "argument", i);
    if (!slot)
      return fail("cannot verify @" + run.funcName + ": " +
                  llvm::toString(slot.takeError()));
    args.push_back(*slot);
  }
  for (auto [i, t] : llvm::enumerate(step.getResultTypes())) {
    auto slot = describeSlot(t, "result", i);
    if (!slot)
      return fail("cannot verify @" + run.funcName + ": " +
                  llvm::toString(slot.takeError()));
    results.push_back(*slot);
  }
  if (results.empty())
    return fail("@" + run.funcName + " has no results: nothing to compare");

  // Sizes of dynamic dimensions, batch size for the report.
  int64_t dynSize = batchSize > 0 ? batchSize.getValue() : 4 * microBatches + 3;
  for (const Slot &slot : args)
    run.dynamicBatch |= llvm::any_of(slot.dims, ShapedType::isDynamic);
  for (auto [i, slot] : llvm::enumerate(args))
    if (auto dim = step.getArgAttrOfType<IntegerAttr>(i, "ga.batch"))
      if (run.batch < 0 && dim.getInt() < (int64_t)slot.dims.size()) {
        int64_t s = slot.dims[dim.getInt()];
        run.batch = ShapedType::isDynamic(s) ? dynSize : s;
      }

  // Default integer range: [0, K), K the smallest static non-batch dim >= 2
  // of the float tensor arguments.
  std::pair<double, double> intDefault = {0, 2};
  if (!intRange.empty()) {
    auto parsed = parseRangeOption(intRange);
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    intDefault = *parsed;
  } else {
    int64_t k = std::numeric_limits<int64_t>::max();
    for (auto [i, slot] : llvm::enumerate(args)) {
      if (!isFloatKind(slot.kind))
        continue;
      auto batchDim = step.getArgAttrOfType<IntegerAttr>(i, "ga.batch");
      for (auto [d, size] : llvm::enumerate(slot.dims))
        if (!ShapedType::isDynamic(size) && size >= 2 &&
            (!batchDim || batchDim.getInt() != (int64_t)d))
          k = std::min(k, size);
    }
    if (k != std::numeric_limits<int64_t>::max())
      intDefault = {0, static_cast<double>(k)};
  }

  // Input sets: --seeds of them from --seed, or the one of --seed alone.
  unsigned numSets =
      seed.getNumOccurrences() && !numSeeds.getNumOccurrences() ? 1 : numSeeds;
  if (numSets < 1)
    return fail("--seeds must be >= 1");
  for (unsigned k = 0; k < numSets; ++k)
    run.seeds.push_back(seed + k);
  // The distributions, read now: compiling lowers the step away.
  SmallVector<InitSpec> specs;
  for (auto [i, slot] : llvm::enumerate(args))
    specs.push_back(getInitSpec(step, i, slot, intDefault));
  auto makeInputs = [&](uint64_t setSeed) {
    std::vector<HostArray> inputs;
    for (auto [i, slot] : llvm::enumerate(args)) {
      HostArray a;
      a.kind = slot.kind;
      for (int64_t size : slot.dims)
        a.shape.push_back(ShapedType::isDynamic(size) ? dynSize : size);
      a.bytes.resize(std::max<int64_t>(a.numElements(), 1) * elemSize(a.kind));
      const InitSpec &spec = specs[i];
      RandomStream rng(setSeed * 0x100000001B3ull + 0x51ED2701ull * (i + 1));
      rng.next();
      fillArray(a, spec, rng, setSeed);
      if (dumpInputs) {
        llvm::errs() << "seed " << setSeed << ": ";
        summarizeInput(i, slot, spec, a);
      }
      inputs.push_back(std::move(a));
    }
    return inputs;
  };

  // The module under test: the pipeline on a clone.
  OwningOpRef<ModuleOp> rewritten = original->clone();
  run.pipeline = pipelineText.empty()
                     ? llvm::formatv("builtin.module(ga-accumulate{{"
                                     "micro-batches={0}})",
                                     microBatches.getValue())
                           .str()
                     : anchorPipeline(pipelineText);
  setPhase("running the pipeline '" + run.pipeline + "' on @" + run.funcName);
  {
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    FailureOr<OpPassManager> parsed =
        parsePassPipeline(run.pipeline, errorStream);
    if (failed(parsed))
      return fail("invalid pipeline '" + run.pipeline + "': " + errors);
    if (parsed->getOpAnchorName() != ModuleOp::getOperationName())
      return fail("the pipeline '" + run.pipeline +
                  "' must be anchored on builtin.module");
    PassManager pm(&context, ModuleOp::getOperationName());
    static_cast<OpPassManager &>(pm) = *parsed;
    if (failed(pm.run(*rewritten)))
      return fail("the pipeline '" + run.pipeline + "' failed on @" +
                  run.funcName + "; see its diagnostics above");
  }
  if (dumpRewritten)
    rewritten->print(llvm::errs());
  auto printed = [](Operation *op) {
    std::string s;
    llvm::raw_string_ostream os(s);
    op->print(os, OpPrintingFlags().printGenericOpForm());
    return s;
  };

  auto rewrittenStep = rewritten->lookupSymbol<func::FuncOp>(run.funcName);
  if (!rewrittenStep || rewrittenStep.isExternal())
    return fail("the pipeline removed the body of @" + run.funcName);
  run.changed = printed(step) != printed(rewrittenStep);
  // A pipeline may append `index` arguments (a run-time micro-batch count):
  // they get --micro-batches.
  size_t numAppended = 0;
  {
    ArrayRef<Type> before = step.getArgumentTypes();
    ArrayRef<Type> after = rewrittenStep.getArgumentTypes();
    bool sameResults = step.getResultTypes() == rewrittenStep.getResultTypes();
    bool prefix = after.size() >= before.size() &&
                  after.take_front(before.size()) == before &&
                  llvm::all_of(after.drop_front(before.size()),
                               [](Type t) { return t.isIndex(); });
    if (!sameResults || !prefix)
      return fail("the pipeline changed the signature of @" + run.funcName +
                  " from " + typeToString(step.getFunctionType()) + " to " +
                  typeToString(rewrittenStep.getFunctionType()));
    numAppended = after.size() - before.size();
  }

  addEntryWrapper(*original, step);
  addEntryWrapper(*rewritten, rewrittenStep);
  ModuleOp modules[2] = {*original, *rewritten};
  func::FuncOp steps[2] = {step, rewrittenStep};
  for (int k = 0; k < 2; ++k)
    if (libraryOf(k) && failed(externalizeStep(modules[k], steps[k])))
      return fail(llvm::Twine("could not replace the ") + sides[k] +
                  " step by a declaration of its library's function");

  auto clock = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    auto now = std::chrono::steady_clock::now();
    std::chrono::duration<double> d = now - clock;
    clock = now;
    return d.count();
  };
  auto reference = compile(*original, "reference", libraryOf(0));
  if (!reference)
    return fail(llvm::toString(reference.takeError()));
  run.compileSeconds[0] = elapsed();
  auto test = compile(*rewritten, "rewritten", libraryOf(1));
  if (!test)
    return fail(llvm::toString(test.takeError()));
  run.compileSeconds[1] = elapsed();

  // Every input set through both steps; per result, the worst outcome.
  auto isWorse = [](const Comparison &a, const Comparison &b) {
    bool aFails = a.status != "PASS", bFails = b.status != "PASS";
    if (aFails != bFails)
      return aFails;
    return a.maxRel > b.maxRel;
  };
  for (auto [k, setSeed] : llvm::enumerate(run.seeds)) {
    std::vector<HostArray> inputs = makeInputs(setSeed);
    std::vector<HostArray> rewrittenInputs = inputs;
    for (size_t j = 0; j < numAppended; ++j) {
      HostArray a;
      a.kind = ElemKind::Index;
      a.bytes.resize(8);
      writeElement(a, 0, static_cast<double>(microBatches));
      rewrittenInputs.push_back(std::move(a));
    }
    // Which input set failed, when there are several.
    std::string ofSet =
        run.seeds.size() > 1
            ? (" (inputs of seed " + llvm::Twine(setSeed) + ")").str()
            : std::string();
    double seconds[2];
    auto refResults =
        runStep(*reference, inputs, results, "reference", seconds[0]);
    if (!refResults)
      return fail(llvm::toString(refResults.takeError()) + ofSet);
    auto testResults =
        runStep(*test, rewrittenInputs, results, "rewritten", seconds[1]);
    if (!testResults)
      return fail(llvm::toString(testResults.takeError()) + ofSet);
    for (int side = 0; side < 2; ++side)
      run.runSeconds[side] =
          k == 0 ? seconds[side]
                 : std::min(run.runSeconds[side], seconds[side]);
    for (auto [i, slot] : llvm::enumerate(results)) {
      Comparison c =
          compareResult(i, slot, (*refResults)[i], (*testResults)[i]);
      c.seed = setSeed;
      if (k == 0)
        run.comparisons.push_back(std::move(c));
      else if (isWorse(c, run.comparisons[i]))
        run.comparisons[i] = std::move(c);
    }
  }
  return 0;
}

static void printTable(const Run &run) {
  auto &os = llvm::outs();
  os << "ga-verify: @" << run.funcName << " with " << run.pipeline;
  if (run.batch >= 0)
    os << ", batch " << run.batch;
  if (run.seeds.size() == 1) {
    os << ", seed " << run.seeds.front() << "\n";
  } else {
    os << ", seeds ";
    llvm::interleaveComma(run.seeds, os);
    os << "\n";
  }
  for (int k = 0; k < 2; ++k)
    if (!run.libraries[k].empty())
      os << "  " << (k == 0 ? "reference" : "rewritten")
         << " step: ahead-of-time library " << run.libraries[k] << "\n";
  if (!run.changed)
    os << "  note: the pipeline left @" << run.funcName << " unchanged"
       << (pipelineText.empty() ? " (no ga.batch arguments?)" : "") << "\n";
  if (run.seeds.size() > 1) {
    os << "  inputs: per-sample data without ga.init drawn as ";
    llvm::interleave(
        run.seeds, os,
        [&](uint64_t s) {
          os << describeDataMode(dataMode(s)) << " (seed " << s << ")";
        },
        "; ");
    os << "; scalar i1 flags = seed % 2\n";
  }
  os << llvm::formatv("  {0,-7} {1,-28} {2,-12} {3,-12} {4,-12} {5}\n",
                      "result", "type", "max-abs-err", "max-rel-err",
                      "tolerance", "status");
  unsigned passed = 0;
  for (const Comparison &c : run.comparisons) {
    std::string type =
        c.type.size() > 28 ? c.type.substr(0, 25) + "..." : c.type;
    os << llvm::formatv("  #{0,-6} {1,-28} {2,-12} {3,-12} {4,-12} {5}",
                        c.index, type, llvm::formatv("{0:e3}", c.maxAbs),
                        llvm::formatv("{0:e3}", c.maxRel),
                        c.isFloat ? llvm::formatv("{0:e3}", c.tolerance).str()
                                  : std::string("exact"),
                        c.status);
    if (c.status != "PASS" && c.worst >= 0)
      os << " at " << formatIndex(c.worst, c.shape);
    if (c.status != "PASS" && run.seeds.size() > 1)
      os << " with seed " << c.seed;
    if (!c.note.empty())
      os << " (" << c.note << ")";
    os << "\n";
    passed += c.status == "PASS";
  }
  os << (passed == run.comparisons.size() ? "PASS" : "FAIL") << ": " << passed
     << "/" << run.comparisons.size() << " results match";
  if (run.seeds.size() > 1)
    os << " on all " << run.seeds.size() << " input sets";
  os << "\n";
  os << llvm::format("time: run %.3f ms reference, %.3f ms rewritten",
                     run.runSeconds[0] * 1e3, run.runSeconds[1] * 1e3);
  if (repeat > 1)
    os << " (fastest of " << repeat << ")";
  os << llvm::format("; lower + JIT %.2f s, %.2f s\n", run.compileSeconds[0],
                     run.compileSeconds[1]);
}

static void printJson(const Run &run, int status) {
  llvm::json::OStream j(llvm::outs(), 2);
  auto number = [](double v) -> llvm::json::Value {
    if (std::isfinite(v))
      return v;
    return nullptr;
  };
  j.object([&] {
    j.attribute("file", inputFilename.getValue());
    j.attribute("func", run.funcName);
    j.attribute("pipeline", run.pipeline);
    j.attribute("micro_batches", microBatches.getValue());
    j.attribute("seed",
                static_cast<int64_t>(run.seeds.empty() ? seed.getValue()
                                                       : run.seeds.front()));
    j.attributeArray("seeds", [&] {
      for (uint64_t s : run.seeds)
        j.value(static_cast<int64_t>(s));
    });
    if (run.batch >= 0)
      j.attribute("batch", run.batch);
    j.attribute("dynamic_batch", run.dynamicBatch);
    if (!run.libraries[0].empty())
      j.attribute("reference_library", run.libraries[0]);
    if (!run.libraries[1].empty())
      j.attribute("rewritten_library", run.libraries[1]);
    bool pass =
        status == 0 && llvm::all_of(run.comparisons, [](const Comparison &c) {
          return c.status == "PASS";
        });
    j.attribute("pass", pass);
    j.attribute("changed", run.changed);
    if (!run.error.empty())
      j.attribute("error", run.error);
    j.attributeObject("time", [&] {
      j.attribute("reference_run_s", run.runSeconds[0]);
      j.attribute("rewritten_run_s", run.runSeconds[1]);
      j.attribute("reference_compile_s", run.compileSeconds[0]);
      j.attribute("rewritten_compile_s", run.compileSeconds[1]);
      j.attribute("repeat", static_cast<int64_t>(repeat.getValue()));
    });
    j.attributeArray("results", [&] {
      for (const Comparison &c : run.comparisons)
        j.object([&] {
          j.attribute("index", c.index);
          j.attribute("type", c.type);
          j.attribute("max_abs_err", number(c.maxAbs));
          j.attribute("max_rel_err", number(c.maxRel));
          j.attribute("max_abs_ref", number(c.maxRef));
          if (c.isFloat)
            j.attribute("tolerance", number(c.tolerance));
          else
            j.attribute("mismatches", c.mismatches);
          if (c.worst >= 0)
            j.attribute("worst_index", formatIndex(c.worst, c.shape));
          j.attribute("status", c.status);
          j.attribute("seed", static_cast<int64_t>(c.seed));
          if (!c.note.empty())
            j.attribute("note", c.note);
        });
    });
  });
  llvm::outs() << "\n";
}

/// Parses, rewrites, compiles, runs and compares; prints the report. Returns
/// the exit status.
static int runVerifier() {
  setPhase("parsing the input");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  ga::registerAllGADialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the op by location; whole-op dumps are noise here.
  context.printOpOnDiagnostic(false);

  std::string errorMessage;
  auto file = openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << "ga-verify: error: " << errorMessage << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Refusals go to stderr; in JSON mode the document says so too.
  Run run;
  int status = verify(context, sourceMgr, run);
  if (jsonOutput) {
    printJson(run, status);
  } else if (status == 0) {
    printTable(run);
  }
  if (status)
    return status;
  return llvm::all_of(run.comparisons,
                      [](const Comparison &c) { return c.status == "PASS"; })
             ? 0
             : 1;
}

/// Runs the verifier in a child process and reports a crash of the child
/// (in the pipeline under test, say) as an error naming the phase.
static int superviseVerifier() {
  int fds[2];
  if (pipe(fds) != 0)
    return runVerifier();
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0)
    return runVerifier();
  if (pid == 0) {
    close(fds[0]);
    phaseFd = fds[1];
    int status = runVerifier();
    llvm::outs().flush();
    llvm::errs().flush();
    _exit(status);
  }
  close(fds[1]);
  std::string phases = drainPipe(fds[0]);
  int status = waitForChild(pid);
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  StringRef phase = StringRef(phases).rtrim('\n').rsplit('\n').second;
  if (phase.empty())
    phase = StringRef(phases).rtrim('\n');
  Run run;
  run.error = llvm::formatv("crashed ({0}) while {1}: a bug in the code of "
                            "that phase (see the stack dump above)",
                            strsignal(WTERMSIG(status)), phase)
                  .str();
  llvm::errs() << "ga-verify: error: " << run.error << "\n";
  if (jsonOutput)
    printJson(run, 1);
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  registerAllPasses();
  ga::registerAllGAPasses();
  ga::registerAllGAPipelines();

  cl::HideUnrelatedOptions(verifyCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "ga-verify: run a training step and its gradient-accumulation rewrite "
      "on the same seeded inputs and compare every result\n\n"
      "Exit status: 0 if every result matches, 1 otherwise (a mismatch, or "
      "a step that cannot be verified: the message says which).\n");

  // Fork before the MLIRContext exists (and with it, its thread pool).
  return noFork ? runVerifier() : superviseVerifier();
}
