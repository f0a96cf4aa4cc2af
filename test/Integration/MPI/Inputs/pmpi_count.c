//===- pmpi_count.c - count MPI_Allreduce calls through PMPI --------------===//
//
// A PMPI interposition layer: linked into a program (or LD_PRELOADed), its
// MPI_Allreduce is the one the compiled step calls; it counts the calls and
// the bytes reduced, then forwards to PMPI_Allreduce (the MPI library's).
//
//===----------------------------------------------------------------------===//

#include <mpi.h>
#include <stdint.h>

static int64_t gaAllreduceCalls = 0;
static int64_t gaAllreduceBytes = 0;

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  int size = 0;
  PMPI_Type_size(datatype, &size);
  ++gaAllreduceCalls;
  gaAllreduceBytes += (int64_t)count * size;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int64_t ga_pmpi_allreduce_calls(void) { return gaAllreduceCalls; }
int64_t ga_pmpi_allreduce_bytes(void) { return gaAllreduceBytes; }
