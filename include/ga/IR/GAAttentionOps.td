//===- GAAttentionOps.td - fused attention of ga -----------*- tablegen -*-===//
//
// Scaled dot-product attention as one op with indexing maps, and its
// backward as a second op of the same form, in the manner of IREE's
// `iree_linalg_ext.attention`: nothing of shape [B, H, Tq, Tk] is saved
// between the two (the forward returns the logsumexp of each query's row of
// scores, from which the backward recomputes the probabilities). Kept in a
// file of their own so that their generated declarations are included only
// where they are used.
//
//===----------------------------------------------------------------------===//

#ifndef GA_IR_GAATTENTIONOPS_TD
#define GA_IR_GAATTENTIONOPS_TD

include "ga/IR/GADialect.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class GA_AttentionBase<string mnemonic, list<Trait> traits = []>
    : Op<GA_Dialect, mnemonic, !listconcat(traits, [Pure])> {
  code commonClassDeclaration = [{
    /// The roles of the loops of the iteration space, read off the maps.
    ::mlir::ga::AttentionLoops getLoops() {
      return *::mlir::ga::AttentionLoops::infer(getIndexingMapsArray());
    }
    ::llvm::SmallVector<::mlir::AffineMap> getIndexingMapsArray() {
      return ::llvm::to_vector(
          getIndexingMaps().getAsValueRange<::mlir::AffineMapAttr>());
    }
    ::mlir::AffineMap getQueryMap() { return getIndexingMapsArray()[0]; }
    ::mlir::AffineMap getKeyMap() { return getIndexingMapsArray()[1]; }
    ::mlir::AffineMap getValueMap() { return getIndexingMapsArray()[2]; }
    /// The map of the mask, if the op has one.
    ::mlir::AffineMap getMaskMap() {
      return getMask() ? getIndexingMapsArray()[3] : ::mlir::AffineMap();
    }
    ::mlir::AffineMap getOutputMap() {
      return getIndexingMapsArray()[getMask() ? 4 : 3];
    }
    ::mlir::AffineMap getLogsumexpMap() {
      return getIndexingMapsArray()[getMask() ? 5 : 4];
    }
  }];
}

def GA_AttentionOp : GA_AttentionBase<"attention"> {
  let summary = "scaled dot-product attention with its logsumexp";
  let description = [{
    Over an iteration space whose loops the indexing maps give roles to
    (batch..., m..., k1, k2, n):

    ```
    S[b, m, k2]   = scale * sum_k1 query[b, m, k1] * key[b, k2, k1]
                    + mask[b, m, k2]          (if any; -inf where masked)
                    (-inf where causal and k2 > the innermost m)
    lse[b, m]     = log sum_k2 exp(S[b, m, k2])
    output[b, m, n] = sum_k2 exp(S[b, m, k2] - lse[b, m]) * value[b, k2, n]
    ```

    with rows whose every key is masked (lse = -inf) at zero, as PyTorch's
    fused kernels give them. The scores and the softmax are computed in the
    type of `logsumexp` (f32 for f32, bf16 and f16 inputs, f64 for f64);
    `output` is rounded to the type of `query`.

    `indexing_maps` holds one map per operand and result, in the order query,
    key, value, mask (if present), output, logsumexp; every result of a map
    is a plain loop dimension (the mask's may also be `0` where the mask has
    size 1, a broadcast). The roles of the loops are read off the maps:
    a batch loop indexes query, key, value and output; an m loop (query
    positions) query and output only; k1 (the head dimension) query and key;
    k2 (key positions) key and value; n (the value's head dimension) value
    and output. There is exactly one k1, k2 and n loop. Grouped key/value
    heads are an m loop that key and value do not index: query
    [B, Hkv, G, Tq, D] against key [B, Hkv, Tk, D]. `causal` masks the keys
    after each query along the innermost m loop (the last one in query's
    map), aligned at the top left like PyTorch's `is_causal`.

    The batch analysis reads the batch dimension of a micro-batch off the
    maps: only a batch loop keeps samples apart, and a micro-batch is a tile
    of it (see BatchAttention.cpp).

    Example (causal, 4 heads, 2 key/value heads):

    ```mlir
    %o, %lse = ga.attention %q, %k, %v scale 0.125 causal
        indexing_maps [affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>,
                       affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>,
                       affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>,
                       affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>,
                       affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m)>]
        : tensor<2x2x2x16x64xbf16>, tensor<2x2x16x64xbf16>,
          tensor<2x2x16x64xbf16> -> tensor<2x2x2x16x64xbf16>,
          tensor<2x2x2x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value,
                       Optional<AnyRankedTensor>:$mask, F64Attr:$scale,
                       UnitAttr:$causal, AffineMapArrayAttr:$indexing_maps);
  let results = (outs AnyRankedTensor:$output, AnyRankedTensor:$logsumexp);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)?
    `scale` $scale (`causal` $causal^)? `indexing_maps` $indexing_maps
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($output) `,` type($logsumexp)
  }];
  let extraClassDeclaration = commonClassDeclaration;
  let hasVerifier = 1;
}

def GA_AttentionBackwardOp : GA_AttentionBase<"attention_backward"> {
  let summary = "the gradients of ga.attention from its saved logsumexp";
  let description = [{
    The gradients of `ga.attention` with respect to query, key and value,
    given the forward's operands, its `output` and `logsumexp`, and the
    gradient `grad_output` of its output. The probabilities are recomputed
    from the logsumexp (nothing of shape [B, H, Tq, Tk] is saved):

    ```
    P      = exp(S - lse)        (S as in ga.attention; 0 where lse = -inf)
    dV     = P^T dO               dP = dO V^T
    dS     = P * (dP - rowsum(P * dP))
    dQ     = scale * dS K         dK = scale * dS^T Q
    ```

    in the type of `logsumexp`, each gradient rounded to the type of its
    operand. `indexing_maps` are the forward's (query, key, value, mask,
    output, logsumexp); `grad_output` is read through the output's map and
    the gradients through the maps of their operands, so the m loops that
    key and value do not index (grouped heads) are summed over in dK and dV.

    Example:

    ```mlir
    %dq, %dk, %dv = ga.attention_backward %q, %k, %v, %o, %do, %lse
        scale 0.125 causal
        indexing_maps [affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>,
                       affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>,
                       affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>,
                       affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>,
                       affine_map<(b, h, m, k1, k2, n) -> (b, h, m)>]
        : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
          tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
          -> tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value, AnyRankedTensor:$output,
                       AnyRankedTensor:$grad_output,
                       AnyRankedTensor:$logsumexp,
                       Optional<AnyRankedTensor>:$mask, F64Attr:$scale,
                       UnitAttr:$causal, AffineMapArrayAttr:$indexing_maps);
  let results = (outs AnyRankedTensor:$grad_query, AnyRankedTensor:$grad_key,
                      AnyRankedTensor:$grad_value);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $grad_output `,` $logsumexp
    (`mask` `(` $mask^ `:` type($mask) `)`)? `scale` $scale
    (`causal` $causal^)? `indexing_maps` $indexing_maps attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,` type($output) `,`
    type($grad_output) `,` type($logsumexp) `->` type($grad_query) `,`
    type($grad_key) `,` type($grad_value)
  }];
  let extraClassDeclaration = commonClassDeclaration;
  let hasVerifier = 1;
}

#endif // GA_IR_GAATTENTIONOPS_TD
