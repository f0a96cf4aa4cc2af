// RUN: ga-opt %s --split-input-file --ga-lower-host-collectives -verify-diagnostics

// The pass has no failure of its own: whatever reaches it was checked by
// the ops' verifiers, which run before it. A malformed op is refused there,
// located at the op.

func.func @partial_rows(%a: memref<30xf32>) {
  // expected-error @+1 {{'ga.host_collective_start' op needs a static buffer of whole rows: 'memref<30xf32>' is not 4 rows}}
  ga.host_collective_start %a {datatype = 0 : i32, id = 0 : i64, reduction = 0 : i32, rows = 4 : i64} : memref<30xf32>
  return
}
