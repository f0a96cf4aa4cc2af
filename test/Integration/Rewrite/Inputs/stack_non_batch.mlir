// Per-sample tensors stacked along a new outer dimension, the way torch.stack
// is traced (stack-non-batch.test): concatenated along their batch dimension,
// then reshaped into [stacks, B, ...]. @lstm_states stacks two layers' states
// [B, H] into h_n [2, B, H] and reads the last layer; @qkv stacks three
// [B, T, D] projections (the gradient of a fused qkv projection split with
// unbind) and permutes the stack behind the batch.
#id2 = affine_map<(b, h) -> (b, h)>
#id3 = affine_map<(l, b, h) -> (l, b, h)>

func.func @lstm_states(%w1: tensor<4x5xf32>, %w2: tensor<5x5xf32>, %x: tensor<?x4xf32> {ga.batch = 0 : i64}) -> (tensor<5x5xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%b) : tensor<?x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %h1p = linalg.matmul ins(%x, %w1 : tensor<?x4xf32>, tensor<4x5xf32>) outs(%z : tensor<?x5xf32>) -> tensor<?x5xf32>
  %h1 = linalg.tanh ins(%h1p : tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %h2p = linalg.matmul ins(%h1, %w2 : tensor<?x5xf32>, tensor<5x5xf32>) outs(%z : tensor<?x5xf32>) -> tensor<?x5xf32>
  %h2 = linalg.tanh ins(%h2p : tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %cat = tensor.concat dim(0) %h1, %h2 : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  %hn = tensor.expand_shape %cat [[0, 1], [2]] output_shape [2, %b, 5] : tensor<?x5xf32> into tensor<2x?x5xf32>
  // A per-layer weighting of the stacked states, then the last layer.
  %eh = tensor.empty(%b) : tensor<2x?x5xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%hn : tensor<2x?x5xf32>) outs(%eh : tensor<2x?x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %l = linalg.index 0 : index
    %li = arith.index_cast %l : index to i64
    %lf = arith.sitofp %li : i64 to f32
    %one = arith.constant 1.0 : f32
    %s = arith.addf %lf, %one : f32
    %r = arith.mulf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<2x?x5xf32>
  %last = tensor.extract_slice %scaled[1, 0, 0] [1, %b, 5] [1, 1, 1] : tensor<2x?x5xf32> to tensor<?x5xf32>
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%scaled : tensor<2x?x5xf32>) outs(%sz : tensor<f32>) dimensions = [0, 1, 2]
  // The gradient of sum(last) with respect to w2: h1^T (1 - h2^2) * 2.
  %ew = tensor.empty() : tensor<5x5xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<5x5xf32>) -> tensor<5x5xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%h1, %last : tensor<?x5xf32>, tensor<?x5xf32>) outs(%zw : tensor<5x5xf32>) -> tensor<5x5xf32>
  return %dw, %loss : tensor<5x5xf32>, tensor<f32>
}

func.func @qkv(%w: tensor<4x12xf32>, %x: tensor<6x3x4xf32> {ga.batch = 0 : i64}) -> (tensor<3x2x4xf32>, tensor<2x6x3x3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %xf = tensor.collapse_shape %x [[0, 1], [2]] : tensor<6x3x4xf32> into tensor<18x4xf32>
  %e = tensor.empty() : tensor<18x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<18x12xf32>) -> tensor<18x12xf32>
  %p = linalg.matmul ins(%xf, %w : tensor<18x4xf32>, tensor<4x12xf32>) outs(%z : tensor<18x12xf32>) -> tensor<18x12xf32>
  %p3 = tensor.expand_shape %p [[0, 1], [2]] output_shape [6, 3, 12] : tensor<18x12xf32> into tensor<6x3x12xf32>
  %q = tensor.extract_slice %p3[0, 0, 0] [6, 3, 4] [1, 1, 1] : tensor<6x3x12xf32> to tensor<6x3x4xf32>
  %k = tensor.extract_slice %p3[0, 0, 4] [6, 3, 4] [1, 1, 1] : tensor<6x3x12xf32> to tensor<6x3x4xf32>
  %v = tensor.extract_slice %p3[0, 0, 8] [6, 3, 4] [1, 1, 1] : tensor<6x3x12xf32> to tensor<6x3x4xf32>
  %cat = tensor.concat dim(0) %q, %k, %v : (tensor<6x3x4xf32>, tensor<6x3x4xf32>, tensor<6x3x4xf32>) -> tensor<18x3x4xf32>
  %st = tensor.expand_shape %cat [[0, 1], [2], [3]] output_shape [3, 6, 3, 4] : tensor<18x3x4xf32> into tensor<3x6x3x4xf32>
  %et = tensor.empty() : tensor<6x3x3x4xf32>
  %t = linalg.transpose ins(%st : tensor<3x6x3x4xf32>) outs(%et : tensor<6x3x3x4xf32>) permutation = [1, 0, 2, 3]
  // Two copies of the stack side by side (a concat along a non-batch dim).
  %t1 = tensor.expand_shape %t [[0, 1], [2], [3], [4]] output_shape [1, 6, 3, 3, 4] : tensor<6x3x3x4xf32> into tensor<1x6x3x3x4xf32>
  %two = tensor.concat dim(0) %t1, %t1 : (tensor<1x6x3x3x4xf32>, tensor<1x6x3x3x4xf32>) -> tensor<2x6x3x3x4xf32>
  %es = tensor.empty() : tensor<3x2x4xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(c, b, s, t, d) -> (c, b, s, t, d)>, affine_map<(c, b, s, t, d) -> (s, c, d)>], iterator_types = ["parallel", "reduction", "parallel", "reduction", "parallel"]} ins(%two : tensor<2x6x3x3x4xf32>) outs(%zs : tensor<3x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %r = arith.addf %m, %o : f32
    linalg.yield %r : f32
  } -> tensor<3x2x4xf32>
  return %sum, %two : tensor<3x2x4xf32>, tensor<2x6x3x3x4xf32>
}
