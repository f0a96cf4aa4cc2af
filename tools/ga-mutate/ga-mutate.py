#!/usr/bin/python3
"""ga-mutate: mutation fuzzer of the whole ga-opt pipeline (no crash on any input).

Mutates the training steps of the test suite (tokens, constants, types,
attributes, affine maps, lines; see mutate.py), keeps the mutants that
upstream `mlir-opt-22` parses and verifies, and runs ga-opt's entry points on
each: `--ga-accumulate`, `--ga-check-training-step`, `--ga-lower-to-cpu` and
`--ga-lower-to-nvvm` (the latter two after the rewrite when it succeeds, on the
mutant itself otherwise). Every run must end in

  result     exit 0
  refused    exit 1 with an `error:` located at a line:col of the mutant, or
             at a source location that the mutant's ops carry (loc("model.py":24:0):
             the user's line that a diagnostic at a line-less op names)

and anything else is a finding:

  crash      a signal, an assertion, "PLEASE submit a bug report", "LLVM
             ERROR", another exit code, or a timeout (`--timeout`)
  unlocated  exit 1 without an error located in the mutant
  dump       exit 1 with the IR printed (a module on stdout, "see current
             operation" in the diagnostics)

A crash is `upstream` instead when `mlir-opt-22` crashes on the same file (the
linalg.reduce parser does on some inputs); those are counted, not findings.
Mutant I of seed S is drawn from its own random stream (`--mutant S:I`
regenerates it), so runs are deterministic for a fixed seed and count;
`--minutes` bounds the time instead. Findings are saved under `--findings`
and reduced (`--reduce`) with a line-deleting reducer that keeps the file
valid for mlir-opt-22 and failing the same way.

Usage:
  ga-mutate.py --bin build/bin --seed 1 --mutants 300 --expect-clean   # bounded
  ga-mutate.py --bin build/bin --seed 7 --minutes 60 --findings DIR --reduce
  ga-mutate.py --mutant 7:1234 --print > m.mlir                       # one mutant
"""

import argparse
import glob
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CRASH_MARKERS = ("PLEASE submit a bug report", "Assertion", "Stack dump", "LLVM ERROR",
                 "UNREACHABLE", "Segmentation fault", "AddressSanitizer",
                 "runtime error:", "terminate called")
# A diagnostic line `file:line:col: error: ` (the file name stops at a newline:
# a caret line "^" before it must not be taken for the start of a name).
LOC_RE = re.compile(r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?P<col>\d+): error: ", re.M)
# Stack frames of project code (ga-opt's passes, analyses and pipelines).
GA_FRAME_RE = re.compile(r"mlir::ga::|/lib/(Analysis|Transforms|Pipelines|Codegen|Conversion|"
                         r"Utils|IR)/")
FINDINGS = ("crash", "unlocated", "dump")


# --------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------

def load_corpus(root):
    """The training steps of the test suite: every `// -----` chunk of a test
    .mlir file that has a `ga.batch` argument, comments dropped, sorted by
    path so that a seed always means the same mutants."""
    paths = sorted(set(glob.glob(os.path.join(root, "test", "**", "*.mlir"), recursive=True)))
    corpus = []
    for path in paths:
        with open(path) as f:
            text = f.read()
        for k, chunk in enumerate(re.split(r"^// -----\s*$", text, flags=re.M)):
            # Steps with ga ops are not for mlir-opt-22 (the gate).
            if "ga.batch" not in chunk or re.search(r"\bga\.[a-z_]+\b(?! =)", chunk):
                continue
            lines = [l for l in chunk.split("\n") if not l.lstrip().startswith("//")]
            while lines and not lines[0].strip():
                lines.pop(0)
            corpus.append(("%s#%d" % (os.path.relpath(path, root), k), lines))
    return corpus


def make_mutant(corpus, seed, index):
    """(source name, text, descriptions, options) of mutant `index`."""
    digest = hashlib.sha256(("%d:%d" % (seed, index)).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "little"))
    name, lines = corpus[rng.randrange(len(corpus))]
    count = rng.choices((1, 2, 3), (6, 3, 1))[0]
    lines, what = mutate.mutate(rng, lines, count)
    options = draw_options(rng)
    return name, "\n".join(lines) + "\n", what, options


# Option values the pipelines read (OPTION_EDITS: pipeline -> [(option,
# values)]): out of range, zero, negative, huge. Drawn for one mutant in
# OPTION_RATE; a refusal of one is an error that names no line of the file.
OPTION_RATE = 0.1
WEIRD_INTS = ("0", "-1", "-7", "3", "33", "1000", "2147483648", "4294967295",
              "9223372036854775807", "99999999999999999999", "x")
OPTION_EDITS = {
    "accumulate": [("micro-batches", WEIRD_INTS), ("micro-batch-size", WEIRD_INTS),
                   ("max-memory", ("0", "-1", "1x", "10GB", "1e400", "99999999999TB"))],
    "cpu": [("vector-width", WEIRD_INTS), ("num-threads", WEIRD_INTS)],
    "nvvm": [("block-size", WEIRD_INTS), ("gemm-tile", WEIRD_INTS)],
}


def draw_options(rng):
    """{'n': micro-batches, pipeline: extra option or ''}: usually plain."""
    options = {"n": rng.choice((1, 2, 3, 4))}
    for pipeline in sorted(OPTION_EDITS):
        options[pipeline] = ""
        if rng.random() < OPTION_RATE:
            name, values = rng.choice(OPTION_EDITS[pipeline])
            options[pipeline] = "%s=%s" % (name, rng.choice(values))
    return options


# --------------------------------------------------------------------------
# Running and classifying
# --------------------------------------------------------------------------

def run(cmd, timeout):
    """(returncode or 'timeout', stdout, stderr); a negative code is a signal."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           errors="replace")
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def is_crash(rc, err):
    return rc == "timeout" or rc not in (0, 1) or any(m in err for m in CRASH_MARKERS)


def classify(rc, out, err, path):
    """result / refused / crash / unlocated / dump, and a one-line reason."""
    if is_crash(rc, err):
        if rc == "timeout":
            return "crash", "timeout"
        first = next((l for l in err.splitlines() if any(m in l for m in CRASH_MARKERS)),
                     "exit code %s" % rc)
        return "crash", first.strip()[:200]
    if rc == 0:
        return "result", ""
    if "see current operation" in err or re.search(r"^\s*(module|func\.func)\b", out, re.M):
        return "dump", "IR printed on error"
    with open(path) as f:
        text = f.read()
    for m in LOC_RE.finditer(err):
        if os.path.abspath(m.group("file")) == os.path.abspath(path):
            return "refused", ""
        # The nearest user line of a line-less op (ga/Analysis/UserLocation.h):
        # a location the input itself names.
        if re.search(r'loc\("%s":%s:' % (re.escape(m.group("file")), m.group("line")),
                     text):
            return "refused", ""
    first = next((l for l in err.splitlines() if "error" in l), err.strip()[:200])
    return "unlocated", first.strip()[:200]


def crash_signature(err):
    """The first frames of the stack dump in project code, else the message:
    two crashes with one signature are one bug."""
    frames = [l for l in err.splitlines() if re.match(r"\s*#\d+ ", l)]
    ga = [re.sub(r"^\s*#\d+ 0x[0-9a-f]+ ", "", f) for f in frames if GA_FRAME_RE.search(f)]
    if ga:
        return re.sub(r"\s+\(.*$|\+0x[0-9a-f]+", "", ga[0])[:160]
    first = next((l for l in err.splitlines() if any(m in l for m in CRASH_MARKERS)), "")
    return first.strip()[:160]


class Tools:
    def __init__(self, bindir, mlir_opt, timeout):
        self.opt = os.path.join(bindir, "ga-opt")
        self.mlir_opt = mlir_opt
        self.timeout = timeout

    def pipelines(self, options):
        """The runs of a mutant: (name, ga-opt arguments, whether an option
        was edited). The lowerings run after the rewrite, as in the tests."""
        def join(*parts):
            return " ".join(p for p in parts if p)
        acc = "--ga-accumulate=" + join("micro-batches=%d" % options["n"],
                                        options["accumulate"])
        plain = "--ga-accumulate=micro-batches=%d" % options["n"]
        return [
            ("accumulate", [acc], bool(options["accumulate"])),
            ("check", ["--ga-check-training-step=micro-batches=%d" % options["n"]], False),
            ("cpu", [plain, "--ga-lower-to-cpu" + ("=" + options["cpu"] if options["cpu"]
                                                    else "")], bool(options["cpu"])),
            ("nvvm", [plain, "--ga-lower-to-nvvm=" + join("chip=sm_90 format=isa",
                                                           options["nvvm"])],
             bool(options["nvvm"])),
        ]

    def crashes_upstream_too(self, path, argv, tmp):
        """Whether the pass that crashed is upstream's and mlir-opt-22 crashes
        on its input too: ga-opt writes the IR before the crashing pass and
        that pass alone (a local crash reproducer); mlir-opt-22 runs it. A
        project pass is unknown to mlir-opt-22 (no crash there): ga's."""
        repro = os.path.join(tmp, "repro.mlir")
        run([self.opt, path] + argv + [
            "--mlir-disable-threading", "--mlir-pass-pipeline-local-reproducer",
            "--mlir-pass-pipeline-crash-reproducer=" + repro, "-o", os.devnull], self.timeout)
        if not os.path.exists(repro):
            return False
        rc, _, err = run([self.mlir_opt, "--run-reproducer", repro, "-o", os.devnull],
                         self.timeout)
        return is_crash(rc, err) and rc != "timeout"

    def upstream_accepts(self, path):
        """'ok', 'invalid' or 'crash' of mlir-opt-22 on the file."""
        rc, _, err = run([self.mlir_opt, path, "-o", os.devnull], self.timeout)
        if is_crash(rc, err):
            return "crash"
        return "ok" if rc == 0 else "invalid"


def check_mutant(args):
    """Runs one mutant; returns a dict of its outcome (for the pool)."""
    tools, corpus, seed, index, keep_dir = args
    name, text, what, options = make_mutant(corpus, seed, index)
    outcome = {"index": index, "source": name, "what": what, "runs": {}}
    tmp = tempfile.mkdtemp(prefix="ga-mutate-")
    try:
        path = os.path.join(tmp, "m%d.mlir" % index)
        with open(path, "w") as f:
            f.write(text)
        upstream = tools.upstream_accepts(path)
        outcome["upstream"] = upstream
        if upstream != "ok":
            return outcome
        for run_name, argv, edited in tools.pipelines(options):
            if run_name in ("cpu", "nvvm") and \
                    outcome["runs"]["accumulate"][0] not in ("result", "option-refused"):
                # The rewrite refused the step: lower the step itself (the
                # tests lower full-batch steps too).
                argv = argv[1:]
            rc, out, err = run([tools.opt, path] + argv, tools.timeout)
            kind, why = classify(rc, out, err, path)
            if kind == "unlocated" and edited:
                # An option value refused (by the option parser, before the
                # file is read, or by the pipeline): no line to point at.
                kind = "option-refused"
            if kind == "crash" and rc != "timeout" and \
                    tools.crashes_upstream_too(path, argv, tmp):
                kind = "upstream"
            outcome["runs"][run_name] = (kind, why, " ".join(argv),
                                         crash_signature(err) if kind == "crash" else "")
            if kind in FINDINGS and keep_dir:
                os.makedirs(keep_dir, exist_ok=True)
                base = os.path.join(keep_dir, "s%d-m%d-%s" % (seed, index, run_name))
                with open(base + ".mlir", "w") as f:
                    f.write("// ga-mutate finding: %s (%s)\n// source: %s; mutations: %s\n"
                            "// RUN: ga-opt %%s %s\n" % (kind, why, name, "; ".join(what),
                                                         " ".join("'%s'" % a for a in argv)))
                    f.write(text)
                with open(base + ".log", "w") as f:
                    f.write(err[-20000:])
        return outcome
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# Reduction of findings
# --------------------------------------------------------------------------

def reduce_finding(tools, path, argv, kind, budget_s):
    """Deletes lines (halves, then quarters, ..., then single lines) while
    mlir-opt-22 still accepts the file and ga-opt still fails with the same
    class; writes PATH.reduced.mlir. A line reducer needs no knowledge of
    the ops and keeps the file parseable by checking every step."""
    with open(path) as f:
        lines = [l for l in f.read().split("\n") if not l.startswith("//")]
    deadline = time.time() + budget_s
    tmp = tempfile.mkdtemp(prefix="ga-reduce-")
    probe = os.path.join(tmp, "r.mlir")

    def still_fails(candidate):
        with open(probe, "w") as f:
            f.write("\n".join(candidate) + "\n")
        if tools.upstream_accepts(probe) != "ok":
            return False
        rc, out, err = run([tools.opt, probe] + argv, tools.timeout)
        return classify(rc, out, err, probe)[0] == kind

    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and time.time() < deadline:
        i, changed = 0, False
        while i < len(lines) and time.time() < deadline:
            candidate = lines[:i] + lines[i + chunk:]
            if candidate and still_fails(candidate):
                lines, changed = candidate, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    shutil.rmtree(tmp, ignore_errors=True)
    out = path[:-len(".mlir")] + ".reduced.mlir"
    with open(out, "w") as f:
        f.write("// RUN: ga-opt %%s %s\n" % " ".join("'%s'" % a for a in argv))
        f.write("\n".join(lines) + "\n")
    return out


def reduce_findings(tools, findings_dir, budget_s, limit):
    """Reduces up to `limit` saved findings not reduced yet."""
    for path in sorted(glob.glob(os.path.join(findings_dir, "*.mlir"))):
        if path.endswith(".reduced.mlir") or os.path.exists(path[:-5] + ".reduced.mlir"):
            continue
        if limit <= 0:
            break
        limit -= 1
        with open(path) as f:
            header = f.read().split("\n", 3)
        kind = header[0].split("finding: ")[1].split(" ")[0]
        argv = re.findall(r"'([^']*)'", header[2])
        out = reduce_finding(tools, path, argv, kind, budget_s)
        print("reduced %s -> %s" % (os.path.basename(path), os.path.basename(out)))


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

def find_mlir_opt(given):
    for candidate in (given, shutil.which("mlir-opt-22"), "/usr/lib/llvm-22/bin/mlir-opt"):
        if candidate and os.path.exists(candidate):
            return candidate
    sys.exit("ga-mutate: mlir-opt-22 not found (--mlir-opt)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"), help="ga-opt's folder")
    ap.add_argument("--mlir-opt", help="upstream mlir-opt (default: mlir-opt-22)")
    ap.add_argument("--root", default=ROOT, help="checkout whose test/ is the corpus")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutants", type=int, default=0, help="number of mutants (0: no limit)")
    ap.add_argument("--minutes", type=float, default=0, help="time budget (0: none)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60, help="seconds per ga-opt run")
    ap.add_argument("--findings", help="folder where findings are saved")
    ap.add_argument("--reduce", action="store_true", help="reduce saved findings at the end")
    ap.add_argument("--reduce-seconds", type=float, default=120, help="per finding")
    ap.add_argument("--reduce-max", type=int, default=10, help="findings reduced per run")
    ap.add_argument("--expect-clean", action="store_true",
                    help="exit 1 on any crash in ga code, unlocated error or dump")
    ap.add_argument("--mutant", help="S:I: print mutant I of seed S (with --print)")
    ap.add_argument("--print", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="one line per finding and upstream crash")
    args = ap.parse_args()

    corpus = load_corpus(args.root)
    if args.mutant:
        seed, index = (int(x) for x in args.mutant.split(":"))
        name, text, what, options = make_mutant(corpus, seed, index)
        sys.stdout.write("// source: %s; mutations: %s; options: %s\n%s" % (
            name, "; ".join(what), options, text))
        return 0
    if not args.mutants and not args.minutes:
        ap.error("give --mutants or --minutes")
    tools = Tools(args.bin, find_mlir_opt(args.mlir_opt), args.timeout)
    if not os.path.exists(tools.opt):
        sys.exit("ga-mutate: %s not found (--bin)" % tools.opt)

    start = time.time()
    deadline = start + args.minutes * 60 if args.minutes else None
    counts = {k: 0 for k in ("mutants", "accepted", "invalid", "upstream-parse-crash", "result",
                             "refused", "option-refused", "crash", "unlocated", "dump", "upstream")}
    signatures = {}

    def record(o):
        counts["mutants"] += 1
        if o["upstream"] == "crash":
            counts["upstream-parse-crash"] += 1
            if args.verbose:
                print("upstream parse crash: mutant %d:%d" % (args.seed, o["index"]))
            return
        if o["upstream"] == "invalid":
            counts["invalid"] += 1
            return
        counts["accepted"] += 1
        for run_name, (kind, why, argv, sig) in sorted(o["runs"].items()):
            counts[kind] += 1
            if kind == "crash":
                signatures.setdefault(sig or why, []).append("%d:%d %s" % (
                    args.seed, o["index"], run_name))
            if args.verbose and kind in FINDINGS + ("upstream",):
                print("%s: mutant %d:%d %s [%s] %s (%s)" % (
                    kind, args.seed, o["index"], run_name, argv, why, "; ".join(o["what"])))
        sys.stdout.flush()

    def tasks():
        i = 0
        while (not args.mutants or i < args.mutants) and (not deadline or time.time() < deadline):
            yield (tools, corpus, args.seed, i, args.findings)
            i += 1

    # SIGTERM (a killed long run) ends the run with the counts so far.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        if args.jobs <= 1:
            for t in tasks():
                record(check_mutant(t))
        else:
            with ProcessPoolExecutor(args.jobs) as pool:
                pending = []
                for t in tasks():
                    pending.append(pool.submit(check_mutant, t))
                    if len(pending) >= 4 * args.jobs:
                        record(pending.pop(0).result())
                for p in pending:
                    record(p.result())
    except KeyboardInterrupt:
        print("ga-mutate: interrupted; the counts below are those of the finished mutants")

    if args.reduce and args.findings and os.path.isdir(args.findings):
        reduce_findings(tools, args.findings, args.reduce_seconds, args.reduce_max)

    elapsed = time.time() - start
    print("ga-mutate: seed %d, %d corpus steps, %.0f s, %d job(s)" % (
        args.seed, len(corpus), elapsed, args.jobs))
    print("  mutants %d accepted %d invalid %d upstream-parse-crash %d" % (
        counts["mutants"], counts["accepted"], counts["invalid"], counts["upstream-parse-crash"]))
    print("  runs: result %d refused %d option-refused %d crash %d unlocated %d dump %d "
          "upstream %d" % (counts["result"], counts["refused"], counts["option-refused"],
                           counts["crash"], counts["unlocated"], counts["dump"],
                           counts["upstream"]))
    for sig, where in sorted(signatures.items()):
        print("  crash x%d: %s (first: %s)" % (len(where), sig, where[0]))
    bad = sum(counts[k] for k in FINDINGS)
    return 1 if args.expect_clean and bad else 0


if __name__ == "__main__":
    sys.exit(main())
