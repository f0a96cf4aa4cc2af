"""The time loop of nn.RNN/GRU/LSTM as two operations of the trace.

Unrolled, a recurrent layer of T steps is T copies of its cell in the
forward and T in the backward: every phase of the compile (trace, rewrite,
lowering, LLVM) grows with T, and the medium LSTM of the zoo took twice
torch.compile's first call. Here a layer and direction is traced as

  xw = x @ W_ih^T + b_ih                       one product over [B, T]
  hs, gh[, cs] = ga_mlir::scan_forward(...)    the time loop
  ... = ga_mlir::scan_backward(...)            its backward, a time loop
  dW_hh = gh'^T @ h_prev, db_hh = sum(gh')     products over [B, T]

The two custom operations stand for loops whose bodies are one time step
(`forward_step`, `backward_step`): _rolled imports each body once and
builds the loop around it (scf.for over the time steps). What the loops
carry and return is per sample (hidden and cell states, the stacked states
and the gradients of the gates); every reduction over the batch (the
weight gradients) is an ordinary product after the loop, so the batch
analysis sees per-sample loops and reductions outside them.

The arithmetic of a step is PyTorch's (gate order and formulas of
nn.RNN/GRU/LSTM); the backward of a step is autograd's formulas for the
forward step's ops, recomputing the gates from the saved projections.
"""

import torch
import torch.nn.functional as F


def _lstm_gates(xw, gh):
    """An LSTM step's gates (i, f, g, o), activated."""
    i, f, g, o = (xw + gh).chunk(4, dim=-1)
    return torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)


def _gru_gates(xw, gh):
    """A GRU step's gates (r, z, n) and the hidden state's part of n."""
    ir, iz, in_ = xw.chunk(3, dim=-1)
    hr, hz, hn = gh.chunk(3, dim=-1)
    r = torch.sigmoid(ir + hr)
    z = torch.sigmoid(iz + hz)
    return r, z, torch.tanh(in_ + r * hn), hn


def _pointwise(kind, xw, gh, h, c):
    """One step's pointwise part: the new hidden state, and the new cell
    state of an LSTM (else None), from the input's projection `xw` and the
    hidden state's `gh` (both with their biases)."""
    if kind == "lstm":
        i, f, g, o = _lstm_gates(xw, gh)
        c = f * c + i * g
        return o * torch.tanh(c), c
    if kind == "gru":
        _, z, n, _ = _gru_gates(xw, gh)
        return (1 - z) * n + z * h, None
    pre = xw + gh
    return (torch.tanh(pre) if kind == "rnn_tanh" else torch.relu(pre)), None


def forward_step(kind, xw_t, h, c, w_hh, b_hh):
    """The body of scan_forward's loop: (new h, new c or None, gh)."""
    gh = F.linear(h, w_hh, b_hh)
    h, c = _pointwise(kind, xw_t, gh, h, c)
    return h, c, gh


def backward_step(kind, dh, dc, xw_t, gh_t, h, c, w_hh):
    """The body of scan_backward's loop: from the gradients `dh` (and `dc`)
    of a step's new states, the gradients of its gate projections and of
    its previous states: (dxw, dgh, dh_prev, dc_prev or None). The gates
    are recomputed from the saved projections; the formulas are autograd's
    for the ops of _pointwise (sigmoid' = y (1 - y), tanh' = 1 - y^2)."""
    if kind == "lstm":
        i, f, g, o = _lstm_gates(xw_t, gh_t)
        new_c = f * c + i * g
        tc = torch.tanh(new_c)
        dc = dc + dh * o * (1 - tc * tc)
        dpre = torch.cat([dc * g * (i * (1 - i)), dc * c * (f * (1 - f)),
                          dc * i * (1 - g * g), dh * tc * (o * (1 - o))],
                         dim=-1)
        return dpre, dpre, dpre @ w_hh, dc * f
    if kind == "gru":
        r, z, n, hn = _gru_gates(xw_t, gh_t)
        dpn = dh * (1 - z) * (1 - n * n)
        dpr = dpn * hn * (r * (1 - r))
        dpz = dh * (h - n) * (z * (1 - z))
        dgh = torch.cat([dpr, dpz, dpn * r], dim=-1)
        return torch.cat([dpr, dpz, dpn], dim=-1), dgh, dh * z + dgh @ w_hh, \
            None
    new_h = _pointwise(kind, xw_t, gh_t, h, c)[0]
    dpre = dh * (1 - new_h * new_h) if kind == "rnn_tanh" else \
        torch.where(new_h > 0, dh, torch.zeros_like(dh))
    return dpre, dpre, dpre @ w_hh, None


def _order(t, reverse):
    return range(t - 1, -1, -1) if reverse else range(t)


# Declared with torch.library's own API, not custom_op: custom_op gives the
# op an autograd kernel of its own (an autograd.Function that functorch's
# transforms refuse); here autograd comes from _Scan only.
_LIB = torch.library.Library("ga_mlir", "DEF")
_LIB.define("scan_forward(str kind, Tensor xw, Tensor h0, Tensor? c0, "
            "Tensor w_hh, Tensor? b_hh, bool reverse) -> Tensor[]")
_LIB.define("scan_backward(str kind, Tensor dhs, Tensor? dcs, Tensor xw, "
            "Tensor gh, Tensor h_prev, Tensor? c_prev, Tensor w_hh, "
            "bool reverse) -> Tensor[]")


def _scan_forward(kind, xw, h0, c0, w_hh, b_hh, reverse):
    """[hs, gh] (and cs for an LSTM), each stacked over the time steps
    (dimension 1) in the order of the input."""
    t = xw.shape[1]
    hs, cs, ghs = [None] * t, [None] * t, [None] * t
    h, c = h0, c0
    for s in _order(t, reverse):
        h, c, ghs[s] = forward_step(kind, xw[:, s], h, c, w_hh, b_hh)
        hs[s], cs[s] = h, c
    out = [torch.stack(hs, 1), torch.stack(ghs, 1)]
    return out + ([torch.stack(cs, 1)] if kind == "lstm" else [])


def _scan_forward_meta(kind, xw, h0, c0, w_hh, b_hh, reverse):
    b, t = xw.shape[:2]
    hs = xw.new_empty((b, t, h0.shape[-1]))
    out = [hs, xw.new_empty((b, t, w_hh.shape[0]))]
    return out + ([xw.new_empty((b, t, h0.shape[-1]))]
                  if kind == "lstm" else [])


def previous_states(hs, h0, reverse):
    """The state before each step, stacked like `hs`."""
    first = h0.unsqueeze(1)
    if reverse:
        return torch.cat([hs[:, 1:], first], dim=1)
    return torch.cat([first, hs[:, :-1]], dim=1)


def _scan_backward(kind, dhs, dcs, xw, gh, h_prev, c_prev, w_hh, reverse):
    """[dxw, dgh, dh0] (and dc0 for an LSTM): the steps of scan_forward
    backwards, from the gradients of its stacked states and the states
    before each step (previous_states)."""
    t = xw.shape[1]
    dxw, dgh = [None] * t, [None] * t
    dh = torch.zeros_like(h_prev[:, 0])
    dc = torch.zeros_like(c_prev[:, 0]) if kind == "lstm" else None
    for s in reversed(list(_order(t, reverse))):
        dxw[s], dgh[s], dh, dc = backward_step(
            kind, dhs[:, s] + dh,
            dcs[:, s] + dc if dc is not None else None, xw[:, s], gh[:, s],
            h_prev[:, s], c_prev[:, s] if c_prev is not None else None, w_hh)
    out = [torch.stack(dxw, 1), torch.stack(dgh, 1), dh]
    return out + ([dc] if kind == "lstm" else [])


def _scan_backward_meta(kind, dhs, dcs, xw, gh, h_prev, c_prev, w_hh,
                        reverse):
    out = [torch.empty_like(xw), torch.empty_like(gh),
           torch.empty_like(h_prev[:, 0])]
    return out + ([torch.empty_like(c_prev[:, 0])] if kind == "lstm" else [])


_LIB.impl("scan_forward", _scan_forward, "CPU")
_LIB.impl("scan_forward", _scan_forward_meta, "Meta")
_LIB.impl("scan_backward", _scan_backward, "CPU")
_LIB.impl("scan_backward", _scan_backward_meta, "Meta")
SCAN_FORWARD = torch.ops.ga_mlir.scan_forward.default
SCAN_BACKWARD = torch.ops.ga_mlir.scan_backward.default


class _Scan(torch.autograd.Function):
    """scan_forward with scan_backward as its backward (an autograd.Function
    with setup_context, which torch.func.grad takes: a custom op's
    register_autograd is not)."""

    @staticmethod
    def forward(kind, xw, h0, c0, w_hh, b_hh, reverse):
        return tuple(SCAN_FORWARD(kind, xw, h0, c0, w_hh, b_hh, reverse))

    @staticmethod
    def setup_context(ctx, inputs, output):
        kind, xw, h0, c0, w_hh, b_hh, reverse = inputs
        ctx.kind, ctx.reverse, ctx.has_bias = kind, reverse, b_hh is not None
        cs = output[2] if kind == "lstm" else None
        ctx.save_for_backward(xw, h0, c0, w_hh, output[0], output[1], cs)
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx, *grads):
        xw, h0, c0, w_hh, hs, gh, cs = ctx.saved_tensors
        lstm = ctx.kind == "lstm"
        dhs = grads[0] if grads[0] is not None else torch.zeros_like(hs)
        dcs = None
        if lstm:
            dcs = grads[2] if grads[2] is not None else torch.zeros_like(cs)
        h_prev = previous_states(hs, h0, ctx.reverse)
        c_prev = previous_states(cs, c0, ctx.reverse) if lstm else None
        got = SCAN_BACKWARD(ctx.kind, dhs, dcs, xw, gh, h_prev, c_prev, w_hh,
                            ctx.reverse)
        dxw, dgh, dh0 = got[:3]
        # The weight gradients sum over the samples and the steps: one
        # product over [B * T] rows after the loop.
        dw_hh = dgh.flatten(0, 1).t() @ h_prev.flatten(0, 1)
        db_hh = dgh.sum((0, 1)) if ctx.has_bias else None
        return None, dxw, dh0, got[3] if lstm else None, dw_hh, db_hh, None


def layer(kind, x, h0, c0, w, reverse):
    """One layer and direction over [B, T, D]: (hs [B, T, H], last h, last
    c or None), `w` the layer's [w_ih, w_hh, (b_ih, b_hh)]."""
    b_ih, b_hh = (w[2], w[3]) if len(w) > 2 else (None, None)
    xw = F.linear(x, w[0], b_ih)
    out = _Scan.apply(kind, xw, h0, c0, w[1], b_hh, reverse)
    last = 0 if reverse else -1
    c_n = out[2][:, last] if kind == "lstm" else None
    return out[0], out[0][:, last], c_n


def has_time_loops(model):
    """Whether tracing `model` makes time loops (an nn.RNN, nn.GRU or
    nn.LSTM in it)."""
    return any(
        type(m) in (torch.nn.RNN, torch.nn.GRU, torch.nn.LSTM)
        for m in model.modules())
