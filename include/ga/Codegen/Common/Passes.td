//===- Passes.td - passes shared by the lowerings ----------*- tablegen -*-===//
//
// Steps that both --ga-lower-to-cpu and --ga-lower-to-nvvm take: preparing
// function signatures for the LLVM dialect, fusing element-wise ops,
// splitting shared fills before bufferization, and checking the contract of a
// pipeline's output.
//
//===----------------------------------------------------------------------===//

#ifndef GA_CODEGEN_COMMON_PASSES_TD
#define GA_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// PrepareFunctionsForLLVM
//===----------------------------------------------------------------------===//

def PrepareFunctionsForLLVM
    : Pass<"ga-prepare-functions-for-llvm", "ModuleOp"> {
  let summary = "Request C wrappers on public functions and drop ga.* "
                "argument attributes before lowering to LLVM";
  let description = [{
    The `ga.*` argument attributes (`ga.batch`, `ga.init`, `ga.range`) describe
    a training step at the tensor level and mean nothing below it: they are
    dropped from every function. With `c-interface=1`, every public function
    definition also gets `llvm.emit_c_interface`, so that func-to-llvm emits a
    `_mlir_ciface_<name>` wrapper taking memref descriptors by pointer (what a
    C caller, an ahead-of-time library or `ga-verify --reference-library`
    calls).

    Before (`--ga-prepare-functions-for-llvm=c-interface=1`):

    ```mlir
    func.func @step(%x: memref<8x4xf32> {ga.batch = 0 : i64}) { ... }
    ```

    After:

    ```mlir
    func.func @step(%x: memref<8x4xf32>) attributes {llvm.emit_c_interface} { ... }
    ```
  }];
  let options = [
    Option<"cInterface", "c-interface", "bool", /*default=*/"false",
           "Add llvm.emit_c_interface to every public function definition">
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// ConvolutionsToProducts
//===----------------------------------------------------------------------===//

def ConvolutionsToProducts
    : Pass<"ga-convolutions-to-products", "func::FuncOp"> {
  let summary = "Rewrite linalg convolutions into an im2col copy and matrix "
                "products (linalg.matmul) that the BLAS/cuBLASLt lowerings "
                "take";
  let description = [{
    Every op on tensors that `linalg::isaConvolutionOpInterface` accepts (the
    named `linalg.conv_*` ops, or a generic with their indexing maps) whose
    body is a floating-point multiply-add on one element type, with static
    shapes and at least one output channel, becomes one GEMM per group (one
    for the whole convolution without groups), over all samples at once:

    1. an im2col copy: a `linalg.generic` over [groups..., reduced...,
       batch..., image...] (reduced: input channels and filter loops) that
       reads the input through the convolution's own input indexing map
       (strides and dilations included; padding is the producer's
       `tensor.pad`);
    2. the output packed as [groups..., channels..., batch..., image...] and
       the filter as [groups..., channels..., reduced...] by `linalg.transpose`
       where they are laid out otherwise (NCHW outputs: the batch moves
       inside the channels; channels-last layouts; the generics of a 1-d
       convolution's gradients), the output transposed back after;
    3. `out[g] (M x N*P) += filter[g] (M x K) * col[g] (K x N*P)` as a
       `linalg.matmul` on slices of 3-d views, in an `scf.for` over the
       groups (over one group when there are none: element-wise fusion folds
       a parallel producer into a contraction, the im2col copy back into a
       convolution, but not across a slice that depends on a loop index).

    These are the forms torch-mlir emits for a convolution, its input
    gradient (a convolution of the padded output gradient with the flipped
    filter) and its filter gradient (the batch is then the reduced "input
    channel" dimension, or a group per sample for a strided one). The
    products accumulate into the convolution's own init, so a filter gradient
    that `--ga-accumulate` fused into its accumulator stays fused (CBLAS's
    beta = 1). Each output element is the same sum of products (in the
    BLAS's order). Other convolutions (depthwise: no output channel, which
    `ga-unroll-convolution-windows` takes; dynamic shapes; mixed element
    types or casts in the body) are left to the loop lowerings and counted
    (`left`); `remarks=1` says why at each.

    Before:

    ```mlir
    %y = linalg.conv_2d_nchw_fchw
           {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
           ins(%x, %w : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>)
           outs(%init : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    ```

    After (bodies elided):

    ```mlir
    %col = linalg.generic {indexing_maps =
             [affine_map<(c, kh, kw, n, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>,
              affine_map<(c, kh, kw, n, oh, ow) -> (c, kh, kw, n, oh, ow)>], ...}
             ins(%x : tensor<2x3x9x9xf32>) outs(%e : tensor<3x3x3x2x4x4xf32>)
    %cols = tensor.collapse_shape %col [[0, 1, 2], [3, 4, 5]]
              : tensor<3x3x3x2x4x4xf32> into tensor<27x32xf32>
    %packed = linalg.transpose ins(%init : tensor<2x4x4x4xf32>)
                outs(%e2 : tensor<4x2x4x4xf32>) permutation = [1, 0, 2, 3]
    %outs = tensor.collapse_shape %packed [[0], [1, 2, 3]]
              : tensor<4x2x4x4xf32> into tensor<4x32xf32>
    %w2 = tensor.collapse_shape %w [[0], [1, 2, 3]]
            : tensor<4x3x3x3xf32> into tensor<4x27xf32>
    %w3 = tensor.expand_shape %w2 [[0, 1], [2]] output_shape [1, 4, 27]
            : tensor<4x27xf32> into tensor<1x4x27xf32>
    %a3 = tensor.expand_shape %cols [[0, 1], [2]] output_shape [1, 27, 32]
            : tensor<27x32xf32> into tensor<1x27x32xf32>
    %c3 = tensor.expand_shape %outs [[0, 1], [2]] output_shape [1, 4, 32]
            : tensor<4x32xf32> into tensor<1x4x32xf32>
    %l = scf.for %g = %c0 to %c1 step %c1 iter_args(%acc = %c3) -> (tensor<1x4x32xf32>) {
      %wg = tensor.extract_slice %w3[%g, 0, 0] [1, 4, 27] [1, 1, 1]
              : tensor<1x4x27xf32> to tensor<4x27xf32>
      %a = tensor.extract_slice %a3[%g, 0, 0] [1, 27, 32] [1, 1, 1]
             : tensor<1x27x32xf32> to tensor<27x32xf32>
      %c = tensor.extract_slice %acc[%g, 0, 0] [1, 4, 32] [1, 1, 1]
             : tensor<1x4x32xf32> to tensor<4x32xf32>
      %p = linalg.matmul ins(%wg, %a : tensor<4x27xf32>, tensor<27x32xf32>)
             outs(%c : tensor<4x32xf32>) -> tensor<4x32xf32>
      %u = tensor.insert_slice %p into %acc[%g, 0, 0] [1, 4, 32] [1, 1, 1]
             : tensor<4x32xf32> into tensor<1x4x32xf32>
      scf.yield %u : tensor<1x4x32xf32>
    }
    %p2 = tensor.collapse_shape %l [[0, 1], [2]]
            : tensor<1x4x32xf32> into tensor<4x32xf32>
    %r = tensor.expand_shape %p2 [[0], [1, 2, 3]] output_shape [4, 2, 4, 4]
           : tensor<4x32xf32> into tensor<4x2x4x4xf32>
    %y = linalg.transpose ins(%r : tensor<4x2x4x4xf32>)
           outs(%e3 : tensor<2x4x4x4xf32>) permutation = [1, 0, 2, 3]
    ```
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each convolution left as loops, saying why">
  ];
  let statistics = [
    Statistic<"numRewritten", "rewritten",
              "Convolutions rewritten into im2col copies and products">,
    Statistic<"numLeft", "left",
              "Convolutions left to the loop lowerings">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "scf::SCFDialect",
                           "tensor::TensorDialect", "arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// UnrollConvolutionWindows
//===----------------------------------------------------------------------===//

def UnrollConvolutionWindows
    : Pass<"ga-unroll-convolution-windows", "func::FuncOp"> {
  let summary = "Rewrite depthwise linalg convolutions into one element-wise "
                "generic over the output that reads one strided input "
                "window per filter position";
  let description = [{
    A convolution on tensors (`linalg::isaConvolutionOpInterface`: the named
    `linalg.depthwise_conv_*` ops, or a generic with their indexing maps)
    whose `linalg::inferConvolutionDims` has neither output nor input
    channels (each channel is convolved with its own filter: depthwise),
    with static shapes, a floating-point multiply-add body, and at most
    `max-positions` filter positions, becomes one `linalg.generic` whose
    loops are the output's only, all parallel. For every filter position
    (the filter loops fixed to constants, in the loop nest's order), it
    reads

    1. the window of the input that this position multiplies: a
       `tensor.extract_slice` whose offsets, sizes and strides come from the
       convolution's own input indexing map (`stride * oh + dilation * kh`
       at kh fixed is a slice at offset `dilation * kh` with stride
       `stride`);
    2. the filter's values at this position (a rank-reduced slice);

    and its body is the convolution's own body inlined once per position,
    each adding into the running sum, in the order of the loop nest: each
    output element is the same sum in the same order, so the result is
    bit-identical to the loops'. The innermost loop is the output's last
    dimension, so `ga-vectorize-linalg` vectorizes it where the windows are
    contiguous (stride 1, which includes the input gradient of a strided
    convolution as the frontend forms it); the loop lowering otherwise runs
    it with the channel outside the image loops (the named op's nest has
    the channel inside them, striding across whole images).

    Convolutions with channels (the products take those:
    `ga-convolutions-to-products`), dynamic shapes, other bodies or more
    filter positions stay as they are and are counted (`left`); `remarks=1`
    says why at each.

    Before:

    ```mlir
    %y = linalg.depthwise_conv_2d_nchw_chw
           {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
           ins(%x, %w : tensor<1x3x5x5xf32>, tensor<3x2x2xf32>)
           outs(%init : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
    ```

    After (two of the four positions shown; maps over (n, c, oh, ow)):

    ```mlir
    %x00 = tensor.extract_slice %x[0, 0, 0, 0] [1, 3, 2, 2] [1, 1, 2, 2]
             : tensor<1x3x5x5xf32> to tensor<1x3x2x2xf32>
    %w00 = tensor.extract_slice %w[0, 0, 0] [3, 1, 1] [1, 1, 1]
             : tensor<3x2x2xf32> to tensor<3xf32>
    %x01 = tensor.extract_slice %x[0, 0, 0, 1] [1, 3, 2, 2] [1, 1, 2, 2]
             : tensor<1x3x5x5xf32> to tensor<1x3x2x2xf32>
    %w01 = tensor.extract_slice %w[0, 0, 1] [3, 1, 1] [1, 1, 1]
             : tensor<3x2x2xf32> to tensor<3xf32>
    ...
    %y = linalg.generic {indexing_maps = [
           affine_map<(n, c, oh, ow) -> (n, c, oh, ow)>,
           affine_map<(n, c, oh, ow) -> (c)>, ...,
           affine_map<(n, c, oh, ow) -> (n, c, oh, ow)>],
           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
           ins(%x00, %w00, %x01, %w01, ... : ...)
           outs(%init : tensor<1x3x2x2xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, ..., %out: f32):
      %0 = arith.mulf %a, %b : f32
      %1 = arith.addf %out, %0 : f32
      %2 = arith.mulf %c, %d : f32
      %3 = arith.addf %1, %2 : f32
      ...
      linalg.yield %7 : f32
    } -> tensor<1x3x2x2xf32>
    ```
  }];
  let options = [
    Option<"maxPositions", "max-positions", "unsigned", /*default=*/"64",
           "Unroll convolutions with at most this many filter positions "
           "(the product of the filter loops' sizes)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each convolution left as it is, saying why">
  ];
  let statistics = [
    Statistic<"numRewritten", "rewritten",
              "Convolutions rewritten into window generics">,
    Statistic<"numLeft", "left", "Convolutions left as they are">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// DecomposeAggregatedOps
//===----------------------------------------------------------------------===//

def DecomposeAggregatedOps
    : Pass<"ga-decompose-aggregated-ops", "func::FuncOp"> {
  let summary = "Decompose linalg ops with AggregatedOpInterface (softmax) "
                "into linalg ops the lowerings handle";
  let description = [{
    `linalg.softmax`, `ga.attention`, `ga.attention_backward` (and any other
    op implementing `linalg::AggregatedOpInterface`; the attention ops by a
    model in DecomposeAttention.cpp: their scores in the compute type, as
    `python/ga_mlir/torch/_attention.py` writes them) have no loop lowering:
    the training step contract accepts them, so the CPU and GPU pipelines
    decompose them on tensors, before bufferization, with the op's own
    `decomposeOperation` (softmax: upstream's decomposition, a max reduction,
    `exp(x - max)`, a sum reduction and a division, each a `linalg.generic`
    that fusion, bufferization and the loop lowerings then treat like any
    other), and `ga.grouped_matmul` into an `scf.for` over its groups of
    `linalg.matmul` on slices whose bounds are read from the group ends (one
    CBLAS call per group on the CPU). An op that cannot be decomposed, or
    one on buffers (decomposition builds tensors), is reported at its location
    and the pass fails.

    Before:

    ```mlir
    %s = linalg.softmax dimension(1) ins(%x : tensor<5x4xf32>)
        outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
    ```

    After (bodies elided):

    ```mlir
    %m0 = linalg.fill ins(%lowest : f32) outs(%e5 : tensor<5xf32>) -> tensor<5xf32>
    %m = linalg.generic {... ["parallel", "reduction"]} ins(%x ...) outs(%m0 ...)  // max
    %d = linalg.generic {... ["parallel", "parallel"]} ins(%x, %m ...) outs(%e ...) // exp(x - m)
    %s0 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<5xf32>) -> tensor<5xf32>
    %sum = linalg.generic {... ["parallel", "reduction"]} ins(%d ...) outs(%s0 ...) // sum
    %s = linalg.generic {... ["parallel", "parallel"]} ins(%d, %sum ...) outs(%d ...) // d / sum
    ```
  }];
  let statistics = [
    Statistic<"numDecomposed", "decomposed", "Aggregated ops decomposed">
  ];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "scf::SCFDialect",
                           "tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// DuplicateSharedFills
//===----------------------------------------------------------------------===//

def DuplicateSharedFills : Pass<"ga-duplicate-shared-fills", "func::FuncOp"> {
  let summary = "Give every use of a fill on tensors its own fill";
  let description = [{
    One fill that several ops write into (the inits of several reductions,
    the accumulators of a micro-batch loop) must be copied once per writer by
    one-shot bufferization; a fill per use is written in place instead: a
    cheaper write, no read and no copy. Which ops count as fills: `kind`
    (`named`: `linalg.fill`; `fill-like`: also the generics that
    `linalg-morph-ops` makes of it). Where the fills go: `placement`
    (`next-to-each-user`: a copy right before every user, inside the user's
    region, and the original erased, so that a zero fill next to a matrix
    product can become beta = 0 of a BLAS call; `keep-first-copy-at-user`:
    the first use keeps the fill where it is, every other use gets a copy
    before its user). A use inside a linalg body gets its copy before that
    linalg op.

    Before:

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %a = linalg.reduce ins(%x : tensor<8x4xf32>) outs(%z : tensor<4xf32>) dimensions = [0] ...
    %b = linalg.reduce ins(%y : tensor<8x4xf32>) outs(%z : tensor<4xf32>) dimensions = [0] ...
    ```

    After (`placement=next-to-each-user`):

    ```mlir
    %z0 = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %a = linalg.reduce ins(%x : tensor<8x4xf32>) outs(%z0 : tensor<4xf32>) dimensions = [0] ...
    %z1 = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %b = linalg.reduce ins(%y : tensor<8x4xf32>) outs(%z1 : tensor<4xf32>) dimensions = [0] ...
    ```
  }];
  let options = [
    Option<"kind", "kind", "::mlir::ga::FillKind",
           /*default=*/"::mlir::ga::FillKind::Named",
           "Which ops count as fills",
           [{::llvm::cl::values(
             clEnumValN(::mlir::ga::FillKind::Named, "named",
                        "linalg.fill only"),
             clEnumValN(::mlir::ga::FillKind::FillLike, "fill-like",
                        "every fill-like linalg op (also generics)"))}]>,
    Option<"placement", "placement", "::mlir::ga::FillPlacement",
           /*default=*/"::mlir::ga::FillPlacement::NextToEachUser",
           "Where the fills go",
           [{::llvm::cl::values(
             clEnumValN(::mlir::ga::FillPlacement::NextToEachUser,
                        "next-to-each-user",
                        "a copy before every user, the original erased"),
             clEnumValN(::mlir::ga::FillPlacement::KeepFirstCopyAtUser,
                        "keep-first-copy-at-user",
                        "the first use keeps the fill, the others get a "
                        "copy before their user"))}]>
  ];
  let statistics = [
    Statistic<"numCopies", "copies", "Copies of fills made">
  ];
  let dependentDialects = ["linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// DuplicateSharedEmpties
//===----------------------------------------------------------------------===//

def DuplicateSharedEmpties : Pass<"ga-duplicate-shared-empties",
                                  "func::FuncOp"> {
  let summary = "Split the uses of a tensor.empty into bounded groups, each "
                "with its own tensor.empty";
  let description = [{
    CSE merges identical `tensor.empty` ops (they have no side effect), so
    one empty ends up as the destination of every op of its type: hundreds
    of element-wise generics in an unrolled recurrence. One-shot
    bufferization's analysis (and `eliminate-empty-tensors`) then compares
    every pair of writes into that one alias set: time quadratic in the
    number of uses (docs/CPU.md, "Compile time of recurrent steps").

    An empty tensor has no contents, so any partition of its uses among
    several empties means the same. The partition matters for memory only:
    one-shot bufferization gives the writers of one empty one buffer where
    their values do not overlap (writers that conflict get buffers of their
    own), so an empty per use would cost a buffer per writer. This pass
    bounds the sharing instead: the uses of an empty, in program order, are
    cut into groups of at most `max-uses` consecutive uses; the first group
    keeps the empty, every other group gets a clone, placed in the block of
    the original right before the op that holds (or whose regions hold) the
    group's first use. An allocation never moves into a loop or a linalg
    body, and the reuse within a group stays. The analysis then costs
    O(uses x max-uses) instead of O(uses^2); an empty with at most
    `max-uses` uses is left as it is. Dynamic sizes are the original's
    operands, which dominate every clone.

    This is the rule of `ga-duplicate-shared-fills` (a destination that is
    only an allocation or a fill is shared by fewer writers) and shares its
    code; run it after that pass, whose copies all write into one empty.

    Before (`max-uses=2`):

    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %b = linalg.log ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %c = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    ```

    After:

    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %b = linalg.log ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %e1 = tensor.empty() : tensor<4xf32>
    %c = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let options = [
    Option<"maxUses", "max-uses", "unsigned", /*default=*/"64",
           "Most uses that one tensor.empty keeps (at least 1)">
  ];
  let statistics = [
    Statistic<"numShared", "shared",
              "Empty tensors with more than max-uses uses">,
    Statistic<"numCopies", "copies", "Empty tensors added">
  ];
  let dependentDialects = ["tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// EmitPackedInterfaces
//===----------------------------------------------------------------------===//

def EmitPackedInterfaces
    : Pass<"ga-emit-packed-interfaces", "ModuleOp"> {
  let summary = "Give every C wrapper `_mlir_ciface_<name>` a packed entry "
                "point `_ga_packed_<name>(void **args)` that takes its "
                "parameters through one array";
  let description = [{
    A caller that cannot pass an arbitrary number of arguments (Python's
    ctypes passes at most 1024; a step with many parameters and optimizer
    states takes more) calls a function through one array instead. For every
    `llvm.func @<name>` definition marked `llvm.emit_c_interface` (the mark
    that `--ga-prepare-functions-for-llvm=c-interface=1` sets and
    `--convert-func-to-llvm` keeps), this pass emits the public

    ```c
    void _ga_packed_<name>(void **args);
    ```

    which calls the C wrapper `_mlir_ciface_<name>` that func-to-llvm
    emitted for it, in the convention of upstream's ExecutionEngine packed
    wrappers (`_mlir_<name>`, built there at JIT time; here ahead of time, in
    the LLVM dialect, so that a shared library exports it): `args[i]` is the
    address of the wrapper's i-th parameter (for a memref descriptor, which
    the wrapper takes by pointer, the address of that pointer; the results
    structure likewise); when the wrapper returns a value, it is stored at
    the address `args[n]`, n being the number of parameters. The name
    differs from upstream's so that a module JIT-compiled with the
    ExecutionEngine (which packs every function again) has no clash.

    A marked function without its C wrapper (the pass runs after
    func-to-llvm), a variadic wrapper, or a symbol `_ga_packed_<name>` that
    exists already is reported at the function and the pass fails.

    Before (after `--convert-func-to-llvm`; bodies elided):

    ```mlir
    llvm.func @step(...) -> f32 attributes {llvm.emit_c_interface} {...}
    llvm.func @_mlir_ciface_step(%x: !llvm.ptr, %lr: f32) -> f32
        attributes {llvm.emit_c_interface} {...}
    ```

    After (added):

    ```mlir
    llvm.func @_ga_packed_step(%args: !llvm.ptr) {
      %0 = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
      %x = llvm.load %1 : !llvm.ptr -> !llvm.ptr
      %2 = llvm.getelementptr %args[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %3 = llvm.load %2 : !llvm.ptr -> !llvm.ptr
      %lr = llvm.load %3 : !llvm.ptr -> f32
      %r = llvm.call @_mlir_ciface_step(%x, %lr) : (!llvm.ptr, f32) -> f32
      %4 = llvm.getelementptr %args[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %5 = llvm.load %4 : !llvm.ptr -> !llvm.ptr
      llvm.store %r, %5 : f32, !llvm.ptr
      llvm.return
    }
    ```
  }];
  let statistics = [
    Statistic<"numEmitted", "packed-entry-points",
              "Packed entry points emitted">
  ];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// FoldUnitDims
//===----------------------------------------------------------------------===//

def FoldUnitDims : Pass<"ga-fold-unit-dims", "func::FuncOp"> {
  let summary = "Fold the unit-extent dimensions of linalg generics on "
                "tensors into reshapes, before element-wise fusion";
  let description = [{
    Frontends keep dimensions of extent 1 that only shape the data: a
    `keepdim` reduction writes `tensor<2x8x1xf32>` through the output map
    `(d0, d1, d2) -> (d0, d1, 0)`, and torch-mlir broadcasts that result into
    `tensor<2x8x1x16xf32>` and collapses it to `tensor<2x8x16xf32>` for the
    element-wise op that reads it. Element-wise fusion does not fold a
    reshape with several users, nor through a map with a constant, and the
    row kernels of `--ga-linalg-to-gpu-loops` (`fuse-rows`) take projected
    permutations only; so LayerNorm and softmax stayed one kernel per op
    (a fill, a reduction, a broadcast, ...). This pass applies upstream's
    unit-extent-dimension folding (`linalg::populateFoldUnitExtentDimsPatterns`,
    reassociative reshapes) to every `linalg.generic` on tensors: the loops of
    extent 1 and the operand dimensions they (or a constant 0) index are
    dropped, the operands collapsed and the results expanded back; the
    reshapes then cancel between neighbours, and the ops meet on one
    iteration space. The payload is unchanged: every element is computed by
    the same operations in the same order.

    Not upstream's pass (`linalg-fold-unit-extent-dims`), which also moves an
    init that the payload reads to the inputs (an in-place update would
    become a copy). Left alone, each counted in a statistic:

    * a `ga.library_product` (`--ga-isolate-library-products`): its layout
      is the one the library takes;
    * an op whose init is carried by a loop (a micro-batch accumulator): it
      keeps updating that tensor, not a reshape of it, so that
      `--ga-mark-accumulating-ops` and in-place bufferization see it;
    * an op whose result is written into a destination (the source of a
      `tensor.insert_slice` or `bufferization.materialize_in_destination`):
      a reshape between them would make bufferization copy it.

    Before (a row mean with `keepdim`):

    ```mlir
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                          affine_map<(d0, d1, d2) -> (d0, d1, 0)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : tensor<2x8x16xf32>) outs(%z : tensor<2x8x1xf32>) {...}
    ```

    After:

    ```mlir
    %c = tensor.collapse_shape %z [[0], [1, 2]]
        : tensor<2x8x1xf32> into tensor<2x8xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                          affine_map<(d0, d1, d2) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : tensor<2x8x16xf32>) outs(%c : tensor<2x8xf32>) {...}
    %m = tensor.expand_shape %r [[0], [1, 2]] output_shape [2, 8, 1]
        : tensor<2x8xf32> into tensor<2x8x1xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFolded", "folded-ops",
              "Generics with a loop of extent 1 whose unit dimensions were "
              "offered to the folding">,
    Statistic<"numFusedKept", "fused-kept-producers",
              "Producers read again after their consumer fused into it as "
              "an extra result (fuse-kept)">,
    Statistic<"numKeptProducts", "kept-products",
              "Library products left with their unit dimensions">,
    Statistic<"numKeptAccumulators", "kept-accumulators",
              "Updates of a loop-carried accumulator left with their unit "
              "dimensions">,
    Statistic<"numKeptDestinations", "kept-destination-writes",
              "Ops whose result is written into a destination, left with "
              "their unit dimensions">
  ];
  let dependentDialects = ["affine::AffineDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// FuseElementwise
//===----------------------------------------------------------------------===//

def FuseElementwise : Pass<"ga-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse element-wise linalg ops into their consumers, except "
                "where upstream fusion would apply an update more than once";
  let description = [{
    Upstream's `linalg-fuse-elementwise-ops` (an all-parallel generic fused
    into the consumer of its single-use result, reshapes folded by
    expansion, constant folding, the canonicalizations of generics) with
    these differences (why: docs/Rationale.md, "Element-wise fusion of a
    producer that reads its init"):

    * not fused: a producer whose payload reads its own `outs` into a
      consumer with loops that the fused operand's map drops (a reduction or
      a broadcast), which upstream (MLIR 22) miscompiles;
    * left whole: an op marked `ga.library_product` (nothing fused into or
      out of it, no reshape folded through it);
    * no reshape folded through an op whose result is written into a
      destination (`tensor.insert_slice`, `materialize_in_destination`);
    * with `recompute-shared=1`, a cheap producer (one result, all loops
      parallel, no init read, no regions or memory effects, at most
      `max-recompute-ops` operations) with several users is fused into each
      of them, when every user can absorb it; into a contraction only a
      producer that moves data (a transpose). With `keep-product-epilogues=1`
      a producer that reads a library product's result stays one op (the
      cuBLASLt bias epilogue).
    * with `fuse-kept=1`, a producer whose result is read by its consumer
      and again only after it (a forward value the backward reads) is fused
      into that consumer, which yields the producer's result as an extra
      result (upstream's preserved producer results): the value is computed
      once and stored once, in the consumer's loop, instead of a loop of
      its own that the consumer reads back. Only into an all-parallel
      consumer in the producer's block (the preserved result keeps the
      producer's shape and no work moves into a loop), and never when
      another user lies between the two (it would read the fused op's
      result before it is defined).

    Left alone (the consumer reduces over `k`, which `%y`'s map drops):

    ```mlir
    %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>,
                                          affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
        ins(%x : tensor<2xf32>) outs(%init : tensor<2xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %o, %a : f32        // reads its init
      linalg.yield %m : f32
    } -> tensor<2xf32>
    %z = linalg.generic {indexing_maps = [affine_map<(k, i) -> (i)>,
                                          affine_map<(k, i) -> (k)>,
                                          affine_map<(k, i) -> (i)>],
                         iterator_types = ["reduction", "parallel"]}
        ins(%y, %w : tensor<2xf32>, tensor<3xf32>) outs(%z0 : tensor<2xf32>) {...}
    ```

    A producer that does not read its init, or a consumer whose map of the
    fused operand is a permutation of all its loops, is fused as upstream
    fuses it.

    With `fuse-kept=1`, `%h` (read by `%y` and, later, by the backward's
    `%d`) is computed in `%y`'s loop, which yields it as a second result:

    ```mlir
    %h = linalg.generic {...} ins(%x, %bias : ...) { addf }
    %y = linalg.generic {...} ins(%h : ...) { tanh }
    ...
    %d = linalg.generic {...} ins(%g, %h : ...) { ... }
    // becomes
    %y:2 = linalg.generic {...} ins(%x, %bias : ...) { addf, tanh } // %h, %y
    ...
    %d = linalg.generic {...} ins(%g, %y#0 : ...) { ... }
    ```

    With `recompute-shared=1`, `%b` (read by two generics) is fused into
    both and disappears:

    ```mlir
    %b = linalg.generic {...} ins(%x, %bias : ...) { addf }   // 2 users
    %r = linalg.generic {...} ins(%b : ...) { maximumf }
    %d = linalg.generic {...} ins(%g, %b : ...) { cmpf, select }
    // becomes
    %r = linalg.generic {...} ins(%x, %bias : ...) { addf, maximumf }
    %d = linalg.generic {...} ins(%g, %x, %bias : ...) { addf, cmpf, select }
    ```
  }];
  let options = [
    Option<"recomputeShared", "recompute-shared", "bool", /*default=*/"false",
           "Fuse a cheap element-wise producer with several users into "
           "each of them (it is computed again in every user)">,
    Option<"maxRecomputeOps", "max-recompute-ops", "unsigned",
           /*default=*/"8",
           "Most payload operations of a producer fused into several users">,
    Option<"keepProductEpilogues", "keep-product-epilogues", "bool",
           /*default=*/"false",
           "With recompute-shared: leave a producer that reads a matrix "
           "product's result in place (one op, which the cuBLASLt lowering "
           "folds into the product as its bias epilogue)">,
    Option<"fuseKept", "fuse-kept", "bool", /*default=*/"false",
           "Fuse a producer whose result is also read after its consumer "
           "(a value kept for the backward) into that consumer, which then "
           "writes the producer's result too (computed once)">
  ];
  let statistics = [
    Statistic<"numRefused", "refused-fusions",
              "Fusions left out because the producer reads its init and the "
              "consumer has loops the producer does not">,
    Statistic<"numRecomputed", "recomputed-producers",
              "Producers with several users fused into each of them">,
    Statistic<"numFusedKept", "fused-kept-producers",
              "Producers read again after their consumer fused into it as "
              "an extra result (fuse-kept)">,
    Statistic<"numKeptProducts", "kept-products",
              "Fusions and reshape foldings left out because they would "
              "change a ga.library_product">,
    Statistic<"numKeptDestinations", "kept-destination-writes",
              "Reshape foldings left out because they would put a reshape "
              "between an op and the destination its result is written "
              "into (insert_slice, materialize_in_destination)">
  ];
  let dependentDialects = ["affine::AffineDialect", "linalg::LinalgDialect",
                           "memref::MemRefDialect", "tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// RegroupTransposes
//===----------------------------------------------------------------------===//

def RegroupTransposes : Pass<"ga-regroup-transposes", "func::FuncOp"> {
  let summary = "Transposes that move no data become reshapes, and a collapse "
                "of a transpose becomes a transpose of a collapse, so that "
                "products read the transposes' inputs";
  let description = [{
    Frontends split heads with a reshape and a transpose (`[B, T, H, D]` to
    `[B, H, T, D]`) and merge them back with a transpose and a reshape; the
    products in between (`linalg.batch_matmul` over `B * H`) read the
    transposes through a `tensor.collapse_shape`. Bufferized, every
    `linalg.transpose` is a copy into a buffer of its own, even when
    `--ga-isolate-library-products` could let the product read the source
    through its indexing map (a transposed BLAS operand): it looks for a
    transpose right at the product, not behind a reshape.

    The rule, from the permutation and the reshape's groups only: a
    transpose (`linalg.transpose`, or a generic that only permutes its input,
    as `asPermutation` in include/ga/Utils/Gemm.h takes it) followed by a
    collapse with groups G of its result dimensions (each dimension its own
    group when no collapse follows) is a collapse of its source, a smaller
    transpose and an expansion, when the non-unit source dimensions of every
    group are consecutive among the source's non-unit dimensions (unit
    dimensions go anywhere). Then:

    * when the smaller transpose is the identity (the transpose only moved
      dimensions of extent 1, e.g. the heads of a key with one key-value
      head), the transpose, or its collapse, becomes reshapes of its source:
      views on buffers, no copy;
    * otherwise, a collapse that is the transpose's only user becomes the
      smaller transpose of the collapsed source (one transpose for one, of the
      same size), which `--ga-isolate-library-products` then absorbs into the
      product that reads it when the product keeps a library layout (the
      transposed keys of `Q K^T`, the transposed probabilities of the
      attention's backward).

    A rewrite never adds a copy: a transpose with other users than the
    collapse keeps them, and only identities are split off it. Every element
    is read from the same source element as before: the values are bitwise
    the same. Ops on buffers and tensors of dynamic shape are left alone.

    Before:

    ```mlir
    %t = linalg.transpose ins(%k : tensor<1x2x64x32xf32>)
        outs(%e : tensor<1x2x32x64xf32>) permutation = [0, 1, 3, 2]
    %c = tensor.collapse_shape %t [[0, 1], [2], [3]]
        : tensor<1x2x32x64xf32> into tensor<2x32x64xf32>
    ```

    After:

    ```mlir
    %s = tensor.collapse_shape %k [[0, 1], [2], [3]]
        : tensor<1x2x64x32xf32> into tensor<2x64x32xf32>
    %c = linalg.transpose ins(%s : tensor<2x64x32xf32>)
        outs(%e2 : tensor<2x32x64xf32>) permutation = [0, 2, 1]
    ```
  }];
  let statistics = [
    Statistic<"numReshaped", "reshaped",
              "Transposes (or their collapses) that became reshapes only">,
    Statistic<"numRegrouped", "regrouped",
              "Collapses of transposes that became transposes of collapses">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// IsolateLibraryProducts
//===----------------------------------------------------------------------===//

def IsolateLibraryProducts
    : Pass<"ga-isolate-library-products", "func::FuncOp"> {
  let summary = "Recognise the matrix products that CBLAS and cuBLASLt take "
                "before element-wise fusion, absorb their transposes and mark "
                "them so that fusion leaves them whole";
  let description = [{
    Products first, then fusion. Element-wise fusion folds the layout ops
    that frontends put around matrix products (the `tensor.collapse_shape` of
    batch and sequence dimensions before a `linalg.matmul`, the
    `tensor.expand_shape` after it, element-wise producers) into the product:
    it then has two M dimensions or arithmetic in its body and the library
    lowerings (`--convert-linalg-to-blas`, `--ga-contractions-to-cublaslt`)
    no longer take it. This pass runs on tensors before fusion and decides
    from what each op declares, its indexing maps
    (`linalg::inferContractionDims`) and its body
    (`linalg::isaContractionOpInterface`), which ops are library products:
    a multiply-add contraction of two inputs into one init with one M, N and
    K dimension and at most one batch dimension, outermost in every operand
    (a plain, transposed or strided-batched GEMM), or a matrix-vector product
    (`hasLibraryLayout`, include/ga/Utils/Gemm.h, the rule that `matchGemm`
    applies on buffers).

    A transpose feeding such a product (`linalg.transpose`, or a generic that
    only permutes its input) is absorbed into the product's indexing map when
    the product keeps a library layout with it (the library then reads the
    operand transposed: no copy). Each library product is marked with the
    unit attribute `ga.library_product`; `--ga-fuse-elementwise` fuses
    nothing into or out of a marked op and folds no reshape through it, so
    the reshapes stay views on buffers and the product reaches the library
    lowering whole. The element-wise work between products is fused as before.
    Ops on buffers are left alone. A `ga.library_product` on an op that is not
    a library product (an outdated claim) is reported at the op, and the pass
    fails.

    Before:

    ```mlir
    %t = linalg.transpose ins(%w : tensor<16x64xf32>)
        outs(%e : tensor<64x16xf32>) permutation = [1, 0]
    %y = linalg.matmul ins(%x, %t : tensor<8x64xf32>, tensor<64x16xf32>)
        outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
    ```

    After:

    ```mlir
    %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                          affine_map<(m, n, k) -> (n, k)>,
                                          affine_map<(m, n, k) -> (m, n)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<8x64xf32>, tensor<16x64xf32>)
        outs(%acc : tensor<8x16xf32>) attrs = {ga.library_product} {...}
    ```
  }];
  let statistics = [
    Statistic<"numProducts", "products", "Contractions marked as library "
              "products">,
    Statistic<"numTransposes", "absorbed-transposes",
              "Transposes absorbed into a product's indexing map">
  ];
  let dependentDialects = ["linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// NarrowProductOperands
//===----------------------------------------------------------------------===//

def NarrowProductOperands
    : Pass<"ga-narrow-product-operands", "func::FuncOp"> {
  let summary = "Let a contraction of exact extensions (arith.extf) read the "
                "narrow tensors and extend in its body";
  let description = [{
    PyTorch's attention under bf16 autocast computes its scores in float32
    from bf16 queries and keys (`q.float() @ k.float().transpose(-2, -1)`,
    the CPU kernel's contract that the frontend traces). On the GPU that is
    an f32 GEMM on extended copies, where the same values as bf16 operands
    are a tensor-core product with f32 accumulation. This pass rewrites, on
    tensors: a contraction (`linalg::isaContractionOpInterface`, named or
    generic) whose every input is an exact extension of one narrower float
    type to the init's element type (a linalg op with identity maps whose
    body yields `arith.extf` of its input) reads the narrow tensors and
    extends them at the start of its body. The `linalg.transpose`,
    `tensor.collapse_shape` and `tensor.expand_shape` ops between an
    extension and the product are replayed on the narrow tensor (the wide
    ones stay for their other users), so they move the narrow data. Exact: every
    product multiplies the same values; the body's arithmetic is unchanged.
    A contraction with an input that is not such an extension is left alone
    (cuBLASLt takes two operands of one type).

    Before:

    ```mlir
    %qf = linalg.generic {identity maps} ins(%q : tensor<8x64xbf16>)
        outs(%e0 : tensor<8x64xf32>) { arith.extf ... }
    %kf = linalg.generic {identity maps} ins(%k : tensor<64x8xbf16>)
        outs(%e1 : tensor<64x8xf32>) { arith.extf ... }
    %s = linalg.matmul ins(%qf, %kf : tensor<8x64xf32>, tensor<64x8xf32>)
        outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
    ```

    After:

    ```mlir
    %s = linalg.generic {matmul maps}
        ins(%q, %k : tensor<8x64xbf16>, tensor<64x8xbf16>)
        outs(%acc : tensor<8x8xf32>) {
    ^bb0(%a: bf16, %b: bf16, %c: f32):
      %af = arith.extf %a : bf16 to f32
      %bf = arith.extf %b : bf16 to f32
      %m = arith.mulf %af, %bf : f32
      %s = arith.addf %c, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x8xf32>
    ```
  }];
  let statistics = [
    Statistic<"numNarrowed", "narrowed-products",
              "Contractions that read narrow operands">
  ];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect",
                           "tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// ConcatenateProducts
//===----------------------------------------------------------------------===//

def ConcatenateProducts
    : Pass<"ga-concatenate-products", "func::FuncOp"> {
  let summary = "Fold many small library products into one over "
                "concatenated operands: those that add into one accumulator "
                "(K = the sum of their K) and those that share their larger "
                "operand (M = the sum of their M)";
  let description = [{
    On tensors, after `--ga-isolate-library-products` (which marks the
    products the library takes, `ga.library_product`) and before fusion,
    three rewrites, each decided from use-def chains, dominance, regions and
    indexing maps:

    1. Accumulators merged: `scf.for` results carried only through ops that
       add into their init, and summed after the loop by one tree of
       element-wise `in0 + in1` generics, become one accumulator (the
       others must start from zero and their chains must not interleave).
    2. Products concatenated along K: a chain of marked products of one kind
       in one block, each adding into the previous one's result (used once),
       with one reduction dimension read along one dimension of each input,
       becomes one product over the `tensor.concat` of the inputs along that
       dimension, at the last one's place.
    3. Products concatenated along M: marked products of one kind from zero
       that share their larger operand become one product over the other
       operands concatenated along the dimension a parallel loop indexes in
       them and in the init but not in the shared one; each result is its
       `tensor.extract_slice` of the whole. The product goes before the first
       use of any result (pure ops computing a later operand move with it); a
       product that needs another's result (a recurrence) stays out.

    Steps 2 and 3 join at least four products and never copy a function
    argument. Every step only reassociates float sums or reorders
    independent products. Anything else (other kinds, accumulators read by
    anything but a sum, non-zero inits, several reduction dimensions) is
    left as it is. Why: docs/Rationale.md, "Recurrences: few large products
    instead of many small ones".

    Before:

    ```mlir
    %r:2 = scf.for %i = %c0 to %c4 step %c1
        iter_args(%a = %zero, %b = %zero) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
      %p = linalg.generic {...} ins(%g0, %h0 : tensor<4x8xf32>, tensor<4x16xf32>)
          outs(%a : tensor<8x16xf32>) attrs = {ga.library_product} {...}
      %q = linalg.generic {...} ins(%g1, %h1 : tensor<4x8xf32>, tensor<4x16xf32>)
          outs(%b : tensor<8x16xf32>) attrs = {ga.library_product} {...}
      scf.yield %p, %q : tensor<8x16xf32>, tensor<8x16xf32>
    }
    %dw = linalg.generic {...} ins(%r#0, %r#1 : ...) outs(%e : tensor<8x16xf32>) {
      // in0 + in1
    }
    ```

    After:

    ```mlir
    %dw = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (tensor<8x16xf32>) {
      %g = tensor.concat dim(0) %g0, %g1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
      %h = tensor.concat dim(0) %h0, %h1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
      %p = linalg.generic {...} ins(%g, %h : tensor<8x8xf32>, tensor<8x16xf32>)
          outs(%a : tensor<8x16xf32>) attrs = {ga.library_product} {...}
      scf.yield %p : tensor<8x16xf32>
    }
    ```
  }];
  let statistics = [
    Statistic<"numMerged", "merged-accumulators",
              "Loop-carried accumulators merged into another one">,
    Statistic<"numConcatenated", "concatenated-products",
              "Library products folded into a concatenated product along "
              "their reduction">,
    Statistic<"numRowConcatenated", "row-concatenated-products",
              "Library products folded into a product over concatenated "
              "rows of the operand they do not share">
  ];
  let dependentDialects = ["tensor::TensorDialect", "scf::SCFDialect",
                           "arith::ArithDialect", "linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// VerifyLowered
//===----------------------------------------------------------------------===//

def VerifyLowered : Pass<"ga-verify-lowered", "ModuleOp"> {
  let summary = "Check that only the ops a pipeline may leave are left";
  let description = [{
    The contract of a pipeline's output: every op in the module (other than
    the module itself) belongs to one of `allowed-dialects` or is one of
    `allowed-ops`. The first op that is not is reported at its location as
    "'<op>' was not lowered <by>" and the pass fails, so that a partial
    conversion never goes unnoticed. The pipelines add it last:
    `--ga-lower-to-cpu` with `allowed-dialects=llvm,omp`, `--ga-lower-to-nvvm`
    with `allowed-dialects=llvm allowed-ops=gpu.binary,gpu.launch_func`.

    Input (`--ga-verify-lowered=allowed-dialects=llvm`):

    ```mlir
    llvm.func @f(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32   // error: 'arith.addf' was not lowered
      llvm.return %y : f32
    }
    ```

    The IR is not changed.
  }];
  let options = [
    ListOption<"allowedDialects", "allowed-dialects", "std::string",
               "Dialects whose ops may be left">,
    ListOption<"allowedOps", "allowed-ops", "std::string",
               "Ops (by name) that may be left">,
    Option<"byWhat", "by", "std::string",
           /*default=*/"\"by the pipeline\"",
           "What should have lowered them, for the message">
  ];
}

//===----------------------------------------------------------------------===//
// ReuseReplacedBuffers
//===----------------------------------------------------------------------===//

def ReuseReplacedBuffers : Pass<"ga-reuse-replaced-buffers", "func::FuncOp"> {
  let summary = "Compute a value that replaces a tensor into that tensor, "
                "so that bufferization writes it into the replaced buffer";
  let description = [{
    Two kinds of values replace a tensor: a value an `scf.for` yields to its
    next iteration replaces the iteration argument, and the source of a
    `bufferization.materialize_in_destination` replaces its destination (a
    step's parameter or optimizer state written in place,
    `--ga-write-results-in-place`). When a destination-style op computes
    such a value into a fresh `tensor.empty`, bufferization gives it a new
    buffer: a loop then allocates in every iteration and carries a
    different buffer each time (deallocation adds an ownership flag and a
    free per iteration, and `--ga-capture-cuda-graphs` cannot record the
    body, since a graph replays the same addresses); an update is computed
    into a temporary and copied.

    For each such value, computed by a LinalgOp with a static shape into a
    `tensor.empty` of the replaced tensor's type that its payload does not
    read, this pass makes the replaced tensor the op's init, when every
    other read of the replaced tensor comes before the op, and the op itself
    reads it only element-wise (through the init's indexing map, with
    parallel iterators). An op that accumulates into a `linalg.fill` of a
    `tensor.empty` that nothing else reads (a matrix product into zeros:
    the gradient a time loop carries, `dh = dg W_hh`) is taken the same
    way through its fill: the fill writes the replaced tensor, when every
    other read of it comes before the fill and the op does not read it. A
    tensor the op does not read means the same as an empty one, so the
    rewrite changes no value; it lets one-shot
    bufferization write the op into the replaced buffer, which it does when
    no read conflicts. Unlike upstream's `eliminate-empty-tensors`, it
    leaves `tensor.insert_slice` alone: an op computed into a slice of a
    buffer that the micro-batch loop indexes by its induction variable
    would keep a library product that reads it from being staged for a CUDA
    graph (`--ga-device-iteration-index`).

    Before:

    ```mlir
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<4x8xf32>) {
      %t = linalg.transpose ins(%acc : tensor<4x8xf32>) outs(%e0 : tensor<8x4xf32>) permutation = [1, 0]
      %s = linalg.add ins(%t, %g : tensor<8x4xf32>, tensor<8x4xf32>) outs(%t : tensor<8x4xf32>) -> tensor<8x4xf32>
      %e = tensor.empty() : tensor<4x8xf32>
      %next = linalg.transpose ins(%s : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
      scf.yield %next : tensor<4x8xf32>
    }
    ```

    After:

    ```mlir
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<4x8xf32>) {
      %t = linalg.transpose ins(%acc : tensor<4x8xf32>) outs(%e0 : tensor<8x4xf32>) permutation = [1, 0]
      %s = linalg.add ins(%t, %g : tensor<8x4xf32>, tensor<8x4xf32>) outs(%t : tensor<8x4xf32>) -> tensor<8x4xf32>
      %next = linalg.transpose ins(%s : tensor<8x4xf32>) outs(%acc : tensor<4x8xf32>) permutation = [1, 0]
      scf.yield %next : tensor<4x8xf32>
    }
    ```
  }];
  let statistics = [
    Statistic<"numCarried", "carried",
              "Loop-carried values computed into their iteration argument">,
    Statistic<"numMaterialized", "materialized",
              "Values computed into the destination they are materialized in">
  ];
  let dependentDialects = ["linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// WriteResultsInPlace
//===----------------------------------------------------------------------===//

def WriteResultsInPlace : Pass<"ga-write-results-in-place", "ModuleOp"> {
  let summary = "Write chosen results of a step into the buffers of chosen "
                "arguments, and drop them from its results";
  let description = [{
    For each `result:argument` pair of `pairs`, the function `func` writes
    that result into that argument's tensor
    (`bufferization.materialize_in_destination`) and stops returning it:
    the function becomes the private `@<func>_in_place`, and a new public
    `@<func>` with the same arguments calls it and returns the other
    results. Upstream passes then do the work and prove it:
    `eliminate-empty-tensors` makes the op that computes the result write
    into the argument's tensor, one-shot bufferization keeps it in place
    when no later read of the old value conflicts (else it copies), and
    `drop-equivalent-buffer-results` removes the private function's results
    that are its arguments' buffers. This is how the PyTorch frontend
    updates parameters and optimizer states without a copy.

    Before (`--ga-write-results-in-place="pairs=0:0"`):

    ```mlir
    func.func @train_step(%w: tensor<4xf32>, %x: tensor<8x4xf32>)
        -> (tensor<4xf32>, tensor<f32>) {
      ...
      return %new_w, %loss : tensor<4xf32>, tensor<f32>
    }
    ```

    After:

    ```mlir
    func.func private @train_step_in_place(%w: tensor<4xf32>, %x: ...)
        -> (tensor<4xf32>, tensor<f32>) {
      ...
      %0 = bufferization.materialize_in_destination %new_w in %w
          : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0, %loss : tensor<4xf32>, tensor<f32>
    }
    func.func @train_step(%w: tensor<4xf32>, %x: tensor<8x4xf32>)
        -> tensor<f32> {
      %r:2 = call @train_step_in_place(%w, %x) : ...
      return %r#1 : tensor<f32>
    }
    ```

    A pair out of range, a result whose type is not its argument's, a
    result or argument named twice, or a missing function is an error.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"train_step\"",
           "The function whose results are written in place">,
    ListOption<"pairs", "pairs", "std::string",
               "result:argument pairs (result i written into argument j)">
  ];
  let statistics = [
    Statistic<"numWritten", "results-written-in-place",
              "Results written into an argument's tensor">
  ];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "func::FuncDialect"];
}

#endif // GA_CODEGEN_COMMON_PASSES_TD
