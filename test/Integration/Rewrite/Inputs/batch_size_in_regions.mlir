// The batch size read with tensor.dim inside regions, with a dynamic batch:
//   - inside an scf.if that is per-sample (it scales every sample by 1/B),
//   - inside an scf.for over per-sample values (a running 1/B factor),
//   - inside an scf.if after the reduction (the mean of a sum),
//   - inside the payload of a linalg.generic after the reduction.
// Every one of them must be the full batch size, never the micro-batch's.
#id = affine_map<(b, j) -> (b, j)>
#col = affine_map<(b, j) -> (j)>
#all = affine_map<(b, j) -> ()>
func.func @train_step(%w: tensor<4xf32>, %flag: i1, %x: tensor<?x4xf32> {ga.batch = 0 : i64}) -> (tensor<f32>, tensor<4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%b) : tensor<?x4xf32>
  %scaled = scf.if %flag -> tensor<?x4xf32> {
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %w : tensor<?x4xf32>, tensor<4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %q = arith.divf %m, %nf : f32
      linalg.yield %q : f32
    } -> tensor<?x4xf32>
    scf.yield %r : tensor<?x4xf32>
  } else {
    scf.yield %x : tensor<?x4xf32>
  }
  %h = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %scaled) -> tensor<?x4xf32> {
    %n = tensor.dim %a, %c0 : tensor<?x4xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %t = math.tanh %v : f32
      %q = arith.mulf %t, %nf : f32
      linalg.yield %q : f32
    } -> tensor<?x4xf32>
    scf.yield %r : tensor<?x4xf32>
  }
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #col, #all], iterator_types = ["reduction", "reduction"]} ins(%h, %w : tensor<?x4xf32>, tensor<4xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %m = arith.mulf %a, %v : f32
    %r = arith.addf %m, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %g = linalg.reduce { arith.addf } ins(%h : tensor<?x4xf32>) outs(%z4 : tensor<4xf32>) dimensions = [0]
  %mean = scf.if %flag -> tensor<f32> {
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %q = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : tensor<f32>) outs(%es : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.divf %a, %nf : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    scf.yield %q : tensor<f32>
  } else {
    scf.yield %s : tensor<f32>
  }
  %mean2 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %r = arith.divf %a, %nf : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %mean, %g, %mean2 : tensor<f32>, tensor<4xf32>, tensor<f32>
}
