"""lit test format of test/Integration/CPU/corpus (see lit.local.cfg there).

Every step of test/Integration/Inputs/steps becomes several lit tests,
`corpus/<step>/N=<n>`, each one ga-verify run of the step against its
--ga-accumulate rewrite with n micro-batches: n = 1, 2, 4 and one n that does
not divide the (static) batch, or, for a dynamic batch, a prime run-time batch
of 27 with n = 4 (`corpus/<step>/N=4,B=27`). Steps in REFUSED instead get
`corpus/<step>/refused`: the pipeline must refuse them with a located error and
ga-verify must exit 1 (not crash); those also in RECOMPUTED must verify with
recompute-statistics=true (`corpus/<step>/N=4,recompute-statistics`).

A module of its own so that lit's worker processes can pickle the format.
"""
import os
import re

import lit.formats
import lit.Test
import lit.util

# Batch-coupled steps (BatchNorm statistics, in-batch contrastive loss).
REFUSED = {"batchnorm_mlp", "contrastive"}
# Coupled steps that ga-accumulate{recompute-statistics=true} makes exact.
RECOMPUTED = {"batchnorm_mlp"}

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


def variants(step, path):
    if step in REFUSED:
        runs = {"refused": ["--micro-batches=4"]}
        if step in RECOMPUTED:
            for n in (4, 5):
                runs["N=%d,recompute-statistics" % n] = [
                    "--micro-batches=%d" % n,
                    "--pipeline=ga-accumulate{micro-batches=%d recompute-statistics=true}" % n]
        return runs
    runs = {"N=%d" % n: ["--micro-batches=%d" % n] for n in (1, 2, 4)}
    batch = batch_size(path)
    if batch is None:
        # The default run-time batch 4N+3 is not a multiple of N; 27 is prime.
        runs["N=4,B=27"] = ["--micro-batches=4", "--batch-size=27"]
    else:
        remainder = next((n for n in range(3, batch) if batch % n), None)
        if remainder and remainder != 4:
            runs["N=%d" % remainder] = ["--micro-batches=%d" % remainder]
    return runs


class CorpusFormat(lit.formats.TestFormat):
    def __init__(self, steps_dir, ga_verify):
        self.steps_dir = steps_dir
        self.ga_verify = ga_verify

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

    def execute(self, test, litConfig):
        path = test.getFilePath()
        step, variant = test.path_in_suite[-2:]
        args = variants(step, path)[variant]
        # JIT at -O0: both steps compile alike, so the comparison is unchanged
        # and each test stays around a second.
        cmd = [self.ga_verify, path, "--opt-level=0"] + args
        try:
            out, err, code = lit.util.executeCommand(
                cmd, env=test.config.environment, timeout=60)
        except lit.util.ExecuteCommandTimeoutException as e:
            return lit.Test.FAIL, "$ %s\n# timed out\n%s%s" % (" ".join(cmd), e.out, e.err)
        log = "$ %s\n# exit %d\n%s%s" % (" ".join(cmd), code, out, err)
        if variant == "refused":
            expected = "ga-verify: error: the pipeline 'builtin.module(ga-accumulate{micro-batches=4})' failed"
            ok = code == 1 and expected in err and ": error: " in err.replace(expected, "")
            if not ok:
                log += "\nexpected --ga-accumulate to refuse the step with a located error (exit 1)"
            return (lit.Test.PASS if ok else lit.Test.FAIL), log
        return (lit.Test.PASS if code == 0 else lit.Test.FAIL), log
