//===- GARuntimeABI.h - entry points of compiled steps ----------*- C++ -*-===//
//
// The names and operand positions of the runtime functions that the GPU
// passes emit calls to and that lib/Runtime implements, in one place: the
// stream, event and graph functions of lib/Runtime/CUDA/GACudaRuntime.h
// (MLIR's `mgpu*` ABI and ours), the cuBLASLt products of
// lib/Runtime/CUDA/GACublasLt.h and the NCCL collectives of
// lib/Runtime/NCCL/GANcclRuntime.h. Plain C++17 without LLVM, so that the
// runtimes check their own declarations against it (static_assert on the
// operand types, `checkCublasLtABI` below) and the passes take their names
// from it (the stream passes of lib/Codegen/GPU, LowerLibraryOps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GA_RUNTIME_GARUNTIMEABI_H
#define GA_RUNTIME_GARUNTIMEABI_H

#include <cstddef>
#include <tuple>
#include <type_traits>

namespace ga_abi {

//===----------------------------------------------------------------------===//
// Streams and events (GACudaRuntime.h)
//===----------------------------------------------------------------------===//

inline constexpr char kStreamCreate[] = "mgpuStreamCreate";
inline constexpr char kStreamSynchronize[] = "mgpuStreamSynchronize";
inline constexpr char kStreamDestroy[] = "mgpuStreamDestroy";
inline constexpr char kStreamWaitEvent[] = "mgpuStreamWaitEvent";
inline constexpr char kEventCreate[] = "mgpuEventCreate";
inline constexpr char kEventRecord[] = "mgpuEventRecord";
inline constexpr char kEventDestroy[] = "mgpuEventDestroy";
/// Orders the steps a thread calls after a stream of the caller's.
inline constexpr char kSetCallerStream[] = "gaCudaSetCallerStream";

//===----------------------------------------------------------------------===//
// CUDA graphs (GACudaRuntime.h): (stream) begin, (stream) -> graph end,
// (graph, stream) launch, (graph) destroy.
//===----------------------------------------------------------------------===//

inline constexpr char kGraphBeginCapture[] = "mgpuGraphBeginCapture";
inline constexpr char kGraphEndCapture[] = "mgpuGraphEndCapture";
inline constexpr char kGraphLaunch[] = "mgpuGraphLaunch";
inline constexpr char kGraphDestroy[] = "mgpuGraphDestroy";

//===----------------------------------------------------------------------===//
// cuBLASLt products (GACublasLt.h), which --ga-lower-library-ops emits from
// `ga.blas_matmul` ops with the stream as operand 0 (the op's async token, or
// null). Operand positions below count without the stream.
//===----------------------------------------------------------------------===//

inline constexpr char kCublasLtMatmul[] = "gaCublasLtMatmul";
inline constexpr char kCublasLtMatmulStridedBatched[] =
    "gaCublasLtMatmulStridedBatched";
/// transA, transB, m, n, k, A, lda, B, ldb, C, ...: C is operand 9.
inline constexpr unsigned kCublasLtMatmulOutput = 9;
/// ..., A, lda, strideA, B, ldb, strideB, C, ...: C is operand 11.
inline constexpr unsigned kCublasLtMatmulStridedBatchedOutput = 11;
/// Operands without the stream.
inline constexpr unsigned kCublasLtMatmulArity = 16;
inline constexpr unsigned kCublasLtMatmulStridedBatchedArity = 19;
/// Bytes of the one device workspace per process that the runtime hands
/// cuBLASLt (gaCublasLtWorkspaceSize): what the static memory report of a
/// GPU step counts as its library workspace (lib/Memory/StepMemory.cpp).
inline constexpr std::size_t kCublasLtWorkspaceBytes = std::size_t(32) << 20;

//===----------------------------------------------------------------------===//
// NCCL (GANcclRuntime.h): gaNcclAllReduce(stream, buffer, count, dtype, op)
// and the sharded collectives; the stream is operand 0 already (null where
// the caller has none).
//===----------------------------------------------------------------------===//

inline constexpr char kNcclAllReduce[] = "gaNcclAllReduce";
inline constexpr unsigned kNcclAllReduceStream = 0;
inline constexpr unsigned kNcclAllReduceBuffer = 1;

/// gaNcclReduceScatter(stream, input, output, count, dtype, op) and
/// gaNcclAllGather(stream, input, output, count, dtype): `count` elements in
/// one rank's part (the output of the reduce-scatter, the input of the
/// all-gather), as ncclReduceScatter / ncclAllGather take it.
inline constexpr char kNcclReduceScatter[] = "gaNcclReduceScatter";
inline constexpr char kNcclAllGather[] = "gaNcclAllGather";
inline constexpr unsigned kNcclShardedStream = 0;
inline constexpr unsigned kNcclShardedInput = 1;
inline constexpr unsigned kNcclShardedOutput = 2;

//===----------------------------------------------------------------------===//
// Checks of a runtime's declarations against the positions above.
//===----------------------------------------------------------------------===//

template <typename F> struct FunctionTraits;
template <typename R, typename... Args> struct FunctionTraits<R (*)(Args...)> {
  static constexpr std::size_t arity = sizeof...(Args);
  template <std::size_t I>
  using Arg = std::tuple_element_t<I, std::tuple<Args...>>;
};

/// True when `F` (a function pointer type) takes a stream, then `arity`
/// operands, of which operand `output` (counted without the stream) is the
/// one non-const pointer: the buffer the product writes.
template <typename F, unsigned arity, unsigned output>
constexpr bool checkCublasLtABI() {
  using T = FunctionTraits<F>;
  if (T::arity != arity + 1)
    return false;
  using Out = typename T::template Arg<output + 1>;
  return std::is_same_v<Out, void *>;
}

} // namespace ga_abi

#endif // GA_RUNTIME_GARUNTIMEABI_H
