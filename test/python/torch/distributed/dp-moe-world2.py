# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/dp_worker.py moe --shards 5,3 | sort | FileCheck %s
#
# Two gloo processes with uneven shards (5 and 3 samples, micro-batches of
# 2: N = 3 and 2) training transformers' Mixtral (dp_worker.moe_case: one
# layer, 4 experts, top-2, its grouped-product experts, padded text) with
# output_router_logits: the batch-level load-balancing loss (coefficient 1)
# is a product of two means over the tokens of the WHOLE global batch, so
# its statistics are all-reduced before the loop (the third collective of
# a step, besides the gradient bucket and the token count). Each rank's
# parameters and losses after two steps equal PyTorch's single-process step
# on the whole batch (SGD with momentum), and rank 0's bit for bit.
#
# CHECK: rank 0 moe shards=5,3 N=3: {{.*}} same-as-rank-0 True collectives/step 3 OK
# CHECK: rank 1 moe shards=5,3 N=2: {{.*}} same-as-rank-0 True collectives/step 3 OK
