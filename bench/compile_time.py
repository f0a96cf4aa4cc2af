#!/usr/bin/env python3
"""Compile time of --ga-accumulate against upstream -canonicalize -cse on the
same generated deep-MLP training steps, measured in the same run.

Prints, per depth: the time of the passes themselves (from -mlir-timing,
without parsing and printing), with the verifier between passes (ga-opt's
default) and without it (-verify-each=0), the ratio ours / upstream, and the
growth exponent of our time with depth (1.0 = linear).

    python3 bench/compile_time.py --ga-opt build/bin/ga-opt
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_mlp_step import generate  # noqa: E402

NOT_PASSES = {"Parser", "Output", "Rest", "Total"}


def pass_time(ga_opt, path, pipeline, verify, whole=False):
    """Seconds spent in passes (top-level timing entries that are passes), or
    in the whole invocation (parsing and printing included) with `whole`,
    from MLIR's timing report as JSON (-mlir-output-format=json)."""
    cmd = [ga_opt, path, *pipeline, "-mlir-timing",
           "-mlir-output-format=json", "-o", os.devnull]
    if not verify:
        cmd.append("-verify-each=0")
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    entries = {e["name"]: e["wall"]["duration"] for e in json.loads(out)}
    if whole:
        return entries["Total"]
    return sum(seconds for name, seconds in entries.items()
               if name not in NOT_PASSES and not name.startswith("(A)"))


def median_time(ga_opt, path, pipeline, verify, repeat, whole=False):
    return statistics.median(
        pass_time(ga_opt, path, pipeline, verify, whole) for _ in range(repeat))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--ga-opt", default="build/bin/ga-opt")
    parser.add_argument("--layers", default="10,100,300,1000")
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    ours = [f"--ga-accumulate=micro-batches={args.micro_batches}"]
    upstream = ["-canonicalize", "-cse"]
    depths = [int(d) for d in args.layers.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for depth in depths:
            path = os.path.join(tmp, f"mlp{depth}.mlir")
            with open(path, "w") as f:
                f.write(generate(depth, 64, 32))
            ops = sum(1 for _ in open(path))
            row = {"layers": depth, "lines": ops}
            for verify in (True, False):
                key = "verify" if verify else "noverify"
                row[f"ours_{key}"] = median_time(args.ga_opt, path, ours, verify,
                                                 args.repeat)
                row[f"up_{key}"] = median_time(args.ga_opt, path, upstream, verify,
                                               args.repeat)
            row["ours_whole"] = median_time(args.ga_opt, path, ours, True,
                                            args.repeat, whole=True)
            row["up_whole"] = median_time(args.ga_opt, path, upstream, True,
                                          args.repeat, whole=True)
            rows.append(row)

    print(f"--ga-accumulate=micro-batches={args.micro_batches} vs "
          f"-canonicalize -cse, median of {args.repeat} runs")
    cols = f"{'ours':>9} {'upstream':>9} {'ratio':>6}"
    print(f"{'layers':>7} {'lines':>7} | {cols} | {cols} | {cols}")
    print(f"{'':>15} | {'passes, -verify-each=0':^26} "
          f"| {'passes + verifier':^26} | {'whole ga-opt run':^26}")

    def cell(r, key):
        ours, up = r[f"ours_{key}"], r[f"up_{key}"]
        return f"{ours*1e3:>7.1f}ms {up*1e3:>7.1f}ms {ours/up:>6.2f}"

    for r in rows:
        print(f"{r['layers']:>7} {r['lines']:>7} | {cell(r, 'noverify')} | "
              f"{cell(r, 'verify')} | {cell(r, 'whole')}")
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        for key, label in (("ours_noverify", "ours"), ("up_noverify", "upstream")):
            slope = (math.log(b[key] / a[key]) /
                     math.log(b["layers"] / a["layers"]))
            print(f"growth exponent {label} ({a['layers']} -> {b['layers']} "
                  f"layers): {slope:.2f}")


if __name__ == "__main__":
    main()
