#!/usr/bin/env python3
# ===- gpu_host_calls.py - what the host enqueues per micro-batch ----------===#
#
#   python3 bench/gpu_host_calls.py STEP.mlir [STEP.mlir ...]
#       [--micro-batches N] [--options 'cublas=0 ...'] [--build-dir DIR]
#       [--json] [--markdown]
#   python3 bench/gpu_host_calls.py --zoo gpt2,llama,... [--cache DIR] ...
#       (steps exported from the model zoo of test/python/torch/model_zoo.py
#       with ga_mlir.torch.export_train_step: B = 8, AdamW; ResNet-18 with
#       BatchNorm in eval mode; kept in --cache to compare builds)
#
# Reads the compiler's kernel report (`--ga-gpu-kernel-report=format=json`,
# docs/GPU.md) of `ga-opt --ga-accumulate --ga-lower-to-gpu-kernels` with
# library-calls=0 (the last stage before LLVM: host func/scf code with
# gpu.launch_func, library products and graph captures still ops), as
# bench/gpu_report.py reads it (without its ptxas part), and counts, for
# the micro-batch loops (host scf.for ops that enqueue GPU work)
# and for the rest of the step:
#   * kernels: gpu.launch_func ops;
#   * library calls: calls of gaCublasLtMatmul* (cuBLASLt);
#   * graph launches: a loop captured by --ga-capture-cuda-graphs issues one
#     mgpuGraphLaunch per micro-batch, and the kernels and library calls
#     recorded between mgpuGraphBeginCapture and mgpuGraphEndCapture are its
#     work;
#   * host synchronizations: mgpuStreamSynchronize calls;
#   * GEMM-shaped kernels: generated kernels (in or out of the loops) that
#     compute a contraction with an M or an N dimension (the kind that
#     ga-linalg-to-gpu-loops names `*_matmul*`; a contraction with neither,
#     a row dot product, is a `reduce`), i.e. products that did not become
#     library calls;
#   * products in the step: the linalg contractions of the step before any
#     rewrite (matmul, batch_matmul, matvec, vecmat, dot) and, apart, its
#     convolutions.
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
import gpu_report  # noqa: E402  (its reading of the kernel report)
from gpu_ptx import kernel_report  # noqa: E402


def count(step):
    """Counts per micro-batch (summed over the micro-batch loops) and outside
    the loops, from gpu_report's reading of the kernel stage's report."""
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
    gemm_kernels = sum(1 for l in step["launches"]
                       if not l.get("library") and "_matmul" in l["kernel"])
    return {
        "gemm_shaped_kernels": gemm_kernels,
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


def export_zoo_step(name, cache):
    """The step of zoo model `name` (exported once into `cache`): its path
    and --ga-accumulate's batch-args."""
    path = os.path.join(cache, name + ".mlir")
    args_path = os.path.join(cache, name + ".batch-args")
    if os.path.exists(path) and os.path.exists(args_path):
        return path, open(args_path).read().strip()
    import torch
    sys.path.insert(0, os.path.join(ROOT, "test", "python", "torch"))
    import model_zoo
    from ga_mlir.torch import export_train_step
    case = model_zoo.MODELS[name]
    torch.manual_seed(0)
    model = case.make_model()
    if name.startswith("resnet"):
        model.eval()  # BatchNorm frozen
    optimizer = model_zoo.OPTIMIZERS["adamw"](model.parameters())
    batch = case.make_batch(torch.Generator().manual_seed(0), 8)
    text, spec = export_train_step(model, case.loss_fn, optimizer, batch)
    os.makedirs(cache, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    batch_args = ",".join(f"{i}:{d}" for i, d in spec.batch_args())
    with open(args_path, "w") as f:
        f.write(batch_args)
    return path, batch_args


def report(step, args, build, batch_args=None, name=None):
    opts = "" if not args.options else "=" + args.options
    ga_opt = os.path.join(build, "bin", "ga-opt")
    acc = f"micro-batches={args.micro_batches}"
    if batch_args:
        acc += f" batch-args={batch_args}"
    accumulate = [ga_opt, step, f"--ga-accumulate={acc}"]
    name = name or os.path.basename(step)
    # The products of the step before any rewrite (its linalg named ops).
    source, err = kernel_report(ga_opt, step)
    if source is None:
        return {"step": name, "error": err.strip()[:600]}
    if subprocess.run(accumulate, capture_output=True).returncode != 0:
        return {"step": name, "refused": True}
    # The kernel stage as gpu_report reads it: without ga-lower-library-ops
    # (library calls, streams and graphs still ops).
    sep = " " if opts else "="
    report, err = kernel_report(ga_opt, step, accumulate[2:] + [
        f"--ga-lower-to-gpu-kernels{opts}{sep}library-calls=0"])
    if report is None:
        return {"step": name, "error": err.strip()[:600]}
    row = {"step": name, "products": source["products"],
           "convolutions": source["convolutions"]}
    row.update(count(gpu_report.step_of_report(report)))
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("steps", nargs="*")
    parser.add_argument("--zoo", default="",
                        help="comma-separated models of model_zoo.MODELS")
    parser.add_argument("--cache", default=os.path.join(
        ROOT, "build", "bench", "zoo-steps"),
        help="where the exported zoo steps are kept")
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--options", default="",
                        help="options of --ga-lower-to-gpu-kernels")
    parser.add_argument("--build-dir")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    build = gpu_report.find_build_dir(args.build_dir)
    rows = [report(s, args, build) for s in args.steps]
    for name in filter(None, args.zoo.split(",")):
        try:
            path, batch_args = export_zoo_step(name, args.cache)
        except Exception as error:  # noqa: BLE001 (a refusal is a row)
            rows.append({"step": name, "error": "export: %s" % error})
            continue
        rows.append(report(path, args, build, batch_args, name))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    cols = ["products", "kernels_per_micro_batch",
            "library_calls_per_micro_batch", "gemm_shaped_kernels",
            "host_api_calls_per_micro_batch", "graph_launches_per_micro_batch",
            "host_syncs_in_loop", "kernels_outside_loop",
            "library_calls_outside_loop", "host_syncs_outside_loop"]
    short = ["products", "kernels/mb", "library/mb", "GEMM kernels",
             "host calls/mb", "graphs/mb",
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
            first = next((l for l in r["error"].splitlines()
                          if "error" in l), r["error"].splitlines()[-1])
            print(f"{r['step']}: error: {first.strip()}")
            continue
        if args.markdown:
            print(f"| {r['step']} | " + " | ".join(str(r[c]) for c in cols) + " |")
        else:
            print("%-26s " % r["step"] + " ".join("%13d" % r[c] for c in cols))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
