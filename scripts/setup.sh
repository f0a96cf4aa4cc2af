#!/usr/bin/env bash
#===- setup.sh - set up a fresh Debian machine, build, run the demo -------===#
#
#   bash scripts/setup.sh
#
# 1. Installs the Debian packages ga-mlir needs (only those missing; apt-get
#    update first), as root or through sudo.
# 2. Checks that LLVM/MLIR under /usr/lib/llvm-22 is 22.1.x.
# 3. Creates the project's virtual environment .venv (or $GA_VENV_DIR) with
#    the pinned packages of python/requirements*.txt (numpy, torch,
#    torch-mlir, scikit-learn, TensorBoard) for the PyTorch frontend, the
#    analytics and their tests.
# 4. Configures (Release, clang-22, lld, Ninja, ccache) and builds into build/
#    (or $GA_BUILD_DIR): ga-opt, ga-verify, the libraries, libGACAPI.so, the
#    Python package and the generated docs; installs ga_mlir into the
#    virtual environment (pip install -e python).
# 5. Runs the demo: the micro-batch rewrite of a bundled training step.
#
# Idempotent: a second run installs nothing, re-checks, rebuilds what changed
# and runs the demo again. Environment: GA_BUILD_DIR (build/), GA_VENV_DIR
# (.venv/), GA_WHEEL_DIR (the downloaded wheels, ~/.cache/ga-mlir/wheels),
# GA_JOBS (number of parallel compile jobs; default: the number of cores),
# GA_SKIP_DEMO=1.
#
#===----------------------------------------------------------------------===#

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${GA_BUILD_DIR:-$ROOT/build}"
VENV_DIR="${GA_VENV_DIR:-$ROOT/.venv}"
WHEEL_DIR="${GA_WHEEL_DIR:-$HOME/.cache/ga-mlir/wheels}"
JOBS="${GA_JOBS:-$(nproc)}"
# ccache keys objects by paths relative to this folder, so checkouts side by
# side (git worktrees, fresh clones) share their objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$ROOT")}"
LLVM_PREFIX=/usr/lib/llvm-22
# shellcheck source=configure.sh
source "$ROOT/scripts/configure.sh"
REQUIRED_LLVM_SERIES=22.1

# Exactly what is needed, and why:
PACKAGES=(
  llvm-22-dev      # LLVM headers, libLLVM.so, LLVMConfig.cmake
  libmlir-22-dev   # MLIR headers, libMLIR.so, MLIRConfig.cmake, C API archives
  mlir-22-tools    # mlir-tblgen (ODS, docs), mlir-opt, mlir-runner
  llvm-22-tools    # lit, FileCheck, not, count, split-file
  clang-22         # the compiler
  lld-22           # the linker (-DLLVM_USE_LINKER=lld)
  libclang-rt-22-dev  # libclang_rt.builtins.a: AOT links with --rtlib=compiler-rt (bf16 builtins)
  libomp-22-dev    # OpenMP runtime for the CPU lowering with openmp=1
  clang-format-22  # the format check of .ci/run
  cmake
  ninja-build
  ccache           # compiler cache: rebuilds (worktrees, fresh clones) reuse objects
  python3          # lit, the ga_mlir package and its test
  python3-numpy    # numpy references of the integration tests
  python3-venv     # the project's virtual environment (.venv, python/requirements.txt)
  python3-setuptools  # `pip install --no-build-isolation ./python` offline (its test)
  python3-wheel       # the same: setuptools < 70 builds wheels with it
  libmpich-dev     # MPI headers/libs: the MPI lowering and its integration tests
  mpich            # mpirun.mpich for the multi-process tests
  libopenblas0-openmp  # CBLAS for --ga-lower-to-cpu=blas=1 (GEMMs with beta = 1)
  libopenblas-dev      # cblas.h and libopenblas.so for ahead-of-time links
)

# The demo: the micro-batch rewrite of a bundled training step (an MNIST-sized
# MLP trained with AdamW), then the proof that it is exact: both steps run on
# the same inputs and every result is compared.
DEMO_INPUT="$ROOT/examples/mlp_adamw.mlir"
DEMO_COMMAND=("$BUILD_DIR/bin/ga-opt" "$DEMO_INPUT" --ga-accumulate="micro-batches=4")
VERIFY_COMMAND=("$BUILD_DIR/bin/ga-verify" "$DEMO_INPUT" --micro-batches=4)

say() { printf '\n==> %s\n' "$*"; }
die() { printf '\nsetup.sh: error: %s\n' "$*" >&2; exit 1; }

#===----------------------------------------------------------------------===#
# 1. Packages
#===----------------------------------------------------------------------===#

say "Checking Debian packages"
[[ -r /etc/debian_version ]] ||
  die "this script sets up Debian (bookworm); on another system install the equivalents of: ${PACKAGES[*]}"
missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null; then
    SUDO=(sudo)
  else
    die "missing packages (${missing[*]}) and not root; run as root or install sudo"
  fi
  say "Installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 update
  "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
else
  echo "all ${#PACKAGES[@]} packages are installed"
fi

#===----------------------------------------------------------------------===#
# 2. Versions
#===----------------------------------------------------------------------===#

say "Checking LLVM/MLIR"
[[ -x $LLVM_PREFIX/bin/llvm-config ]] ||
  die "$LLVM_PREFIX/bin/llvm-config not found: llvm-22-dev is not installed correctly"
llvm_version="$("$LLVM_PREFIX/bin/llvm-config" --version)"
mlir_version="$(dpkg-query -W -f='${Version}' libmlir-22-dev 2>/dev/null || echo none)"
[[ $llvm_version == "$REQUIRED_LLVM_SERIES".* ]] ||
  die "ga-mlir needs LLVM/MLIR $REQUIRED_LLVM_SERIES.x, but $LLVM_PREFIX is LLVM $llvm_version"
[[ $mlir_version =~ ^([0-9]+:)?${REQUIRED_LLVM_SERIES//./\\.}\. ]] ||
  die "ga-mlir needs MLIR $REQUIRED_LLVM_SERIES.x, but libmlir-22-dev is $mlir_version"
[[ -f $LLVM_PREFIX/lib/cmake/mlir/MLIRConfig.cmake && -f $LLVM_PREFIX/lib/libMLIR.so ]] ||
  die "MLIRConfig.cmake or libMLIR.so missing under $LLVM_PREFIX: libmlir-22-dev is broken"
for tool in mlir-tblgen lit FileCheck not split-file ld.lld; do
  [[ -x $LLVM_PREFIX/bin/$tool ]] || die "$LLVM_PREFIX/bin/$tool not found"
done
for tool in clang-22 clang++-22 clang-format-22 cmake ninja python3; do
  command -v "$tool" >/dev/null || die "$tool not found on PATH"
done
# The CUDA 13 toolkit is part of the machine image, not a Debian package: the
# GPU lowering tests need its ptxas, headers, NCCL and driver stub.
CUDA_HOME_DIR="${CUDA_HOME:-/usr/local/cuda}"
for f in bin/ptxas include/cuda.h include/nccl.h lib64/stubs/libcuda.so; do
  [[ -e $CUDA_HOME_DIR/$f ]] ||
    echo "setup.sh: warning: $CUDA_HOME_DIR/$f not found: the GPU tests will be skipped, and scripts/test.sh counts that as a failure" >&2
done
/usr/bin/python3 -c 'import numpy' 2>/dev/null ||
  die "numpy is missing for /usr/bin/python3 (the Python that lit runs): install python3-numpy"
echo "LLVM $llvm_version, MLIR $mlir_version, $(cmake --version | head -1), ninja $(ninja --version)"

#===----------------------------------------------------------------------===#
# 3. Python environment
#===----------------------------------------------------------------------===#

# The packages of python/requirements.txt, pinned, in $VENV_DIR; then PyTorch
# from python/requirements-torch.txt without its declared dependencies (the
# CUDA libraries that `import torch` loads come from the machine's CUDA 13
# toolkit plus four PyPI packages: see that file); if torch still cannot be
# imported, torch with every declared dependency. Wheels are kept in
# $WHEEL_DIR and installed from there (pip's own HTTP cache stores nothing on
# this network), so a second run, or a new environment, downloads nothing.
say "Python environment $VENV_DIR"
if [[ ! -x $VENV_DIR/bin/python ]]; then
  /usr/bin/python3 -m venv "$VENV_DIR" || die "could not create $VENV_DIR"
fi
PIP=("$VENV_DIR/bin/python" -m pip --disable-pip-version-check)
mkdir -p "$WHEEL_DIR"
# pip install from the wheel directory only; download what is missing first.
pip_install() {
  "${PIP[@]}" install -q --no-index --find-links "$WHEEL_DIR" "$@" 2>/dev/null && return
  "${PIP[@]}" download -q -d "$WHEEL_DIR" "$@" &&
    "${PIP[@]}" install -q --no-index --find-links "$WHEEL_DIR" "$@"
}
start=$SECONDS
pip_install -r "$ROOT/python/requirements.txt" ||
  die "pip could not install python/requirements.txt"
pip_install --no-deps -r "$ROOT/python/requirements-torch.txt" ||
  die "pip could not install python/requirements-torch.txt"
if ! "$VENV_DIR/bin/python" -c 'import torch' 2>/dev/null; then
  torch_pin="$(grep -m1 '^torch==' "$ROOT/python/requirements-torch.txt")"
  echo "import torch failed with the machine's CUDA libraries: installing $torch_pin with all its dependencies"
  pip_install "$torch_pin" || die "pip could not install $torch_pin"
fi
"$VENV_DIR/bin/python" -c 'import torch, torch_mlir' ||
  die "torch or torch_mlir cannot be imported in $VENV_DIR"
echo "Python environment ready in $((SECONDS - start)) s"
"${PIP[@]}" list 2>/dev/null |
  awk 'NR > 2 { printf "%s %s  ", $1, $2 } END { print "" }'

#===----------------------------------------------------------------------===#
# 4. Configure and build
#===----------------------------------------------------------------------===#

say "Configuring $BUILD_DIR"
ga_configure "$BUILD_DIR" \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
  -DCMAKE_INSTALL_PREFIX="$BUILD_DIR/install" \
  -DGA_PYTHON="$VENV_DIR/bin/python" ||
  die "CMake configuration failed"

say "Building with $JOBS jobs"
start=$SECONDS
ninja -C "$BUILD_DIR" -j "$JOBS" || die "the build failed"
echo "build finished in $((SECONDS - start)) s"

# ga_mlir itself, editable: .venv/bin/python imports the sources of python/
# and finds the libraries in build/ (or $GA_BUILD_DIR), no PYTHONPATH.
"${PIP[@]}" install -q --no-deps --no-build-isolation -e "$ROOT/python" ||
  die "pip could not install ga_mlir (python/) into $VENV_DIR"

#===----------------------------------------------------------------------===#
# 5. Demo
#===----------------------------------------------------------------------===#

if [[ ${GA_SKIP_DEMO:-0} != 1 ]]; then
  say "Demo: ${DEMO_COMMAND[*]#"$ROOT/"}"
  "${DEMO_COMMAND[@]}"
  say "Demo: ${VERIFY_COMMAND[*]#"$ROOT/"}"
  "${VERIFY_COMMAND[@]}"
fi

say "Done. Run the tests with: bash scripts/test.sh"
