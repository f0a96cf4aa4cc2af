# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/fsdp_budget_worker.py mlp --shards 5,3 --buckets layers,parameters | sort | FileCheck %s
#
# shard="parameters" with max_memory on two gloo processes (shards of 5
# and 3 samples; the MLP's 16 hidden rows 8 / 8, its 4 classes 2 / 2; N = 3),
# in one process per rank (the trace and the compile cache shared):
#
# Two buckets, a layer each (16 plans): the plan under three budgets: an
# ample one, the smallest that fits (named by the refusal of a budget of
# one byte: the least peak of the plans, proven) and one between. Each is
# exact against PyTorch's single-process full-batch step (AdamW), the same
# on both ranks, its collectives' calls and bytes as the plan predicts,
# this rank's step as compiled (--ga-memory-report) within the predicted
# per-rank peak, itself within the budget (the chosen plan's, as compiled,
# the largest over the ranks), proven the least traffic that fits, and the
# plan of the next fewer bytes measured over the budget, compiled anew
# here. At least two plans differ and a larger budget never moves more
# bytes (the heap measured during the calls is printed only: see
# fsdp_budget_worker.py). One byte under the smallest is refused, naming
# it.
#
# A bucket a parameter (bucket_cap_mb=0: 8 decisions, 256 plans at N = 3,
# more than the planner could list): under an ample budget and one byte
# under its plan's peak, each step exact as above, the choice proven the
# least (a few plans compiled of the 256), and the 3 plans of the next
# fewer bytes, listed by the test from the default plan's collectives and
# compiled anew, over the budget. A budget of one byte is refused naming a
# budget that fits, not proven the least here: the plans' peaks differ by
# tens of bytes, their lower bounds are kilobytes under them (the step's
# temporaries), so the planner stops at its cap on compiles and says so.
#
# CHECK: plan ample: N=3 net.0.weight:once/after net.0.bias:once/after net.2.weight:once/after net.2.bias:once/after bytes 1952
# CHECK: plan ample: N=3 net.0.weight:once/after net.2.weight:once/after bytes 1952
# CHECK: plan middle: {{.*}}
# CHECK: plan smallest: N=3 {{.*}}/per m{{.*}}
# CHECK: plan under-ample: N=3 {{.*}}
# CHECK: rank 0 layers: distinct plans {{[23]}} smallest proven-least True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK-COUNT-3: rank 0 mlp layers budget {{.*}} proven-least True {{.*}} OK
# CHECK-COUNT-2: rank 0 mlp parameters budget {{.*}} proven-least True {{.*}} OK
# CHECK: rank 0 parameters: budget 1 refused True names {{[0-9]+}} proven-least False
# CHECK: rank 1 layers: distinct plans {{[23]}} smallest proven-least True; budget smallest-1 refused budget-not-met names-smallest True
# CHECK-COUNT-3: rank 1 mlp layers budget {{.*}} proven-least True {{.*}} OK
# CHECK-COUNT-2: rank 1 mlp parameters budget {{.*}} proven-least True {{.*}} OK
# CHECK: rank 1 parameters: budget 1 refused True names {{[0-9]+}} proven-least False
