// RUN: ga-opt %s --eliminate-empty-tensors --ga-lower-to-cpu="out-params=1 c-interface=1 fuse-elementwise=0" | FileCheck %s
// RUN: ga-opt %s --ga-lower-to-cpu="out-params=1 c-interface=1 fuse-elementwise=0" | FileCheck %s --check-prefix=COPY
// RUN: ga-opt %s --eliminate-empty-tensors --ga-lower-to-cpu="out-params=1 c-interface=1" | FileCheck %s --check-prefix=COPY

// The zero-copy form of ga_mlir.torch (python/ga_mlir/torch/_inplace.py): a
// private step writes its new parameter into the old one's buffer
// (bufferization.materialize_in_destination), and the public function
// returns only the loss. With eliminate-empty-tensors, the update is computed
// in place into %p; --ga-lower-to-cpu drops the private function's result that
// bufferized to its argument (drop-equivalent-buffer-results), so nothing is
// copied: no memcpy, and @update takes the two arguments and the loss's
// out-parameter only.

// CHECK-LABEL: llvm.func @update(
// CHECK-NOT:   memcpy
// CHECK-LABEL: llvm.func @step(
// CHECK:         llvm.call @update(
// CHECK-LABEL: llvm.func @_mlir_ciface_step(

// Without eliminate-empty-tensors, or with fuse-elementwise (its fusion
// patterns give the update a fresh tensor.empty again), the update is
// computed into a fresh buffer that @update copies into %p's.
// COPY-LABEL: llvm.func @update(
// COPY:         "llvm.intr.memcpy"
// COPY-LABEL: llvm.func @step(

#map = affine_map<(d0) -> (d0)>
func.func private @update(%p: tensor<64xf32>, %g: tensor<64xf32>) -> (tensor<64xf32>, tensor<f32>) {
  %e = tensor.empty() : tensor<64xf32>
  %new = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%p, %g : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %c0 = arith.constant 0.0 : f32
  %z = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%c0 : f32) outs(%z : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%g : tensor<64xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %r = bufferization.materialize_in_destination %new in %p : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %r, %loss : tensor<64xf32>, tensor<f32>
}

func.func @step(%p: tensor<64xf32>, %g: tensor<64xf32>) -> tensor<f32> {
  %r:2 = call @update(%p, %g) : (tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<f32>)
  return %r#1 : tensor<f32>
}
