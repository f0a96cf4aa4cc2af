// RUN: ga-opt %s -ga-widen-i1-tensors -split-input-file | FileCheck %s
// RUN: ga-opt %s -ga-widen-i1-tensors -split-input-file -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -ga-vectorize-linalg="vector-width=256" | FileCheck %s --check-prefix=VEC

// A one-hot mask (labels compared with the classes) read by a cross-entropy
// gradient: computed into an i8 tensor (the comparison zero-extended), read
// through a truncation; the i1 tensor.empty is gone.
// CHECK-LABEL: func.func @one_hot
// CHECK-NOT:     xi1>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<64x512xi8>
// CHECK:         %[[HOT:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<64x512xi8>)
// CHECK-NEXT:    ^bb0(%[[L:.*]]: i64, %[[C:.*]]: i64, %{{.*}}: i8):
// CHECK-NEXT:      %[[EQ:.*]] = arith.cmpi eq, %[[L]], %[[C]] : i64
// CHECK-NEXT:      %[[W:.*]] = arith.extui %[[EQ]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[W]] : i8
// CHECK:         linalg.generic {{.*}} ins(%[[HOT]], %{{.*}} : tensor<64x512xi8>, tensor<64x512xf32>)
// CHECK-NEXT:    ^bb0(%[[H8:.*]]: i8, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[H:.*]] = arith.trunci %[[H8]] : i8 to i1
// CHECK-NEXT:      arith.select %[[H]]
// CHECK-NOT:     xi1>
// CHECK:         return

// Both ops are then vectorized: the mask is written and read as bytes (4
// lanes where i64 labels are compared, 8 where f32 values are selected).
// VEC-LABEL: func.func @one_hot
// VEC:         arith.extui %{{.*}} : vector<4xi1> to vector<4xi8>
// VEC:         vector.transfer_write %{{.*}} : vector<4xi8>, memref<1x4xi8
// VEC:         vector.transfer_read %{{.*}} : memref<1x8xi8, {{.*}}>, vector<8xi8>
// VEC:         arith.trunci %{{.*}} : vector<8xi8> to vector<8xi1>
// VEC:         arith.select %{{.*}} : vector<8xi1>, vector<8xf32>
func.func @one_hot(%labels: tensor<64x1xi64>, %classes: tensor<1x512xi64>, %p: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x512xi1>
  %hot = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%labels, %classes : tensor<64x1xi64>, tensor<1x512xi64>) outs(%e : tensor<64x512xi1>) {
  ^bb0(%l: i64, %c: i64, %o: i1):
    %eq = arith.cmpi eq, %l, %c : i64
    linalg.yield %eq : i1
  } -> tensor<64x512xi1>
  %out = tensor.empty() : tensor<64x512xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%hot, %p : tensor<64x512xi1>, tensor<64x512xf32>) outs(%out : tensor<64x512xf32>) {
  ^bb0(%h: i1, %v: f32, %o: f32):
    %s = arith.select %h, %one, %zero : f32
    %d = arith.subf %v, %s : f32
    linalg.yield %d : f32
  } -> tensor<64x512xf32>
  return %g : tensor<64x512xf32>
}

// -----

// An "any" row reduction (a fill of false, then ori) read by an element-wise
// op: the fill fills i8 with the widened scalar, the reduction reads and
// writes its accumulator through trunci / extui; a dense i1 constant read by
// the element-wise op becomes an i8 constant of 0 and 1.
// CHECK-LABEL: func.func @any_row
// CHECK:         %[[FALSE:.*]] = arith.constant false
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8xi8>
// CHECK:         %[[F8:.*]] = arith.extui %[[FALSE]] : i1 to i8
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[F8]] : i8) outs(%[[E]] : tensor<8xi8>)
// CHECK:         %[[ANY:.*]] = linalg.generic {{.*}} outs(%[[FILL]] : tensor<8xi8>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %[[ACC8:.*]]: i8):
// CHECK-NEXT:      %[[ACC:.*]] = arith.trunci %[[ACC8]] : i8 to i1
// CHECK:           %[[OR:.*]] = arith.ori %{{.*}}, %[[ACC]] : i1
// CHECK-NEXT:      %[[W:.*]] = arith.extui %[[OR]] : i1 to i8
// CHECK-NEXT:      linalg.yield %[[W]] : i8
// CHECK:         %[[CST:.*]] = arith.constant dense<{{\[}}[1, 0, 1, 1]]> : tensor<1x4xi8>
// CHECK:         linalg.generic {{.*}} ins(%[[ANY]], %[[CST]] : tensor<8xi8>, tensor<1x4xi8>)
// CHECK-NOT:     xi1>
// CHECK:         return
func.func @any_row(%x: tensor<8x64xf32>) -> tensor<8x4xf32> {
  %false = arith.constant false
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xi1>
  %f = linalg.fill ins(%false : i1) outs(%e : tensor<8xi1>) -> tensor<8xi1>
  %any = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%f : tensor<8xi1>) {
  ^bb0(%v: f32, %o: i1):
    %gt = arith.cmpf ogt, %v, %zero : f32
    %r = arith.ori %gt, %o : i1
    linalg.yield %r : i1
  } -> tensor<8xi1>
  %m = arith.constant dense<[[true, false, true, true]]> : tensor<1x4xi1>
  %out = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%any, %m : tensor<8xi1>, tensor<1x4xi1>) outs(%out : tensor<8x4xf32>) {
  ^bb0(%a: i1, %c: i1, %o: f32):
    %both = arith.andi %a, %c : i1
    %s = arith.select %both, %one, %zero : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A mask that a linalg op reads and a function result returns: the linalg op
// reads the i8 form, the result an i1 copy of it (trunci).
// CHECK-LABEL: func.func @read_and_returned
// CHECK:         %[[M8:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16xi8>)
// CHECK:         %[[M1:.*]] = linalg.generic {{.*}} ins(%[[M8]] : tensor<16xi8>) outs(%{{.*}} : tensor<16xi1>)
// CHECK-NEXT:    ^bb0(%[[B:.*]]: i8, %{{.*}}: i1):
// CHECK-NEXT:      %[[T:.*]] = arith.trunci %[[B]] : i8 to i1
// CHECK-NEXT:      linalg.yield %[[T]] : i1
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[M8]], %{{.*}} : tensor<16xi8>, tensor<16xf32>)
// CHECK:         return %[[Y]], %[[M1]] : tensor<16xf32>, tensor<16xi1>
func.func @read_and_returned(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xi1>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xi1>) {
  ^bb0(%v: f32, %o: i1):
    %gt = arith.cmpf ogt, %v, %zero : f32
    linalg.yield %gt : i1
  } -> tensor<16xi1>
  %out = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%m, %x : tensor<16xi1>, tensor<16xf32>) outs(%out : tensor<16xf32>) {
  ^bb0(%a: i1, %v: f32, %o: f32):
    %s = arith.select %a, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %y, %m : tensor<16xf32>, tensor<16xi1>
}

// -----

// A named op reading a mask (linalg.map) is rewritten through its generic
// form.
// CHECK-LABEL: func.func @named_reader
// CHECK:         %[[M8:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16xi8>)
// CHECK:         linalg.generic {{.*}} ins(%[[M8]], %{{.*}} : tensor<16xi8>, tensor<16xf32>)
// CHECK:           arith.trunci
// CHECK-NOT:     linalg.map
func.func @named_reader(%x: tensor<16xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xi1>) {
  ^bb0(%v: f32, %o: i1):
    %gt = arith.cmpf ogt, %v, %zero : f32
    linalg.yield %gt : i1
  } -> tensor<16xi1>
  %out = tensor.empty() : tensor<16xf32>
  %y = linalg.map ins(%m, %x : tensor<16xi1>, tensor<16xf32>) outs(%out : tensor<16xf32>)
    (%a: i1, %v: f32, %o: f32) {
      %s = arith.select %a, %v, %zero : f32
      linalg.yield %s : f32
    }
  return %y : tensor<16xf32>
}

// -----

// A mask read through a reshape (a row mask unsqueezed to broadcast along
// the row, as the probabilities of an attention read `empty[..., None]`):
// the reshape takes the i8 form, and its reader reads i8.
// CHECK-LABEL: func.func @reshaped_reader
// CHECK:         %[[M8:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi8>)
// CHECK-NOT:     xi1>
// CHECK:         %[[E8:.*]] = tensor.expand_shape %[[M8]] {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xi8> into tensor<4x1xi8>
// CHECK:         linalg.generic {{.*}} ins(%[[E8]], %{{.*}} : tensor<4x1xi8>, tensor<4x8xf32>)
// CHECK:           arith.trunci
// CHECK-NOT:     xi1>
// VEC-LABEL: func.func @reshaped_reader
// VEC-NOT:     linalg.generic
// VEC:         arith.select {{.*}} : vector<8xi1>, vector<8xf32>
func.func @reshaped_reader(%row: tensor<4xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%row : tensor<4xf32>) outs(%e : tensor<4xi1>) {
  ^bb0(%v: f32, %o: i1):
    %lt = arith.cmpf olt, %v, %zero : f32
    linalg.yield %lt : i1
  } -> tensor<4xi1>
  %m2 = tensor.expand_shape %m [[0, 1]] output_shape [4, 1] : tensor<4xi1> into tensor<4x1xi1>
  %out = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %x : tensor<4x1xi1>, tensor<4x8xf32>) outs(%out : tensor<4x8xf32>) {
  ^bb0(%a: i1, %v: f32, %o: f32):
    %s = arith.select %a, %zero, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
