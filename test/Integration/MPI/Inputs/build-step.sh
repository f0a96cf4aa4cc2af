#!/usr/bin/env bash
#===- build-step.sh - compile a data-parallel step and its MPI driver -----===#
#
#   build-step.sh TEMPLATE B N OUT [LOWERING-OPTIONS]
#
# Substitutes the per-rank batch B for @B@ (and 8*B for @BT@) in TEMPLATE,
# and the MLP's widths (@IN@ = 16 features, @HID@ = 32 hidden units),
# rewrites the step into N micro-batches (--ga-accumulate; N = 0: the
# original step), lowers it with --ga-lower-to-cpu-mpi (c-interface=1 plus
# LOWERING-OPTIONS), and links OUT: dp_driver.c + the PMPI counter + the step,
# with MPICH. ga-opt, mlir-translate and llc come from PATH.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
template=$1 b=$2 n=$3 out=$4 opts=${5:-}
inputs=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sed -e "s/@BT@/$((b * 8))/g" -e "s/@B@/$b/g" -e "s/@IN@/16/g" -e "s/@HID@/32/g" \
  "$template" > "$out.mlir"
rewrite=()
if [[ $n != 0 ]]; then
  rewrite=(--ga-accumulate="micro-batches=$n")
fi
ga-opt "$out.mlir" "${rewrite[@]}" --ga-lower-to-cpu-mpi="c-interface=1 $opts" -o "$out.llvm.mlir"
mlir-translate --mlir-to-llvmir "$out.llvm.mlir" -o "$out.ll"
llc -O2 -filetype=obj -relocation-model=pic "$out.ll" -o "$out.o"
${MPICC:-mpicc.mpich} -O1 "$inputs/dp_driver.c" "$inputs/pmpi_count.c" "$out.o" -o "$out" -lm
