"""scaled_dot_product_attention as it is traced: PyTorch's fused CPU pair.

Under make_fx, F.scaled_dot_product_attention on the CPU dispatches (with or
without bf16 autocast, causal or with a boolean or additive mask, grouped
key/value heads, an explicit scale) to

  out, lse = aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, ...)
  dq, dk, dv = aten._scaled_dot_product_flash_attention_for_cpu_backward(
      dout, q, k, v, out, lse, ...)

a forward that saves only the logsumexp of each query's row of scores and a
backward that recomputes the probabilities from it: the contract of a fused
attention, with no [B, H, Tq, Tk] tensor between the two. The math backend
(what tracing forced before) is not traceable under autocast: its backward
under torch.func.grad multiplies a bf16 gradient by a float32 saved tensor
(aten.bmm: "expected scalar type BFloat16 but found Float", in eager
torch.func.grad as well, a PyTorch limitation).

The two functions below are the decompositions of that pair: exact math in
float32 (the precision PyTorch's CPU kernel accumulates and takes the
softmax in for bf16/f16 inputs; float64 stays float64), results rounded to
the inputs' type. They materialize each micro-batch's scores, which the
batch analysis sees as per-sample ops (every op keeps the batch dimension of
q, k, v), so a micro-batch loop holds [B/N, H, Tq, Tk] at a time.

Dropout inside attention (dropout_p > 0) takes PyTorch's math path, not this
pair (traced as before in float32; under autocast it is the path PyTorch
cannot trace, above, and the trace fails at the user's line with PyTorch's
message).
"""

import torch

aten = torch.ops.aten


def _compute_type(dtype):
    """The type the scores and the softmax are computed in."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _scores(q, k, is_causal, attn_mask, scale):
    """scale * q @ k^T plus the mask (float, -inf where masked), in the
    compute type, with k's heads repeated for grouped queries; and k's
    group size."""
    ct = _compute_type(q.dtype)
    group = q.shape[-3] // k.shape[-3]
    k = k.to(ct)
    if group > 1:
        k = k.repeat_interleave(group, dim=-3)
    if scale is None:
        scale = q.shape[-1] ** -0.5
    s = torch.matmul(q.to(ct), k.transpose(-2, -1)) * scale
    if is_causal:
        tq, tk = s.shape[-2], s.shape[-1]
        keep = torch.ones(tq, tk, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            s = s.masked_fill(~attn_mask, float("-inf"))
        else:
            s = s + attn_mask.to(ct)
    return s, scale, group


def _probabilities(s, lse):
    """exp(s - lse) with the rows whose every key is masked (lse = -inf) at
    zero, as PyTorch's kernel gives them (its output there is zero)."""
    empty = torch.isinf(lse) & (lse < 0)
    safe = torch.where(empty, 0.0, lse)
    return torch.where(empty.unsqueeze(-1), 0.0,
                       torch.exp(s - safe.unsqueeze(-1)))


def _repeated(v, group, ct):
    v = v.to(ct)
    return v.repeat_interleave(group, dim=-3) if group > 1 else v


def flash_attention_for_cpu(query, key, value, dropout_p=0.0,
                            is_causal=False, *, attn_mask=None, scale=None):
    """(out, logsumexp): out in query's type, logsumexp [B, H, Tq] in the
    compute type (float32 for bf16/f16/f32, float64 for f64, as PyTorch's)."""
    if dropout_p:
        raise NotImplementedError(
            "scaled_dot_product_attention with dropout_p > 0 in the fused "
            "CPU kernel")
    s, _, group = _scores(query, key, is_causal, attn_mask, scale)
    lse = torch.logsumexp(s, dim=-1)
    p = _probabilities(s, lse)
    out = torch.matmul(p, _repeated(value, group, s.dtype))
    return out.to(query.dtype), lse


def flash_attention_for_cpu_backward(grad_out, query, key, value, out,
                                     logsumexp, dropout_p, is_causal, *,
                                     attn_mask=None, scale=None):
    """(dq, dk, dv) in the inputs' types: the probabilities recomputed from
    the saved logsumexp, dS = P * (dP - rowsum(P * dP))."""
    if dropout_p:
        raise NotImplementedError(
            "scaled_dot_product_attention with dropout_p > 0 in the fused "
            "CPU kernel")
    s, scale, group = _scores(query, key, is_causal, attn_mask, scale)
    ct = s.dtype
    p = _probabilities(s, logsumexp.to(ct))
    g = grad_out.to(ct)
    v = _repeated(value, group, ct)
    dv = torch.matmul(p.transpose(-2, -1), g)
    dp = torch.matmul(g, v.transpose(-2, -1))
    ds = p * (dp - (p * dp).sum(-1, keepdim=True))
    k = _repeated(key, group, ct)
    dq = torch.matmul(ds, k) * scale
    dk = torch.matmul(ds.transpose(-2, -1), query.to(ct)) * scale
    if group > 1:
        shape = (*dk.shape[:-3], key.shape[-3], group, *dk.shape[-2:])
        dk = dk.reshape(shape).sum(-3)
        dv = dv.reshape(shape).sum(-3)
    return dq.to(query.dtype), dk.to(key.dtype), dv.to(value.dtype)


def attention_decompositions():
    """The decomposition table's entries for the fused CPU pair."""
    return {
        aten._scaled_dot_product_flash_attention_for_cpu.default:
            flash_attention_for_cpu,
        aten._scaled_dot_product_flash_attention_for_cpu_backward.default:
            flash_attention_for_cpu_backward,
    }
