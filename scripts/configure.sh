#===- configure.sh - the CMake configuration the scripts share ------------===#
#
# Sourced by setup.sh and sanitize.sh (not run by itself): ga_configure
# BUILD_DIR [CMAKE-ARGS...] configures the project in BUILD_DIR with the
# toolchain both use (Ninja, Release, clang-22 with lld, the MLIR and lit of
# $LLVM_PREFIX), plus their own CMAKE-ARGS. Needs ROOT and LLVM_PREFIX.
#
#===----------------------------------------------------------------------===#

ga_configure() {
  local build=$1
  shift
  cmake -G Ninja -S "$ROOT" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" "$@"
}
