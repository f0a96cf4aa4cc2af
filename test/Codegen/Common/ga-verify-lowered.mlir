// RUN: ga-opt %s -ga-verify-lowered="allowed-dialects=llvm" | FileCheck %s
// RUN: ga-opt %s -ga-verify-lowered="allowed-dialects=llvm,func allowed-ops=arith.addf" | FileCheck %s

// Only ops of the allowed dialects (and allowed ops) are left: the module is
// accepted unchanged.
// CHECK-LABEL: llvm.func @f
// CHECK-NEXT:    llvm.fadd
// CHECK-NEXT:    llvm.return
llvm.func @f(%x: f32) -> f32 {
  %y = llvm.fadd %x, %x : f32
  llvm.return %y : f32
}
