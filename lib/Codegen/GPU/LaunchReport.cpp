//===- LaunchReport.cpp - the launch structure of a GPU step as JSON ------===//
//
// See LaunchReport.h. Everything is read from ops and types: a buffer is
// named by its SSA name as the printer would spell it (an AsmState over the
// module), so that a report's names match the printed IR, but nothing here
// parses text except the PTX of a `gpu.binary`, which is an assembly string
// whose kernels are named by the `gpu.launch_func` ops that launch them.
//
//===----------------------------------------------------------------------===//

#include "LaunchReport.h"

#include "ga/IR/GALibraryOps.h"
#include "ga/Utils/IRUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AsmState.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::ga;

namespace {
/// The host side of the module as the report walks it.
class LaunchWalker {
public:
  explicit LaunchWalker(ModuleOp module) : module(module), state(module) {}
  void write(llvm::json::OStream &json);

private:
  std::string nameOf(Value value);
  bool isLoop(Operation *op);
  std::optional<int64_t> outermostLoop(Operation *op);
  void writeKernels(llvm::json::OStream &json);
  void writeHost(llvm::json::OStream &json);
  void writeLaunch(llvm::json::OStream &json, gpu::LaunchFuncOp launch);
  void writeProduct(llvm::json::OStream &json, BlasMatmulOp product);
  void writePtx(llvm::json::OStream &json);

  ModuleOp module;
  AsmState state;
  llvm::DenseMap<Operation *, int64_t> loopIds;
  SmallVector<Operation *> loops; // in program order
  llvm::SmallPtrSet<Operation *, 4> capturedLoops;
  int64_t products = 0;
};
} // namespace

std::string LaunchWalker::nameOf(Value value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  value.printAsOperand(os, state);
  return s;
}

/// A micro-batch loop: a host `scf.for`, or a `ga.graph_capture` region (the
/// body of a captured loop, recorded once and replayed per micro-batch). The
/// `scf.for` that replays a graph launches nothing else and is not one.
bool LaunchWalker::isLoop(Operation *op) {
  if (isa<GraphCaptureOp>(op))
    return true;
  auto loop = dyn_cast<scf::ForOp>(op);
  if (!loop)
    return false;
  bool replays = false;
  loop.walk([&](GraphLaunchOp) { replays = true; });
  return !replays;
}

/// The id of the outermost micro-batch loop around `op`, if any.
std::optional<int64_t> LaunchWalker::outermostLoop(Operation *op) {
  std::optional<int64_t> id;
  for (Operation *p = op->getParentOp(); p && !isa<ModuleOp>(p);
       p = p->getParentOp())
    if (auto it = loopIds.find(p); it != loopIds.end())
      id = it->second;
  return id;
}

static std::optional<int64_t> bytesOf(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() ||
      !memref.getElementType().isIntOrIndexOrFloat())
    return std::nullopt;
  unsigned bits =
      memref.getElementType().isIndex() ? 64 : memref.getElementTypeBitWidth();
  return memref.getNumElements() * llvm::divideCeil(bits, 8);
}

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

static void writeOptional(llvm::json::OStream &json, std::optional<int64_t> v) {
  if (v)
    json.value(*v);
  else
    json.value(nullptr);
}

/// Per kernel: its parameters, and for each one it loads from or stores to,
/// which it does first in program order (a fused row kernel writes a buffer
/// and reads it back).
void LaunchWalker::writeKernels(llvm::json::OStream &json) {
  json.attributeBegin("kernels");
  json.objectBegin();
  module.walk([&](gpu::GPUFuncOp func) {
    if (!func.isKernel())
      return;
    Block &entry = func.getBody().front();
    llvm::MapVector<unsigned, std::pair<bool, bool>> access; // read, written
    llvm::DenseMap<unsigned, StringRef> first;
    func.walk([&](Operation *op) {
      Value memref;
      bool store = false;
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        memref = load.getMemRef();
      } else if (auto st = dyn_cast<memref::StoreOp>(op)) {
        memref = st.getMemRef();
        store = true;
      }
      auto arg = dyn_cast_or_null<BlockArgument>(memref);
      if (!arg || arg.getOwner() != &entry)
        return;
      auto &[read, written] = access[arg.getArgNumber()];
      (store ? written : read) = true;
      first.try_emplace(arg.getArgNumber(), store ? "write" : "read");
    });
    json.attributeBegin(func.getName());
    json.object([&] {
      json.attribute("params", static_cast<int64_t>(entry.getNumArguments()));
      json.attributeArray("accesses", [&] {
        for (auto &[index, rw] : access)
          json.object([&] {
            json.attribute("param", static_cast<int64_t>(index));
            json.attribute("read", rw.first);
            json.attribute("written", rw.second);
            json.attribute("first", first.lookup(index));
          });
      });
    });
    json.attributeEnd();
  });
  json.objectEnd();
  json.attributeEnd();
}

void LaunchWalker::writeLaunch(llvm::json::OStream &json,
                               gpu::LaunchFuncOp launch) {
  auto dims = [&](gpu::KernelDim3 d) {
    json.array([&] {
      for (Value v : {d.x, d.y, d.z})
        writeOptional(json, getConstantIntValue(v));
    });
  };
  json.object([&] {
    json.attribute("kernel", launch.getKernelName().getValue());
    json.attribute("module", launch.getKernelModuleName().getValue());
    json.attributeBegin("grid");
    dims(launch.getGridSizeOperandValues());
    json.attributeEnd();
    json.attributeBegin("block");
    dims(launch.getBlockSizeOperandValues());
    json.attributeEnd();
    json.attributeArray("args", [&] {
      for (Value v : launch.getKernelOperands())
        json.value(nameOf(getViewRoot(v)));
    });
    json.attributeBegin("loop");
    writeOptional(json, outermostLoop(launch));
    json.attributeEnd();
  });
}

/// A library product: out is [batch x] M x N, lhs [batch x] M x K (K x M
/// with transpose_lhs); beta is 1 with {accumulate}.
void LaunchWalker::writeProduct(llvm::json::OStream &json,
                                BlasMatmulOp product) {
  MemRefType lhs = product.getLhs().getType();
  MemRefType rhs = product.getRhs().getType();
  MemRefType out = product.getOut().getType();
  int64_t rank = out.getRank();
  auto dim = [](int64_t d) -> std::optional<int64_t> {
    if (ShapedType::isDynamic(d))
      return std::nullopt;
    return d;
  };
  json.object([&] {
    json.attribute("kernel", "blas_matmul#" + std::to_string(products++));
    json.attribute("library", true);
    json.attribute("beta", product.getAccumulate() ? 1.0 : 0.0);
    json.attributeObject("product", [&] {
      json.attribute("batch", product.isBatched() ? out.getDimSize(0) : 1);
      json.attributeBegin("m");
      writeOptional(json, dim(out.getDimSize(rank - 2)));
      json.attributeEnd();
      json.attributeBegin("n");
      writeOptional(json, dim(out.getDimSize(rank - 1)));
      json.attributeEnd();
      json.attributeBegin("k");
      writeOptional(
          json,
          dim(lhs.getDimSize(product.getTransposeLhs() ? rank - 2 : rank - 1)));
      json.attributeEnd();
      json.attribute("types", typeString(lhs.getElementType()) + " x " +
                                  typeString(rhs.getElementType()) + " -> " +
                                  typeString(out.getElementType()));
      json.attribute("bias", static_cast<bool>(product.getBias()));
    });
    json.attributeObject("buffers", [&] {
      json.attribute("a", nameOf(getViewRoot(product.getLhs())));
      json.attribute("b", nameOf(getViewRoot(product.getRhs())));
      json.attribute("c", nameOf(getViewRoot(product.getOut())));
    });
    json.attributeBegin("loop");
    writeOptional(json, outermostLoop(product));
    json.attributeEnd();
  });
}

/// The host functions (outside the gpu.modules), in program order.
void LaunchWalker::writeHost(llvm::json::OStream &json) {
  SmallVector<Operation *> allocs, launches, syncs;
  int64_t memcpyInLoop = 0;
  for (auto func : module.getOps<FunctionOpInterface>())
    func->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isLoop(op)) {
        int64_t id = static_cast<int64_t>(loopIds.size()) + 1;
        loopIds[op] = id;
        loops.push_back(op);
        if (isa<GraphCaptureOp>(op))
          capturedLoops.insert(op);
      }
      if (isa<gpu::AllocOp>(op))
        allocs.push_back(op);
      else if (isa<gpu::LaunchFuncOp, BlasMatmulOp>(op))
        launches.push_back(op);
      else if (isa<StreamSynchronizeOp>(op))
        syncs.push_back(op);
      else if (isa<gpu::MemcpyOp>(op) && outermostLoop(op))
        ++memcpyInLoop;
    });
  json.attributeObject("buffers", [&] {
    for (Operation *op : allocs) {
      Value memref = op->getResult(0);
      json.attributeObject(nameOf(memref), [&] {
        json.attribute("type", typeString(memref.getType()));
        json.attributeBegin("bytes");
        writeOptional(json, bytesOf(memref.getType()));
        json.attributeEnd();
        json.attributeBegin("loop");
        writeOptional(json, outermostLoop(op));
        json.attributeEnd();
      });
    }
  });
  json.attributeArray("launches", [&] {
    for (Operation *op : launches) {
      if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
        writeLaunch(json, launch);
      else
        writeProduct(json, cast<BlasMatmulOp>(op));
    }
  });
  json.attributeArray("loops", [&] {
    for (Operation *op : loops) {
      bool outermost = !outermostLoop(op);
      json.object([&] {
        json.attribute("id", loopIds.lookup(op));
        json.attribute("captured", capturedLoops.contains(op));
        json.attribute("outermost", outermost);
      });
    }
  });
  json.attribute("memcpy_in_loop", memcpyInLoop);
  json.attributeArray("host_syncs", [&] {
    for (Operation *op : syncs)
      writeOptional(json, outermostLoop(op));
  });
}

/// Per PTX line of a kernel's body: whether it is an instruction (a
/// statement ending in `;`, not a directive, label or brace), and its class.
static void countPtxLine(StringRef line, llvm::StringMap<int64_t> &counts) {
  line = line.trim();
  if (line.empty() || line.starts_with(".") || line.starts_with("//") ||
      line.starts_with("{") || line.starts_with("}") || line.ends_with(":") ||
      !line.ends_with(";"))
    return;
  ++counts["instructions"];
  if (line.starts_with("@")) // a predicate: @%p1 or @!%p1
    line =
        line.drop_until([](char c) { return c == ' ' || c == '\t'; }).ltrim();
  StringRef mnemonic =
      line.take_until([](char c) { return c == ' ' || c == '\t' || c == ';'; });
  for (StringRef cls : {"ld.global", "st.global", "ld.shared", "st.shared"})
    if (mnemonic.starts_with(cls))
      ++counts[cls];
  if (mnemonic.starts_with("bar."))
    ++counts["bar"];
  // Floating-point add/sub/mul/fma: op[.rounding][.ftz].f32|.f64.
  SmallVector<StringRef> parts;
  mnemonic.split(parts, '.');
  if (parts.size() < 2 ||
      !llvm::is_contained({"fma", "mad", "mul", "add", "sub"}, parts[0]))
    return;
  size_t i = 1;
  if (i < parts.size() && parts[i].size() == 2 && parts[i][0] == 'r' &&
      StringRef("nmpz").contains(parts[i][1]))
    ++i;
  if (i < parts.size() && parts[i] == "ftz")
    ++i;
  if (i < parts.size() &&
      (parts[i].starts_with("f32") || parts[i].starts_with("f64")))
    ++counts["fp"];
}

/// The instruction counts of kernel `name` in `ptx`: the lines from its
/// `.entry name(` to the closing brace of its body, or nullopt when the PTX
/// has no such entry.
static std::optional<llvm::StringMap<int64_t>> countPtx(StringRef ptx,
                                                        StringRef name) {
  size_t at = ptx.find((".entry " + name + "(").str());
  if (at == StringRef::npos)
    return std::nullopt;
  llvm::StringMap<int64_t> counts;
  for (StringRef cls : {"instructions", "ld.global", "st.global", "ld.shared",
                        "st.shared", "fp", "bar"})
    counts[cls] = 0;
  StringRef body = ptx.drop_front(at);
  body = body.take_front(body.find("\n}")); // the entry's closing brace
  SmallVector<StringRef> lines;
  body.split(lines, '\n');
  for (StringRef line : llvm::drop_begin(lines))
    countPtxLine(line, counts);
  return counts;
}

/// The PTX of each gpu.binary with an assembly object, with the counts of the
/// kernels that the host launches from it.
void LaunchWalker::writePtx(llvm::json::OStream &json) {
  llvm::StringMap<llvm::SetVector<StringRef>> kernels;
  module.walk([&](gpu::LaunchFuncOp launch) {
    kernels[launch.getKernelModuleName().getValue()].insert(
        launch.getKernelName().getValue());
  });
  json.attributeArray("ptx", [&] {
    module.walk([&](gpu::BinaryOp binary) {
      for (auto object : binary.getObjects().getAsRange<gpu::ObjectAttr>()) {
        if (object.getFormat() != gpu::CompilationTarget::Assembly)
          continue;
        StringRef ptx = object.getObject().getValue();
        json.object([&] {
          json.attribute("module", binary.getName());
          json.attribute("assembly", ptx);
          json.attributeObject("kernels", [&] {
            for (StringRef name : kernels.lookup(binary.getName())) {
              std::optional<llvm::StringMap<int64_t>> counts =
                  countPtx(ptx, name);
              if (!counts)
                continue;
              json.attributeObject(name, [&] {
                for (StringRef cls : {"instructions", "ld.global", "st.global",
                                      "ld.shared", "st.shared", "fp", "bar"})
                  json.attribute(cls, counts->lookup(cls));
              });
            }
          });
        });
      }
    });
  });
}

/// Matrix products and convolutions among the module's linalg named ops (a
/// step before any rewrite).
static std::pair<int64_t, int64_t> countLinalgProducts(ModuleOp module) {
  static const llvm::StringSet<> productNames = {
      "linalg.matmul",       "linalg.batch_matmul", "linalg.matvec",
      "linalg.batch_matvec", "linalg.vecmat",       "linalg.batch_vecmat",
      "linalg.dot"};
  int64_t products = 0, convolutions = 0;
  module.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (productNames.contains(name))
      ++products;
    else if (name.starts_with("linalg.conv_") ||
             name.starts_with("linalg.depthwise_conv_"))
      ++convolutions;
  });
  return {products, convolutions};
}

void LaunchWalker::write(llvm::json::OStream &json) {
  auto [linalgProducts, convolutions] = countLinalgProducts(module);
  json.attribute("products", linalgProducts);
  json.attribute("convolutions", convolutions);
  writeKernels(json);
  writeHost(json);
  writePtx(json);
}

void mlir::ga::writeLaunchReport(ModuleOp module, llvm::json::OStream &json) {
  LaunchWalker(module).write(json);
}
