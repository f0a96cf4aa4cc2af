# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=3 %S/dp_worker.py moe --shards 4,1,3 | sort | FileCheck %s
#
# Three gloo processes with shards of 4, 1 and 3 samples (micro-batches of
# 2: N = 2, 1, 2) training transformers' Mixtral with its batch-level
# load-balancing loss (dp_worker.moe_case; see dp-moe-world2.py): every
# rank's parameters and losses equal PyTorch's single-process step on the
# whole batch, and rank 0's bit for bit.
#
# CHECK: rank 0 moe shards=4,1,3 N=2: {{.*}} same-as-rank-0 True collectives/step 3 OK
# CHECK: rank 1 moe shards=4,1,3 N=1: {{.*}} same-as-rank-0 True collectives/step 3 OK
# CHECK: rank 2 moe shards=4,1,3 N=2: {{.*}} same-as-rank-0 True collectives/step 3 OK
