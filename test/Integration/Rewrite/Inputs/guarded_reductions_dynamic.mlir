// Inputs/guarded_reductions.mlir with a dynamic batch (the batch size read
// from %x). Used by guarded-reductions.test.
#id = affine_map<(i, j) -> (i, j)>
#xb = affine_map<(i, j, b) -> (b, i)>
#rb = affine_map<(i, j, b) -> (b, j)>
#o = affine_map<(i, j, b) -> (i, j)>
func.func @train_step(%w: tensor<4x3xf32>, %g: tensor<3xf32>, %lr: f32, %train: i1, %step: i32,
                      %x: tensor<?x4xf32> {ga.batch = 0 : i64}, %y: tensor<?x3xf32> {ga.batch = 0 : i64})
    -> (tensor<4x3xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %c0i = arith.constant 0 : index
  %nb = tensor.dim %x, %c0i : tensor<?x4xf32>
  %e = tensor.empty(%nb) : tensor<?x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x3xf32>) outs(%z : tensor<?x3xf32>) -> tensor<?x3xf32>
  %r = linalg.sub ins(%h, %y : tensor<?x3xf32>, tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce { arith.addf } ins(%r : tensor<?x3xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
  // Flag: the weight gradient (init filled inside the branch), an SGD update
  // after it, and a bias gradient accumulated into the previous one (%g, a
  // non-neutral init from above).
  %wn, %gn = scf.if %train -> (tensor<4x3xf32>, tensor<3xf32>) {
    %ew = tensor.empty() : tensor<4x3xf32>
    %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<4x3xf32>) -> tensor<4x3xf32>
    %sq = linalg.mul ins(%r, %r : tensor<?x3xf32>, tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
    %dw = linalg.generic {indexing_maps = [#xb, #rb, #o], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %sq : tensor<?x4xf32>, tensor<?x3xf32>) outs(%zw : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %c, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    %db = linalg.reduce { arith.addf } ins(%r : tensor<?x3xf32>) outs(%g : tensor<3xf32>) dimensions = [0]
    %upd = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%w, %dw : tensor<4x3xf32>, tensor<4x3xf32>) outs(%ew : tensor<4x3xf32>) {
    ^bb0(%a: f32, %d: f32, %o: f32):
      %s = arith.mulf %d, %lr : f32
      %n = arith.subf %a, %s : f32
      linalg.yield %n : f32
    } -> tensor<4x3xf32>
    scf.yield %upd, %db : tensor<4x3xf32>, tensor<3xf32>
  } else {
    scf.yield %w, %g : tensor<4x3xf32>, tensor<3xf32>
  }
  // Step counter: every other step, the loss continued by the sum of |r|
  // (a chain: the init is the loss, itself reduced over the batch) and the
  // largest residual (maxnumf from -inf); else the loss and zero.
  %c2 = arith.constant 2 : i32
  %c0 = arith.constant 0 : i32
  %rem = arith.remsi %step, %c2 : i32
  %even = arith.cmpi eq, %rem, %c0 : i32
  %total, %largest = scf.if %even -> (tensor<f32>, tensor<f32>) {
    %abs = linalg.abs ins(%r : tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) -> tensor<?x3xf32>
    %t = linalg.reduce { arith.addf } ins(%abs : tensor<?x3xf32>) outs(%loss : tensor<f32>) dimensions = [0, 1]
    %ninf = arith.constant 0xFF800000 : f32
    %zm = linalg.fill ins(%ninf : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %m = linalg.reduce { arith.maxnumf } ins(%r : tensor<?x3xf32>) outs(%zm : tensor<f32>) dimensions = [0, 1]
    scf.yield %t, %m : tensor<f32>, tensor<f32>
  } else {
    scf.yield %loss, %zs : tensor<f32>, tensor<f32>
  }
  return %wn, %gn, %total, %largest : tensor<4x3xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>
}
