//===- Gemm.h - linalg contractions as GEMM calls ---------------*- C++ -*-===//
//
// The matcher that the library lowerings of matrix products share (CBLAS on
// the CPU, cuBLASLt on the GPU): which linalg contractions on buffers a
// row-major GEMM `C = alpha op(A) op(B) + beta C` computes, with which operand
// order and transposes, and the pointer and leading dimension of each matrix.
//
//===----------------------------------------------------------------------===//

#ifndef GA_UTILS_GEMM_H
#define GA_UTILS_GEMM_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::ga {

/// The unit attribute by which --ga-isolate-library-products marks, on
/// tensors, a product that a library lowering will take; element-wise fusion
/// leaves such ops whole.
inline constexpr llvm::StringLiteral kLibraryProductAttrName =
    "ga.library_product";

/// A linalg contraction on buffers as a row-major GEMM: C(M, N) +=
/// op(A)(M, K) op(B)(K, N), where `lhs` is the input that holds C's row
/// dimension M (BLAS's A) and `rhs` the other (BLAS's B). A transposed
/// operand is stored as [K][M] (lhs) or [N][K] (rhs). A batched GEMM has one
/// more dimension, outermost in all three operands: one independent product
/// per batch index (a strided-batched GEMM).
struct GemmOperands {
  /// A matrix-vector product (no N dimension: B is a vector of K and C one
  /// of M, a GEMM with N = 1) or a vector-matrix product (no M dimension: A
  /// is a vector of K and C one of N, M = 1). Its vectors are 1-d memrefs
  /// until viewVectorsAsMatrices gives them their unit dimension.
  enum class Vector { None, NoN, NoM };
  Value lhs, rhs, out;
  bool transposeLhs = false, transposeRhs = false;
  bool batched = false;
  Vector vector = Vector::None;
};

/// Matches a linalg op with two inputs and one init that is a contraction
/// with a multiply-add body (linalg::isaContractionOpInterface) with exactly
/// one M, one N and one K dimension and at most one batch dimension, which
/// must then be the outermost dimension of all three operands; the operands
/// are 2-d (3-d when batched) memrefs with contiguous rows (unit inner
/// stride) indexed by plain loop dimensions. Element types are the caller's
/// to check, and so is whether it takes batched matches. With
/// `allowVectors`, a product without an N (or without an M) dimension also
/// matches, unbatched, its vectors being 1-d memrefs with unit stride.
FailureOr<GemmOperands> matchGemm(linalg::LinalgOp op,
                                  bool allowVectors = false);

/// Whether a contraction with indexing maps `maps` (the two inputs, then the
/// init) has the layout that matchGemm takes: one M, N and K dimension, at
/// most one batch dimension (outermost in every operand), each operand's
/// matrix dimensions its last two results (in either order: a transposed
/// operand), or, with `allowVectors`, a matrix-vector product. Strides are
/// not looked at: on tensors this says which products the library lowerings
/// will take once bufferized with contiguous rows.
bool hasLibraryLayout(ArrayRef<AffineMap> maps, bool allowVectors = true);

/// Whether `op` (on tensors or buffers) is a multiply-add contraction
/// (linalg::isaContractionOpInterface) with two inputs, one init and a
/// library layout (hasLibraryLayout).
bool isLibraryProduct(linalg::LinalgOp op, bool allowVectors = true);

/// Replaces the vectors of a matrix-vector (or vector-matrix) match by 2-d
/// views with a unit dimension (memref.expand_shape: B as K x 1 and C as
/// M x 1, or A as 1 x K and C as 1 x N), so that buildGemmArguments
/// describes a GEMM with N = 1 (or M = 1). Nothing for a plain GEMM.
void viewVectorsAsMatrices(OpBuilder &b, Location loc, GemmOperands &gemm);

/// A 2-d memref (or a 3-d one: a batch of matrices) as a BLAS matrix
/// argument.
struct MatrixDescriptor {
  /// The address of its first element (`!llvm.ptr`).
  Value pointer;
  /// The leading dimension (the stride of its rows, at least max(1, number of
  /// columns): BLAS's requirement, which only a single-row view could
  /// violate), of index type.
  Value leadingDim;
  /// Elements from one matrix of the batch to the next (0 for a 2-d memref),
  /// of index type.
  Value batchStride;
};

/// The address of the first element of the memref `buffer` (its aligned
/// pointer plus its offset), as an `!llvm.ptr`.
Value getBufferPointer(OpBuilder &b, Location loc, Value buffer);

/// The pointer, leading dimension and batch stride of the 2-d or 3-d memref
/// `matrix` with contiguous rows (from memref.extract_strided_metadata).
MatrixDescriptor describeMatrix(OpBuilder &b, Location loc, Value matrix);

/// What a GEMM call needs of `gemm`, as index values: each matrix's pointer
/// and leading dimension, and the sizes M, N, K and the batch count (1 when
/// not batched).
struct GemmArguments {
  MatrixDescriptor lhs, rhs, out;
  Value m, n, k, batch;
};

/// Builds the GemmArguments of `gemm` at the builder's insertion point.
GemmArguments buildGemmArguments(OpBuilder &b, Location loc,
                                 const GemmOperands &gemm);

/// The zero fill of the GEMM output `c` that is the last write of `c` before
/// `op` (so the call can take beta = 0 and the fill can go): null if there is
/// none. `isZeroFill` says which ops are zero fills of their init. Either the
/// fill precedes `op` with nothing but side-effect-free ops in between, or
/// `c` is a buffer of its own (`isOwnBuffer`, e.g. an allocation) that
/// nothing between the fill and `op` uses, directly or through a view.
linalg::LinalgOp
findZeroFillOfOutput(linalg::LinalgOp op, Value c,
                     llvm::function_ref<bool(linalg::LinalgOp)> isZeroFill,
                     llvm::function_ref<bool(Value)> isOwnBuffer);

/// A permutation of a tensor: `result[i] = source[permute(i)]`.
struct Permutation {
  Value source;
  /// From the result's indices to the source's (both of the same rank).
  AffineMap permute;
};

/// `value` as a permutation of another tensor, if its producer only moves
/// data: a linalg op on tensors with one input and one init, all loops
/// parallel, permutation maps, and a body that yields the input unchanged
/// (`linalg.transpose`, or its generic form).
std::optional<Permutation> asPermutation(Value value);

} // namespace mlir::ga

#endif // GA_UTILS_GEMM_H
