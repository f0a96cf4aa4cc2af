#!/usr/bin/env bash
#===- run.sh - the GPU acceptance kit, on a machine with an NVIDIA GPU -----===#
#
#   bash run.sh [--quick] [--out DIR] [--models gpt2-124m,...]
#
# Needs python3 with torch (CUDA) and numpy; no LLVM, no network. Checks every
# step against its CPU reference, runs compute-sanitizer where present, times
# our steps against PyTorch's own accumulation loop, and writes report.md
# (into --out, else $OUT when set, else this directory). Without a GPU it
# stops at once with exit status 2.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "gpu-kit: error: no $PY (the kit needs python3 with torch and numpy)" >&2
  exit 2
fi
export PYTHONPATH="$KIT/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" "$KIT/run_kit.py" --kit "$KIT" "$@"
