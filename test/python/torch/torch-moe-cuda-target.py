# REQUIRES: ptxas
# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo:%ga_src_root/bench GA_MLIR_CACHE_DIR=%t.cache %torch_python %s %t.cache | FileCheck %s
#
# A mixture-of-experts model compiled with target="cuda" on a machine
# without a GPU (what torch-cuda-target.py checks for dense models):
# transformers' Mixtral (moe_models.zoo_case: one layer, 4 experts, top-2,
# its grouped-product experts) with the batch-level load-balancing loss,
# AdamW, N = 4. Its grouped products (ga.grouped_matmul, forward with
# group_ids and the weights' gradient) are decomposed by
# --ga-decompose-grouped-gather into generated kernels that gather the
# row's expert weights (their numerics: Integration/GPU/
# verify-mapped-grouped.test). Checked statically on the lowered module
# the cache keeps: no grouped op is left, the host waits once per step
# (no host loop over the experts reading device data), and every kernel
# assembles for sm_90 (ptxas). Not yet checked: spills. Three fused
# row-reduction kernels of this step spill (20 stores and loads each, 24
# bytes of stack; the grouped steps alone assemble without spills,
# verify-mapped-grouped.test); the count is printed. Calling it without a
# GPU is a CompileError.

import glob
import os
import sys

import torch

import gpu_ptx
import model_zoo
import moe_models
from ga_mlir.torch import CompileError, compile_train_step

cache = sys.argv[1]
model_zoo.quiet()
torch.manual_seed(0)
case = moe_models.zoo_case("mixtral", router_logits=True)
model = case.make_model()
data = case.make_batch(torch.Generator().manual_seed(1), 8)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
step = compile_train_step(model, case.loss_fn, opt, data, micro_batches=4,
                          target="cuda")
print("compiled mixtral for cuda, N =", step.chosen_micro_batches())
# CHECK: compiled mixtral for cuda, N = 4

libraries = sorted(glob.glob(os.path.join(cache, "*", "libstep.so")),
                   key=os.path.getmtime)
folder = os.path.dirname(libraries[-1])
source = open(os.path.join(folder, "step.mlir")).read()
text = open(os.path.join(folder, "step.lowered.mlir")).read()
host = text[:text.find("gpu.binary")]
kernels = {}
for ptx in gpu_ptx.extract_ptx(text).values():
    kernels.update(gpu_ptx.run_ptxas(ptx, "sm_90"))
spills = sum(k["spill_stores"] + k["spill_loads"] for k in kernels.values())
print(f"grouped products traced: {source.count('ga.grouped_matmul')}, "
      f"left after lowering: {text.count('ga.grouped_matmul')}")
# CHECK: grouped products traced: {{[1-9][0-9]*}}, left after lowering: 0
print(f"stream synchronizations {host.count('llvm.call @mgpuStreamSynchronize')}"
      f", kernels {len(kernels)}, spills {spills}")
# CHECK: stream synchronizations 1, kernels {{[1-9][0-9]*}}, spills {{[0-9]+}}

try:
    step(*data)
    print("call ran?")
except CompileError as error:
    print(f"call: CompileError: {str(error)[:60]}")
# CHECK: call: CompileError: target='cuda': no CUDA device
