"""numpy transcriptions of the training steps in ../Inputs/steps.

Each class mirrors one <name>.mlir file:
  loss(a)  -- the forward loss only (float64 when `a` is float64); the function
              the finite-difference check differentiates.
  run(a)   -- the whole step as the MLIR writes it: forward, hand-derived
              backward, optimizer. Returns {"loss", "grads": {param: grad},
              "outputs": [results in the order of the MLIR results]}.
              Works in the dtype of its inputs (float32 for the comparison with
              the MLIR, float64 for the gradient check).
  params   -- arguments the gradients are taken with respect to.
  outputs  -- (name, argument it updates or None) per MLIR result; updated
              values are also compared through their update (new - old).
  fixed    -- hyper-parameter values (instead of seeded ones).
  scales   -- factors applied to seeded values (optimizer state of gradient magnitude).
  shapes   -- concrete shapes of dynamic arguments.
"""

import numpy as np

REFS = {}


def register(cls):
    REFS[cls.name] = cls
    return cls


class Ref:
    name = ""
    params = []
    outputs = []
    fixed = {}
    scales = {}
    shapes = {}
    tol = 5e-4          # MLIR vs numpy (float32), max relative error
    delta_tol_factor = 1.0
    fd_tol = 1e-5       # hand gradient vs finite differences (float64)


def f(a, x):
    """A Python float as a scalar of the dtype of array `a`."""
    return np.asarray(x, dtype=a.dtype)


# ---------------------------------------------------------------------------
# Shared pieces (same formulas as the MLIR files)
# ---------------------------------------------------------------------------
def softmax_ce(logits, labels):
    """Per-sample negative log-likelihood and softmax probabilities."""
    m = logits.max(axis=-1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=-1, keepdims=True)
    lse = np.log(s) + m
    picked = np.take_along_axis(logits, labels[..., None], axis=-1)
    nll = (lse - picked)[..., 0]
    return nll, e / s


def one_hot(labels, n, dtype):
    return (labels[..., None] == np.arange(n)).astype(dtype)


def sgd(p, g, lr):
    return p - lr * g


# ---------------------------------------------------------------------------
@register
class LinregMean(Ref):
    name = "linreg_mean"
    params = ["w", "b"]
    outputs = [("w_new", "w"), ("b_new", "b"), ("loss", None)]
    fixed = {"lr": 0.5}

    def loss(self, a):
        r = a["x"] @ a["w"] + a["b"] - a["y"]
        return (r * r).sum() / 12.0

    def run(self, a):
        x, y, w, b, lr = a["x"], a["y"], a["w"], a["b"], a["lr"]
        r = x @ w + b - y
        loss = (r * r).sum() * f(r, 1 / 12)
        dpred = r * f(r, 2 / 12)
        dw = dpred @ x
        db = dpred.sum()
        return dict(loss=loss, grads=dict(w=dw, b=db),
                    outputs=[sgd(w, dw, lr), sgd(b, db, lr), loss])


# ---------------------------------------------------------------------------
def mlp_relu_ce(x, labels, w1, b1, w2, b2):
    """2-layer ReLU MLP + mean softmax cross-entropy: loss, grads, per-sample nll, logits."""
    B = x.shape[0]
    inv_b = f(x, 1.0 / B)
    z1 = x @ w1 + b1
    a1 = np.maximum(z1, 0)
    logits = a1 @ w2 + b2
    nll, p = softmax_ce(logits, labels)
    loss = nll.sum() * inv_b
    dlogits = (p - one_hot(labels, w2.shape[1], x.dtype)) * inv_b
    dw2 = a1.T @ dlogits
    db2 = dlogits.sum(0)
    da1 = dlogits @ w2.T
    dz1 = np.where(z1 > 0, da1, 0)
    dw1 = x.T @ dz1
    db1 = dz1.sum(0)
    return loss, dict(w1=dw1, b1=db1, w2=dw2, b2=db2), nll, logits


def mlp_relu_ce_loss(a):
    return mlp_relu_ce(a["x"], a["labels"], a["w1"], a["b1"], a["w2"], a["b2"])[0]


MLP_PARAMS = ["w1", "b1", "w2", "b2"]


@register
class MlpSgd(Ref):
    name = "mlp_sgd"
    params = MLP_PARAMS
    outputs = [("w1_new", "w1"), ("b1_new", "b1"), ("w2_new", "w2"), ("b2_new", "b2"), ("loss", None)]
    fixed = {"lr": 0.5}

    def loss(self, a):
        return mlp_relu_ce_loss(a)

    def run(self, a):
        loss, g, _, _ = mlp_relu_ce(a["x"], a["labels"], *(a[p] for p in MLP_PARAMS))
        outs = [sgd(a[p], g[p], a["lr"]) for p in MLP_PARAMS] + [loss]
        return dict(loss=loss, grads=g, outputs=outs)


@register
class MlpMomentum(Ref):
    name = "mlp_momentum"
    params = MLP_PARAMS
    outputs = ([(p + "_new", p) for p in MLP_PARAMS] + [("v_" + p + "_new", "v_" + p) for p in MLP_PARAMS]
               + [("loss", None)])
    fixed = {"lr": 0.5, "mu": 0.9}
    scales = {"v_" + p: 0.05 for p in MLP_PARAMS}

    def loss(self, a):
        return mlp_relu_ce_loss(a)

    def run(self, a):
        loss, g, _, _ = mlp_relu_ce(a["x"], a["labels"], *(a[p] for p in MLP_PARAMS))
        vs = [a["mu"] * a["v_" + p] + g[p] for p in MLP_PARAMS]
        ps = [a[p] - a["lr"] * v for p, v in zip(MLP_PARAMS, vs)]
        return dict(loss=loss, grads=g, outputs=ps + vs + [loss])


@register
class MlpAdamW(Ref):
    name = "mlp_adamw"
    params = MLP_PARAMS
    outputs = ([(p + "_new", p) for p in MLP_PARAMS] + [("m_" + p + "_new", "m_" + p) for p in MLP_PARAMS]
               + [("v_" + p + "_new", "v_" + p) for p in MLP_PARAMS] + [("loss", None), ("grad_norm", None)])
    # max_norm is below the gradient norm of the seeded inputs: clipping is active.
    fixed = {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01, "max_norm": 0.25}
    decayed = {"w1", "w2"}
    # Moments of the magnitude of the gradients (~1e-2), so the new gradient matters.
    scales = dict([("m_" + p, 0.02) for p in MLP_PARAMS] + [("v_" + p, 1e-4) for p in MLP_PARAMS])

    def loss(self, a):
        return mlp_relu_ce_loss(a)

    def run(self, a):
        loss, g, _, _ = mlp_relu_ce(a["x"], a["labels"], *(a[p] for p in MLP_PARAMS))
        one = f(a["lr"], 1.0)
        gnorm = np.sqrt(sum((g[p] * g[p]).sum() for p in MLP_PARAMS))
        clip = np.minimum(a["max_norm"] / (gnorm + f(gnorm, 1e-6)), one)
        assert clip < 1.0, "the seeded step should exercise clipping"
        t = np.asarray(a["step"], dtype=a["lr"].dtype)
        bc1 = one - a["beta1"] ** t
        bc2 = one - a["beta2"] ** t
        step_size = a["lr"] / bc1
        decay = one - a["lr"] * a["weight_decay"]
        ps, ms, vs = [], [], []
        for p in MLP_PARAMS:
            gc = g[p] * clip
            w = a[p] * decay if p in self.decayed else a[p]
            m = a["beta1"] * a["m_" + p] + (one - a["beta1"]) * gc
            v = a["beta2"] * a["v_" + p] + (one - a["beta2"]) * (gc * gc)
            ps.append(w - step_size * (m / (np.sqrt(v) / np.sqrt(bc2) + a["eps"])))
            ms.append(m)
            vs.append(v)
        return dict(loss=loss, grads=g, outputs=ps + ms + vs + [loss, gnorm])


@register
class MaskedTokens(Ref):
    name = "masked_tokens"
    params = ["emb", "w", "b"]
    outputs = [("emb_new", "emb"), ("w_new", "w"), ("b_new", "b"), ("loss", None), ("num_tokens", None)]
    fixed = {"lr": 0.5}

    def _fwd(self, a):
        tok = a["tokens"].reshape(-1)
        h = np.tanh(a["emb"][tok])
        logits = h @ a["w"] + a["b"]
        nll, p = softmax_ce(logits, a["targets"].reshape(-1))
        m = a["mask"].reshape(-1)
        ntok = a["mask"].sum()
        count = np.maximum(ntok, f(ntok, 1.0))
        loss = (m * nll).sum() / count
        return loss, h, p, m, ntok, count

    def loss(self, a):
        return self._fwd(a)[0]

    def run(self, a):
        loss, h, p, m, ntok, count = self._fwd(a)
        tok = a["tokens"].reshape(-1)
        inv_cnt = f(count, 1.0) / count
        dlogits = (p - one_hot(a["targets"].reshape(-1), 20, p.dtype)) * m[:, None] * inv_cnt
        dw = h.T @ dlogits
        db = dlogits.sum(0)
        dx = (dlogits @ a["w"].T) * (1 - h * h)
        demb = np.zeros_like(a["emb"])
        np.add.at(demb, tok, dx)
        g = dict(emb=demb, w=dw, b=db)
        outs = [sgd(a[k], g[k], a["lr"]) for k in self.params] + [loss, ntok]
        return dict(loss=loss, grads=g, outputs=outs)


@register
class Metrics(Ref):
    name = "metrics"
    params = MLP_PARAMS
    outputs = ([(p + "_new", p) for p in MLP_PARAMS]
               + [("loss", None), ("correct", None), ("max_loss", None), ("worst", None)])
    fixed = {"lr": 0.5}

    def _fwd(self, a):
        a1 = np.tanh(a["x"] @ a["w1"] + a["b1"])
        logits = a1 @ a["w2"] + a["b2"]
        nll, p = softmax_ce(logits, a["labels"])
        return nll.sum() * f(nll, 1 / 24), a1, logits, nll, p

    def loss(self, a):
        return self._fwd(a)[0]

    def run(self, a):
        loss, a1, logits, nll, p = self._fwd(a)
        dl = (p - one_hot(a["labels"], 8, p.dtype)) * f(p, 1 / 24)
        dz1 = (dl @ a["w2"].T) * (1 - a1 * a1)
        g = dict(w1=a["x"].T @ dz1, b1=dz1.sum(0), w2=a1.T @ dl, b2=dl.sum(0))
        correct = np.int64((logits.argmax(1) == a["labels"]).sum())
        outs = [sgd(a[k], g[k], a["lr"]) for k in MLP_PARAMS]
        outs += [loss, correct, nll.max(), np.int64(nll.argmax())]
        return dict(loss=loss, grads=g, outputs=outs)


@register
class BatchDim1(Ref):
    name = "batch_dim1"
    params = ["w1", "b1", "w2", "b2"]
    outputs = [("w1_new", "w1"), ("b1_new", "b1"), ("w2_new", "w2"), ("b2_new", "b2"), ("loss", None)]
    fixed = {"lr": 0.5}

    def _fwd(self, a):
        act = np.tanh(a["w1"] @ a["x"] + a["b1"][:, None])   # [hidden, B]
        r = a["w2"] @ act + a["b2"] - a["y"]
        return (r * r).sum() * f(r, 1 / 24), act, r

    def loss(self, a):
        return self._fwd(a)[0]

    def run(self, a):
        loss, act, r = self._fwd(a)
        dpred = r * f(r, 2 / 24)
        dz = a["w2"][:, None] * dpred[None, :] * (1 - act * act)
        g = dict(w1=dz @ a["x"].T, b1=dz.sum(1), w2=act @ dpred, b2=dpred.sum())
        outs = [sgd(a[k], g[k], a["lr"]) for k in self.params] + [loss]
        return dict(loss=loss, grads=g, outputs=outs)


@register
class DynamicBatch(Ref):
    name = "dynamic_batch"
    params = ["w", "b"]
    outputs = [("w_new", "w"), ("b_new", "b"), ("loss", None)]
    fixed = {"lr": 0.5}
    shapes = {"x": (22, 16), "y": (22,)}

    def loss(self, a):
        r = a["x"] @ a["w"] + a["b"] - a["y"]
        return (r * r).sum() / a["x"].shape[0]

    def run(self, a):
        n = f(a["w"], a["x"].shape[0])
        r = a["x"] @ a["w"] + a["b"] - a["y"]
        loss = (r * r).sum() / n
        dpred = r * f(r, 2.0) / n
        g = dict(w=dpred @ a["x"], b=dpred.sum())
        outs = [sgd(a[k], g[k], a["lr"]) for k in self.params] + [loss]
        return dict(loss=loss, grads=g, outputs=outs)


# ---------------------------------------------------------------------------
GELU_C = 0.797884583
GELU_K = 0.044715


def layer_norm(x, g, b, eps=1e-5):
    d = x.shape[-1]
    xc = x - x.sum(-1, keepdims=True) * f(x, 1.0 / d)
    rstd = 1 / np.sqrt((xc * xc).sum(-1, keepdims=True) * f(x, 1.0 / d) + f(x, eps))
    xhat = xc * rstd
    return xhat * g + b, xhat, rstd


def layer_norm_backward(dh, xhat, rstd, g):
    """Gradients of h = LN(x) * g + b: (dx, dg, db)."""
    d = xhat.shape[-1]
    dxh = dh * g
    m1 = dxh.sum(-1, keepdims=True) * f(dh, 1.0 / d)
    m2 = (dxh * xhat).sum(-1, keepdims=True) * f(dh, 1.0 / d)
    return rstd * (dxh - m1 - xhat * m2), (dh * xhat).sum(0), dh.sum(0)


def gelu_tanh(u):
    t = np.tanh(f(u, GELU_C) * (u + f(u, GELU_K) * u * u * u))
    return f(u, 0.5) * u * (1 + t), t


def gelu_tanh_grad(u, t):
    return (f(u, 0.5) * (1 + t)
            + f(u, 0.5) * u * (1 - t * t) * f(u, GELU_C) * (1 + f(u, 3 * GELU_K) * u * u))


TB_PARAMS = ["ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "ln2_g", "ln2_b", "w1", "b1", "w2", "b2"]


@register
class TransformerBlock(Ref):
    name = "transformer_block"
    params = TB_PARAMS
    outputs = [(p + "_new", p) for p in TB_PARAMS] + [("loss", None)]
    fixed = {"lr": 0.5}
    B, T, D = 8, 6, 16

    def _fwd(self, a):
        B, T, D = self.B, self.T, self.D
        xf = a["x"].reshape(B * T, D)
        h1, xhat1, rstd1 = layer_norm(xf, a["ln1_g"], a["ln1_b"])
        q, k, v = (h1 @ a[w] for w in ("wq", "wk", "wv"))
        q3, k3, v3 = (t.reshape(B, T, D) for t in (q, k, v))
        s = (q3 @ k3.transpose(0, 2, 1)) * f(q, 0.25)
        causal = np.tril(np.ones((T, T), bool))
        s = np.where(causal, s, f(q, -np.inf))
        pe = np.exp(s - s.max(-1, keepdims=True))
        p = pe / pe.sum(-1, keepdims=True)
        att = (p @ v3).reshape(B * T, D)
        x1 = xf + att @ a["wo"]
        h2, xhat2, rstd2 = layer_norm(x1, a["ln2_g"], a["ln2_b"])
        u = h2 @ a["w1"] + a["b1"]
        gu, t = gelu_tanh(u)
        x2 = x1 + (gu @ a["w2"] + a["b2"])
        res = x2 - a["y"].reshape(B * T, D)
        loss = (res * res).sum() * f(res, 1 / 768)
        return loss, locals()

    def loss(self, a):
        return self._fwd(a)[0]

    def run(self, a):
        B, T, D = self.B, self.T, self.D
        loss, c = self._fwd(a)
        g = {}
        dx2 = c["res"] * f(loss, 2 / 768)
        g["w2"] = c["gu"].T @ dx2
        g["b2"] = dx2.sum(0)
        du = (dx2 @ a["w2"].T) * gelu_tanh_grad(c["u"], c["t"])
        g["w1"] = c["h2"].T @ du
        g["b1"] = du.sum(0)
        dx1_ln, g["ln2_g"], g["ln2_b"] = layer_norm_backward(du @ a["w1"].T, c["xhat2"], c["rstd2"], a["ln2_g"])
        dx1 = dx2 + dx1_ln
        g["wo"] = c["att"].T @ dx1
        datt3 = (dx1 @ a["wo"].T).reshape(B, T, D)
        p = c["p"]
        dp = datt3 @ c["v3"].transpose(0, 2, 1)
        dv3 = p.transpose(0, 2, 1) @ datt3
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * f(p, 0.25)
        dq3 = ds @ c["k3"]
        dk3 = ds.transpose(0, 2, 1) @ c["q3"]
        dq, dk, dv = (t.reshape(B * T, D) for t in (dq3, dk3, dv3))
        h1 = c["h1"]
        g["wq"], g["wk"], g["wv"] = h1.T @ dq, h1.T @ dk, h1.T @ dv
        dh1 = dq @ a["wq"].T + dk @ a["wk"].T + dv @ a["wv"].T
        _, g["ln1_g"], g["ln1_b"] = layer_norm_backward(dh1, c["xhat1"], c["rstd1"], a["ln1_g"])
        outs = [sgd(a[k], g[k], a["lr"]) for k in TB_PARAMS] + [loss]
        return dict(loss=loss, grads=g, outputs=outs)


# ---------------------------------------------------------------------------
def bf16_round(x):
    """Rounds float32 values to the nearest bfloat16 (ties to even); float32 result."""
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    u = np.uint64
    b = (b + u(0x7FFF) + ((b >> u(16)) & u(1))) & u(0xFFFF0000)
    return np.asarray(b.astype(np.uint32).view(np.float32))


class Bf16Emu:
    """bf16 arithmetic as the MLIR lowering does it: every op computed in f32 and rounded to
    bf16; GEMMs and reductions accumulate sequentially in bf16 (loop order of
    --convert-linalg-to-loops). With exact=False (float64 inputs) nothing is rounded."""

    def __init__(self, exact):
        self.r = (lambda v: v) if exact else bf16_round

    def matmul(self, a, b):
        r = self.r
        c = np.zeros((a.shape[0], b.shape[1]), a.dtype)
        for k in range(a.shape[1]):
            c = r(c + r(a[:, k:k + 1] * b[k:k + 1, :]))
        return c

    def sum0(self, a):
        r = self.r
        c = np.zeros(a.shape[1:], a.dtype)
        for i in range(a.shape[0]):
            c = r(c + a[i])
        return c


@register
class Bf16Mlp(Ref):
    name = "bf16_mlp"
    params = MLP_PARAMS
    outputs = [(p + "_new", p) for p in MLP_PARAMS] + [("loss", None)]
    fixed = {"lr": 0.5}
    # The emulation is bit-exact on this machine (error 0); the slack covers 1-ulp
    # differences of exp/log between libm builds, which can flip bf16 roundings.
    tol = 3e-2

    def loss(self, a):
        return mlp_relu_ce_loss(a)

    def run(self, a):
        emu = Bf16Emu(exact=a["x"].dtype != np.float32)
        r = emu.r
        x, labels, w1, b1, w2, b2 = a["x"], a["labels"], a["w1"], a["b1"], a["w2"], a["b2"]
        z1 = r(emu.matmul(x, w1) + b1)
        a1 = np.maximum(z1, 0)
        logits = r(emu.matmul(a1, w2) + b2)        # extended to f32 for the loss
        nll, p = softmax_ce(logits, labels)
        loss = nll.sum() * f(nll, 1 / 24)
        dl = r((p - one_hot(labels, 10, p.dtype)) * f(p, 1 / 24))
        g = dict(w2=emu.matmul(a1.T, dl), b2=emu.sum0(dl))
        dz1 = np.where(z1 > 0, emu.matmul(dl, w2.T), 0).astype(x.dtype)
        g["w1"] = emu.matmul(x.T, dz1)
        g["b1"] = emu.sum0(dz1)
        lr = r(a["lr"])
        outs = [r(a[k] - r(lr * g[k])) for k in MLP_PARAMS] + [loss]
        return dict(loss=loss, grads=g, outputs=outs)


@register
class BatchNormMlp(Ref):
    name = "batchnorm_mlp"
    params = ["w1", "gamma", "beta", "w2", "b2"]
    outputs = ([(p + "_new", p) for p in ["w1", "gamma", "beta", "w2", "b2"]]
               + [("running_mean_new", "running_mean"), ("running_var_new", "running_var"), ("loss", None)])
    fixed = {"lr": 0.5, "bn_momentum": 0.1}

    def _fwd(self, a):
        z = a["x"] @ a["w1"]
        mean = z.sum(0) * f(z, 1 / 24)
        zc = z - mean
        var = (zc * zc).sum(0) * f(z, 1 / 24)
        rstd = 1 / np.sqrt(var + f(z, 1e-5))
        zhat = zc * rstd
        ybn = zhat * a["gamma"] + a["beta"]
        a1 = np.maximum(ybn, 0)
        logits = a1 @ a["w2"] + a["b2"]
        nll, p = softmax_ce(logits, a["labels"])
        return nll.sum() * f(z, 1 / 24), locals()

    def loss(self, a):
        return self._fwd(a)[0]

    def run(self, a):
        loss, c = self._fwd(a)
        inv_b = f(loss, 1 / 24)
        dl = (c["p"] - one_hot(a["labels"], 10, c["p"].dtype)) * inv_b
        g = dict(w2=c["a1"].T @ dl, b2=dl.sum(0))
        dy = np.where(c["ybn"] > 0, dl @ a["w2"].T, 0)
        zhat, gm = c["zhat"], a["gamma"]
        g["gamma"] = (dy * zhat).sum(0)
        g["beta"] = dy.sum(0)
        dz = c["rstd"] * (dy * gm - g["beta"] * gm * inv_b - zhat * (g["gamma"] * gm * inv_b))
        g["w1"] = a["x"].T @ dz
        m = a["bn_momentum"]
        one = f(m, 1.0)
        rm = (one - m) * a["running_mean"] + m * c["mean"]
        rv = (one - m) * a["running_var"] + m * (c["var"] * f(m, 24 / 23))
        outs = [sgd(a[k], g[k], a["lr"]) for k in self.params] + [rm, rv, loss]
        return dict(loss=loss, grads=g, outputs=outs)


@register
class Contrastive(Ref):
    name = "contrastive"
    params = ["w", "b"]
    outputs = [("w_new", "w"), ("b_new", "b"), ("loss", None)]
    fixed = {"lr": 0.5}

    def _fwd(self, a):
        e = np.tanh(a["x"] @ a["w"] + a["b"])
        n = e.shape[0]
        s = (e @ e.T) * f(e, 2.0)
        s = np.where(np.eye(n, dtype=bool), f(e, -np.inf), s)
        pos = np.arange(n) ^ 1
        nll, p = softmax_ce(s, pos)
        return nll.sum() * f(e, 1 / 12), e, p, pos

    def loss(self, a):
        return self._fwd(a)[0]

    def run(self, a):
        loss, e, p, pos = self._fwd(a)
        dgram = (p - one_hot(pos, e.shape[0], e.dtype)) * f(e, 1 / 12) * f(e, 2.0)
        dz = (dgram @ e + dgram.T @ e) * (1 - e * e)
        g = dict(w=a["x"].T @ dz, b=dz.sum(0))
        outs = [sgd(a[k], g[k], a["lr"]) for k in self.params] + [loss]
        return dict(loss=loss, grads=g, outputs=outs)


@register
class LayerNormRegression(Ref):
    name = "layernorm_regression"
    params = ["gamma", "beta", "w", "b"]
    outputs = [(p + "_new", p) for p in ["gamma", "beta", "w", "b"]] + [("loss", None)]
    fixed = {"lr": 0.5}

    def _fwd(self, a):
        x = a["x"]
        xc = x - x.sum(1, keepdims=True) * f(x, 1 / 16)
        sigma = np.sqrt((xc * xc).sum(1, keepdims=True) * f(x, 1 / 16) + f(x, 1e-5))
        xhat = xc / sigma
        h = xhat * a["gamma"] + a["beta"]
        r = h @ a["w"] + a["b"] - a["y"]
        return (r * r).sum() * f(x, 1 / 24), xhat, h, r

    def loss(self, a):
        return self._fwd(a)[0]

    def run(self, a):
        loss, xhat, h, r = self._fwd(a)
        dpred = r * f(r, 2 / 24)
        dh = dpred @ a["w"].T
        g = dict(gamma=(dh * xhat).sum(0), beta=dh.sum(0), w=h.T @ dpred, b=dpred.sum(0))
        outs = [sgd(a[k], g[k], a["lr"]) for k in self.params] + [loss]
        return dict(loss=loss, grads=g, outputs=outs)


@register
class TwoInputsI32(Ref):
    name = "two_inputs_i32"
    params = ["w_img", "w_meta", "b1", "w2", "b2"]
    outputs = [(p + "_new", p) for p in ["w_img", "w_meta", "b1", "w2", "b2"]] + [("loss", None), ("correct", None)]
    fixed = {"lr": 0.5}

    def _fwd(self, a):
        feat = np.concatenate([a["img"].reshape(24, 16), a["meta"]], axis=1)
        w1 = np.concatenate([a["w_img"], a["w_meta"]], axis=0)
        z1 = feat @ w1 + a["b1"]
        a1 = np.maximum(z1, 0)
        logits = a1 @ a["w2"] + a["b2"]
        nll, p = softmax_ce(logits, a["labels"])
        return nll.sum() * f(z1, 1 / 24), feat, z1, a1, logits, p

    def loss(self, a):
        return self._fwd(a)[0]

    def run(self, a):
        loss, feat, z1, a1, logits, p = self._fwd(a)
        dl = (p - one_hot(a["labels"], 5, p.dtype)) * f(p, 1 / 24)
        dz1 = np.where(z1 > 0, dl @ a["w2"].T, 0)
        dw1 = feat.T @ dz1
        g = dict(w_img=dw1[:16], w_meta=dw1[16:], b1=dz1.sum(0), w2=a1.T @ dl, b2=dl.sum(0))
        correct = np.int32((logits.argmax(1) == a["labels"]).sum())
        outs = [sgd(a[k], g[k], a["lr"]) for k in self.params] + [loss, correct]
        return dict(loss=loss, grads=g, outputs=outs)
