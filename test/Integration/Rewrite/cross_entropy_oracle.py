#!/usr/bin/env python3
"""float64 numpy oracle of Inputs/cross_entropy_gather.mlir after the rewrite.

For each number of micro-batches N and seed: draws the inputs with numpy,
rewrites the step with `ga-opt --ga-accumulate=micro-batches=N`, appends a
@main that calls it on the inputs (dense constants, floats as exact bit
patterns) and prints every result element as its i32 bit pattern, lowers it
with --ga-lower-to-cpu and runs it with mlir-runner. The results must match
softmax cross-entropy (ignore_index=0, mean over the kept labels) and its
weight gradient computed in float64 from the same inputs.

Prints one PASS/FAIL line per case and exits 1 on any failure.
"""

import argparse
import subprocess
import sys

import numpy as np

B, D, C = 16, 6, 5


def reference(w, x, y):
    logits = x @ w
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    keep = (y != 0).astype(np.float64)
    count = keep.sum()
    loss = -(logp[np.arange(B), y] * keep).sum() / count
    onehot = np.zeros((B, C))
    onehot[np.arange(B), y] = 1.0
    dlogits = (np.exp(logp) - onehot) * keep[:, None] / count
    return loss, x.T @ dlogits


def dense_f32(a):
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).ravel()
    elems = ", ".join("0x%08X" % b for b in bits)
    shape = "x".join(str(s) for s in a.shape)
    return "dense<[%s]> : tensor<%sxf32>" % (elems, shape) if a.ndim == 1 else \
        "dense<%s> : tensor<%sxf32>" % (nest(bits.reshape(a.shape)), shape)


def nest(a):
    if a.ndim == 1:
        return "[" + ", ".join("0x%08X" % b for b in a) + "]"
    return "[" + ", ".join(nest(r) for r in a) + "]"


MAIN = """
func.func @main() {{
  %w = arith.constant {w}
  %x = arith.constant {x}
  %y = arith.constant dense<[{y}]> : tensor<{b}xi64>
  %loss, %dw = call @train_step(%w, %x, %y) : (tensor<{d}x{c}xf32>, tensor<{b}x{d}xf32>, tensor<{b}xi64>) -> (tensor<f32>, tensor<{d}x{c}xf32>)
  %l = tensor.extract %loss[] : tensor<f32>
  %lb = arith.bitcast %l : f32 to i32
  vector.print %lb : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cd = arith.constant {d} : index
  %cc = arith.constant {c} : index
  scf.for %i = %c0 to %cd step %c1 {{
    scf.for %j = %c0 to %cc step %c1 {{
      %v = tensor.extract %dw[%i, %j] : tensor<{d}x{c}xf32>
      %vb = arith.bitcast %v : f32 to i32
      vector.print %vb : i32
    }}
  }}
  return
}}
"""


def run_case(args, n, seed):
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, (D, C)).astype(np.float32)
    x = rng.uniform(-1, 1, (B, D)).astype(np.float32)
    y = rng.integers(0, C, B)
    y[seed % B] = 1  # at least one kept label
    rewritten = subprocess.run(
        [args.ga_opt, args.step, "--ga-accumulate=micro-batches=%d" % n],
        check=True, capture_output=True, text=True).stdout
    module = rewritten.rstrip()
    assert module.endswith("}"), "expected a module"
    module = module[:-1] + MAIN.format(
        w=dense_f32(w), x=dense_f32(x), y=", ".join(str(int(v)) for v in y),
        b=B, d=D, c=C) + "}\n"
    lowered = subprocess.run([args.ga_opt, "--ga-lower-to-cpu"], input=module,
                             check=True, capture_output=True, text=True).stdout
    out = subprocess.run(
        [args.runner, "-e", "main", "-entry-point-result=void",
         "-shared-libs=" + args.libs], input=lowered, check=True,
        capture_output=True, text=True).stdout
    bits = np.array([int(t) for t in out.split()], dtype=np.int64)
    vals = bits.astype(np.uint32).view(np.float32).astype(np.float64)
    loss, dw = reference(w.astype(np.float64), x.astype(np.float64), y)
    ref = np.concatenate([[loss], dw.ravel()])
    if vals.shape != ref.shape:
        return False, "got %d values, expected %d" % (vals.size, ref.size)
    err = np.abs(vals - ref).max() / max(np.abs(ref).max(), 1e-30)
    return err <= args.rtol, "max error %.3g (relative to max |ref|)" % err


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--step", required=True)
    parser.add_argument("--ga-opt", required=True)
    parser.add_argument("--runner", required=True)
    parser.add_argument("--libs", required=True)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--micro-batches", default="1,4,5,16")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    failed = 0
    for n in (int(v) for v in args.micro_batches.split(",")):
        for seed in range(args.seeds):
            ok, note = run_case(args, n, seed)
            failed += not ok
            print("%s N=%d seed=%d: %s" % ("PASS" if ok else "FAIL", n, seed,
                                           note))
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
