// RUN: ga-opt %s -split-input-file -verify-diagnostics -ga-linalg-to-gpu-loops
// RUN: not ga-opt %s -split-input-file -ga-linalg-to-gpu-loops="block-size=48" 2>&1 | FileCheck %s --check-prefix=BLOCK

// RUN: not ga-opt %s -ga-linalg-to-gpu-loops="fuse-rows-max-threads=-1" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not ga-opt %s -ga-linalg-to-gpu-loops="fuse-siblings=1 fuse-siblings-max-threads=x" 2>&1 | FileCheck %s --check-prefix=BUCKET

// BLOCK: error: block-size must be a multiple of 32 in [32, 1024], got 48
// ROWS: for the --fuse-rows-max-threads option: '-1' value invalid for uint argument!
// BUCKET: for the --fuse-siblings-max-threads option: 'x' value invalid for uint argument!

// The mapping runs on buffers: a linalg op on tensors is a pipeline bug
// (bufferization did not run).
func.func @tensors(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected buffer semantics (run one-shot-bufferize before ga-linalg-to-gpu-loops)}}
  %r = linalg.copy ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
