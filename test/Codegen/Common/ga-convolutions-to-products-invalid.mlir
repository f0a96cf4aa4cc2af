// RUN: ga-opt %s -ga-convolutions-to-products=remarks=1 -split-input-file -verify-diagnostics | FileCheck %s

// Convolutions the products cannot read as matrices are never refused: they
// stay as they are (the loop lowerings handle them), with a remark saying
// why when asked (remarks=1), and are counted (statistic `left`).

// CHECK-LABEL: func.func @depthwise
// CHECK: linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise(%x: tensor<1x3x6x6xf32>, %w: tensor<3x3x3xf32>, %init: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  // expected-remark @+1 {{convolution left as loops: no output channel dimension (depthwise)}}
  %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x3x6x6xf32>, tensor<3x3x3xf32>) outs(%init : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_batch
// CHECK: linalg.conv_2d_nchw_fchw
func.func @dynamic_batch(%x: tensor<?x3x6x6xf32>, %w: tensor<4x3x3x3xf32>, %init: tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32> {
  // expected-remark @+1 {{convolution left as loops: dynamic shapes or mixed element types}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<?x3x6x6xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  return %y : tensor<?x4x4x4xf32>
}

// -----

// bf16 operands accumulated in f32: the product would need the casts.
// CHECK-LABEL: func.func @mixed_types
// CHECK: linalg.conv_2d_nchw_fchw
func.func @mixed_types(%x: tensor<1x3x6x6xbf16>, %w: tensor<4x3x3x3xbf16>, %init: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  // expected-remark @+1 {{convolution left as loops: dynamic shapes or mixed element types}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x3x6x6xbf16>, tensor<4x3x3x3xbf16>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// Integer convolutions stay loops.
// CHECK-LABEL: func.func @integer
// CHECK: linalg.conv_2d_nchw_fchw
func.func @integer(%x: tensor<1x3x6x6xi32>, %w: tensor<4x3x3x3xi32>, %init: tensor<1x4x4x4xi32>) -> tensor<1x4x4x4xi32> {
  // expected-remark @+1 {{convolution left as loops: not a floating-point multiply-add}}
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<1x3x6x6xi32>, tensor<4x3x3x3xi32>) outs(%init : tensor<1x4x4x4xi32>) -> tensor<1x4x4x4xi32>
  return %y : tensor<1x4x4x4xi32>
}

// -----

// On buffers (after bufferization) there is nothing to rewrite into.
// CHECK-LABEL: func.func @on_buffers
// CHECK: linalg.conv_2d_nchw_fchw
func.func @on_buffers(%x: memref<1x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  // expected-remark @+1 {{convolution left as loops: not a convolution on tensors}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<1x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  return
}
