# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Steps with openmp=True on 2 threads against PyTorch (the zoo's criterion,
# model_zoo.verdict): GPT-2 (softmax, LayerNorm, GELU, cross-entropy: row
# reductions split into vector lanes, rows in parallel) and a CNN with
# BatchNorm. Once with the default min_parallel_work (the zoo's small models
# run mostly on one thread: no loop pays for an OpenMP region) and once with
# min_parallel_work=0 (every loop of more than one iteration an OpenMP
# region: each row's lane buffer on its own thread's stack; every matrix
# product split over the two threads, in blocks of rows or columns or by
# the matrices of a batched product). num_threads is PyTorch's by default,
# and the loader runs OpenBLAS on one thread for OpenMP steps (one pool).

import ctypes
import sys

import model_zoo
import torch
from ga_mlir.torch import _options

model_zoo.quiet()
torch.set_num_threads(2)
print({k: v for k, v in
       _options.library_cpu_options(dict(openmp=True)).items()
       if k == "num_threads"})
# CHECK: {'num_threads': 2}
failures = 0
for work in (None, 0):
    options = dict(openmp=True)
    if work is not None:
        options["min_parallel_work"] = work
    print("min_parallel_work", work)
    failures += model_zoo.run([("gpt2", "adamw", 4), ("resnet18", "sgd", 3)],
                              **options)
# CHECK: min_parallel_work None
# CHECK-NEXT: gpt2 adamw N=4: {{.*}} OK
# CHECK-NEXT: resnet18 sgd N=3: {{.*}} OK
# CHECK-NEXT: min_parallel_work 0
# CHECK-NEXT: gpt2 adamw N=4: {{.*}} OK
# CHECK-NEXT: resnet18 sgd N=3: {{.*}} OK
# The steps' OpenBLAS (the library they link, already loaded) after them.
openblas = ctypes.CDLL("libopenblas.so.0")
print("OpenBLAS threads", openblas.openblas_get_num_threads())
# CHECK-NEXT: OpenBLAS threads 1
sys.exit(failures)
