# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=3 %S/dp_worker.py mlp lm clip memory --shards 4,1,3 --shard-optimizer | sort | FileCheck %s
#
# ZeRO-1 with three gloo processes: uneven shards of the batch (4, 1 and 3
# samples) and uneven rows (the MLP's output layer has 4 rows: 1, 1 and 2
# per rank; its hidden layer 16: 5, 5 and 6), against PyTorch's
# single-process step on the whole batch, ranks bit-identical, the ranks'
# states adding up to the whole state; each rank's memory report shows an
# optimizer_state smaller than the unsharded step's by exactly the bytes of
# the moments' rows the other ranks hold (uneven: 5, 5, 6 of 16 rows).
#
# CHECK: rank 0 clip shards=4,1,3 N=2: {{.*}} same-as-rank-0 True collectives/step 6 state {{[0-9]+}}/244 OK
# CHECK: rank 0 lm shards=4,1,3 N=2: {{.*}} same-as-rank-0 True collectives/step 12 state {{[0-9]+}}/{{[0-9]+}} OK
# CHECK: rank 0 memory: optimizer_state {{[0-9]+}} unsharded, {{[0-9]+}} sharded: [[FEWER0:[0-9]+]] bytes fewer, the [[FEWER0]] of the moments' rows other ranks hold OK
# CHECK: rank 0 mlp shards=4,1,3 N=2: {{.*}} same-as-rank-0 True collectives/step 10 state {{[0-9]+}}/488 OK
# CHECK: rank 1 clip shards=4,1,3 N=1: {{.*}} same-as-rank-0 True collectives/step 6 state {{[0-9]+}}/244 OK
# CHECK: rank 1 lm shards=4,1,3 N=1: {{.*}} same-as-rank-0 True collectives/step 12 state {{[0-9]+}}/{{[0-9]+}} OK
# CHECK: rank 1 memory: optimizer_state {{[0-9]+}} unsharded, {{[0-9]+}} sharded: [[FEWER1:[0-9]+]] bytes fewer, the [[FEWER1]] of the moments' rows other ranks hold OK
# CHECK: rank 1 mlp shards=4,1,3 N=1: {{.*}} same-as-rank-0 True collectives/step 10 state {{[0-9]+}}/488 OK
# CHECK: rank 2 clip shards=4,1,3 N=2: {{.*}} same-as-rank-0 True collectives/step 6 state {{[0-9]+}}/244 OK
# CHECK: rank 2 lm shards=4,1,3 N=2: {{.*}} same-as-rank-0 True collectives/step 12 state {{[0-9]+}}/{{[0-9]+}} OK
# CHECK: rank 2 memory: optimizer_state {{[0-9]+}} unsharded, {{[0-9]+}} sharded: [[FEWER2:[0-9]+]] bytes fewer, the [[FEWER2]] of the moments' rows other ranks hold OK
# CHECK: rank 2 mlp shards=4,1,3 N=2: {{.*}} same-as-rank-0 True collectives/step 10 state {{[0-9]+}}/488 OK
