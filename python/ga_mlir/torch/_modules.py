"""torch.nn modules whose PyTorch forward mixes the samples of a batch, as
explicit batch-first forms while tracing.

nn.MultiheadAttention works sequence-first ([T, B, D]) and flattens [T, B, D]
to [T*B, D] around its projections; nn.GRU, nn.LSTM and nn.RNN run one
kernel over the whole [T, B, D] sequence. Neither can be split into
micro-batches along B as traced. While tracing, their forward is replaced by
the same arithmetic with the batch as the outer dimension throughout (the
same parameters, masks and gates in PyTorch's order), so every operation
keeps the samples apart. Options whose form is not written here are refused
by name at the user's line."""

import contextlib
import math

import torch
import torch.nn.functional as F

from ._common import CompileError, patched_forwards
from . import _recurrence
from ._locations import current_user_line


def _refuse(module, what):
    raise CompileError(f"{current_user_line()}: error: "
                       f"{type(module).__name__}({what}) is not supported",
                       code="unsupported-layer")


def _float_mask(mask, dtype):
    """A boolean mask (True: not attended) as an additive float mask, as
    F._canonical_mask makes it."""
    if mask is None or mask.is_floating_point():
        return mask
    return torch.zeros(mask.shape, dtype=dtype).masked_fill(mask,
                                                            float("-inf"))


def _attention_forward(m, query, key, value, key_padding_mask=None,
                       need_weights=True, attn_mask=None,
                       average_attn_weights=True, is_causal=False):
    """nn.MultiheadAttention.forward (F.multi_head_attention_forward's
    arithmetic) with the batch outer: [B, T, D] throughout."""
    if m.bias_k is not None or m.add_zero_attn:
        _refuse(m, "add_bias_kv=True or add_zero_attn=True")
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = (t.unsqueeze(0) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    elif not m.batch_first:
        query, key, value = (t.transpose(0, 1) for t in (query, key, value))
    b, tq, d = query.shape
    ts, h = key.shape[1], m.num_heads
    hd = d // h
    if m._qkv_same_embed_dim:
        wq, wk, wv = m.in_proj_weight.chunk(3)
    else:
        wq, wk, wv = m.q_proj_weight, m.k_proj_weight, m.v_proj_weight
    bq = bk = bv = None
    if m.in_proj_bias is not None:
        bq, bk, bv = m.in_proj_bias.chunk(3)
    q = F.linear(query, wq, bq).view(b, tq, h, hd).transpose(1, 2)
    k = F.linear(key, wk, bk).view(b, ts, h, hd).transpose(1, 2)
    v = F.linear(value, wv, bv).view(b, ts, h, hd).transpose(1, 2)
    mask = _float_mask(attn_mask, q.dtype)
    if mask is None and is_causal:
        raise CompileError(f"{current_user_line()}: error: "
                           "MultiheadAttention: is_causal=True needs an "
                           "attn_mask (as PyTorch says): pass the causal "
                           "mask too (nn.Transformer."
                           "generate_square_subsequent_mask)",
                           code="unsupported-layer")
    if mask is not None:
        # [T, S] for all, or [B*H, T, S] (sample-major, as PyTorch reads it).
        mask = mask.view(1, 1, tq, ts) if mask.dim() == 2 else \
            mask.view(b, h, tq, ts)
    pad = _float_mask(key_padding_mask, q.dtype)
    if pad is not None:
        pad = pad.view(b, 1, 1, ts)
        mask = pad if mask is None else mask + pad
    scores = torch.matmul(q * math.sqrt(1.0 / hd), k.transpose(-2, -1))
    if mask is not None:
        scores = scores + mask
    weights = F.softmax(scores, dim=-1)
    if m.training and m.dropout > 0:
        weights = F.dropout(weights, p=m.dropout)
    out = torch.matmul(weights, v).transpose(1, 2).reshape(b, tq, d)
    out = F.linear(out, m.out_proj.weight, m.out_proj.bias)
    if unbatched:
        out = out.squeeze(0)
    elif not m.batch_first:
        out = out.transpose(0, 1)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if unbatched:
        weights = weights.squeeze(0)
    return out, weights


def _kind(m):
    """m's cell as _recurrence names it."""
    if isinstance(m, torch.nn.LSTM):
        return "lstm"
    if isinstance(m, torch.nn.GRU):
        return "gru"
    return "rnn_" + m.nonlinearity


def _recurrent_forward(m, input, hx=None):
    """nn.RNN/GRU/LSTM.forward with the batch outer (layers, directions,
    initial states, batch_first as PyTorch), each layer and direction a time
    loop of _recurrence over [B, T, ...]."""
    if isinstance(input, torch.nn.utils.rnn.PackedSequence):
        _refuse(m, "a PackedSequence input")
    if getattr(m, "proj_size", 0):
        _refuse(m, "proj_size > 0")
    lstm = isinstance(m, torch.nn.LSTM)
    unbatched = input.dim() == 2
    x = input.unsqueeze(0) if unbatched else \
        input if m.batch_first else input.transpose(0, 1)  # [B, T, D]
    b = x.shape[0]
    dirs = 2 if m.bidirectional else 1
    if hx is None:
        zeros = x.new_zeros(m.num_layers * dirs, b, m.hidden_size)
        hx = (zeros, zeros) if lstm else zeros
    elif unbatched:
        hx = tuple(s.unsqueeze(1) for s in hx) if lstm else hx.unsqueeze(1)
    h0, c0 = hx if lstm else (hx, None)
    last_h, last_c = [], []
    for layer in range(m.num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            w = [getattr(m, f"{n}{suffix}") for n in
                 ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
                 if hasattr(m, f"{n}{suffix}")]
            hs, h, c = _recurrence.layer(
                _kind(m), x, h0[k], c0[k] if lstm else None, w, d == 1)
            outs.append(hs)
            last_h.append(h)
            if lstm:
                last_c.append(c)
        x = torch.cat(outs, dim=-1) if dirs == 2 else outs[0]
        if m.training and m.dropout > 0 and layer + 1 < m.num_layers:
            x = F.dropout(x, p=m.dropout)  # each layer's output but the last
    h_n = torch.stack(last_h)
    if unbatched:
        out, h_n = x.squeeze(0), h_n.squeeze(1)
    else:
        out = x if m.batch_first else x.transpose(0, 1)
    if lstm:
        c_n = torch.stack(last_c)
        return out, (h_n, c_n.squeeze(1) if unbatched else c_n)
    return out, h_n


@contextlib.contextmanager
def batch_first_forms(model):
    """While tracing: the modules above as their batch-first forms."""
    forwards = []
    for m in model.modules():
        if isinstance(m, torch.nn.MultiheadAttention):
            forward = _attention_forward
        elif type(m) in (torch.nn.RNN, torch.nn.GRU, torch.nn.LSTM):
            forward = _recurrent_forward
        else:
            continue
        forwards.append(
            (m, lambda *args, m=m, f=forward, **kw: f(m, *args, **kw)))
    with patched_forwards(forwards):
        yield
