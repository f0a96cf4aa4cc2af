"""Counts the cuBLASLt calls in host code lowered by --ga-lower-to-nvvm.

usage: count_cublaslt_calls.py LOWERED.mlir [NAME]

Prints one line per call (entry point, transposes, m n k, batch count, beta,
resolved from the llvm.mlir.constant ops of the host code, and whether a bias
pointer is passed) and a summary: calls, plain and batched ones, how many with
beta = 1 and beta = 0, with a bias epilogue, and how many distinct stream
values they are given.
"""
import re
import sys

# Operand positions, after the stream (operand 0).
POSITIONS = {
    "gaCublasLtMatmul": {"ta": 1, "tb": 2, "m": 3, "n": 4, "k": 5, "beta": 15},
    "gaCublasLtMatmulStridedBatched": {"ta": 1, "tb": 2, "m": 3, "n": 4, "k": 5,
                                       "batch": 15, "beta": 19},
}


def main():
    text = open(sys.argv[1]).read()
    name = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
    constants = {}
    for m in re.finditer(r"(%\w+) = llvm\.mlir\.constant\(([-+0-9.e]+) : \w+\)", text):
        constants[m.group(1)] = float(m.group(2))
    nulls = set(re.findall(r"(%\w+) = llvm\.mlir\.zero : !llvm\.ptr", text))
    calls = []
    for m in re.finditer(r"llvm\.call @(gaCublasLt\w+)\(([^)]*)\)", text):
        ops = [x.strip() for x in m.group(2).split(",")]
        pos = POSITIONS[m.group(1)]
        value = {key: constants.get(ops[p]) for key, p in pos.items()}
        bias = m.group(1) == "gaCublasLtMatmul" and ops[16] not in nulls
        calls.append((m.group(1), ops[0], value, bias))
        print("%s: %s transA=%g transB=%g m=%g n=%g k=%g%s beta=%g%s" % (
            name, m.group(1), value["ta"], value["tb"], value["m"], value["n"],
            value["k"], " batch=%g" % value["batch"] if "batch" in value else "",
            value["beta"], " bias" if bias else ""))
    batched = sum(1 for c in calls if c[0].endswith("StridedBatched"))
    print("%s: %d calls (%d plain, %d batched), beta = 1: %d, beta = 0: %d, "
          "bias epilogues: %d, streams: %d" % (
              name, len(calls), len(calls) - batched, batched,
              sum(1 for c in calls if c[2]["beta"] == 1.0),
              sum(1 for c in calls if c[2]["beta"] == 0.0),
              sum(1 for c in calls if c[3]), len({c[1] for c in calls})))


if __name__ == "__main__":
    main()
