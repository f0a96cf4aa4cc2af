#!/usr/bin/env bash
#===- sanitize.sh - the lit suite under AddressSanitizer and UBSan -------===#
#
#   bash scripts/sanitize.sh [REGEX]
#
# 1. Configures and builds a separate tree, build-sanitize/ (or
#    $GA_SANITIZE_BUILD_DIR), with -DGA_ENABLE_SANITIZERS="address;undefined"
#    ($GA_SANITIZERS): the ga libraries, libGACAPI.so, GAPlugin.so, the test
#    passes and the tools (ga-opt, ga-verify) are instrumented and use the
#    shared ASan runtime; libMLIR.so and the runtime libraries that generated
#    code calls (lib/Runtime) are not. lit preloads that runtime into every
#    test process (test/lit.cfg.py), so that Debian's mlir-opt can load
#    GAPlugin.so and python3 can load libGACAPI.so (ga-compile, the ctypes
#    package).
# 2. Runs the lit suite (only the tests whose path matches REGEX, when given:
#    lit's --filter) with every report written to build-sanitize/sanitizer-logs/
#    (log_path, one file per process, named after the program) and
#    abort_on_error: a report fails its test, even one that expects an error
#    exit ("not ga-opt ..."), because it aborts instead of exiting with 1.
# 3. Prints lit's summary and every report, and fails if a report has a frame
#    in ga-mlir's own code (a source file or a library of this tree) or if a
#    test failed. Reports from other code only (an upstream mlir-opt crash that
#    tools/ga-mutate provokes on purpose) are listed but do not fail the run.
#
# Not part of CI: a clean build of the instrumented tree takes most of an hour
# on two cores. Left out of the lit run:
#   test/python: PyTorch (import torch) under the preloaded ASan runtime;
#   test/consumer: installs the tree and builds an external CMake project;
#   test/docs: the documentation's commands, PyTorch and the heap counter
#     among them (as test/python and Integration/Memory below);
#   Integration/GPU/Device: needs a GPU;
#   Integration/Memory/{max-memory,report-vs-measured,train-analytics}: they
#     measure heap peaks by preloading lib/Runtime/HeapCount instead (LD_PRELOAD
#     replaced), and two malloc interposers cannot both come first.
# LeakSanitizer is off (GA_SANITIZE_LEAKS=1 turns it on): lit preloads ASan
# into python3, FileCheck and Debian's mlir-opt too, and those leak at exit by
# design (Python's interned objects, LLVM's statics).
#
# Environment: GA_SANITIZE_BUILD_DIR, GA_SANITIZERS, GA_JOBS (default 2),
# LIT_OPTS (more lit options), GA_SANITIZE_LEAKS=1.
#
#===----------------------------------------------------------------------===#

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${GA_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
SANITIZERS="${GA_SANITIZERS:-address;undefined}"
JOBS="${GA_JOBS:-2}"
LLVM_PREFIX=/usr/lib/llvm-22
# shellcheck source=configure.sh
source "$ROOT/scripts/configure.sh"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$ROOT")}"

say() { printf '\n==> %s\n' "$*"; }
die() { printf '\nsanitize.sh: error: %s\n' "$*" >&2; exit 1; }

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  say "Configuring $BUILD_DIR with sanitizers $SANITIZERS"
  ga_configure "$BUILD_DIR" -DGA_ENABLE_SANITIZERS="$SANITIZERS" \
    "${launcher[@]}" >/dev/null || die "cmake failed"
fi

say "Building $BUILD_DIR"
start=$SECONDS
nice -n 5 ninja -C "$BUILD_DIR" -j "$JOBS" || die "the build failed"
echo "build finished in $((SECONDS - start)) s"

LOG_DIR="$BUILD_DIR/sanitizer-logs"
rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR"
leaks="${GA_SANITIZE_LEAKS:-0}"
# allow_user_poisoning=0: LLVM's BumpPtrAllocator (an inline header, also in
# the instrumented ga code) poisons the slabs it starts and unpoisons each
# allocation only where it was compiled with ASan; libMLIR.so is not, so a
# StorageUniquer slab started in ga code and handed out by libMLIR.so reads
# as "use-after-poison" (64 such false reports in the first run, all in the
# data-flow solver's program points).
export ASAN_OPTIONS="detect_leaks=$leaks:allow_user_poisoning=0:abort_on_error=1:log_path=$LOG_DIR/asan:log_exe_name=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$LOG_DIR/ubsan:log_exe_name=1"
export ASAN_SYMBOLIZER_PATH="$LLVM_PREFIX/bin/llvm-symbolizer"
export UBSAN_SYMBOLIZER_PATH="$ASAN_SYMBOLIZER_PATH"

say "Running the lit suite under $SANITIZERS"
filter=()
[[ $# -gt 0 ]] && filter=(--filter "$1")
status=0
# shellcheck disable=SC2086
"$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/test" "${filter[@]}" ${LIT_OPTS:-} \
  --filter-out '^GA :: (python/|consumer/|docs/|Integration/GPU/Device/|Integration/Memory/(max-memory|report-vs-measured|train-analytics))' ||
  status=$?

# A report is ga-mlir's when one of its frames is in this tree (a source file,
# or a library of the build: ga code), not in its .venv.
ours=0
others=0
shopt -s nullglob
for f in "$LOG_DIR"/*; do
  if grep -F "$ROOT/" "$f" | grep -qvF "$ROOT/.venv/"; then
    ours=$((ours + 1))
    echo "--- $f (ga-mlir code)"
  else
    others=$((others + 1))
    echo "--- $f (no ga-mlir frame)"
  fi
  head -40 "$f"
done
say "sanitizer reports: $ours in ga-mlir code, $others elsewhere (in $LOG_DIR)"
[[ $ours -eq 0 ]] || exit 1
exit "$status"
