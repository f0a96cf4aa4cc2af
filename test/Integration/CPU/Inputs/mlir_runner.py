"""Lowers a module with `ga-opt --ga-lower-to-cpu` and runs its @main under
mlir-runner: the common step of the oracles beside it (softmax, grouped
products, attention, math functions), which then compare what @main printed
with numpy in float64."""

import os
import re
import subprocess

import numpy as np


def lower_and_run(args, src, options=""):
    """The stdout of @main of `src` lowered with --ga-lower-to-cpu=`options`
    (args.bin: ga-opt's directory; args.tools: mlir-runner's; args.libdir:
    its runtime libraries), and the lowered module. RuntimeError with the
    tool's stderr when lowering or running fails."""
    flag = "--ga-lower-to-cpu" + ("=" + options if options else "")
    lowered = subprocess.run([os.path.join(args.bin, "ga-opt"), flag],
                             input=src, capture_output=True, text=True)
    if lowered.returncode:
        raise RuntimeError("ga-lower-to-cpu failed:\n" + lowered.stderr)
    libs = ",".join(os.path.join(args.libdir, lib) for lib in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    out = subprocess.run([os.path.join(args.tools, "mlir-runner"), "-e",
                          "main", "-entry-point-result=void",
                          "-shared-libs=" + libs],
                         input=lowered.stdout, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError("mlir-runner failed:\n" + out.stderr)
    return out.stdout, lowered.stdout


def printed_integers(text):
    """The integers of a printed memref's `data = ...` (int64), the bit
    patterns the oracles' @main prints."""
    data = text[text.index("data =") + 6:]
    return np.array([int(v) for v in re.findall(r"-?\d+", data)],
                    dtype=np.int64)


def add_tool_arguments(parser):
    """The folders lower_and_run reads (--bin, --tools, --libdir)."""
    parser.add_argument("--bin", required=True, help="folder of ga-opt")
    parser.add_argument("--tools", required=True,
                        help="folder of mlir-runner")
    parser.add_argument("--libdir", required=True,
                        help="folder of the mlir runner libraries")
