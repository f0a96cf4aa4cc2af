#!/usr/bin/env python3
"""Makes a data-parallel step of a corpus step: every SGD update
`%pn = linalg.generic ... ins(%p, %dp : T, T)` reads `ga.all_reduce <mean>`
of its gradient instead (the gradient averaged over the ranks).

usage: data_parallel.py step.mlir > dp_step.mlir
"""
import re
import sys

UPDATE = re.compile(r"ins\(%(\w+), %d\1 : (tensor<[^>]*>), tensor<[^>]*>\)")


def main():
    lines = open(sys.argv[1]).read().splitlines()
    out, reduced = [], 0
    for line in lines:
        match = UPDATE.search(line)
        if match and out and "linalg.generic" in out[-1]:
            name, type_ = match.group(1), match.group(2)
            statement = out.pop()
            indent = statement[: len(statement) - len(statement.lstrip())]
            out.append(f"{indent}%d{name}_dp = ga.all_reduce <mean> %d{name} : {type_}")
            out.append(statement)
            line = line.replace(match.group(0),
                                f"ins(%{name}, %d{name}_dp : {type_}, {type_})")
            reduced += 1
        out.append(line)
    if not reduced:
        sys.exit(f"{sys.argv[1]}: no SGD update found")
    print("\n".join(out))


if __name__ == "__main__":
    main()
