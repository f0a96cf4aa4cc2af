// RUN: ga-opt %s -ga-unroll-convolution-windows=remarks=1 -split-input-file -verify-diagnostics | FileCheck %s
// RUN: ga-opt %s -ga-unroll-convolution-windows="remarks=1 max-positions=8" -split-input-file 2>&1 | FileCheck %s --check-prefix=SMALL

// Convolutions the windows do not take are never refused: they stay as they
// are (the products or the loop lowerings handle them), with a remark saying
// why when asked (remarks=1), and are counted (statistic `left`).

// CHECK-LABEL: func.func @with_channels
// CHECK: linalg.conv_2d_nchw_fchw
func.func @with_channels(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>, %init: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  // expected-remark @+1 {{convolution windows not unrolled: channels (not depthwise: the products take it)}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// A channel multiplier is an output channel: the products take it.
// CHECK-LABEL: func.func @multiplier
// CHECK: linalg.depthwise_conv_2d_nhwc_hwcm
func.func @multiplier(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x2xf32>, %init: tensor<1x4x4x3x2xf32>) -> tensor<1x4x4x3x2xf32> {
  // expected-remark @+1 {{convolution windows not unrolled: channels (not depthwise: the products take it)}}
  %y = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x2xf32>) outs(%init : tensor<1x4x4x3x2xf32>) -> tensor<1x4x4x3x2xf32>
  return %y : tensor<1x4x4x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_batch
// CHECK: linalg.depthwise_conv_2d_nchw_chw
func.func @dynamic_batch(%x: tensor<?x3x6x6xf32>, %w: tensor<3x3x3xf32>, %init: tensor<?x3x4x4xf32>) -> tensor<?x3x4x4xf32> {
  // expected-remark @+1 {{convolution windows not unrolled: dynamic shapes}}
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<?x3x6x6xf32>, tensor<3x3x3xf32>) outs(%init : tensor<?x3x4x4xf32>) -> tensor<?x3x4x4xf32>
  return %y : tensor<?x3x4x4xf32>
}

// -----

// Integer convolutions stay loops.
// CHECK-LABEL: func.func @integer
// CHECK: linalg.depthwise_conv_2d_nchw_chw
func.func @integer(%x: tensor<1x3x6x6xi32>, %w: tensor<3x3x3xi32>, %init: tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xi32> {
  // expected-remark @+1 {{convolution windows not unrolled: not a floating-point multiply-add}}
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x3x6x6xi32>, tensor<3x3x3xi32>) outs(%init : tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xi32>
  return %y : tensor<1x3x4x4xi32>
}

// -----

// On buffers there is nothing to rewrite into.
// CHECK-LABEL: func.func @on_buffers
// CHECK: linalg.depthwise_conv_2d_nchw_chw
func.func @on_buffers(%x: memref<1x3x6x6xf32>, %w: memref<3x3x3xf32>, %y: memref<1x3x4x4xf32>) {
  // expected-remark @+1 {{convolution windows not unrolled: not a convolution on tensors}}
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<1x3x6x6xf32>, memref<3x3x3xf32>) outs(%y : memref<1x3x4x4xf32>)
  return
}

// -----

// A 3x3 filter has 9 positions: more than max-positions=8.
// SMALL: remark: convolution windows not unrolled: more filter positions than max-positions
// SMALL-LABEL: func.func @many_positions
// SMALL: linalg.depthwise_conv_2d_nchw_chw
// CHECK-LABEL: func.func @many_positions
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
func.func @many_positions(%x: tensor<1x3x6x6xf32>, %w: tensor<3x3x3xf32>, %init: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x3x6x6xf32>, tensor<3x3x3xf32>) outs(%init : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
