// RUN: ga-opt %s -ga-wrap-tensor-boundary -split-input-file -verify-diagnostics

// A tensor wrapper passes plain dense buffers: other layouts are refused.
// expected-error @+1 {{tensor-boundary needs identity layouts at the function boundary, got 'memref<4xf32, strided<[2]>>'}}
func.func @strided(%x: memref<4xf32, strided<[2]>>) {
  return
}

// -----

// The name the mapped function would take is taken.
// expected-error @+1 {{cannot rename the function to 'step__gpu_loops': the symbol exists}}
func.func @step(%x: memref<4xf32>) {
  return
}
func.func private @step__gpu_loops(%x: memref<4xf32>)
