# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/dp_worker.py mlp lm clip memory --shards 5,3 --shard-optimizer | sort | FileCheck %s
#
# ZeRO-1 (shard_optimizer=True) with two gloo processes and uneven shards
# of the batch (5 and 3 samples): the cases of dp-world2.py, each rank
# updating only its rows of every parameter (rows [0, D/2) and [D/2, D))
# and holding only those rows of the optimizer state: the parameters and
# losses after two steps equal PyTorch's single-process step on the whole
# batch, every rank's parameters are bit for bit rank 0's, and the ranks'
# states add up to the whole state (AdamW: 2 x 244 elements of the MLP).
#
# Collectives per step: the MLP's 4 parameters are reduce-scattered and
# all-gathered (8), plus the loss and the token count (2). With clipping
# the global norm reads every gradient, so they stay one all-reduced
# bucket (with the loss) and only the 4 all-gathers are added.
#
# The LM (SGD with momentum) has rows that 2 does not divide (the
# embedding's 11, the head's 11): its states split 121 / 138 of 259.
# memory: each rank's memory report (the MLP, N = 2) shows an
# optimizer_state smaller than the unsharded step's by exactly the bytes of
# the moments' rows the other rank holds.
#
# CHECK: rank 0 clip shards=5,3 N=3: {{.*}} same-as-rank-0 True collectives/step 6 state 122/244 OK
# CHECK: rank 0 lm shards=5,3 N=3: {{.*}} same-as-rank-0 True collectives/step 12 state 121/259 OK
# CHECK: rank 0 memory: optimizer_state {{[0-9]+}} unsharded, {{[0-9]+}} sharded: [[FEWER0:[0-9]+]] bytes fewer, the [[FEWER0]] of the moments' rows other ranks hold OK
# CHECK: rank 0 mlp shards=5,3 N=3: {{.*}} same-as-rank-0 True collectives/step 10 state 244/488 OK
# CHECK: rank 1 clip shards=5,3 N=2: {{.*}} same-as-rank-0 True collectives/step 6 state 122/244 OK
# CHECK: rank 1 lm shards=5,3 N=2: {{.*}} same-as-rank-0 True collectives/step 12 state 138/259 OK
# CHECK: rank 1 memory: optimizer_state {{[0-9]+}} unsharded, {{[0-9]+}} sharded: [[FEWER1:[0-9]+]] bytes fewer, the [[FEWER1]] of the moments' rows other ranks hold OK
# CHECK: rank 1 mlp shards=5,3 N=2: {{.*}} same-as-rank-0 True collectives/step 10 state 244/488 OK
