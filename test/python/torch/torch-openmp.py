# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Steps with openmp=True on 2 threads against PyTorch (the zoo's criterion,
# model_zoo.verdict): GPT-2 (softmax, LayerNorm, GELU, cross-entropy: row
# reductions split into vector lanes, rows in parallel) and a CNN with
# BatchNorm. Once with the default min_parallel_work (the zoo's small models
# run mostly on one thread: no loop pays for an OpenMP region) and once with
# min_parallel_work=0 (every loop of more than one iteration an OpenMP
# region: each row's lane buffer on its own thread's stack).

import sys

import model_zoo

model_zoo.quiet()
failures = 0
for work in (None, 0):
    options = dict(openmp=True, num_threads=2)
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
sys.exit(failures)
