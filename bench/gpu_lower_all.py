#!/usr/bin/env python3
# ===- gpu_lower_all.py - every accepted step through the NVVM lowering ----===#
#
#   python3 bench/gpu_lower_all.py PATH [PATH ...] [--chips sm_80,sm_90]
#       [--micro-batches 4] [--build-dir DIR] [-j N]
#
# Collects the training steps in PATH (files or directories of .mlir; a file
# is split at `// -----` like `ga-opt -split-input-file`; a piece is a step
# when it defines a function with a `ga.batch` argument), rewrites each with
# `--ga-accumulate="micro-batches=N"` (then, if refused, with
# recompute-statistics=1 and with allow-ghost-batch=1), and lowers every
# accepted step with `--ga-lower-to-nvvm="chip=<chip> format=isa"` for every
# chip, then assembles its PTX with `ptxas -arch=<chip> -v`.
#
# Prints one line per step and chip (kernels, most registers, spill bytes)
# and a summary; exits 1 when an accepted step does not lower, ptxas fails,
# or a kernel spills. Steps that --ga-accumulate refuses are listed, not
# counted: they are the rewrite's business.
#
# ===----------------------------------------------------------------------===#

import argparse
import concurrent.futures
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_ptx  # noqa: E402

ACCUMULATE_VARIANTS = ["", "recompute-statistics=1", "allow-ghost-batch=1"]


def split_input_file(text):
    """The pieces of `text` between its `// -----` lines (as ga-opt
    -split-input-file splits it)."""
    pieces, current = [], []
    for line in text.splitlines(keepends=True):
        if line.rstrip() == "// -----":
            pieces.append("".join(current))
            current = []
        else:
            current.append(line)
    return pieces + ["".join(current)]


def collect_steps(paths, root):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                files += [os.path.join(d, n) for n in names
                          if n.endswith(".mlir")]
        else:
            files.append(p)
    steps = []
    for f in sorted(set(files)):
        pieces = split_input_file(open(f).read())
        for i, text in enumerate(pieces):
            # Steps marked ga.data_parallel (torchrun's shards, whose
            # collectives are host calls into torch.distributed) and the
            # sharded collectives of ZeRO-1 (lowered only to host calls) are
            # CPU-only so far: the frontend refuses target='cuda' for them.
            host_only = ("ga.data_parallel", "ga.reduce_scatter",
                         "ga.all_gather")
            if "ga.batch" in text and "func.func" in text and \
                    not any(op in text for op in host_only):
                name = os.path.relpath(f, root)
                if len(pieces) > 1:
                    name += "#%d" % i
                steps.append((name, text))
    return steps


def ga_opt(ga_opt_path, src, args, env):
    return subprocess.run([ga_opt_path, "-", "-o", "-"] + args, input=src,
                          capture_output=True, text=True, env=env)


def first_error(stderr):
    for line in stderr.splitlines():
        if "error:" in line:
            return line.strip()
    return stderr.strip().splitlines()[-1] if stderr.strip() else "?"


def lower_step(step, ga_opt_path, chips, micro_batches, env):
    name, text = step
    accumulated, variant, refusal = None, None, None
    for v in ACCUMULATE_VARIANTS:
        opts = "micro-batches=%d%s" % (micro_batches, " " + v if v else "")
        r = ga_opt(ga_opt_path, text, ["--ga-accumulate=" + opts], env)
        if r.returncode == 0:
            accumulated, variant = r.stdout, v
            break
        if refusal is None:
            refusal = first_error(r.stderr)
    if accumulated is None:
        return {"name": name, "accepted": False, "why": refusal}
    result = {"name": name, "accepted": True, "variant": variant,
              "chips": {}, "failure": None}
    for chip in chips:
        r = ga_opt(ga_opt_path, accumulated,
                   ["--ga-lower-to-nvvm=chip=%s format=isa" % chip], env)
        if r.returncode != 0:
            result["failure"] = "%s: %s" % (chip, first_error(r.stderr))
            return result
        # CUDA graphs (ga-capture-cuda-graphs): loops captured, and the
        # remarks of those left as they are.
        # (The same for every chip: counted once.)
        result.setdefault("graphs", r.stdout.count(
            "llvm.call @mgpuGraphEndCapture("))
        result.setdefault("uncaptured", [
            l.split("remark: ", 1)[1] for l in r.stderr.splitlines()
            if "not captured as a CUDA graph" in l])
        kernels = {}
        report, err = gpu_ptx.kernel_report(ga_opt_path, "-", text=r.stdout)
        if report is None:
            result["failure"] = "%s: %s" % (chip, first_error(err))
            return result
        for binary in report["ptx"]:
            kernels.update(run_ptxas_checked(binary["assembly"], chip))
        result["chips"][chip] = kernels
    return result


def run_ptxas_checked(ptx, chip):
    # gpu_ptx.run_ptxas exits on a ptxas failure; keep the message.
    try:
        return gpu_ptx.run_ptxas(ptx, chip)
    except SystemExit as e:
        raise RuntimeError(str(e))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("paths", nargs="+")
    p.add_argument("--chips", default="sm_80,sm_90")
    p.add_argument("--micro-batches", type=int, default=4)
    p.add_argument("--build-dir")
    p.add_argument("-j", type=int, default=2)
    a = p.parse_args()
    build = gpu_ptx.find_build_dir(a.build_dir)
    ga_opt_path = os.path.join(build, "bin", "ga-opt")
    env = dict(os.environ)
    ptxas = gpu_ptx.find_ptxas()
    env["PATH"] = os.path.dirname(ptxas) + os.pathsep + env["PATH"]
    if not any(env.get(v) for v in ("CUDA_HOME", "CUDA_ROOT", "CUDA_PATH")):
        env["CUDA_HOME"] = os.path.dirname(os.path.dirname(ptxas))
    chips = a.chips.split(",")
    steps = collect_steps(a.paths, gpu_ptx.ROOT)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        results = list(pool.map(
            lambda s: lower_step(s, ga_opt_path, chips, a.micro_batches, env),
            steps))

    accepted = lowered = spilling = 0
    for r in results:
        if not r["accepted"]:
            print("refused  %s: %s" % (r["name"], r["why"]))
            continue
        accepted += 1
        tag = " [%s]" % r["variant"] if r["variant"] else ""
        if r["failure"]:
            print("FAILED   %s%s: %s" % (r["name"], tag, r["failure"]))
            continue
        lowered += 1
        for chip, kernels in r["chips"].items():
            spills = sum(k["spill_stores"] + k["spill_loads"]
                         for k in kernels.values())
            regs = max([k["registers"] for k in kernels.values()] or [0])
            if spills:
                spilling += 1
            print("lowered  %s%s: %s %d kernels, max registers %d, spill "
                  "bytes %d" % (r["name"], tag, chip, len(kernels), regs,
                                spills))
    print("accepted steps: %d, lowered for %s: %d, with spills: %d" %
          (accepted, " and ".join(chips), lowered, spilling))
    lowered_steps = [r for r in results if r["accepted"] and not r["failure"]]
    for r in lowered_steps:
        for remark in sorted(set(r["uncaptured"])):
            print("uncaptured %s: %s" % (r["name"], remark))
    print("CUDA graphs: %d loops captured in %d steps; %d steps with loops "
          "left uncaptured" %
          (sum(r["graphs"] for r in lowered_steps),
           sum(1 for r in lowered_steps if r["graphs"]),
           sum(1 for r in lowered_steps if r["uncaptured"])))
    return 0 if accepted == lowered and spilling == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
