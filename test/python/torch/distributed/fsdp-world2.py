# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/fsdp_worker.py mlp lm --shards 5,3 --micro-batches 2 | sort | FileCheck %s
#
# shard="parameters" (FSDP/ZeRO-3) with two gloo processes, uneven shards
# of the batch (5 and 3 samples) and of the rows (the LM's 11-row
# embedding and head: 5 / 6): every rank's parameters hold exactly its
# rows; the gathered parameters and the losses after two steps equal
# PyTorch's single-process step on the whole batch (AdamW, SGD with
# momentum, the optimizer applied once per step), bit for bit the same on
# every rank.
#
# Collectives per step (N = 2 micro-batches), counted by the collective
# layer and predicted by the plan (step.shard_plan()): the MLP's first
# layer is read by the forward only (no input gradient is needed), so its
# weight and bias are gathered once per micro-batch; the second layer's
# weight is read by the forward and again by the backward (the gradient of
# the hidden activations): twice; its bias once: 5N all-gathers. Every
# gradient is reduce-scattered per micro-batch: 4N.
#
# CHECK: plan lm {{.*}}
# CHECK: plan mlp net.0.bias: gathered per micro-batch, reduced per micro-batch, 2 all-gathers 2 reduce-scatters
# CHECK: plan mlp net.0.weight: gathered per micro-batch, reduced per micro-batch, 2 all-gathers 2 reduce-scatters
# CHECK: plan mlp net.2.bias: gathered per micro-batch, reduced per micro-batch, 2 all-gathers 2 reduce-scatters
# CHECK: plan mlp net.2.weight: gathered per micro-batch, reduced per micro-batch, 4 all-gathers 2 reduce-scatters
# CHECK: rank 0 lm shards=5,3 N=2: {{.*}} same-as-rank-0 True holds-its-rows True {{.*}} OK
# CHECK: rank 0 mlp shards=5,3 N=2: {{.*}} same-as-rank-0 True holds-its-rows True all-gathers/step 10 (=5N) reduce-scatters/step 8 (=4N) {{.*}} OK
# CHECK: rank 1 lm shards=5,3 N=2: {{.*}} same-as-rank-0 True holds-its-rows True {{.*}} OK
# CHECK: rank 1 mlp shards=5,3 N=2: {{.*}} same-as-rank-0 True holds-its-rows True all-gathers/step 10 (=5N) reduce-scatters/step 8 (=4N) {{.*}} OK
