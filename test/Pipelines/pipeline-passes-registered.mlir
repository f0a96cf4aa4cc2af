// Every pass that the ga pipelines add is a declared, registered pass: listed
// by `ga-opt --help`, so that it can be run, tested and documented on its own.
// Each pipeline is dumped with the options that add its optional passes; a C++
// PassWrapper added by a pipeline (unregistered) fails this test by name.
//
// RUN: ga-opt --help > %t.help
// RUN: rm -rf %t.d && mkdir %t.d
// RUN: ga-opt %S/Inputs/marked_step.mlir --ga-accumulate="micro-batches=2" --dump-pass-pipeline -o /dev/null 2> %t.d/accumulate
// RUN: ga-opt %S/Inputs/marked_step.mlir --ga-accumulate="micro-batch-size=2" --dump-pass-pipeline -o /dev/null 2> %t.d/accumulate-choose
// RUN: ga-opt %s --ga-lower-to-cpu="blas=1 openmp=1 vector-width=8 fuse-elementwise=1 static-temporaries=1 out-params=1 c-interface=1" --dump-pass-pipeline -o /dev/null 2> %t.d/cpu
// RUN: ga-opt %s --ga-lower-to-cpu="blas=1" --dump-pass-pipeline -o /dev/null 2> %t.d/cpu-sequential
// RUN: ga-opt %s --ga-lower-to-cpu-mpi="openmp=1" --dump-pass-pipeline -o /dev/null 2> %t.d/cpu-mpi
// RUN: ga-opt %s --ga-lower-to-gpu-loops="tensor-boundary=1 cublas=1 fuse-elementwise=1" --dump-pass-pipeline -o /dev/null 2> %t.d/gpu-loops
// RUN: ga-opt %s --ga-lower-to-nvvm="cublas=1 fuse-elementwise=1" --dump-pass-pipeline -o /dev/null 2> %t.d/nvvm
// RUN: %python %S/Inputs/passes_in_help.py %t.help %t.d/accumulate %t.d/accumulate-choose %t.d/cpu %t.d/cpu-sequential %t.d/cpu-mpi %t.d/gpu-loops %t.d/nvvm | FileCheck %s
//
// The passes of each pipeline, then (sorted) some of the ga passes among them
// (the pipelines' own steps, each in a Passes.td); passes added later only need
// to be registered.
// CHECK: accumulate: {{[1-9][0-9]*}} passes, 0 not listed; ga passes: {{.*}}ga-check-training-step {{.*}}ga-micro-batch
// CHECK: accumulate-choose: {{[1-9][0-9]*}} passes, 0 not listed; ga passes: ga-check-constant-indices {{.*}}ga-choose-micro-batches
// CHECK: cpu: {{[1-9][0-9]*}} passes, 0 not listed; ga passes: {{.*}}ga-vectorize-linalg ga-vectorize-math ga-verify-lowered
// CHECK: cpu-sequential: {{[1-9][0-9]*}} passes, 0 not listed; ga passes: {{.*}}ga-split-row-reductions {{.*}}ga-vectorize-math ga-verify-lowered
// CHECK: cpu-mpi: {{[1-9][0-9]*}} passes, 0 not listed; ga passes: ga-bucket-gradients {{.*}}ga-verify-lowered
// CHECK: gpu-loops: {{[1-9][0-9]*}} passes, 0 not listed; ga passes: {{.*}}ga-contractions-to-cublaslt {{.*}}ga-linalg-to-gpu-loops {{.*}}ga-mark-accumulating-ops {{.*}}ga-wrap-tensor-boundary
// CHECK: nvvm: {{[1-9][0-9]*}} passes, 0 not listed; ga passes: {{.*}}ga-check-cuda-toolkit {{.*}}ga-cooperative-loops-to-gpu {{.*}}ga-gpu-single-stream {{.*}}ga-place-buffers-on-device {{.*}}ga-verify-lowered

module {
}
