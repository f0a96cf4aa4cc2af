# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=3 %S/fsdp_budget_worker.py mlp --shards 4,2,3 --budgets ends | sort | FileCheck %s
#
# As fsdp-budget-world2.py's two buckets with three gloo processes and rows
# that 3 does not divide (16 hidden rows: 5 / 5 / 6, 4 classes: 1 / 1 / 2):
# the smallest shard has 2 samples (N = 2). The ample budget's plan (every
# bucket kept gathered and reduced after the loop: the full accumulators
# of uneven rows) exact, the same on every rank, its collectives as
# predicted, the compiled step's peak within the predicted one (the
# largest over the ranks); the smallest budget named by the refusal of
# one byte, proven, and one byte under it refused naming it. (The budgets
# between are fsdp-budget-world2.py's.)
#
# CHECK: plan ample: N=2 net.0.weight:once/after net.2.weight:once/after {{.*}}
# CHECK: rank 0 layers: distinct plans 1 smallest proven-least True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK: rank 0 mlp layers budget 1GiB: N=2 {{.*}} proven-least True {{.*}} OK
# CHECK: rank 1 layers: distinct plans 1 smallest proven-least True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK: rank 1 mlp layers budget 1GiB: N=2 {{.*}} proven-least True {{.*}} OK
# CHECK: rank 2 layers: distinct plans 1 smallest proven-least True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK: rank 2 mlp layers budget 1GiB: N=2 {{.*}} proven-least True {{.*}} OK
