# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/fsdp_budget_worker.py mlp --shards 5,3 | sort | FileCheck %s
#
# shard="parameters" with max_memory on two gloo processes (shards of 5
# and 3 samples; the MLP's 16 hidden rows 8 / 8, its 4 classes 2 / 2; N = 3;
# two buckets, a layer each): the plan (per bucket kept gathered or not,
# reduced per micro-batch or after the loop) under three budgets: an ample
# one, the smallest that fits (named by the refusal of a budget of one byte:
# the least peak of the 16 plans, each measured as compiled) and one
# between. Each is exact against PyTorch's single-process full-batch step
# (AdamW), the same on both ranks, its collectives' calls and bytes as the
# plan predicts, this rank's step as compiled (--ga-memory-report) within
# the predicted per-rank peak, itself within the budget (the chosen plan's,
# as compiled, the largest over the ranks), and the plan of the next fewer
# bytes, compiled anew, over the budget (the least traffic that fits). At
# least two plans differ and a larger budget never moves more bytes (the
# heap measured during the calls is printed only: see
# fsdp_budget_worker.py). One byte under the smallest budget is refused,
# naming it.
#
# CHECK: plan ample: N=3 {{.*}}
# CHECK: plan middle: {{.*}}
# CHECK: plan smallest: N=3 {{.*}}/per m{{.*}}
# CHECK: rank 0 distinct plans {{[23]}} bytes-monotone True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK: rank 0 mlp budget {{.*}} OK
# CHECK: rank 0 mlp budget {{.*}} OK
# CHECK: rank 0 mlp budget {{.*}} OK
# CHECK: rank 1 distinct plans {{[23]}} bytes-monotone True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK: rank 1 mlp budget {{.*}} OK
# CHECK: rank 1 mlp budget {{.*}} OK
# CHECK: rank 1 mlp budget {{.*}} OK
