// Driver for the runner tests: calls @train_step of
// test/Integration/Inputs/steps/linreg_mean.mlir (B = 12, features = 8) on fixed
// inputs and prints its three results. Concatenated after the step by the RUN
// lines of ../runner-linreg.test.
func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %w = arith.constant dense<[0.1987, 0.9975, 0.3350, -0.8183, -0.7728, 0.4048, 0.9894, 0.1245]> : tensor<8xf32>
  %b = arith.constant dense<0.5> : tensor<f32>
  %lr = arith.constant 0.125 : f32
  %x = arith.constant dense<[[1.0000, 0.4536, -0.5885, -0.9875, -0.3073, 0.7087, 0.9502, 0.1534],
      [0.7648, -0.2272, -0.9710, -0.6536, 0.3780, 0.9965, 0.5261, -0.5193],
      [0.1700, -0.8011, -0.8968, -0.0124, 0.8855, 0.8157, -0.1455, -0.9477],
      [-0.5048, -0.9983, -0.4008, 0.6347, 0.9766, 0.2513, -0.7486, -0.9304],
      [-0.9422, -0.7259, 0.2837, 0.9833, 0.6084, -0.4314, -0.9997, -0.4755],
      [-0.9365, -0.1122, 0.8347, 0.8694, -0.0460, -0.9111, -0.7806, 0.2030],
      [-0.4903, 0.5544, 0.9932, 0.3466, -0.6787, -0.9624, -0.1943, 0.7861],
      [0.1865, 0.9602, 0.6845, -0.3392, -0.9922, -0.5610, 0.4833, 0.9994],
      [0.7756, 0.9144, 0.0540, -0.8654, -0.8391, 0.1042, 0.9336, 0.7427],
      [0.9999, 0.4385, -0.6020, -0.9847, -0.2913, 0.7204, 0.9449, 0.1367],
      [0.7539, -0.2435, -0.9748, -0.6408, 0.3935, 0.9978, 0.5117, -0.5336],
      [0.1534, -0.8111, -0.8892, 0.0044, 0.8932, 0.8059, -0.1621, -0.9530]]> : tensor<12x8xf32>
  %y = arith.constant dense<[0.0000, 0.7232, 1.3486, 1.7914, 1.9918, 1.9226, 1.5931, 1.0481, 0.3612, -0.3746, -1.0597, -1.6013]> : tensor<12xf32>
  %r:3 = func.call @train_step(%w, %b, %lr, %x, %y)
      : (tensor<8xf32>, tensor<f32>, f32, tensor<12x8xf32>, tensor<12xf32>)
     -> (tensor<8xf32>, tensor<f32>, tensor<f32>)
  %w_new = tensor.cast %r#0 : tensor<8xf32> to tensor<*xf32>
  %b_new = tensor.cast %r#1 : tensor<f32> to tensor<*xf32>
  %loss = tensor.cast %r#2 : tensor<f32> to tensor<*xf32>
  func.call @printMemrefF32(%w_new) : (tensor<*xf32>) -> ()
  func.call @printMemrefF32(%b_new) : (tensor<*xf32>) -> ()
  func.call @printMemrefF32(%loss) : (tensor<*xf32>) -> ()
  return
}
