#!/usr/bin/env python3
"""Numerical checks of the training-step corpus (test/Integration/Inputs/steps).

For every <name>.mlir step this script
  1. lints the input contract: one public func.func @train_step, no func.call,
     only func/arith/math/linalg/tensor ops (read from mlir-opt's generic form),
     at least one `ga.batch` argument;
  2. seeds inputs from the signature (ga.init / ga.range hints, see make_inputs)
     and the numpy reference of the step (refs.py: fixed hyper-parameters,
     concrete sizes of dynamic dimensions);
  3. checks by central finite differences in float64 that the hand-derived
     gradients of the numpy transcription are the gradients of its loss
     (sampled coordinates plus random directional derivatives over all params);
  4. JIT-runs the MLIR step with mlir-opt | mlir-runner on the same inputs and
     compares every result with the numpy transcription (bit-exact transport
     of the values: floats are printed as their i32 bit patterns).

Exit status 0 iff every step passes. Prints one PASS/FAIL line per step with
the maximum errors seen.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refs  # noqa: E402

ALLOWED_DIALECTS = {"func", "arith", "math", "linalg", "tensor"}
ALLOWED_TENSOR_OPS = {"tensor.empty", "tensor.extract_slice", "tensor.insert_slice", "tensor.expand_shape",
                      "tensor.collapse_shape", "tensor.dim", "tensor.cast", "tensor.extract"}

PIPELINE = [
    "--one-shot-bufferize=bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map",
    "--buffer-deallocation-pipeline",
    "--convert-linalg-to-loops",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--lower-affine",
    "--finalize-memref-to-llvm",
    "--convert-to-llvm",
    "--reconcile-unrealized-casts",
]


# --------------------------------------------------------------------------
# Signature parsing
# --------------------------------------------------------------------------
_OPEN = {"<": ">", "(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def split_top(s, sep=","):
    """Splits s at `sep` characters that are not nested in <>()[]{} or quotes."""
    out, depth, cur, quote, prev = [], 0, [], False, ""
    for ch in s:
        if ch == '"':
            quote = not quote
        elif not quote:
            # '->' is not a closing bracket.
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE and not (ch == ">" and prev == "-"):
                depth -= 1
            elif ch == sep and depth == 0:
                out.append("".join(cur))
                cur = []
                prev = ch
                continue
        cur.append(ch)
        prev = ch
    if "".join(cur).strip():
        out.append("".join(cur))
    return [p.strip() for p in out]


def matching(s, i):
    """Index of the bracket closing the one at s[i]."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] in _OPEN:
            depth += 1
        elif s[j] in _CLOSE and not (s[j] == ">" and s[j - 1] == "-"):
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced brackets")


class Ty:
    def __init__(self, text):
        self.text = text.strip()
        m = re.fullmatch(r"tensor<(.*)>", self.text)
        if m:
            self.tensor = True
            parts = m.group(1).split("x")
            self.elem = parts[-1]
            self.shape = [(-1 if d == "?" else int(d)) for d in parts[:-1]]
        else:
            self.tensor = False
            self.elem = self.text
            self.shape = []
        if self.elem not in ("f32", "bf16", "i64", "i32", "i1"):
            raise ValueError("unsupported element type in " + self.text)

    @property
    def is_float(self):
        return self.elem in ("f32", "bf16")

    @property
    def dynamic(self):
        return any(d < 0 for d in self.shape)


def parse_attrs(text):
    attrs = {}
    text = text.strip()
    if not text:
        return attrs
    assert text[0] == "{" and text[-1] == "}", text
    for item in split_top(text[1:-1]):
        key, _, val = item.partition("=")
        key, val = key.strip(), val.strip()
        if key == "ga.batch":
            attrs[key] = int(val.split(":")[0])
        elif key == "ga.init":
            attrs[key] = val.strip('"')
        elif key == "ga.range":
            attrs[key] = [int(v.split(":")[0]) for v in val.strip("[]").split(",")]
        else:
            attrs[key] = val
    return attrs


def parse_signature(text):
    start = text.find("func.func @train_step(")
    if start < 0:
        raise ValueError("no func.func @train_step")
    lp = text.index("(", start)
    rp = matching(text, lp)
    args = []
    for a in split_top(text[lp + 1:rp]):
        m = re.fullmatch(r"%([\w$.-]+)\s*:\s*(tensor<[^>]*>|\w+)\s*(\{.*\})?", a, re.S)
        if not m:
            raise ValueError("cannot parse argument: " + a)
        args.append(dict(name=m.group(1), ty=Ty(m.group(2)),
                         attrs=parse_attrs(m.group(3) or "")))
    rest = text[rp + 1:].lstrip()
    results = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            e = matching(rest, 0)
            results = [Ty(t) for t in split_top(rest[1:e])]
        else:
            m = re.match(r"(tensor<[^>]*>|\w+)", rest)
            results = [Ty(m.group(1))]
    return args, results


# --------------------------------------------------------------------------
# Contract lint
# --------------------------------------------------------------------------
def lint(path, tools, args):
    errs = []
    p = subprocess.run([os.path.join(tools, "mlir-opt"), "--mlir-print-op-generic", path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return ["mlir-opt cannot parse: " + p.stderr.strip()[:400]]
    ops = set(re.findall(r'^\s*(?:%[^=]*=\s*)?"([\w.]+)"', p.stdout, re.M))
    for op in sorted(ops):
        if op.split(".")[0] not in ALLOWED_DIALECTS and op != "builtin.module":
            errs.append("op outside the contract: " + op)
        elif op.startswith("tensor.") and op not in ALLOWED_TENSOR_OPS:
            errs.append("tensor op outside the contract: " + op)
    if "func.call" in ops:
        errs.append("func.call is not allowed")
    nfuncs = len(re.findall(r'"func\.func"', p.stdout))
    if nfuncs != 1:
        errs.append("expected exactly one func.func, found %d" % nfuncs)
    if "sym_visibility" in p.stdout:
        errs.append("non-public symbol found: @train_step must be public, helper functions are not allowed")
    if not any("ga.batch" in a["attrs"] for a in args):
        errs.append("no argument carries ga.batch")
    return errs


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------
bf16_round = refs.bf16_round


def make_inputs(name, args, ref):
    """Seeded inputs, keyed by argument name. Floats are float32 (bf16 values
    are float32 numbers exactly representable in bf16)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    vals = {}
    for a in args:
        n, ty, at = a["name"], a["ty"], a["attrs"]
        shape = tuple(ref.shapes.get(n, ty.shape))
        if any(d < 0 for d in shape):
            raise ValueError("dynamic argument %s needs a concrete shape in refs.py" % n)
        if n in ref.fixed:
            v = np.broadcast_to(np.asarray(ref.fixed[n]), shape).copy()
        elif ty.is_float:
            init = at.get("ga.init", "normal")
            if init == "normal":
                # Parameters: ~1/sqrt(fan_in) scale; data: unit normal.
                std = 1.0
                if "ga.batch" not in at and len(shape) == 2:
                    std = 1.0 / np.sqrt(shape[0])
                elif "ga.batch" not in at:
                    std = 0.5
                v = rng.normal(0.0, std, shape)
            elif init == "uniform":
                v = rng.uniform(0.0, 1.0, shape)
            elif init == "positive":
                v = rng.uniform(0.1, 1.0, shape)
            elif init == "mask":
                v = (rng.uniform(0.0, 1.0, shape) < 0.7).astype(np.float64)
                v.reshape(-1)[0] = 1.0
            elif init == "zeros":
                v = np.zeros(shape)
            elif init == "ones":
                v = np.ones(shape)
            else:
                raise ValueError("unknown ga.init " + init)
        else:
            lo, hi = at.get("ga.range", [0, 2])
            v = rng.integers(lo, hi, shape)
        if n in ref.scales:
            v = v * ref.scales[n]
        if ty.elem == "f32":
            v = np.asarray(v, dtype=np.float32)
        elif ty.elem == "bf16":
            v = bf16_round(np.asarray(v, dtype=np.float32))
        elif ty.elem == "i64":
            v = np.asarray(v, dtype=np.int64)
        elif ty.elem == "i32":
            v = np.asarray(v, dtype=np.int32)
        vals[n] = v
    return vals


# --------------------------------------------------------------------------
# Wrapper generation and execution
# --------------------------------------------------------------------------
def tensor_type(shape, elem):
    return "tensor<" + "".join("%dx" % d for d in shape) + elem + ">"


def hex_data(v, elem):
    if elem == "bf16":
        raw = (np.asarray(v, np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
    elif elem == "f32":
        raw = np.asarray(v, "<f4").tobytes()
    elif elem == "i64":
        raw = np.asarray(v, "<i8").tobytes()
    elif elem == "i32":
        raw = np.asarray(v, "<i4").tobytes()
    else:
        raise ValueError(elem)
    return "0x" + raw.hex().upper()


def identity_map(rank):
    d = ", ".join("d%d" % i for i in range(rank))
    return "affine_map<(%s) -> (%s)>" % (d, d)


def build_wrapper(step_text, args, results, inputs, ref_outs):
    lines = [step_text, "",
             "func.func private @printMemrefI32(memref<*xi32>)",
             "func.func private @printMemrefI64(memref<*xi64>)",
             "func.func @main() {"]
    operands = []
    for i, a in enumerate(args):
        ty, v = a["ty"], inputs[a["name"]]
        if ty.tensor:
            st = tensor_type(v.shape, ty.elem)
            lines.append('  %%in%d = arith.constant dense<"%s"> : %s' % (i, hex_data(v, ty.elem), st))
            if ty.dynamic:
                lines.append("  %%in%dc = tensor.cast %%in%d : %s to %s" % (i, i, st, ty.text))
                operands.append("%%in%dc" % i)
            else:
                operands.append("%%in%d" % i)
        else:
            if ty.elem == "f32":
                lit = "0x%08X" % int(np.asarray(v, np.float32).view(np.uint32))
            elif ty.elem == "bf16":
                lit = "0x%04X" % (int(np.asarray(v, np.float32).view(np.uint32)) >> 16)
            else:
                lit = str(int(v))
            lines.append("  %%in%d = arith.constant %s : %s" % (i, lit, ty.elem))
            operands.append("%%in%d" % i)
    res_types = ", ".join(r.text for r in results)
    lines.append("  %%r:%d = func.call @train_step(%s) : (%s) -> (%s)"
                 % (len(results), ", ".join(operands), ", ".join(a["ty"].text for a in args),
                    res_types) if len(results) > 1 else
                 "  %%r0 = func.call @train_step(%s) : (%s) -> (%s)"
                 % (", ".join(operands), ", ".join(a["ty"].text for a in args), res_types))
    for k, (rt, ro) in enumerate(zip(results, ref_outs)):
        rv = "%%r#%d" % k if len(results) > 1 else "%r0"
        shape = tuple(np.shape(ro))
        if not rt.tensor:
            lines.append("  %%t%d = tensor.from_elements %s : %s" % (k, rv, tensor_type((), rt.elem)))
            rv = "%%t%d" % k
            shape = ()
        elif rt.dynamic:
            lines.append("  %%t%d = tensor.cast %s : %s to %s" % (k, rv, rt.text, tensor_type(shape, rt.elem)))
            rv = "%%t%d" % k
        st = tensor_type(shape, rt.elem)
        if rt.is_float:
            it = tensor_type(shape, "i32")
            body = "%f = arith.extf %a : bf16 to f32\n    %c = arith.bitcast %f : f32 to i32" \
                if rt.elem == "bf16" else "%c = arith.bitcast %a : f32 to i32"
            m = identity_map(len(shape))
            lines += [
                "  %%e%d = tensor.empty() : %s" % (k, it),
                "  %%b%d = linalg.generic {indexing_maps = [%s, %s], iterator_types = [%s]}"
                % (k, m, m, ", ".join(['"parallel"'] * len(shape))),
                "      ins(%s : %s) outs(%%e%d : %s) {" % (rv, st, k, it),
                "  ^bb0(%%a: %s, %%o: i32):" % rt.elem,
                "    " + body,
                "    linalg.yield %c : i32",
                "  } -> " + it,
            ]
            rv, st, pe = "%%b%d" % k, it, "i32"
        else:
            pe = rt.elem
            if pe == "i1":
                raise ValueError("i1 results are not supported")
        mt = "memref<" + "".join("%dx" % d for d in shape) + pe + ">"
        lines += [
            "  %%m%d = bufferization.to_buffer %s : %s to %s" % (k, rv, st, mt),
            "  %%u%d = memref.cast %%m%d : %s to memref<*x%s>" % (k, k, mt, pe),
            "  func.call @printMemref%s(%%u%d) : (memref<*x%s>) -> ()" % (pe.upper(), k, pe),
        ]
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def run_mlir(wrapper, tools, libdir, workdir, name):
    src = os.path.join(workdir, name + ".main.mlir")
    with open(src, "w") as f:
        f.write(wrapper)
    opt = subprocess.run([os.path.join(tools, "mlir-opt")] + PIPELINE + [src],
                         capture_output=True, text=True)
    if opt.returncode != 0:
        raise RuntimeError("mlir-opt failed (%s):\n%s" % (src, opt.stderr[:2000]))
    libs = ",".join(os.path.join(libdir, l) for l in
                    ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so"))
    run = subprocess.run([os.path.join(tools, "mlir-runner"), "-e", "main",
                          "-entry-point-result=void", "-shared-libs=" + libs],
                         input=opt.stdout, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("mlir-runner failed (%s):\n%s" % (src, run.stderr[:2000]))
    blocks = run.stdout.split("Unranked Memref")[1:]
    out = []
    for b in blocks:
        data = b.split("data =", 1)[1]
        out.append(np.array([int(t) for t in re.findall(r"-?\d+", data)], dtype=np.int64))
    return out


# --------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------
def to64(inputs):
    return {k: (v.astype(np.float64) if v.dtype.kind == "f" else v) for k, v in inputs.items()}


def fd_check(ref, inputs, rng):
    """Max normalized error between hand-derived and finite-difference gradients."""
    a = to64(inputs)
    res = ref.run(a)
    grads = res["grads"]
    f0 = ref.loss(a)
    worst = 0.0
    details = []
    # The loss the transcription returns must be the loss being differentiated.
    l_run = float(np.asarray(res["loss"], np.float64))
    worst = max(worst, abs(l_run - f0) / max(1.0, abs(f0)))
    h = 1e-6
    for p in ref.params:
        g = np.asarray(grads[p], np.float64)
        assert g.shape == a[p].shape, (p, g.shape, a[p].shape)
        scale = max(np.abs(g).max(), 1e-8)
        flat = g.reshape(-1)
        n = flat.size
        idx = set(np.argsort(-np.abs(flat))[:4].tolist())
        idx |= set(rng.choice(n, size=min(n, 6), replace=False).tolist())
        for j in sorted(idx):
            ap = dict(a)
            x = a[p].copy().reshape(-1)
            x0 = x[j]
            x[j] = x0 + h
            ap[p] = x.reshape(a[p].shape)
            fp = ref.loss(ap)
            x[j] = x0 - h
            ap[p] = x.reshape(a[p].shape)
            fm = ref.loss(ap)
            fd = (fp - fm) / (2 * h)
            err = abs(fd - flat[j]) / scale
            if err > worst:
                worst = err
                details = (p, j, fd, flat[j])
    # Directional derivatives along random directions over all params at once.
    for _ in range(3):
        v = {p: rng.normal(0, 1, a[p].shape) for p in ref.params}
        dot = sum(float((v[p] * grads[p]).sum()) for p in ref.params)
        ap, am = dict(a), dict(a)
        for p in ref.params:
            ap[p] = a[p] + h * v[p]
            am[p] = a[p] - h * v[p]
        fd = (ref.loss(ap) - ref.loss(am)) / (2 * h)
        gn = np.sqrt(sum(float((grads[p] ** 2).sum()) for p in ref.params))
        vn = np.sqrt(sum(float((v[p] ** 2).sum()) for p in ref.params))
        err = abs(fd - dot) / max(gn * vn, 1e-8)
        if err > worst:
            worst = err
            details = ("direction", fd, dot)
    return worst, details


def compare(ref, args, results, inputs, ref_outs, got, report=None):
    """Returns (max error, name of the worst result, list of failures)."""
    fails, worst, wname = [], 0.0, ""
    by_name = {a["name"]: inputs[a["name"]] for a in args}
    if len(got) != len(results):
        return float("inf"), "", ["expected %d printed results, got %d" % (len(results), len(got))]
    for k, (rt, (oname, delta_of), r, g) in enumerate(zip(results, ref.outputs, ref_outs, got)):
        r = np.asarray(r)
        if g.size != r.size:
            fails.append("%s: size %d vs %d" % (oname, g.size, r.size))
            continue
        if not rt.is_float:
            ok = np.array_equal(g.reshape(r.shape), r.astype(np.int64))
            if report is not None:
                report.append("%-18s int   %s" % (oname, "equal" if ok else "DIFFERENT"))
            if not ok:
                fails.append("%s: integer mismatch: %s vs %s" % (oname, g.reshape(r.shape), r))
            continue
        m = g.astype(np.uint32).view(np.float32).astype(np.float64).reshape(r.shape)
        r = r.astype(np.float64)
        if not np.all(np.isfinite(m)):
            fails.append("%s: non-finite values" % oname)
            continue
        tol = ref.tol
        # Elementwise relative error (floor: 1e-3 of the result's magnitude).
        scale = max(np.abs(r).max(), 1e-30)
        err = (np.abs(m - r) / np.maximum(np.abs(r), 1e-3 * scale)).max()
        if delta_of is not None:
            # Updated parameters / state: compare the updates themselves.
            base = by_name[delta_of].astype(np.float64)
            dr, dm = r - base, m - base
            derr = np.abs(dm - dr).max() / max(np.abs(dr).max(), 1e-30)
            err = max(err, derr / ref.delta_tol_factor)
        if report is not None:
            report.append("%-18s float err %.2e%s" % (oname, err, " (update compared)" if delta_of else ""))
        if err > worst:
            worst, wname = err, oname
        if err > tol:
            fails.append("%s: error %.3g > %.3g" % (oname, err, tol))
    return worst, wname, fails


def check_step(path, tools, libdir, workdir, skip_run=False, verbose=False):
    name = os.path.splitext(os.path.basename(path))[0]
    t0 = time.time()
    msgs = []
    with open(path) as f:
        text = f.read()
    try:
        args, results = parse_signature(text)
    except Exception as e:  # noqa: BLE001
        return name, False, ["signature: %s" % e], 0
    if name not in refs.REFS:
        return name, False, ["no numpy reference in refs.py"], 0
    ref = refs.REFS[name]()
    errs = lint(path, tools, args)
    if errs:
        return name, False, errs, time.time() - t0
    if len(ref.outputs) != len(results):
        return name, False, ["refs.py lists %d outputs, the step has %d results"
                             % (len(ref.outputs), len(results))], time.time() - t0
    inputs = make_inputs(name, args, ref)
    rng = np.random.default_rng(1234)
    ok = True
    fd_err, det = fd_check(ref, inputs, rng)
    if fd_err > ref.fd_tol:
        ok = False
        msgs.append("gradient check failed: %.3g %s" % (fd_err, det))
    ref_outs = ref.run({k: v.copy() for k, v in inputs.items()})["outputs"]
    cmp_err, wname = 0.0, ""
    if not skip_run:
        try:
            got = run_mlir(build_wrapper(text, args, results, inputs, ref_outs),
                           tools, libdir, workdir, name)
            report = [] if verbose else None
            cmp_err, wname, fails = compare(ref, args, results, inputs, ref_outs, got, report)
            if verbose:
                msgs += report
            if fails:
                ok = False
                msgs += fails
        except RuntimeError as e:
            ok = False
            msgs.append(str(e))
    msgs.insert(0, "fd-grad err %.2e | mlir-vs-numpy err %.2e (%s, tol %.0e)"
                % (fd_err, cmp_err, wname or "-", ref.tol))
    return name, ok, msgs, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", required=True, help="folder of <name>.mlir training steps")
    ap.add_argument("--tools", required=True, help="folder holding mlir-opt and mlir-runner")
    ap.add_argument("--libdir", default=None,
                    help="folder of libmlir_(c_)runner_utils.so (default: <tools>/../lib)")
    ap.add_argument("--only", action="append", default=[], help="check only these steps")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", default=None, help="keep the generated wrappers in this folder")
    ap.add_argument("--no-run", action="store_true", help="gradient checks only")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the error of every result")
    opts = ap.parse_args()
    libdir = opts.libdir or os.path.join(os.path.dirname(os.path.abspath(opts.tools)), "lib")
    paths = sorted(os.path.join(opts.steps, f) for f in os.listdir(opts.steps) if f.endswith(".mlir"))
    if opts.only:
        paths = [p for p in paths if os.path.splitext(os.path.basename(p))[0] in opts.only]
    if not paths:
        print("no steps found")
        return 1
    missing = sorted(set(refs.REFS) - {os.path.splitext(os.path.basename(p))[0] for p in paths})
    tmp = None
    if opts.keep:
        workdir = opts.keep
        os.makedirs(workdir, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="ga-corpus-")
        workdir = tmp.name
    nfail = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as ex:
        futs = [ex.submit(check_step, p, opts.tools, libdir, workdir, opts.no_run, opts.verbose)
                for p in paths]
        for fut in futs:
            name, ok, msgs, dt = fut.result()
            nfail += not ok
            print("%s %-20s %5.2fs  %s" % ("PASS" if ok else "FAIL", name, dt, msgs[0] if msgs else ""))
            for m in msgs[1:]:
                print("    " + m.replace("\n", "\n    "))
            sys.stdout.flush()
    if tmp is not None:
        tmp.cleanup()
    if missing and not opts.only:
        print("note: references without a step file: " + ", ".join(missing))
    print("%d steps, %d failed" % (len(paths), nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
