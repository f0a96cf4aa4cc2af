// RUN: ga-opt %s -ga-convolutions-to-products -split-input-file | FileCheck %s
// RUN: ga-opt %s -ga-convolutions-to-products=remarks=1 -split-input-file -verify-diagnostics -o /dev/null

// A strided convolution over a batch of 2: the im2col copy [C, KH, KW, N,
// OH, OW] reads the input through the convolution's own map (stride 2 in the
// image dimensions); the output is packed as [F, N, OH, OW] (a transpose of
// the init, and one back after), so that one 4 x 27 by 27 x 32 product serves
// both samples, accumulating into the init. The product reads its operands as
// slices of a loop over the one group (element-wise fusion does not fold the
// im2col copy into it across them).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4 * 2 + d1, d5 * 2 + d2)>
// CHECK-DAG: #[[ID6:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-LABEL: func.func @strided
// CHECK-SAME:      (%[[X:.*]]: tensor<2x3x9x9xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[INIT:.*]]: tensor<2x4x4x4xf32>)
// CHECK-NOT:     linalg.conv
// CHECK:         %[[COL:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[ID6]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x3x9x9xf32>) outs(%{{.*}} : tensor<3x3x3x2x4x4xf32>)
// CHECK:         %[[COLS:.*]] = tensor.collapse_shape %[[COL]] {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<3x3x3x2x4x4xf32> into tensor<27x32xf32>
// CHECK:         %[[PACKED:.*]] = linalg.transpose ins(%[[INIT]] : tensor<2x4x4x4xf32>) outs(%{{.*}} : tensor<4x2x4x4xf32>) permutation = [1, 0, 2, 3]
// CHECK:         %[[OUTS:.*]] = tensor.collapse_shape %[[PACKED]] {{\[}}[0], [1, 2, 3]] : tensor<4x2x4x4xf32> into tensor<4x32xf32>
// CHECK:         %[[W2:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK:         %[[W3:.*]] = tensor.expand_shape %[[W2]] {{\[}}[0, 1], [2]] output_shape [1, 4, 27]
// CHECK:         %[[A3:.*]] = tensor.expand_shape %[[COLS]] {{\[}}[0, 1], [2]] output_shape [1, 27, 32]
// CHECK:         %[[C3:.*]] = tensor.expand_shape %[[OUTS]] {{\[}}[0, 1], [2]] output_shape [1, 4, 32]
// CHECK:         %[[R:.*]] = scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[C3]]) -> (tensor<1x4x32xf32>)
// CHECK:           %[[WT:.*]] = tensor.extract_slice %[[W3]][%[[T]], 0, 0] [1, 4, 27] [1, 1, 1]
// CHECK:           %[[A:.*]] = tensor.extract_slice %[[A3]][%[[T]], 0, 0] [1, 27, 32] [1, 1, 1]
// CHECK:           %[[C:.*]] = tensor.extract_slice %[[ACC]][%[[T]], 0, 0] [1, 4, 32] [1, 1, 1]
// CHECK:           %[[P:.*]] = linalg.matmul ins(%[[WT]], %[[A]] : tensor<4x27xf32>, tensor<27x32xf32>) outs(%[[C]] : tensor<4x32xf32>)
// CHECK:           tensor.insert_slice %[[P]] into %[[ACC]]
// CHECK:         %[[R2:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1], [2]] : tensor<1x4x32xf32> into tensor<4x32xf32>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[R2]] {{\[}}[0], [1, 2, 3]] output_shape [4, 2, 4, 4] : tensor<4x32xf32> into tensor<4x2x4x4xf32>
// CHECK:         %[[Y:.*]] = linalg.transpose ins(%[[E]] : tensor<4x2x4x4xf32>) outs(%{{.*}} : tensor<2x4x4x4xf32>) permutation = [1, 0, 2, 3]
// CHECK:         return %[[Y]]
func.func @strided(%x: tensor<2x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %init: tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
         ins(%x, %w : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %y : tensor<2x4x4x4xf32>
}

// -----

// Dilation 2, f64.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4 + d1 * 2, d5 + d2 * 2)>
// CHECK-LABEL: func.func @dilated_single
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #{{.*}}]{{.*}} outs(%{{.*}} : tensor<2x2x3x1x5x4xf64>)
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<2x2x3x1x5x4xf64> into tensor<12x20xf64>
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x12xf64>, tensor<12x20xf64>) outs(%{{.*}} : tensor<3x20xf64>)
func.func @dilated_single(%x: tensor<1x2x7x10xf64>, %w: tensor<3x2x2x3xf64>, %init: tensor<1x3x5x4xf64>) -> tensor<1x3x5x4xf64> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x2x7x10xf64>, tensor<3x2x2x3xf64>) outs(%init : tensor<1x3x5x4xf64>) -> tensor<1x3x5x4xf64>
  return %y : tensor<1x3x5x4xf64>
}

// -----

// Groups (the form torch-mlir gives a strided convolution's filter gradient,
// one group per sample): one product per group over the batch and the image,
// in an scf.for, with the filter of that group.
// CHECK-LABEL: func.func @grouped
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x1x3x3x3x4x4xf32>)
// CHECK:         %[[COLS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3], [4, 5, 6]] : tensor<4x1x3x3x3x4x4xf32> into tensor<4x9x48xf32>
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<3x4x5x4x4xf32>) outs(%{{.*}} : tensor<4x5x3x4x4xf32>) permutation = [1, 2, 0, 3, 4]
// CHECK:         %[[W:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] : tensor<4x5x1x3x3xf32> into tensor<4x5x9xf32>
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x5x48xf32>)
// CHECK:           %[[WG:.*]] = tensor.extract_slice %[[W]][%[[T]], 0, 0] [1, 5, 9] [1, 1, 1] : tensor<4x5x9xf32> to tensor<5x9xf32>
// CHECK:           %[[A:.*]] = tensor.extract_slice %[[COLS]][%[[T]], 0, 0] [1, 9, 48] [1, 1, 1] : tensor<4x9x48xf32> to tensor<9x48xf32>
// CHECK:           %[[C:.*]] = tensor.extract_slice %[[ACC]][%[[T]], 0, 0] [1, 5, 48] [1, 1, 1] : tensor<4x5x48xf32> to tensor<5x48xf32>
// CHECK:           %[[P:.*]] = linalg.matmul ins(%[[WG]], %[[A]] : tensor<5x9xf32>, tensor<9x48xf32>) outs(%[[C]] : tensor<5x48xf32>)
// CHECK:           %[[U:.*]] = tensor.insert_slice %[[P]] into %[[ACC]][%[[T]], 0, 0] [1, 5, 48] [1, 1, 1]
// CHECK:           scf.yield %[[U]]
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<4x5x3x4x4xf32>) outs(%{{.*}} : tensor<3x4x5x4x4xf32>) permutation = [2, 0, 1, 3, 4]
func.func @grouped(%x: tensor<3x4x1x10x10xf32>, %w: tensor<4x5x1x3x3xf32>, %init: tensor<3x4x5x4x4xf32>) -> tensor<3x4x5x4x4xf32> {
  %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<3> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<3x4x1x10x10xf32>, tensor<4x5x1x3x3xf32>) outs(%init : tensor<3x4x5x4x4xf32>) -> tensor<3x4x5x4x4xf32>
  return %y : tensor<3x4x5x4x4xf32>
}

// -----

// One and three image dimensions.
// CHECK-LABEL: func.func @conv1d
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x6xf32>, tensor<6x35xf32>) outs(%{{.*}} : tensor<4x35xf32>)
// CHECK-LABEL: func.func @conv3d
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x24xf32>, tensor<24x54xf32>) outs(%{{.*}} : tensor<2x54xf32>)
func.func @conv1d(%x: tensor<5x3x9xf32>, %w: tensor<4x3x2xf32>, %init: tensor<5x4x7xf32>) -> tensor<5x4x7xf32> {
  %y = linalg.conv_1d_ncw_fcw {dilations = dense<2> : vector<1xi64>, strides = dense<1> : vector<1xi64>}
         ins(%x, %w : tensor<5x3x9xf32>, tensor<4x3x2xf32>) outs(%init : tensor<5x4x7xf32>) -> tensor<5x4x7xf32>
  return %y : tensor<5x4x7xf32>
}
func.func @conv3d(%x: tensor<2x3x4x4x4xf32>, %w: tensor<2x3x2x2x2xf32>, %init: tensor<2x2x3x3x3xf32>) -> tensor<2x2x3x3x3xf32> {
  %y = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>}
         ins(%x, %w : tensor<2x3x4x4x4xf32>, tensor<2x3x2x2x2xf32>) outs(%init : tensor<2x2x3x3x3xf32>) -> tensor<2x2x3x3x3xf32>
  return %y : tensor<2x2x3x3x3xf32>
}

// -----

// A generic with a convolution's maps and body is a convolution too.
// CHECK-LABEL: func.func @generic_conv
// CHECK-NOT:     linalg.generic {{.*}}"reduction"
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>)
func.func @generic_conv(%x: tensor<1x6xf32>, %w: tensor<2x3xf32>, %init: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(n, f, o, k) -> (n, o + k)>,
                                        affine_map<(n, f, o, k) -> (f, k)>,
                                        affine_map<(n, f, o, k) -> (n, f, o)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
         ins(%x, %w : tensor<1x6xf32>, tensor<2x3xf32>) outs(%init : tensor<1x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// Channels last (NHWC input, HWCF filter): the output and the filter are
// packed by transposes into [F, N, OH, OW] and [F, KH, KW, C], the result
// transposed back; the im2col copy reads the input in its own layout.
// CHECK-LABEL: func.func @channels_last
// CHECK-SAME:      (%[[X:.*]]: tensor<1x6x6x3xf32>, %[[W:.*]]: tensor<3x3x3x4xf32>, %[[INIT:.*]]: tensor<1x4x4x4xf32>)
// CHECK:         %[[COL:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x6x6x3xf32>) outs(%{{.*}} : tensor<3x3x3x1x4x4xf32>)
// CHECK:         %[[OUT:.*]] = linalg.transpose ins(%[[INIT]] : tensor<1x4x4x4xf32>) outs(%{{.*}} : tensor<4x1x4x4xf32>) permutation = [3, 0, 1, 2]
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<3x3x3x4xf32>) outs(%{{.*}} : tensor<4x3x3x3xf32>) permutation = [3, 0, 1, 2]
// CHECK:         %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x27xf32>, tensor<27x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:         %[[E:.*]] = tensor.expand_shape %{{.*}} into tensor<4x1x4x4xf32>
// CHECK:         %[[Y:.*]] = linalg.transpose ins(%[[E]] : tensor<4x1x4x4xf32>) outs(%{{.*}} : tensor<1x4x4x4xf32>) permutation = [1, 2, 3, 0]
// CHECK:         return %[[Y]]
func.func @channels_last(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x4xf32>, %init: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x4xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}
