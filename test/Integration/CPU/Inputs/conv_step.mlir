#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d1)>
#map5 = affine_map<(d0, d1) -> (d0)>
#map6 = affine_map<(d0, d1) -> (d0, 0)>
#map7 = affine_map<(d0) -> (d0)>
#map8 = affine_map<(d0, d1) -> (0, d1)>
#map9 = affine_map<(d0, d1) -> ()>
#map10 = affine_map<(d0) -> ()>
#map11 = affine_map<() -> ()>
#map12 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 + d4)>
#map13 = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>
#map14 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
#map15 = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d2 + d4)>
#map16 = affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d4)>
#map17 = affine_map<(d0, d1, d2) -> (d1)>
#map18 = affine_map<(d0, d1, d2, d3) -> (d1)>
#map19 = affine_map<(d0, d1, d2, d3) -> ()>
#map20 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map21 = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3, d4)>
#map22 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d5 * 2 + d2, d6 * 2 + d3)>
#map23 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5, d6)>
#map24 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#map25 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d2 * 2 + d5, d3 * 2 + d6)>
#map26 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
#map27 = affine_map<(d0, d1, d2) -> ()>
module {
  func.func @train_step(%arg0: tensor<4x2x3x3xf32>, %arg1: tensor<4x4x3x3xf32>, %arg2: tensor<4xf32>, %arg3: tensor<6x4x2x2xf32>, %arg4: tensor<6xf32>, %arg5: tensor<3x6x1x1xf32>, %arg6: tensor<3xf32>, %arg7: tensor<2x3x2xf32>, %arg8: tensor<2xf32>, %arg9: tensor<3x2xf32>, %arg10: tensor<3xf32>, %arg11: tensor<4x2x3x3xf32>, %arg12: tensor<4x4x3x3xf32>, %arg13: tensor<4xf32>, %arg14: tensor<6x4x2x2xf32>, %arg15: tensor<6xf32>, %arg16: tensor<3x6x1x1xf32>, %arg17: tensor<3xf32>, %arg18: tensor<2x3x2xf32>, %arg19: tensor<2xf32>, %arg20: tensor<3x2xf32>, %arg21: tensor<3xf32>, %arg22: tensor<f32>, %arg23: tensor<f32>, %arg24: tensor<f32>, %arg25: tensor<f32>, %arg26: tensor<f32>, %arg27: tensor<f32>, %arg28: tensor<f32>, %arg29: tensor<f32>, %arg30: tensor<f32>, %arg31: tensor<f32>, %arg32: tensor<f32>, %arg33: tensor<f32>, %arg34: tensor<f32>, %arg35: tensor<f32>, %arg36: tensor<f32>, %arg37: tensor<f32>, %arg38: tensor<f32>, %arg39: tensor<f32>, %arg40: tensor<f32>, %arg41: tensor<f32>, %arg42: tensor<f32>, %arg43: tensor<f32>, %arg44: tensor<f32>, %arg45: tensor<f32>, %arg46: tensor<f32>, %arg47: tensor<f32>, %arg48: tensor<f32>, %arg49: tensor<f32>, %arg50: tensor<f32>, %arg51: tensor<f32>, %arg52: tensor<f32>, %arg53: tensor<f32>, %arg54: tensor<f32>, %arg55: tensor<f32>, %arg56: tensor<f32>, %arg57: tensor<f32>, %arg58: tensor<f32>, %arg59: tensor<f32>, %arg60: tensor<f32>, %arg61: tensor<f32>, %arg62: tensor<f32>, %arg63: tensor<f32>, %arg64: tensor<f32>, %arg65: tensor<f32>, %arg66: tensor<f32>, %arg67: tensor<f32>, %arg68: tensor<f32>, %arg69: tensor<f32>, %arg70: tensor<f32>, %arg71: tensor<f32>, %arg72: tensor<f32>, %arg73: tensor<f32>, %arg74: tensor<f32>, %arg75: tensor<f32>, %arg76: tensor<f32>, %arg77: tensor<7x2x8x8xf32> {ga.batch = 0 : i64}, %arg78: tensor<7xi64> {ga.batch = 0 : i64}) -> (tensor<4x2x3x3xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<6x4x2x2xf32>, tensor<6xf32>, tensor<3x6x1x1xf32>, tensor<3xf32>, tensor<2x3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<4x2x3x3xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<6x4x2x2xf32>, tensor<6xf32>, tensor<3x6x1x1xf32>, tensor<3xf32>, tensor<2x3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<f32>) {
    %c-100_i64 = arith.constant -100 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant dense<-1.000000e+00> : tensor<f32>
    %cst_2 = arith.constant dense<1.000000e+00> : tensor<f32>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_4 = arith.constant 3.000000e+00 : f32
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %cst_5 = arith.constant dense<1> : tensor<i64>
    %padded = tensor.pad %arg77 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x2x8x8xf32> to tensor<7x2x10x10xf32>
    %0 = tensor.empty() : tensor<7x4x4x4xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<7x4x4x4xf32>) -> tensor<7x4x4x4xf32>
    %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %arg0 : tensor<7x2x10x10xf32>, tensor<4x2x3x3xf32>) outs(%1 : tensor<7x4x4x4xf32>) -> tensor<7x4x4x4xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<7x4x4x4xf32>) outs(%0 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = math.tanh %in : f32
      linalg.yield %214 : f32
    } -> tensor<7x4x4x4xf32>
    %padded_6 = tensor.pad %3 low[0, 0, 2, 2] high[0, 0, 2, 2] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x4x4x4xf32> to tensor<7x4x8x8xf32>
    %broadcasted = linalg.broadcast ins(%arg2 : tensor<4xf32>) outs(%0 : tensor<7x4x4x4xf32>) dimensions = [0, 2, 3] 
    %4 = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded_6, %arg1 : tensor<7x4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%broadcasted : tensor<7x4x4x4xf32>) -> tensor<7x4x4x4xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<7x4x4x4xf32>) outs(%0 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = math.tanh %in : f32
      linalg.yield %214 : f32
    } -> tensor<7x4x4x4xf32>
    %6 = tensor.empty() : tensor<7x6x2x2xf32>
    %broadcasted_7 = linalg.broadcast ins(%arg4 : tensor<6xf32>) outs(%6 : tensor<7x6x2x2xf32>) dimensions = [0, 2, 3] 
    %7 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%5, %arg3 : tensor<7x4x4x4xf32>, tensor<6x4x2x2xf32>) outs(%broadcasted_7 : tensor<7x6x2x2xf32>) -> tensor<7x6x2x2xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7 : tensor<7x6x2x2xf32>) outs(%6 : tensor<7x6x2x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = math.tanh %in : f32
      linalg.yield %214 : f32
    } -> tensor<7x6x2x2xf32>
    %9 = tensor.empty() : tensor<7x3x2x2xf32>
    %broadcasted_8 = linalg.broadcast ins(%arg6 : tensor<3xf32>) outs(%9 : tensor<7x3x2x2xf32>) dimensions = [0, 2, 3] 
    %10 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%8, %arg5 : tensor<7x6x2x2xf32>, tensor<3x6x1x1xf32>) outs(%broadcasted_8 : tensor<7x3x2x2xf32>) -> tensor<7x3x2x2xf32>
    %collapsed = tensor.collapse_shape %10 [[0], [1], [2, 3]] : tensor<7x3x2x2xf32> into tensor<7x3x4xf32>
    %11 = tensor.empty() : tensor<7x2x3xf32>
    %broadcasted_9 = linalg.broadcast ins(%arg8 : tensor<2xf32>) outs(%11 : tensor<7x2x3xf32>) dimensions = [0, 2] 
    %12 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%collapsed, %arg7 : tensor<7x3x4xf32>, tensor<2x3x2xf32>) outs(%broadcasted_9 : tensor<7x2x3xf32>) -> tensor<7x2x3xf32>
    %13 = tensor.empty() : tensor<7x2xf32>
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<7x2xf32>) -> tensor<7x2xf32>
    %15 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%12 : tensor<7x2x3xf32>) outs(%14 : tensor<7x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<7x2xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%15 : tensor<7x2xf32>) outs(%13 : tensor<7x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.divf %in, %cst_4 : f32
      linalg.yield %214 : f32
    } -> tensor<7x2xf32>
    %17 = tensor.empty() : tensor<2x3xf32>
    %transposed = linalg.transpose ins(%arg9 : tensor<3x2xf32>) outs(%17 : tensor<2x3xf32>) permutation = [1, 0] 
    %18 = tensor.empty() : tensor<7x3xf32>
    %19 = linalg.fill ins(%cst : f32) outs(%18 : tensor<7x3xf32>) -> tensor<7x3xf32>
    %20 = linalg.matmul ins(%16, %transposed : tensor<7x2xf32>, tensor<2x3xf32>) outs(%19 : tensor<7x3xf32>) -> tensor<7x3xf32>
    %21 = linalg.generic {indexing_maps = [#map4, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%arg10, %20 : tensor<3xf32>, tensor<7x3xf32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %22 = tensor.empty() : tensor<7xi64>
    %23 = linalg.fill ins(%c0_i64 : i64) outs(%22 : tensor<7xi64>) -> tensor<7xi64>
    %24 = tensor.empty() : tensor<7xf32>
    %25 = linalg.fill ins(%cst_0 : f32) outs(%24 : tensor<7xf32>) -> tensor<7xf32>
    %26:2 = linalg.generic {indexing_maps = [#map3, #map5, #map5], iterator_types = ["parallel", "reduction"]} ins(%21 : tensor<7x3xf32>) outs(%25, %23 : tensor<7xf32>, tensor<7xi64>) {
    ^bb0(%in: f32, %out: f32, %out_34: i64):
      %214 = linalg.index 1 : index
      %215 = arith.index_cast %214 : index to i64
      %216 = arith.maximumf %in, %out : f32
      %217 = arith.cmpf ogt, %in, %out : f32
      %218 = arith.select %217, %215, %out_34 : i64
      linalg.yield %216, %218 : f32, i64
    } -> (tensor<7xf32>, tensor<7xi64>)
    %expanded = tensor.expand_shape %26#0 [[0, 1]] output_shape [7, 1] : tensor<7xf32> into tensor<7x1xf32>
    %27 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel"]} ins(%21, %expanded : tensor<7x3xf32>, tensor<7x1xf32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.subf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %28 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%27 : tensor<7x3xf32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = math.exp %in : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %29 = tensor.empty() : tensor<7x1xf32>
    %30 = linalg.fill ins(%cst : f32) outs(%29 : tensor<7x1xf32>) -> tensor<7x1xf32>
    %31 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "reduction"]} ins(%28 : tensor<7x3xf32>) outs(%30 : tensor<7x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<7x1xf32>
    %32 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%31 : tensor<7x1xf32>) outs(%29 : tensor<7x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = math.log %in : f32
      linalg.yield %214 : f32
    } -> tensor<7x1xf32>
    %33 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel"]} ins(%27, %32 : tensor<7x3xf32>, tensor<7x1xf32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.subf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %34 = tensor.empty() : tensor<7xi1>
    %35 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = ["parallel"]} ins(%arg78 : tensor<7xi64>) outs(%34 : tensor<7xi1>) {
    ^bb0(%in: i64, %out: i1):
      %214 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %214 : i1
    } -> tensor<7xi1>
    %36 = tensor.empty() : tensor<3xi64>
    %37 = linalg.generic {indexing_maps = [#map7], iterator_types = ["parallel"]} outs(%36 : tensor<3xi64>) {
    ^bb0(%out: i64):
      %214 = linalg.index 0 : index
      %215 = arith.index_cast %214 : index to i64
      linalg.yield %215 : i64
    } -> tensor<3xi64>
    %expanded_10 = tensor.expand_shape %37 [[0, 1]] output_shape [1, 3] : tensor<3xi64> into tensor<1x3xi64>
    %expanded_11 = tensor.expand_shape %arg78 [[0, 1]] output_shape [7, 1] : tensor<7xi64> into tensor<7x1xi64>
    %38 = tensor.empty() : tensor<7x3xi1>
    %39 = linalg.generic {indexing_maps = [#map6, #map8, #map3], iterator_types = ["parallel", "parallel"]} ins(%expanded_11, %expanded_10 : tensor<7x1xi64>, tensor<1x3xi64>) outs(%38 : tensor<7x3xi1>) {
    ^bb0(%in: i64, %in_34: i64, %out: i1):
      %214 = arith.cmpi eq, %in, %in_34 : i64
      linalg.yield %214 : i1
    } -> tensor<7x3xi1>
    %40 = linalg.generic {indexing_maps = [#map3, #map3, #map9, #map3], iterator_types = ["parallel", "parallel"]} ins(%39, %33, %cst_3 : tensor<7x3xi1>, tensor<7x3xf32>, tensor<f32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: i1, %in_34: f32, %in_35: f32, %out: f32):
      %214 = arith.select %in, %in_34, %in_35 : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %41 = linalg.fill ins(%cst : f32) outs(%24 : tensor<7xf32>) -> tensor<7xf32>
    %42 = linalg.generic {indexing_maps = [#map3, #map5], iterator_types = ["parallel", "reduction"]} ins(%40 : tensor<7x3xf32>) outs(%41 : tensor<7xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<7xf32>
    %43 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = ["parallel"]} ins(%42 : tensor<7xf32>) outs(%24 : tensor<7xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.negf %in : f32
      linalg.yield %214 : f32
    } -> tensor<7xf32>
    %44 = linalg.generic {indexing_maps = [#map7, #map7, #map10, #map7], iterator_types = ["parallel"]} ins(%35, %43, %cst_3 : tensor<7xi1>, tensor<7xf32>, tensor<f32>) outs(%24 : tensor<7xf32>) {
    ^bb0(%in: i1, %in_34: f32, %in_35: f32, %out: f32):
      %214 = arith.select %in, %in_34, %in_35 : f32
      linalg.yield %214 : f32
    } -> tensor<7xf32>
    %45 = tensor.empty() : tensor<i64>
    %46 = linalg.fill ins(%c0_i64 : i64) outs(%45 : tensor<i64>) -> tensor<i64>
    %47 = linalg.generic {indexing_maps = [#map7, #map10], iterator_types = ["reduction"]} ins(%35 : tensor<7xi1>) outs(%46 : tensor<i64>) {
    ^bb0(%in: i1, %out: i64):
      %214 = arith.extui %in : i1 to i64
      %215 = arith.addi %214, %out : i64
      linalg.yield %215 : i64
    } -> tensor<i64>
    %48 = tensor.empty() : tensor<f32>
    %49 = linalg.generic {indexing_maps = [#map11, #map11], iterator_types = []} ins(%47 : tensor<i64>) outs(%48 : tensor<f32>) {
    ^bb0(%in: i64, %out: f32):
      %214 = arith.sitofp %in : i64 to f32
      linalg.yield %214 : f32
    } -> tensor<f32>
    %50 = linalg.fill ins(%cst : f32) outs(%48 : tensor<f32>) -> tensor<f32>
    %51 = linalg.generic {indexing_maps = [#map7, #map10], iterator_types = ["reduction"]} ins(%44 : tensor<7xf32>) outs(%50 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<f32>
    %52 = linalg.generic {indexing_maps = [#map11, #map11, #map11], iterator_types = []} ins(%51, %49 : tensor<f32>, tensor<f32>) outs(%48 : tensor<f32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.divf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<f32>
    %53 = linalg.generic {indexing_maps = [#map11, #map11, #map11], iterator_types = []} ins(%cst_2, %49 : tensor<f32>, tensor<f32>) outs(%48 : tensor<f32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.divf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<f32>
    %54 = linalg.generic {indexing_maps = [#map3, #map9, #map9, #map3], iterator_types = ["parallel", "parallel"]} ins(%39, %cst_1, %cst_3 : tensor<7x3xi1>, tensor<f32>, tensor<f32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: i1, %in_34: f32, %in_35: f32, %out: f32):
      %214 = arith.select %in, %in_34, %in_35 : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %55 = tensor.empty() : tensor<7x1xi1>
    %56 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%expanded_11 : tensor<7x1xi64>) outs(%55 : tensor<7x1xi1>) {
    ^bb0(%in: i64, %out: i1):
      %214 = arith.cmpi ne, %in, %c-100_i64 : i64
      linalg.yield %214 : i1
    } -> tensor<7x1xi1>
    %57 = linalg.generic {indexing_maps = [#map3, #map9, #map9, #map3], iterator_types = ["parallel", "parallel"]} ins(%56, %53, %cst_3 : tensor<7x1xi1>, tensor<f32>, tensor<f32>) outs(%29 : tensor<7x1xf32>) {
    ^bb0(%in: i1, %in_34: f32, %in_35: f32, %out: f32):
      %214 = arith.select %in, %in_34, %in_35 : f32
      linalg.yield %214 : f32
    } -> tensor<7x1xf32>
    %58 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel"]} ins(%54, %57 : tensor<7x3xf32>, tensor<7x1xf32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %59 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%33 : tensor<7x3xf32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = math.exp %in : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %60 = linalg.generic {indexing_maps = [#map3, #map6], iterator_types = ["parallel", "reduction"]} ins(%58 : tensor<7x3xf32>) outs(%30 : tensor<7x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<7x1xf32>
    %61 = linalg.generic {indexing_maps = [#map3, #map6, #map3], iterator_types = ["parallel", "parallel"]} ins(%59, %60 : tensor<7x3xf32>, tensor<7x1xf32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %62 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%58, %61 : tensor<7x3xf32>, tensor<7x3xf32>) outs(%18 : tensor<7x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.subf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x3xf32>
    %63 = linalg.matmul ins(%62, %arg9 : tensor<7x3xf32>, tensor<3x2xf32>) outs(%14 : tensor<7x2xf32>) -> tensor<7x2xf32>
    %64 = tensor.empty() : tensor<3x7xf32>
    %transposed_12 = linalg.transpose ins(%62 : tensor<7x3xf32>) outs(%64 : tensor<3x7xf32>) permutation = [1, 0] 
    %65 = tensor.empty() : tensor<3x2xf32>
    %66 = linalg.fill ins(%cst : f32) outs(%65 : tensor<3x2xf32>) -> tensor<3x2xf32>
    %67 = linalg.matmul ins(%transposed_12, %16 : tensor<3x7xf32>, tensor<7x2xf32>) outs(%66 : tensor<3x2xf32>) -> tensor<3x2xf32>
    %68 = tensor.empty() : tensor<1x3xf32>
    %69 = linalg.fill ins(%cst : f32) outs(%68 : tensor<1x3xf32>) -> tensor<1x3xf32>
    %70 = linalg.generic {indexing_maps = [#map3, #map8], iterator_types = ["reduction", "parallel"]} ins(%62 : tensor<7x3xf32>) outs(%69 : tensor<1x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<1x3xf32>
    %collapsed_13 = tensor.collapse_shape %70 [[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
    %71 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%63 : tensor<7x2xf32>) outs(%11 : tensor<7x2x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<7x2x3xf32>
    %72 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%71 : tensor<7x2x3xf32>) outs(%11 : tensor<7x2x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.divf %in, %cst_4 : f32
      linalg.yield %214 : f32
    } -> tensor<7x2x3xf32>
    %73 = tensor.empty() : tensor<2x3x2xf32>
    %74 = linalg.fill ins(%cst : f32) outs(%73 : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
    %75 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg7 : tensor<2x3x2xf32>) outs(%74 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = linalg.index 0 : index
      %215 = linalg.index 1 : index
      %216 = linalg.index 2 : index
      %217 = arith.subi %c1, %216 : index
      %extracted = tensor.extract %arg7[%214, %215, %217] : tensor<2x3x2xf32>
      linalg.yield %extracted : f32
    } -> tensor<2x3x2xf32>
    %padded_14 = tensor.pad %72 low[0, 0, 1] high[0, 0, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index):
      tensor.yield %cst : f32
    } : tensor<7x2x3xf32> to tensor<7x2x5xf32>
    %76 = tensor.empty() : tensor<7x3x4xf32>
    %77 = linalg.fill ins(%cst : f32) outs(%76 : tensor<7x3x4xf32>) -> tensor<7x3x4xf32>
    %78 = linalg.generic {indexing_maps = [#map12, #map13, #map14], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%padded_14, %75 : tensor<7x2x5xf32>, tensor<2x3x2xf32>) outs(%77 : tensor<7x3x4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      %215 = arith.addf %214, %out : f32
      linalg.yield %215 : f32
    } -> tensor<7x3x4xf32>
    %79 = linalg.generic {indexing_maps = [#map15, #map16, #map14], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%collapsed, %72 : tensor<7x3x4xf32>, tensor<7x2x3xf32>) outs(%74 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      %215 = arith.addf %214, %out : f32
      linalg.yield %215 : f32
    } -> tensor<2x3x2xf32>
    %80 = tensor.empty() : tensor<2xf32>
    %81 = linalg.fill ins(%cst : f32) outs(%80 : tensor<2xf32>) -> tensor<2xf32>
    %82 = linalg.generic {indexing_maps = [#map1, #map17], iterator_types = ["reduction", "parallel", "reduction"]} ins(%72 : tensor<7x2x3xf32>) outs(%81 : tensor<2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<2xf32>
    %expanded_15 = tensor.expand_shape %78 [[0], [1], [2, 3]] output_shape [7, 3, 2, 2] : tensor<7x3x4xf32> into tensor<7x3x2x2xf32>
    %83 = tensor.empty() : tensor<6x3x1x1xf32>
    %84 = linalg.fill ins(%cst : f32) outs(%83 : tensor<6x3x1x1xf32>) -> tensor<6x3x1x1xf32>
    %85 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%84 : tensor<6x3x1x1xf32>) {
    ^bb0(%out: f32):
      %214 = linalg.index 0 : index
      %215 = linalg.index 1 : index
      %extracted = tensor.extract %arg5[%215, %214, %c0, %c0] : tensor<3x6x1x1xf32>
      linalg.yield %extracted : f32
    } -> tensor<6x3x1x1xf32>
    %86 = linalg.fill ins(%cst : f32) outs(%6 : tensor<7x6x2x2xf32>) -> tensor<7x6x2x2xf32>
    %87 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%expanded_15, %85 : tensor<7x3x2x2xf32>, tensor<6x3x1x1xf32>) outs(%86 : tensor<7x6x2x2xf32>) -> tensor<7x6x2x2xf32>
    %88 = tensor.empty() : tensor<6x7x2x2xf32>
    %transposed_16 = linalg.transpose ins(%8 : tensor<7x6x2x2xf32>) outs(%88 : tensor<6x7x2x2xf32>) permutation = [1, 0, 2, 3] 
    %89 = tensor.empty() : tensor<3x7x2x2xf32>
    %transposed_17 = linalg.transpose ins(%expanded_15 : tensor<7x3x2x2xf32>) outs(%89 : tensor<3x7x2x2xf32>) permutation = [1, 0, 2, 3] 
    %90 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%transposed_16, %transposed_17 : tensor<6x7x2x2xf32>, tensor<3x7x2x2xf32>) outs(%84 : tensor<6x3x1x1xf32>) -> tensor<6x3x1x1xf32>
    %91 = tensor.empty() : tensor<3x6x1x1xf32>
    %transposed_18 = linalg.transpose ins(%90 : tensor<6x3x1x1xf32>) outs(%91 : tensor<3x6x1x1xf32>) permutation = [1, 0, 2, 3] 
    %92 = tensor.empty() : tensor<3xf32>
    %93 = linalg.fill ins(%cst : f32) outs(%92 : tensor<3xf32>) -> tensor<3xf32>
    %94 = linalg.generic {indexing_maps = [#map, #map18], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%expanded_15 : tensor<7x3x2x2xf32>) outs(%93 : tensor<3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %95 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %8 : tensor<7x6x2x2xf32>, tensor<7x6x2x2xf32>) outs(%6 : tensor<7x6x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x6x2x2xf32>
    %96 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_5, %95 : tensor<i64>, tensor<7x6x2x2xf32>) outs(%6 : tensor<7x6x2x2xf32>) {
    ^bb0(%in: i64, %in_34: f32, %out: f32):
      %214 = arith.sitofp %in : i64 to f32
      %215 = arith.subf %214, %in_34 : f32
      linalg.yield %215 : f32
    } -> tensor<7x6x2x2xf32>
    %97 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%87, %96 : tensor<7x6x2x2xf32>, tensor<7x6x2x2xf32>) outs(%6 : tensor<7x6x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x6x2x2xf32>
    %98 = tensor.empty() : tensor<4x6x2x2xf32>
    %99 = linalg.fill ins(%cst : f32) outs(%98 : tensor<4x6x2x2xf32>) -> tensor<4x6x2x2xf32>
    %100 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%99 : tensor<4x6x2x2xf32>) {
    ^bb0(%out: f32):
      %214 = linalg.index 0 : index
      %215 = linalg.index 1 : index
      %216 = linalg.index 2 : index
      %217 = linalg.index 3 : index
      %218 = arith.subi %c1, %216 : index
      %219 = arith.subi %c1, %217 : index
      %extracted = tensor.extract %arg3[%215, %214, %218, %219] : tensor<6x4x2x2xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x6x2x2xf32>
    %101 = tensor.empty() : tensor<7x6x5x5xf32>
    %102 = linalg.fill ins(%cst : f32) outs(%101 : tensor<7x6x5x5xf32>) -> tensor<7x6x5x5xf32>
    %inserted_slice = tensor.insert_slice %97 into %102[0, 0, 1, 1] [7, 6, 2, 2] [1, 1, 2, 2] : tensor<7x6x2x2xf32> into tensor<7x6x5x5xf32>
    %103 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%inserted_slice, %100 : tensor<7x6x5x5xf32>, tensor<4x6x2x2xf32>) outs(%1 : tensor<7x4x4x4xf32>) -> tensor<7x4x4x4xf32>
    %104 = tensor.empty() : tensor<4x7x4x4xf32>
    %transposed_19 = linalg.transpose ins(%5 : tensor<7x4x4x4xf32>) outs(%104 : tensor<4x7x4x4xf32>) permutation = [1, 0, 2, 3] 
    %105 = tensor.empty() : tensor<4x42x2x2xf32>
    %expanded_20 = tensor.expand_shape %transposed_19 [[0], [1, 2], [3], [4]] output_shape [4, 7, 1, 4, 4] : tensor<4x7x4x4xf32> into tensor<4x7x1x4x4xf32>
    %expanded_21 = tensor.expand_shape %97 [[0], [1], [2, 3], [4]] output_shape [7, 6, 1, 2, 2] : tensor<7x6x2x2xf32> into tensor<7x6x1x2x2xf32>
    %expanded_22 = tensor.expand_shape %105 [[0], [1, 2], [3], [4]] output_shape [4, 7, 6, 2, 2] : tensor<4x42x2x2xf32> into tensor<4x7x6x2x2xf32>
    %106 = linalg.fill ins(%cst : f32) outs(%expanded_22 : tensor<4x7x6x2x2xf32>) -> tensor<4x7x6x2x2xf32>
    %107 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%expanded_20, %expanded_21 : tensor<4x7x1x4x4xf32>, tensor<7x6x1x2x2xf32>) outs(%106 : tensor<4x7x6x2x2xf32>) -> tensor<4x7x6x2x2xf32>
    %108 = tensor.empty() : tensor<7x6x4x2x2xf32>
    %transposed_23 = linalg.transpose ins(%107 : tensor<4x7x6x2x2xf32>) outs(%108 : tensor<7x6x4x2x2xf32>) permutation = [1, 2, 0, 3, 4] 
    %109 = tensor.empty() : tensor<6x4x2x2xf32>
    %110 = linalg.fill ins(%cst : f32) outs(%109 : tensor<6x4x2x2xf32>) -> tensor<6x4x2x2xf32>
    %111 = linalg.generic {indexing_maps = [#map20, #map21], iterator_types = ["reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%transposed_23 : tensor<7x6x4x2x2xf32>) outs(%110 : tensor<6x4x2x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<6x4x2x2xf32>
    %112 = tensor.empty() : tensor<6xf32>
    %113 = linalg.fill ins(%cst : f32) outs(%112 : tensor<6xf32>) -> tensor<6xf32>
    %114 = linalg.generic {indexing_maps = [#map, #map18], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%97 : tensor<7x6x2x2xf32>) outs(%113 : tensor<6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<6xf32>
    %115 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %5 : tensor<7x4x4x4xf32>, tensor<7x4x4x4xf32>) outs(%0 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x4x4x4xf32>
    %116 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_5, %115 : tensor<i64>, tensor<7x4x4x4xf32>) outs(%0 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: i64, %in_34: f32, %out: f32):
      %214 = arith.sitofp %in : i64 to f32
      %215 = arith.subf %214, %in_34 : f32
      linalg.yield %215 : f32
    } -> tensor<7x4x4x4xf32>
    %117 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%103, %116 : tensor<7x4x4x4xf32>, tensor<7x4x4x4xf32>) outs(%0 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x4x4x4xf32>
    %118 = tensor.empty() : tensor<4x4x3x3xf32>
    %119 = linalg.fill ins(%cst : f32) outs(%118 : tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf32>
    %120 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<4x4x3x3xf32>) outs(%119 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = linalg.index 0 : index
      %215 = linalg.index 1 : index
      %216 = linalg.index 2 : index
      %217 = linalg.index 3 : index
      %218 = arith.subi %c2, %216 : index
      %219 = arith.subi %c2, %217 : index
      %extracted = tensor.extract %arg1[%214, %215, %218, %219] : tensor<4x4x3x3xf32>
      linalg.yield %extracted : f32
    } -> tensor<4x4x3x3xf32>
    %padded_24 = tensor.pad %117 low[0, 0, 2, 2] high[0, 0, 2, 2] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<7x4x4x4xf32> to tensor<7x4x8x8xf32>
    %121 = linalg.generic {indexing_maps = [#map22, #map23, #map24], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded_24, %120 : tensor<7x4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%1 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      %215 = arith.addf %214, %out : f32
      linalg.yield %215 : f32
    } -> tensor<7x4x4x4xf32>
    %122 = linalg.generic {indexing_maps = [#map25, #map26, #map24], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded_6, %117 : tensor<7x4x8x8xf32>, tensor<7x4x4x4xf32>) outs(%119 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      %215 = arith.addf %214, %out : f32
      linalg.yield %215 : f32
    } -> tensor<4x4x3x3xf32>
    %123 = tensor.empty() : tensor<4xf32>
    %124 = linalg.fill ins(%cst : f32) outs(%123 : tensor<4xf32>) -> tensor<4xf32>
    %125 = linalg.generic {indexing_maps = [#map, #map18], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%117 : tensor<7x4x4x4xf32>) outs(%124 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<4xf32>
    %126 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3, %3 : tensor<7x4x4x4xf32>, tensor<7x4x4x4xf32>) outs(%0 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x4x4x4xf32>
    %127 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cst_5, %126 : tensor<i64>, tensor<7x4x4x4xf32>) outs(%0 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: i64, %in_34: f32, %out: f32):
      %214 = arith.sitofp %in : i64 to f32
      %215 = arith.subf %214, %in_34 : f32
      linalg.yield %215 : f32
    } -> tensor<7x4x4x4xf32>
    %128 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%121, %127 : tensor<7x4x4x4xf32>, tensor<7x4x4x4xf32>) outs(%0 : tensor<7x4x4x4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<7x4x4x4xf32>
    %129 = tensor.empty() : tensor<2x7x8x8xf32>
    %transposed_25 = linalg.transpose ins(%arg77 : tensor<7x2x8x8xf32>) outs(%129 : tensor<2x7x8x8xf32>) permutation = [1, 0, 2, 3] 
    %padded_26 = tensor.pad %transposed_25 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg79: index, %arg80: index, %arg81: index, %arg82: index):
      tensor.yield %cst : f32
    } : tensor<2x7x8x8xf32> to tensor<2x7x10x10xf32>
    %130 = tensor.empty() : tensor<2x28x4x4xf32>
    %expanded_27 = tensor.expand_shape %padded_26 [[0], [1, 2], [3], [4]] output_shape [2, 7, 1, 10, 10] : tensor<2x7x10x10xf32> into tensor<2x7x1x10x10xf32>
    %expanded_28 = tensor.expand_shape %128 [[0], [1], [2, 3], [4]] output_shape [7, 4, 1, 4, 4] : tensor<7x4x4x4xf32> into tensor<7x4x1x4x4xf32>
    %expanded_29 = tensor.expand_shape %130 [[0], [1, 2], [3], [4]] output_shape [2, 7, 4, 4, 4] : tensor<2x28x4x4xf32> into tensor<2x7x4x4x4xf32>
    %131 = linalg.fill ins(%cst : f32) outs(%expanded_29 : tensor<2x7x4x4x4xf32>) -> tensor<2x7x4x4x4xf32>
    %132 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%expanded_27, %expanded_28 : tensor<2x7x1x10x10xf32>, tensor<7x4x1x4x4xf32>) outs(%131 : tensor<2x7x4x4x4xf32>) -> tensor<2x7x4x4x4xf32>
    %collapsed_30 = tensor.collapse_shape %132 [[0], [1, 2], [3], [4]] : tensor<2x7x4x4x4xf32> into tensor<2x28x4x4xf32>
    %extracted_slice = tensor.extract_slice %collapsed_30[0, 0, 0, 0] [2, 28, 3, 4] [1, 1, 1, 1] : tensor<2x28x4x4xf32> to tensor<2x28x3x4xf32>
    %extracted_slice_31 = tensor.extract_slice %extracted_slice[0, 0, 0, 0] [2, 28, 3, 3] [1, 1, 1, 1] : tensor<2x28x3x4xf32> to tensor<2x28x3x3xf32>
    %expanded_32 = tensor.expand_shape %extracted_slice_31 [[0], [1, 2], [3], [4]] output_shape [2, 7, 4, 3, 3] : tensor<2x28x3x3xf32> into tensor<2x7x4x3x3xf32>
    %133 = tensor.empty() : tensor<7x4x2x3x3xf32>
    %transposed_33 = linalg.transpose ins(%expanded_32 : tensor<2x7x4x3x3xf32>) outs(%133 : tensor<7x4x2x3x3xf32>) permutation = [1, 2, 0, 3, 4] 
    %134 = tensor.empty() : tensor<4x2x3x3xf32>
    %135 = linalg.fill ins(%cst : f32) outs(%134 : tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32>
    %136 = linalg.generic {indexing_maps = [#map20, #map21], iterator_types = ["reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%transposed_33 : tensor<7x4x2x3x3xf32>) outs(%135 : tensor<4x2x3x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %214 = arith.addf %in, %out : f32
      linalg.yield %214 : f32
    } -> tensor<4x2x3x3xf32>
    %137 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg23, %arg0 : tensor<f32>, tensor<4x2x3x3xf32>) outs(%134 : tensor<4x2x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x2x3x3xf32>
    %138 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%136, %137 : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) outs(%134 : tensor<4x2x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x2x3x3xf32>
    %139 = linalg.generic {indexing_maps = [#map, #map19, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg11, %arg24 : tensor<4x2x3x3xf32>, tensor<f32>) outs(%134 : tensor<4x2x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x2x3x3xf32>
    %140 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg25, %138 : tensor<f32>, tensor<4x2x3x3xf32>) outs(%134 : tensor<4x2x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x2x3x3xf32>
    %141 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%139, %140 : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) outs(%134 : tensor<4x2x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x2x3x3xf32>
    %142 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg22, %141 : tensor<f32>, tensor<4x2x3x3xf32>) outs(%134 : tensor<4x2x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x2x3x3xf32>
    %143 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %142 : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) outs(%134 : tensor<4x2x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x2x3x3xf32>
    %144 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg28, %arg1 : tensor<f32>, tensor<4x4x3x3xf32>) outs(%118 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x4x3x3xf32>
    %145 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%122, %144 : tensor<4x4x3x3xf32>, tensor<4x4x3x3xf32>) outs(%118 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x4x3x3xf32>
    %146 = linalg.generic {indexing_maps = [#map, #map19, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg12, %arg29 : tensor<4x4x3x3xf32>, tensor<f32>) outs(%118 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x4x3x3xf32>
    %147 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg30, %145 : tensor<f32>, tensor<4x4x3x3xf32>) outs(%118 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x4x3x3xf32>
    %148 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%146, %147 : tensor<4x4x3x3xf32>, tensor<4x4x3x3xf32>) outs(%118 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x4x3x3xf32>
    %149 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg27, %148 : tensor<f32>, tensor<4x4x3x3xf32>) outs(%118 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x4x3x3xf32>
    %150 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %149 : tensor<4x4x3x3xf32>, tensor<4x4x3x3xf32>) outs(%118 : tensor<4x4x3x3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4x4x3x3xf32>
    %151 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg33, %arg2 : tensor<f32>, tensor<4xf32>) outs(%123 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4xf32>
    %152 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%125, %151 : tensor<4xf32>, tensor<4xf32>) outs(%123 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4xf32>
    %153 = linalg.generic {indexing_maps = [#map7, #map10, #map7], iterator_types = ["parallel"]} ins(%arg13, %arg34 : tensor<4xf32>, tensor<f32>) outs(%123 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4xf32>
    %154 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg35, %152 : tensor<f32>, tensor<4xf32>) outs(%123 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4xf32>
    %155 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%153, %154 : tensor<4xf32>, tensor<4xf32>) outs(%123 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4xf32>
    %156 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg32, %155 : tensor<f32>, tensor<4xf32>) outs(%123 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4xf32>
    %157 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%arg2, %156 : tensor<4xf32>, tensor<4xf32>) outs(%123 : tensor<4xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<4xf32>
    %158 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg38, %arg3 : tensor<f32>, tensor<6x4x2x2xf32>) outs(%109 : tensor<6x4x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6x4x2x2xf32>
    %159 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%111, %158 : tensor<6x4x2x2xf32>, tensor<6x4x2x2xf32>) outs(%109 : tensor<6x4x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6x4x2x2xf32>
    %160 = linalg.generic {indexing_maps = [#map, #map19, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg14, %arg39 : tensor<6x4x2x2xf32>, tensor<f32>) outs(%109 : tensor<6x4x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6x4x2x2xf32>
    %161 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg40, %159 : tensor<f32>, tensor<6x4x2x2xf32>) outs(%109 : tensor<6x4x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6x4x2x2xf32>
    %162 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%160, %161 : tensor<6x4x2x2xf32>, tensor<6x4x2x2xf32>) outs(%109 : tensor<6x4x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6x4x2x2xf32>
    %163 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg37, %162 : tensor<f32>, tensor<6x4x2x2xf32>) outs(%109 : tensor<6x4x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6x4x2x2xf32>
    %164 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3, %163 : tensor<6x4x2x2xf32>, tensor<6x4x2x2xf32>) outs(%109 : tensor<6x4x2x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6x4x2x2xf32>
    %165 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg43, %arg4 : tensor<f32>, tensor<6xf32>) outs(%112 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6xf32>
    %166 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%114, %165 : tensor<6xf32>, tensor<6xf32>) outs(%112 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6xf32>
    %167 = linalg.generic {indexing_maps = [#map7, #map10, #map7], iterator_types = ["parallel"]} ins(%arg15, %arg44 : tensor<6xf32>, tensor<f32>) outs(%112 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6xf32>
    %168 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg45, %166 : tensor<f32>, tensor<6xf32>) outs(%112 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6xf32>
    %169 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%167, %168 : tensor<6xf32>, tensor<6xf32>) outs(%112 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6xf32>
    %170 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg42, %169 : tensor<f32>, tensor<6xf32>) outs(%112 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6xf32>
    %171 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%arg4, %170 : tensor<6xf32>, tensor<6xf32>) outs(%112 : tensor<6xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<6xf32>
    %172 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg48, %arg5 : tensor<f32>, tensor<3x6x1x1xf32>) outs(%91 : tensor<3x6x1x1xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x6x1x1xf32>
    %173 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_18, %172 : tensor<3x6x1x1xf32>, tensor<3x6x1x1xf32>) outs(%91 : tensor<3x6x1x1xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x6x1x1xf32>
    %174 = linalg.generic {indexing_maps = [#map, #map19, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg16, %arg49 : tensor<3x6x1x1xf32>, tensor<f32>) outs(%91 : tensor<3x6x1x1xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x6x1x1xf32>
    %175 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg50, %173 : tensor<f32>, tensor<3x6x1x1xf32>) outs(%91 : tensor<3x6x1x1xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x6x1x1xf32>
    %176 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%174, %175 : tensor<3x6x1x1xf32>, tensor<3x6x1x1xf32>) outs(%91 : tensor<3x6x1x1xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x6x1x1xf32>
    %177 = linalg.generic {indexing_maps = [#map19, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg47, %176 : tensor<f32>, tensor<3x6x1x1xf32>) outs(%91 : tensor<3x6x1x1xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x6x1x1xf32>
    %178 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg5, %177 : tensor<3x6x1x1xf32>, tensor<3x6x1x1xf32>) outs(%91 : tensor<3x6x1x1xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x6x1x1xf32>
    %179 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg53, %arg6 : tensor<f32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %180 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%94, %179 : tensor<3xf32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %181 = linalg.generic {indexing_maps = [#map7, #map10, #map7], iterator_types = ["parallel"]} ins(%arg17, %arg54 : tensor<3xf32>, tensor<f32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %182 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg55, %180 : tensor<f32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %183 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%181, %182 : tensor<3xf32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %184 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg52, %183 : tensor<f32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %185 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%arg6, %184 : tensor<3xf32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %186 = linalg.generic {indexing_maps = [#map27, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg58, %arg7 : tensor<f32>, tensor<2x3x2xf32>) outs(%73 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2x3x2xf32>
    %187 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%79, %186 : tensor<2x3x2xf32>, tensor<2x3x2xf32>) outs(%73 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2x3x2xf32>
    %188 = linalg.generic {indexing_maps = [#map1, #map27, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg18, %arg59 : tensor<2x3x2xf32>, tensor<f32>) outs(%73 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2x3x2xf32>
    %189 = linalg.generic {indexing_maps = [#map27, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg60, %187 : tensor<f32>, tensor<2x3x2xf32>) outs(%73 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2x3x2xf32>
    %190 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%188, %189 : tensor<2x3x2xf32>, tensor<2x3x2xf32>) outs(%73 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2x3x2xf32>
    %191 = linalg.generic {indexing_maps = [#map27, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg57, %190 : tensor<f32>, tensor<2x3x2xf32>) outs(%73 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2x3x2xf32>
    %192 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg7, %191 : tensor<2x3x2xf32>, tensor<2x3x2xf32>) outs(%73 : tensor<2x3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2x3x2xf32>
    %193 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg63, %arg8 : tensor<f32>, tensor<2xf32>) outs(%80 : tensor<2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2xf32>
    %194 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%82, %193 : tensor<2xf32>, tensor<2xf32>) outs(%80 : tensor<2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2xf32>
    %195 = linalg.generic {indexing_maps = [#map7, #map10, #map7], iterator_types = ["parallel"]} ins(%arg19, %arg64 : tensor<2xf32>, tensor<f32>) outs(%80 : tensor<2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2xf32>
    %196 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg65, %194 : tensor<f32>, tensor<2xf32>) outs(%80 : tensor<2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2xf32>
    %197 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%195, %196 : tensor<2xf32>, tensor<2xf32>) outs(%80 : tensor<2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2xf32>
    %198 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg62, %197 : tensor<f32>, tensor<2xf32>) outs(%80 : tensor<2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2xf32>
    %199 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%arg8, %198 : tensor<2xf32>, tensor<2xf32>) outs(%80 : tensor<2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<2xf32>
    %200 = linalg.generic {indexing_maps = [#map9, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%arg68, %arg9 : tensor<f32>, tensor<3x2xf32>) outs(%65 : tensor<3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x2xf32>
    %201 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%67, %200 : tensor<3x2xf32>, tensor<3x2xf32>) outs(%65 : tensor<3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x2xf32>
    %202 = linalg.generic {indexing_maps = [#map3, #map9, #map3], iterator_types = ["parallel", "parallel"]} ins(%arg20, %arg69 : tensor<3x2xf32>, tensor<f32>) outs(%65 : tensor<3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x2xf32>
    %203 = linalg.generic {indexing_maps = [#map9, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%arg70, %201 : tensor<f32>, tensor<3x2xf32>) outs(%65 : tensor<3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x2xf32>
    %204 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%202, %203 : tensor<3x2xf32>, tensor<3x2xf32>) outs(%65 : tensor<3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x2xf32>
    %205 = linalg.generic {indexing_maps = [#map9, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%arg67, %204 : tensor<f32>, tensor<3x2xf32>) outs(%65 : tensor<3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x2xf32>
    %206 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%arg9, %205 : tensor<3x2xf32>, tensor<3x2xf32>) outs(%65 : tensor<3x2xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3x2xf32>
    %207 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg73, %arg10 : tensor<f32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %208 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%collapsed_13, %207 : tensor<3xf32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %209 = linalg.generic {indexing_maps = [#map7, #map10, #map7], iterator_types = ["parallel"]} ins(%arg21, %arg74 : tensor<3xf32>, tensor<f32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %210 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg75, %208 : tensor<f32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %211 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%209, %210 : tensor<3xf32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %212 = linalg.generic {indexing_maps = [#map10, #map7, #map7], iterator_types = ["parallel"]} ins(%arg72, %211 : tensor<f32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.mulf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    %213 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%arg10, %212 : tensor<3xf32>, tensor<3xf32>) outs(%92 : tensor<3xf32>) {
    ^bb0(%in: f32, %in_34: f32, %out: f32):
      %214 = arith.addf %in, %in_34 : f32
      linalg.yield %214 : f32
    } -> tensor<3xf32>
    return %143, %150, %157, %164, %171, %178, %185, %192, %199, %206, %213, %141, %148, %155, %162, %169, %176, %183, %190, %197, %204, %211, %52 : tensor<4x2x3x3xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<6x4x2x2xf32>, tensor<6xf32>, tensor<3x6x1x1xf32>, tensor<3xf32>, tensor<2x3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<4x2x3x3xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<6x4x2x2xf32>, tensor<6xf32>, tensor<3x6x1x1xf32>, tensor<3xf32>, tensor<2x3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<f32>
  }
}

