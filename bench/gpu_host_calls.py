#!/usr/bin/env python3
# ===- gpu_host_calls.py - what the host enqueues per micro-batch ----------===#
#
#   python3 bench/gpu_host_calls.py STEP.mlir [STEP.mlir ...]
#       [--micro-batches N] [--options 'cublas=0 ...'] [--build-dir DIR]
#       [--json] [--markdown]
#
# Reads the host code of `ga-opt --ga-accumulate --ga-lower-to-gpu-kernels`
# (the last stage before LLVM: host func/scf code with gpu.launch_func and
# runtime calls), parsed by bench/gpu_report.py (without its ptxas part), and
# counts, for the micro-batch loops (host scf.for ops that enqueue GPU work)
# and for the rest of the step:
#   * kernels: gpu.launch_func ops;
#   * library calls: calls of gaCublasLtMatmul* (cuBLASLt);
#   * graph launches: a loop captured by --ga-capture-cuda-graphs issues one
#     mgpuGraphLaunch per micro-batch, and the kernels and library calls
#     recorded between mgpuGraphBeginCapture and mgpuGraphEndCapture are its
#     work;
#   * host synchronizations: mgpuStreamSynchronize calls.
# Steps that --ga-accumulate refuses are listed as refused.
# Per micro-batch it reports the GPU work (kernels and library calls, run
# directly or through a graph) and the host API calls that enqueue it.
# No GPU is needed: these are static counts of the lowered host code.
#
# ===----------------------------------------------------------------------===#

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_report  # noqa: E402  (its parse of the kernel stage)

def count(text):
    """Counts per micro-batch (summed over the micro-batch loops) and outside
    the loops, from gpu_report's parse of the kernel stage's host code."""
    step = gpu_report.parse_kernels_stage(text)
    inside = {"kernels": 0, "library": 0}
    outside = {"kernels": 0, "library": 0}
    for launch in step["launches"]:
        where = inside if launch["loop"] else outside
        where["library" if launch.get("library") else "kernels"] += 1
    loops = {l["loop"] for l in step["launches"] if l["loop"]}
    captured = loops & step["captured_loops"]
    # A captured loop issues one graph launch per micro-batch; the others
    # issue each kernel and library call themselves.
    direct = sum(1 for l in step["launches"]
                 if l["loop"] and l["loop"] not in captured)
    syncs = step["host_syncs"]
    return {
        "micro_batch_loops": len(loops),
        "kernels_per_micro_batch": inside["kernels"],
        "library_calls_per_micro_batch": inside["library"],
        "host_api_calls_per_micro_batch": direct + len(captured),
        "graph_launches_per_micro_batch": len(captured),
        "host_syncs_in_loop": sum(1 for l in syncs if l),
        "kernels_outside_loop": outside["kernels"],
        "library_calls_outside_loop": outside["library"],
        "host_syncs_outside_loop": sum(1 for l in syncs if not l),
    }


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
    row = {"step": os.path.basename(step)}
    row.update(count(proc.stdout))
    return row


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
    build = gpu_report.find_build_dir(args.build_dir)
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
