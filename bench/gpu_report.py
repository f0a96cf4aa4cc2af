#!/usr/bin/env python3
# ===- gpu_report.py - static figures of the kernels of a GPU-lowered step -===#
#
#   python3 bench/gpu_report.py STEP.mlir [STEP.mlir ...] [--micro-batches N]
#       [--chip sm_90] [--build-dir DIR] [--check] [--json]
#
# For each training step, without a GPU, from the compiler's kernel report
# (ga-opt --ga-gpu-kernel-report=format=json; no IR text is read here):
#   1. after --ga-accumulate --ga-lower-to-gpu-kernels=library-calls=0: the
#      host code (which launches run before, inside and after the micro-batch
#      loops, the graph captures), the library products (`ga.blas_matmul`)
#      and the kernels (which parameters each reads and writes);
#   2. after --ga-lower-to-nvvm=format=isa: the PTX of every kernel and its
#      instruction counts, then `ptxas -arch=<chip> -v` on it: registers,
#      spill stores/loads, stack, shared memory, barriers per kernel.
# It prints per kernel: where it runs, launches per micro-batch, grid x block,
# registers, spills, shared memory, PTX instructions, and the bytes its
# accumulation moves per micro-batch; per step: launches per micro-batch and
# the accumulation traffic. Matrix products by the BLAS library (cublas=1,
# the default) are listed as library calls (blas_matmul#N), with their beta
# (1 with the op's {accumulate}), their shape ([batch x ]MxNxK and element
# types) and the buffers they read and write (the op's lhs, rhs and out):
# read from the `ga.blas_matmul` ops, not from the operand positions of the
# runtime calls they are lowered to.
#
# Accumulation invariants (--check exits 1 when one fails, or on any spill):
#   * every accumulator (a buffer allocated before a micro-batch loop and
#     read-modify-written inside it) is written by exactly one kernel per
#     micro-batch, a producer with a reduction (`*_matmul_acc`,
#     `*_reduce_acc`, or a library product with beta = 1): no separate
#     accumulate kernel, no copy;
#   * that kernel reads the accumulator once and writes it once per element:
#     the only traffic beyond the producer's own write is the read of the
#     running sum (beta = 1), the same as cuBLAS with beta = 1;
#   * no gpu.memcpy inside the micro-batch loop.
#
# Subcommand `ptxas FILE.mlir --chip sm_XX`: ptxas figures of an existing
# format=isa output (used by the lit tests).
#
# ===----------------------------------------------------------------------===#

import argparse
import json
import os
import sys

from gpu_ptx import (find_build_dir, kernel_report, ptx_kernel_counts,
                     run_ptxas)


# ===----------------------------------------------------------------------===#
# The compiler's kernel report (--ga-gpu-kernel-report=format=json)
# ===----------------------------------------------------------------------===#

def run_report(ga_opt, step, passes):
    """The kernel report of `step` after ga-opt `passes`."""
    report, err = kernel_report(ga_opt, step, passes)
    if report is None:
        sys.exit("gpu_report: ga-opt %s failed on %s:\n%s" %
                 (" ".join(passes), step, err))
    return report


def step_of_report(report):
    """Launches (with their outermost micro-batch loop), host buffers and
    kernel bodies as the analysis reads them: a kernel's parameters are
    numbered, a launch's arguments are the buffers (views resolved to what
    they view) in parameter order."""
    step = {"launches": report["launches"], "allocs": report["buffers"],
            "kernels": {}, "memcpy_in_loop": report["memcpy_in_loop"],
            "host_syncs": report["host_syncs"],
            "captured_loops": {l["id"] for l in report["loops"]
                               if l["captured"]}}
    for name, k in report["kernels"].items():
        acc = k["accesses"]
        step["kernels"][name] = {
            "params": list(range(k["params"])),
            "loads": {a["param"] for a in acc if a["read"]},
            "stores": {a["param"] for a in acc if a["written"]},
            "first": {a["param"]: a["first"] for a in acc}}
    for l in step["launches"]:
        if l.get("library"):
            l.update(grid=[], block=[], args=[], beta=float(l["beta"]))
    return step


def kernel_kind(name):
    """`train_step_k03_matmul_acc` -> `matmul_acc`: the name without the
    function and the kernel's number."""
    parts = name.split("_")
    numbered = [i for i, p in enumerate(parts)
                if len(p) > 1 and p[0] == "k" and p[1:].isdigit()]
    return "_".join(parts[numbered[-1] + 1:]) if numbered else name


def analyze(step, ptx_stats, ptx_counts):
    """Per-kernel rows and the accumulation check.

    An accumulator is a buffer allocated before a micro-batch loop whose
    first access in an iteration of the loop is a read: it carries a value
    from the previous micro-batch. (A scratch buffer hoisted out of the loop
    is written first.) Within a kernel, the first access in the kernel's
    text is the first in program order: the members of a fused row kernel
    run one after the other in its one thread."""
    rows, problems = [], []
    launches_per_loop, library_per_loop, library_beta1_per_loop = {}, {}, {}
    first_access = {}  # (loop, buffer) -> "read" | "write"
    writers = {}  # (loop, buffer) -> [kernel]
    # The micro-batch index in device memory (ga-device-iteration-index),
    # advanced by a kernel of one thread per iteration: not an accumulator.
    index_buffers = set()
    for l in step["launches"]:
        k = step["kernels"].get(l["kernel"])
        if k and l["kernel"].endswith("_index_step"):
            operand = dict(zip(k["params"], l["args"]))
            index_buffers |= {operand.get(p) for p in k["stores"]}
    for l in step["launches"]:
        if l.get("library"):
            # The call as a kernel whose parameters are its buffers.
            b = l["buffers"]
            step["kernels"][l["kernel"]] = {
                "params": ["a", "b", "c"], "stores": {"c"},
                "loads": {"a", "b"} | ({"c"} if l["beta"] != 0.0 else set())}
            l["args"] = [b["a"], b["b"], b["c"]]
        k = step["kernels"].get(l["kernel"], {"params": [], "stores": set(),
                                               "loads": set()})
        operand = dict(zip(k["params"], l["args"]))
        l["operand"] = operand
        if not l["loop"]:
            continue
        if l.get("library"):
            library_per_loop[l["loop"]] = library_per_loop.get(l["loop"], 0) + 1
            if l["beta"] == 1.0:
                library_beta1_per_loop[l["loop"]] = \
                    library_beta1_per_loop.get(l["loop"], 0) + 1
        else:
            launches_per_loop[l["loop"]] = launches_per_loop.get(l["loop"], 0) + 1
        for p in sorted(k["loads"] | k["stores"]):
            buf = operand.get(p)
            alloc = step["allocs"].get(buf)
            if alloc is None or alloc["loop"] is not None or \
                    buf in index_buffers:
                continue
            key = (l["loop"], buf)
            # A kernel's first access in program order (a fused row kernel
            # writes a buffer and then reads it back).
            first = k.get("first", {}).get(p)
            first_access.setdefault(
                key, first or ("read" if p in k["loads"] else "write"))
            if p in k["stores"]:
                writers.setdefault(key, []).append(l["kernel"])
    acc_keys = {key for key, a in first_access.items()
                if a == "read" and key in writers}
    for l in step["launches"]:
        k = step["kernels"].get(l["kernel"], {"stores": set()})
        acc_bytes = 0
        for p in k.get("stores", ()):
            buf = l["operand"].get(p)
            if (l["loop"], buf) in acc_keys:
                acc_bytes += 2 * (step["allocs"][buf]["bytes"] or 0)
        st = ptx_stats.get(l["kernel"], {})
        rows.append({
            "kernel": l["kernel"], "where": "loop" if l["loop"] else "once",
            "library": bool(l.get("library")), "beta": l.get("beta"),
            "product": l.get("product"),
            "grid": l["grid"], "block": l["block"],
            "registers": st.get("registers"),
            "spill_stores": st.get("spill_stores"),
            "spill_loads": st.get("spill_loads"),
            "smem": st.get("smem"), "stack": st.get("stack"),
            "ptx_instructions": ptx_counts.get(l["kernel"]),
            "acc_bytes": acc_bytes})
        if st and (st["spill_stores"] or st["spill_loads"]):
            problems.append("%s spills (%d B stores, %d B loads)" %
                            (l["kernel"], st["spill_stores"], st["spill_loads"]))
    accumulators = []
    for key in sorted(acc_keys):
        loop, buf = key
        ws = writers[key]
        accumulators.append({"buffer": buf, "type": step["allocs"][buf]["type"],
                             "bytes": step["allocs"][buf]["bytes"],
                             "writers": ws})
        if len(ws) != 1:
            problems.append("accumulator %s written by %d kernels per "
                            "micro-batch: %s" % (buf, len(ws), ", ".join(ws)))
        library_beta = {l["kernel"]: l["beta"] for l in step["launches"]
                        if l.get("library")}
        for w in ws:
            # A library product with beta = 1 reads C once and writes it
            # once: the accumulation fused into the product.
            if library_beta.get(w) == 1.0:
                continue
            if not w.endswith(("_matmul_acc", "_gemm_acc", "_reduce_acc")):
                problems.append("accumulator %s written by %s, not by a "
                                "producer with a reduction" % (buf, w))
    # The tensor-level marking (ga.accumulates -> *_acc) and the data flow
    # agree: every *_acc kernel in a loop writes an accumulator.
    acc_kernels = {w for key in acc_keys for w in writers[key]}
    for l in step["launches"]:
        if l["loop"] and l["kernel"].endswith("_acc") and \
                l["kernel"] not in acc_kernels:
            problems.append("%s is marked as accumulating but writes no "
                            "loop-carried buffer" % l["kernel"])
    if step["memcpy_in_loop"]:
        problems.append("%d gpu.memcpy inside micro-batch loops" %
                        step["memcpy_in_loop"])
    per_loop = {"kernels": launches_per_loop, "library": library_per_loop,
                "library_beta1": library_beta1_per_loop}
    return rows, accumulators, per_loop, problems


def fmt_dim(d):
    return "x".join("?" if v is None else str(v) for v in d if v != 1) or "1"


def report_step(path, args, build):
    ga_opt = os.path.join(build, "bin", "ga-opt")
    acc = [] if args.micro_batches == 0 else [
        "--ga-accumulate=micro-batches=%d" % args.micro_batches]
    extra = (" " + args.options) if args.options else ""
    # The kernel stage without its last pass (library-calls=0): the library
    # products are still ga.blas_matmul ops, the graph captures
    # ga.graph_capture regions.
    step = step_of_report(run_report(ga_opt, path, acc + [
        "--ga-lower-to-gpu-kernels=library-calls=0" + extra]))
    isa = run_report(ga_opt, path, acc + [
        "--ga-lower-to-nvvm=format=isa chip=%s%s" % (args.chip, extra)])
    ptx_stats = {}
    for binary in isa["ptx"]:
        ptx_stats.update(run_ptxas(binary["assembly"], args.chip))
    classes = ptx_kernel_counts(isa)
    counts = {k: c.pop("instructions") for k, c in classes.items()}
    rows, accs, counts_per_loop, problems = analyze(step, ptx_stats, counts)
    loops = sorted(set(counts_per_loop["kernels"]) |
                   set(counts_per_loop["library"]))
    per_loop = counts_per_loop["kernels"]
    for r in rows:
        r["ptx_ops"] = classes.get(r["kernel"], {})
    return {"step": os.path.basename(path), "chip": args.chip,
            "options": args.options,
            "micro_batches": args.micro_batches, "kernels": rows,
            "launches_total": sum(1 for r in rows if not r["library"]),
            "launches_per_micro_batch": [per_loop.get(k, 0) for k in loops],
            "library_calls_total": sum(1 for r in rows if r["library"]),
            "library_calls_per_micro_batch": [
                counts_per_loop["library"].get(k, 0) for k in loops],
            "library_beta1_per_micro_batch": [
                counts_per_loop["library_beta1"].get(k, 0) for k in loops],
            "accumulators": accs,
            "accumulation_bytes_per_micro_batch": {
                "read": sum(a["bytes"] or 0 for a in accs),
                "written": sum(a["bytes"] or 0 for a in accs),
                "extra_kernels": sum(len(a["writers"]) - 1 for a in accs),
                "copies_in_loop": step["memcpy_in_loop"]},
            "problems": problems}


def print_report(r):
    print("== %s  (micro-batches=%d, %s%s)" % (
        r["step"], r["micro_batches"], r["chip"],
        ", " + r["options"] if r.get("options") else ""))
    once = sum(1 for k in r["kernels"]
               if k["where"] == "once" and not k["library"])
    print("   launches: %d in all; per micro-batch: %s (loop%s); outside "
          "loops: %d" % (r["launches_total"],
                         " + ".join(map(str, r["launches_per_micro_batch"])),
                         "s" if len(r["launches_per_micro_batch"]) > 1 else "",
                         once))
    if r["library_calls_total"]:
        library = {k["kernel"] for k in r["kernels"] if k["library"]}
        print("   library calls: %d in all; per micro-batch: %s, with beta = 1: "
              "%s; accumulators written by a call with beta = 1: %d" % (
                  r["library_calls_total"],
                  " + ".join(map(str, r["library_calls_per_micro_batch"])),
                  " + ".join(map(str, r["library_beta1_per_micro_batch"])),
                  sum(1 for a in r["accumulators"]
                      if set(a["writers"]) <= library)))
    print("   %-38s %-5s %-11s %5s %11s %5s %6s %15s %10s" %
          ("kernel", "where", "grid x blk", "regs", "spill st/ld", "smem",
           "ptx", "ldg/lds/fp/bar", "acc B/mb"))
    for k in r["kernels"]:
        if k["library"]:
            p = k["product"]
            shape = "%s%dx%dx%d %s" % (
                "%d x " % p["batch"] if p["batch"] > 1 else "", p["m"],
                p["n"], p["k"], p["types"])
            print("   %-38s %-5s %-11s beta = %g  %-31s %13s" % (
                k["kernel"], k["where"], "library", k["beta"], shape,
                k["acc_bytes"] or "-"))
            continue
        o = k.get("ptx_ops", {})
        print("   %-38s %-5s %-11s %5s %11s %5s %6s %15s %10s" % (
            k["kernel"], k["where"],
            "%s x %s" % (fmt_dim(k["grid"]), fmt_dim(k["block"])),
            k["registers"], "%s/%s" % (k["spill_stores"], k["spill_loads"]),
            k["smem"], k["ptx_instructions"],
            "%s/%s/%s/%s" % (o.get("ld.global", "?"), o.get("ld.shared", "?"),
                             o.get("fp", "?"), o.get("bar", "?")),
            k["acc_bytes"] or "-"))
    a = r["accumulation_bytes_per_micro_batch"]
    regs = [k["registers"] for k in r["kernels"] if k["registers"] is not None]
    # Per kind of kernel (the name without step and number).
    kinds = {}
    for k in r["kernels"]:
        if k["library"]:
            continue
        kind = kernel_kind(k["kernel"])
        e = kinds.setdefault(kind, {"loop": 0, "once": 0, "regs": [], "smem": 0})
        e[k["where"]] += 1
        if k["registers"] is not None:
            e["regs"].append(k["registers"])
        e["smem"] = max(e["smem"], k["smem"] or 0)
    print("   by kind: " + "; ".join(
        "%s %d+%d regs %s%s" % (
            kind, e["loop"], e["once"],
            "%d-%d" % (min(e["regs"]), max(e["regs"])) if e["regs"] else "?",
            " smem %d" % e["smem"] if e["smem"] else "")
        for kind, e in sorted(kinds.items())) + "  (per micro-batch + once)")
    print("   registers: max %s, spills: %d kernels" % (
        max(regs) if regs else "?",
        sum(1 for k in r["kernels"] if k["spill_stores"] or k["spill_loads"])))
    print("   accumulation per micro-batch: %d accumulators, %d B read + %d B "
          "written, by their producers only; %d extra kernels, %d copies" % (
              len(r["accumulators"]), a["read"], a["written"],
              a["extra_kernels"], a["copies_in_loop"]))
    for acc in r["accumulators"]:
        print("     %-14s %-22s %7s B  written by %s" % (
            acc["buffer"], acc["type"], acc["bytes"], ", ".join(acc["writers"])))
    for p in r["problems"]:
        print("   PROBLEM: " + p)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "ptxas":
        p = argparse.ArgumentParser(prog="gpu_report.py ptxas")
        p.add_argument("mlir")
        p.add_argument("--chip", default="sm_90")
        p.add_argument("--max-spills", type=int, default=None)
        p.add_argument("--build-dir")
        a = p.parse_args(sys.argv[2:])
        ga_opt = os.path.join(find_build_dir(a.build_dir), "bin", "ga-opt")
        report = run_report(ga_opt, a.mlir, [])
        status = 0
        for binary in sorted(report["ptx"], key=lambda b: b["module"]):
            counts = binary["kernels"]
            stats = run_ptxas(binary["assembly"], a.chip)
            print("module %s: %d kernels (ptxas -arch=%s)" % (
                binary["module"], len(stats), a.chip))
            for name, s in sorted(stats.items()):
                spills = s["spill_stores"] + s["spill_loads"]
                print("  %-40s registers %3d  spill stores %d  spill loads %d"
                      "  smem %d  ptx %d" % (
                          name, s["registers"], s["spill_stores"],
                          s["spill_loads"], s["smem"],
                          counts.get(name, {}).get("instructions", 0)))
                if a.max_spills is not None and spills > a.max_spills:
                    status = 1
            total = sum(s["spill_stores"] + s["spill_loads"]
                        for s in stats.values())
            print("  total spill bytes: %d" % total)
        if not report["ptx"]:
            print("gpu_report: no PTX (format=isa) gpu.binary in " + a.mlir,
                  file=sys.stderr)
            status = 1
        return status

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("steps", nargs="+")
    p.add_argument("--micro-batches", type=int, default=4)
    p.add_argument("--chip", default="sm_90")
    p.add_argument("--options", default="",
                   help="more ga-lower-to-nvvm options, e.g. "
                        "'gemm-min-reduction=1'")
    p.add_argument("--build-dir")
    p.add_argument("--check", action="store_true",
                   help="exit 1 on a spill or a broken accumulation invariant")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    build = find_build_dir(args.build_dir)
    reports = [report_step(s, args, build) for s in args.steps]
    if args.json:
        print(json.dumps(reports, indent=1))
    else:
        for r in reports:
            print_report(r)
    if args.check and any(r["problems"] for r in reports):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
