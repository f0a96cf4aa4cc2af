# -*- Python -*-
# lit configuration of the ga-mlir test suite.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "GA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
# test/consumer and test/python pick their own suffixes (lit.local.cfg).
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ga_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(("%ga_src_root", config.ga_src_root))
config.substitutions.append(("%ga_obj_root", config.ga_obj_root))
config.substitutions.append(
    ("%mlir_runner_libs",
     ",".join(os.path.join(config.mlir_lib_dir, lib) for lib in
              ["libmlir_c_runner_utils.so", "libmlir_runner_utils.so"])))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.ga_tools_dir, config.llvm_tools_dir]
tools = [
    "ga-opt",
    "ga-verify",
    ToolSubst("mlir-runner", unresolved="ignore"),
    ToolSubst("mlir-translate", unresolved="ignore"),
    ToolSubst("llc", unresolved="ignore"),
    ToolSubst("clang", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.ga_tools_dir, append_path=True)

# The BLAS kernel family and thread counts of a run (scripts/test.sh reruns
# the numeric tests under each family the CPU executes): OpenBLAS picks its
# kernels by CPU, and each family sums products in another order, so a
# tolerance tuned to one CPU fails here rather than on a user's machine.
#   lit --param openblas_coretype=Zen --param blas_threads=2 ...
if lit_config.params.get("openblas_coretype"):
    config.environment["OPENBLAS_CORETYPE"] = lit_config.params["openblas_coretype"]
if lit_config.params.get("blas_threads"):
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        config.environment[variable] = lit_config.params["blas_threads"]

# A sanitized build (GA_ENABLE_SANITIZERS, scripts/sanitize.sh): every process
# gets the shared ASan runtime first, so that the uninstrumented hosts of ga
# code (mlir-opt with GAPlugin.so, python with libGACAPI.so) can load it; the
# instrumented tools link the same runtime. ASAN_OPTIONS and UBSAN_OPTIONS
# pass through (lit.llvm).
for sanitizer in filter(None, getattr(config, "ga_sanitizers", "").split(";")):
    config.available_features.add("ga-sanitizer-" + sanitizer)
if getattr(config, "ga_asan_runtime", ""):
    config.environment["LD_PRELOAD"] = config.ga_asan_runtime

# Optional features: tests that need them are skipped where they are absent.
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
if shutil.which("mpirun.mpich"):
    config.available_features.add("mpich")

# The numpy references (Integration/corpus) are an oracle that shares no code with
# ga-mlir: they always run. numpy is a set-up dependency (python3-numpy); lit's own
# interpreter may lack it, so take the first Python that has it, else lit's, so that
# a missing numpy fails these tests loudly instead of dropping the oracle.
config.substitutions.append(("%llvm_tools_dir", config.llvm_tools_dir))
def _python_with_numpy():
    import subprocess
    import sys
    candidates = (sys.executable, "/usr/bin/python3", shutil.which("python3"))
    for exe in candidates:
        if exe and subprocess.run([exe, "-c", "import numpy"], capture_output=True).returncode == 0:
            return exe
    lit_config.warning("no Python with numpy found: the numpy reference tests will fail "
                       "(install python3-numpy, scripts/setup.sh does)")
    return sys.executable
config.substitutions.append(("%numpy_python", '"%s"' % _python_with_numpy()))

# The training analytics (python3 -m ga_mlir.train): numpy, matplotlib, tqdm and
# scikit-learn, from the project's virtual environment (scripts/setup.sh,
# python/requirements.txt; GA_VENV_DIR), the Python the build was configured
# with (GA_PYTHON), or any Python that has them.
def _python_with_analytics():
    import subprocess
    import sys
    venv = os.environ.get("GA_VENV_DIR", os.path.join(config.ga_src_root, ".venv"))
    for exe in (os.path.join(venv, "bin", "python"), getattr(config, "ga_python", ""),
                sys.executable, shutil.which("python3")):
        if exe and os.path.exists(exe) and subprocess.run(
                [exe, "-c", "import numpy, matplotlib, tqdm, sklearn"], capture_output=True).returncode == 0:
            return exe
    return None
_analytics_python = _python_with_analytics()
if _analytics_python:
    config.available_features.add("analytics")
    config.substitutions.append(("%analytics_python", '"%s"' % _analytics_python))
