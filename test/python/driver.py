# RUN: env PYTHONPATH=%ga_python_path %python %s | FileCheck %s
#
# ga_mlir.driver.compile: the compiler driver from Python, typed options in
# (no pass pipeline text), a typed result out; refusals carry their stable
# code and location as data (ga_mlir.Diagnostic).

import ga_mlir
from ga_mlir import driver

# A step whose result sums the batch: @train_step(w, x) with x per-sample
# along dimension 0.
STEP = """
func.func @train_step(%w: tensor<3xf32>, %x: tensor<4x3xf32>) -> tensor<3xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(b, f) -> (b, f)>, affine_map<(b, f) -> (f)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%w : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  return %s : tensor<3xf32>
}
"""

# An update w - sum(x) over the batch, which can be written into w.
UPDATE = """
func.func @train_step(%w: tensor<3xf32>, %x: tensor<4x3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, f) -> (b, f)>, affine_map<(b, f) -> (f)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(f) -> (f)>, affine_map<(f) -> (f)>, affine_map<(f) -> (f)>],
                       iterator_types = ["parallel"]}
      ins(%w, %s : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<3xf32>
  return %n : tensor<3xf32>
}
"""

# The same step reading one sample: refused, with the code of the refusal.
ONE_SAMPLE = """
func.func @train_step(%w: tensor<3xf32>, %x: tensor<4x3xf32>) -> tensor<1x3xf32> {
  %s = tensor.extract_slice %x[0, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
  return %s : tensor<1x3xf32>
}
"""

# The rewrite at N = 2, not lowered.
# CHECK: rewritten: N = 2, recompute none, in place []
# CHECK: scf.for
result = driver.compile(STEP, driver.CompileOptions(
    micro_batches=2, batch_args=[(1, 0)], target=None))
print(f"rewritten: N = {result.micro_batches}, recompute "
      f"{result.recompute}, in place {result.in_place}")
print("scf.for" if "scf.for" in result.module else result.module)

# Lowered for the CPU with the update written into argument 0: the driver
# decides from the bufferized IR that it held.
# CHECK: update: N = 2, in place [(0, 0)], llvm.func: True
result = driver.compile(UPDATE, driver.CompileOptions(
    micro_batches=2, batch_args=[(1, 0)], in_place=[(0, 0)],
    cpu={"c_interface": True, "out_params": True}))
print(f"update: N = {result.micro_batches}, in place {result.in_place}, "
      f"llvm.func: {'llvm.func' in result.module}")

# The sum accumulated into w itself cannot be written into w (the loop
# reads w while the result is written): the copying form, quietly.
# CHECK: sum: N = 2, in place [], llvm.func: True
result = driver.compile(STEP, driver.CompileOptions(
    micro_batches=2, batch_args=[(1, 0)], in_place=[(0, 0)],
    cpu={"c_interface": True, "out_params": True}))
print(f"sum: N = {result.micro_batches}, in place {result.in_place}, "
      f"llvm.func: {'llvm.func' in result.module}")

# N from a micro-batch size, chosen only.
# CHECK: choice: N = 2
result = driver.compile(STEP, driver.CompileOptions(
    micro_batch_size=2, batch_args=[(1, 0)], target="choice"))
print(f"choice: N = {result.micro_batches}")

# N under a memory budget, chosen only: the predicted peak comes with it.
# CHECK: budget: N = {{[1-4]}}, peak known: True
result = driver.compile(UPDATE, driver.CompileOptions(
    max_memory="1MiB", batch_args=[(1, 0)], target="choice"))
print(f"budget: N = {result.micro_batches}, peak known: "
      f"{result.predicted_peak is not None}")

# The memory report (target "report") equals --ga-memory-report's own,
# run by its pass on the same step (the sweep rewrites it at N = 2), with
# the argument classes given; and for the in-place form, the report of the
# private function that does the work.
import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402



def pass_report(lowering):
    """--ga-memory-report's first JSON row for UPDATE at N = 2 with the
    driver's roles, lowered by `lowering` (the pass's options)."""
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "report.json")
        ga_mlir.run_pipeline(
            UPDATE, "builtin.module(ga-mark-batch-args{batch-args=1:0},"
            "ga-memory-report{sweep=2 format=json roles=parameters,inputs "
            f"output={out} {lowering}}})")
        return json.load(open(out))[0]


expected = pass_report("cpu={out-params=1}")
result = driver.compile(UPDATE, driver.CompileOptions(
    micro_batches=2, batch_args=[(1, 0)], target="report",
    report_roles=("parameters", "inputs"), cpu={"out_params": True}))
got = json.loads(result.memory_report)[0]
print("report: same as the pass's:", got == expected, "N =",
      got["micro_batches"], "peak > 0:", got["total_peak"] > 0)
# CHECK: report: same as the pass's: True N = 2 peak > 0: True
result = driver.compile(UPDATE, driver.CompileOptions(
    micro_batches=2, batch_args=[(1, 0)], in_place=[(0, 0)],
    target="report", report_roles=("parameters", "inputs"),
    cpu={"out_params": True}))
got = json.loads(result.memory_report)[0]
print("in-place report:", got["function"], "peak at most the copying "
      "form's:", got["total_peak"] <= expected["total_peak"])
# CHECK: in-place report: train_step_in_place peak at most the copying form's: True
# memory_target "cuda": the GPU step's report, the same as the pass's with
# target=cuda (device bytes); and a budget for the GPU is device bytes.
expected = pass_report("target=cuda")
result = driver.compile(UPDATE, driver.CompileOptions(
    micro_batches=2, batch_args=[(1, 0)], target="report",
    memory_target="cuda", report_roles=("parameters", "inputs")))
got = json.loads(result.memory_report)[0]
print("cuda report: same as the pass's:", got == expected, "target:",
      got["target"])
# CHECK: cuda report: same as the pass's: True target: cuda
result = driver.compile(UPDATE, driver.CompileOptions(
    max_memory=str(got["total_peak"]), batch_args=[(1, 0)],
    target="choice", memory_target="cuda", recompute="none"))
print("cuda budget: peak", result.predicted_peak, "<=", got["total_peak"],
      result.predicted_peak <= got["total_peak"])
# CHECK: cuda budget: peak {{[0-9]+}} <= {{[0-9]+}} True

# FSDP's plan under a per-rank budget (target "shard-plan", one driver
# call: --ga-shard-plan of the step sharded with the default plan, its
# costs read from --ga-shard-parameters' plan-output), and the chosen plan
# carried back by ShardParameters (reduce_after_loop here: the parameter
# is read only by the update, after the loop, so nothing is gathered in
# it). A data-parallel SGD step on 2 ranks, this rank 0.
SGD = """
func.func @sgd(%w: tensor<4x2xf32>, %lr: f32, %x: tensor<8x4xf32> {ga.batch = 0 : i64},
               %dy: tensor<8x2xf32> {ga.batch = 0 : i64}) -> tensor<4x2xf32>
    attributes {ga.data_parallel} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dy : tensor<8x4xf32>, tensor<8x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %w2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%dw : tensor<4x2xf32>) outs(%w : tensor<4x2xf32>) {
  ^bb0(%g: f32, %p: f32):
    %u = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %u : f32
    linalg.yield %n : f32
  } -> tensor<4x2xf32>
  return %w2 : tensor<4x2xf32>
}
"""
with tempfile.TemporaryDirectory() as work:
    costs = os.path.join(work, "plan.json")

    def sharded(target, budget="", deferred=()):
        return driver.compile(SGD, driver.CompileOptions(
            func_name="sgd", micro_batches=2, target=target,
            shard_optimizer=driver.ShardOptimizer(0, 2, (0,)),
            shard_parameters=driver.ShardParameters(
                0, 2, -1, (0,), (0,), costs, reduce_after_loop=deferred),
            shard_plan=driver.ShardPlan((2, 4), (1000, 900), budget)))

    plan = json.loads(sharded("shard-plan").shard_plan)
    print("shard plan: N =", plan["micro_batches"], "deferred",
          plan["reduce_after_loop"], "peak", plan["predicted_peak"])
    # CHECK: shard plan: N = 2 deferred [] peak 1000
    plan = json.loads(sharded("shard-plan", "100000").shard_plan)
    print("ample budget: N =", plan["micro_batches"], "deferred",
          plan["reduce_after_loop"], "peak", plan["predicted_peak"])
    # CHECK: ample budget: N = 2 deferred [0] peak 1032
    for deferred in ((), (0,)):
        sharded(None, deferred=deferred)
        row = json.load(open(costs))[0]
        print("reduce_after_loop", list(deferred), "scatters per "
              "micro-batch", row["scatters_per_micro_batch"], "after",
              row["scatters_outside_loops"])
    # CHECK: reduce_after_loop [] scatters per micro-batch 1 after 0
    # CHECK: reduce_after_loop [0] scatters per micro-batch 0 after 1

# MPI collectives (mpi_collectives, what --ga-lower-to-cpu-mpi selects as a
# pipeline): the data-parallel step's all-reduce becomes one MPI_Allreduce
# call per bucket, in the lowered CPU step, and no ga collective is left.
result = driver.compile(SGD, driver.CompileOptions(
    func_name="sgd", micro_batches=2, mpi_collectives=True,
    bucket_size=1 << 20))
print("mpi: MPI_Allreduce calls", result.module.count("llvm.call @MPI_Allreduce"),
      "ga ops left", "ga.all_reduce" in result.module)
# CHECK: mpi: MPI_Allreduce calls 1 ga ops left False

# Host and MPI collectives at once, MPI for the GPU: refused with their
# code.
for what, options in (("host and mpi", dict(host_collectives=True)),
                      ("mpi on cuda", dict(target="cuda"))):
    try:
        driver.compile(SGD, driver.CompileOptions(
            func_name="sgd", micro_batches=2, mpi_collectives=True,
            **options))
        print(what, "ACCEPTED")
    except ga_mlir.PipelineError as error:
        print(what, error.diagnostics[0].code)
# CHECK: host and mpi contradictory-options
# CHECK: mpi on cuda contradictory-options

# rewrite=False: the step lowered as it is (ga-compile without
# --accumulate): no micro-batch loop.
result = driver.compile(STEP, driver.CompileOptions(rewrite=False))
print("not rewritten: llvm.func", "llvm.func" in result.module,
      "loop", "llvm.br" in result.module and "scf.for" in result.module)
# CHECK: not rewritten: llvm.func True loop False

# A refusal: its code, severity and location as data.
# CHECK: refused: error samples-selected step.mlir:3
# CHECK-SAME: slicing along the batch dimension selects samples
try:
    driver.compile(ONE_SAMPLE, driver.CompileOptions(
        micro_batches=2, batch_args=[(1, 0)]), filename="step.mlir")
except ga_mlir.PipelineError as error:
    d = error.diagnostics[0]
    print(f"refused: {d.severity} {d.code} {d.file}:{d.line} {d.message}")

# Contradictory ways of setting N: refused with their own code.
# CHECK: contradictory: contradictory-options
try:
    driver.compile(STEP, driver.CompileOptions(
        micro_batches=2, micro_batch_size=2, batch_args=[(1, 0)]))
except ga_mlir.PipelineError as error:
    print("contradictory:", error.diagnostics[0].code)

# run_pipeline's diagnostics carry codes too.
# CHECK: run_pipeline: samples-selected
try:
    ga_mlir.run_pipeline(ONE_SAMPLE, "ga-accumulate{micro-batches=2 "
                         "batch-args=1}")
except ga_mlir.PipelineError as error:
    print("run_pipeline:", error.diagnostics[0].code)

# Options of the wrong kind are refused in Python's words.
# CHECK: TypeError: compile: blas must be True or False, got 1
try:
    driver.compile(STEP, driver.CompileOptions(micro_batches=2,
                                               cpu={"blas": 1}))
except TypeError as error:
    print("TypeError:", error)

# Budgets are read by the compiler's one reader: binary units and decimal
# ones (powers of 1000) exactly, anything else None.
# CHECK: bytes: 2048 2000 839 1610612736 2000000000 2147483648 None None None
print("bytes:", *(driver.parse_byte_count(text) for text in (
    "2KiB", "2kB", "0.000000839GB", "1.5GiB", "2 GB", "2gib", "12XB", "-5",
    "9223372036854775808")))
