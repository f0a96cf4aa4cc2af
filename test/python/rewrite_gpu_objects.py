# RUN: env PYTHONPATH=%ga_python_path %python %s | FileCheck %s
#
# ga_mlir.rewrite_gpu_objects (mlirGARewriteGpuObjects,
# include/ga-c/GpuObjects.h): the objects of a lowered module's gpu.binary
# ops, read from the parsed IR (binary, target, format, bytes: escapes
# decoded), and those the callback returns bytes for replaced by fatbin
# objects with the same target and properties: how ga-compile bundles the
# PTX of --ga-lower-to-nvvm into one fatbin for several chips (aot.py).

import ga_mlir

MODULE = r'''
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {O = 3 : i32}, assembly = "// ptx\0A.version 8.0\0A\22q\22">, #gpu.object<#nvvm.target<chip = "sm_90">, bin = "\00\01">]
  gpu.binary @more [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = "second">]
  llvm.func @f() {
    llvm.return
  }
}
'''

seen = []


def bundle(obj):
    seen.append(obj)
    if obj.format != "assembly":
        return None
    return b"FATBIN\x00\xff" + obj.data[:2]


text, count = ga_mlir.rewrite_gpu_objects(MODULE, bundle)
for o in seen:
    print(o.binary, o.target, o.format, o.data)
# CHECK: kernels #nvvm.target<chip = "sm_80"> assembly b'// ptx\n.version 8.0\n"q"'
# CHECK: kernels #nvvm.target<chip = "sm_90"> bin b'\x00\x01'
# CHECK: more #nvvm.target<chip = "sm_80"> assembly b'second'
print("replaced:", count)
# CHECK: replaced: 2
for line in text.splitlines():
    if "gpu.binary" in line:
        print(line.strip())
# CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {O = 3 : i32}, "FATBIN\00\FF//">, #gpu.object<#nvvm.target<chip = "sm_90">, bin = "\00\01">]
# CHECK: gpu.binary @more [#gpu.object<#nvvm.target<chip = "sm_80">, "FATBIN\00\FFse">]

# The rewritten module parses again, and has no objects left to bundle.
_, count = ga_mlir.rewrite_gpu_objects(text, bundle)
print("again:", count)
# CHECK: again: 0


# A callback's exception propagates; bad IR is a located PipelineError.
def fail(obj):
    raise ValueError(f"no ptxas for {obj.binary}")


try:
    ga_mlir.rewrite_gpu_objects(MODULE, fail)
except ValueError as e:
    print("raised:", e)
# CHECK: raised: no ptxas for kernels
try:
    ga_mlir.rewrite_gpu_objects("gpu.binary @b [", bundle, filename="x.mlir")
except ga_mlir.PipelineError as e:
    print("error:", e.diagnostics[0].splitlines()[0])
# CHECK: error: x.mlir:1:{{[0-9]+}}: error:
