//===- Pipelines.h - ga pass pipelines --------------------------*- C++ -*-===//
//
// Each pipeline is an options struct, a builder that adds its passes to a pass
// manager, and a registration (`--ga-accumulate`, `--ga-lower-to-cpu`).
//
//===----------------------------------------------------------------------===//

#ifndef GA_PIPELINES_PIPELINES_H
#define GA_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::ga {

/// The discardable attribute --ga-choose-micro-batches records the chosen N
/// in, on each step it configures (read back by the C API,
/// mlirGAInspectFunction).
inline constexpr llvm::StringLiteral kMicroBatchesAttrName = "ga.micro_batches";

//===----------------------------------------------------------------------===//
// --ga-accumulate
//===----------------------------------------------------------------------===//

/// Options of the whole gradient-accumulation rewrite.
struct AccumulatePipelineOptions
    : public PassPipelineOptions<AccumulatePipelineOptions> {
  PassOptions::Option<int64_t> microBatches{
      *this, "micro-batches",
      llvm::cl::desc("Number of micro-batches N (>= 1)"), llvm::cl::init(1)};
  PassOptions::ListOption<std::string> funcNames{
      *this, "func",
      llvm::cl::desc("Functions to rewrite (default: every function with "
                     "ga.batch arguments)")};
  PassOptions::ListOption<std::string> batchArgs{
      *this, "batch-args",
      llvm::cl::desc("Per-sample arguments as `index` or `index:dim`, for "
                     "input without ga.batch attributes")};
  PassOptions::Option<bool> allowGhostBatch{
      *this, "allow-ghost-batch",
      llvm::cl::desc("Accept batch-coupled statistics computed per "
                     "micro-batch (inexact; a warning)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> recomputeStatistics{
      *this, "recompute-statistics",
      llvm::cl::desc("Make batch coupling (BatchNorm) exact by computing each "
                     "coupled statistic in an earlier loop over the "
                     "micro-batches (one pass per statistic level; what "
                     "reads an earlier statistic is stored, not "
                     "recomputed)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> accumulatorType{
      *this, "accumulator-type",
      llvm::cl::desc("Float type (f32, f64) in which narrower float "
                     "reductions are accumulated"),
      llvm::cl::init("")};
  PassOptions::Option<bool> dynamicMicroBatches{
      *this, "dynamic-micro-batches",
      llvm::cl::desc("Append an index argument holding N at run time"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Fuse accumulation into the producers of partial "
                     "results"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> microBatchSize{
      *this, "micro-batch-size",
      llvm::cl::desc("Samples per micro-batch M instead of micro-batches: "
                     "N = ceil(B / M) (--ga-choose-micro-batches)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> maxMemory{
      *this, "max-memory",
      llvm::cl::desc("Memory budget (bytes, or with KiB/MiB/GiB/TiB or "
                     "kB/MB/GB/TB) instead of micro-batches: the smallest N "
                     "whose static peak after the CPU bufferization fits "
                     "(--ga-choose-micro-batches)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc(
          "Values recomputed where they are read instead of kept "
          "(--ga-rematerialize): none, pointwise or products; unset (or "
          "auto) with max-memory: chosen with N"),
      llvm::cl::init("")};
};

/// Adds the rewrite: [mark batch args], check the contract, micro-batch loop,
/// fuse accumulation, expand the remaining accumulations, clean up. With
/// `micro-batch-size` or `max-memory`, --ga-choose-micro-batches chooses N
/// for each step and runs the rest with it.
void buildAccumulatePipeline(OpPassManager &pm,
                             const AccumulatePipelineOptions &options);

/// The options of `options` that shape the rewrite itself (ghost batch,
/// statistics, fusion, accumulator type), as the text of --ga-accumulate
/// options: what the memory passes, which run the rewrite on copies of a
/// step, take.
std::string printRewriteOptions(const AccumulatePipelineOptions &options);

/// Adds the rewrite with the N of `options.microBatches` (or dynamic
/// micro-batches): what buildAccumulatePipeline adds when N is given, and
/// what --ga-choose-micro-batches runs once it has chosen N (library
/// GAPipelineStages, below the memory passes; `micro-batch-size` and
/// `max-memory` are not read).
void buildMicroBatchRewritePipeline(OpPassManager &pm,
                                    const AccumulatePipelineOptions &options);

//===----------------------------------------------------------------------===//
// --ga-lower-to-cpu (owned by the CPU path: lib/Pipelines/CPUPipeline.cpp)
//===----------------------------------------------------------------------===//

/// Options of the lowering of a tensor-level step (original or rewritten) to
/// the LLVM dialect for the host CPU.
struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run parallel loops as OpenMP worksharing loops (the "
                     "result needs libomp at run time)"),
      llvm::cl::init(false)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("OpenMP threads per parallel region (0: the runtime's "
                     "default, OMP_NUM_THREADS); with blas, a known count "
                     "also splits each large product over that many threads "
                     "(convert-linalg-to-blas parallel-blocks; run the CBLAS "
                     "on one thread per call)"),
      llvm::cl::init(0)};
  PassOptions::Option<uint64_t> minParallelWork{
      *this, "min-parallel-work",
      llvm::cl::desc("With openmp, the estimated operations below which a "
                     "parallel loop runs on one thread instead of as an "
                     "OpenMP region (ga-serialize-small-parallel-loops; 0: "
                     "every loop of more than one iteration parallel)"),
      llvm::cl::init(32768)};
  PassOptions::Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Call CBLAS cblas_sgemm/cblas_dgemm (beta = 1, so "
                     "accumulation stays fused) for f32/f64 matrix products "
                     "on unit-stride buffers; link a CBLAS (OpenBLAS, "
                     "libblas.so.3)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Emit `_mlir_ciface_<name>` wrappers (memref "
                     "descriptors by pointer) for every public function "
                     "definition"),
      llvm::cl::init(false)};
  PassOptions::Option<unsigned> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Vectorize the linalg ops that are not matrix products "
                     "with vectors of this many bits (ga-vectorize-linalg; "
                     "256: AVX2, 512: AVX-512, 128: SSE/NEON; 0: scalar "
                     "loops)"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> splitRowReductions{
      *this, "split-row-reductions",
      llvm::cl::desc("Sum row reductions (softmax, LayerNorm, cross-entropy "
                     "statistics) in vector lanes (ga-split-row-reductions), "
                     "so that the vectorizer takes them (with openmp, rows "
                     "in parallel). It reassociates the sums (lane-wise "
                     "partial sums): off for sequential sums"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Compute exp, expm1, log1p, tanh, erf and erfc on f32 "
                     "vectors by polynomial approximations "
                     "(ga-vectorize-math; at most 4 ulp, exp 1) instead of "
                     "one libm call per element, and on f32 scalars by the "
                     "same ones (one implementation per step: a recomputed "
                     "value is the kept one); off for libm's results"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse element-wise linalg ops into their single-use "
                     "producers and inline 0-d tensor operands as scalars "
                     "before bufferization (fewer loops and temporaries; the "
                     "arithmetic per element is unchanged)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> staticTemporaries{
      *this, "static-temporaries",
      llvm::cl::desc("Keep fixed-size temporaries that do not leave a "
                     "function in static storage instead of the heap "
                     "(ga-promote-buffers-to-globals): no allocation and no "
                     "page faults per call, but calls of one function must "
                     "not overlap"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> shareBuffers{
      *this, "share-buffers",
      llvm::cl::desc("Give temporaries whose live ranges do not overlap "
                     "one storage (ga-share-buffers pack=true: one buffer "
                     "for one type, byte offsets of one arena for "
                     "different sizes), after the hoisting out of loops: "
                     "what lets recomputation (--ga-rematerialize) lower "
                     "the peak"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> outParams{
      *this, "out-params",
      llvm::cl::desc("Return results through caller-allocated buffers "
                     "appended to the arguments (statically shaped results "
                     "only): the step writes them in place and allocates "
                     "nothing for them"),
      llvm::cl::init(false)};
};

/// Adds the lowering from tensors to the LLVM dialect: element-wise fusion
/// and 0-d operands inlined as scalars (fuse-elementwise), one-shot
/// bufferization across function boundaries (identity layouts), results as
/// out-parameters (out-params=1), allocations hoisted out of loops, fixed-size
/// temporaries in static storage (static-temporaries=1), buffer deallocation,
/// matrix products as CBLAS calls (blas=1; beta = 0 after a zero fill, else
/// 1), the other linalg ops tiled and vectorized (vector-width), the rest to
/// loops (OpenMP-parallel with openmp=1), then vector, scf, cf, memref, arith,
/// math and func to LLVM. The result runs under `mlir-runner`, in
/// `mlir::ExecutionEngine`, or through `mlir-translate --mlir-to-llvmir`.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const LowerToCPUOptions &options);

/// Adds the first half of buildLowerToCPUPipeline: everything up to and
/// including bufferization, out-params, hoisting and deallocation. Its output
/// (memref.alloc/dealloc on buffers, linalg on memrefs) is what the
/// static memory report (--ga-memory-report) measures.
void buildBufferizeForCPUPipeline(OpPassManager &pm,
                                  const LowerToCPUOptions &options);

/// Adds the second half of buildLowerToCPUPipeline: from the output of
/// buildBufferizeForCPUPipeline to the LLVM dialect (products as CBLAS calls,
/// vectorization, loops, LLVM).
void buildLowerBufferizedForCPUPipeline(OpPassManager &pm,
                                        const LowerToCPUOptions &options);

//===----------------------------------------------------------------------===//
// --ga-lower-to-cpu-mpi (owned by the distributed path:
// lib/Pipelines/DistributedPipeline.cpp, docs/Distributed.md)
//===----------------------------------------------------------------------===//

/// Options of the data-parallel CPU lowering: bucketing, MPI, then
/// --ga-lower-to-cpu.
struct LowerToCPUMPIOptions : public PassPipelineOptions<LowerToCPUMPIOptions> {
  PassOptions::Option<int64_t> bucketSize{
      *this, "bucket-size",
      llvm::cl::desc("Bucket size in bytes for --ga-bucket-gradients "
                     "(default 25 MiB; 0: no bucketing, one collective per "
                     "all-reduce)"),
      llvm::cl::init(25 * 1024 * 1024)};
  PassOptions::Option<std::string> implementation{
      *this, "implementation",
      llvm::cl::desc("MPI ABI: MPICH (default) or OpenMPI"),
      llvm::cl::init("MPICH")};
  PassOptions::Option<std::string> entry{
      *this, "entry",
      llvm::cl::desc("Function that initializes and finalizes MPI itself "
                     "(e.g. main under mlir-runner); default: the module "
                     "exports ga_mpi_init/ga_mpi_finalize"),
      llvm::cl::init("")};
  PassOptions::Option<bool> openmp{*this, "openmp",
                                   llvm::cl::desc("As in --ga-lower-to-cpu"),
                                   llvm::cl::init(false)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads", llvm::cl::desc("As in --ga-lower-to-cpu"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> cInterface{
      *this, "c-interface", llvm::cl::desc("As in --ga-lower-to-cpu"),
      llvm::cl::init(false)};
};

/// Adds --ga-bucket-gradients, --convert-ga-to-mpi, --ga-lower-mpi-comm-size
/// and --ga-lower-to-cpu: a rewritten step with deferred all-reduces to LLVM
/// code that calls MPI_Allreduce once per bucket.
void buildLowerToCPUMPIPipeline(OpPassManager &pm,
                                const LowerToCPUMPIOptions &options);

/// Registers --ga-lower-to-cpu-mpi.
void registerDistributedPipelines();

//===----------------------------------------------------------------------===//
// --ga-lower-to-gpu-loops and --ga-lower-to-nvvm (owned by the GPU path:
// lib/Pipelines/NVVMPipeline.cpp, docs/GPU.md)
//===----------------------------------------------------------------------===//

/// The options of the loop mapping, which both GPU pipelines take.
template <typename T> using GPUOption = ::mlir::detail::PassOptions::Option<T>;

template <typename Derived>
struct GPUMappingOptions : public PassPipelineOptions<Derived> {
  GPUOption<unsigned> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the generated kernels (a "
                     "multiple of 32, at most 1024)"),
      llvm::cl::init(256)};
  GPUOption<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse elementwise producers into their consumers "
                     "before bufferization (fewer kernels)"),
      llvm::cl::init(true)};
  GPUOption<bool> foldUnitDims{
      *this, "fold-unit-dims",
      llvm::cl::desc("With fuse-elementwise: fold the unit-extent "
                     "dimensions of generics into reshapes before fusion "
                     "(ga-fold-unit-dims), so that keepdim reductions and "
                     "their broadcasts fuse with their neighbours"),
      llvm::cl::init(true)};
  GPUOption<bool> fuseRows{
      *this, "fuse-rows",
      llvm::cl::desc("A row reduction and the ops after it that read its "
                     "result at their own row as one kernel "
                     "(ga-linalg-to-gpu-loops fuse-rows)"),
      llvm::cl::init(true)};
  GPUOption<bool> fuseSiblings{
      *this, "fuse-siblings",
      llvm::cl::desc("Independent element-wise ops and copies that follow "
                     "each other as one kernel, their thread spaces "
                     "concatenated; a fill and the copies into slices of its "
                     "buffer as one write (ga-linalg-to-gpu-loops "
                     "fuse-siblings)"),
      llvm::cl::init(true)};
  GPUOption<bool> recomputeShared{
      *this, "recompute-shared",
      llvm::cl::desc("With fuse-elementwise: fuse a cheap elementwise "
                     "producer with several users into each of them "
                     "(ga-fuse-elementwise recompute-shared)"),
      llvm::cl::init(true)};
  GPUOption<unsigned> gemmTile{
      *this, "gemm-tile",
      llvm::cl::desc("Tile of the shared-memory contraction kernels (0: "
                     "one thread per output element for every contraction)"),
      llvm::cl::init(16)};
  GPUOption<unsigned> gemmMinReduction{
      *this, "gemm-min-reduction",
      llvm::cl::desc("Tile contractions whose reduction is at least this "
                     "long (or dynamic)"),
      llvm::cl::init(64)};
  GPUOption<unsigned> splitReductionMin{
      *this, "split-reduction-min",
      llvm::cl::desc("Split reductions at least this long into few outputs "
                     "over several threads per output (0: never)"),
      llvm::cl::init(256)};
  GPUOption<unsigned> splitRowReductionMin{
      *this, "split-row-reduction-min",
      llvm::cl::desc("Split a reduction that would head a row kernel "
                     "(fuse-rows) from this length on (0: never)"),
      llvm::cl::init(4096)};
  GPUOption<unsigned> rowWarpMin{
      *this, "row-warp-min",
      llvm::cl::desc("Row kernels whose rows are at least this long (and at "
                     "least row-min-rows of them) run a warp per row, "
                     "reductions in a tree (0: one thread per row, bitwise "
                     "the unfused kernels; ga-linalg-to-gpu-loops "
                     "row-warp-min)"),
      llvm::cl::init(32)};
  GPUOption<unsigned> rowMinRows{
      *this, "row-min-rows",
      llvm::cl::desc("The fewest rows for a warp or a block per row "
                     "(ga-linalg-to-gpu-loops row-min-rows)"),
      llvm::cl::init(128)};
  GPUOption<unsigned> rowBlockMin{
      *this, "row-block-min",
      llvm::cl::desc("Row kernels whose rows are at least this long run a "
                     "block per row (0: never; ga-linalg-to-gpu-loops "
                     "row-block-min)"),
      llvm::cl::init(1024)};
  GPUOption<bool> fma{
      *this, "fma",
      llvm::cl::desc("Allow fused multiply-add in kernel arithmetic "
                     "(fastmath<contract>, like nvcc -fmad=true); off: the "
                     "kernels round every operation like the original step"),
      llvm::cl::init(false)};
  GPUOption<bool> cublas{
      *this, "cublas",
      llvm::cl::desc("Matrix products (f32, f16, bf16 inputs into f32) as "
                     "calls of gaCublasLtMatmul / "
                     "gaCublasLtMatmulStridedBatched "
                     "(libga_cublaslt_runtime.so) on the step's stream, "
                     "beta = 1 into accumulators, instead of generated "
                     "kernels (on the CPU, the loop stage runs against "
                     "libga_cublaslt_cpu.so)"),
      llvm::cl::init(true)};
  GPUOption<bool> cudaGraphs{
      *this, "cuda-graphs",
      llvm::cl::desc("Capture the body of each micro-batch loop once as a "
                     "CUDA graph and launch it per micro-batch (the loop "
                     "index in a device buffer: ga-device-iteration-index, "
                     "ga-capture-cuda-graphs)"),
      llvm::cl::init(true)};
  GPUOption<bool> libraryCalls{
      *this, "library-calls",
      llvm::cl::desc("Lower the library ops to their runtime calls "
                     "(--ga-lower-library-ops; false: leave them as ops, "
                     "graph captures and products as ga ops, the form "
                     "--ga-gpu-kernel-report reads; --ga-lower-to-nvvm "
                     "needs them lowered)"),
      llvm::cl::init(true)};
};

/// Options of the first GPU stage: bufferization and loop mapping.
struct LowerToGPULoopsOptions
    : public GPUMappingOptions<LowerToGPULoopsOptions> {
  GPUOption<bool> tensorBoundary{
      *this, "tensor-boundary",
      llvm::cl::desc("Keep each public function's tensor signature by "
                     "calling the mapped function through a wrapper (for "
                     "ga-verify)"),
      llvm::cl::init(false)};
};

/// Adds the tensor-to-mapped-loops stage: one-shot bufferization across
/// function boundaries (identity layouts, accumulators in place), then every
/// linalg op as one `scf.parallel` mapped to blocks and threads
/// (--ga-linalg-to-gpu-loops). The result still runs on the CPU.
void buildLowerToGPULoopsPipeline(OpPassManager &pm,
                                  const LowerToGPULoopsOptions &options);

/// Options of the whole GPU lowering: the mapping, then the target.
struct LowerToNVVMOptions : public GPUMappingOptions<LowerToNVVMOptions> {
  GPUOption<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture (sm_80, sm_90, ...)"),
      llvm::cl::init("sm_90")};
  GPUOption<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (+ptx80 is needed for sm_90)"),
      llvm::cl::init("+ptx80")};
  GPUOption<std::string> format{
      *this, "format",
      llvm::cl::desc("Embedded GPU code: isa (PTX text, JIT-compiled at "
                     "load), bin (cubin for `chip`), fatbin (cubin + PTX)"),
      llvm::cl::init("fatbin")};
  GPUOption<int> optLevel{
      *this, "opt-level",
      llvm::cl::desc("Optimization level of the NVVM/PTX compilation (0-3)"),
      llvm::cl::init(3)};
  GPUOption<std::string> ptxasOptions{
      *this, "ptxas-options",
      llvm::cl::desc("Extra options for ptxas (e.g. '-maxrregcount=64')"),
      llvm::cl::init("")};
  GPUOption<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Emit `_mlir_ciface_<name>` wrappers (memref "
                     "descriptors by pointer) for every public function"),
      llvm::cl::init(false)};
};

/// Adds the first two stages of buildLowerToNVVMPipeline: the mapped loops as
/// `gpu.launch_func` of kernels outlined into one `gpu.module` per function,
/// on device buffers, host code still in func/scf (the target options are
/// unused).
void buildLowerToGPUKernelsPipeline(OpPassManager &pm,
                                    const LowerToNVVMOptions &options);

/// Adds the part of buildLowerToGPUKernelsPipeline up to and including
/// --ga-place-buffers-on-device: the step bufferized as the GPU lowering
/// bufferizes it (bf16 buffers where the step computes in bf16), its
/// allocations final (`gpu.alloc`/`gpu.dealloc` of device memory, hoisted
/// out of the micro-batch loops; host `memref.alloc` only for deallocation's
/// bookkeeping), the products still `ga.blas_matmul` ops and the kernels
/// still `gpu.launch` ops. What the static memory report of a `target=cuda`
/// step (--ga-memory-report="target=cuda") measures.
void buildBufferizeForGPUPipeline(OpPassManager &pm,
                                  const LowerToNVVMOptions &options);

/// Adds the whole GPU lowering: buildLowerToGPULoopsPipeline, then the loops
/// as outlined kernels on device buffers (one GPU module per function,
/// launches on a stream inside the host micro-batch loop), then upstream's
/// gpu::buildLowerToNVVMPassPipeline (NVVM, serialization with ptxas, host
/// code to LLVM). The host code calls the mgpu* runtime (lib/Runtime/CUDA).
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const LowerToNVVMOptions &options);

/// Registers --ga-lower-to-gpu-loops, --ga-lower-to-gpu-kernels and
/// --ga-lower-to-nvvm (called by registerGAPipelines).
void registerGPUPipelines();

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

/// Registers every ga pipeline with the global pass registry.
void registerGAPipelines();

} // namespace mlir::ga

#endif // GA_PIPELINES_PIPELINES_H
