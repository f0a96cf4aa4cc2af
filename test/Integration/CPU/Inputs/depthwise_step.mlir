#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1) -> (d0, 0)>
#map6 = affine_map<(d0) -> (d0)>
#map7 = affine_map<(d0, d1) -> (0, d1)>
#map8 = affine_map<(d0, d1) -> ()>
#map9 = affine_map<(d0) -> ()>
#map10 = affine_map<() -> ()>
#map11 = affine_map<(d0, d1, d2, d3) -> (d1)>
#map12 = affine_map<(d0, d1, d2, d3) -> ()>
module {
  func.func @train_step(%arg0: tensor<4x1x3x3xf32>, %arg1: tensor<4x1x3x3xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4x1x3x3xf32>, %arg4: tensor<4xf32>, %arg5: tensor<6x2x3x3xf32>, %arg6: tensor<6xf32>, %arg7: tensor<6x1x5x5xf32>, %arg8: tensor<6xf32>, %arg9: tensor<3x6xf32>, %arg10: tensor<3xf32>, %arg11: tensor<4x1x3x3xf32>, %arg12: tensor<4x1x3x3xf32>, %arg13: tensor<4xf32>, %arg14: tensor<4x1x3x3xf32>, %arg15: tensor<4xf32>, %arg16: tensor<6x2x3x3xf32>, %arg17: tensor<6xf32>, %arg18: tensor<6x1x5x5xf32>, %arg19: tensor<6xf32>, %arg20: tensor<3x6xf32>, %arg21: tensor<3xf32>, %arg22: tensor<f32>, %arg23: tensor<f32>, %arg24: tensor<f32>, %arg25: tensor<f32>, %arg26: tensor<f32>, %arg27: tensor<f32>, %arg28: tensor<f32>, %arg29: tensor<f32>, %arg30: tensor<f32>, %arg31: tensor<f32>, %arg32: tensor<f32>, %arg33: tensor<f32>, %arg34: tensor<f32>, %arg35: tensor<f32>, %arg36: tensor<f32>, %arg37: tensor<f32>, %arg38: tensor<f32>, %arg39: tensor<f32>, %arg40: tensor<f32>, %arg41: tensor<f32>, %arg42: tensor<f32>, %arg43: tensor<f32>, %arg44: tensor<f32>, %arg45: tensor<f32>, %arg46: tensor<f32>, %arg47: tensor<f32>, %arg48: tensor<f32>, %arg49: tensor<f32>, %arg50: tensor<f32>, %arg51: tensor<f32>, %arg52: tensor<f32>, %arg53: tensor<f32>, %arg54: tensor<f32>, %arg55: tensor<f32>, %arg56: tensor<f32>, %arg57: tensor<f32>, %arg58: tensor<f32>, %arg59: tensor<f32>, %arg60: tensor<f32>, %arg61: tensor<f32>, %arg62: tensor<f32>, %arg63: tensor<f32>, %arg64: tensor<f32>, %arg65: tensor<f32>, %arg66: tensor<f32>, %arg67: tensor<f32>, %arg68: tensor<f32>, %arg69: tensor<f32>, %arg70: tensor<f32>, %arg71: tensor<f32>, %arg72: tensor<f32>, %arg73: tensor<f32>, %arg74: tensor<f32>, %arg75: tensor<f32>, %arg76: tensor<f32>, %arg77: tensor<7x4x9x9xf32> {ga.batch = 0 : i64}, %arg78: tensor<7xi64> {ga.batch = 0 : i64}) -> (tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>, tensor<3x6xf32>, tensor<3xf32>, tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>, tensor<3x6xf32>, tensor<3xf32>, tensor<f32>) {
    %c-100_i64 = arith.constant -100 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<-1.000000e+00> : tensor<f32>
    %cst_2 = arith.constant dense<1.000000e+00> : tensor<f32>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_4 = arith.constant 9.000000e+00 : f32
    %c4 = arith.constant 4 : index
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %cst_5 = arith.constant dense<1> : tensor<i64>
    %padded = tensor.pad %arg77 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x4x9x9xf32> to tensor<7x4x11x11xf32>
    %0 = tensor.empty() : tensor<7x4x9x9xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<7x4x9x9xf32>) -> tensor<7x4x9x9xf32>
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
    %2 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %collapsed : tensor<7x4x11x11xf32>, tensor<4x3x3xf32>) outs(%1 : tensor<7x4x9x9xf32>) -> tensor<7x4x9x9xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<7x4x9x9xf32>) outs(%0 : tensor<7x4x9x9xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = math.tanh %in : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x9x9xf32>
    %padded_6 = tensor.pad %3 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x4x9x9xf32> to tensor<7x4x11x11xf32>
    %4 = tensor.empty() : tensor<7x4x5x5xf32>
    %broadcasted = linalg.broadcast ins(%arg2 : tensor<4xf32>) outs(%4 : tensor<7x4x5x5xf32>) dimensions = [0, 2, 3] 
    %collapsed_7 = tensor.collapse_shape %arg1 [[0, 1], [2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
    %5 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded_6, %collapsed_7 : tensor<7x4x11x11xf32>, tensor<4x3x3xf32>) outs(%broadcasted : tensor<7x4x5x5xf32>) -> tensor<7x4x5x5xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<7x4x5x5xf32>) outs(%4 : tensor<7x4x5x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = math.tanh %in : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x5x5xf32>
    %padded_8 = tensor.pad %6 low[0, 0, 2, 2] high[0, 0, 2, 2] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x4x5x5xf32> to tensor<7x4x9x9xf32>
    %broadcasted_9 = linalg.broadcast ins(%arg4 : tensor<4xf32>) outs(%4 : tensor<7x4x5x5xf32>) dimensions = [0, 2, 3] 
    %collapsed_10 = tensor.collapse_shape %arg3 [[0, 1], [2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
    %7 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded_8, %collapsed_10 : tensor<7x4x9x9xf32>, tensor<4x3x3xf32>) outs(%broadcasted_9 : tensor<7x4x5x5xf32>) -> tensor<7x4x5x5xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7 : tensor<7x4x5x5xf32>) outs(%4 : tensor<7x4x5x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = math.tanh %in : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x5x5xf32>
    %padded_11 = tensor.pad %8 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x4x5x5xf32> to tensor<7x4x7x7xf32>
    %9 = tensor.empty() : tensor<7x6x5x5xf32>
    %broadcasted_12 = linalg.broadcast ins(%arg6 : tensor<6xf32>) outs(%9 : tensor<7x6x5x5xf32>) dimensions = [0, 2, 3] 
    %expanded = tensor.expand_shape %padded_11 [[0], [1, 2], [3], [4]] output_shape [7, 2, 2, 7, 7] : tensor<7x4x7x7xf32> into tensor<7x2x2x7x7xf32>
    %expanded_13 = tensor.expand_shape %arg5 [[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
    %expanded_14 = tensor.expand_shape %broadcasted_12 [[0], [1, 2], [3], [4]] output_shape [7, 2, 3, 5, 5] : tensor<7x6x5x5xf32> into tensor<7x2x3x5x5xf32>
    %10 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%expanded, %expanded_13 : tensor<7x2x2x7x7xf32>, tensor<2x3x2x3x3xf32>) outs(%expanded_14 : tensor<7x2x3x5x5xf32>) -> tensor<7x2x3x5x5xf32>
    %collapsed_15 = tensor.collapse_shape %10 [[0], [1, 2], [3], [4]] : tensor<7x2x3x5x5xf32> into tensor<7x6x5x5xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_15 : tensor<7x6x5x5xf32>) outs(%9 : tensor<7x6x5x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = math.tanh %in : f32
      linalg.yield %212 : f32
    } -> tensor<7x6x5x5xf32>
    %padded_16 = tensor.pad %11 low[0, 0, 2, 2] high[0, 0, 2, 2] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x6x5x5xf32> to tensor<7x6x9x9xf32>
    %12 = tensor.empty() : tensor<7x6x3x3xf32>
    %broadcasted_17 = linalg.broadcast ins(%arg8 : tensor<6xf32>) outs(%12 : tensor<7x6x3x3xf32>) dimensions = [0, 2, 3] 
    %collapsed_18 = tensor.collapse_shape %arg7 [[0, 1], [2], [3]] : tensor<6x1x5x5xf32> into tensor<6x5x5xf32>
    %13 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded_16, %collapsed_18 : tensor<7x6x9x9xf32>, tensor<6x5x5xf32>) outs(%broadcasted_17 : tensor<7x6x3x3xf32>) -> tensor<7x6x3x3xf32>
    %14 = tensor.empty() : tensor<7x6xf32>
    %15 = linalg.fill ins(%cst : f32) outs(%14 : tensor<7x6xf32>) -> tensor<7x6xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%13 : tensor<7x6x3x3xf32>) outs(%15 : tensor<7x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<7x6xf32>
    %17 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%16 : tensor<7x6xf32>) outs(%14 : tensor<7x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.divf %in, %cst_4 : f32
      linalg.yield %212 : f32
    } -> tensor<7x6xf32>
    %18 = tensor.empty() : tensor<6x3xf32>
    %transposed = linalg.transpose ins(%arg9 : tensor<3x6xf32>) outs(%18 : tensor<6x3xf32>) permutation = [1, 0] 
    %19 = tensor.empty() : tensor<7x3xf32>
    %20 = linalg.fill ins(%cst : f32) outs(%19 : tensor<7x3xf32>) -> tensor<7x3xf32>
    %21 = linalg.matmul ins(%17, %transposed : tensor<7x6xf32>, tensor<6x3xf32>) outs(%20 : tensor<7x3xf32>) -> tensor<7x3xf32>
    %22 = linalg.generic {indexing_maps = [#map3, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg10, %21 : tensor<3xf32>, tensor<7x3xf32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %23 = tensor.empty() : tensor<7xi64>
    %24 = linalg.fill ins(%c0_i64 : i64) outs(%23 : tensor<7xi64>) -> tensor<7xi64>
    %25 = tensor.empty() : tensor<7xf32>
    %26 = linalg.fill ins(%cst_0 : f32) outs(%25 : tensor<7xf32>) -> tensor<7xf32>
    %27:2 = linalg.generic {indexing_maps = [#map2, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%22 : tensor<7x3xf32>) outs(%26, %24 : tensor<7xf32>, tensor<7xi64>) {
    ^bb0(%in: f32, %out: f32, %out_87: i64):
      %212 = linalg.index 1 : index
      %213 = arith.index_cast %212 : index to i64
      %214 = arith.maximumf %in, %out : f32
      %215 = arith.cmpf ogt, %in, %out : f32
      %216 = arith.select %215, %213, %out_87 : i64
      linalg.yield %214, %216 : f32, i64
    } -> (tensor<7xf32>, tensor<7xi64>)
    %expanded_19 = tensor.expand_shape %27#0 [[0, 1]] output_shape [7, 1] : tensor<7xf32> into tensor<7x1xf32>
    %28 = linalg.generic {indexing_maps = [#map2, #map5, #map2], iterator_types = ["parallel", "parallel"]} ins(%22, %expanded_19 : tensor<7x3xf32>, tensor<7x1xf32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.subf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %29 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%28 : tensor<7x3xf32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = math.exp %in : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %30 = tensor.empty() : tensor<7x1xf32>
    %31 = linalg.fill ins(%cst : f32) outs(%30 : tensor<7x1xf32>) -> tensor<7x1xf32>
    %32 = linalg.generic {indexing_maps = [#map2, #map5], iterator_types = ["parallel", "reduction"]} ins(%29 : tensor<7x3xf32>) outs(%31 : tensor<7x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<7x1xf32>
    %33 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%32 : tensor<7x1xf32>) outs(%30 : tensor<7x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = math.log %in : f32
      linalg.yield %212 : f32
    } -> tensor<7x1xf32>
    %34 = linalg.generic {indexing_maps = [#map2, #map5, #map2], iterator_types = ["parallel", "parallel"]} ins(%28, %33 : tensor<7x3xf32>, tensor<7x1xf32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.subf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %35 = tensor.empty() : tensor<7xi1>
    %36 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel"]} ins(%arg78 : tensor<7xi64>) outs(%35 : tensor<7xi1>) {
    ^bb0(%in: i64, %out: i1):
      %212 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %212 : i1
    } -> tensor<7xi1>
    %37 = tensor.empty() : tensor<3xi64>
    %38 = linalg.generic {indexing_maps = [#map6], iterator_types = ["parallel"]} outs(%37 : tensor<3xi64>) {
    ^bb0(%out: i64):
      %212 = linalg.index 0 : index
      %213 = arith.index_cast %212 : index to i64
      linalg.yield %213 : i64
    } -> tensor<3xi64>
    %expanded_20 = tensor.expand_shape %38 [[0, 1]] output_shape [1, 3] : tensor<3xi64> into tensor<1x3xi64>
    %expanded_21 = tensor.expand_shape %arg78 [[0, 1]] output_shape [7, 1] : tensor<7xi64> into tensor<7x1xi64>
    %39 = tensor.empty() : tensor<7x3xi1>
    %40 = linalg.generic {indexing_maps = [#map5, #map7, #map2], iterator_types = ["parallel", "parallel"]} ins(%expanded_21, %expanded_20 : tensor<7x1xi64>, tensor<1x3xi64>) outs(%39 : tensor<7x3xi1>) {
    ^bb0(%in: i64, %in_87: i64, %out: i1):
      %212 = arith.cmpi eq, %in, %in_87 : i64
      linalg.yield %212 : i1
    } -> tensor<7x3xi1>
    %41 = linalg.generic {indexing_maps = [#map2, #map2, #map8, #map2], iterator_types = ["parallel", "parallel"]} ins(%40, %34, %cst_3 : tensor<7x3xi1>, tensor<7x3xf32>, tensor<f32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: i1, %in_87: f32, %in_88: f32, %out: f32):
      %212 = arith.select %in, %in_87, %in_88 : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %42 = linalg.fill ins(%cst : f32) outs(%25 : tensor<7xf32>) -> tensor<7xf32>
    %43 = linalg.generic {indexing_maps = [#map2, #map4], iterator_types = ["parallel", "reduction"]} ins(%41 : tensor<7x3xf32>) outs(%42 : tensor<7xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<7xf32>
    %44 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel"]} ins(%43 : tensor<7xf32>) outs(%25 : tensor<7xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.negf %in : f32
      linalg.yield %212 : f32
    } -> tensor<7xf32>
    %45 = linalg.generic {indexing_maps = [#map6, #map6, #map9, #map6], iterator_types = ["parallel"]} ins(%36, %44, %cst_3 : tensor<7xi1>, tensor<7xf32>, tensor<f32>) outs(%25 : tensor<7xf32>) {
    ^bb0(%in: i1, %in_87: f32, %in_88: f32, %out: f32):
      %212 = arith.select %in, %in_87, %in_88 : f32
      linalg.yield %212 : f32
    } -> tensor<7xf32>
    %46 = tensor.empty() : tensor<i64>
    %47 = linalg.fill ins(%c0_i64 : i64) outs(%46 : tensor<i64>) -> tensor<i64>
    %48 = linalg.generic {indexing_maps = [#map6, #map9], iterator_types = ["reduction"]} ins(%36 : tensor<7xi1>) outs(%47 : tensor<i64>) {
    ^bb0(%in: i1, %out: i64):
      %212 = arith.extui %in : i1 to i64
      %213 = arith.addi %212, %out : i64
      linalg.yield %213 : i64
    } -> tensor<i64>
    %49 = tensor.empty() : tensor<f32>
    %50 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = []} ins(%48 : tensor<i64>) outs(%49 : tensor<f32>) {
    ^bb0(%in: i64, %out: f32):
      %212 = arith.sitofp %in : i64 to f32
      linalg.yield %212 : f32
    } -> tensor<f32>
    %51 = linalg.fill ins(%cst : f32) outs(%49 : tensor<f32>) -> tensor<f32>
    %52 = linalg.generic {indexing_maps = [#map6, #map9], iterator_types = ["reduction"]} ins(%45 : tensor<7xf32>) outs(%51 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<f32>
    %53 = linalg.generic {indexing_maps = [#map10, #map10, #map10], iterator_types = []} ins(%52, %50 : tensor<f32>, tensor<f32>) outs(%49 : tensor<f32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.divf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<f32>
    %54 = linalg.generic {indexing_maps = [#map10, #map10, #map10], iterator_types = []} ins(%cst_2, %50 : tensor<f32>, tensor<f32>) outs(%49 : tensor<f32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.divf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<f32>
    %55 = linalg.generic {indexing_maps = [#map2, #map8, #map8, #map2], iterator_types = ["parallel", "parallel"]} ins(%40, %cst_1, %cst_3 : tensor<7x3xi1>, tensor<f32>, tensor<f32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: i1, %in_87: f32, %in_88: f32, %out: f32):
      %212 = arith.select %in, %in_87, %in_88 : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %56 = tensor.empty() : tensor<7x1xi1>
    %57 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%expanded_21 : tensor<7x1xi64>) outs(%56 : tensor<7x1xi1>) {
    ^bb0(%in: i64, %out: i1):
      %212 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %212 : i1
    } -> tensor<7x1xi1>
    %58 = linalg.generic {indexing_maps = [#map2, #map8, #map8, #map2], iterator_types = ["parallel", "parallel"]} ins(%57, %54, %cst_3 : tensor<7x1xi1>, tensor<f32>, tensor<f32>) outs(%30 : tensor<7x1xf32>) {
    ^bb0(%in: i1, %in_87: f32, %in_88: f32, %out: f32):
      %212 = arith.select %in, %in_87, %in_88 : f32
      linalg.yield %212 : f32
    } -> tensor<7x1xf32>
    %59 = linalg.generic {indexing_maps = [#map2, #map5, #map2], iterator_types = ["parallel", "parallel"]} ins(%55, %58 : tensor<7x3xf32>, tensor<7x1xf32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %60 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%34 : tensor<7x3xf32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = math.exp %in : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %61 = linalg.generic {indexing_maps = [#map2, #map5], iterator_types = ["parallel", "reduction"]} ins(%59 : tensor<7x3xf32>) outs(%31 : tensor<7x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<7x1xf32>
    %62 = linalg.generic {indexing_maps = [#map2, #map5, #map2], iterator_types = ["parallel", "parallel"]} ins(%60, %61 : tensor<7x3xf32>, tensor<7x1xf32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %63 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%59, %62 : tensor<7x3xf32>, tensor<7x3xf32>) outs(%19 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.subf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x3xf32>
    %64 = linalg.matmul ins(%63, %arg9 : tensor<7x3xf32>, tensor<3x6xf32>) outs(%15 : tensor<7x6xf32>) -> tensor<7x6xf32>
    %65 = tensor.empty() : tensor<3x7xf32>
    %transposed_22 = linalg.transpose ins(%63 : tensor<7x3xf32>) outs(%65 : tensor<3x7xf32>) permutation = [1, 0] 
    %66 = tensor.empty() : tensor<3x6xf32>
    %67 = linalg.fill ins(%cst : f32) outs(%66 : tensor<3x6xf32>) -> tensor<3x6xf32>
    %68 = linalg.matmul ins(%transposed_22, %17 : tensor<3x7xf32>, tensor<7x6xf32>) outs(%67 : tensor<3x6xf32>) -> tensor<3x6xf32>
    %69 = tensor.empty() : tensor<1x3xf32>
    %70 = linalg.fill ins(%cst : f32) outs(%69 : tensor<1x3xf32>) -> tensor<1x3xf32>
    %71 = linalg.generic {indexing_maps = [#map2, #map7], iterator_types = ["reduction", "parallel"]} ins(%63 : tensor<7x3xf32>) outs(%70 : tensor<1x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<1x3xf32>
    %collapsed_23 = tensor.collapse_shape %71 [[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
    %72 = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%64 : tensor<7x6xf32>) outs(%12 : tensor<7x6x3x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<7x6x3x3xf32>
    %73 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%72 : tensor<7x6x3x3xf32>) outs(%12 : tensor<7x6x3x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.divf %in, %cst_4 : f32
      linalg.yield %212 : f32
    } -> tensor<7x6x3x3xf32>
    %expanded_24 = tensor.expand_shape %73 [[0], [1], [2], [3, 4, 5]] output_shape [7, 6, 3, 1, 3, 1] : tensor<7x6x3x3xf32> into tensor<7x6x3x1x3x1xf32>
    %padded_25 = tensor.pad %expanded_24 low[0, 0, 0, 0, 0, 0] high[0, 0, 0, 1, 0, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index, %arg83: index, %arg84: index):
      tensor.yield %cst : f32
    } : tensor<7x6x3x1x3x1xf32> to tensor<7x6x3x2x3x2xf32>
    %collapsed_26 = tensor.collapse_shape %padded_25 [[0], [1], [2, 3], [4, 5]] : tensor<7x6x3x2x3x2xf32> into tensor<7x6x6x6xf32>
    %extracted_slice = tensor.extract_slice %collapsed_26[0, 0, 0, 0] [7, 6, 5, 6] [1, 1, 1, 1] : tensor<7x6x6x6xf32> to tensor<7x6x5x6xf32>
    %extracted_slice_27 = tensor.extract_slice %extracted_slice[0, 0, 0, 0] [7, 6, 5, 5] [1, 1, 1, 1] : tensor<7x6x5x6xf32> to tensor<7x6x5x5xf32>
    %padded_28 = tensor.pad %extracted_slice_27 low[0, 0, 2, 2] high[0, 0, 2, 2] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x6x5x5xf32> to tensor<7x6x9x9xf32>
    %expanded_29 = tensor.expand_shape %arg7 [[0], [1], [2, 3], [4]] output_shape [6, 1, 1, 5, 5] : tensor<6x1x5x5xf32> into tensor<6x1x1x5x5xf32>
    %74 = tensor.empty() : tensor<6x1x1x5x5xf32>
    %transposed_30 = linalg.transpose ins(%expanded_29 : tensor<6x1x1x5x5xf32>) outs(%74 : tensor<6x1x1x5x5xf32>) permutation = [0, 2, 1, 3, 4] 
    %collapsed_31 = tensor.collapse_shape %transposed_30 [[0], [1], [2, 3], [4]] : tensor<6x1x1x5x5xf32> into tensor<6x1x5x5xf32>
    %75 = tensor.empty() : tensor<6x1x5x5xf32>
    %76 = linalg.fill ins(%cst : f32) outs(%75 : tensor<6x1x5x5xf32>) -> tensor<6x1x5x5xf32>
    %77 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_31 : tensor<6x1x5x5xf32>) outs(%76 : tensor<6x1x5x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = linalg.index 0 : index
      %213 = linalg.index 2 : index
      %214 = linalg.index 3 : index
      %215 = arith.subi %c4, %213 : index
      %216 = arith.subi %c4, %214 : index
      %extracted = tensor.extract %collapsed_31[%212, %c0, %215, %216] : tensor<6x1x5x5xf32>
      linalg.yield %extracted : f32
    } -> tensor<6x1x5x5xf32>
    %78 = linalg.fill ins(%cst : f32) outs(%9 : tensor<7x6x5x5xf32>) -> tensor<7x6x5x5xf32>
    %collapsed_32 = tensor.collapse_shape %77 [[0, 1], [2], [3]] : tensor<6x1x5x5xf32> into tensor<6x5x5xf32>
    %79 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded_28, %collapsed_32 : tensor<7x6x9x9xf32>, tensor<6x5x5xf32>) outs(%78 : tensor<7x6x5x5xf32>) -> tensor<7x6x5x5xf32>
    %expanded_33 = tensor.expand_shape %padded_16 [[0], [1], [2, 3], [4]] output_shape [7, 6, 1, 9, 9] : tensor<7x6x9x9xf32> into tensor<7x6x1x9x9xf32>
    %80 = tensor.empty() : tensor<1x6x7x9x9xf32>
    %transposed_34 = linalg.transpose ins(%expanded_33 : tensor<7x6x1x9x9xf32>) outs(%80 : tensor<1x6x7x9x9xf32>) permutation = [2, 1, 0, 3, 4] 
    %expanded_35 = tensor.expand_shape %73 [[0], [1], [2, 3], [4]] output_shape [7, 6, 1, 3, 3] : tensor<7x6x3x3xf32> into tensor<7x6x1x3x3xf32>
    %81 = tensor.empty() : tensor<6x1x7x3x3xf32>
    %transposed_36 = linalg.transpose ins(%expanded_35 : tensor<7x6x1x3x3xf32>) outs(%81 : tensor<6x1x7x3x3xf32>) permutation = [1, 2, 0, 3, 4] 
    %82 = tensor.empty() : tensor<1x6x5x5xf32>
    %expanded_37 = tensor.expand_shape %82 [[0], [1, 2], [3], [4]] output_shape [1, 6, 1, 5, 5] : tensor<1x6x5x5xf32> into tensor<1x6x1x5x5xf32>
    %83 = linalg.fill ins(%cst : f32) outs(%expanded_37 : tensor<1x6x1x5x5xf32>) -> tensor<1x6x1x5x5xf32>
    %84 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%transposed_34, %transposed_36 : tensor<1x6x7x9x9xf32>, tensor<6x1x7x3x3xf32>) outs(%83 : tensor<1x6x1x5x5xf32>) -> tensor<1x6x1x5x5xf32>
    %collapsed_38 = tensor.collapse_shape %84 [[0], [1, 2], [3], [4]] : tensor<1x6x1x5x5xf32> into tensor<1x6x5x5xf32>
    %transposed_39 = linalg.transpose ins(%collapsed_38 : tensor<1x6x5x5xf32>) outs(%75 : tensor<6x1x5x5xf32>) permutation = [1, 0, 2, 3] 
    %85 = tensor.empty() : tensor<6xf32>
    %86 = linalg.fill ins(%cst : f32) outs(%85 : tensor<6xf32>) -> tensor<6xf32>
    %87 = linalg.generic {indexing_maps = [#map, #map11], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%73 : tensor<7x6x3x3xf32>) outs(%86 : tensor<6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %88 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %11 : tensor<7x6x5x5xf32>, tensor<7x6x5x5xf32>) outs(%9 : tensor<7x6x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x6x5x5xf32>
    %89 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_5, %88 : tensor<i64>, tensor<7x6x5x5xf32>) outs(%9 : tensor<7x6x5x5xf32>) {
    ^bb0(%in: i64, %in_87: f32, %out: f32):
      %212 = arith.sitofp %in : i64 to f32
      %213 = arith.subf %212, %in_87 : f32
      linalg.yield %213 : f32
    } -> tensor<7x6x5x5xf32>
    %90 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%79, %89 : tensor<7x6x5x5xf32>, tensor<7x6x5x5xf32>) outs(%9 : tensor<7x6x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x6x5x5xf32>
    %padded_40 = tensor.pad %90 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x6x5x5xf32> to tensor<7x6x7x7xf32>
    %91 = tensor.empty() : tensor<2x2x3x3x3xf32>
    %transposed_41 = linalg.transpose ins(%expanded_13 : tensor<2x3x2x3x3xf32>) outs(%91 : tensor<2x2x3x3x3xf32>) permutation = [0, 2, 1, 3, 4] 
    %collapsed_42 = tensor.collapse_shape %transposed_41 [[0, 1], [2], [3], [4]] : tensor<2x2x3x3x3xf32> into tensor<4x3x3x3xf32>
    %92 = tensor.empty() : tensor<4x3x3x3xf32>
    %93 = linalg.fill ins(%cst : f32) outs(%92 : tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32>
    %94 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_42 : tensor<4x3x3x3xf32>) outs(%93 : tensor<4x3x3x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = linalg.index 0 : index
      %213 = linalg.index 1 : index
      %214 = linalg.index 2 : index
      %215 = linalg.index 3 : index
      %216 = arith.subi %c2, %214 : index
      %217 = arith.subi %c2, %215 : index
      %extracted = tensor.extract %collapsed_42[%212, %213, %216, %217] : tensor<4x3x3x3xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x3x3x3xf32>
    %expanded_43 = tensor.expand_shape %padded_40 [[0], [1, 2], [3], [4]] output_shape [7, 2, 3, 7, 7] : tensor<7x6x7x7xf32> into tensor<7x2x3x7x7xf32>
    %expanded_44 = tensor.expand_shape %94 [[0, 1], [2], [3], [4]] output_shape [2, 2, 3, 3, 3] : tensor<4x3x3x3xf32> into tensor<2x2x3x3x3xf32>
    %expanded_45 = tensor.expand_shape %4 [[0], [1, 2], [3], [4]] output_shape [7, 2, 2, 5, 5] : tensor<7x4x5x5xf32> into tensor<7x2x2x5x5xf32>
    %95 = linalg.fill ins(%cst : f32) outs(%expanded_45 : tensor<7x2x2x5x5xf32>) -> tensor<7x2x2x5x5xf32>
    %96 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%expanded_43, %expanded_44 : tensor<7x2x3x7x7xf32>, tensor<2x2x3x3x3xf32>) outs(%95 : tensor<7x2x2x5x5xf32>) -> tensor<7x2x2x5x5xf32>
    %collapsed_46 = tensor.collapse_shape %96 [[0], [1, 2], [3], [4]] : tensor<7x2x2x5x5xf32> into tensor<7x4x5x5xf32>
    %97 = tensor.empty() : tensor<2x2x7x7x7xf32>
    %transposed_47 = linalg.transpose ins(%expanded : tensor<7x2x2x7x7xf32>) outs(%97 : tensor<2x2x7x7x7xf32>) permutation = [2, 1, 0, 3, 4] 
    %expanded_48 = tensor.expand_shape %90 [[0], [1, 2], [3], [4]] output_shape [7, 2, 3, 5, 5] : tensor<7x6x5x5xf32> into tensor<7x2x3x5x5xf32>
    %98 = tensor.empty() : tensor<2x3x7x5x5xf32>
    %transposed_49 = linalg.transpose ins(%expanded_48 : tensor<7x2x3x5x5xf32>) outs(%98 : tensor<2x3x7x5x5xf32>) permutation = [1, 2, 0, 3, 4] 
    %99 = tensor.empty() : tensor<2x6x3x3xf32>
    %expanded_50 = tensor.expand_shape %99 [[0], [1, 2], [3], [4]] output_shape [2, 2, 3, 3, 3] : tensor<2x6x3x3xf32> into tensor<2x2x3x3x3xf32>
    %100 = linalg.fill ins(%cst : f32) outs(%expanded_50 : tensor<2x2x3x3x3xf32>) -> tensor<2x2x3x3x3xf32>
    %101 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%transposed_47, %transposed_49 : tensor<2x2x7x7x7xf32>, tensor<2x3x7x5x5xf32>) outs(%100 : tensor<2x2x3x3x3xf32>) -> tensor<2x2x3x3x3xf32>
    %collapsed_51 = tensor.collapse_shape %101 [[0], [1, 2], [3], [4]] : tensor<2x2x3x3x3xf32> into tensor<2x6x3x3xf32>
    %102 = tensor.empty() : tensor<6x2x3x3xf32>
    %transposed_52 = linalg.transpose ins(%collapsed_51 : tensor<2x6x3x3xf32>) outs(%102 : tensor<6x2x3x3xf32>) permutation = [1, 0, 2, 3] 
    %103 = linalg.generic {indexing_maps = [#map, #map11], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%90 : tensor<7x6x5x5xf32>) outs(%86 : tensor<6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %104 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %8 : tensor<7x4x5x5xf32>, tensor<7x4x5x5xf32>) outs(%4 : tensor<7x4x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x5x5xf32>
    %105 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_5, %104 : tensor<i64>, tensor<7x4x5x5xf32>) outs(%4 : tensor<7x4x5x5xf32>) {
    ^bb0(%in: i64, %in_87: f32, %out: f32):
      %212 = arith.sitofp %in : i64 to f32
      %213 = arith.subf %212, %in_87 : f32
      linalg.yield %213 : f32
    } -> tensor<7x4x5x5xf32>
    %106 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_46, %105 : tensor<7x4x5x5xf32>, tensor<7x4x5x5xf32>) outs(%4 : tensor<7x4x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x5x5xf32>
    %padded_53 = tensor.pad %106 low[0, 0, 2, 2] high[0, 0, 2, 2] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x4x5x5xf32> to tensor<7x4x9x9xf32>
    %expanded_54 = tensor.expand_shape %arg3 [[0], [1], [2, 3], [4]] output_shape [4, 1, 1, 3, 3] : tensor<4x1x3x3xf32> into tensor<4x1x1x3x3xf32>
    %107 = tensor.empty() : tensor<4x1x1x3x3xf32>
    %transposed_55 = linalg.transpose ins(%expanded_54 : tensor<4x1x1x3x3xf32>) outs(%107 : tensor<4x1x1x3x3xf32>) permutation = [0, 2, 1, 3, 4] 
    %collapsed_56 = tensor.collapse_shape %transposed_55 [[0], [1], [2, 3], [4]] : tensor<4x1x1x3x3xf32> into tensor<4x1x3x3xf32>
    %108 = tensor.empty() : tensor<4x1x3x3xf32>
    %109 = linalg.fill ins(%cst : f32) outs(%108 : tensor<4x1x3x3xf32>) -> tensor<4x1x3x3xf32>
    %110 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_56 : tensor<4x1x3x3xf32>) outs(%109 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = linalg.index 0 : index
      %213 = linalg.index 2 : index
      %214 = linalg.index 3 : index
      %215 = arith.subi %c2, %213 : index
      %216 = arith.subi %c2, %214 : index
      %extracted = tensor.extract %collapsed_56[%212, %c0, %215, %216] : tensor<4x1x3x3xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x1x3x3xf32>
    %111 = linalg.fill ins(%cst : f32) outs(%4 : tensor<7x4x5x5xf32>) -> tensor<7x4x5x5xf32>
    %collapsed_57 = tensor.collapse_shape %110 [[0, 1], [2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
    %112 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded_53, %collapsed_57 : tensor<7x4x9x9xf32>, tensor<4x3x3xf32>) outs(%111 : tensor<7x4x5x5xf32>) -> tensor<7x4x5x5xf32>
    %expanded_58 = tensor.expand_shape %padded_8 [[0], [1], [2, 3], [4]] output_shape [7, 4, 1, 9, 9] : tensor<7x4x9x9xf32> into tensor<7x4x1x9x9xf32>
    %113 = tensor.empty() : tensor<1x4x7x9x9xf32>
    %transposed_59 = linalg.transpose ins(%expanded_58 : tensor<7x4x1x9x9xf32>) outs(%113 : tensor<1x4x7x9x9xf32>) permutation = [2, 1, 0, 3, 4] 
    %expanded_60 = tensor.expand_shape %106 [[0], [1], [2, 3], [4]] output_shape [7, 4, 1, 5, 5] : tensor<7x4x5x5xf32> into tensor<7x4x1x5x5xf32>
    %114 = tensor.empty() : tensor<4x1x7x5x5xf32>
    %transposed_61 = linalg.transpose ins(%expanded_60 : tensor<7x4x1x5x5xf32>) outs(%114 : tensor<4x1x7x5x5xf32>) permutation = [1, 2, 0, 3, 4] 
    %115 = tensor.empty() : tensor<1x4x3x3xf32>
    %expanded_62 = tensor.expand_shape %115 [[0], [1, 2], [3], [4]] output_shape [1, 4, 1, 3, 3] : tensor<1x4x3x3xf32> into tensor<1x4x1x3x3xf32>
    %116 = linalg.fill ins(%cst : f32) outs(%expanded_62 : tensor<1x4x1x3x3xf32>) -> tensor<1x4x1x3x3xf32>
    %117 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%transposed_59, %transposed_61 : tensor<1x4x7x9x9xf32>, tensor<4x1x7x5x5xf32>) outs(%116 : tensor<1x4x1x3x3xf32>) -> tensor<1x4x1x3x3xf32>
    %collapsed_63 = tensor.collapse_shape %117 [[0], [1, 2], [3], [4]] : tensor<1x4x1x3x3xf32> into tensor<1x4x3x3xf32>
    %transposed_64 = linalg.transpose ins(%collapsed_63 : tensor<1x4x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) permutation = [1, 0, 2, 3] 
    %118 = tensor.empty() : tensor<4xf32>
    %119 = linalg.fill ins(%cst : f32) outs(%118 : tensor<4xf32>) -> tensor<4xf32>
    %120 = linalg.generic {indexing_maps = [#map, #map11], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%106 : tensor<7x4x5x5xf32>) outs(%119 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %121 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %6 : tensor<7x4x5x5xf32>, tensor<7x4x5x5xf32>) outs(%4 : tensor<7x4x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x5x5xf32>
    %122 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_5, %121 : tensor<i64>, tensor<7x4x5x5xf32>) outs(%4 : tensor<7x4x5x5xf32>) {
    ^bb0(%in: i64, %in_87: f32, %out: f32):
      %212 = arith.sitofp %in : i64 to f32
      %213 = arith.subf %212, %in_87 : f32
      linalg.yield %213 : f32
    } -> tensor<7x4x5x5xf32>
    %123 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%112, %122 : tensor<7x4x5x5xf32>, tensor<7x4x5x5xf32>) outs(%4 : tensor<7x4x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x5x5xf32>
    %expanded_65 = tensor.expand_shape %123 [[0], [1], [2], [3, 4, 5]] output_shape [7, 4, 5, 1, 5, 1] : tensor<7x4x5x5xf32> into tensor<7x4x5x1x5x1xf32>
    %padded_66 = tensor.pad %expanded_65 low[0, 0, 0, 0, 0, 0] high[0, 0, 0, 1, 0, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index, %arg83: index, %arg84: index):
      tensor.yield %cst : f32
    } : tensor<7x4x5x1x5x1xf32> to tensor<7x4x5x2x5x2xf32>
    %collapsed_67 = tensor.collapse_shape %padded_66 [[0], [1], [2, 3], [4, 5]] : tensor<7x4x5x2x5x2xf32> into tensor<7x4x10x10xf32>
    %extracted_slice_68 = tensor.extract_slice %collapsed_67[0, 0, 0, 0] [7, 4, 9, 10] [1, 1, 1, 1] : tensor<7x4x10x10xf32> to tensor<7x4x9x10xf32>
    %extracted_slice_69 = tensor.extract_slice %extracted_slice_68[0, 0, 0, 0] [7, 4, 9, 9] [1, 1, 1, 1] : tensor<7x4x9x10xf32> to tensor<7x4x9x9xf32>
    %padded_70 = tensor.pad %extracted_slice_69 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x4x9x9xf32> to tensor<7x4x11x11xf32>
    %expanded_71 = tensor.expand_shape %arg1 [[0], [1], [2, 3], [4]] output_shape [4, 1, 1, 3, 3] : tensor<4x1x3x3xf32> into tensor<4x1x1x3x3xf32>
    %transposed_72 = linalg.transpose ins(%expanded_71 : tensor<4x1x1x3x3xf32>) outs(%107 : tensor<4x1x1x3x3xf32>) permutation = [0, 2, 1, 3, 4] 
    %collapsed_73 = tensor.collapse_shape %transposed_72 [[0], [1], [2, 3], [4]] : tensor<4x1x1x3x3xf32> into tensor<4x1x3x3xf32>
    %124 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_73 : tensor<4x1x3x3xf32>) outs(%109 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = linalg.index 0 : index
      %213 = linalg.index 2 : index
      %214 = linalg.index 3 : index
      %215 = arith.subi %c2, %213 : index
      %216 = arith.subi %c2, %214 : index
      %extracted = tensor.extract %collapsed_73[%212, %c0, %215, %216] : tensor<4x1x3x3xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x1x3x3xf32>
    %collapsed_74 = tensor.collapse_shape %124 [[0, 1], [2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
    %125 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded_70, %collapsed_74 : tensor<7x4x11x11xf32>, tensor<4x3x3xf32>) outs(%1 : tensor<7x4x9x9xf32>) -> tensor<7x4x9x9xf32>
    %expanded_75 = tensor.expand_shape %padded_6 [[0], [1], [2, 3], [4]] output_shape [7, 4, 1, 11, 11] : tensor<7x4x11x11xf32> into tensor<7x4x1x11x11xf32>
    %126 = tensor.empty() : tensor<1x4x7x11x11xf32>
    %transposed_76 = linalg.transpose ins(%expanded_75 : tensor<7x4x1x11x11xf32>) outs(%126 : tensor<1x4x7x11x11xf32>) permutation = [2, 1, 0, 3, 4] 
    %expanded_77 = tensor.expand_shape %123 [[0], [1], [2, 3], [4]] output_shape [7, 4, 1, 5, 5] : tensor<7x4x5x5xf32> into tensor<7x4x1x5x5xf32>
    %transposed_78 = linalg.transpose ins(%expanded_77 : tensor<7x4x1x5x5xf32>) outs(%114 : tensor<4x1x7x5x5xf32>) permutation = [1, 2, 0, 3, 4] 
    %127 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%transposed_76, %transposed_78 : tensor<1x4x7x11x11xf32>, tensor<4x1x7x5x5xf32>) outs(%116 : tensor<1x4x1x3x3xf32>) -> tensor<1x4x1x3x3xf32>
    %collapsed_79 = tensor.collapse_shape %127 [[0], [1, 2], [3], [4]] : tensor<1x4x1x3x3xf32> into tensor<1x4x3x3xf32>
    %transposed_80 = linalg.transpose ins(%collapsed_79 : tensor<1x4x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) permutation = [1, 0, 2, 3] 
    %128 = linalg.generic {indexing_maps = [#map, #map11], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%123 : tensor<7x4x5x5xf32>) outs(%119 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %212 = arith.addf %in, %out : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %129 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3, %3 : tensor<7x4x9x9xf32>, tensor<7x4x9x9xf32>) outs(%0 : tensor<7x4x9x9xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x9x9xf32>
    %130 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_5, %129 : tensor<i64>, tensor<7x4x9x9xf32>) outs(%0 : tensor<7x4x9x9xf32>) {
    ^bb0(%in: i64, %in_87: f32, %out: f32):
      %212 = arith.sitofp %in : i64 to f32
      %213 = arith.subf %212, %in_87 : f32
      linalg.yield %213 : f32
    } -> tensor<7x4x9x9xf32>
    %131 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%125, %130 : tensor<7x4x9x9xf32>, tensor<7x4x9x9xf32>) outs(%0 : tensor<7x4x9x9xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<7x4x9x9xf32>
    %expanded_81 = tensor.expand_shape %padded [[0], [1], [2, 3], [4]] output_shape [7, 4, 1, 11, 11] : tensor<7x4x11x11xf32> into tensor<7x4x1x11x11xf32>
    %transposed_82 = linalg.transpose ins(%expanded_81 : tensor<7x4x1x11x11xf32>) outs(%126 : tensor<1x4x7x11x11xf32>) permutation = [2, 1, 0, 3, 4] 
    %expanded_83 = tensor.expand_shape %131 [[0], [1], [2, 3], [4]] output_shape [7, 4, 1, 9, 9] : tensor<7x4x9x9xf32> into tensor<7x4x1x9x9xf32>
    %132 = tensor.empty() : tensor<4x1x7x9x9xf32>
    %transposed_84 = linalg.transpose ins(%expanded_83 : tensor<7x4x1x9x9xf32>) outs(%132 : tensor<4x1x7x9x9xf32>) permutation = [1, 2, 0, 3, 4] 
    %133 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%transposed_82, %transposed_84 : tensor<1x4x7x11x11xf32>, tensor<4x1x7x9x9xf32>) outs(%116 : tensor<1x4x1x3x3xf32>) -> tensor<1x4x1x3x3xf32>
    %collapsed_85 = tensor.collapse_shape %133 [[0], [1, 2], [3], [4]] : tensor<1x4x1x3x3xf32> into tensor<1x4x3x3xf32>
    %transposed_86 = linalg.transpose ins(%collapsed_85 : tensor<1x4x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) permutation = [1, 0, 2, 3] 
    %134 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg23, %arg0 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %135 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_86, %134 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %136 = linalg.generic {indexing_maps = [#map, #map12, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg11, %arg24 : tensor<4x1x3x3xf32>, tensor<f32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %137 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg25, %135 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %138 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%136, %137 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %139 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg22, %138 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %140 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %139 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %141 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg28, %arg1 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %142 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_80, %141 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %143 = linalg.generic {indexing_maps = [#map, #map12, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg12, %arg29 : tensor<4x1x3x3xf32>, tensor<f32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %144 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg30, %142 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %145 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%143, %144 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %146 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg27, %145 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %147 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %146 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %148 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg33, %arg2 : tensor<f32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %149 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%128, %148 : tensor<4xf32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %150 = linalg.generic {indexing_maps = [#map6, #map9, #map6], iterator_types = ["parallel"]} ins(%arg13, %arg34 : tensor<4xf32>, tensor<f32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %151 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg35, %149 : tensor<f32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %152 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%150, %151 : tensor<4xf32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %153 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg32, %152 : tensor<f32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %154 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%arg2, %153 : tensor<4xf32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %155 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg38, %arg3 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %156 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_64, %155 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %157 = linalg.generic {indexing_maps = [#map, #map12, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg14, %arg39 : tensor<4x1x3x3xf32>, tensor<f32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %158 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg40, %156 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %159 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%157, %158 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %160 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg37, %159 : tensor<f32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %161 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3, %160 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>) outs(%108 : tensor<4x1x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4x1x3x3xf32>
    %162 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg43, %arg4 : tensor<f32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %163 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%120, %162 : tensor<4xf32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %164 = linalg.generic {indexing_maps = [#map6, #map9, #map6], iterator_types = ["parallel"]} ins(%arg15, %arg44 : tensor<4xf32>, tensor<f32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %165 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg45, %163 : tensor<f32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %166 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%164, %165 : tensor<4xf32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %167 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg42, %166 : tensor<f32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %168 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%arg4, %167 : tensor<4xf32>, tensor<4xf32>) outs(%118 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<4xf32>
    %169 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg48, %arg5 : tensor<f32>, tensor<6x2x3x3xf32>) outs(%102 : tensor<6x2x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x2x3x3xf32>
    %170 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_52, %169 : tensor<6x2x3x3xf32>, tensor<6x2x3x3xf32>) outs(%102 : tensor<6x2x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x2x3x3xf32>
    %171 = linalg.generic {indexing_maps = [#map, #map12, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg16, %arg49 : tensor<6x2x3x3xf32>, tensor<f32>) outs(%102 : tensor<6x2x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x2x3x3xf32>
    %172 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg50, %170 : tensor<f32>, tensor<6x2x3x3xf32>) outs(%102 : tensor<6x2x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x2x3x3xf32>
    %173 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%171, %172 : tensor<6x2x3x3xf32>, tensor<6x2x3x3xf32>) outs(%102 : tensor<6x2x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x2x3x3xf32>
    %174 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg47, %173 : tensor<f32>, tensor<6x2x3x3xf32>) outs(%102 : tensor<6x2x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x2x3x3xf32>
    %175 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg5, %174 : tensor<6x2x3x3xf32>, tensor<6x2x3x3xf32>) outs(%102 : tensor<6x2x3x3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x2x3x3xf32>
    %176 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg53, %arg6 : tensor<f32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %177 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%103, %176 : tensor<6xf32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %178 = linalg.generic {indexing_maps = [#map6, #map9, #map6], iterator_types = ["parallel"]} ins(%arg17, %arg54 : tensor<6xf32>, tensor<f32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %179 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg55, %177 : tensor<f32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %180 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%178, %179 : tensor<6xf32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %181 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg52, %180 : tensor<f32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %182 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%arg6, %181 : tensor<6xf32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %183 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg58, %arg7 : tensor<f32>, tensor<6x1x5x5xf32>) outs(%75 : tensor<6x1x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x1x5x5xf32>
    %184 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_39, %183 : tensor<6x1x5x5xf32>, tensor<6x1x5x5xf32>) outs(%75 : tensor<6x1x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x1x5x5xf32>
    %185 = linalg.generic {indexing_maps = [#map, #map12, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg18, %arg59 : tensor<6x1x5x5xf32>, tensor<f32>) outs(%75 : tensor<6x1x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x1x5x5xf32>
    %186 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg60, %184 : tensor<f32>, tensor<6x1x5x5xf32>) outs(%75 : tensor<6x1x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x1x5x5xf32>
    %187 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%185, %186 : tensor<6x1x5x5xf32>, tensor<6x1x5x5xf32>) outs(%75 : tensor<6x1x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x1x5x5xf32>
    %188 = linalg.generic {indexing_maps = [#map12, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg57, %187 : tensor<f32>, tensor<6x1x5x5xf32>) outs(%75 : tensor<6x1x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x1x5x5xf32>
    %189 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg7, %188 : tensor<6x1x5x5xf32>, tensor<6x1x5x5xf32>) outs(%75 : tensor<6x1x5x5xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6x1x5x5xf32>
    %190 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg63, %arg8 : tensor<f32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %191 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%87, %190 : tensor<6xf32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %192 = linalg.generic {indexing_maps = [#map6, #map9, #map6], iterator_types = ["parallel"]} ins(%arg19, %arg64 : tensor<6xf32>, tensor<f32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %193 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg65, %191 : tensor<f32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %194 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%192, %193 : tensor<6xf32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %195 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg62, %194 : tensor<f32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %196 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%arg8, %195 : tensor<6xf32>, tensor<6xf32>) outs(%85 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<6xf32>
    %197 = linalg.generic {indexing_maps = [#map8, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg68, %arg9 : tensor<f32>, tensor<3x6xf32>) outs(%66 : tensor<3x6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3x6xf32>
    %198 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%68, %197 : tensor<3x6xf32>, tensor<3x6xf32>) outs(%66 : tensor<3x6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3x6xf32>
    %199 = linalg.generic {indexing_maps = [#map2, #map8, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg20, %arg69 : tensor<3x6xf32>, tensor<f32>) outs(%66 : tensor<3x6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3x6xf32>
    %200 = linalg.generic {indexing_maps = [#map8, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg70, %198 : tensor<f32>, tensor<3x6xf32>) outs(%66 : tensor<3x6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3x6xf32>
    %201 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%199, %200 : tensor<3x6xf32>, tensor<3x6xf32>) outs(%66 : tensor<3x6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3x6xf32>
    %202 = linalg.generic {indexing_maps = [#map8, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg67, %201 : tensor<f32>, tensor<3x6xf32>) outs(%66 : tensor<3x6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3x6xf32>
    %203 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg9, %202 : tensor<3x6xf32>, tensor<3x6xf32>) outs(%66 : tensor<3x6xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3x6xf32>
    %204 = tensor.empty() : tensor<3xf32>
    %205 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg73, %arg10 : tensor<f32>, tensor<3xf32>) outs(%204 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3xf32>
    %206 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%collapsed_23, %205 : tensor<3xf32>, tensor<3xf32>) outs(%204 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3xf32>
    %207 = linalg.generic {indexing_maps = [#map6, #map9, #map6], iterator_types = ["parallel"]} ins(%arg21, %arg74 : tensor<3xf32>, tensor<f32>) outs(%204 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3xf32>
    %208 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg75, %206 : tensor<f32>, tensor<3xf32>) outs(%204 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3xf32>
    %209 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%207, %208 : tensor<3xf32>, tensor<3xf32>) outs(%204 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3xf32>
    %210 = linalg.generic {indexing_maps = [#map9, #map6, #map6], iterator_types = ["parallel"]} ins(%arg72, %209 : tensor<f32>, tensor<3xf32>) outs(%204 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.mulf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3xf32>
    %211 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%arg10, %210 : tensor<3xf32>, tensor<3xf32>) outs(%204 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_87: f32, %out: f32):
      %212 = arith.addf %in, %in_87 : f32
      linalg.yield %212 : f32
    } -> tensor<3xf32>
    return %140, %147, %154, %161, %168, %175, %182, %189, %196, %203, %211, %138, %145, %152, %159, %166, %173, %180, %187, %194, %201, %209, %53 : tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>, tensor<3x6xf32>, tensor<3xf32>, tensor<4x1x3x3xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>, tensor<3x6xf32>, tensor<3xf32>, tensor<f32>
  }
}

