# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/dp_worker.py mlp lm clip --shards 5,3 | sort | FileCheck %s
#
# Two gloo processes with uneven shards (5 and 3 samples, micro-batches of 2:
# N = 3 and 2): an MLP with AdamW, a token-mean language model with padding (SGD)
# (the loss normalised by the GLOBAL token count), clipping on the global
# norm. Each rank's parameters and losses after two steps equal PyTorch's
# single-process step on the whole batch, and rank 0's bit for bit; one
# collective per step (one bucket: gradients and loss) plus one for the
# token count of the statistics loop.
#
# CHECK: rank 0 clip shards=5,3 N=3: {{.*}} same-as-rank-0 True collectives/step 2 OK
# CHECK: rank 0 lm shards=5,3 N=3: {{.*}} same-as-rank-0 True collectives/step 2 OK
# CHECK: rank 0 mlp shards=5,3 N=3: {{.*}} same-as-rank-0 True collectives/step 2 OK
# CHECK: rank 1 clip shards=5,3 N=2: {{.*}} same-as-rank-0 True collectives/step 2 OK
# CHECK: rank 1 lm shards=5,3 N=2: {{.*}} same-as-rank-0 True collectives/step 2 OK
# CHECK: rank 1 mlp shards=5,3 N=2: {{.*}} same-as-rank-0 True collectives/step 2 OK
