#!/usr/bin/env python3
"""bf16 and f16 products and sums lowered by ga-lower-to-cpu against numpy.

Each case is a module whose @step takes A (M x K) and B (K x N) of a low
precision type as arguments (so that nothing is constant-folded) and returns
A @ B (a linalg.matmul into a zero fill of the same type, as torch-mlir
writes it) and the sum of all of A (a linalg.generic reduction into a zero
fill). @main passes the inputs bit-exactly (hex dense constants) and prints
the results' bit patterns. The oracle is numpy in float64 on the same input
values: every element must be within one rounding to the low-precision type
(half an ulp, 2^-8 of the value for bf16, 2^-11 for f16) plus float32's
rounding of the K products summed.

The same module with the additions of the payloads written through an
`arith.bitcast` round trip (which ga-widen-accumulators leaves alone, so they
accumulate in the low-precision type, as before the pass) must miss that
bound, showing that the check can fail.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

M, K, N = 6, 512, 5
# Unit roundoff of each element type (half an ulp, relative).
TYPES = {"bf16": 2.0**-8, "f16": 2.0**-11}


def to_low(x, ty):
    """x (float64) rounded to `ty`, as float64 values and as uint16 bits."""
    if ty == "f16":
        low = x.astype(np.float16)
        return low.astype(np.float64), low.view(np.uint16)
    # bf16: round float32 bits to nearest even on the upper 16 (the inputs
    # are float32 values, so this is one rounding).
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return from_bits(bits, ty), bits


def from_bits(bits, ty):
    if ty == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    wide = bits.astype(np.uint32) << 16
    return wide.view(np.float32).astype(np.float64)


def add(ty, legacy, a, b):
    """A payload addition; `legacy` hides it behind a bitcast round trip."""
    if not legacy:
        return "%%s = arith.addf %s, %s : %s" % (a, b, ty)
    return ("%%ai = arith.bitcast %s : %s to i16\n    "
            "%%ab = arith.bitcast %%ai : i16 to %s\n    "
            "%%s = arith.addf %%ab, %s : %s") % (a, ty, ty, b, ty)


def module(ty, a_bits, b_bits, legacy):
    ta, tb, tc = ("tensor<%dx%dx%s>" % (r, c, ty) for r, c in ((M, K), (K, N), (M, N)))
    ts = "tensor<%s>" % ty
    hexa = a_bits.astype("<u2").tobytes().hex().upper()
    hexb = b_bits.astype("<u2").tobytes().hex().upper()
    ia, ib, ic = (t.replace(ty + ">", "i16>") for t in (ta, tb, tc))
    jc = tc.replace(ty + ">", "i32>")
    return """
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @step(%%a: %(ta)s, %%b: %(tb)s) -> (%(tc)s, %(ts)s) {
  %%zero = arith.constant 0.0 : %(ty)s
  %%e = tensor.empty() : %(tc)s
  %%acc = linalg.fill ins(%%zero : %(ty)s) outs(%%e : %(tc)s) -> %(tc)s
  %%c = linalg.generic {indexing_maps = [#mk, #kn, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%%a, %%b : %(ta)s, %(tb)s) outs(%%acc : %(tc)s) {
  ^bb0(%%x: %(ty)s, %%y: %(ty)s, %%o: %(ty)s):
    %%p = arith.mulf %%x, %%y : %(ty)s
    %(addp)s
    linalg.yield %%s : %(ty)s
  } -> %(tc)s
  %%se = tensor.empty() : %(ts)s
  %%sacc = linalg.fill ins(%%zero : %(ty)s) outs(%%se : %(ts)s) -> %(ts)s
  %%sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
      ins(%%a : %(ta)s) outs(%%sacc : %(ts)s) {
  ^bb0(%%x: %(ty)s, %%o: %(ty)s):
    %(addx)s
    linalg.yield %%s : %(ty)s
  } -> %(ts)s
  return %%c, %%sum : %(tc)s, %(ts)s
}
func.func private @printMemrefI32(tensor<*xi32>)
func.func @main() {
  %%a = arith.constant dense<"0x%(hexa)s"> : %(ia)s
  %%b = arith.constant dense<"0x%(hexb)s"> : %(ib)s
  %%af = arith.bitcast %%a : %(ia)s to %(ta)s
  %%bf = arith.bitcast %%b : %(ib)s to %(tb)s
  %%c, %%sum = call @step(%%af, %%bf) : (%(ta)s, %(tb)s) -> (%(tc)s, %(ts)s)
  %%ci = arith.bitcast %%c : %(tc)s to %(ic)s
  %%si = arith.bitcast %%sum : %(ts)s to tensor<i16>
  %%cw = arith.extui %%ci : %(ic)s to %(jc)s
  %%cu = tensor.cast %%cw : %(jc)s to tensor<*xi32>
  %%sw = arith.extui %%si : tensor<i16> to tensor<i32>
  %%su = tensor.cast %%sw : tensor<i32> to tensor<*xi32>
  call @printMemrefI32(%%cu) : (tensor<*xi32>) -> ()
  call @printMemrefI32(%%su) : (tensor<*xi32>) -> ()
  return
}
""" % dict(ta=ta, tb=tb, tc=tc, ts=ts, ia=ia, ib=ib, ic=ic, jc=jc, ty=ty, hexa=hexa,
           hexb=hexb, addp=add(ty, legacy, "%o", "%p"), addx=add(ty, legacy, "%o", "%x"))


def run(args, ty, seed, legacy):
    """The largest error of the case in units of its bound (<= 1: within)."""
    rng = np.random.default_rng(seed)
    # Positive inputs: the partial sums grow, so rounding each of them to
    # the low-precision type loses the small terms.
    a, a_bits = to_low(rng.uniform(0.0, 1.0, (M, K)), ty)
    b, b_bits = to_low(rng.uniform(0.0, 1.0, (K, N)), ty)
    src = module(ty, a_bits, b_bits, legacy)
    lowered = subprocess.run([os.path.join(args.bin, "ga-opt"), "--ga-lower-to-cpu"],
                             input=src, capture_output=True, text=True)
    if lowered.returncode:
        sys.exit("ga-lower-to-cpu failed:\n" + lowered.stderr)
    libs = ",".join(os.path.join(args.libdir, l) for l in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    out = subprocess.run([os.path.join(args.tools, "mlir-runner"), "-e", "main",
                          "-entry-point-result=void", "-shared-libs=" + libs],
                         input=lowered.stdout, capture_output=True, text=True)
    if out.returncode:
        sys.exit("mlir-runner failed:\n" + out.stderr)
    printed = [p.split("Unranked")[0] for p in out.stdout.split("data =")[1:]]
    c_bits, s_bits = (np.array([int(v) for v in re.findall(r"-?\d+", p)]).astype(np.uint16)
                      for p in printed)
    got = np.concatenate([from_bits(c_bits, ty), from_bits(s_bits, ty)])
    ref = np.concatenate([(a @ b).ravel(), [a.sum()]])
    terms = np.concatenate([(np.abs(a) @ np.abs(b)).ravel(), [np.abs(a).sum()]])
    count = np.array([K] * (M * N) + [M * K])
    unit = TYPES[ty]
    bound = unit * np.abs(ref) + count * 2.0**-24 * terms
    return float(np.max(np.abs(got - ref) / bound))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin", required=True, help="folder of ga-opt")
    ap.add_argument("--tools", required=True, help="folder of mlir-runner")
    ap.add_argument("--libdir", required=True, help="folder of the mlir runner libraries")
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    failed = 0
    for ty in TYPES:
        for seed in range(args.seeds):
            within = run(args, ty, seed, legacy=False)
            rounded = run(args, ty, seed, legacy=True)
            ok = within <= 1.0 and rounded > 1.0
            print("%s %s seed %d: error %.3g bounds widened, %.3g accumulated in %s"
                  % ("PASS" if ok else "FAIL", ty, seed, within, rounded, ty))
            failed += not ok
    print("%d cases, %d failed" % (len(TYPES) * args.seeds, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
