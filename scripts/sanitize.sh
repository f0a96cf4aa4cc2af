#!/usr/bin/env bash
#===- sanitize.sh - the lit suite under AddressSanitizer and UBSan -------===#
#
#   bash scripts/sanitize.sh
#
# 1. Configures and builds a separate tree, build-sanitize/ (or
#    $GA_SANITIZE_BUILD_DIR), with -DGA_ENABLE_SANITIZERS="address;undefined"
#    ($GA_SANITIZERS): every ga library and the tools that link them
#    (ga-opt, ga-verify) are instrumented; libMLIR.so and the runtime
#    libraries loaded by mlir-runner are not.
# 2. Runs the lit suite with every sanitizer report written to
#    build-sanitize/sanitizer-logs/ (ASAN_OPTIONS / UBSAN_OPTIONS log_path),
#    so that a report is found even where a test expects a failure.
# 3. Prints lit's summary and every report, and fails if there is one.
#
# Not part of CI (a clean build takes about an hour on two cores). Left out:
#   test/python, test/consumer and the tests that run Python on the C API
#     (train-analytics, lower-to-cpu-in-place): libGACAPI.so is
#     instrumented, and an uninstrumented python3 cannot load an ASan
#     library ("ASan runtime does not come first"); PyTorch under an
#     LD_PRELOADed ASan runtime reports its own allocations.
#   Integration/GPU/Device: needs a GPU.
# Environment: GA_SANITIZE_BUILD_DIR, GA_SANITIZERS, GA_JOBS (default 2),
# LIT_OPTS (more lit options), GA_SANITIZE_LEAKS=1 (LeakSanitizer on).
#
#===----------------------------------------------------------------------===#

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${GA_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
SANITIZERS="${GA_SANITIZERS:-address;undefined}"
JOBS="${GA_JOBS:-2}"
LLVM_PREFIX=/usr/lib/llvm-22
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$ROOT")}"

say() { printf '\n==> %s\n' "$*"; }
die() { printf '\nsanitize.sh: error: %s\n' "$*" >&2; exit 1; }

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                                          -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  say "Configuring $BUILD_DIR with sanitizers $SANITIZERS"
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DGA_ENABLE_SANITIZERS="$SANITIZERS" \
    "${launcher[@]}" >/dev/null || die "cmake failed"
fi

say "Building $BUILD_DIR"
start=$SECONDS
ninja -C "$BUILD_DIR" -j "$JOBS" || die "the build failed"
echo "build finished in $((SECONDS - start)) s"

LOG_DIR="$BUILD_DIR/sanitizer-logs"
rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR"
leaks="${GA_SANITIZE_LEAKS:-0}"
export ASAN_OPTIONS="detect_leaks=$leaks:log_path=$LOG_DIR/asan:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$LOG_DIR/ubsan"
export ASAN_SYMBOLIZER_PATH="$LLVM_PREFIX/bin/llvm-symbolizer"
export UBSAN_SYMBOLIZER_PATH="$ASAN_SYMBOLIZER_PATH"

say "Running the lit suite under $SANITIZERS"
status=0
# shellcheck disable=SC2086
"$LLVM_PREFIX/bin/lit" -s "$BUILD_DIR/test" ${LIT_OPTS:-} \
  --filter-out 'python/|consumer/|Integration/GPU/Device/|train-analytics|lower-to-cpu-in-place' ||
  status=$?

reports=("$LOG_DIR"/*)
if [[ -e ${reports[0]} ]]; then
  say "${#reports[@]} sanitizer report(s) in $LOG_DIR"
  for f in "${reports[@]}"; do
    echo "--- $f"
    head -40 "$f"
  done
  exit 1
fi
say "no sanitizer report"
exit "$status"
