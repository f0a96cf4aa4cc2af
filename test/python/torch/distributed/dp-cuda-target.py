# REQUIRES: ptxas
# RUN: rm -rf %t.cache %t.saved && mkdir -p %t.saved
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo:%ga_src_root/scripts/gpu_kit GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=1 %s %t.cache %t.saved | FileCheck %s
#
# compile_train_step(..., target="cuda") inside a torch.distributed process
# group (gloo, one process; no GPU here): a data-parallel step compiled for
# the GPU. Checked statically, as torch-cuda-target.py checks the
# single-process step:
#  * the lowered host code (the cache's step.lowered.mlir) calls
#    gaNcclAllReduce once per bucket (DDP's 25 MiB: the gradients and the
#    loss; 2 KiB buckets: more) plus once for cross_entropy's global target
#    count, synchronizes the host once per step, and still captures the
#    micro-batch body as a CUDA graph;
#  * on the kernel-stage host code, test/Integration/GPU/Inputs/
#    check_overlap.py (independent of the passes) finds every gradient
#    all-reduce after its bucket's last writer in the peeled last
#    micro-batch, on the communication stream, joined before the optimizer,
#    no host synchronization in the loop; and the count's all-reduce (after
#    the statistics loop) joined before the micro-batch loop that reads it
#    (also checked here: joins_before_loops);
#  * libGANcclRuntime.so forwards gaNcclAllReduce, stream included, to the
#    callback that the frontend registers (gaNcclForwardAllReduce; counted
#    by gaNcclAllReduceCalls), and without one reports that it has no
#    communicator;
#  * the step saves with its data-parallel contract and the NCCL runtime,
#    load_step binds it to the process group, and calling either without a
#    GPU is a clear CompileError. (Sharded steps for the GPU:
#    sharded-cuda-target.py.)

import ctypes
import dataclasses
import glob
import os
import re
import subprocess
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

import kit_models
import zoo
from ga_mlir import driver, run_pipeline
from ga_mlir.torch import CompileError, compile_train_step, load_step

cache, saved = sys.argv[1], sys.argv[2]
OVERLAP_CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "..", "..", "..", "Integration", "GPU",
                             "Inputs", "check_overlap.py")
dist.init_process_group("gloo")


def mlp_loss(m, x, y):
    return F.cross_entropy(m(x), y)


def newest_library():
    return sorted(glob.glob(os.path.join(cache, "*", "libstep.so")),
                  key=os.path.getmtime)[-1]


def host_counts(name):
    text = open(os.path.join(os.path.dirname(newest_library()),
                             "step.lowered.mlir")).read()
    host = text[:text.find("gpu.binary")]
    # The updates written in place (--ga-write-results-in-place): the work
    # is in the private @train_step_in_place, which @train_step calls.
    fn = "train_step_in_place" if "@train_step_in_place(" in host else \
        "train_step"
    train = re.search(rf"llvm\.func @{fn}\(.*?\n  \}}", host, re.S)
    body = train.group(0) if train else ""
    print(f"{name}: NCCL all-reduces {body.count('llvm.call @gaNcclAllReduce')}"
          f", stream synchronizations "
          f"{body.count('llvm.call @mgpuStreamSynchronize')}"
          f", graph captures {body.count('llvm.call @mgpuGraphBeginCapture')}"
          f", cuBLASLt calls {len(re.findall(r'llvm.call @gaCublasLt', body))}")


def kernel_stage(step, name):
    """check_overlap.py on the kernel-stage host code of the step as
    compiled (the driver's rewrite under the frontend's options, the
    buckets, then --ga-lower-to-gpu-kernels)."""
    v = next(iter(step._variants.values()))
    ir, options = step._step_options(v.ir, v.micro_batches, v.batch_args,
                                     v.spec)
    rewritten = driver.compile(ir, dataclasses.replace(
        options, target=None)).module
    kernels = run_pipeline(rewritten, "builtin.module(func.func("
                           "ga-bucket-gradients{bucket-size="
                           f"{options.bucket_size}}}),"
                           "ga-lower-to-gpu-kernels{cuda-graphs=0})")
    path = os.path.join(saved, f"{name}.kernels.mlir")
    with open(path, "w") as f:
        f.write(kernels)
    joins_before_loops(kernels, name)
    out = subprocess.run([sys.executable, OVERLAP_CHECKER, path],
                         capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    print(f"{name}: check_overlap: {lines[:1] + lines[-1:]} "
          f"{out.stderr.strip()} exit {out.returncode}")


def joins_before_loops(kernels, name):
    """Every all-reduce's communication stream joins the step's stream
    (an event recorded on it, waited for by another stream) before the
    next loop of @train_step: the main loop reads the statistics loop's
    reduced counts."""
    body = re.search(r"func\.func @train_step\(.*?\n  }\n", kernels,
                     re.S).group(0).splitlines()
    top = [(i, l) for i, l in enumerate(body) if l.startswith("    ")
           and not l.startswith("     ")]
    late = 0
    calls = [(i, re.search(r"@gaNcclAllReduce\((%[\w.]+),", l).group(1))
             for i, l in top if "call @gaNcclAllReduce(" in l]
    for i, comm in calls:
        join = next((k for k, l in top if k > i and re.search(
            rf"call @mgpuEventRecord\(%[\w.]+, {re.escape(comm)}\)", l)),
            None)
        loop = next((k for k, l in top if k > i and " = scf.for " in l),
                    None)
        if join is None or (loop is not None and loop < join):
            late += 1
    print(f"{name}: all-reduces {len(calls)}, joined after a later loop "
          f"{late}")


mlp, opt, (x, y) = zoo.mlp_adamw_case()
step = compile_train_step(mlp, mlp_loss, opt, (x, y), micro_batches=4,
                          target="cuda")
print(type(step).__name__, "world", step.world_size, "N",
      step.chosen_micro_batches())
# CHECK: DataParallelTrainStep world 1 N 4
host_counts("mlp")
# CHECK: mlp: NCCL all-reduces 2, stream synchronizations 1, graph captures {{[1-9]}}, cuBLASLt calls {{[1-9][0-9]*}}
kernel_stage(step, "mlp")
# CHECK: mlp: all-reduces 2, joined after a later loop 0
# CHECK: mlp: check_overlap: ['all-reduces before the micro-batch loop: 1, joined before it', 'all-reduces: 1; last micro-batch: peeled from the loop; loop body: {{[1-9][0-9]*}} launches; 1 host synchronization'] exit 0

small = compile_train_step(mlp, mlp_loss, opt, (x, y), micro_batches=4,
                           target="cuda", bucket_cap_mb=2048 / 2**20)
host_counts("mlp 2 KiB buckets")
# CHECK: mlp 2 KiB buckets: NCCL all-reduces {{[2-9]}}, stream synchronizations 1
kernel_stage(small, "mlp-small")
# CHECK: mlp-small: all-reduces {{[3-9]}}, joined after a later loop 0
# CHECK: mlp-small: check_overlap: ['all-reduces before the micro-batch loop: 1, joined before it', 'all-reduces: {{[2-9]}}; last micro-batch: peeled from the loop; {{.*}}; 1 host synchronization'] exit 0

# The memory report of the data-parallel GPU step is the GPU bufferization's
# (device bytes, its all-reduces lowered to NCCL's), not the CPU library's:
# the same argument bytes, no CPU heap alignment (64 bytes an allocation on
# the CPU), the cuBLASLt workspace in total_peak, which is arguments plus
# the peak of the live allocations plus the workspace (the categories'
# peaks, each at its own point, add up to at least that).
gpu = step.memory_report()
cpu = compile_train_step(mlp, mlp_loss, opt, (x, y), micro_batches=4,
                         target="cpu").memory_report()
parts = ["parameters", "optimizer_state", "inputs", "accumulators",
         "results", "temporaries"]
print("report:", gpu["target"], cpu["target"],
      "total", gpu["total_peak"] == gpu["arguments"] +
      gpu["allocation_peak"] + gpu["static"] + gpu["workspaces"],
      sum(gpu[k] for k in parts) + gpu["workspaces"] >= gpu["total_peak"],
      "arguments", all(gpu[k] == cpu[k] for k in parts[:3]),
      "workspaces", gpu["workspaces"], "static", gpu["static"],
      "aligned", cpu["accumulators"] - gpu["accumulators"] > 0 and
      (cpu["accumulators"] - gpu["accumulators"]) % 64 == 0,
      "differs", gpu["total_peak"] != cpu["total_peak"])
# CHECK: report: cuda cpu total True True arguments True workspaces 33554432 static 0 aligned True differs True

# The GPT-style model of the acceptance kit (smaller): a token-mean loss
# under bf16 autocast, whose global token count is a collective of its own.
torch.manual_seed(0)
gpt = kit_models.GPT(vocab=64, d=32, heads=4, context=8)
ids, targets = torch.randint(0, 64, (8, 8)), torch.randint(0, 64, (8, 8))
compile_train_step(gpt, kit_models.gpt_loss, kit_models.optimizer_for(gpt),
                   (ids, targets), micro_batches=4, target="cuda",
                   accumulator_type="f32")
host_counts("gpt")
# CHECK: gpt: NCCL all-reduces 2, stream synchronizations 1, graph captures {{[1-9]}}, cuBLASLt calls {{[1-9][0-9]*}}

# Saved with its contract and the runtimes; loaded inside the group.
step.save(saved + "/mlp")
print("saved:", " ".join(sorted(f for f in os.listdir(saved + "/mlp"))))
# CHECK: saved: libGANcclRuntime.so libga_cublaslt_runtime.so libga_cuda_runtime.so libstep.so step.json
loaded = load_step(saved + "/mlp", mlp, opt)
print("loaded:", type(loaded).__name__, loaded.data_parallel)
# CHECK: loaded: LoadedDataParallelStep {'global_batch': 16, 'batch_dims': [0, 0], 'bucket_cap_mb': 25}
for what, fn in (("call", lambda: step(x, y)), ("loaded", lambda: loaded(x, y))):
    try:
        fn()
        print(what, "ran?")
    except CompileError as e:
        print(f"{what}: CompileError: {e}")
# CHECK: call: CompileError: target='cuda': no CUDA device
# CHECK: loaded: CompileError: target='cuda': no CUDA device

# The forwarding of libGANcclRuntime.so (its stream argument included).
nccl = ctypes.CDLL(os.path.join(saved, "mlp", "libGANcclRuntime.so"))
FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                      ctypes.c_int64, ctypes.c_int32, ctypes.c_int32)
seen = []
forward = FN(lambda *args: seen.append(args) or 0)
nccl.gaNcclForwardAllReduce.argtypes = [FN]
nccl.gaNcclAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_int64, ctypes.c_int32,
                                 ctypes.c_int32]
nccl.gaNcclAllReduceCalls.restype = ctypes.c_int64
nccl.gaNcclForwardAllReduce(forward)
status = nccl.gaNcclAllReduce(0x5000, 0x7000, 12, 7, 0)
print("forwarded:", status, seen, "calls", nccl.gaNcclAllReduceCalls())
# CHECK: forwarded: 0 [(20480, 28672, 12, 7, 0)] calls 1
nccl.gaNcclForwardAllReduce(FN())
sys.stdout.flush()
print("unforwarded:", nccl.gaNcclAllReduce(0x5000, 0x7000, 12, 7, 0))
# CHECK: unforwarded: 1

dist.destroy_process_group()
