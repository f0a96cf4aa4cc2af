/*===- memref_descriptors.h - memrefs of the C interface, for drivers ------===*
 * ---===*
 *
 * What `_mlir_ciface_*` functions take for a memref (a pointer to one) and
 * return in their result structs: {allocated, aligned, offset, sizes[rank],
 * strides[rank]}, the layout of upstream's StridedMemRefType. The test
 * drivers (CPU/Inputs/aot_linreg_driver.c, GPU/Inputs/mlp_sgd_driver.c)
 * declare their steps with these.
 *===----------------------------------------------------------------------===*/

#ifndef GA_TEST_MEMREF_DESCRIPTORS_H
#define GA_TEST_MEMREF_DESCRIPTORS_H

#include <stdint.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset;
} MemRef0D;
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1D;
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} MemRef2D;
typedef struct {
  int64_t *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1DI64;

#endif /* GA_TEST_MEMREF_DESCRIPTORS_H */
