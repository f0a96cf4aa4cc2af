// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-linalg-to-gpu-loops
// RUN: not ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="block-size=48" 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: error: block-size must be a multiple of 32 in [32, 1024], got 48

// The mapping runs on buffers: a linalg op on tensors is a pipeline bug
// (bufferization did not run).
func.func @tensors(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected buffer semantics (run one-shot-bufferize before ga-linalg-to-gpu-loops)}}
  %r = linalg.copy ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Host code that needs an element of a device buffer of rank > 0: only 0-d
// values are read back to the host.
func.func @read_back_rank1(%m: memref<4xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  // expected-note @+1 {{loaded here}}
  %v = memref.load %m[%c1] : memref<4xf32>
  // expected-error @+1 {{'func.return' op on the host uses an element of a device buffer of rank 1; only 0-d buffers are read back to the host}}
  return %v : f32
}

// -----

// A host load that feeds a kernel, of a buffer that is overwritten before the
// kernel runs: moving the load into the kernel would read the new value.
func.func @overwritten(%n: memref<f32>, %p: memref<8xf32>, %q: memref<8xf32>) {
  // expected-note @+1 {{loaded here}}
  %v = memref.load %n[] : memref<f32>
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{may overwrite device memory that a later kernel reads through a host load; cannot move the load into the kernel}}
  linalg.fill ins(%one : f32) outs(%n : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%p : memref<8xf32>) outs(%q : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %v : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A kernel that reads a host-loaded value and writes the same buffer would
// race with itself once the load moves inside.
func.func @self_overwrite(%n: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{loaded here}}
  %v = memref.load %n[%c0] : memref<4xf32>
  // expected-error @+1 {{may overwrite device memory that a later kernel reads through a host load; cannot move the load into the kernel}}
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%n : memref<4xf32>) {
  ^bb0(%o: f32):
    %m = arith.addf %o, %v : f32
    linalg.yield %m : f32
  }
  return
}
