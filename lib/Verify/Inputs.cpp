//===- Inputs.cpp - the step's signature and its seeded inputs ------------===//

#include "ga/Verify/Inputs.h"

#include "ga/IR/GADialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace mlir::ga::verify;
using mlir::ga::GADialect;

DataMode mlir::ga::verify::dataMode(uint64_t s) {
  return s % 3 == 0 ? DataMode::Centered
                    : (s % 3 == 1 ? DataMode::High : DataMode::Low);
}
StringRef mlir::ga::verify::describeDataMode(DataMode m) {
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

llvm::Expected<Slot> mlir::ga::verify::describeSlot(Type type, StringRef what,
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

llvm::Expected<func::FuncOp> mlir::ga::verify::findStep(ModuleOp module,
                                                        StringRef funcName) {
  if (!funcName.empty()) {
    auto fn = module.lookupSymbol<func::FuncOp>(funcName);
    if (!fn)
      return llvm::createStringError("no func.func named @" + funcName.str() +
                                     " in the input");
    if (fn.isExternal())
      return llvm::createStringError("@" + funcName.str() +
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
      if (fn.getArgAttr(i, GADialect::getBatchAttrName())) {
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

llvm::Expected<std::pair<double, double>>
mlir::ga::verify::parseRangeOption(StringRef text) {
  auto [loText, hiText] = text.split(':');
  double lo, hi;
  if (loText.trim().getAsDouble(lo) || hiText.trim().getAsDouble(hi) ||
      !(lo < hi))
    return llvm::createStringError("--int-range must be lo:hi with lo < hi, "
                                   "got '" +
                                   text + "'");
  return std::make_pair(lo, hi);
}

InitSpec mlir::ga::verify::getInitSpec(func::FuncOp fn, unsigned i,
                                       const Slot &slot,
                                       std::pair<double, double> intDefault,
                                       bool intRangeGiven) {
  InitSpec spec;
  if (auto range =
          fn.getArgAttrOfType<ArrayAttr>(i, GADialect::getRangeAttrName())) {
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
  if (auto init =
          fn.getArgAttrOfType<StringAttr>(i, GADialect::getInitAttrName())) {
    spec.kind = init.getValue().str();
    return spec;
  }
  if (spec.hasRange) {
    spec.kind = "uniform";
    return spec;
  }
  bool perSample =
      static_cast<bool>(fn.getArgAttr(i, GADialect::getBatchAttrName()));
  if (slot.kind == ElemKind::I1) {
    spec.kind = "mask";
    spec.variesWithSeed = perSample;
    spec.flag = slot.dims.empty();
    return spec;
  }
  if (!isFloatKind(slot.kind)) {
    spec.kind = "uniform";
    if (slot.dims.empty() && !intRangeGiven) {
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

void mlir::ga::verify::fillArray(HostArray &a, const InitSpec &spec,
                                 RandomStream &rng, uint64_t setSeed) {
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

void mlir::ga::verify::summarizeInput(unsigned i, const Slot &slot,
                                      const InitSpec &spec,
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

llvm::Expected<std::pair<double, double>>
mlir::ga::verify::defaultIntRange(func::FuncOp step, ArrayRef<Slot> args,
                                  StringRef intRange) {
  if (!intRange.empty())
    return parseRangeOption(intRange);
  int64_t k = std::numeric_limits<int64_t>::max();
  for (auto [i, slot] : llvm::enumerate(args)) {
    if (!isFloatKind(slot.kind))
      continue;
    auto batchDim =
        step.getArgAttrOfType<IntegerAttr>(i, GADialect::getBatchAttrName());
    for (auto [d, size] : llvm::enumerate(slot.dims))
      if (!ShapedType::isDynamic(size) && size >= 2 &&
          (!batchDim || batchDim.getInt() != (int64_t)d))
        k = std::min(k, size);
  }
  if (k != std::numeric_limits<int64_t>::max())
    return std::make_pair(0.0, static_cast<double>(k));
  return std::make_pair(0.0, 2.0);
}

llvm::Expected<StepInputs>
mlir::ga::verify::describeInputs(func::FuncOp step, StringRef intRange) {
  StepInputs inputs;
  for (auto [i, t] : llvm::enumerate(step.getArgumentTypes())) {
    auto slot = describeSlot(t, "argument", i);
    if (!slot)
      return slot.takeError();
    inputs.args.push_back(*slot);
  }
  auto intDefault = defaultIntRange(step, inputs.args, intRange);
  if (!intDefault)
    return intDefault.takeError();
  for (auto [i, slot] : llvm::enumerate(inputs.args))
    inputs.specs.push_back(
        getInitSpec(step, i, slot, *intDefault, !intRange.empty()));
  return inputs;
}

std::vector<HostArray>
mlir::ga::verify::makeInputs(ArrayRef<Slot> args, ArrayRef<InitSpec> specs,
                             uint64_t setSeed, int64_t dynSize, bool dump) {
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
    if (dump) {
      llvm::errs() << "seed " << setSeed << ": ";
      summarizeInput(i, slot, spec, a);
    }
    inputs.push_back(std::move(a));
  }
  return inputs;
}
