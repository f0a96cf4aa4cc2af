# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=3 %S/fsdp_budget_worker.py mlp --shards 4,2,3 | sort | FileCheck %s
#
# As fsdp-budget-world2.py with three gloo processes and rows that 3 does
# not divide (16 hidden rows: 5 / 5 / 6, 4 classes: 1 / 1 / 2): the smallest
# shard has 2 samples (N = 2). Three budgets, each plan exact, its
# collectives as predicted, bytes never more for a larger budget, the
# compiled step's peak within the predicted one, the plan of the next fewer
# bytes over the budget; one byte under the smallest refused.
#
# CHECK: plan ample: N=2 {{.*}}
# CHECK: plan middle: {{.*}}
# CHECK: plan smallest: N=2 {{.*}}
# CHECK: rank 0 distinct plans {{[23]}} bytes-monotone True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK-COUNT-3: rank 0 mlp budget {{.*}} OK
# CHECK: rank 1 distinct plans {{[23]}} bytes-monotone True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK-COUNT-3: rank 1 mlp budget {{.*}} OK
# CHECK: rank 2 distinct plans {{[23]}} bytes-monotone True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK-COUNT-3: rank 2 mlp budget {{.*}} OK
