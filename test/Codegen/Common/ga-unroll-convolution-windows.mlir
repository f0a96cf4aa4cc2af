// RUN: ga-opt %s -ga-unroll-convolution-windows -split-input-file | FileCheck %s

// A strided depthwise convolution: one window per filter position, read as a
// slice with the convolution's stride and the position's offset, the
// filter's values at the position as a rank-reduced slice of the filter
// transposed to [kh, kw, c] (contiguous), and the body inlined once per
// position in the loop nest's order (kh outer, kw inner).

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x5x5xf32>, %[[W:.+]]: tensor<3x2x2xf32>, %[[INIT:.+]]: tensor<1x3x2x2xf32>)
// CHECK: %[[WT:.+]] = linalg.transpose ins(%[[W]] : tensor<3x2x2xf32>) outs(%{{.+}} : tensor<2x2x3xf32>) permutation = [1, 2, 0]
// CHECK: %[[X00:.+]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 3, 2, 2] [1, 1, 2, 2] : tensor<1x3x5x5xf32> to tensor<1x3x2x2xf32>
// CHECK: %[[W00:.+]] = tensor.extract_slice %[[WT]][0, 0, 0] [1, 1, 3] [1, 1, 1] : tensor<2x2x3xf32> to tensor<3xf32>
// CHECK: %[[X01:.+]] = tensor.extract_slice %[[X]][0, 0, 0, 1] [1, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[W01:.+]] = tensor.extract_slice %[[WT]][0, 1, 0] [1, 1, 3] [1, 1, 1]
// CHECK: %[[X10:.+]] = tensor.extract_slice %[[X]][0, 0, 1, 0] [1, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[W10:.+]] = tensor.extract_slice %[[WT]][1, 0, 0] [1, 1, 3] [1, 1, 1]
// CHECK: %[[X11:.+]] = tensor.extract_slice %[[X]][0, 0, 1, 1] [1, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[W11:.+]] = tensor.extract_slice %[[WT]][1, 1, 0] [1, 1, 3] [1, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[C]], #[[ID]], #[[C]], #[[ID]], #[[C]], #[[ID]], #[[C]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X00]], %[[W00]], %[[X01]], %[[W01]], %[[X10]], %[[W10]], %[[X11]], %[[W11]] :
// CHECK-SAME: outs(%[[INIT]] : tensor<1x3x2x2xf32>)
// CHECK: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[C2:.+]]: f32, %[[D:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %[[OUT:.+]]: f32):
// CHECK-NEXT: %[[M0:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[S0:.+]] = arith.addf %[[OUT]], %[[M0]] : f32
// CHECK-NEXT: %[[M1:.+]] = arith.mulf %[[C2]], %[[D]] : f32
// CHECK-NEXT: %[[S1:.+]] = arith.addf %[[S0]], %[[M1]] : f32
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
func.func @strided(%x: tensor<1x3x5x5xf32>, %w: tensor<3x2x2xf32>, %init: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%x, %w : tensor<1x3x5x5xf32>, tensor<3x2x2xf32>) outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  return %y : tensor<1x3x2x2xf32>
}

// -----

// Dilation 2: the positions' offsets are 0, 2, 4; stride 1.
// CHECK-LABEL: func.func @dilated
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0] [2, 4, 3, 3] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 2] [2, 4, 3, 3] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 4] [2, 4, 3, 3] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 4, 4] [2, 4, 3, 3] [1, 1, 1, 1]
// CHECK: linalg.generic
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
func.func @dilated(%x: tensor<2x4x7x7xf32>, %w: tensor<4x3x3xf32>, %init: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<2x4x7x7xf32>, tensor<4x3x3xf32>) outs(%init : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %y : tensor<2x4x3x3xf32>
}

// -----

// Channels last (NHWC): the layout comes from the maps; the innermost loop
// is the output's last dimension (the channels); the filter [kh, kw, c] is
// not transposed.
// CHECK-LABEL: func.func @nhwc
// CHECK-NOT: linalg.transpose
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0] [1, 4, 4, 3] [1, 1, 1, 1] : tensor<1x6x6x3xf32> to tensor<1x4x4x3xf32>
// CHECK: tensor.extract_slice %arg1[0, 0, 0] [1, 1, 3] [1, 1, 1] : tensor<3x3x3xf32> to tensor<3xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
func.func @nhwc(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3xf32>, %init: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3xf32>) outs(%init : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// A 1-d depthwise convolution as a generic with its maps.
// CHECK-LABEL: func.func @generic_1d
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 2] [2, 3, 4] [1, 1, 1] : tensor<2x3x6xf32> to tensor<2x3x4xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-NOT: "reduction"
func.func @generic_1d(%x: tensor<2x3x6xf32>, %w: tensor<3x3xf32>, %init: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, o, k) -> (n, c, o + k)>, affine_map<(n, c, o, k) -> (c, k)>, affine_map<(n, c, o, k) -> (n, c, o)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
         ins(%x, %w : tensor<2x3x6xf32>, tensor<3x3xf32>) outs(%init : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}
