# RUN: %python %s %ga_src_root | FileCheck %s
#
# The sibling of no-pipeline-strings.py for the tools beside the package:
# bench/ and scripts/ read what the compiler says as data, never as text
# through regular expressions. IR, PTX and launches come from the kernel
# report (ga-opt --ga-gpu-kernel-report=format=json, docs/GPU.md), pass
# timings from MLIR's JSON timing report, a step's types from the parsed IR;
# the one tool log that has no structured form (ptxas -v) is read by words
# in bench/gpu_ptx.py. So the rule is simple: no Python file under bench/ or
# scripts/ imports the `re` module (read with `ast`, so `from re import
# search` and `import re as r` count too).

import ast
import os
import sys

root = sys.argv[1]


def findings(path, text=None):
    """(line, what) of each import of the `re` module in a source file."""
    tree = ast.parse(text if text is not None else open(path).read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "re":
                    yield node.lineno, "import re"
        elif isinstance(node, ast.ImportFrom) and node.module == "re":
            yield node.lineno, "from re import"


# The rule finds what it is for (a source written here: one case a line).
SAMPLE = """import json
import re
from re import search
import re as regex
import resource
"""
print("sample:", list(findings("sample.py", SAMPLE)))
# CHECK: sample: [(2, 'import re'), (3, 'from re import'), (4, 'import re')]

paths = []
for top in ("bench", "scripts"):
    for folder, _, names in os.walk(os.path.join(root, top)):
        paths += [os.path.join(folder, n) for n in sorted(names)
                  if n.endswith(".py")]
failed = 0
for path in sorted(paths):
    for line, what in findings(path):
        print(f"{os.path.relpath(path, root)}:{line}: {what}")
        failed += 1
print(f"{len(paths)} files under bench/ and scripts/: {failed} imports of re")
# CHECK: {{[0-9]+}} files under bench/ and scripts/: 0 imports of re
sys.exit(1 if failed else 0)
