#!/usr/bin/env python3
# ===- gpu_ptx.py - PTX of a GPU-lowered step, and what ptxas says of it ---===#
#
# The PTX side of bench/gpu_report.py (also used by the frontend's CUDA-target
# test): the PTX strings embedded in `--ga-lower-to-nvvm=format=isa` output,
# their instruction counts per kernel, and `ptxas -arch=<chip> -v` figures per
# kernel (registers, spills, stack, shared memory, barriers). No GPU needed.
#
# ===----------------------------------------------------------------------===#

import os
import re
import shutil
import subprocess
import sys
import tempfile

def find_ptxas():
    p = shutil.which("ptxas")
    if p:
        return p
    for d in [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_ROOT"),
              "/usr/local/cuda"]:
        if d and os.path.exists(os.path.join(d, "bin", "ptxas")):
            return os.path.join(d, "bin", "ptxas")
    sys.exit("gpu_report: ptxas not found (PATH, CUDA_HOME, /usr/local/cuda)")


def unescape_mlir_string(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            n = s[i + 1]
            if n in "\\\"":
                out.append(ord(n))
                i += 2
            elif n == "n":
                out.append(10)
                i += 2
            elif n == "t":
                out.append(9)
                i += 2
            else:
                out.append(int(s[i + 1:i + 3], 16))
                i += 3
        else:
            out.extend(c.encode())
            i += 1
    return out.decode()


def extract_ptx(mlir_text):
    """PTX of every gpu.binary of a format=isa output: {module: ptx}."""
    result = {}
    for m in re.finditer(r'gpu\.binary @(\w+)\s*\[#gpu\.object<.*?assembly = "',
                         mlir_text):
        start = m.end()
        i = start
        while True:
            if mlir_text[i] == "\\":
                i += 2
                continue
            if mlir_text[i] == '"':
                break
            i += 1
        result[m.group(1)] = unescape_mlir_string(mlir_text[start:i])
    return result


PTX_CLASSES = [("ld.global", r"^ld\.global"), ("st.global", r"^st\.global"),
               ("ld.shared", r"^ld\.shared"), ("st.shared", r"^st\.shared"),
               ("fp", r"^(fma|mad|mul|add|sub)(\.r[nmpz])?(\.ftz)?\.f(32|64)"),
               ("bar", r"^bar\.")]


def ptx_op_classes(ptx):
    """Per kernel: static counts of global/shared loads and stores,
    floating-point add/sub/mul/fma and barriers (after LLVM's unrolling)."""
    out, current = {}, None
    for line in ptx.splitlines():
        m = re.match(r"\s*\.(?:visible\s+)?\.entry\s+(\w+)\(", line)
        if m:
            current = m.group(1)
            out[current] = {k: 0 for k, _ in PTX_CLASSES}
            continue
        s = line.strip()
        if current is None:
            continue
        s = re.sub(r"^@%?!?\w+\s+", "", s)  # predicate
        for k, pat in PTX_CLASSES:
            if re.match(pat, s):
                out[current][k] += 1
    return out


def ptx_instruction_counts(ptx):
    counts, current = {}, None
    for line in ptx.splitlines():
        m = re.match(r"\s*\.(?:visible\s+)?\.entry\s+(\w+)\(", line)
        if m:
            current = m.group(1)
            counts[current] = 0
            continue
        s = line.strip()
        if current is None or not s or s.startswith((".", "//", "{", "}")):
            continue
        if s.endswith(":"):
            continue  # label
        if s.endswith(";"):
            counts[current] += 1
    return counts


def run_ptxas(ptx, chip):
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
    for line in (r.stdout + r.stderr).splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            name = m.group(1)
            kernels[name] = {"registers": 0, "spill_stores": 0,
                             "spill_loads": 0, "stack": 0, "smem": 0,
                             "barriers": 0}
            continue
        if name is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m:
            k = kernels[name]
            k["stack"], k["spill_stores"], k["spill_loads"] = map(int,
                                                                   m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            kernels[name]["registers"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            if b:
                kernels[name]["barriers"] = int(b.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            if s:
                kernels[name]["smem"] = int(s.group(1))
    return kernels
