#!/usr/bin/env bash
#===- gpu-kit.sh - the GPU acceptance kit ---------------------------------===#
#
#   bash scripts/gpu-kit.sh build DIR [--steps a,b] [--models mlp,gpt]
#                                     (also gpt2-124m, llama-1b: docs/GPU.md)
#                                     [--ns 1,4,16]
#       (here: a build with the CUDA runtime and the project's virtual
#       environment; no GPU) writes DIR, at most 48 MiB: the corpus steps and
#       zoo models compiled for the GPU by ga-compile (sm_80 + sm_90), their
#       inputs and CPU references, our runtime libraries, and DIR/run.sh.
#   bash DIR/run.sh [--quick] [--out DIR]
#       (on any machine with an NVIDIA GPU, python3 + torch + numpy) checks,
#       sanitizes and times every step and writes report.md; without a GPU
#       it stops at once with exit status 2.
#
# See docs/GPU.md, "The acceptance kit".
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "gpu-kit: error: $*" >&2; exit 1; }

[[ $# -ge 2 ]] || die "usage: gpu-kit.sh build DIR [options]"
cmd="$1"; dir="$2"; shift 2
case "$cmd" in
  build)
    build="${GA_BUILD_DIR:-$ROOT/build}"
    [[ -x $build/bin/ga-compile ]] ||
      die "no $build/bin/ga-compile: build ga-mlir first (or set GA_BUILD_DIR)"
    [[ -f $build/lib/libga_cuda_runtime.so ]] ||
      die "$build has no CUDA runtime (lib/Runtime/CUDA needs the CUDA toolkit)"
    py="${GA_PYTHON:-${GA_VENV_DIR:-$ROOT/.venv}/bin/python}"
    [[ -x $py ]] || die "no $py: the kit is built with the project's virtual environment (torch, torch-mlir)"
    exec "$py" "$ROOT/scripts/gpu_kit/build_kit.py" "$dir" --build-dir "$build" "$@"
    ;;
  *) die "unknown command '$cmd' (build)" ;;
esac
