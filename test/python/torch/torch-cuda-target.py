# REQUIRES: ptxas
# RUN: rm -rf %t.cache %t.saved
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo:%ga_src_root/bench:%ga_src_root/scripts/gpu_kit GA_MLIR_CACHE_DIR=%t.cache %torch_python %s %t.cache %t.saved | FileCheck %s
#
# compile_train_step(..., target="cuda") on a machine without a GPU: the
# step is traced on the CPU (example inputs and model on the CPU) and
# compiled by ga-compile for the GPU (--ga-lower-to-nvvm, fatbin for sm_80
# and sm_90). Checked statically on the lowered host code that the cache
# keeps: the matrix products are cuBLASLt calls, the micro-batch body is
# captured as a CUDA graph and launched per micro-batch, the host waits once
# per step (no synchronization inside the loop), and every kernel assembles
# for sm_90 without spills (bench/gpu_ptx.py's PTX extraction and ptxas
# parsing). The step saves; calling it (compiled or loaded) without a GPU
# is a clear CompileError, and the library is not even loaded.

import glob
import os
import sys

import torch
import torch.nn.functional as F

import gpu_ptx
import zoo
from ga_mlir.torch import CompileError, compile_train_step, load_step

cache, saved = sys.argv[1], sys.argv[2]


def mlp_loss(m, x, y):
    return F.cross_entropy(m(x), y)


mlp, opt, (x, y) = zoo.mlp_adamw_case()
step = compile_train_step(mlp, mlp_loss, opt, (x, y), micro_batches=4,
                          target="cuda")
print("compiled mlp for cuda, N =", step.chosen_micro_batches())
# CHECK: compiled mlp for cuda, N = 4


def static_checks(name):
    # The newest library is the step just compiled (cache entries are named
    # by hash, so only their times order them).
    libraries = sorted(glob.glob(os.path.join(cache, "*", "libstep.so")),
                       key=os.path.getmtime)
    path = os.path.join(os.path.dirname(libraries[-1]), "step.lowered.mlir")
    text = open(path).read()
    host = text[:text.find("gpu.binary")]
    # The updates written in place (--ga-write-results-in-place): the work
    # is in the private @train_step_in_place, which @train_step calls.
    fn = "train_step_in_place" if "@train_step_in_place(" in host else \
        "train_step"
    # The function's body: from its signature to the first closing brace at
    # the module's indentation (FileCheck's reading, by substrings).
    start = host.find(f"llvm.func @{fn}(")
    body = host[start:host.find("\n  }", start)] if start >= 0 else ""
    ptx = gpu_ptx.extract_ptx(text)
    kernels = {}
    for p in ptx.values():
        kernels.update(gpu_ptx.run_ptxas(p, "sm_90"))
    spills = sum(k["spill_stores"] + k["spill_loads"] for k in
                 kernels.values())
    print(f"{name}: cuBLASLt calls {body.count('llvm.call @gaCublasLt')}"
          f", graph captures {body.count('llvm.call @mgpuGraphBeginCapture')}"
          f", graph launches {body.count('llvm.call @mgpuGraphLaunch')}"
          f", stream synchronizations {body.count('llvm.call @mgpuStreamSynchronize')}"
          f", kernels {len(kernels)}, spills {spills}")
    needed = os.popen(f"readelf -d {libraries[-1]}").read()
    print(f"{name}: needs LLVM or MLIR:", "libMLIR" in needed or
          "libLLVM" in needed)


static_checks("mlp")
# CHECK: mlp: cuBLASLt calls {{[1-9][0-9]*}}, graph captures {{[1-9]}}, graph launches {{[1-9]}}, stream synchronizations 1, kernels {{[1-9][0-9]*}}, spills 0
# CHECK: mlp: needs LLVM or MLIR: False
# The new parameters and AdamW's moments are written into their tensors'
# device memory by the step (no copy, no allocation per call): only the
# loss comes back.
print("mlp writes in place:", step.writes_in_place(x, y))
# CHECK: mlp writes in place: True

step.save(saved)
print("saved:", " ".join(sorted(os.listdir(saved))))
# CHECK: saved: libga_cublaslt_runtime.so libga_cuda_runtime.so libstep.so step.json

for what, fn in (("call", lambda: step(x, y)),
                 ("load_step", lambda: load_step(saved, mlp, opt)(x, y))):
    try:
        fn()
        print(what, "ran?")
    except CompileError as e:
        print(f"{what}: CompileError: {e}")
# CHECK: call: CompileError: target='cuda': no CUDA device (torch.cuda.is_available() is False): the step was compiled for the GPU
# CHECK: load_step: CompileError: load_step: no CUDA device

# Options of the other target are refused.
try:
    compile_train_step(mlp, mlp_loss, opt, (x, y), micro_batches=4,
                       target="cuda", blas=True)
except TypeError as e:
    print("TypeError:", e)
# CHECK: TypeError: compile_train_step: unknown option 'blas' for target='cuda'

# The GPT-style model of the acceptance kit (scripts/gpu_kit/kit_models.py,
# smaller), its loss under bf16 autocast, fp32 parameters and accumulators.
import kit_models  # noqa: E402

torch.manual_seed(0)
gpt = kit_models.GPT(vocab=64, d=32, heads=4, context=8)
ids, targets = torch.randint(0, 64, (8, 8)), torch.randint(0, 64, (8, 8))
gopt = kit_models.optimizer_for(gpt)
gstep = compile_train_step(gpt, kit_models.gpt_loss, gopt, (ids, targets),
                           micro_batches=4, target="cuda",
                           accumulator_type="f32")
static_checks("gpt")
# Its products reach --ga-contractions-to-cublaslt whole
# (--ga-isolate-library-products runs before fusion): library calls.
# CHECK: gpt: cuBLASLt calls {{[1-9][0-9]*}}, graph captures {{[1-9]}}, graph launches {{[1-9]}}, stream synchronizations 1, kernels {{[1-9][0-9]*}}, spills 0
# CHECK: gpt: needs LLVM or MLIR: False
print("gpt writes in place:", gstep.writes_in_place(ids, targets))
# CHECK: gpt writes in place: True
