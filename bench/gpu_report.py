#!/usr/bin/env python3
# ===- gpu_report.py - static figures of the kernels of a GPU-lowered step -===#
#
#   python3 bench/gpu_report.py STEP.mlir [STEP.mlir ...] [--micro-batches N]
#       [--chip sm_90] [--build-dir DIR] [--check] [--json]
#
# For each training step, without a GPU:
#   1. ga-opt --ga-accumulate --ga-lower-to-gpu-kernels, read as it is before
#      its last pass (--mlir-print-ir-before=ga-lower-library-ops): the host
#      code (which launches run before, inside and after the micro-batch
#      loops, the graph captures), the library ops (`ga.blas_matmul`) and the
#      kernel bodies (which buffers each kernel reads and writes);
#   2. ga-opt --ga-lower-to-nvvm=format=isa: the PTX of every kernel, then
#      `ptxas -arch=<chip> -v` on it: registers, spill stores/loads, stack,
#      shared memory, barriers per kernel; PTX instructions per kernel.
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
import re
import subprocess
import sys

from gpu_ptx import (extract_ptx, find_ptxas, ptx_instruction_counts,
                     ptx_op_classes, run_ptxas)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ELEM_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4,
              "i16": 2, "i8": 1, "i1": 1, "index": 8}


# ===----------------------------------------------------------------------===#
# Tools
# ===----------------------------------------------------------------------===#

def find_build_dir(arg):
    for d in [arg, os.environ.get("GA_BUILD_DIR"),
              os.path.join(ROOT, "build-gpu"), os.path.join(ROOT, "build")]:
        if d and os.path.exists(os.path.join(d, "bin", "ga-opt")):
            return d
    sys.exit("gpu_report: no ga-opt; pass --build-dir or set GA_BUILD_DIR")


def run_ga_opt(ga_opt, step, passes, before=None):
    """The output of ga-opt `passes` on `step`; with `before` (a pass's
    flag), the module as it was before that pass ran instead (upstream's
    --mlir-print-ir-before, the first such dump)."""
    if before:
        passes = passes + ["--mlir-print-ir-before=" + before, "-o",
                           os.devnull]
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(find_ptxas()) + os.pathsep + env["PATH"]
    # libdevice (math functions in kernels) is found through the toolkit.
    if not any(env.get(v) for v in ("CUDA_HOME", "CUDA_ROOT", "CUDA_PATH")):
        env["CUDA_HOME"] = os.path.dirname(os.path.dirname(find_ptxas()))
    r = subprocess.run([ga_opt, step] + passes, capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        sys.exit("gpu_report: ga-opt %s failed on %s:\n%s" %
                 (" ".join(passes), step, r.stderr))
    if not before:
        return r.stdout
    dumps = re.split(r"(?m)^// -----// IR Dump Before .*//----- //\n",
                     r.stderr)
    if len(dumps) < 2:
        sys.exit("gpu_report: ga-opt %s ran no %s on %s" %
                 (" ".join(passes), before, step))
    return dumps[1]


# ===----------------------------------------------------------------------===#
# PTX and ptxas
# ===----------------------------------------------------------------------===#

# ===----------------------------------------------------------------------===#
# Host structure (--ga-lower-to-gpu-kernels output)
# ===----------------------------------------------------------------------===#

def memref_bytes(t):
    m = re.match(r"memref<(.*)>", t.strip())
    if not m:
        return None
    parts = m.group(1).split(",")[0].split("x")
    elem = parts[-1].strip()
    n = 1
    for d in parts[:-1]:
        if not d.strip().isdigit():
            return None
        n *= int(d)
    return n * ELEM_BYTES.get(elem, 4)


def const_value(name):
    m = re.match(r"%c(\d+)(_\d+)?$", name)
    return int(m.group(1)) if m else None


def split_types(s):
    """'memref<2x3xf32, strided<[3, 1]>>, memref<4xf32>' -> the types (the
    parts of `s` between its top-level commas)."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def split_args(s):
    """'%a : memref<2x3xf32, strided<[3, 1]>>, %b : f32' -> [(a, type)]."""
    res = []
    for a in split_types(s):
        name, _, typ = a.partition(":")
        res.append((name.strip(), typ.strip()))
    return res


def memref_shape(t):
    """'memref<2x3xbf16, ...>' -> ([2, 3], 'bf16')."""
    parts = re.match(r"memref<([^,>]*)", t.strip()).group(1).split("x")
    return [int(d) if d.isdigit() else None for d in parts[:-1]], parts[-1]


# A library product as its op prints it (include/ga/IR/GALibraryOps.td):
# `ga.blas_matmul async [deps] lhs, rhs, out bias(b : type) {attrs} : types`.
BLAS_MATMUL = re.compile(
    r"ga\.blas_matmul(?: async)?(?: \[[^\]]*\])? (%\w+), (%\w+), (%\w+)"
    r"(?: bias\((%\w+) : [^)]*\))?\s*(\{[^}]*\})?\s*: (.*)$")


def record_source(step, s):
    """Where a view comes from: the buffer that it is a view of."""
    m = re.match(r"(%\w+) = (?:memref\.subview|memref\.expand_shape|"
                 r"memref\.collapse_shape|memref\.reinterpret_cast) (%\w+)",
                 s)
    if m:
        step["sources"][m.group(1)] = m.group(2)


def buffer_of(step, value):
    seen = set()
    while value in step["sources"] and value not in seen:
        seen.add(value)
        value = step["sources"][value]
    return value


def library_product(step, m, loop):
    """A `ga.blas_matmul` as a launch: it reads lhs and rhs, and out unless
    beta = 0 (without {accumulate}), and writes out. Its figures come from
    the op: out is [batch x] M x N, lhs [batch x] M x K (K x M with
    transpose_lhs)."""
    lhs, rhs, out, bias, attrs, types = m.groups()
    attrs = {a.strip() for a in (attrs or "{}")[1:-1].split(",")}
    (a_shape, a_type), (b_shape, b_type), (c_shape, c_type) = [
        memref_shape(t) for t in split_types(types)[:3]]
    k = a_shape[-2] if "transpose_lhs" in attrs else a_shape[-1]
    batch = c_shape[0] if len(c_shape) == 3 else 1
    n = sum(1 for l in step["launches"] if l.get("library"))
    return {"kernel": "blas_matmul#%d" % n, "library": True,
            "beta": 1.0 if "accumulate" in attrs else 0.0,
            "product": {"batch": batch, "m": c_shape[-2], "n": c_shape[-1],
                        "k": k, "types": "%s x %s -> %s" % (a_type, b_type,
                                                            c_type),
                        "bias": bias is not None},
            "grid": [], "block": [], "args": [], "loop": loop,
            "buffers": {"a": buffer_of(step, lhs), "b": buffer_of(step, rhs),
                        "c": buffer_of(step, out)}}


def parse_kernels_stage(text):
    """Launches (with loop nesting), allocations and kernel bodies."""
    step = {"launches": [], "allocs": {}, "kernels": {}, "loops": 0,
            "memcpy_in_loop": 0, "sources": {}, "host_syncs": [],
            "captured_loops": set()}
    lines = text.splitlines()
    # Host functions: everything before the first gpu.module.
    stack = []  # "for" or "other"
    loop_id = 0
    in_gpu_module = False
    replay = False
    kernel = None
    for line in lines:
        s = line.strip()
        if s.startswith("gpu.module"):
            in_gpu_module = True
        if in_gpu_module:
            m = re.match(r"gpu\.func @(\w+)\((.*?)\) kernel", s)
            if m:
                kernel = {"params": [a for a, _ in split_args(m.group(2))],
                          "stores": set(), "loads": set(), "first": {}}
                step["kernels"][m.group(1)] = kernel
                continue
            if kernel is not None:
                for a in re.findall(r"memref\.store [^,]+, (%\w+)\[", s):
                    kernel["stores"].add(a)
                    kernel["first"].setdefault(a, "write")
                for a in re.findall(r"memref\.load (%\w+)\[", s):
                    kernel["loads"].add(a)
                    kernel["first"].setdefault(a, "read")
            continue
        opens, closes = s.count("{"), s.count("}")
        depth_loops = [x for x in stack if x.startswith("for")]
        m = re.match(r"(%\w+), %\w+ = gpu\.alloc .*: (memref<.*>)$", s)
        if m:
            step["allocs"][m.group(1)] = {"type": m.group(2),
                                          "loop": depth_loops[-1] if depth_loops else None}
        if "gpu.memcpy" in s and depth_loops:
            step["memcpy_in_loop"] += 1
        if re.match(r"ga\.stream_synchronize ", s):
            step["host_syncs"].append(depth_loops[0] if depth_loops else None)
        record_source(step, s)
        m = BLAS_MATMUL.search(s)
        if m:
            step["launches"].append(library_product(
                step, m, depth_loops[0] if depth_loops else None))
        m = re.search(r"gpu\.launch_func .*?@(\w+)::@(\w+) blocks in \(([^)]*)\) "
                      r"threads in \(([^)]*)\)\s*(?:args\((.*)\))?", s)
        if m:
            grid = [const_value(x.strip()) for x in m.group(3).split(",")]
            block = [const_value(x.strip()) for x in m.group(4).split(",")]
            args = split_args(m.group(5)) if m.group(5) else []
            step["launches"].append({
                "kernel": m.group(2), "grid": grid, "block": block,
                "args": args,
                "loop": depth_loops[0] if depth_loops else None})
        # Nesting (a line can close one region and open another).
        net = opens - closes
        if s.startswith("}") and net >= 0 and opens:
            continue  # "} else {"
        # A micro-batch loop captured as a CUDA graph (ga-capture-cuda-graphs):
        # the launches of the ga.graph_capture region run once per iteration
        # of the loop that follows, which launches only the graph.
        if net > 0 and re.match(r"(%[^=]+= )?ga\.graph_capture ", s):
            loop_id += 1
            stack.append("for%d" % loop_id)
            step["captured_loops"].add("for%d" % loop_id)
            if len([x for x in stack if x.startswith("for")]) == 1:
                step["loops"] += 1
            continue
        if net > 0 and replay and re.match(r"(%\S+ = )?scf\.for ", s):
            stack.append("other")
            replay = False
            continue
        if net > 0:
            if s.startswith("scf.for") or re.match(r"(%\S+ = )?scf\.for ", s):
                loop_id += 1
                stack.append("for%d" % loop_id)
                if len([x for x in stack if x.startswith("for")]) == 1:
                    step["loops"] += 1
            else:
                stack.append("other")
        elif net < 0 and stack:
            for _ in range(-net):
                if stack and stack.pop() in step["captured_loops"]:
                    replay = True
    return step


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
            operand = dict(zip(k["params"], [a for a, _ in l["args"]]))
            index_buffers |= {operand.get(p) for p in k["stores"]}
    for l in step["launches"]:
        if l.get("library"):
            # The call as a kernel whose parameters are its buffers.
            b = l["buffers"]
            step["kernels"][l["kernel"]] = {
                "params": ["a", "b", "c"], "stores": {"c"},
                "loads": {"a", "b"} | ({"c"} if l["beta"] != 0.0 else set())}
            l["args"] = [(b["a"], ""), (b["b"], ""), (b["c"], "")]
        k = step["kernels"].get(l["kernel"], {"params": [], "stores": set(),
                                               "loads": set()})
        operand = dict(zip(k["params"], [a for a, _ in l["args"]]))
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
                acc_bytes += 2 * (memref_bytes(step["allocs"][buf]["type"]) or 0)
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
                             "bytes": memref_bytes(step["allocs"][buf]["type"]),
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
            if not re.search(r"_(matmul|gemm|reduce)_acc$", w):
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
    # The kernel stage before its last pass: the library products are
    # still ga.blas_matmul ops, the graph captures ga.graph_capture regions.
    kernels_text = run_ga_opt(ga_opt, path, acc + [
        "--ga-lower-to-gpu-kernels=" + extra.strip()] if extra else
        acc + ["--ga-lower-to-gpu-kernels"], before="ga-lower-library-ops")
    isa_text = run_ga_opt(ga_opt, path, acc + [
        "--ga-lower-to-nvvm=format=isa chip=%s%s" % (args.chip, extra)])
    step = parse_kernels_stage(kernels_text)
    ptx_stats, counts, classes = {}, {}, {}
    for module, ptx in extract_ptx(isa_text).items():
        ptx_stats.update(run_ptxas(ptx, args.chip))
        counts.update(ptx_instruction_counts(ptx))
        classes.update(ptx_op_classes(ptx))
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
        kind = re.sub(r"^.*_k\d+_", "", k["kernel"])
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
        a = p.parse_args(sys.argv[2:])
        text = open(a.mlir).read()
        status = 0
        for module, ptx in sorted(extract_ptx(text).items()):
            counts = ptx_instruction_counts(ptx)
            stats = run_ptxas(ptx, a.chip)
            print("module %s: %d kernels (ptxas -arch=%s)" % (module, len(stats),
                                                             a.chip))
            for name, s in sorted(stats.items()):
                spills = s["spill_stores"] + s["spill_loads"]
                print("  %-40s registers %3d  spill stores %d  spill loads %d"
                      "  smem %d  ptx %d" % (name, s["registers"],
                                            s["spill_stores"], s["spill_loads"],
                                            s["smem"], counts.get(name, 0)))
                if a.max_spills is not None and spills > a.max_spills:
                    status = 1
            total = sum(s["spill_stores"] + s["spill_loads"]
                        for s in stats.values())
            print("  total spill bytes: %d" % total)
        if not extract_ptx(text):
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
