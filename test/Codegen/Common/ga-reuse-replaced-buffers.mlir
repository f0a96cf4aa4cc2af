// RUN: ga-opt %s --ga-reuse-replaced-buffers --split-input-file | FileCheck %s
// RUN: ga-opt %s --ga-reuse-replaced-buffers --one-shot-bufferize="bufferize-function-boundaries allow-return-allocs-from-loops" --split-input-file | FileCheck %s --check-prefix=BUF

// An accumulator that goes through a transpose (torch-mlir's weight
// gradient of a square convolution): the transpose back is computed into
// the carried tensor, read only before it.
// CHECK-LABEL: func.func @transposed_accumulator(
// CHECK:         scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK:           %[[T:.*]] = linalg.transpose ins(%[[ACC]] : tensor<4x8xf32>)
// CHECK:           %[[S:.*]] = linalg.add ins(%[[T]], %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK:           %[[N:.*]] = linalg.transpose ins(%[[S]] : tensor<8x4xf32>) outs(%[[ACC]] : tensor<4x8xf32>)
// CHECK:           scf.yield %[[N]]
// Bufferized, the loop allocates nothing: it carries its init's buffer.
// BUF-LABEL: func.func @transposed_accumulator(
// BUF:         %[[T:.*]] = memref.alloc() {{.*}} : memref<8x4xf32>
// BUF:         scf.for
// BUF-NOT:       memref.alloc
// BUF:           linalg.transpose
// BUF-NOT:       memref.alloc
// BUF:           linalg.transpose
// BUF-NOT:       memref.alloc
// BUF:           scf.yield
func.func @transposed_accumulator(%init: tensor<4x8xf32>, %g: tensor<8x4xf32>,
                                  %n: index) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e0 = tensor.empty() : tensor<8x4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<4x8xf32>) {
    %t = linalg.transpose ins(%acc : tensor<4x8xf32>) outs(%e0 : tensor<8x4xf32>) permutation = [1, 0]
    %s = linalg.add ins(%t, %g : tensor<8x4xf32>, tensor<8x4xf32>) outs(%t : tensor<8x4xf32>) -> tensor<8x4xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %next = linalg.transpose ins(%s : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
    scf.yield %next : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// The old value is read after the op: left alone (writing the carried
// tensor would need a copy of it).
// CHECK-LABEL: func.func @read_after(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK:         linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
func.func @read_after(%init: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init, %other = %init) -> (tensor<4xf32>, tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %next = linalg.exp ins(%other : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %keep = linalg.abs ins(%acc : tensor<4xf32>) outs(%other : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %next, %keep : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// The op reads its init (an accumulation into it): not an empty's
// equivalent, left alone. An op that reads the carried value element-wise
// (through its init's map) computes into it.
// CHECK-LABEL: func.func @init_read(
// CHECK:         iter_args(%{{.*}} = %{{.*}}, %[[B:.*]] = %{{.*}})
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>)
// CHECK:         linalg.exp ins(%[[B]] : tensor<4xf32>) outs(%[[B]] : tensor<4xf32>)
#id = affine_map<(d0) -> (d0)>
func.func @init_read(%init: tensor<4xf32>, %x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init, %b = %init) -> (tensor<4xf32>, tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %na = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = arith.addf %v, %o : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %nb = linalg.exp ins(%b : tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %na, %nb : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Dynamic sizes: an empty of the same type may have other sizes.
// CHECK-LABEL: func.func @dynamic(
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?xf32>
// CHECK:         linalg.exp ins(%{{.*}} : tensor<?xf32>) outs(%[[E]] : tensor<?xf32>)
func.func @dynamic(%init: tensor<?xf32>, %x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<?xf32>) {
    %e = tensor.empty(%d) : tensor<?xf32>
    %next = linalg.exp ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    scf.yield %next : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

// An update materialized in its argument (--ga-write-results-in-place): the
// op that computes it reads the argument element-wise, so it can write it.
// CHECK-LABEL: func.func @update(
// CHECK-SAME:    %[[W:[^:]*]]: tensor<4xf32>
// CHECK:         %[[N:.*]] = linalg.sub ins(%[[W]], %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%[[W]] : tensor<4xf32>)
// CHECK:         bufferization.materialize_in_destination %[[N]] in %[[W]]
// Bufferized, the update is written into the argument: no copy.
// BUF-LABEL: func.func @update(
// BUF-NOT:     memref.alloc
// BUF:         linalg.sub
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @update(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %new = linalg.sub ins(%w, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = bufferization.materialize_in_destination %new in %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The op reads the destination through another map (a reversal): writing
// it in place would overwrite elements still to be read. Left alone.
// CHECK-LABEL: func.func @reversed_read(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK:         outs(%[[E]] : tensor<4xf32>)
#id1 = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (3 - d0)>
func.func @reversed_read(%w: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %new = linalg.generic {indexing_maps = [#rev, #id1], iterator_types = ["parallel"]}
      ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %r = bufferization.materialize_in_destination %new in %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A carried product into a zero fill (a time loop's `dh = dg W`): the fill
// writes the carried tensor, read only before it; bufferized, the product
// writes the carried buffer (the loop allocates only the generic's
// temporary) and the loop yields it.
// CHECK-LABEL: func.func @product_into_fill(
// CHECK:         scf.for {{.*}} iter_args(%[[DH:.*]] = %{{.*}})
// CHECK:           %[[G:.*]] = linalg.generic {{.*}} ins(%[[DH]], %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:           %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[DH]] : tensor<2x4xf32>)
// CHECK:           linalg.matmul ins(%[[G]], %{{.*}} : tensor<2x4xf32>, tensor<4x4xf32>) outs(%[[F]] : tensor<2x4xf32>)
// BUF-LABEL: func.func @product_into_fill(
// BUF:         scf.for {{.*}} iter_args(%[[A:.*]] = %{{.*}})
// BUF:           linalg.fill ins(%{{.*}} : f32) outs(%[[A]] :
// BUF:           linalg.matmul ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[A]] :
// BUF:           scf.yield %[[A]] :
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @product_into_fill(%init: tensor<2x4xf32>, %x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: index) -> tensor<2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%dh = %init) -> (tensor<2x4xf32>) {
    %e = tensor.empty() : tensor<2x4xf32>
    %g = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%dh, %x : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.mulf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<2x4xf32>
    %e2 = tensor.empty() : tensor<2x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %next = linalg.matmul ins(%g, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %next : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}

// -----

// The product reads the carried value itself (`h W` into a fill): the
// fill may not overwrite it first; left alone.
// CHECK-LABEL: func.func @product_reads_carried(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x4xf32>)
func.func @product_reads_carried(%init: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: index) -> tensor<2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %init) -> (tensor<2x4xf32>) {
    %e = tensor.empty() : tensor<2x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
    %next = linalg.matmul ins(%h, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %next : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
