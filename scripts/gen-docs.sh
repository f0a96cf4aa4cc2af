#!/usr/bin/env bash
#===- gen-docs.sh - regenerate the checked-in dialect and pass docs -------===#
#
#   bash scripts/gen-docs.sh [--check] [BUILD_DIR]
#
# Builds the target ga-doc (mlir-tblgen -gen-dialect-doc / -gen-pass-doc on
# include/ga/IR/GAOps.td, GAShardOps.td, GAGroupedOps.td, GALibraryOps.td,
# GAAttentionOps.td and the Passes.td files) in BUILD_DIR
# (default: build/, or $GA_BUILD_DIR) and copies the result to docs/GADialect.md,
# docs/GAShardOps.md, docs/GAGroupedOps.md, docs/GALibraryOps.md,
# docs/GAAttentionOps.md,
# docs/GAPasses.md and docs/GA*Passes.md. With --check, changes nothing and
# exits 1 if the checked-in copies are out of date.
#
#===----------------------------------------------------------------------===#

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
BUILD_DIR="${1:-${GA_BUILD_DIR:-$ROOT/build}}"
[[ -f $BUILD_DIR/build.ninja ]] ||
  { echo "gen-docs.sh: $BUILD_DIR is not configured (run scripts/setup.sh)" >&2; exit 1; }

ninja -C "$BUILD_DIR" ga-doc >/dev/null
status=0
for doc in GADialect GAShardOps GAGroupedOps GALibraryOps GAAttentionOps GAPasses GAMemoryPasses GACodegenCPUPasses GACodegenCommonPasses \
  GACodegenGPUPasses GAConversionPasses; do
  generated="$BUILD_DIR/docs/generated/$doc.md"
  checked_in="$ROOT/docs/$doc.md"
  if ((check)); then
    if ! cmp -s "$generated" "$checked_in"; then
      echo "docs/$doc.md is out of date: run scripts/gen-docs.sh"
      status=1
    fi
  elif ! cmp -s "$generated" "$checked_in"; then
    cp "$generated" "$checked_in"
    echo "updated docs/$doc.md"
  fi
done
exit "$status"
