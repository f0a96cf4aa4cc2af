// RUN: ga-opt %s --split-input-file --convert-ga-to-mpi -verify-diagnostics
// RUN: not ga-opt %s --split-input-file --convert-ga-to-mpi="implementation=IntelMPI" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=IMPL

// IMPL: error: convert-ga-to-mpi: implementation must be MPICH or OpenMPI, got 'IntelMPI'

func.func @bf16(%g: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{all-reduce of 'bf16' elements: MLIR 22 lowers mpi.allreduce for f32, f64 and 8- to 64-bit integers only (accumulate in f32, or use the NCCL lowering on the GPU)}}
  %r = ga.all_reduce <sum> %g : tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

// expected-note @+1 {{the grid}}
shard.grid @grid2d(shape = 2x2)
func.func @sub_grid(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{all-reduce over part of grid @grid2d: only reductions over every axis (the whole job is the data-parallel group) are lowered; use --convert-shard-to-mpi for sub-grid collectives}}
  %r = shard.all_reduce %g on @grid2d grid_axes = [1] : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @dp(shape = 2)
func.func @widening(%g: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{all-reduce from 'tensor<4xf32>' to 'tensor<4xf64>': a change of element type is not supported}}
  %r = shard.all_reduce %g on @dp grid_axes = [0] : tensor<4xf32> -> tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

shard.grid @dp(shape = 2)
func.func @generic(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a 'generic' reduction has no MPI/NCCL counterpart}}
  %r = shard.all_reduce %g on @dp grid_axes = [0] reduction = generic : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @bucket_mismatch(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %ra = ga.all_reduce <sum> %a bucket 0 : tensor<4xf32>
  // expected-error @+1 {{all-reduces of bucket 0 differ in kind or element type}}
  %rb = ga.all_reduce <max> %b bucket 0 : tensor<4xf32>
  return %ra, %rb : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @bucket_used_early(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{all-reduce of bucket 1 is used before the bucket's last all-reduce, where the bucket's collective runs}}
  %ra = ga.all_reduce <sum> %a bucket 1 : tensor<4xf32>
  %s = arith.addf %ra, %b : tensor<4xf32>
  // expected-note @+1 {{the last all-reduce of the bucket}}
  %rb = ga.all_reduce <sum> %s bucket 1 : tensor<4xf32>
  return %rb : tensor<4xf32>
}

// -----

// expected-error @+1 {{the module's dlti.map says MPI:Implementation = "OpenMPI", the pass option says "MPICH"}}
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
}
