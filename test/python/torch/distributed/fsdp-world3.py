# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=3 %S/fsdp_worker.py mlp lm --shards 4,2,3 --micro-batches 2 | sort | FileCheck %s
#
# shard="parameters" with three gloo processes: shards of 4, 2 and 3
# samples; rows that 3 does not divide (the MLP's 16 hidden rows: 5 / 5 / 6,
# its 4 classes: 1 / 1 / 2; the LM's 11: 3 / 4 / 4, its 8: 2 / 3 / 3). As
# fsdp-world2.py: equal to PyTorch's single-process full-batch step, bit for
# bit the same on every rank, each rank holding its rows, the collectives'
# calls and bytes as the plan predicts (5N all-gathers and 4N
# reduce-scatters for the MLP).
#
# CHECK: rank 0 lm shards=4,2,3 N=2: {{.*}} same-as-rank-0 True holds-its-rows True {{.*}} OK
# CHECK: rank 0 mlp shards=4,2,3 N=2: {{.*}} same-as-rank-0 True holds-its-rows True all-gathers/step 10 (=5N) reduce-scatters/step 8 (=4N) {{.*}} OK
# CHECK: rank 1 lm shards=4,2,3 N=2: {{.*}} OK
# CHECK: rank 1 mlp shards=4,2,3 N=2: {{.*}} all-gathers/step 10 (=5N) reduce-scatters/step 8 (=4N) {{.*}} OK
# CHECK: rank 2 lm shards=4,2,3 N=2: {{.*}} OK
# CHECK: rank 2 mlp shards=4,2,3 N=2: {{.*}} all-gathers/step 10 (=5N) reduce-scatters/step 8 (=4N) {{.*}} OK
