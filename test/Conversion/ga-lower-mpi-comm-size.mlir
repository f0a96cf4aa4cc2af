// RUN: ga-opt %s --split-input-file --ga-lower-mpi-comm-size | FileCheck %s
// RUN: ga-opt %s --split-input-file --ga-lower-mpi-comm-size --convert-to-llvm \
// RUN:   --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// MLIR 22's --convert-to-llvm has no pattern for mpi.comm_size; this pass
// provides it. MPICH: the communicator is an int (MPI_COMM_WORLD is
// 0x44000000 = 1140850688).

// CHECK: llvm.func @MPI_Comm_size(i32, !llvm.ptr) -> i32
// CHECK-LABEL: func.func @world_size
// CHECK:         %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// CHECK:         %[[I64:.*]] = builtin.unrealized_conversion_cast %[[COMM]] : !mpi.comm to i64
// CHECK:         %[[H:.*]] = llvm.trunc %[[I64]] : i64 to i32
// CHECK:         %[[SLOT:.*]] = llvm.alloca %{{.*}} x i32 : (i32) -> !llvm.ptr
// CHECK:         llvm.call @MPI_Comm_size(%[[H]], %[[SLOT]]) : (i32, !llvm.ptr) -> i32
// CHECK:         %[[SIZE:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> i32
// CHECK:         return %[[SIZE]] : i32

// LLVM-LABEL: llvm.func @world_size
// LLVM:         %[[W:.*]] = llvm.mlir.constant(1140850688 : i64) : i64
// LLVM:         %[[H:.*]] = llvm.trunc %[[W]] : i64 to i32
// LLVM:         llvm.call @MPI_Comm_size(%[[H]], %{{.*}})
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @world_size() -> i32 {
    %comm = mpi.comm_world : !mpi.comm
    %size = mpi.comm_size(%comm) : i32
    return %size : i32
  }
}

// -----

// OpenMPI: the communicator is a pointer.
// CHECK: llvm.func @MPI_Comm_size(!llvm.ptr, !llvm.ptr) -> i32
// CHECK-LABEL: func.func @world_size_ompi
// CHECK:         %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK:         llvm.call @MPI_Comm_size(%[[P]], %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> i32
// LLVM-LABEL: llvm.func @world_size_ompi
// LLVM:         llvm.mlir.addressof @ompi_mpi_comm_world
// LLVM:         llvm.call @MPI_Comm_size
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  func.func @world_size_ompi() -> i32 {
    %comm = mpi.comm_world : !mpi.comm
    %size = mpi.comm_size(%comm) : i32
    return %size : i32
  }
}
