// RUN: ga-opt %s --convert-ga-to-mpi="entry=main implementation=OpenMPI" | FileCheck %s

// With entry=main, main initializes and finalizes MPI itself (a program run
// by mlir-runner), and no ga_mpi_init/ga_mpi_finalize are added. The ABI
// option is recorded for the lowering to LLVM.
// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK-LABEL: func.func @main()
// CHECK:         call @MPI_Initialized
// CHECK:           mpi.init
// CHECK:         call @MPI_Finalized
// CHECK:           mpi.finalize
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// CHECK-NOT:   func.func @ga_mpi_init
func.func @main() {
  return
}
