#!/usr/bin/env python3
"""ga.attention and ga.attention_backward lowered by ga-lower-to-cpu against
numpy in float64.

For every seed and case this writes a module whose @attention takes query,
key, value, the mask and the output's gradient as arguments (nothing is
constant-folded) and returns the output, the logsumexp and the three
gradients; @main passes them bit-exactly (hex dense constants) and prints
every result's bit patterns. The module is lowered with
`ga-opt --ga-lower-to-cpu` (the ops decompose through
--ga-decompose-aggregated-ops), run under mlir-runner and compared element by
element with the same attention computed in float64 from the same input
values. Cases: causal, grouped key/value heads (an m loop that key and value
do not index) with a padding mask broadcast over heads and queries in which
one sample masks every key (its rows give zero, lse -inf), an additive mask
in float64, and bf16 inputs (computed in f32, results rounded to bf16).
"""

import argparse
import re
import sys

import numpy as np

from mlir_runner import (add_tool_arguments, lower_and_run, printed_integers,
                         report)

LOOPS = "b h g m k1 k2 n".split()
# name: element type, extents, operand dimensions (loop names; "0" is a
# broadcast dimension of size 1), causal, mask kind.
CASES = [
    ("causal", "f32", dict(b=2, h=3, m=5, k1=4, k2=6, n=3),
     dict(q="b h m k1", k="b h k2 k1", v="b h k2 n"), True, None),
    ("grouped-padding", "f32", dict(b=2, h=2, g=2, m=5, k1=4, k2=5, n=4),
     dict(q="b h g m k1", k="b h k2 k1", v="b h k2 n", mask="b 0 0 0 k2"),
     True, "padding"),
    ("additive-f64", "f64", dict(b=2, h=3, m=4, k1=5, k2=6, n=2),
     dict(q="b h m k1", k="b h k2 k1", v="b h k2 n", mask="b h m k2"),
     False, "additive"),
    ("bf16", "bf16", dict(b=2, h=2, m=6, k1=8, k2=6, n=8),
     dict(q="b h m k1", k="b h k2 k1", v="b h k2 n"), True, None),
]
INT = {"f32": ("i32", np.uint32), "f64": ("i64", np.uint64),
       "bf16": ("i16", np.uint16)}
COMPUTE = {"f32": "f32", "f64": "f64", "bf16": "f32"}
# Relative to each element and to the largest element of the result: the
# rounding of the compute type over a few short sums, and for bf16 results
# the final rounding to bf16.
ELEMENT_TOL = {"f32": 1e-5, "f64": 1e-12, "bf16": 2.0 ** -8}
GLOBAL_TOL = {"f32": 1e-5, "f64": 1e-12, "bf16": 1e-4}


def bf16_round(x):
    """float32 values rounded to bf16 (to nearest even), as float32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def encode(x, ty):
    """The little-endian hex of `x` in element type `ty`."""
    if ty == "bf16":
        raw = (x.astype(np.float32).view(np.uint32) >> 16).astype("<u2")
    else:
        raw = x.astype("<f4" if ty == "f32" else "<f8")
    return raw.tobytes().hex().upper()


def decode(bits, ty):
    _, uty = INT[ty]
    if ty == "bf16":
        return (bits.astype(np.uint16).astype(np.uint32) << 16).view(
            np.float32).astype(np.float64)
    return bits.astype(uty).view(np.float32 if ty == "f32" else np.float64
                                 ).astype(np.float64)


class Case:
    def __init__(self, name, ty, extents, dims, causal, mask):
        self.name, self.ty, self.causal, self.mask = name, ty, causal, mask
        self.loops = [l for l in LOOPS if l in extents]
        self.extents = extents
        self.dims = {k: v.split() for k, v in dims.items()}
        qd = self.dims["q"]
        self.dims["o"] = [d for d in qd if d != "k1"] + ["n"]
        self.dims["l"] = [d for d in qd if d != "k1"]

    def shape(self, role):
        return tuple(1 if d == "0" else self.extents[d] for d in self.dims[role])

    def type(self, role, ty=None):
        return "tensor<%s%s>" % ("".join("%dx" % s for s in self.shape(role)),
                                 ty or self.ty)

    def affine(self, role):
        res = ", ".join("0" if d == "0" else "d%d" % self.loops.index(d)
                        for d in self.dims[role])
        ids = ", ".join("d%d" % i for i in range(len(self.loops)))
        return "affine_map<(%s) -> (%s)>" % (ids, res)


def module(c, data):
    ct = COMPUTE[c.ty]
    roles = ["q", "k", "v"] + (["mask"] if c.mask else []) + ["o", "l"]
    maps = "[%s]" % ", ".join(c.affine(r) for r in roles)
    mask_t = c.type("mask", "f32" if c.ty == "bf16" else c.ty) if c.mask else None
    mask_arg = ", %%m: %s" % mask_t if c.mask else ""
    mask_use = " mask(%%m : %s)" % mask_t if c.mask else ""
    causal = " causal" if c.causal else ""
    qt, kt, vt, ot, lt = (c.type("q"), c.type("k"), c.type("v"), c.type("o"),
                          c.type("l", ct))
    lines = [
        "func.func @attention(%%q: %s, %%k: %s, %%v: %s%s, %%do: %s)" % (
            qt, kt, vt, mask_arg, ot),
        "    -> (%s, %s, %s, %s, %s) {" % (ot, lt, qt, kt, vt),
        "  %%o, %%lse = ga.attention %%q, %%k, %%v%s scale 0.375%s "
        "indexing_maps %s : %s, %s, %s -> %s, %s" % (
            mask_use, causal, maps, qt, kt, vt, ot, lt),
        "  %%dq, %%dk, %%dv = ga.attention_backward %%q, %%k, %%v, %%o, %%do, "
        "%%lse%s scale 0.375%s indexing_maps %s : %s, %s, %s, %s, %s, %s -> "
        "%s, %s, %s" % (mask_use, causal, maps, qt, kt, vt, ot, ot, lt, qt,
                        kt, vt),
        "  return %%o, %%lse, %%dq, %%dk, %%dv : %s, %s, %s, %s, %s" % (
            ot, lt, qt, kt, vt),
        "}",
    ]
    printers = set()
    body = []
    args = []
    for name, role, ty in [("q", "q", c.ty), ("k", "k", c.ty), ("v", "v", c.ty)] + (
            [("m", "mask", mask_t.split("x")[-1][:-1])] if c.mask else []) + [
            ("do", "o", c.ty)]:
        body.append("  %%%s = arith.constant dense<\"0x%s\"> : %s" % (
            name, encode(data[name], ty), c.type(role, ty)))
        args.append("%" + name)
    body.append("  %%r:5 = call @attention(%s) : (%s) -> (%s, %s, %s, %s, %s)" % (
        ", ".join(args),
        ", ".join([qt, kt, vt] + ([mask_t] if c.mask else []) + [ot]),
        ot, lt, qt, kt, vt))
    for i, (role, ty) in enumerate([("o", c.ty), ("l", ct), ("q", c.ty),
                                    ("k", c.ty), ("v", c.ty)]):
        bits = INT[ty][0]
        # The runner prints 32- and 64-bit integers: bf16 bits widened.
        ity = "i32" if bits == "i16" else bits
        t, it = c.type(role, ty), c.type(role, ity)
        rank = len(c.shape(role))
        ids = ", ".join("d%d" % j for j in range(rank))
        imap = "affine_map<(%s) -> (%s)>" % (ids, ids)
        printers.add(ity)
        body += [
            "  %%e%d = tensor.empty() : %s" % (i, it),
            "  %%b%d = linalg.generic {indexing_maps = [%s, %s], iterator_types = [%s]}"
            " ins(%%r#%d : %s) outs(%%e%d : %s) {" % (
                i, imap, imap, ", ".join(['"parallel"'] * rank), i, t, i, it),
            "  ^bb0(%%x: %s, %%y: %s):" % (ty, ity),
            "    %%a = arith.bitcast %%x : %s to %s" % (ty, bits),
            "    %%c = arith.extui %%a : %s to %s" % (bits, ity)
            if bits != ity else "",
            "    linalg.yield %s : %s" % ("%c" if bits != ity else "%a", ity),
            "  } -> " + it,
            "  %%u%d = tensor.cast %%b%d : %s to tensor<*x%s>" % (i, i, it, ity),
            "  call @printMemref%s(%%u%d) : (tensor<*x%s>) -> ()" % (
                ity.upper(), i, ity),
        ]
    for ity in sorted(printers):
        lines.append("func.func private @printMemref%s(tensor<*x%s>)" % (
            ity.upper(), ity))
    lines += ["func.func @main() {"] + body + ["  return", "}"]
    return "\n".join(lines) + "\n"


def reference(c, d):
    """out, lse, dq, dk, dv in float64 (numpy), on [b, h, g, m, *] views."""
    g = c.extents.get("g", 1)
    b, h = c.extents["b"], c.extents["h"]
    m, k2 = c.extents["m"], c.extents["k2"]
    q = d["q"].astype(np.float64).reshape(b, h, g, m, -1)
    k = d["k"].astype(np.float64).reshape(b, h, 1, k2, -1)
    v = d["v"].astype(np.float64).reshape(b, h, 1, k2, -1)
    do = d["do"].astype(np.float64).reshape(b, h, g, m, -1)
    s = 0.375 * q @ np.swapaxes(k, -1, -2)
    if c.causal:
        s = np.where(np.triu(np.ones((m, k2), bool), 1), -np.inf, s)
    if c.mask:
        mask = d["m"].astype(np.float64)
        s = s + (mask.reshape(b, 1, 1, 1, k2) if c.mask == "padding"
                 else mask.reshape(b, h, 1, m, k2))
    mx = s.max(-1, keepdims=True)
    mx = np.where(np.isinf(mx), 0.0, mx)
    with np.errstate(divide="ignore"):
        lse = np.log(np.exp(s - mx).sum(-1, keepdims=True)) + mx
    p = np.where(np.isneginf(lse), 0.0, np.exp(s - np.where(np.isneginf(lse), 0.0, lse)))
    out = p @ v
    dv = (np.swapaxes(p, -1, -2) @ do).sum(2)
    dp = do @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))
    dq = 0.375 * ds @ k
    dk = 0.375 * (np.swapaxes(ds, -1, -2) @ q).sum(2)
    return [out.reshape(c.shape("o")), lse.reshape(c.shape("l")),
            dq.reshape(c.shape("q")), dk.reshape(c.shape("k")),
            dv.reshape(c.shape("v"))]


def inputs(c, seed):
    rng = np.random.default_rng(seed * 100 + CASES.index(next(
        x for x in CASES if x[0] == c.name)))
    data = {}
    for name, role in [("q", "q"), ("k", "k"), ("v", "v"), ("do", "o")]:
        x = rng.standard_normal(c.shape(role)) * 2
        data[name] = bf16_round(x) if c.ty == "bf16" else x.astype(
            np.float32 if c.ty == "f32" else np.float64)
    if c.mask == "padding":
        mask = np.zeros(c.shape("mask"), np.float32)
        mask[0, ..., -2:] = -np.inf  # sample 0: its last two keys are padding
        mask[1] = -np.inf            # sample 1: every key (rows of zeros)
        data["m"] = mask
    elif c.mask == "additive":
        data["m"] = rng.standard_normal(c.shape("mask"))
    return data


def run(args, case, seed):
    c = Case(*case)
    data = inputs(c, seed)
    src = module(c, data)
    try:
        stdout, _ = lower_and_run(args, src)
    except RuntimeError as error:
        return str(error)
    sections = stdout.split("Unranked Memref")[1:]
    ct = COMPUTE[c.ty]
    names = ["output", "logsumexp", "dq", "dk", "dv"]
    types = [c.ty, ct, c.ty, c.ty, c.ty]
    for name, ty, text, ref in zip(names, types, sections, reference(c, data)):
        data_text = text[text.index("data =") + 6:]
        bits = np.array([int(v) for v in re.findall(r"-?\d+", data_text)],
                        dtype=np.int64)
        got = decode(bits, ty).reshape(ref.shape)
        if not np.array_equal(np.isneginf(got), np.isneginf(ref)):
            return "%s: -inf where float64 has none, or the reverse" % name
        fin = np.isfinite(ref)
        if not np.all(np.isfinite(got[fin])):
            return "%s: not finite where float64 is" % name
        scale = np.abs(ref[fin]).max() if fin.any() else 0.0
        err = np.abs(got[fin] - ref[fin])
        tol = ELEMENT_TOL[ty] * np.abs(ref[fin]) + GLOBAL_TOL[c.ty] * scale
        if np.any(err > tol):
            i = np.argmax(err - tol)
            return "%s: max error %.3g (got %r, float64 %r)" % (
                name, err.max(), got[fin][i], ref[fin][i])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    add_tool_arguments(ap)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--print-module", help="print the module of this case (seed 0)")
    args = ap.parse_args()
    if args.print_module:
        c = Case(*next(x for x in CASES if x[0] == args.print_module))
        print(module(c, inputs(c, 0)))
        return 0
    return report(("seed %d %s" % (seed, case[0]), run(args, case, seed))
                  for seed in range(args.seeds) for case in CASES)


if __name__ == "__main__":
    sys.exit(main())
