// RUN: not ga-opt %s -ga-narrow-product-operands="bogus=1" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: ga-opt %s -ga-narrow-product-operands -split-input-file -verify-diagnostics | FileCheck %s

// The pass has no options: anything given is refused by the option parser.
// OPT: no such option bogus

// Products on buffers are left as they are (the rewrite is on tensors), and
// nothing is reported.
// CHECK-LABEL: func.func @buffers
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8x4xf32>)
func.func @buffers(%a: memref<4x8xbf16>, %b: memref<8x4xbf16>, %c: memref<4x4xf32>) {
  %af = memref.alloc() : memref<4x8xf32>
  %bf = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xbf16>) outs(%af : memref<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8x4xbf16>) outs(%bf : memref<8x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  }
  linalg.matmul ins(%af, %bf : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// A product into bf16 (not the extensions' type): left alone.
// CHECK-LABEL: func.func @narrow_init
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<4x4xf16>)
func.func @narrow_init(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>, %c: tensor<4x4xf16>) -> tensor<4x4xf16> {
  %ea = tensor.empty() : tensor<4x8xf32>
  %af = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xbf16>) outs(%ea : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<8x4xf32>
  %bf = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x4xbf16>) outs(%eb : tensor<8x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<8x4xf32>
  %r = linalg.matmul ins(%af, %bf : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf16>) -> tensor<4x4xf16>
  return %r : tensor<4x4xf16>
}
