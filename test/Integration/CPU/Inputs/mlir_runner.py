"""Lowers a module with `ga-opt --ga-lower-to-cpu` and runs its @main under
mlir-runner: the common step of the oracles beside it (softmax, grouped
products, attention, math functions), which then compare what @main printed
with numpy in float64. Also what their @main and their report share."""

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


def tensor_type(shape, ty):
    """`tensor<AxBx...xty>` of `shape`."""
    return "tensor<%s%s>" % ("".join("%dx" % s for s in shape), ty)


def printer_declaration(ity):
    """The declaration of the runner's printer of `ity` tensors."""
    return "func.func private @printMemref%s(tensor<*x%s>)" % (ity.upper(),
                                                                ity)


def print_bits(value, shape, ty, ity):
    """The lines of @main that print the tensor `value` (of `shape`, element
    type `ty`) as the bit patterns of its elements: bitcast elementwise to
    `ity` (an integer type of ty's width), cast to an unranked tensor and
    printed (printer_declaration(ity) declares the printer)."""
    t, it = tensor_type(shape, ty), tensor_type(shape, ity)
    ids = ", ".join("d%d" % i for i in range(len(shape)))
    imap = "affine_map<(%s) -> (%s)>" % (ids, ids)
    par = ", ".join(['"parallel"'] * len(shape))
    return f"""  %bits = tensor.empty() : {it}
  %bitcast = linalg.generic {{indexing_maps = [{imap}, {imap}],
                             iterator_types = [{par}]}}
      ins({value} : {t}) outs(%bits : {it}) {{
  ^bb0(%v: {ty}, %o: {ity}):
    %c = arith.bitcast %v : {ty} to {ity}
    linalg.yield %c : {ity}
  }} -> {it}
  %unranked = tensor.cast %bitcast : {it} to tensor<*x{ity}>
  call @printMemref{ity.upper()}(%unranked) : (tensor<*x{ity}>) -> ()"""


def report(results):
    """Prints `PASS name` or `FAIL name: message` for each (name, message
    or None) of `results` (run one by one), then the counts; returns the
    exit status (1 when one failed)."""
    failed = total = 0
    for name, msg in results:
        print("%s %s%s" % ("FAIL" if msg else "PASS", name,
                           ": " + msg if msg else ""))
        failed += bool(msg)
        total += 1
    print("%d cases, %d failed" % (total, failed))
    return 1 if failed else 0
