#!/usr/bin/env python3
# ===- gpu_ptx.py - PTX of a GPU-lowered step, and what ptxas says of it ---===#
#
# The PTX side of bench/gpu_report.py (also used by the frontend's CUDA-target
# test): the compiler's kernel report as JSON (`ga-opt
# --ga-gpu-kernel-report=format=json`, docs/GPU.md "The kernel report as
# JSON"), which carries the PTX of every gpu.binary of a format=isa module and
# its instruction counts per kernel, and `ptxas -arch=<chip> -v` figures per
# kernel (registers, spills, stack, shared memory, barriers). No GPU needed.
# Nothing here reads IR text.
#
# ===----------------------------------------------------------------------===#

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_ptxas():
    p = shutil.which("ptxas")
    if p:
        return p
    for d in [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_ROOT"),
              "/usr/local/cuda"]:
        if d and os.path.exists(os.path.join(d, "bin", "ptxas")):
            return os.path.join(d, "bin", "ptxas")
    sys.exit("gpu_report: ptxas not found (PATH, CUDA_HOME, /usr/local/cuda)")


def find_build_dir(arg=None):
    """The build with bin/ga-opt: `arg`, $GA_BUILD_DIR, build-gpu, build, or
    the one whose ga-opt is on PATH (lit's)."""
    on_path = shutil.which("ga-opt")
    for d in [arg, os.environ.get("GA_BUILD_DIR"),
              os.path.join(ROOT, "build-gpu"), os.path.join(ROOT, "build"),
              os.path.dirname(os.path.dirname(on_path)) if on_path else None]:
        if d and os.path.exists(os.path.join(d, "bin", "ga-opt")):
            return d
    sys.exit("gpu_report: no ga-opt; pass --build-dir or set GA_BUILD_DIR")


def toolkit_env():
    """The environment for ga-opt's serialization: ptxas on PATH, and the
    toolkit (libdevice for math functions in kernels) through CUDA_HOME."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(find_ptxas()) + os.pathsep + env["PATH"]
    if not any(env.get(v) for v in ("CUDA_HOME", "CUDA_ROOT", "CUDA_PATH")):
        env["CUDA_HOME"] = os.path.dirname(os.path.dirname(find_ptxas()))
    return env


def kernel_report(ga_opt, source, passes=(), text=None):
    """The compiler's kernel report (JSON) of `source` (a file, or "-" with
    `text`) after ga-opt `passes`; (None, stderr) when ga-opt fails."""
    r = subprocess.run([ga_opt, source] + list(passes) +
                       ["--ga-gpu-kernel-report=format=json", "-o",
                        os.devnull], input=text, capture_output=True,
                       text=True, env=toolkit_env())
    if r.returncode != 0:
        return None, r.stderr
    return json.loads(r.stdout), r.stderr


def extract_ptx(mlir_text, build_dir=None):
    """PTX of every gpu.binary of a format=isa output: {module: ptx}."""
    ga_opt = os.path.join(find_build_dir(build_dir), "bin", "ga-opt")
    report, err = kernel_report(ga_opt, "-", text=mlir_text)
    if report is None:
        sys.exit("gpu_report: ga-opt cannot read the module:\n" + err)
    return {b["module"]: b["assembly"] for b in report["ptx"]}


def ptx_kernel_counts(report):
    """{kernel: {"instructions": n, "ld.global": n, ..., "bar": n}} of the
    PTX in a kernel report (static counts, after LLVM's unrolling)."""
    counts = {}
    for binary in report["ptx"]:
        counts.update(binary["kernels"])
    return counts


# ptxas -v writes its figures only as an info log (CUDA 13 has no structured
# form without a GPU: `cuobjdump -res-usage` and nvPTXCompilerGetInfoLog are
# the same text, cuFuncGetAttribute needs a device). This is the one parser
# of that log, by words rather than patterns, for lines such as
#   ptxas info    : Compiling entry function 'k' for 'sm_90'
#   ptxas info    : Function properties for k
#       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
#   ptxas info    : Used 12 registers, used 1 barriers, 64 bytes smem, ...

def _ptxas_line(line, figures):
    """Reads the `<number> <what>` items of one ptxas log line into
    `figures` (a kernel's)."""
    for item in line.split(":", 1)[-1].split(","):
        words = item.split()
        numbers = [i for i, w in enumerate(words) if w.isdigit()]
        if not numbers:
            continue
        i = numbers[-1]
        value, what = int(words[i]), words[i + 1:]
        if what[:2] == ["bytes", "stack"]:
            figures["stack"] = value
        elif what[:3] == ["bytes", "spill", "stores"]:
            figures["spill_stores"] = value
        elif what[:3] == ["bytes", "spill", "loads"]:
            figures["spill_loads"] = value
        elif what[:1] == ["registers"] and words[:1] == ["Used"]:
            figures["registers"] = value
        elif what[:1] == ["barriers"]:
            figures["barriers"] = value
        elif what[:2] == ["bytes", "smem"]:
            figures["smem"] = value


def run_ptxas(ptx, chip):
    """`ptxas -arch=<chip> -v` on `ptx`: {kernel: {registers, spill_stores,
    spill_loads, stack, smem, barriers}}."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        r = subprocess.run([find_ptxas(), "-arch=" + chip, "-v", src, "-o",
                            os.path.join(tmp, "k.cubin")],
                           capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("gpu_report: ptxas -arch=%s failed:\n%s" % (chip, r.stderr))
    kernels, name = {}, None
    marker = "Compiling entry function '"
    for line in (r.stdout + r.stderr).splitlines():
        if marker in line:
            name = line.split(marker, 1)[1].split("'", 1)[0]
            kernels[name] = {"registers": 0, "spill_stores": 0,
                             "spill_loads": 0, "stack": 0, "smem": 0,
                             "barriers": 0}
        elif name is not None:
            _ptxas_line(line, kernels[name])
    return kernels
