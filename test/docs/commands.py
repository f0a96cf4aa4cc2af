#!/usr/bin/env python3
"""Run every command that README.md and docs/Guide.md show, as written.

    commands.py --source SRC --build BUILD --venv VENV --work DIR DOC...

Each fenced block of a document is either a command block (```sh: shell
commands; ```python: a program) or a block that shows something else (IR,
C++, CMake, a program's output: NOT_COMMANDS). Every shell command (a line,
with its backslash continuations) and every Python block must be listed in
COMMANDS below: run as written, or skipped for the reason given there. A
command or block that is not listed, a listed one that no document shows any
more, and a fence of another language fail the run, so the documentation
cannot drift from the product unnoticed.

The commands run from a fresh clone after `bash scripts/setup.sh`, as the
README says: DIR/repo, whose entries are links to SRC's, except build/ (a
link to BUILD, the build under test), .venv/ (a link to VENV, the set-up's
virtual environment) and python/ (a copy: `pip install ./python` writes into
it). The set-up's `pip install -e python` makes .venv import the clone's
python/; here PYTHONPATH=python does the same for whichever clone VENV was
set up from. The environment is a plain login's (PATH without the build's
tools, no GA_BUILD_DIR, GA_CAPI_LIBRARY or GA_SOURCE_DIR), plus what a
command's entry adds: stand-ins for the files a command names but the
repository does not have (prog.mlir, step.mlir, driver.c, my_model.py; for
Python blocks the model, optimizer and data), and GA_MLIR_MAX_STEPS=2 for
the commands that train (the step budget the training commands honour).
Compiled libraries go to a cache of their own (GA_MLIR_CACHE_DIR), and BLAS
and OpenMP run on one thread.

A command passes when it exits 0 and its entry's checks hold (an expected
output; for the analytics, a measured and a static peak for every GA
configuration). Output: one line per command (`ok`, `skipped: why`, or
`FAIL` followed by the command's output), then a summary per document.
"""

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Fences that show something other than a command, and why they are not run.
NOT_COMMANDS = {
    "mlir": "IR shown before and after a pass (the passes' lit tests check it)",
    "c++": "a fragment of the embedding API (test/consumer builds and runs the whole program)",
    "cmake": "a fragment of a consumer's CMakeLists.txt (test/consumer builds it)",
    "": "a program's output, not a command",
}

CI = ("run by CI (.ci/run) on every change; running it here would rebuild the "
      "tree under test")


@dataclasses.dataclass
class Skip:
    """A command that is not run here, and why."""
    reason: str


@dataclasses.dataclass
class Run:
    """A command run as written.

    files: stand-ins written into the clone first, {name: text} (a text
    starting with "@" names files of the source tree, concatenated).
    prelude: Python run before a Python block (its stand-ins).
    trains: the command trains; it gets GA_MLIR_MAX_STEPS=2.
    expect: a regular expression the command's output must match.
    check: a function of the clone's path: returns what it found (for the
    log), raises AssertionError when it is wrong.
    fresh_venv: run with a new virtual environment (system site packages)
    first on PATH, offline, instead of .venv's Python path.
    gpu_from: a Python block's first line that needs a GPU: without one,
    the block runs up to that line (compiling for the GPU needs only ptxas).
    """
    files: dict = dataclasses.field(default_factory=dict)
    prelude: str = ""
    trains: bool = False
    expect: str = None
    check: object = None
    fresh_venv: bool = False
    gpu_from: str = None


def measured_peaks(report_path):
    """Every configuration of a ga_mlir.train (compare) report has a static
    and a measured peak (a positive number of bytes)."""

    def check(repo):
        with open(os.path.join(repo, report_path)) as f:
            report = json.load(f)
        assert report["measured"], f"{report_path}: the heap was not measured"
        for c in report["configurations"]:
            measured = c["measured_peak_bytes"]
            assert isinstance(measured, int) and measured > 0, (
                f"{report_path}: {c['name']}: measured peak {measured!r}")
            if c["kind"] == "ga":
                assert c["static_peak_bytes"] > 0, (
                    f"{report_path}: {c['name']}: no static peak")
        return ", ".join(f"{c['name']} {c['measured_peak_bytes']} B"
                         for c in report["configurations"])
    return check


def train_mlir_peaks(report_path):
    """Every configuration of a ga_mlir.train_mlir report has a measured
    peak; the MLIR-level steps' equal their static figure to the byte (as
    the Guide says)."""

    def check(repo):
        with open(os.path.join(repo, report_path)) as f:
            report = json.load(f)
        for c in report["configurations"]:
            measured = c.get("measured_peak_bytes")
            assert isinstance(measured, int) and measured > 0, (
                f"{report_path}: {c['name']}: measured peak {measured!r}")
            if c["kind"] in ("full", "ga"):
                assert measured == c["static_peak_bytes"], (
                    f"{report_path}: {c['name']}: measured {measured} B, "
                    f"static {c['static_peak_bytes']} B")
        return ", ".join(f"{c['name']} {c['measured_peak_bytes']} B"
                         for c in report["configurations"])
    return check


def files_exist(*names):
    def check(repo):
        for name in names:
            assert os.path.exists(os.path.join(repo, name)), f"no {name}"
        return "wrote " + ", ".join(names)
    return check


# The stand-ins of the Python blocks: a small classifier, its optimizer, a
# batch (x, y) of 16 samples and two batches for compare.
PYTHON_STAND_INS = textwrap.dedent("""\
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 3))
    optimizer = opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    batches = [(x, y), (torch.randn(16, 8), torch.randint(0, 3, (16,)))]
    """)

# The `my_model` of the Guide's ga_mlir.train command: the template of
# ga_mlir.torch.demo, smaller.
MY_MODEL = textwrap.dedent('''\
    """A stand-in for the Guide's my_model.py: build() returns (model,
    loss_fn, optimizer, batches)."""
    import torch


    def build(steps=50):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                    torch.nn.Linear(16, 3))
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)

        def loss_fn(model, x, y):
            return torch.nn.functional.cross_entropy(model(x), y)

        g = torch.Generator().manual_seed(1)
        batches = [(torch.randn(32, 8, generator=g),
                    torch.randint(0, 3, (32,), generator=g))
                   for _ in range(steps)]
        return model, loss_fn, optimizer, batches
    ''')

# A step for ga-opt's CPU recipes (`step.mlir` in the Guide): the corpus'
# MLP with AdamW. `prog.mlir` (a module with a main function): the
# linear-regression step and the driver of test/Integration/CPU.
STEP = "@test/Integration/Inputs/steps/mlp_adamw.mlir"
PROG = ("@test/Integration/Inputs/steps/linreg_mean.mlir "
        "test/Integration/CPU/Inputs/linreg_main.mlir")
DP_STEP = "@test/docs/Inputs/dp_step.mlir"
DP_DRIVER = "@test/docs/Inputs/dp_driver.c"

# Every command of the documents, by its text (continuation lines joined,
# blanks collapsed); Python blocks by their first line.
COMMANDS = {
    # README.md
    "bash scripts/setup.sh": Skip(
        "makes the clone this test stands in (packages, .venv, build/); " + CI),
    "bash scripts/test.sh": Skip("builds, installs and runs the whole test "
                                 "suite, this test included; " + CI),
    'build/bin/ga-opt examples/dialect_roundtrip.mlir --ga-accumulate="micro-batches=4"':
        Run(expect=r"scf\.for"),
    'build/bin/ga-opt test/Integration/Inputs/steps/mlp_adamw.mlir --ga-accumulate="max-memory=32KiB" --ga-lower-to-cpu':
        Run(expect="llvm.func @train_step"),
    "build/bin/ga-verify test/Integration/Inputs/steps/mlp_adamw.mlir --micro-batches=4":
        Run(),
    "/usr/lib/llvm-22/bin/mlir-opt --load-dialect-plugin=build/lib/GAPlugin.so --load-pass-plugin=build/lib/GAPlugin.so --pass-pipeline='builtin.module(ga-accumulate{micro-batches=4})' examples/dialect_roundtrip.mlir":
        Run(expect=r"scf\.for"),
    "import torch": Run(prelude=PYTHON_STAND_INS,
                        check=files_exist("ga-report/report.json",
                                          "ga-report/memory.png")),
    ".venv/bin/python examples/torch_mlp_digits.py":
        Run(trains=True, expect=r"test accuracy after 2 steps"),
    ".venv/bin/python -m ga_mlir.train --model ga_mlir.torch.demo:digits_mlp --n 1,4,16 --out ga-report":
        Run(trains=True, check=measured_peaks("ga-report/report.json")),

    # docs/Guide.md
    'build/bin/ga-opt prog.mlir --ga-accumulate="micro-batches=4 func=train_step" --ga-lower-to-cpu | /usr/lib/llvm-22/bin/mlir-runner -e main -entry-point-result=void -shared-libs=/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_runner_utils.so':
        Run(files={"prog.mlir": PROG}, expect=r"\[8\.92838\]"),
    'build/bin/ga-opt step.mlir --ga-accumulate="micro-batches=4" --ga-lower-to-cpu="blas=1 c-interface=1" | /usr/lib/llvm-22/bin/mlir-translate --mlir-to-llvmir > step.ll':
        Run(files={"step.mlir": STEP}),
    "/usr/lib/llvm-22/bin/llc -O3 -filetype=obj -relocation-model=pic step.ll -o step.o":
        Run(),
    "clang-22 -shared -Wl,-Bsymbolic --rtlib=compiler-rt step.o -o libstep.so -lopenblas -lm":
        Run(check=files_exist("libstep.so")),
    "from ga_mlir.torch import compile_train_step # .venv has it (pip install -e python)":
        Run(prelude=PYTHON_STAND_INS),
    "import torch.nn.functional as F":
        Run(prelude=PYTHON_STAND_INS,
            expect=r"accuracy 0\.\d{4}, 16 per-sample losses"),
    'step = compile_train_step(model, loss_fn, opt, (x, y), micro_batches=4, target="cuda")':
        Run(prelude=PYTHON_STAND_INS + textwrap.dedent("""\
            from ga_mlir.torch import compile_train_step, load_step

            def loss_fn(model, x, y):
                return torch.nn.functional.cross_entropy(model(x), y)
            """), gpu_from="step = load_step",
            check=files_exist("mlp-step/step.json")),
    'build/bin/ga-opt test/Integration/Inputs/steps/mlp_adamw.mlir --ga-memory-report="sweep=1,4,24" -o /dev/null':
        Run(expect=r"@train_step +4 +6 +3496 +6992 +1728 +3820 +11324 "
                   r"+5464 +0 +0 +32824"),
    'build/bin/ga-opt test/Integration/Inputs/steps/transformer_block.mlir --ga-memory-report="sweep=1,4 target=cuda" -o /dev/null':
        Run(expect=r"@train_step +4 +2 +8640 +0 +6144 +8644 +8644 +14024 "
                   r"+0 +0 +33554432 +33600528 +0"),
    'build/bin/ga-opt test/Integration/Inputs/steps/mlp_adamw.mlir --ga-accumulate="max-memory=32KiB"':
        Run(expect=r"scf\.for %\w+ = %c0 to %c6 step %c1"),
    ".venv/bin/python -m ga_mlir.train --model my_model:build --n 1,4,16 --steps 50 --out ga-report":
        Run(files={"my_model.py": MY_MODEL}, trains=True,
            check=measured_peaks("ga-report/report.json")),
    ".venv/bin/python -m ga_mlir.train_mlir --steps 60 --batch 256 --n 2,4,8,16 --cpu blas=1 --out train-report":
        Run(trains=True, check=train_mlir_peaks("train-report/report.json")),
    'build/bin/ga-opt step.mlir --ga-accumulate="micro-batches=8" --ga-lower-to-cpu-mpi="c-interface=1" | /usr/lib/llvm-22/bin/mlir-translate --mlir-to-llvmir > step.ll':
        Run(files={"step.mlir": DP_STEP, "driver.c": DP_DRIVER}),
    "/usr/lib/llvm-22/bin/llc -filetype=obj -relocation-model=pic step.ll -o step.o":
        Run(),
    "mpicc.mpich driver.c step.o -o step && mpirun.mpich -np 4 ./step":
        Run(expect=r"rank 3/4: w = -19 ok"),
    "/usr/lib/llvm-22/bin/mlir-opt --load-dialect-plugin=build/lib/GAPlugin.so --load-pass-plugin=build/lib/GAPlugin.so --pass-pipeline='builtin.module(ga-accumulate{micro-batches=4},ga-lower-to-cpu)' step.mlir":
        Run(files={"step.mlir": STEP}, expect="llvm.func @train_step"),
    "pip install ./python # in any virtual environment; -e for development":
        Run(fresh_venv=True),
    "python3 -c 'import ga_mlir, sys; print(ga_mlir.run_pipeline(open(sys.argv[1]).read(), \"ga-accumulate{micro-batches=4}\"))' examples/dialect_roundtrip.mlir":
        Run(fresh_venv=True, expect=r"scf\.for"),
    'python3 -m ga_mlir "ga-accumulate{micro-batches=4}" examples/dialect_roundtrip.mlir':
        Run(fresh_venv=True, expect=r"scf\.for"),
    "bash scripts/sanitize.sh # build build-sanitize/, run the lit suite under it":
        Skip("builds an instrumented tree (about an hour on two cores) and "
             "runs the whole suite under it; documented as a manual run, "
             "not part of CI"),
    "bash scripts/sanitize.sh 'Transforms/|Fuzz/' # only the tests whose path matches (lit --filter)":
        Skip("the same instrumented build as the line before"),
    "cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DLLVM_USE_LINKER=lld":
        Skip("configures build/, the tree under test (scripts/setup.sh "
             "runs the same configuration); " + CI),
    "ninja -C build # ga-opt, ga-verify, libraries, C API, Python package, docs":
        Skip("builds the tree under test; " + CI),
    "ninja -C build check-ga # the lit suite":
        Skip("the suite this test is part of; " + CI),
    "bash scripts/gen-docs.sh # refresh docs/GADialect.md and docs/GA*Passes.md":
        Skip("rewrites tracked files of the source tree (docs/GA*.md) "
             "from the build"),
}


def normalize(command):
    return " ".join(command.split())


def blocks(path):
    """(line, language, text) of every fenced block of a Markdown file."""
    with open(path) as f:
        lines = f.read().split("\n")
    found, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(.*)$", lines[i])
        if m:
            language, start, body = m.group(2).strip(), i + 1, []
            i += 1
            while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
                body.append(lines[i])
                i += 1
            found.append((start, language, "\n".join(body)))
        i += 1
    return found


def shell_commands(text):
    """(line offset, command) of a shell block: backslash continuations
    joined, comment lines and blank lines dropped."""
    commands, pending, first = [], [], 0
    for k, line in enumerate(text.split("\n")):
        if not pending:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            first = k
        if line.rstrip().endswith("\\"):
            pending.append(line.rstrip()[:-1])
            continue
        pending.append(line)
        commands.append((first, " ".join(pending)))
        pending = []
    if pending:
        commands.append((first, " ".join(pending)))
    return commands


def collect(source, documents):
    """[(document, line, kind, text, key)] of every command of the
    documents, and the problems: unknown fences and unlisted commands."""
    commands, problems = [], []
    for doc in documents:
        for line, language, text in blocks(os.path.join(source, doc)):
            if language in ("sh", "bash", "shell"):
                for offset, command in shell_commands(text):
                    commands.append((doc, line + offset + 1, "sh", command,
                                     normalize(command)))
            elif language == "python":
                first = next(l for l in text.split("\n") if l.strip())
                commands.append((doc, line + 1, "python", text,
                                 normalize(first)))
            elif language not in NOT_COMMANDS:
                problems.append(f"{doc}:{line}: a ```{language} block: add "
                                f"the language to NOT_COMMANDS or run its "
                                f"commands ({__file__})")
    for doc, line, _, text, key in commands:
        if key not in COMMANDS:
            problems.append(f"{doc}:{line}: a command that {__file__} does "
                            f"not list (run it or say why not in COMMANDS):"
                            f"\n  {key}")
    return commands, problems


def make_clone(source, build, venv, repo):
    """`repo`: a clone of `source` after scripts/setup.sh."""
    os.makedirs(repo)
    for name in sorted(os.listdir(source)):
        if name.startswith(".") or name.startswith("build") or name in (
                "python", "install"):
            continue
        os.symlink(os.path.join(source, name), os.path.join(repo, name))
    shutil.copytree(os.path.join(source, "python"),
                    os.path.join(repo, "python"),
                    ignore=shutil.ignore_patterns(
                        "build", "*.egg-info", "__pycache__", "_config.py"))
    os.symlink(os.path.abspath(build), os.path.join(repo, "build"))
    os.symlink(os.path.abspath(venv), os.path.join(repo, ".venv"))


def base_environment(work):
    """A plain login's environment: nothing of the build's lit setup."""
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME": os.environ.get("HOME", work), "LANG": "C.UTF-8",
           "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
           "GA_MLIR_CACHE_DIR": os.path.join(work, "cache"),
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MPLBACKEND": "Agg"}
    # A sanitized build preloads its ASan runtime into every process.
    if os.environ.get("LD_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["LD_PRELOAD"]
    return env


def fresh_venv(work):
    path = os.path.join(work, "fresh-venv")
    if not os.path.exists(path):
        subprocess.run(["/usr/bin/python3", "-m", "venv",
                        "--system-site-packages", path], check=True)
    return path


def has_gpu(python, env):
    r = subprocess.run([python, "-c", "import torch; print(torch.cuda."
                        "is_available())"], capture_output=True, text=True,
                       env=env)
    return r.stdout.strip() == "True"


def stand_in(source, text):
    if not text.startswith("@"):
        return text
    parts = []
    for name in text[1:].split():
        with open(os.path.join(source, name)) as f:
            parts.append(f.read())
    return "".join(parts)


def run_one(source, repo, work, kind, text, entry, timeout):
    """Runs one command; returns (status, detail)."""
    env = base_environment(work)
    if entry.fresh_venv:
        venv = fresh_venv(work)
        env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env["PATH"]
        env.update(PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0",
                   PIP_DISABLE_PIP_VERSION_CHECK="1", VIRTUAL_ENV=venv)
    else:
        env["PYTHONPATH"] = os.path.join(repo, "python")
    if entry.trains:
        env["GA_MLIR_MAX_STEPS"] = "2"
    for name, content in entry.files.items():
        with open(os.path.join(repo, name), "w") as f:
            f.write(stand_in(source, content))
    note = ""
    if kind == "python":
        program = text
        if entry.gpu_from and not has_gpu(os.path.join(repo, ".venv", "bin",
                                                       "python"), env):
            lines = text.split("\n")
            cut = next(k for k, l in enumerate(lines)
                       if l.startswith(entry.gpu_from))
            program = "\n".join(lines[:cut])
            note = f"; no GPU: ran up to `{entry.gpu_from}`"
            if not shutil.which("ptxas") and not os.path.exists(
                    "/usr/local/cuda/bin/ptxas"):
                return "skipped", "needs the CUDA toolkit's ptxas"
        script = os.path.join(work, "block.py")
        with open(script, "w") as f:
            f.write(entry.prelude + "\n" + program + "\n")
        argv = [".venv/bin/python", script]
    else:
        argv = ["bash", "-e", "-o", "pipefail", "-c", text]
    start = time.time()
    try:
        r = subprocess.run(argv, cwd=repo, env=env, capture_output=True,
                           text=True, timeout=timeout)
        output, code = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as error:
        output = (error.stdout or b"").decode() + (error.stderr or b"").decode()
        output += f"\n(killed after {timeout} s)"
        code = None
    seconds = time.time() - start
    if code != 0:
        return "FAIL", f"exit status {code}\n{output[-6000:]}"
    if entry.expect and not re.search(entry.expect, output):
        return "FAIL", (f"the output lacks {entry.expect!r}\n"
                        f"{output[-6000:]}")
    detail = f"{seconds:.1f} s{note}"
    if entry.check:
        try:
            detail += "; " + entry.check(repo)
        except (AssertionError, OSError, KeyError, ValueError) as error:
            return "FAIL", f"check failed: {error}\n{output[-6000:]}"
    return "ok", detail


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", required=True, help="the source tree")
    p.add_argument("--build", required=True, help="the build under test")
    p.add_argument("--venv", required=True,
                   help="the virtual environment of scripts/setup.sh")
    p.add_argument("--work", required=True, help="a scratch folder")
    p.add_argument("--timeout", type=int, default=300,
                   help="seconds per command")
    p.add_argument("--list", action="store_true",
                   help="check the lists only; run nothing")
    p.add_argument("--all-documents", nargs="+",
                   default=["README.md", "docs/Guide.md"],
                   help="the documents whose commands COMMANDS lists")
    p.add_argument("documents", nargs="*",
                   help="the documents to run (default: all)")
    a = p.parse_args()
    documents = a.documents or a.all_documents

    commands, problems = collect(a.source, a.all_documents)
    shown = {key for *_, key in commands}
    problems += [f"COMMANDS lists a command no document shows any more "
                 f"(remove it from {__file__}):\n  {key}"
                 for key in COMMANDS if key not in shown]
    if problems:
        print("\n".join("FAIL: " + p for p in problems))
        return 1
    print(f"listed: {len(commands)} commands of "
          f"{', '.join(a.all_documents)}")
    if a.list:
        return 0
    if not os.path.exists(os.path.join(a.venv, "bin", "python")):
        print(f"FAIL: no virtual environment at {a.venv} (bash "
              "scripts/setup.sh makes .venv; GA_VENV_DIR names another)")
        return 1

    shutil.rmtree(a.work, ignore_errors=True)
    repo = os.path.join(a.work, "repo")
    make_clone(a.source, a.build, a.venv, repo)
    failed = 0
    for doc in documents:
        counts = {"ok": 0, "skipped": 0, "FAIL": 0}
        for _, line, kind, text, key in (c for c in commands if c[0] == doc):
            entry = COMMANDS[key]
            if isinstance(entry, Skip):
                status, detail = "skipped", entry.reason
            else:
                status, detail = run_one(a.source, repo, a.work, kind, text,
                                         entry, a.timeout)
            counts[status] += 1
            print(f"{status}: {doc}:{line}: {key}\n    {detail}", flush=True)
        failed += counts["FAIL"]
        print(f"{doc}: {counts['ok']} ok, {counts['skipped']} skipped, "
              f"{counts['FAIL']} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
