# RUN: env PYTHONPATH=%ga_python_path %python %s | FileCheck %s
#
# ga_mlir.function_info (mlirGAInspectFunction, include/ga-c/Inspect.h): what
# a function declares, read from the parsed IR: its argument and result types
# as MLIR prints them, whatever the printed form of the module (pretty or
# generic, attributes in any order), and the N --ga-choose-micro-batches
# chose. Errors are PipelineError with a located diagnostic.

import ga_mlir

STEP = """
func.func private @helper(%x: f32) -> f32 {
  return %x : f32
}
func.func @train_step(%w: tensor<8xf32>, %x: tensor<16x8xf32> {ga.batch = 0 : i64})
    -> (tensor<8xf32>, f32) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %g = linalg.fill ins(%c0 : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%g : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %n = arith.subf %c0, %c0 : f32
  return %s, %n : tensor<8xf32>, f32
}
"""

info = ga_mlir.function_info(STEP, "train_step")
print(info.arguments, info.results, info.micro_batches)
# CHECK: ['tensor<8xf32>', 'tensor<16x8xf32>'] ['tensor<8xf32>', 'f32'] None

print(ga_mlir.function_info(STEP, "helper"))
# CHECK: FunctionInfo(arguments=['f32'], results=['f32'], micro_batches=None,
# CHECK-SAME: argument_types=[ValueType(shape=None, element='f32')]

# The types as data: a tensor's shape (None for a dynamic size) and element
# type, read from the parsed type.
print(info.argument_types, info.result_types)
# CHECK: [ValueType(shape=(8,), element='f32'), ValueType(shape=(16, 8), element='f32')]
# CHECK-SAME: [ValueType(shape=(8,), element='f32'), ValueType(shape=None, element='f32')]
dynamic = ga_mlir.function_info(
    "func.func @g(%x: tensor<?x3xbf16>, %y: tensor<i1>) { return }", "g")
print(dynamic.argument_types)
# CHECK: [ValueType(shape=(None, 3), element='bf16'), ValueType(shape=(), element='i1')]

# The N chosen by a pass, read from its attribute (not from the printed
# text): the same from the pretty and the generic form.
chosen = ga_mlir.run_pipeline(
    STEP, "builtin.module(ga-choose-micro-batches{micro-batch-size=6})")
generic = ga_mlir.run_pipeline(chosen, "builtin.module(canonicalize)")
print(ga_mlir.function_info(chosen, "train_step").micro_batches,
      ga_mlir.function_info(generic, "train_step").micro_batches)
# CHECK: 3 3

# An LLVM function: memref descriptors expanded into pointers and integers.
lowered = ga_mlir.run_pipeline(
    "func.func @f(%m: memref<4xf32>) { return }",
    "builtin.module(finalize-memref-to-llvm,convert-func-to-llvm)")
print(ga_mlir.function_info(lowered, "f").arguments)
# CHECK: ['!llvm.ptr', '!llvm.ptr', 'i64', 'i64', 'i64']

for ir, name in ((STEP, "nosuch"), ("func.func @f(", "f")):
    try:
        ga_mlir.function_info(ir, name, filename="step.mlir")
        print("found?")
    except ga_mlir.PipelineError as error:
        print("PipelineError:", error.diagnostics[0].splitlines()[0])
# CHECK: PipelineError: step.mlir:1:1: error: no function @nosuch in the module
# CHECK: PipelineError: step.mlir:1:{{[0-9]+}}: error: expected

try:
    ga_mlir.function_info(STEP, 3)
except TypeError as error:
    print("TypeError:", error)
# CHECK: TypeError: function_info(ir: str, name: str): got ir: str, name: int
