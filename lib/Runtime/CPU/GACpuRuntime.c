/*===- GACpuRuntime.c - run-time support of CPU-compiled steps ------------===*
 *
 * The one function of MLIR's libmlir_c_runner_utils.so that code lowered by
 * --ga-lower-to-cpu calls: `memrefCopy`, which `memref.copy` between buffers
 * of non-identity layout becomes (finalize-memref-to-llvm). Shipped beside
 * the libraries that ga-compile builds, so that a compiled step needs no
 * LLVM or MLIR library at run time (docs/Rationale.md, "ga-compile").
 *
 * The ABI is MLIR's: an unranked memref is {rank, pointer to a ranked
 * descriptor}, the descriptor {allocated, aligned, offset, sizes[rank],
 * strides[rank]} with sizes and strides in elements.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <string.h>

/* An unranked memref as MLIR passes it. */
typedef struct {
  int64_t rank;
  void *descriptor;
} GAUnrankedMemRef;

/* The ranked descriptor: two pointers and an offset, then `rank` sizes and
 * `rank` strides. */
typedef struct {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
} GAMemRefDescriptor;

/* Copies `src` into `dst` (same shape, any strides): the innermost
 * contiguous runs with memcpy, the rest element by element in row-major
 * order. */
void memrefCopy(int64_t elemSize, GAUnrankedMemRef *srcArg,
                GAUnrankedMemRef *dstArg) {
  int64_t rank = srcArg->rank;
  GAMemRefDescriptor *src = (GAMemRefDescriptor *)srcArg->descriptor;
  GAMemRefDescriptor *dst = (GAMemRefDescriptor *)dstArg->descriptor;
  const int64_t *sizes = src->sizesAndStrides;
  const int64_t *srcStrides = src->sizesAndStrides + rank;
  const int64_t *dstStrides = dst->sizesAndStrides + rank;
  char *srcBase = src->aligned + src->offset * elemSize;
  char *dstBase = dst->aligned + dst->offset * elemSize;
  if (rank == 0) {
    memcpy(dstBase, srcBase, (size_t)elemSize);
    return;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return;
  /* The index of the current element, and the offsets it gives. */
  int64_t index[rank];
  memset(index, 0, sizeof(index));
  int64_t srcOff = 0, dstOff = 0;
  /* A unit-stride innermost dimension in both is one memcpy per row. */
  int64_t last = rank - 1;
  int contiguous = srcStrides[last] == 1 && dstStrides[last] == 1;
  int64_t run = contiguous ? sizes[last] : 1;
  for (;;) {
    memcpy(dstBase + dstOff * elemSize, srcBase + srcOff * elemSize,
           (size_t)(run * elemSize));
    /* Next element (or row), like an odometer. */
    int64_t d = contiguous ? last - 1 : last;
    for (; d >= 0; --d) {
      ++index[d];
      srcOff += srcStrides[d];
      dstOff += dstStrides[d];
      if (index[d] < sizes[d])
        break;
      srcOff -= srcStrides[d] * sizes[d];
      dstOff -= dstStrides[d] * sizes[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
