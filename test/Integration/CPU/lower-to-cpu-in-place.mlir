// RUN: ga-opt %s --ga-lower-to-cpu="out-params=1 c-interface=1 fuse-elementwise=0" | FileCheck %s
// RUN: ga-opt %s --ga-lower-to-cpu="out-params=1 c-interface=1" | FileCheck %s
// RUN: ga-opt %s --ga-lower-to-cpu="out-params=1 c-interface=1 blas=1 static-temporaries=1" | FileCheck %s

// The zero-copy form of ga_mlir.torch (python/ga_mlir/torch/_inplace.py): a
// private step writes its new parameter into the old one's buffer
// (bufferization.materialize_in_destination), and the public function
// returns only the loss. --ga-lower-to-cpu runs eliminate-empty-tensors after
// element-wise fusion (whose patterns give an op with an unread init a fresh
// tensor.empty), so the update is computed in place into %p, with or without
// fusion; it then drops the private function's result that bufferized to its
// argument (drop-equivalent-buffer-results), so nothing is copied: no memcpy,
// and @update takes the two arguments and the loss's out-parameter only. The
// gradient arrives as [1, 64] (a sum with keepdim, as torch-mlir writes it):
// fusion does not fold that reshape through the update, which would put a
// collapse_shape between the update and %p (--ga-fuse-elementwise).

// CHECK-LABEL: llvm.func @update(
// CHECK-NOT:   memcpy
// CHECK-LABEL: llvm.func @step(
// CHECK:         llvm.call @update(
// CHECK-LABEL: llvm.func @_mlir_ciface_step(

#map = affine_map<(d0) -> (d0)>
func.func private @update(%p: tensor<64xf32>, %g2: tensor<1x64xf32>) -> (tensor<64xf32>, tensor<f32>) {
  %g = tensor.collapse_shape %g2 [[0, 1]] : tensor<1x64xf32> into tensor<64xf32>
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

func.func @step(%p: tensor<64xf32>, %g: tensor<1x64xf32>) -> tensor<f32> {
  %r:2 = call @update(%p, %g) : (tensor<64xf32>, tensor<1x64xf32>) -> (tensor<64xf32>, tensor<f32>)
  return %r#1 : tensor<f32>
}
