//===- GANcclMPI.cpp - the MPI bootstrap of the NCCL runtime --------------===//
//
// gaNcclInitFromMPI, in its own library (libGANcclMPI.so) so that the NCCL
// runtime a compiled step needs (libGANcclRuntime.so: the all-reduce) does
// not depend on MPI: a step compiled here runs on a GPU machine that has
// NCCL but no MPICH, bootstrapped from the environment or by its launcher.
// Programs launched with mpirun link this library as well.
//
//===----------------------------------------------------------------------===//

#include "GANcclRuntime.h"

#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {
int32_t fail(const char *message) {
  std::fprintf(stderr, "ga NCCL runtime: %s\n", message);
  return 1;
}
} // namespace

extern "C" int32_t gaNcclInitFromMPI(void) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return fail("gaNcclInitFromMPI: MPI is not initialized");
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  // The rank among the processes of this node picks the GPU.
  MPI_Comm node;
  int localRank = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                      &node);
  MPI_Comm_rank(node, &localRank);
  MPI_Comm_free(&node);

  // Rank 0 creates the id; a failure there must not leave the others
  // waiting in MPI_Bcast for an id that never comes: the status goes first.
  std::vector<char> id(static_cast<size_t>(gaNcclUniqueIdBytes()), 0);
  int status = 0;
  if (rank == 0)
    status = gaNcclUniqueId(id.data()) != 0;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status)
    return fail("gaNcclInitFromMPI: rank 0 could not create the NCCL id");
  MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0,
            MPI_COMM_WORLD);
  return gaNcclInitWithId(id.data(), rank, nranks, localRank);
}
