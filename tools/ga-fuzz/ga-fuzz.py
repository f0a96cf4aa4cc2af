#!/usr/bin/python3
"""ga-fuzz: differential fuzzer of --ga-accumulate.

Generates random training steps (gen.py), checks each with ga-opt alone (a
generator bug is not a finding), runs --ga-accumulate with a random N and
classifies the answer:

  accepted   exit 0; then ga-verify runs the full-batch and the rewritten step
             on several seeded inputs and every result must match
  refused    exit 1 with an `error:` located at a line:col of the input
  finding    a mismatch, an unlocated refusal, invalid IR (the rewritten module
             of every accepted step is verified on its own), a crash (signal, assertion,
             "PLEASE submit a bug report", another exit code) or a timeout

Usage:
  ga-fuzz.py --bin build/bin --cases 40 --seed 1           # bounded: exit 1 on a finding
  ga-fuzz.py --bin build/bin --minutes 60 --findings DIR   # long mode, counts at the end
  ga-fuzz.py --bin build/bin --case 1:17 --print           # one case's module
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402
import reduce as reducer  # noqa: E402

CRASH_MARKERS = ("PLEASE submit a bug report", "Assertion", "Stack dump", "LLVM ERROR",
                 "UNREACHABLE", "Segmentation fault")


STATS = {"max_ratio": 0.0}   # largest error / tolerance among matching results
STATS_LOCK = threading.Lock()
SEEN = {}   # lowering failure message -> count


def run(cmd, timeout):
    """(returncode or 'timeout', stdout, stderr)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return "timeout", out, err


# The file part stops at the end of its line: a caret line ("^") of an
# earlier diagnostic must not join the next line into one "file" name.
LOC_RE = re.compile(r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$", re.M)


def located_error(stderr, path, nlines):
    """The first `error:` of stderr if it is located at a line:col of path."""
    for m in LOC_RE.finditer(stderr):
        if os.path.abspath(m.group("file")) == os.path.abspath(path) and \
                1 <= int(m.group("line")) <= nlines and int(m.group("col")) >= 1:
            return m.group(0)
    return None


def is_crash(rc, text):
    if rc == "timeout":
        return True
    if rc not in (0, 1):
        return True
    return any(m in text for m in CRASH_MARKERS)


class Tools:
    def __init__(self, bindir, timeout, pass_options=""):
        self.pass_options = pass_options
        self.opt = os.path.join(bindir, "ga-opt")
        self.verify = os.path.join(bindir, "ga-verify")
        self.timeout = timeout
        # A ga-verify with --seeds compiles once for several input sets.
        try:
            helptext = subprocess.run([self.verify, "--help"], capture_output=True, text=True,
                                      timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            helptext = ""
        self.multi_seed = "--seeds=" in helptext

    def validate(self, path):
        return run([self.opt, path, "-o", os.devnull], self.timeout)

    def options(self, step):
        return " ".join(o for o in (step.pass_options, self.pass_options) if o)

    def accumulate(self, path, step):
        """--ga-accumulate with the verifier off, the rewritten module kept in
        path + '.out.mlir': the verifier runs on it separately (verify_ir),
        so that invalid IR is a finding of its own, never a 'refusal'."""
        return run([self.opt, path, "--ga-accumulate=micro-batches=%d %s" % (
            step.micro_batches, self.options(step)), "--verify-each=0",
            "-o", path + ".out.mlir"], self.timeout)

    def verify_ir(self, path):
        """Parses and verifies the rewritten module of `path`."""
        return run([self.opt, path + ".out.mlir", "-o", os.devnull], self.timeout)

    def verify_cmd(self, path, step, seed, nseeds=1):
        # ga-verify's own tolerance: each element against the rounding-error
        # bound derived from the step (--ga-forward-error-bound), the rule
        # of every float comparison of the suite.
        cmd = [self.verify, path, "--micro-batches=%d" % step.micro_batches, "--seed=%d" % seed]
        if self.multi_seed:
            cmd.append("--seeds=%d" % nseeds)
        cmd.append("--json")
        if self.options(step):
            cmd.append("--pipeline=ga-accumulate{micro-batches=%d %s}" % (
                step.micro_batches, self.options(step)))
        if step.dynamic:
            cmd.append("--batch-size=%d" % step.batch)
        return cmd


def classify(tools, path, step, nseeds, seed_base):
    """Returns (outcome, detail) with outcome in
    accepted / refused / mismatch / crash / unlocated / invalid."""
    nlines = step.text.count("\n")
    rc, out, err = tools.validate(path)
    if rc != 0:
        return "invalid", "ga-opt alone: rc=%s\n%s" % (rc, err[-3000:])
    rc, out, err = tools.accumulate(path, step)
    if is_crash(rc, err):
        return "crash", "ga-opt --ga-accumulate='micro-batches=%d %s': rc=%s\n%s" % (
            step.micro_batches, tools.options(step), rc, err[-3000:])
    if rc == 1 and ("internal error" in err or "does not dominate" in err):
        return "invalid_ir", "ga-opt --ga-accumulate='micro-batches=%d %s' produced invalid IR:\n%s" % (
            step.micro_batches, tools.options(step), err[-3000:])
    if rc == 1:
        loc = located_error(err, path, nlines)
        if loc is None:
            return "unlocated", "refused without a located error:\n%s" % err[-3000:]
        return "refused", loc
    rc, out, err = tools.verify_ir(path)
    if rc != 0:
        return "invalid_ir", "the module after --ga-accumulate='micro-batches=%d %s' fails the " \
            "verifier: rc=%s\n%s" % (step.micro_batches, tools.options(step), rc, err[-3000:])
    lowering = None  # a lowering failure that scalar loops avoided
    # One ga-verify run for all seeds where it can, else one per seed.
    runs = [(seed_base, nseeds)] if tools.multi_seed else [(seed_base + k, 1) for k in range(nseeds)]
    for seed, count in runs:
        cmd = tools.verify_cmd(path, step, seed, count)
        for attempt in range(2):
            rc, out, err = run(cmd, tools.timeout * 4)
            if rc == "timeout":
                return "crash", "ga-verify timed out: %s" % " ".join(cmd)
            try:
                doc = json.loads(out)
            except ValueError:
                return "crash", "ga-verify rc=%s, no JSON: %s\n%s" % (rc, " ".join(cmd), err[-3000:])
            e = doc.get("error", "")
            if "lowering" not in e or "crash" in e:
                break
            # ga-lower-to-cpu failed on one of the steps: a finding of the CPU
            # lowering. Compare with scalar loops (no vectorization) if that works.
            failed = "%s\nerror: %s\n%s" % (" ".join(cmd), e, err[-2000:])
            if attempt == 1:
                return "lowering", lowering + "\nand with vector-width=0:\n" + failed
            lowering = failed
            cmd = cmd + ["--lower-options=vector-width=0"]
        if doc.get("pass"):
            for r in doc.get("results", []):
                ratio = r.get("error_over_tolerance")
                if ratio is not None:
                    with STATS_LOCK:
                        STATS["max_ratio"] = max(STATS["max_ratio"], ratio)
            continue
        if "crash" in e or any(m in err for m in CRASH_MARKERS):
            return "crash", "%s\n%s\n%s" % (" ".join(cmd), e, err[-2000:])
        bad = [r for r in doc.get("results", []) if r.get("status") != "PASS"]
        if bad and "seed" in bad[0] and count > 1:
            # Name the failing input set in the reproducing command.
            cmd = [c for c in cmd if not c.startswith("--seed")]
            cmd[3:3] = ["--seed=%d" % bad[0]["seed"], "--seeds=1"]
        if e and not bad:
            # NaN/Inf in the reference is a generator problem; any other
            # error about the rewritten step is a finding.
            if "reference" in e and "rewritten" not in e:
                return "invalid", "ga-verify: %s" % e
            return "mismatch", "%s\nerror: %s" % (" ".join(cmd), e)
        return "mismatch", "%s\n%s" % (" ".join(cmd), json.dumps(bad, indent=1)[:3000])
    if lowering:
        return "lowering", lowering + "\n(the steps match with --lower-options=vector-width=0)"
    return "accepted", ""


def case_seed(seed, i):
    return seed * 1000003 + i


def save_finding(folder, name, step, outcome, detail, note, tmp_path):
    """Writes the step with a header saying how to reproduce it and what went wrong."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".mlir")
    detail = detail.replace(tmp_path, path)
    hdr = ["// ga-fuzz finding: %s (%s)" % (outcome, name),
           "// batch %d%s, micro-batches %d; features of the generated case: %s" % (
               step.batch, " (dynamic: --batch-size=%d)" % step.batch if step.dynamic else "",
               step.micro_batches, " ".join(sorted(step.features))),
           "// regenerate: %s%s" % (note, " --disable " + ",".join(step.disabled)
                                    if getattr(step, "disabled", None) else ""),
           "// (then reduced: results dropped, dead code removed)" if getattr(step, "disabled", None)
           is not None else "//",
           "// check: ga-opt FILE --ga-accumulate='micro-batches=%d %s'" % (
               step.micro_batches, step.pass_options),
           "// ga-fuzz-case: micro-batches=%d batch=%d dynamic=%d red-len=%d options=%s" % (
               step.micro_batches, step.batch, step.dynamic, step.red_len,
               step.pass_options.replace(" ", ";"))]
    hdr += ["// " + l for l in detail.strip().splitlines()[:40]]
    with open(path, "w") as f:
        f.write("\n".join(hdr) + "\n" + step.text)
    return path


CASE_RE = re.compile(r"^// ga-fuzz-case: micro-batches=(\d+) batch=(\d+) dynamic=(\d) red-len=(\d+)"
                     r"(?: options=(\S*))?$", re.M)


def replay(tools, paths, nseeds):
    """Classifies saved findings again (a regression set); returns the number still failing."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".mlir"))
        else:
            files.append(p)
    failing = 0
    for path in files:
        with open(path) as f:
            text = f.read()
        m = CASE_RE.search(text)
        if not m:
            print("skipped   %s (no ga-fuzz-case line)" % path)
            continue
        st = gen.Step()
        st.text = text
        st.micro_batches, st.batch, st.dynamic, st.red_len = (int(g) for g in m.groups()[:4])
        # Options are separated by ';' (by ',' before an option name in older
        # findings: batch-args=0:0,2:0 has commas of its own).
        opts = m.group(5) or ""
        st.pass_options = opts.replace(";", " ") if ";" in opts else \
            re.sub(r",(?=[a-z][a-z-]*=)", " ", opts)
        outcome, detail = classify(tools, path, st, nseeds, 0)
        bad = outcome not in ("accepted", "refused")
        failing += bad
        print("%-9s %s  %s" % (outcome.upper() if bad else outcome, path,
                               detail.splitlines()[0] if detail else ""), flush=True)
    print("ga-fuzz replay: %d files, %d still failing" % (len(files), failing))
    return failing


def parse_args():
    """The command line; returns (the parser, for its error(), and the arguments)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/bin", help="folder of ga-opt and ga-verify")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=None, help="number of cases (bounded mode)")
    ap.add_argument("--minutes", type=float, default=None, help="run for this long (long mode)")
    ap.add_argument("--first", type=int, default=0, help="index of the first case")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--verify-seeds", type=int, default=3, help="ga-verify seeds per accepted step")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per ga-opt run (ga-verify: 4x)")
    ap.add_argument("--findings", default=None, help="folder for findings (.mlir with a header)")
    ap.add_argument("--reduce", action="store_true", help="minimise findings before saving them")
    ap.add_argument("--case", default=None, help="SEED:INDEX: run (or --print) one case")
    ap.add_argument("--replay", nargs="+", default=None, metavar="PATH",
                    help="classify saved findings (files or folders) again instead of generating")
    ap.add_argument("--print", action="store_true", help="print the module of --case and exit")
    ap.add_argument("--force", default="", help="comma-separated features to force on")
    ap.add_argument("--disable", default="", help="comma-separated features to force off")
    ap.add_argument("--pass-options", default="",
                    help="more ga-accumulate options (allow-ghost-batch=true: the self-test of the oracle)")
    ap.add_argument("--expect-clean", action="store_true",
                    help="exit 1 on any finding (the bounded lit test)")
    ap.add_argument("-v", "--verbose", action="store_true")
    return ap, ap.parse_args()


class Campaign:
    """A bounded (a list of case indices) or timed (until the deadline) run
    of generated cases on `--jobs` threads: the counts per outcome and per
    feature, the findings (reduced and saved on request) and the refusals of
    steps without a coupled feature (listed for triage)."""

    def __init__(self, args, tools, force, disable, indices):
        self.args = args
        self.tools = tools
        self.force = force
        self.disable = disable
        self.indices = indices     # None: until --minutes run out
        self.work = tempfile.mkdtemp(prefix="ga-fuzz-")
        self.counts = {k: 0 for k in ("generated", "accepted", "refused", "mismatch", "crash", "unlocated",
                                      "lowering", "invalid", "invalid_ir", "refused_exact")}
        self.by_feature = {}
        self.lock = threading.Lock()
        self.deadline = time.time() + args.minutes * 60 if args.minutes else None
        self.failures = []
        self.exact_refusals = []
        self.next_index = args.first

    def note_for(self, i):
        """The command that regenerates case i."""
        args = self.args
        return "tools/ga-fuzz/ga-fuzz.py --case %d:%d --print%s%s" % (
            args.seed, i, " --force " + ",".join(self.force) if self.force else "",
            " --pass-options '%s'" % args.pass_options if args.pass_options else "")

    def one(self, i):
        """Generates, classifies and records case i; returns its outcome."""
        args = self.args
        cs = case_seed(args.seed, i)
        st = gen.generate(cs, self.force, self.disable)
        name = "s%d-c%d" % (args.seed, i)
        path = os.path.join(self.work, name + ".mlir")
        with open(path, "w") as f:
            f.write(st.text)
        outcome, detail = classify(self.tools, path, st, args.verify_seeds, cs % 100000)
        exact_refused = outcome == "refused" and not (st.features & gen.COUPLING)
        self.record(i, name, st, outcome, detail, exact_refused)
        if outcome not in ("accepted", "refused"):
            if self.finding(i, name, path, cs, st, outcome, detail) == "repeat":
                return outcome
        elif args.verbose:
            print("%-9s %s  N=%d %s" % (outcome + ("(exact)" if exact_refused else ""), name, st.micro_batches,
                                        detail.splitlines()[0] if detail else ""), flush=True)
        else:
            os.unlink(path)
        if os.path.exists(path + ".out.mlir"):
            os.unlink(path + ".out.mlir")
        return outcome

    def record(self, i, name, st, outcome, detail, exact_refused):
        """Counts the outcome, overall and for each feature of the step."""
        counts = self.counts
        with self.lock:
            if exact_refused:
                # Refusals the generator did not ask for: conservative
                # answers of the analysis, listed for triage.
                self.exact_refusals.append("%s  %s  %s" % (name, detail, self.note_for(i)))
            counts["generated"] += 1
            counts[outcome] += 1
            counts["refused_exact"] += exact_refused
            for feat in st.features:
                row = self.by_feature.setdefault(feat, {k: 0 for k in counts})
                row["generated"] += 1
                row[outcome] += 1
                row["refused_exact"] += exact_refused

    def finding(self, i, name, path, cs, st, outcome, detail):
        """Reduces (--reduce) and saves (--findings) a finding; returns
        "repeat" for a lowering failure whose message was saved twice
        already (only counted)."""
        args = self.args
        note = self.note_for(i)
        tmp_path = path
        # Lowering failures repeat: keep the first two of each message.
        sig = None
        if outcome == "lowering":
            msg = re.findall(r"error: (.*)", detail)
            sig = re.sub(r"[%#]\w+|\d+", "N", " | ".join(msg[1:3]))
            with self.lock:
                SEEN[sig] = SEEN.get(sig, 0) + 1
                dup = SEEN[sig] > 2
            if dup:
                with self.lock:
                    self.failures.append((name, outcome, path, "(repeat of a saved lowering failure)"))
                print("%-9s %s  (repeat)" % (outcome.upper(), name), flush=True)
                return "repeat"
        if outcome != "invalid" and args.reduce:
            tmp_path = os.path.join(self.work, name + "-red.mlir")
            st, detail = reducer.reduce(self.tools, st, outcome, detail, self.work, name, classify,
                                        args.verify_seeds, cs % 100000, case_seed=cs,
                                        force=self.force, disable=self.disable)
        if args.findings:
            saved = save_finding(args.findings, "%s-%s" % (outcome, name), st, outcome, detail, note,
                                 tmp_path)
        else:
            saved = path
        with self.lock:
            self.failures.append((name, outcome, saved, detail.splitlines()[0] if detail else ""))
        print("%-9s %s  %s" % (outcome.upper(), name, saved), flush=True)
        return None

    def next_case(self):
        """The next case index, or None when the list or the time is over."""
        with self.lock:
            if self.indices is not None:
                if self.next_index - self.args.first >= len(self.indices):
                    return None
                i = self.indices[self.next_index - self.args.first]
            else:
                if time.time() > self.deadline:
                    return None
                i = self.next_index
            self.next_index += 1
            return i

    def worker(self):
        while True:
            i = self.next_case()
            if i is None:
                return
            self.one(i)

    def run(self):
        """Runs every case on the worker threads; returns the seconds taken."""
        args = self.args
        t0 = time.time()
        threads = [threading.Thread(target=self.worker) for _ in range(args.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        dt = time.time() - t0
        if args.findings and self.exact_refusals:
            os.makedirs(args.findings, exist_ok=True)
            with open(os.path.join(args.findings, "refused-without-coupling.txt"), "w") as f:
                f.write("\n".join(sorted(self.exact_refusals)) + "\n")
        return dt

    def summary(self, dt):
        """Prints the counts, the per-feature table and the findings; returns
        the number of findings (what --expect-clean fails on)."""
        args, counts = self.args, self.counts
        print("ga-fuzz: seed %d, %d cases in %.0f s (%s)" % (args.seed, counts["generated"], dt, args.bin))
        print("  generated %d accepted %d refused %d mismatched %d crashed %d unlocated %d "
              "invalid-IR %d lowering-failed %d generator-invalid %d" % (
                  counts["generated"], counts["accepted"], counts["refused"], counts["mismatch"],
                  counts["crash"], counts["unlocated"], counts["invalid_ir"], counts["lowering"],
                  counts["invalid"]))
        print("  refused although no coupled feature was generated: %d" % counts["refused_exact"])
        print("  largest error / tolerance among matching float results: %.3g" % STATS["max_ratio"])
        cols = ("generated", "accepted", "refused", "refused_exact", "mismatch", "crash", "unlocated",
                "lowering")
        print("  %-22s %6s %6s %6s %6s %6s %6s %6s %6s" % ("feature", "gen", "acc", "ref", "ref-ex", "mism",
                                                          "crash", "unloc", "lower"))
        for feat in sorted(self.by_feature):
            r = self.by_feature[feat]
            mark = " (coupled)" if feat in gen.COUPLING else ""
            print("  %-22s %s%s" % (feat, " ".join("%6d" % r[c] for c in cols), mark))
        for name, outcome, saved, first in sorted(self.failures):
            print("  %s %s: %s  %s" % (outcome, name, saved, first))
        if not args.verbose and not self.failures:
            shutil.rmtree(self.work, ignore_errors=True)
        # A step that ga-lower-to-cpu cannot lower is a finding of the CPU lowering
        # (not of --ga-accumulate's promise), fatal too: every generated construct
        # lowers (linalg.softmax through ga-decompose-aggregated-ops).
        bad = sum(counts[k] for k in ("mismatch", "crash", "unlocated", "invalid", "invalid_ir",
                                      "lowering"))
        return bad


def main():
    ap, args = parse_args()
    force = [f for f in args.force.split(",") if f]
    disable = [f for f in args.disable.split(",") if f]
    for f in force + disable:
        if f not in gen.PROBS:
            ap.error("unknown feature %r (known: %s)" % (f, ", ".join(sorted(gen.PROBS))))
    tools = Tools(args.bin, args.timeout, args.pass_options)
    for exe in (tools.opt, tools.verify):
        if not os.access(exe, os.X_OK):
            ap.error("%s is not executable (--bin)" % exe)

    if args.replay:
        failing = replay(tools, args.replay, args.verify_seeds)
        return 1 if (args.expect_clean and failing) else 0
    if args.case:
        s, i = map(int, args.case.split(":"))
        indices = [i]
        args.seed = s
    elif args.cases is not None:
        indices = list(range(args.first, args.first + args.cases))
    else:
        indices = None  # until --minutes run out
    if args.print:
        st = gen.generate(case_seed(args.seed, indices[0]), force, disable)
        sys.stdout.write(st.text)
        return 0

    campaign = Campaign(args, tools, force, disable, indices)
    bad = campaign.summary(campaign.run())
    return 1 if (args.expect_clean and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
