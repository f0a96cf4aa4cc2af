// RUN: ga-opt %s --split-input-file -verify-diagnostics

func.func @strided(%a: memref<12xf32, strided<[2]>>) {
  // expected-error @+1 {{'ga.host_collective_start' op needs a contiguous buffer (the engine works on count consecutive elements), not 'memref<12xf32, strided<[2]>>'}}
  ga.host_collective_start %a {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32} : memref<12xf32, strided<[2]>>
  return
}

// -----

func.func @partial_rows(%a: memref<30xf32>) {
  // expected-error @+1 {{'ga.host_collective_start' op needs a static buffer of whole rows: 'memref<30xf32>' is not 4 rows}}
  ga.host_collective_start %a {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<30xf32>
  return
}

// -----

func.func @no_offset(%a: memref<32xf32>, %mine: memref<1x8xf32>) {
  // expected-error @+1 {{'ga.host_collective_start' op needs an input and its input_offset together}}
  ga.host_collective_start %a from %mine : memref<1x8xf32> {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
  return
}

// -----

func.func @gather_without_rows(%a: memref<32xf32>, %mine: memref<1x8xf32>) {
  // expected-error @+1 {{'ga.host_collective_start' op gathers rows: an input needs `rows`}}
  ga.host_collective_start %a from %mine : memref<1x8xf32> {datatype = 0 : i32, id = 0 : i64, input_offset = 8 : i64, reduction = 0 : i32} : memref<32xf32>
  return
}

// -----

func.func @outside(%a: memref<32xf32>, %mine: memref<1x8xf32>) {
  // expected-error @+1 {{'ga.host_collective_start' op needs an input of whole rows inside the buffer: 8 elements at 28 of 32}}
  ga.host_collective_start %a from %mine : memref<1x8xf32> {datatype = 0 : i32, id = 0 : i64, input_offset = 28 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
  return
}

// -----

func.func @element_type(%a: memref<32xf32>, %mine: memref<1x8xf16>) {
  // expected-error @+1 {{'ga.host_collective_start' op needs an input of the buffer's element type, not 'f16'}}
  ga.host_collective_start %a from %mine : memref<1x8xf16> {datatype = 0 : i32, id = 0 : i64, input_offset = 8 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<32xf32>
  return
}

// -----

func.func @negative_code(%a: memref<12xf32>) {
  // expected-error @+1 {{'ga.host_collective_start' op needs the runtime's codes of a datatype and a reduction (non-negative)}}
  ga.host_collective_start %a {datatype = -1 : i32, id = 0 : i64, reduction = 0 : i32} : memref<12xf32>
  return
}

// -----

func.func @wait_rank(%a: memref<3x4xf32>) {
  // expected-error @+1 {{'ga.host_collective_wait' op operand #0 must be 1D memref of any type values}}
  ga.host_collective_wait %a {id = 0 : i64} : memref<3x4xf32>
  return
}
