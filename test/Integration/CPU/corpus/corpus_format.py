"""lit test format of test/Integration/CPU/corpus (see lit.local.cfg there).

Every step of test/Integration/Inputs/steps becomes several lit tests,
`corpus/<step>/N=<n>`, each one ga-verify run of the step against its
--ga-accumulate rewrite with n micro-batches: n = 1, 2, 4 and one n that does
not divide the (static) batch, or, for a dynamic batch, a prime run-time batch
of 27 with n = 4 (`corpus/<step>/N=4,B=27`). Steps in REFUSED instead get
`corpus/<step>/refused`: the pipeline must refuse them with a located error and
ga-verify must exit 1 (not crash); those also in RECOMPUTED must verify with
recompute-statistics=true (`corpus/<step>/N=4,recompute-statistics`).

The optimized lowering: every step that is not refused also gets
`corpus/<step>/optimized,N=<n>` (the same n as below): the rewrite lowered
with blas=1 vector-width=512 static-temporaries=1 (and the default
fuse-elementwise) against the step as written lowered to plain scalar loops
(vector-width=0 fuse-elementwise=0). Steps in BLAS also get
`corpus/<step>/optimized-f64,N=<n>`: the same comparison on a float64 copy of
the step (every f32 made f64). Every comparison is ga-verify's: each element
within the sum of both steps' rounding-error bounds, derived from the step
(--ga-forward-error-bound: a softmax saturated by the N(0, 1) weights of
transformer_block gets the larger bounds its amplification implies, with no
tolerance tuned per step). A rounding difference (BLAS sums in another order
than the loops) shrinks by 2^29 in float64 and so does its bound; a wrong
answer (a misread layout, a batch stride, a beta = 1 into a buffer that was
not zeroed) does not.

Ahead of time: every step that is not refused also gets
`corpus/<step>/aot,N=<n>` with the same n (the non-dividing one, else 4;
`aot,N=4,B=27` for a dynamic batch). The step as written and its rewrite are
built into libref.so and libga.so by ga-compile (tools/ga-compile: the
--ga-lower-to-cpu="c-interface=1" lowering, mlir-translate, llc, clang
-shared; memrefCopy from our libga_cpu_runtime.so, copied beside them), and
ga-verify runs both libraries (--reference-library,
--rewritten-library) on its seeded inputs instead of JIT-compiling the steps.
Steps in BLAS get the same with blas=1 for both libraries (linked with
OpenBLAS) (`aot-blas,N=<n>`); the steps in RECOMPUTED get
`aot,N=5,recompute-statistics`.

A module of its own so that lit's worker processes can pickle the format.
"""
import os
import re
import shlex
import shutil

import lit.formats
import lit.Test
import lit.TestRunner
import lit.util
from float64 import float64_copy

# Batch-coupled steps (BatchNorm statistics, in-batch contrastive loss).
REFUSED = {"batchnorm_mlp", "contrastive"}
# Coupled steps that ga-accumulate{recompute-statistics=true} makes exact.
RECOMPUTED = {"batchnorm_mlp"}
# Steps whose ahead-of-time libraries are also built with blas=1: the ones
# made of f32 GEMMs.
BLAS = {"mlp_sgd", "mlp_momentum", "mlp_adamw", "transformer_block"}

_BATCH_ARG = re.compile(r"tensor<([^>]*)>\s*\{[^}]*ga\.batch\s*=\s*(\d+)")


def batch_size(path):
    """The batch size of a step from its first `ga.batch` argument, None if
    dynamic or not found."""
    with open(path) as f:
        m = _BATCH_ARG.search(f.read())
    if not m:
        return None
    dims = m.group(1).split("x")[:-1]  # drop the element type
    d = int(m.group(2))
    if d >= len(dims) or dims[d] == "?":
        return None
    return int(dims[d])


class Run:
    """One lit test: the arguments of ga-verify and, for an ahead-of-time test,
    how its two libraries are built."""

    def __init__(self, args, accumulate=None, lower=None, link=(), f64=False):
        self.args = args  # ga-verify arguments
        self.accumulate = accumulate  # ga-accumulate options of libga.so
        self.lower = lower  # ga-lower-to-cpu options of both libraries
        self.link = list(link)  # libraries beyond -lm
        self.f64 = f64  # run on the step's float64 copy (float64_copy)

    @property
    def aot(self):
        return self.lower is not None


# The element type f32, alone or in a shape (tensor<4x8xf32>).
def _aot_run(accumulate, args, blas=False):
    """An ahead-of-time test: libga.so built with ga-accumulate{accumulate}."""
    return Run(args, accumulate=accumulate,
               lower="blas=1 c-interface=1" if blas else "c-interface=1",
               link=["-lopenblas"] if blas else [])


def variants(step, path):
    batch = batch_size(path)
    if step in REFUSED:
        runs = {"refused": Run(["--micro-batches=4"])}
        if step in RECOMPUTED:
            for n in (4, 5):
                options = "micro-batches=%d recompute-statistics=true" % n
                runs["N=%d,recompute-statistics" % n] = Run(
                    ["--micro-batches=%d" % n,
                     "--pipeline=ga-accumulate{%s}" % options])
            runs["aot,N=5,recompute-statistics"] = _aot_run(
                "micro-batches=5 recompute-statistics=true",
                ["--pipeline=ga-accumulate{micro-batches=5 "
                 "recompute-statistics=true}"])
        return runs
    runs = {"N=%d" % n: Run(["--micro-batches=%d" % n]) for n in (1, 2, 4)}
    if batch is None:
        # The default run-time batch 4N+3 is not a multiple of N; 27 is prime.
        runs["N=4,B=27"] = Run(["--micro-batches=4", "--batch-size=27"])
        aot_n, aot_name, aot_extra = 4, "N=4,B=27", ["--batch-size=27"]
    else:
        remainder = next((n for n in range(3, batch) if batch % n), None)
        if remainder and remainder != 4:
            runs["N=%d" % remainder] = Run(["--micro-batches=%d" % remainder])
        aot_n = remainder or 4
        aot_name, aot_extra = "N=%d" % aot_n, []
    # The optimized CPU lowering (vectors, fusion, static temporaries, BLAS)
    # of the rewrite against the plainest lowering of the original: scalar
    # loops, no fusion.
    optimized = ["--micro-batches=%d" % aot_n] + aot_extra + [
        "--lower-options=vector-width=0 fuse-elementwise=0",
        "--rewritten-lower-options=blas=1 vector-width=512 "
        "static-temporaries=1"]
    runs["optimized," + aot_name] = Run(optimized)
    if step in BLAS:
        runs["optimized-f64," + aot_name] = Run(optimized, f64=True)
    # Ahead of time, one N per step: the one with a remainder micro-batch.
    aot_args = ["--micro-batches=%d" % aot_n] + aot_extra
    options = "micro-batches=%d" % aot_n
    runs["aot," + aot_name] = _aot_run(options, aot_args)
    if step in BLAS:
        # BLAS and the default lowering's row sums in vector lanes round
        # in another order than the full batch's: within the derived bounds.
        runs["aot-blas," + aot_name] = _aot_run(options, aot_args, blas=True)
    return runs


class CorpusFormat(lit.formats.TestFormat):
    def __init__(self, steps_dir, ga_verify, ga_opt, mlir_translate, llc, cc,
                 mlir_lib_dir):
        self.steps_dir = steps_dir
        self.ga_verify = ga_verify
        self.ga_opt = ga_opt
        self.mlir_translate = mlir_translate
        self.llc = llc
        self.cc = cc
        self.mlir_lib_dir = mlir_lib_dir

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if not os.path.isdir(self.steps_dir):
            return
        for name in sorted(os.listdir(self.steps_dir)):
            if not name.endswith(".mlir"):
                continue
            path = os.path.join(self.steps_dir, name)
            step = name[: -len(".mlir")]
            for variant in variants(step, path):
                yield lit.Test.Test(testSuite, path_in_suite + (step, variant),
                                    localConfig, file_path=path)

    @staticmethod
    def _run(cmd, test, log):
        """Runs `cmd`, appends it and its output to `log`; the exit status and
        the output, or None on a time-out."""
        line = " ".join(shlex.quote(c) for c in cmd)
        try:
            out, err, code = lit.util.executeCommand(
                cmd, env=test.config.environment, timeout=60)
        except lit.util.ExecuteCommandTimeoutException as e:
            log.append("$ %s\n# timed out\n%s%s" % (line, e.out, e.err))
            return None
        log.append("$ %s\n# exit %d\n%s%s" % (line, code, out, err))
        return code, out, err

    def _build_library(self, test, path, tmp, name, accumulate, run, log):
        """ga-compile: the step (rewritten with ga-accumulate{accumulate}
        unless None) to lib<name>.so. Its path, or None if it failed."""
        lib = os.path.join(tmp, "lib" + name + ".so")
        cmd = [os.path.join(os.path.dirname(self.ga_opt), "ga-compile"), path,
               "--lower-options=" + run.lower, "-o", lib]
        if accumulate:
            cmd.append("--accumulate=" + accumulate)
        result = self._run(cmd, test, log)
        if result is None or result[0] != 0:
            return None
        return lib

    def _execute_aot(self, test, path, run):
        features = test.config.available_features
        if "clang" not in features:
            return lit.Test.UNSUPPORTED, "no clang next to llc (%s)" % self.cc
        missing = [t for t in (self.mlir_translate, self.llc) if not os.path.exists(t)]
        if missing:
            return lit.Test.UNSUPPORTED, "missing: %s" % ", ".join(missing)
        if "-lopenblas" in run.link and "openblas" not in features:
            return lit.Test.UNSUPPORTED, "no libopenblas.so to link (libopenblas-dev)"
        _, tmp_base = lit.TestRunner.getTempPaths(test)
        tmp = tmp_base + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        log = []
        libref = self._build_library(test, path, tmp, "ref", None, run, log)
        if not libref:
            return lit.Test.FAIL, "\n".join(log)
        libga = self._build_library(test, path, tmp, "ga", run.accumulate, run, log)
        if not libga:
            return lit.Test.FAIL, "\n".join(log)
        cmd = [self.ga_verify, path, "--opt-level=0"] + run.args + [
            "--reference-library=" + libref, "--rewritten-library=" + libga]
        result = self._run(cmd, test, log)
        # Both steps must have come from the libraries, not from the JIT.
        ok = (result is not None and result[0] == 0 and
              "reference step: ahead-of-time library" in result[1] and
              "rewritten step: ahead-of-time library" in result[1])
        return (lit.Test.PASS if ok else lit.Test.FAIL), "\n".join(log)

    def execute(self, test, litConfig):
        path = test.getFilePath()
        step, variant = test.path_in_suite[-2:]
        run = variants(step, path)[variant]
        if run.aot:
            return self._execute_aot(test, path, run)
        # JIT at -O0: both steps compile alike, so the comparison is unchanged
        # and each test stays around a second.
        log = []
        if run.f64:
            _, tmp_base = lit.TestRunner.getTempPaths(test)
            path = tmp_base + ".f64.mlir"
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(test.getFilePath()) as src, open(path, "w") as dst:
                dst.write(float64_copy(src.read()))
        result = self._run([self.ga_verify, path, "--opt-level=0"] + run.args,
                           test, log)
        if result is None:
            return lit.Test.FAIL, log[0]
        code, _, err = result
        log = log[0]
        if variant == "refused":
            expected = "ga-verify: error: the pipeline 'builtin.module(ga-accumulate{micro-batches=4})' failed"
            ok = code == 1 and expected in err and ": error: " in err.replace(expected, "")
            if not ok:
                log += "\nexpected --ga-accumulate to refuse the step with a located error (exit 1)"
            return (lit.Test.PASS if ok else lit.Test.FAIL), log
        return (lit.Test.PASS if code == 0 else lit.Test.FAIL), log
