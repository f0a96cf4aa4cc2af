// Driver of ../i1-masks.test: calls @mask of i1_mask.mlir on fixed labels and
// prints both masks as i32 (read element-wise, and through the 8x1 reshape).
func.func private @printMemrefI32(tensor<*xi32>)

func.func @main() {
  %y = arith.constant dense<[0, 1, 2, 3, 4, 5, 3, 7]> : tensor<8xi32>
  %m:2 = func.call @mask(%y) : (tensor<8xi32>) -> (tensor<8xi1>, tensor<8x1xi1>)
  %e1 = tensor.empty() : tensor<8xi32>
  %a = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%m#0 : tensor<8xi1>) outs(%e1 : tensor<8xi32>) {
  ^bb0(%b: i1, %o: i32):
    %z = arith.extui %b : i1 to i32
    linalg.yield %z : i32
  } -> tensor<8xi32>
  %e2 = tensor.empty() : tensor<8x1xi32>
  %c = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m#1 : tensor<8x1xi1>) outs(%e2 : tensor<8x1xi32>) {
  ^bb0(%b: i1, %o: i32):
    %z = arith.extui %b : i1 to i32
    linalg.yield %z : i32
  } -> tensor<8x1xi32>
  %pa = tensor.cast %a : tensor<8xi32> to tensor<*xi32>
  %pc = tensor.cast %c : tensor<8x1xi32> to tensor<*xi32>
  func.call @printMemrefI32(%pa) : (tensor<*xi32>) -> ()
  func.call @printMemrefI32(%pc) : (tensor<*xi32>) -> ()
  return
}
