//===- nccl_link_driver.c - link a NCCL-lowered step, probe the runtime ---===//
//
// Links a step lowered with --convert-ga-to-nccl against libGANcclRuntime
// (-lnccl -lcudart underneath) and exercises what runs without a GPU: the
// NCCL version, and clean failures (a message and a status, no crash, no
// hang) of the set-up and of a collective without a communicator.
//
//===----------------------------------------------------------------------===//

#include "GANcclRuntime.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

// The lowered step (not called: there is no GPU here).
extern void _mlir_ciface_train_step(void);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int version = gaNcclGetVersion();
  printf("rank %d: NCCL %d.%d, MPI bootstrap %s, step at %s\n", rank,
         version / 10000, version / 100 % 100, gaNcclHasMPI() ? "yes" : "no",
         (void *)&_mlir_ciface_train_step ? "linked" : "missing");
  fflush(stdout);
  float x[4] = {1, 2, 3, 4};
  int status = gaNcclAllReduce(NULL, x, 4, 7, 0);
  printf("rank %d: all-reduce without communicator -> %d\n", rank, status);
  status = gaNcclInitFromEnv();
  printf("rank %d: init from an empty environment -> %d\n", rank, status);
  fflush(stdout);
  status = gaNcclInitFromMPI();
  printf("rank %d: init from MPI -> %d\n", rank, status);
  fflush(stdout);
  gaNcclFinalize();
  MPI_Finalize();
  return 0;
}
