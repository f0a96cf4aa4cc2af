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

Blocks of queries. Where the mask excludes, for every batch, the keys
outside a range for a block of queries (a causal mask: the keys after the
block's last query; a sliding window: also those before its first minus
the window), that block's scores are computed against the keys of the
range only (_known_mask reads which positions a traced mask excludes from
the graph that made it). An excluded score is -inf, its probability
exactly 0, and it adds exactly 0 to the output and the gradients: the
block form drops terms that are zero in the whole form, for finite
queries and keys (a query or key holding inf or NaN makes the whole form's
excluded scores NaN; the block form, as PyTorch's own causal kernels,
never computes them). The queries are cut into blocks of BLOCK_ROWS (at
least an eighth of them), and the block form is taken when it skips at
least 1/8 of the scores: a causal attention over 256 tokens computes 62.5 %
of them.
"""

import torch

from ._known_mask import causal_excluded, excluded_positions, untraced

aten = torch.ops.aten


def _compute_type(dtype):
    """The type the scores and the softmax are computed in."""
    return torch.float64 if dtype == torch.float64 else torch.float32


BLOCK_ROWS = 64
"""The fewest queries of a block (_blocks)."""

SKIPPED_AT_LEAST = 1 / 8
"""The share of the scores a block form must skip to be taken."""


def _blocks(tq, tk, is_causal, attn_mask):
    """The query blocks (r0, r1, k0, k1) of the block form: queries r0:r1
    against keys k0:k1, outside which the mask excludes every key of those
    queries for every batch; None for the whole form."""
    if tq <= BLOCK_ROWS:
        return None
    excluded = excluded_positions(attn_mask, is_causal, tq, tk)
    if excluded is None:
        return None
    with untraced():
        rows = max(BLOCK_ROWS, -(-tq // 8))
        keys_of_blocks = [
            (~excluded[r0:r0 + rows]).any(0).nonzero().flatten().tolist()
            for r0 in range(0, tq, rows)]
    blocks, computed = [], 0
    for r0, needed in zip(range(0, tq, rows), keys_of_blocks):
        r1 = min(r0 + rows, tq)
        # A block whose every key is excluded keeps one: its rows are
        # empty (-inf scores, output 0) in either form.
        k0, k1 = (needed[0], needed[-1] + 1) if needed else (0, 1)
        blocks.append((r0, r1, k0, k1))
        computed += (r1 - r0) * (k1 - k0)
    if computed > (1 - SKIPPED_AT_LEAST) * tq * tk:
        return None
    return blocks


def _mask_block(attn_mask, rows, keys):
    """attn_mask's part for queries rows and keys keys (a dimension of
    size 1 broadcasts and is kept)."""
    if attn_mask.dim() >= 2 and attn_mask.shape[-2] != 1:
        attn_mask = _part(attn_mask, -2, rows)
    if attn_mask.shape[-1] != 1:
        attn_mask = _part(attn_mask, -1, keys)
    return attn_mask


def _part(x, dim, span):
    """x[span[0]:span[1]] along dim, x itself for the whole of it."""
    if span == (0, x.shape[dim]):
        return x
    return x.narrow(dim, span[0], span[1] - span[0])


def _scores(q, k, is_causal, attn_mask, scale, rows=None, keys=None):
    """scale * q @ k^T plus the mask (float, -inf where masked), in the
    compute type, with k's heads repeated for grouped queries; and k's
    group size. rows and keys: the (start, end) of a block (q and k given
    whole)."""
    ct = _compute_type(q.dtype)
    group = q.shape[-3] // k.shape[-3]
    rows = rows or (0, q.shape[-2])
    keys = keys or (0, k.shape[-2])
    q = _part(q, -2, rows)
    k = _part(k, -2, keys).to(ct)
    if group > 1:
        k = k.repeat_interleave(group, dim=-3)
    if scale is None:
        scale = q.shape[-1] ** -0.5
    s = torch.matmul(q.to(ct), k.transpose(-2, -1)) * scale
    if is_causal:
        s = s.masked_fill(causal_excluded(rows, keys, q.device),
                          float("-inf"))
    if attn_mask is not None:
        attn_mask = _mask_block(attn_mask, rows, keys)
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


def _refuse_dropout(dropout_p):
    if dropout_p:
        raise NotImplementedError(
            "scaled_dot_product_attention with dropout_p > 0 in the fused "
            "CPU kernel")


def flash_attention_for_cpu(query, key, value, dropout_p=0.0,
                            is_causal=False, *, attn_mask=None, scale=None):
    """(out, logsumexp): out in query's type, logsumexp [B, H, Tq] in the
    compute type (float32 for bf16/f16/f32, float64 for f64, as PyTorch's)."""
    _refuse_dropout(dropout_p)
    tq, tk = query.shape[-2], key.shape[-2]
    blocks = _blocks(tq, tk, is_causal, attn_mask) or [(0, tq, 0, tk)]
    scores = [_scores(query, key, is_causal, attn_mask, scale, (r0, r1),
                      (k0, k1))[0] for r0, r1, k0, k1 in blocks]
    lses = [torch.logsumexp(s, dim=-1) for s in scores]
    lse = lses[0] if len(lses) == 1 else torch.cat(lses, dim=-1)
    group = query.shape[-3] // key.shape[-3]
    outs = []
    for (r0, r1, k0, k1), s in zip(blocks, scores):
        # Each block's probabilities from its part of the whole logsumexp,
        # as the backward computes them: the same ops, which CSE merges
        # (the backward then reads the forward's probabilities).
        p = _probabilities(s, _part(lse, -1, (r0, r1)))
        v = _repeated(_part(value, -2, (k0, k1)), group, s.dtype)
        outs.append(torch.matmul(p, v))
    out = outs[0] if len(outs) == 1 else torch.cat(outs, dim=-2)
    return out.to(query.dtype), lse


def _add_key_rows(total, x, keys, tk):
    """total (None: zeros) plus x [..., k1 - k0, D] at the rows keys of
    [..., tk, D]: a slice updated in place, not a padded copy."""
    if keys == (0, tk):
        return x if total is None else total + x
    if total is None:
        total = x.new_zeros((*x.shape[:-2], tk, x.shape[-1]))
    return total.slice_scatter(_part(total, -2, keys) + x, dim=-2,
                               start=keys[0], end=keys[1])


def flash_attention_for_cpu_backward(grad_out, query, key, value, out,
                                     logsumexp, dropout_p, is_causal, *,
                                     attn_mask=None, scale=None):
    """(dq, dk, dv) in the inputs' types: the probabilities recomputed from
    the saved logsumexp, dS = P * (dP - rowsum(P * dP)); in the block form,
    dK and dV sum the blocks' parts before dK's scale."""
    _refuse_dropout(dropout_p)
    tq, tk = query.shape[-2], key.shape[-2]
    dqs, dk, dv = [], None, None
    for r0, r1, k0, k1 in _blocks(tq, tk, is_causal, attn_mask) or \
            [(0, tq, 0, tk)]:
        s, scale_, group = _scores(query, key, is_causal, attn_mask, scale,
                                   (r0, r1), (k0, k1))
        ct = s.dtype
        p = _probabilities(s, _part(logsumexp, -1, (r0, r1)).to(ct))
        g = _part(grad_out, -2, (r0, r1)).to(ct)
        v = _repeated(_part(value, -2, (k0, k1)), group, ct)
        dv = _add_key_rows(dv, torch.matmul(p.transpose(-2, -1), g),
                           (k0, k1), tk)
        dp = torch.matmul(g, v.transpose(-2, -1))
        ds = p * (dp - (p * dp).sum(-1, keepdim=True))
        k = _repeated(_part(key, -2, (k0, k1)), group, ct)
        dqs.append(torch.matmul(ds, k) * scale_)
        dk = _add_key_rows(
            dk, torch.matmul(ds.transpose(-2, -1),
                             _part(query, -2, (r0, r1)).to(ct)),
            (k0, k1), tk)
    dq = dqs[0] if len(dqs) == 1 else torch.cat(dqs, dim=-2)
    dk = dk * scale_
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
