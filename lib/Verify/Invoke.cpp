//===- Invoke.cpp - the entry wrapper and its descriptors -----------------===//
//
// The ABI between ga-verify and a compiled step (see Runner.h): the entry
// wrapper added to the module, the memref descriptors built by hand for the
// inputs, and the results read back through their descriptors.
//
//===----------------------------------------------------------------------===//

#include "ga/Verify/Runner.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::ga::verify;

void mlir::ga::verify::addEntryWrapper(ModuleOp module, func::FuncOp step) {
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

namespace {
/// sizes[rank], strides[rank] (all 8-byte words).
struct Descriptor {
  std::vector<int64_t> words;
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

llvm::Expected<std::vector<HostArray>>
mlir::ga::verify::deserializeResults(StringRef data, ArrayRef<Slot> results,
                                     double &seconds, const Compiled &compiled,
                                     StringRef which) {
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

std::string mlir::ga::verify::invokeEntry(Compiled &compiled,
                                          const std::vector<HostArray> &inputs,
                                          ArrayRef<Slot> results,
                                          unsigned repeat) {
  double best = std::numeric_limits<double>::infinity();
  size_t resultWords = 0;
  for (const Slot &s : results)
    resultWords += 3 + 2 * s.dims.size();
  std::vector<int64_t> resultStorage(resultWords, 0);
  for (unsigned r = 0, e = std::max(1u, repeat); r < e; ++r) {
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
