# RUN: rm -rf %t && mkdir -p %t
# RUN: env PYTHONPATH=%ga_python_path %python %s %t | FileCheck %s
#
# A step library whose static storage passes 2 GiB (a large step's static
# temporaries) links and runs: aot.link_library compiles with x86-64's medium
# code model, so that its large buffers are addressed with 64-bit offsets
# (the small model failed to link: "relocation truncated to fit:
# R_X86_64_PC32 against .bss"). Only the pages written are touched.

import ctypes
import os
import sys

from ga_mlir import aot, steplib

LARGE = 671088640  # f32: 2.5 GiB
MODULE = """
module {
  llvm.mlir.global private @large() {alignment = 64 : i64} : !llvm.array<LARGE x f32> {
    %0 = llvm.mlir.zero : !llvm.array<LARGE x f32>
    llvm.return %0 : !llvm.array<LARGE x f32>
  }
  llvm.mlir.global private @small() {alignment = 64 : i64} : !llvm.array<16 x f32> {
    %0 = llvm.mlir.zero : !llvm.array<16 x f32>
    llvm.return %0 : !llvm.array<16 x f32>
  }
  llvm.func @touch(%i: i64, %v: f32) -> f32 {
    %l = llvm.mlir.addressof @large : !llvm.ptr
    %s = llvm.mlir.addressof @small : !llvm.ptr
    %c = llvm.mlir.constant(15 : i64) : i64
    %pl = llvm.getelementptr %l[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %ps = llvm.getelementptr %s[%c] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %old = llvm.load %pl : !llvm.ptr -> f32
    %new = llvm.fadd %old, %v : f32
    llvm.store %new, %pl : f32, !llvm.ptr
    %acc = llvm.load %ps : !llvm.ptr -> f32
    %sum = llvm.fadd %acc, %new : f32
    llvm.store %sum, %ps : f32, !llvm.ptr
    llvm.return %sum : f32
  }
}
""".replace("LARGE", str(LARGE))

path = os.path.join(sys.argv[1], "large.so")
aot.link_library(MODULE, path, "cpu")
storage = steplib.static_storage_bytes(path)
# CHECK: linked: True, static storage >= 2.5 GiB: True
print(f"linked: {os.path.exists(path)}, static storage >= 2.5 GiB: "
      f"{storage >= 4 * LARGE}")
lib = ctypes.CDLL(path)
lib.touch.restype = ctypes.c_float
lib.touch.argtypes = [ctypes.c_int64, ctypes.c_float]
first = lib.touch(LARGE - 1, 2.0)
second = lib.touch(LARGE - 1, 3.0)  # 2 + 3 at the end, 2 + 5 in @small
ok = (first, second) == (2.0, 7.0)
# CHECK: last element: 5.0 OK
print(f"last element: {second - first:.1f}", "OK" if ok else "FAIL")
sys.exit(not ok)
