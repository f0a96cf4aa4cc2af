# RUN: %python %s %ga_src_root | FileCheck %s
#
# The import graph of the Python package (python/ga_mlir) and of the GPU
# acceptance kit (scripts/gpu_kit) has no cycle: every import, at module
# level or inside a function, points down the layers. A function-local
# import is how a cycle hides (it runs after both modules are loaded), so
# this reads every `import` statement with `ast`, wherever it is, and
# fails on each strongly connected component of more than one module (or a
# module importing itself), naming its modules.
#
# ALLOWED lists the cycles that remain, each with its reason; it is empty.

import ast
import os
import sys

root = sys.argv[1]

# Cycles that are allowed, as frozensets of module names, with the reason.
ALLOWED = {}


def modules(directory, package):
    """{module name: path} of the .py files under `directory`, named as
    `package` (None: top-level scripts, named by file)."""
    found = {}
    for dirpath, _, files in os.walk(directory):
        if "__pycache__" in dirpath:
            continue
        rel = os.path.relpath(dirpath, directory)
        parts = [] if rel == "." else rel.split(os.sep)
        for f in files:
            if not f.endswith(".py"):
                continue
            stem = f[:-3]
            names = ([package] if package else []) + parts
            if stem != "__init__":
                names.append(stem)
            found[".".join(names)] = os.path.join(dirpath, f)
    return found


def imports(name, path, known, is_package):
    """The modules of `known` that the module `name` imports anywhere."""
    tree = ast.parse(open(path).read(), path)
    base = name if is_package else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base
                for _ in range(node.level - 1):
                    parent = parent.rpartition(".")[0]
                module = ".".join(p for p in (parent, node.module) if p)
            else:
                module = node.module or ""
            # `from . import x` and `from .a import b`: the module x when it
            # is one, else the module the names come from.
            named = [f"{module}.{a.name}" for a in node.names]
            targets = [t for t in named if t in known]
            if len(targets) < len(named):
                targets.append(module)
        else:
            continue
        for t in targets:
            # A module, or the package that holds it (its __init__ runs).
            while t and t not in known:
                t = t.rpartition(".")[0]
            # A package that holds this module is already being imported
            # when this module runs: not an edge.
            if t and not (name + ".").startswith(t + "."):
                out.add(t)
    return out


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(frozenset(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


failed = False
for what, directory, package in (
        ("ga_mlir", os.path.join(root, "python", "ga_mlir"), "ga_mlir"),
        ("gpu_kit", os.path.join(root, "scripts", "gpu_kit"), None)):
    known = modules(directory, package)
    graph = {}
    for name, path in known.items():
        graph[name] = imports(name, path, known,
                              path.endswith("__init__.py"))
    found = [c for c in cycles(graph) if c not in ALLOWED]
    for c in found:
        print(f"{what}: import cycle: {' <-> '.join(sorted(c))}")
        failed = True
    print(f"{what}: {len(known)} modules, {sum(map(len, graph.values()))} "
          f"imports, {len(found)} cycles")

print("FAILED" if failed else "no import cycle")
# CHECK: ga_mlir: {{[0-9]+}} modules, {{[0-9]+}} imports, 0 cycles
# CHECK: gpu_kit: {{[0-9]+}} modules, {{[0-9]+}} imports, 0 cycles
# CHECK: no import cycle
sys.exit(1 if failed else 0)
