// A step that writes an i1 mask (y != 3), returned as is and reshaped to 8x1.
// Concatenated with i1_mask_main.mlir by ../i1-masks.test.
#id = affine_map<(i) -> (i)>
func.func @mask(%y: tensor<8xi32>) -> (tensor<8xi1>, tensor<8x1xi1>) {
  %c3 = arith.constant 3 : i32
  %e = tensor.empty() : tensor<8xi1>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<8xi32>) outs(%e : tensor<8xi1>) {
  ^bb0(%a: i32, %o: i1):
    %ne = arith.cmpi ne, %a, %c3 : i32
    linalg.yield %ne : i1
  } -> tensor<8xi1>
  %x = tensor.expand_shape %m [[0, 1]] output_shape [8, 1] : tensor<8xi1> into tensor<8x1xi1>
  return %m, %x : tensor<8xi1>, tensor<8x1xi1>
}
