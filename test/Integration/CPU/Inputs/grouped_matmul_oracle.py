#!/usr/bin/env python3
"""ga.grouped_matmul lowered by ga-lower-to-cpu against numpy in float64.

For every seed and case (rows M, columns K and N, groups E, the product or
its weights' gradient (transpose_lhs), element type, type of the ends) this
writes a module whose @grouped takes the operands as arguments (so that
nothing is constant-folded), and whose @main passes them bit-exactly (hex
dense constants) and prints the result's bit patterns, lowers it with
`ga-opt --ga-lower-to-cpu=blas=0`, runs it under mlir-runner and compares
every element with the float64 grouped product of the same values, computed
group by group from the ends as torch._grouped_mm defines them (a group
ends where the next begins; rows past the last end belong to none) plus the
init.

The ends are drawn as the routing of a batch gives them (sorted, some groups
empty), and also out of order and past M (the op clamps: a group whose end
is below the previous one is empty), all rows in one group, and no row in
any group.

With --gather the module first goes through --ga-decompose-grouped-gather
(the GPU pipeline's form: linalg.generic gathers), then the same lowering.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

from mlir_runner import (add_tool_arguments, lower_and_run, print_bits,
                         printed_integers, printer_declaration, report,
                         tensor_type)

# (M, K, N, E, transpose_lhs, element type, ends type)
CASES = [(12, 8, 5, 4, False, "f32", "i32"), (12, 8, 5, 4, True, "f32", "i32"),
         (9, 3, 7, 3, False, "f64", "i64"), (9, 3, 7, 3, True, "f64", "index"),
         (16, 6, 4, 5, False, "f32", "index"), (7, 5, 3, 6, True, "f32", "i64")]
NP = {"f32": np.float32, "f64": np.float64}
INT = {"f32": ("i32", np.uint32), "f64": ("i64", np.uint64)}
EPS = {"f32": 2.0 ** -24, "f64": 2.0 ** -53}


def draw_ends(rng, m, e, kind):
    if kind == "routing":  # a histogram's cumulative sum: sorted, some empty
        counts = rng.multinomial(m, rng.dirichlet(np.ones(e) * 0.5))
        return np.cumsum(counts)
    if kind == "wild":  # out of order, negative, past M
        return rng.integers(-3, m + 5, size=e)
    if kind == "one":
        ends = np.full(e, m)
        ends[:e // 2] = 0
        return ends
    return np.zeros(e, dtype=np.int64)  # no row in any group


def reference(x, w, ends, init, transposed):
    """The float64 grouped product (torch._grouped_mm's definition) + init."""
    m = x.shape[0]
    out = init.astype(np.float64).copy()
    start = 0
    for g, end in enumerate(ends):
        end = max(min(max(int(end), 0), m), start)
        xs = x[start:end].astype(np.float64)
        if transposed:
            out[g] += xs.T @ w[start:end].astype(np.float64)
        else:
            out[start:end] += xs @ w[g].astype(np.float64)
        start = end
    return out


def constant(a, ty):
    if ty in ("i32", "i64", "index"):
        return "dense<[%s]> : %s" % (", ".join(str(int(v)) for v in a),
                                     tensor_type(a.shape, ty))
    data = a.astype(a.dtype.newbyteorder("<")).tobytes().hex().upper()
    return 'dense<"0x%s"> : %s' % (data, tensor_type(a.shape, ty))


def module(x, w, ends, init, transposed, ty, ety):
    tx, tw = tensor_type(x.shape, ty), tensor_type(w.shape, ty)
    te, ty_ = tensor_type(ends.shape, ety), tensor_type(init.shape, ty)
    ity, _ = INT[ty]
    return """
func.func @grouped(%%x: %(tx)s, %%w: %(tw)s, %%e: %(te)s, %%y: %(ty_)s) -> %(ty_)s {
  %%r = ga.grouped_matmul %(tr)s %%x, %%w ends %%e into %%y : %(tx)s, %(tw)s, %(te)s into %(ty_)s
  return %%r : %(ty_)s
}
%(printer)s
func.func @main() {
  %%x = arith.constant %(cx)s
  %%w = arith.constant %(cw)s
  %%e = arith.constant %(ce)s
  %%y = arith.constant %(cy)s
  %%s = call @grouped(%%x, %%w, %%e, %%y) : (%(tx)s, %(tw)s, %(te)s, %(ty_)s) -> %(ty_)s
%(print)s
  return
}
""" % dict(tx=tx, tw=tw, te=te, ty_=ty_,
           tr="transpose_lhs" if transposed else "",
           printer=printer_declaration(ity),
           print=print_bits("%s", init.shape, ty, ity),
           cx=constant(x, ty), cw=constant(w, ty), ce=constant(ends, ety),
           cy=constant(init, ty))


def run(args, case, kind, seed):
    m, k, n, e, transposed, ty, ety = case
    rng = np.random.default_rng(seed * 7919 + m * 31 + e * 7 + transposed)
    x = rng.standard_normal((m, k)).astype(NP[ty])
    w = rng.standard_normal((m, n) if transposed else (e, k, n)).astype(NP[ty])
    init = rng.standard_normal((e, k, n) if transposed else (m, n)).astype(NP[ty])
    ends = draw_ends(rng, m, e, kind)
    src = module(x, w, ends, init, transposed, ty, ety)
    if args.gather:
        gathered = subprocess.run(
            [os.path.join(args.bin, "ga-opt"), "--ga-decompose-grouped-gather"],
            input=src, capture_output=True, text=True)
        if gathered.returncode:
            return "ga-decompose-grouped-gather failed:\n" + gathered.stderr
        src = gathered.stdout
    try:
        stdout, _ = lower_and_run(args, src, "blas=0")
    except RuntimeError as error:
        return str(error)
    bits = printed_integers(stdout)
    got = bits.astype(INT[ty][1]).view(NP[ty]).astype(np.float64).reshape(init.shape)
    ref = reference(x, w, ends, init, transposed)
    # Each element is a sum of at most max(K, M) + 1 products: that many
    # roundings of the sum of absolute values.
    absolute = reference(np.abs(x), np.abs(w), ends, np.abs(init), transposed)
    tol = 2 * (max(k, m) + 1) * EPS[ty] * absolute + 1e-300
    err = np.abs(got - ref)
    if not np.all(np.isfinite(got)) or np.any(err > tol):
        i = np.unravel_index(np.argmax(err - tol), ref.shape)
        return "max error %.3g at %s (got %r, float64 %r)" % (
            err.max(), list(i), got[i], ref[i])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    add_tool_arguments(ap)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--gather", action="store_true",
                    help="decompose with --ga-decompose-grouped-gather first")
    args = ap.parse_args()
    return report(("seed %d %s %s" % (seed, case, kind),
                   run(args, case, kind, seed))
                  for seed in range(args.seeds) for case in CASES
                  for kind in ("routing", "wild", "one", "none"))


if __name__ == "__main__":
    sys.exit(main())
