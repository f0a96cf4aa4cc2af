#!/usr/bin/env python3
"""Math functions on f32 vectors, as ga-lower-to-cpu lowers them
(ga-vectorize-math: polynomial approximations), against float64.

For every function this writes a module whose @apply maps the function over
a tensor<Nxf32> argument (an element-wise linalg.generic, which
ga-vectorize-linalg turns into vector ops), and whose @main passes it an
input bit-exactly (a hex dense constant) and prints the result's bit
patterns; lowers it with `ga-opt --ga-lower-to-cpu` (vectors, so
approximated) and with `vector-width=0` (scalar loops: libm), runs both
under mlir-runner and measures each against the float64 function of the
same inputs in units in the last place of the float32 result.

Inputs: zeros, infinities, NaN, the ends of the f32 range, subnormals,
log-uniform magnitudes of both signs over the whole range, and a dense grid
where the functions curve (|x| < 20). A result whose float64 value is below
the smallest normal f32 may be off by that much (flushed or rounded
subnormals); NaN must stay NaN and infinities must match.
"""

import argparse
import math
import re
import sys

import numpy as np

from mlir_runner import (lower_and_run, print_bits, printed_integers,
                         printer_declaration)

# The float64 reference of each function and its bound in ulp (the
# measured maximum of the approximation, rounded up; libm's is printed next
# to it for comparison).
FUNCS = {
    "exp": (np.exp, 1),
    "expm1": (np.expm1, 2),
    "log1p": (np.log1p, 3),
    "tanh": (np.tanh, 2),
    "erf": (np.vectorize(math.erf, otypes=[np.float64]), 4),
    "erfc": (np.vectorize(math.erfc, otypes=[np.float64]), 3),
}
TINY = float(np.finfo(np.float32).tiny)


def inputs(seed):
    rng = np.random.default_rng(seed)
    f = np.finfo(np.float32)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, f.max, -f.max, f.tiny,
               -f.tiny, 1e-45, -1e-45, 1.0, -1.0, 88.7, 88.8, -87.3, -103.9,
               -104.0, 1e-8, -1e-8, 0.5, -0.5]
    mags = 10.0 ** rng.uniform(-38, 38, 1500)
    logu = mags * rng.choice([-1.0, 1.0], 1500)
    grid = rng.uniform(-20, 20, 2000)
    small = rng.uniform(-1, 1, 574)
    x = np.concatenate([special, logu, grid, small]).astype(np.float32)
    return x


def module(name, x):
    n = x.size
    hexdata = x.astype("<f4").tobytes().hex().upper()
    return """
#id = affine_map<(i) -> (i)>
func.func @apply(%%x: tensor<%(n)dxf32>) -> tensor<%(n)dxf32> {
  %%e = tensor.empty() : tensor<%(n)dxf32>
  %%r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%%x : tensor<%(n)dxf32>) outs(%%e : tensor<%(n)dxf32>) {
  ^bb0(%%v: f32, %%o: f32):
    %%y = math.%(name)s %%v : f32
    linalg.yield %%y : f32
  } -> tensor<%(n)dxf32>
  return %%r : tensor<%(n)dxf32>
}
%(printer)s
func.func @main() {
  %%x = arith.constant dense<"0x%(hex)s"> : tensor<%(n)dxf32>
  %%y = call @apply(%%x) : (tensor<%(n)dxf32>) -> tensor<%(n)dxf32>
%(print)s
  return
}
""" % dict(n=n, name=name, hex=hexdata, printer=printer_declaration("i32"),
           print=print_bits("%y", (n,), "f32", "i32"))


def run_f32(args, src, options):
    """The f32 values @main of `src` prints as bit patterns, and the lowered
    module (mlir_runner.lower_and_run)."""
    stdout, lowered = lower_and_run(args, src, options)
    return (printed_integers(stdout).astype(np.uint32).view(np.float32),
            lowered)


def ulp_errors(got, x, ref_fn):
    """The error of each element in ulp of the float32 reference, or inf
    where NaN or an infinity does not match."""
    with np.errstate(all="ignore"):
        ref = ref_fn(x.astype(np.float64))
        ref32 = ref.astype(np.float32)  # overflows to inf where f32 does
    g = got.astype(np.float64)
    err = np.zeros(x.size)
    nan = np.isnan(ref)
    err[nan != np.isnan(g)] = np.inf
    inf = np.isinf(ref32) & ~nan
    err[inf & (g != ref32.astype(np.float64))] = np.inf
    fin = ~nan & ~inf
    spacing = np.spacing(np.abs(ref32[fin])).astype(np.float64)
    diff = np.abs(g[fin] - ref[fin])
    # Below the normal range: an absolute error up to the smallest normal.
    e = np.where(np.abs(ref[fin]) < TINY, np.where(diff <= TINY, 0, np.inf),
                 diff / spacing)
    e[~np.isfinite(g[fin])] = np.inf
    err[fin] = e
    return err


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin", required=True, help="folder of ga-opt")
    ap.add_argument("--tools", required=True, help="folder of mlir-runner")
    ap.add_argument("--libdir", required=True,
                    help="folder of the mlir runner libraries")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    x = inputs(args.seed)
    failed = 0
    for name, (ref_fn, bound) in FUNCS.items():
        vec, text = run_f32(args, module(name, x),
                                  "vector-width=256 approximate-math=1")
        # The vector lowering must not call libm for it (the point of the
        # pass); the scalar one does.
        called = re.search(r"llvm\.call @%sf?\(" % name, text) is not None
        lib, _ = run_f32(args, module(name, x), "vector-width=0")
        ev, el = ulp_errors(vec, x, ref_fn), ulp_errors(lib, x, ref_fn)
        worst = int(np.argmax(ev))
        ok = ev.max() <= bound and not called
        print("%s %s: max %.2f ulp (bound %d; libm %.2f ulp)%s%s" % (
            "PASS" if ok else "FAIL", name, ev.max(), bound, el.max(),
            "" if ev.max() <= bound else " at x = %r: got %r" % (
                float(x[worst]), float(vec[worst])),
            " but the vector code calls libm" if called else ""))
        failed += not ok
    print("%d functions, %d failed" % (len(FUNCS), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
