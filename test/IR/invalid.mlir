// RUN: ga-opt %s -split-input-file -verify-diagnostics

// Every verifier message of the ga ops and of the ga argument attributes.

//===----------------------------------------------------------------------===//
// ga.accumulate
//===----------------------------------------------------------------------===//

func.func @accumulate_shape(%p: tensor<4x8xf32>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'ga.accumulate' op partial 'tensor<4x8xf32>' and accumulator 'tensor<8x4xf32>' must have the same shape}}
  %0 = ga.accumulate <add> %p into %acc : tensor<4x8xf32> into tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @accumulate_rank(%p: tensor<32xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'ga.accumulate' op partial 'tensor<32xf32>' and accumulator 'tensor<4x8xf32>' must have the same shape}}
  %0 = ga.accumulate <add> %p into %acc : tensor<32xf32> into tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @accumulate_dynamic_vs_static(%p: tensor<?xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{must have the same shape}}
  %0 = ga.accumulate <add> %p into %acc : tensor<?xf32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @accumulate_wider_partial(%p: tensor<4xf64>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ga.accumulate' op partial element type 'f64' must equal the accumulator's 'f32' or be a narrower float}}
  %0 = ga.accumulate <add> %p into %acc : tensor<4xf64> into tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @accumulate_same_width_float(%p: tensor<4xbf16>, %acc: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{partial element type 'bf16' must equal the accumulator's 'f16' or be a narrower float}}
  %0 = ga.accumulate <add> %p into %acc : tensor<4xbf16> into tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @accumulate_narrower_int(%p: tensor<4xi8>, %acc: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{partial element type 'i8' must equal the accumulator's 'i32' or be a narrower float}}
  %0 = ga.accumulate <add> %p into %acc : tensor<4xi8> into tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @accumulate_int_into_float(%p: tensor<4xi32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{partial element type 'i32' must equal the accumulator's 'f32' or be a narrower float}}
  %0 = ga.accumulate <add> %p into %acc : tensor<4xi32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @accumulate_bitwise_on_float(%p: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ga.accumulate' op combining kind 'and' is not defined on 'f32'}}
  %0 = ga.accumulate <and> %p into %acc : tensor<4xf32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @accumulate_signed_max_on_float(%p: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{combining kind 'maxsi' is not defined on 'f32'}}
  %0 = ga.accumulate <maxsi> %p into %acc : tensor<4xf32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @accumulate_float_max_on_int(%p: tensor<4xi32>, %acc: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{combining kind 'maxnumf' is not defined on 'i32'}}
  %0 = ga.accumulate <maxnumf> %p into %acc : tensor<4xi32> into tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @accumulate_complex(%p: tensor<4xcomplex<f32>>, %acc: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{combining kind 'add' is not defined on 'complex<f32>'}}
  %0 = ga.accumulate <add> %p into %acc : tensor<4xcomplex<f32>> into tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @accumulate_unknown_kind(%p: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mlir::vector::CombiningKind to be one of: add, mul, minui, minsi, minnumf, maxui, maxsi, maxnumf, and, or, xor, maximumf, minimumf}}
  // expected-error @+1 {{failed to parse Vector_CombiningKindAttr parameter 'value' which is to be a `::mlir::vector::CombiningKind`}}
  %0 = ga.accumulate <avg> %p into %acc : tensor<4xf32> into tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @accumulate_result_type(%p: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{'ga.accumulate' op failed to verify that all of {acc, result} have same type}}
  %0 = "ga.accumulate"(%p, %acc) <{kind = #vector.kind<add>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @accumulate_unranked(%p: tensor<*xf32>, %acc: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'ga.accumulate' op operand #0 must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %0 = "ga.accumulate"(%p, %acc) <{kind = #vector.kind<add>}> : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @accumulate_memref(%p: memref<4xf32>, %acc: memref<4xf32>) {
  // expected-error @+1 {{'ga.accumulate' op operand #0 must be ranked tensor of any type values, but got 'memref<4xf32>'}}
  %0 = "ga.accumulate"(%p, %acc) <{kind = #vector.kind<add>}> : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  return
}

// -----

func.func @accumulate_missing_kind(%p: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ga.accumulate' op requires attribute 'kind'}}
  %0 = "ga.accumulate"(%p, %acc) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// ga.all_reduce
//===----------------------------------------------------------------------===//

// -----

func.func @all_reduce_index(%g: tensor<4xindex>) -> tensor<4xindex> {
  // expected-error @+1 {{'ga.all_reduce' op needs integer or float elements, got 'index'}}
  %0 = ga.all_reduce <sum> %g : tensor<4xindex>
  return %0 : tensor<4xindex>
}

// -----

func.func @all_reduce_complex(%g: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{'ga.all_reduce' op needs integer or float elements, got 'complex<f32>'}}
  %0 = ga.all_reduce <sum> %g : tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @all_reduce_mean_int(%g: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'ga.all_reduce' op 'mean' needs float elements, got 'i32'}}
  %0 = ga.all_reduce <mean> %g : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @all_reduce_negative_bucket(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ga.all_reduce' op attribute 'bucket' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = ga.all_reduce <sum> %g bucket -1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @all_reduce_unknown_kind(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mlir::ga::CollectiveKind to be one of: sum, mean, max, min}}
  // expected-error @+1 {{failed to parse GA_CollectiveKindAttr parameter 'value' which is to be a `::mlir::ga::CollectiveKind`}}
  %0 = ga.all_reduce <prod> %g : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @all_reduce_result_type(%g: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ga.all_reduce' op failed to verify that all of {input, result} have same type}}
  %0 = "ga.all_reduce"(%g) <{kind = #ga.collective<sum>}> : (tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @all_reduce_unranked(%g: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'ga.all_reduce' op operand #0 must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %0 = "ga.all_reduce"(%g) <{kind = #ga.collective<sum>}> : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @all_reduce_wrong_kind_attr(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{invalid properties {kind = #vector.kind<add>} for op ga.all_reduce: Invalid attribute `kind` in property conversion: #vector.kind<add>}}
  %0 = "ga.all_reduce"(%g) <{kind = #vector.kind<add>}> : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Argument attributes
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.batch' must be an i64 dimension index}}
func.func @batch_i32(%x: tensor<8x4xf32> {ga.batch = 0 : i32}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #1: 'ga.batch' must be an i64 dimension index}}
func.func @batch_string(%w: tensor<4xf32>, %x: tensor<8x4xf32> {ga.batch = "0"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.batch' needs a ranked tensor or memref of rank >= 1, got 'tensor<f32>'}}
func.func @batch_rank0(%x: tensor<f32> {ga.batch = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.batch' needs a ranked tensor or memref of rank >= 1, got 'f32'}}
func.func @batch_scalar(%x: f32 {ga.batch = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.batch' needs a ranked tensor or memref of rank >= 1, got 'memref<*xf32>'}}
func.func @batch_unranked(%x: memref<*xf32> {ga.batch = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: batch dimension 2 is out of range for 'tensor<8x4xf32>'}}
func.func @batch_out_of_range(%x: tensor<8x4xf32> {ga.batch = 2 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: batch dimension -1 is out of range for 'tensor<8x4xf32>'}}
func.func @batch_negative(%x: tensor<8x4xf32> {ga.batch = -1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: batch dimension 1 is out of range for 'tensor<8xf32>'}}
func.func private @batch_declaration(tensor<8xf32> {ga.batch = 1 : i64})

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.init' must be one of "normal", "uniform", "positive", "mask", "zeros", "ones"}}
func.func @init_unknown(%x: tensor<8xf32> {ga.init = "gaussian"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.init' must be one of "normal", "uniform", "positive", "mask", "zeros", "ones"}}
func.func @init_not_a_string(%x: tensor<8xf32> {ga.init = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.role' must be one of "parameters", "optimizer_state", "inputs"}}
func.func @role_unknown(%x: tensor<8xf32> {ga.role = "weights"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.range' must be [lo, hi] with two numbers}}
func.func @range_one_number(%x: tensor<8xf32> {ga.range = [1.0]}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.range' must be [lo, hi] with two numbers}}
func.func @range_string(%x: tensor<8xf32> {ga.range = [0, "1"]}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.range' must be [lo, hi] with two numbers}}
func.func @range_not_an_array(%x: tensor<8xf32> {ga.range = 1.0}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.range' must have lo < hi}}
func.func @range_empty(%x: tensor<8xf32> {ga.range = [1.0, 1.0]}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'ga.range' must have lo < hi}}
func.func @range_reversed(%x: tensor<8xi64> {ga.range = [10, 0]}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op unknown ga argument attribute 'ga.batch_dim'}}
func.func @unknown_arg_attr(%x: tensor<8xf32> {ga.batch_dim = 0 : i64}) {
  return
}

//===----------------------------------------------------------------------===//
// ga.reduce_scatter, ga.all_gather
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_scatter_rows(%g: tensor<16x10xf32>) -> tensor<6x10xf32> {
  // expected-error @+1 {{'ga.reduce_scatter' op rank 1 of 3 holds 5 of 16 rows, not 6}}
  %0 = ga.reduce_scatter <sum> %g shard 1 of 3 : tensor<16x10xf32> -> tensor<6x10xf32>
  return %0 : tensor<6x10xf32>
}

// -----

func.func @reduce_scatter_rank(%g: tensor<16xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'ga.reduce_scatter' op rank 3 is not below world 3}}
  %0 = ga.reduce_scatter <sum> %g shard 3 of 3 : tensor<16xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @reduce_scatter_scalar(%g: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'ga.reduce_scatter' op needs static shapes of rank >= 1}}
  %0 = ga.reduce_scatter <sum> %g shard 0 of 1 : tensor<f32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_scatter_mean_int(%g: tensor<4xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{'ga.reduce_scatter' op 'mean' needs float elements, got 'i32'}}
  %0 = ga.reduce_scatter <mean> %g shard 0 of 2 : tensor<4xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @all_gather_columns(%g: tensor<2x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'ga.all_gather' op the shard 'tensor<2x3xf32>' must be rows of 'tensor<4x4xf32>'}}
  %0 = ga.all_gather %g shard 0 of 2 : tensor<2x3xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
