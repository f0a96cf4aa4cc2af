// RUN: ga-opt %s --ga-memory-report="format=json cpu={fuse-elementwise=false}" -o /dev/null | FileCheck %s

// A step as the PyTorch frontend reports a data-parallel one (see
// python/ga_mlir/torch/_distributed.py, memory_report): every argument
// declares its class with `ga.role`, which the report takes as given (%m is
// read by the micro-batch loop, so the inference would count it as a
// parameter); the micro-batches have run-time sizes 5, 5 and 4 (14 samples
// in 3 micro-batches, the first 14 % 3 = 2 one larger), which the report
// bounds by the largest (5 rows of 8 f32 + 64 bytes of alignment = 224); a
// call of an external declaration that takes no buffer (a runtime's
// collective on a raw pointer) allocates nothing. (fuse-elementwise=false
// keeps the per-micro-batch temporary, which fusion would remove.)

// CHECK:      "function": "step",
// CHECK:      "parameters": 32,
// CHECK-NEXT: "optimizer_state": 36,
// CHECK-NEXT: "inputs": 448,
// CHECK:      "temporaries": 224,

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func private @runtime(i64) -> i32

func.func @step(%w: tensor<8xf32> {ga.role = "parameters"},
                %m: tensor<8xf32> {ga.role = "optimizer_state"},
                %lr: tensor<f32> {ga.role = "optimizer_state"},
                %x: tensor<14x8xf32> {ga.role = "inputs"}) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %acc = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %z) -> (tensor<8xf32>) {
    %larger = arith.cmpi ult, %i, %c2 : index
    %extra = arith.select %larger, %c1, %c0 : index
    %n = arith.addi %c4, %extra : index
    %start = arith.muli %i, %c5 : index
    %xs = tensor.extract_slice %x[%start, 0] [%n, 8] [1, 1] : tensor<14x8xf32> to tensor<?x8xf32>
    %t = tensor.empty(%n) : tensor<?x8xf32>
    %y = linalg.generic {indexing_maps = [#id2, #row, #row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%xs, %w, %m : tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%t : tensor<?x8xf32>) {
    ^bb0(%xv: f32, %wv: f32, %mv: f32, %o: f32):
      %0 = arith.mulf %xv, %wv : f32
      %1 = arith.addf %0, %mv : f32
      linalg.yield %1 : f32
    } -> tensor<?x8xf32>
    %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["reduction", "parallel"]}
        ins(%y : tensor<?x8xf32>) outs(%a : tensor<8xf32>) {
    ^bb0(%yv: f32, %o: f32):
      %0 = arith.addf %yv, %o : f32
      linalg.yield %0 : f32
    } -> tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  %id = arith.constant 0 : i64
  %status = func.call @runtime(%id) : (i64) -> i32
  return %acc : tensor<8xf32>
}
