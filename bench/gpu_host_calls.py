#!/usr/bin/env python3
# ===- gpu_host_calls.py - what the host enqueues per micro-batch ----------===#
#
#   python3 bench/gpu_host_calls.py STEP.mlir [STEP.mlir ...]
#       [--micro-batches N] [--options 'cublas=0 ...'] [--build-dir DIR]
#       [--json] [--markdown]
#
# Reads the host code of `ga-opt --ga-accumulate --ga-lower-to-gpu-kernels`
# (the last stage before LLVM: host func/scf code with gpu.launch_func and
# runtime calls) and counts, for each micro-batch loop (a host scf.for that
# enqueues GPU work) and for the rest of the step:
#   * kernels: gpu.launch_func ops;
#   * library calls: calls of gaCublasLt* (cuBLASLt) and gaNccl* (NCCL);
#   * graph launches: calls whose callee names a graph launch; the kernels
#     and library calls recorded between a begin-capture and an end-capture
#     call are the work of one graph launch;
#   * host synchronizations: mgpuStreamSynchronize and gpu.wait without async.
# Steps that --ga-accumulate refuses are listed as refused.
# Per micro-batch it reports the GPU work (kernels and library calls, run
# directly or through a graph) and the host API calls that enqueue it.
# No GPU is needed: these are static counts of the lowered host code.
#
# ===----------------------------------------------------------------------===#

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAUNCH = re.compile(r"\bgpu\.launch_func\b")
CALL = re.compile(r"\b(?:func\.)?call @([A-Za-z_][\w$.]*)")
HOST_WAIT = re.compile(r"\bgpu\.wait\s*\[")


def find_build_dir(arg):
    for d in [arg, os.environ.get("GA_BUILD_DIR"), os.path.join(ROOT, "build")]:
        if d and os.path.exists(os.path.join(d, "bin", "ga-opt")):
            return d
    sys.exit("gpu_host_calls: no ga-opt; pass --build-dir or set GA_BUILD_DIR")


def classify_call(callee):
    if callee.startswith("gaCublasLt"):
        return "library"
    if callee.startswith("gaNccl"):
        return "library"
    if callee == "mgpuStreamSynchronize":
        return "sync"
    low = callee.lower()
    if "graph" in low and "launch" in low:
        return "graph_launch"
    if "begincapture" in low:
        return "begin_capture"
    if "endcapture" in low:
        return "end_capture"
    return None


def new_counts():
    return {"kernels": 0, "library": 0, "graph_launch": 0, "sync": 0}


def host_lines(text):
    """Lines of host functions: everything outside gpu.module bodies."""
    depth_in_module = None
    depth = 0
    for line in text.splitlines():
        stripped = line.strip()
        if depth_in_module is None and stripped.startswith("gpu.module"):
            depth_in_module = depth
        if depth_in_module is None and not stripped.startswith("//"):
            yield line, depth
        depth += line.count("{") - line.count("}")
        if depth_in_module is not None and depth <= depth_in_module:
            depth_in_module = None


def analyse(text):
    """Counts per micro-batch loop and outside, from the host code."""
    loops = []  # each: {"counts", "captured"} of one top-level host loop
    outside = new_counts()
    captured_outside = new_counts()
    loop_stack = []  # (open depth, loop record) of host scf.for ops
    capturing = False
    for line, depth in host_lines(text):
        stripped = line.strip()
        after = depth + line.count("{") - line.count("}")
        if re.search(r"\bscf\.for\b", stripped) and stripped.endswith("{"):
            if not loop_stack:
                loops.append({"counts": new_counts()})
            loop_stack.append((depth, loops[-1]))
            continue
        while loop_stack and after <= loop_stack[-1][0]:
            loop_stack.pop()
        kinds = []
        if LAUNCH.search(stripped):
            kinds.append("kernels")
        if HOST_WAIT.search(stripped) and "async" not in stripped:
            kinds.append("sync")
        for callee in CALL.findall(stripped):
            kind = classify_call(callee)
            if kind == "begin_capture":
                capturing = True
            elif kind == "end_capture":
                capturing = False
            elif kind:
                kinds.append(kind)
        for kind in kinds:
            if capturing and kind in ("kernels", "library"):
                captured_outside[kind] += 1
            elif loop_stack:
                loop_stack[-1][1]["counts"][kind] += 1
            else:
                outside[kind] += 1
    gpu_loops = [l["counts"] for l in loops
                 if any(l["counts"][k] for k in ("kernels", "library", "graph_launch"))]
    return gpu_loops, outside, captured_outside


def report(step, args, build):
    opts = "" if not args.options else "=" + args.options
    ga_opt = os.path.join(build, "bin", "ga-opt")
    accumulate = [ga_opt, step,
                  f"--ga-accumulate=micro-batches={args.micro_batches}"]
    if subprocess.run(accumulate, capture_output=True).returncode != 0:
        return {"step": os.path.basename(step), "refused": True}
    proc = subprocess.run(accumulate + [f"--ga-lower-to-gpu-kernels{opts}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return {"step": os.path.basename(step), "error": proc.stderr.strip()[-400:]}
    loops, outside, captured = analyse(proc.stdout)
    per_mb = new_counts()
    for counts in loops:
        for k in per_mb:
            per_mb[k] += counts[k]
    graphs = per_mb["graph_launch"]
    work_kernels = per_mb["kernels"] + (captured["kernels"] if graphs else 0)
    work_library = per_mb["library"] + (captured["library"] if graphs else 0)
    return {
        "step": os.path.basename(step),
        "micro_batch_loops": len(loops),
        "kernels_per_micro_batch": work_kernels,
        "library_calls_per_micro_batch": work_library,
        "host_api_calls_per_micro_batch":
            per_mb["kernels"] + per_mb["library"] + graphs,
        "graph_launches_per_micro_batch": graphs,
        "host_syncs_in_loop": per_mb["sync"],
        "kernels_outside_loop": outside["kernels"],
        "library_calls_outside_loop": outside["library"],
        "host_syncs_outside_loop": outside["sync"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("steps", nargs="+")
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--options", default="",
                        help="options of --ga-lower-to-gpu-kernels")
    parser.add_argument("--build-dir")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    build = find_build_dir(args.build_dir)
    rows = [report(s, args, build) for s in args.steps]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    cols = ["kernels_per_micro_batch", "library_calls_per_micro_batch",
            "host_api_calls_per_micro_batch", "graph_launches_per_micro_batch",
            "host_syncs_in_loop", "kernels_outside_loop",
            "library_calls_outside_loop", "host_syncs_outside_loop"]
    short = ["kernels/mb", "library/mb", "host calls/mb", "graphs/mb",
             "syncs in loop", "kernels out", "library out", "syncs out"]
    if args.markdown:
        print("| step | " + " | ".join(short) + " |")
        print("|---|" + "---|" * len(short))
    else:
        print("%-26s " % "step" + " ".join("%13s" % s for s in short))
    failed = False
    for r in rows:
        if r.get("refused"):
            print(f"{r['step']}: refused by --ga-accumulate (not lowered)")
            continue
        if "error" in r:
            failed = True
            print(f"{r['step']}: error: {r['error']}")
            continue
        if args.markdown:
            print(f"| {r['step']} | " + " | ".join(str(r[c]) for c in cols) + " |")
        else:
            print("%-26s " % r["step"] + " ".join("%13d" % r[c] for c in cols))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
