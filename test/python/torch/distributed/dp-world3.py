# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=3 %S/dp_worker.py mlp lm --shards 4,1,3 | sort | FileCheck %s
#
# Three gloo processes with shards of 4, 1 and 3 samples (micro-batches of
# 2: N = 2, 1, 2): the MLP with AdamW and the token-mean language model
# equal PyTorch's single-process step on the whole batch on every rank.
#
# CHECK: rank 0 lm shards=4,1,3 N=2: {{.*}} same-as-rank-0 True {{.*}} OK
# CHECK: rank 0 mlp shards=4,1,3 N=2: {{.*}} same-as-rank-0 True {{.*}} OK
# CHECK: rank 1 lm shards=4,1,3 N=1: {{.*}} same-as-rank-0 True {{.*}} OK
# CHECK: rank 1 mlp shards=4,1,3 N=1: {{.*}} same-as-rank-0 True {{.*}} OK
# CHECK: rank 2 lm shards=4,1,3 N=2: {{.*}} same-as-rank-0 True {{.*}} OK
# CHECK: rank 2 mlp shards=4,1,3 N=2: {{.*}} same-as-rank-0 True {{.*}} OK
