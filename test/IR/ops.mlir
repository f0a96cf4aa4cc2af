// RUN: ga-opt %s | ga-opt | FileCheck %s
// RUN: ga-opt %s --mlir-print-op-generic | ga-opt | FileCheck %s
// RUN: ga-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: ga-opt %s -emit-bytecode | ga-opt | FileCheck %s

// Round trip of every ga op and argument attribute, in the custom and the
// generic form.

// CHECK-LABEL: func.func @accumulate
// CHECK-SAME:    (%[[P:.*]]: tensor<4x8xf32>, %[[ACC:.*]]: tensor<4x8xf32>)
// CHECK:         %[[R:.*]] = ga.accumulate <add> %[[P]] into %[[ACC]] : tensor<4x8xf32> into tensor<4x8xf32>
// CHECK:         return %[[R]]
// GENERIC-LABEL: sym_name = "accumulate"
// GENERIC:       "ga.accumulate"(%{{.*}}, %{{.*}}) <{kind = #vector.kind<add>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @accumulate(%p: tensor<4x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = ga.accumulate <add> %p into %acc : tensor<4x8xf32> into tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A narrower float partial is extended into a wider accumulator.
// CHECK-LABEL: func.func @accumulate_mixed_precision
// CHECK:         ga.accumulate <add> %{{.*}} into %{{.*}} : tensor<4x8xbf16> into tensor<4x8xf32>
// CHECK:         ga.accumulate <add> %{{.*}} into %{{.*}} : tensor<4x8xf16> into tensor<4x8xf32>
// CHECK:         ga.accumulate <maxnumf> %{{.*}} into %{{.*}} : tensor<4x8xf32> into tensor<4x8xf64>
// GENERIC-LABEL: sym_name = "accumulate_mixed_precision"
// GENERIC:       "ga.accumulate"(%{{.*}}, %{{.*}}) <{kind = #vector.kind<add>}> : (tensor<4x8xbf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @accumulate_mixed_precision(%p: tensor<4x8xbf16>, %h: tensor<4x8xf16>, %acc: tensor<4x8xf32>,
                                      %s: tensor<4x8xf32>, %d: tensor<4x8xf64>) -> (tensor<4x8xf32>, tensor<4x8xf64>) {
  %0 = ga.accumulate <add> %p into %acc : tensor<4x8xbf16> into tensor<4x8xf32>
  %1 = ga.accumulate <add> %h into %0 : tensor<4x8xf16> into tensor<4x8xf32>
  %2 = ga.accumulate <maxnumf> %s into %d : tensor<4x8xf32> into tensor<4x8xf64>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf64>
}

// Every combining kind, on scalars (rank 0), integers, index and dynamic shapes.
// CHECK-LABEL: func.func @accumulate_kinds
// CHECK:         ga.accumulate <mul> %{{.*}} into %{{.*}} : tensor<f32> into tensor<f32>
// CHECK:         ga.accumulate <minnumf> %{{.*}} into %{{.*}} : tensor<f32> into tensor<f32>
// CHECK:         ga.accumulate <maxnumf> %{{.*}} into %{{.*}} : tensor<f32> into tensor<f32>
// CHECK:         ga.accumulate <minimumf> %{{.*}} into %{{.*}} : tensor<f32> into tensor<f32>
// CHECK:         ga.accumulate <maximumf> %{{.*}} into %{{.*}} : tensor<f32> into tensor<f32>
// CHECK:         ga.accumulate <add> %{{.*}} into %{{.*}} : tensor<?xi32> into tensor<?xi32>
// CHECK:         ga.accumulate <mul> %{{.*}} into %{{.*}} : tensor<?xi32> into tensor<?xi32>
// CHECK:         ga.accumulate <minui> %{{.*}} into %{{.*}} : tensor<?xi32> into tensor<?xi32>
// CHECK:         ga.accumulate <minsi> %{{.*}} into %{{.*}} : tensor<?xi32> into tensor<?xi32>
// CHECK:         ga.accumulate <maxui> %{{.*}} into %{{.*}} : tensor<?xi32> into tensor<?xi32>
// CHECK:         ga.accumulate <maxsi> %{{.*}} into %{{.*}} : tensor<?xi32> into tensor<?xi32>
// CHECK:         ga.accumulate <and> %{{.*}} into %{{.*}} : tensor<?xi1> into tensor<?xi1>
// CHECK:         ga.accumulate <or> %{{.*}} into %{{.*}} : tensor<?xi1> into tensor<?xi1>
// CHECK:         ga.accumulate <xor> %{{.*}} into %{{.*}} : tensor<?xi1> into tensor<?xi1>
// CHECK:         ga.accumulate <add> %{{.*}} into %{{.*}} : tensor<2xindex> into tensor<2xindex>
func.func @accumulate_kinds(%f: tensor<f32>, %i: tensor<?xi32>, %b: tensor<?xi1>, %x: tensor<2xindex>) {
  %0 = ga.accumulate <mul> %f into %f : tensor<f32> into tensor<f32>
  %1 = ga.accumulate <minnumf> %f into %f : tensor<f32> into tensor<f32>
  %2 = ga.accumulate <maxnumf> %f into %f : tensor<f32> into tensor<f32>
  %3 = ga.accumulate <minimumf> %f into %f : tensor<f32> into tensor<f32>
  %4 = ga.accumulate <maximumf> %f into %f : tensor<f32> into tensor<f32>
  %5 = ga.accumulate <add> %i into %i : tensor<?xi32> into tensor<?xi32>
  %6 = ga.accumulate <mul> %i into %i : tensor<?xi32> into tensor<?xi32>
  %7 = ga.accumulate <minui> %i into %i : tensor<?xi32> into tensor<?xi32>
  %8 = ga.accumulate <minsi> %i into %i : tensor<?xi32> into tensor<?xi32>
  %9 = ga.accumulate <maxui> %i into %i : tensor<?xi32> into tensor<?xi32>
  %10 = ga.accumulate <maxsi> %i into %i : tensor<?xi32> into tensor<?xi32>
  %11 = ga.accumulate <and> %b into %b : tensor<?xi1> into tensor<?xi1>
  %12 = ga.accumulate <or> %b into %b : tensor<?xi1> into tensor<?xi1>
  %13 = ga.accumulate <xor> %b into %b : tensor<?xi1> into tensor<?xi1>
  %14 = ga.accumulate <add> %x into %x : tensor<2xindex> into tensor<2xindex>
  return
}

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME:    (%[[G:.*]]: tensor<784x1024xf32>, %[[N:.*]]: tensor<i64>)
// CHECK:         %[[S:.*]] = ga.all_reduce <sum> %[[G]] : tensor<784x1024xf32>
// CHECK:         %[[M:.*]] = ga.all_reduce <mean> %[[S]] bucket 0 : tensor<784x1024xf32>
// CHECK:         %[[X:.*]] = ga.all_reduce <max> %[[N]] bucket 7 : tensor<i64>
// CHECK:         %[[Y:.*]] = ga.all_reduce <min> %[[X]] {note = "kept"} : tensor<i64>
// CHECK:         return %[[M]], %[[Y]]
// GENERIC-LABEL: sym_name = "all_reduce"
// GENERIC:       "ga.all_reduce"(%{{.*}}) <{kind = #ga.collective<sum>}> : (tensor<784x1024xf32>) -> tensor<784x1024xf32>
// GENERIC:       "ga.all_reduce"(%{{.*}}) <{bucket = 0 : i64, kind = #ga.collective<mean>}> : (tensor<784x1024xf32>) -> tensor<784x1024xf32>
func.func @all_reduce(%g: tensor<784x1024xf32>, %n: tensor<i64>) -> (tensor<784x1024xf32>, tensor<i64>) {
  %0 = ga.all_reduce <sum> %g : tensor<784x1024xf32>
  %1 = ga.all_reduce <mean> %0 bucket 0 : tensor<784x1024xf32>
  %2 = ga.all_reduce <max> %n bucket 7 : tensor<i64>
  %3 = ga.all_reduce <min> %2 {note = "kept"} : tensor<i64>
  return %1, %3 : tensor<784x1024xf32>, tensor<i64>
}

// Argument attributes: the batch dimension and the input-seeding hints.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    %{{.*}}: tensor<784x10xf32> {ga.init = "normal"}
// CHECK-SAME:    %{{.*}}: tensor<256x784xf32> {ga.batch = 0 : i64, ga.init = "uniform", ga.range = [-1.000000e+00, 1.000000e+00]}
// CHECK-SAME:    %{{.*}}: tensor<10x256xi64> {ga.batch = 1 : i64, ga.range = [0, 10]}
// CHECK-SAME:    %{{.*}}: tensor<256xf32> {ga.batch = 0 : i64, ga.init = "mask"}
// GENERIC:       arg_attrs = [{ga.init = "normal"}, {ga.batch = 0 : i64, ga.init = "uniform", ga.range = [-1.000000e+00, 1.000000e+00]}, {ga.batch = 1 : i64, ga.range = [0, 10]}, {ga.batch = 0 : i64, ga.init = "mask"}]
// GENERIC-SAME:  sym_name = "train_step"
func.func @train_step(%w: tensor<784x10xf32> {ga.init = "normal"},
                      %x: tensor<256x784xf32> {ga.batch = 0 : i64, ga.init = "uniform", ga.range = [-1.0, 1.0]},
                      %y: tensor<10x256xi64> {ga.batch = 1 : i64, ga.range = [0, 10]},
                      %m: tensor<256xf32> {ga.batch = 0 : i64, ga.init = "mask"}) {
  return
}

// Declarations carry the attributes too.
// CHECK-LABEL: func.func private @external
// CHECK-SAME:    tensor<?x3xf32> {ga.batch = 0 : i64, ga.init = "positive"}
// CHECK-SAME:    tensor<3xf32> {ga.init = "zeros"}
// CHECK-SAME:    tensor<3xf32> {ga.init = "ones", ga.range = [1, 2.500000e+00]}
func.func private @external(tensor<?x3xf32> {ga.batch = 0 : i64, ga.init = "positive"},
                            tensor<3xf32> {ga.init = "zeros"},
                            tensor<3xf32> {ga.init = "ones", ga.range = [1, 2.5]})

// ga.batch stays valid after bufferization, on memrefs.
// CHECK-LABEL: func.func private @bufferized
// CHECK-SAME:    memref<8x4xf32> {ga.batch = 0 : i64}
// CHECK-SAME:    memref<?x4xf32, strided<[?, 1], offset: ?>> {ga.batch = 1 : i64}
func.func private @bufferized(memref<8x4xf32> {ga.batch = 0 : i64},
                              memref<?x4xf32, strided<[?, 1], offset: ?>> {ga.batch = 1 : i64})
