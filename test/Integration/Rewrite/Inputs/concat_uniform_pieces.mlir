// Per-sample tensors concatenated along a non-batch dimension with pieces
// that are not per-sample but span the batch (concat-uniform-pieces.test),
// the way fused projections are assembled: a padded input, a broadcast
// bias, a table of per-sample weights read in reverse (`7 - b`), a splat
// constant. The rewrite re-creates each piece for the micro-batch through
// the model of its producer: the broadcast, the empty tensor and the splat
// are recomputed at micro-batch size, the reversed table (whose map is not
// the identity on the batch loop) is sliced from its full value.
#id2 = affine_map<(b, j) -> (b, j)>
#col = affine_map<(b, j) -> (j)>
#rev = affine_map<(b, j) -> (7 - b, j)>

func.func @static_pieces(%bias: tensor<2xf32>, %table: tensor<8x2xf32>, %w: tensor<9x3xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> (tensor<9x3xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %padded = tensor.pad %x low[0, 1] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %half : f32
  } : tensor<8x3xf32> to tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %bb = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<2xf32>) outs(%e2 : tensor<8x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<8x2xf32>
  %flip = linalg.generic {indexing_maps = [#rev, #id2], iterator_types = ["parallel", "parallel"]} ins(%table : tensor<8x2xf32>) outs(%e2 : tensor<8x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x2xf32>
  %splat = arith.constant dense<0.25> : tensor<8x1xf32>
  %cat = tensor.concat dim(1) %padded, %bb, %flip, %splat : (tensor<8x4xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x1xf32>) -> tensor<8x9xf32>
  %e9 = tensor.empty() : tensor<8x9xf32>
  %h = linalg.tanh ins(%cat : tensor<8x9xf32>) outs(%e9 : tensor<8x9xf32>) -> tensor<8x9xf32>
  %ew = tensor.empty() : tensor<9x3xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<9x3xf32>) -> tensor<9x3xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%h, %x : tensor<8x9xf32>, tensor<8x3xf32>) outs(%zw : tensor<9x3xf32>) -> tensor<9x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%h : tensor<8x9xf32>) outs(%sz : tensor<f32>) dimensions = [0, 1]
  return %g, %loss : tensor<9x3xf32>, tensor<f32>
}

// The same with a dynamic batch: the broadcast bias on an empty tensor sized
// by the batch, the padded input and an elementwise function of the bias.
func.func @dynamic_pieces(%bias: tensor<2xf32>, %x: tensor<?x3xf32> {ga.batch = 0 : i64}) -> (tensor<7x3xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x3xf32>
  %padded = tensor.pad %x low[0, 0] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<?x3xf32> to tensor<?x4xf32>
  %e2 = tensor.empty(%b) : tensor<?x2xf32>
  %bb = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<2xf32>) outs(%e2 : tensor<?x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<?x2xf32>
  %eb = math.exp %bb : tensor<?x2xf32>
  %e1 = tensor.empty(%b) : tensor<?x1xf32>
  %one = arith.constant 1.0 : f32
  %ones = linalg.fill ins(%one : f32) outs(%e1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %cat = tensor.concat dim(1) %padded, %eb, %ones : (tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x1xf32>) -> tensor<?x7xf32>
  %e7 = tensor.empty(%b) : tensor<?x7xf32>
  %h = linalg.tanh ins(%cat : tensor<?x7xf32>) outs(%e7 : tensor<?x7xf32>) -> tensor<?x7xf32>
  %ew = tensor.empty() : tensor<7x3xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<7x3xf32>) -> tensor<7x3xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%h, %x : tensor<?x7xf32>, tensor<?x3xf32>) outs(%zw : tensor<7x3xf32>) -> tensor<7x3xf32>
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%h : tensor<?x7xf32>) outs(%sz : tensor<f32>) dimensions = [0, 1]
  return %g, %loss : tensor<7x3xf32>, tensor<f32>
}

// The region of tensor.pad computes the padding from the sample's position
// (a per-position table read at the batch index `%i` of the result): in the
// micro-batch's copy that index is local, and the model of tensor.pad makes
// it global again.
func.func @pad_at_sample(%table: tensor<8x5xf32>, %x: tensor<8x3xf32> {ga.batch = 0 : i64}) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    %v = tensor.extract %table[%i, %j] : tensor<8x5xf32>
    tensor.yield %v : f32
  } : tensor<8x3xf32> to tensor<8x5xf32>
  %e = tensor.empty() : tensor<8x5xf32>
  %h = linalg.tanh ins(%p : tensor<8x5xf32>) outs(%e : tensor<8x5xf32>) -> tensor<8x5xf32>
  %e5 = tensor.empty() : tensor<5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e5 : tensor<5xf32>) -> tensor<5xf32>
  %s = linalg.reduce { arith.addf } ins(%h : tensor<8x5xf32>) outs(%z : tensor<5xf32>) dimensions = [0]
  return %s : tensor<5xf32>
}
