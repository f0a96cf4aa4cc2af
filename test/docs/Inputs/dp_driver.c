//===- dp_driver.c - the driver.c of docs/Guide.md's MPI recipe -----------===//
//
// Calls `_mlir_ciface_train_step` of Inputs/dp_step.mlir (compiled with
// --ga-lower-to-cpu-mpi="c-interface=1") once on every rank: w = 1 and rank r
// holds samples whose features are all r + 1, so the gradient averaged over R
// ranks is 16 (R + 1) / 2 and the new w is 1 - 0.5 * 16 (R + 1) / 2 on every
// rank, exactly. Prints one line per rank; exits 1 on a wrong value.
//
//===----------------------------------------------------------------------===//

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1D;

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} MemRef2D;

void ga_mpi_init(void);
void ga_mpi_finalize(void);
void _mlir_ciface_train_step(MemRef1D *result, MemRef1D *w, MemRef2D *x);

int main(void) {
  ga_mpi_init();
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  float w[4] = {1, 1, 1, 1}, x[16 * 4];
  for (int i = 0; i < 16 * 4; ++i)
    x[i] = (float)(rank + 1);
  MemRef1D wDesc = {w, w, 0, {4}, {1}}, result;
  MemRef2D xDesc = {x, x, 0, {16, 4}, {4, 1}};
  _mlir_ciface_train_step(&result, &wDesc, &xDesc);
  float expected = 1.0f - 0.5f * 16.0f * (float)(ranks + 1) / 2.0f;
  int ok = 1;
  for (int i = 0; i < 4; ++i)
    ok &= result.aligned[result.offset + i * result.strides[0]] == expected;
  printf("rank %d/%d: w = %g %s\n", rank, ranks, result.aligned[result.offset],
         ok ? "ok" : "WRONG");
  ga_mpi_finalize();
  return ok ? 0 : 1;
}
