# RUN: rm -rf %t.cache %t.ckpt
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/fsdp_worker.py mlp lm --shards 5,3 --micro-batches 2 --checkpoint %t.ckpt | sort | FileCheck %s
#
# Stop and resume a shard="parameters" step through
# torch.distributed.checkpoint (two gloo processes, uneven rows: the LM's
# 11-row embedding 5 / 6): step.sharded_state_dict() holds each rank's rows
# as ShardedTensors at ga's row offsets (the step's own tensors: loading
# writes into them) and the rest plainly; a new model with other values
# loads the checkpoint saved after one step, and its next step equals the
# uninterrupted one bit for bit (loss, parameters, AdamW's and SGD's
# state).
#
# CHECK: rank 0 lm resumed: loss True parameters True optimizer-state True {{.*}} OK
# CHECK: rank 0 mlp resumed: loss True parameters True optimizer-state True {{.*}} OK
# CHECK: rank 1 lm resumed: {{.*}} OK
# CHECK: rank 1 mlp resumed: {{.*}} OK
