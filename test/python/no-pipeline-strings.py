# RUN: %python %s %ga_src_root | FileCheck %s
#
# The Python package (python/ga_mlir: the PyTorch frontend in torch/, the
# driver's Python side driver.py, steplib.py and the other modules) speaks
# to ga-mlir's compiler through typed options only (ga_mlir.driver.CompileOptions, include/ga-c/Driver.h): no
# pass pipeline text is built, no ga-mlir pipeline is run by name, and no
# regular expression reads a diagnostic or IR text (diagnostics carry their
# codes: ga_mlir.Diagnostic, _locations.ADVICE). Read with `ast`, so that a
# pipeline string in an f-string or a regex in a helper is found too:
#
# - a string (or a constant part of an f-string) that reads as a pass
#   pipeline: `builtin.module(`, `func.func(`, `ga-<pass>{`, `--ga-<pass>=`;
# - a call of run_pipeline or of a PassManager's parse;
# - a call of the `re` module.
#
# Each remaining one is listed in ALLOWED by module and function, with the
# reason; a new one fails. A call of `re` on a location or a diagnostic (an
# argument that names a location, message, diagnostic or note:
# str(op.location), diagnostic.message) fails even there: locations are read
# as data (_mlir_locations, Diagnostic.file/line) and diagnostics by their
# codes. ga_mlir.aot (ga-compile's command line) is not
# read: it maps the command line's option text onto the driver's options
# (its `name=value` options are read by shlex, not by this rule's regex).

import ast
import os
import re
import sys

root = sys.argv[1]

PIPELINE = re.compile(r"builtin\.module\(|func\.func\(|\bga-[a-z0-9-]+\{|"
                      r"--ga-[a-z0-9-]+=")

# (module, function) -> why it may.
ALLOWED = {
    ("__main__.py", "main"):
        "`python -m ga_mlir`: runs the pipeline its user gives on the "
        "command line, as ga-opt does",
    ("steplib.py", "derived_tolerances"):
        "ga-verify's tolerance analyses (--ga-forward-error-bound, "
        "--ga-perturb-roundings) on the step as it is; no driver target "
        "runs them",
    ("train_mlir.py", "run"):
        "ga-opt --ga-memory-report as a command over the full-batch step "
        "and a sweep of N (the driver's report target gives one rewritten "
        "N)",
    ("torch/_rolled.py", "import_rolled"):
        "upstream inline, symbol-dce and LICM on torch-mlir's own MLIR "
        "(its bundled PassManager), before the step crosses to ga-mlir",
    ("torch/_cache.py", "_host_cpu"):
        "llc's --version output (the host CPU), not ga-mlir's",
    ("torch/_compare.py", "_safe"):
        "a file name made from a model's name",
}


# Names whose text a regex must not read: MLIR locations and diagnostics.
IR_OR_DIAGNOSTIC = ("location", "loc", "message", "diagnostic", "note")


def reads_ir_or_diagnostic(call):
    """Whether an argument of a call names a location or a diagnostic (a
    name or attribute such as op.location, str(location), error.message)."""
    for argument in [*call.args, *(k.value for k in call.keywords)]:
        for node in ast.walk(argument):
            name = node.attr if isinstance(node, ast.Attribute) else \
                node.id if isinstance(node, ast.Name) else ""
            words = name.lower().strip("_").split("_")
            if any(word.rstrip("s") in IR_OR_DIAGNOSTIC for word in words):
                return True
    return False


def functions(tree):
    """(node, name of the innermost enclosing function or '<module>')."""
    def walk(node, name):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef)) else name
            yield child, inner
            yield from walk(child, inner)
    yield from walk(tree, "<module>")


def findings(path, module, text=None):
    """(line, function, what, whether ALLOWED may excuse it) of each
    pipeline string, pipeline run and regex of a module's source."""
    tree = ast.parse(text if text is not None else open(path).read(), path)
    # Docstrings may name the passes an option stands for.
    docstrings = {id(n.value) for n in ast.walk(tree)
                  if isinstance(n, ast.Expr) and
                  isinstance(n.value, ast.Constant)}
    for node, function in functions(tree):
        what = None
        if id(node) in docstrings:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and PIPELINE.search(node.value):
            what = f"pipeline text {node.value[:40]!r}"
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else \
                getattr(f, "id", "")
            owner = getattr(f.value, "id", "") if isinstance(
                f, ast.Attribute) else ""
            if name == "run_pipeline":
                what = "run_pipeline call"
            elif name == "parse" and owner == "PassManager":
                what = "PassManager.parse call"
            elif owner == "re" and reads_ir_or_diagnostic(node):
                yield node.lineno, function, \
                    f"re.{name} call on a location or diagnostic", False
            elif owner == "re":
                what = f"re.{name} call"
        if what:
            yield node.lineno, function, what, True


# The rule finds what it is for, in a function that ALLOWED lists (a
# module's source written here: each line one case).
SAMPLE = """def _host_cpu(op, diagnostic, error, text):
    re.search(r'"([^"]+)":(\\d+)', str(op.location))
    re.findall(r'x', diagnostic.message)
    re.search(r"operation '([\\w.]+)'", error.message)
    re.match(r'x', str(loc))
    re.search(r'Host CPU', text)
"""
print("sample:", [(line, what, excusable) for line, _, what, excusable in
                  findings("torch/_cache.py", "torch/_cache.py", SAMPLE)])
# CHECK: sample: [(2, 're.search call on a location or diagnostic', False), (3, 're.findall call on a location or diagnostic', False), (4, 're.search call on a location or diagnostic', False), (5, 're.match call on a location or diagnostic', False), (6, 're.search call', True)]

failed = 0
top = os.path.join(root, "python", "ga_mlir")
paths = [(f, os.path.join(top, f)) for f in sorted(os.listdir(top))
         if f.endswith(".py") and f != "aot.py"]
package = os.path.join(root, "python", "ga_mlir", "torch")
paths += [(f"torch/{f}", os.path.join(package, f))
          for f in sorted(os.listdir(package)) if f.endswith(".py")]
allowed_used = set()
for module, path in paths:
    for line, function, what, excusable in findings(path, module):
        if excusable and (module, function) in ALLOWED:
            allowed_used.add((module, function))
            continue
        print(f"{module}:{line}: in {function}: {what}")
        failed += 1
for key in sorted(set(ALLOWED) - allowed_used):
    # An exception that no longer applies is removed from the list.
    print(f"ALLOWED lists {key[0]}:{key[1]}, which has none")
    failed += 1
print(f"{len(paths)} modules: {failed} pipeline strings, pipeline runs or "
      f"regexes outside ALLOWED ({len(allowed_used)} allowed)")
# CHECK: {{[0-9]+}} modules: 0 pipeline strings, pipeline runs or regexes outside ALLOWED
sys.exit(1 if failed else 0)
