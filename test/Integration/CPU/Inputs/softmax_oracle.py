#!/usr/bin/env python3
"""linalg.softmax lowered by ga-lower-to-cpu against numpy in float64.

For every seed and case (shape, softmax dimension, element type) this writes a
module whose @softmax takes the input as an argument (so that nothing is
constant-folded), and whose @main passes it bit-exactly (a hex dense
constant) and prints the result's bit patterns (bitcast to integers), lowers
it with `ga-opt --ga-lower-to-cpu`, runs it under mlir-runner and compares
every element with the float64 softmax of the same input values.

Inputs span a wide range (scale 8, one row shifted by +90) so that a softmax
that skipped the max subtraction would overflow exp in float32.
"""

import argparse
import sys

import numpy as np

from mlir_runner import (add_tool_arguments, lower_and_run, print_bits,
                         printed_integers, printer_declaration, report,
                         tensor_type)

CASES = [((5, 7), 1, "f32"), ((6, 4), 0, "f32"), ((3, 4, 5), 2, "f32"),
         ((2, 3, 9), 1, "f64"), ((4, 16), 1, "f64"), ((1, 1), 1, "f32")]
NP = {"f32": np.float32, "f64": np.float64}
INT = {"f32": ("i32", np.uint32), "f64": ("i64", np.uint64)}
# Float64 oracle: the float32 result may be off by the rounding of exp, of the
# sum (n terms) and of the division; float64 by the same in its own epsilon.
RTOL = {"f32": 4e-6, "f64": 1e-13}


def module(shape, dim, ty, x):
    t = tensor_type(shape, ty)
    ity, _ = INT[ty]
    hexdata = x.astype(x.dtype.newbyteorder("<")).tobytes().hex().upper()
    return """
func.func @softmax(%%x: %(t)s) -> %(t)s {
  %%e = tensor.empty() : %(t)s
  %%s = linalg.softmax dimension(%(dim)d) ins(%%x : %(t)s) outs(%%e : %(t)s) -> %(t)s
  return %%s : %(t)s
}
%(printer)s
func.func @main() {
  %%x = arith.constant dense<"0x%(hex)s"> : %(t)s
  %%s = call @softmax(%%x) : (%(t)s) -> %(t)s
%(print)s
  return
}
""" % dict(t=t, dim=dim, hex=hexdata, printer=printer_declaration(ity),
           print=print_bits("%s", shape, ty, ity))


def run(args, shape, dim, ty, seed):
    rng = np.random.default_rng(seed * 1000 + len(shape) * 10 + dim)
    x = (rng.standard_normal(shape) * 8).astype(NP[ty])
    x[(0,) * (len(shape) - 1)] += 90  # one row far from 0
    src = module(shape, dim, ty, x)
    try:
        stdout, _ = lower_and_run(args, src)
    except RuntimeError as error:
        return str(error)
    bits = printed_integers(stdout)
    _, uty = INT[ty]
    got = bits.astype(uty).view(NP[ty]).astype(np.float64).reshape(shape)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=dim, keepdims=True))
    ref = e / e.sum(axis=dim, keepdims=True)
    err = np.abs(got - ref)
    tol = RTOL[ty] * shape[dim] * np.maximum(ref, 1e-30) + RTOL[ty] * 1e-3
    if not np.all(np.isfinite(got)) or np.any(err > tol):
        i = np.unravel_index(np.argmax(err - tol), shape)
        return "max error %.3g at %s (got %r, float64 %r)" % (err.max(), list(i), got[i], ref[i])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    add_tool_arguments(ap)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    return report(("seed %d %s dim %d %s" % (seed, "x".join(map(str, shape)), dim, ty),
                   run(args, shape, dim, ty, seed))
                  for seed in range(args.seeds) for shape, dim, ty in CASES)


if __name__ == "__main__":
    sys.exit(main())
