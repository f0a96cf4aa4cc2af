# RUN: rm -rf %t.cache %t.saved
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=1 %S/dp_worker.py save-dp --dir %t.saved | FileCheck %s --check-prefix=SAVE
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/dp_worker.py load-dp --dir %t.saved --shards 5,3 | sort | FileCheck %s --check-prefix=LOAD
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo %torch_python %S/dp_worker.py load-outside --dir %t.saved | FileCheck %s --check-prefix=OUTSIDE
#
# Saved data-parallel steps: compiled and saved in a process group of ONE
# process (global batch 8, N = 2; the library does not depend on the world
# size or the rank), loaded by load_step on each of two ranks with uneven
# shards (5 and 3), bound to the default group: two steps of each equal
# PyTorch's single-process step on the whole batch (an MLP with AdamW; a
# token-mean LM with padding, whose global token count is a collective of
# its own), the ranks bit-identical; 2 collectives per step (the bucket of
# the gradients and the loss, the target count of cross_entropy's mean). Shards that do not add up to the saved
# global batch fail on every rank; a single-process step loaded inside the
# group needs process_group=None; a data-parallel step loaded outside a
# process group is refused.
#
# SAVE: rank 0 save-dp: saved mlp lm and alone
# RUN: %torch_python -c "import json,sys; d=json.load(open(sys.argv[1])); print('step.json data_parallel:', d['data_parallel'])" %t.saved/mlp/step.json | FileCheck %s --check-prefix=JSON
# JSON: step.json data_parallel: {'global_batch': 8, 'batch_dims': [0, 0], 'bucket_cap_mb': 25}
#
# LOAD: rank 0 load-dp alone, process_group=None: LoadedTrainStep trained this rank alone
# LOAD: rank 0 load-dp alone: CompileError: load_step: this step was saved by a single process, and torch.distributed has an initialized
# LOAD: rank 0 load-dp lm shards=5,3 LoadedDataParallelStep: {{.*}} same-as-rank-0 True collectives/step 2 OK
# LOAD: rank 0 load-dp lm: CompileError: step: the ranks' shards hold 6 samples in all; the saved data-parallel step was compiled for a global batch of 8
# LOAD: rank 0 load-dp mlp shards=5,3 LoadedDataParallelStep: {{.*}} same-as-rank-0 True collectives/step 2 OK
# LOAD: rank 0 load-dp mlp: CompileError: step: the ranks' shards hold 6 samples in all
# LOAD: rank 1 load-dp alone, process_group=None: LoadedTrainStep
# LOAD: rank 1 load-dp alone: CompileError: load_step: this step was saved by a single process
# LOAD: rank 1 load-dp lm shards=5,3 LoadedDataParallelStep: {{.*}} same-as-rank-0 True collectives/step 2 OK
# LOAD: rank 1 load-dp lm: CompileError: step: the ranks' shards hold 6 samples in all
# LOAD: rank 1 load-dp mlp shards=5,3 LoadedDataParallelStep: {{.*}} same-as-rank-0 True collectives/step 2 OK
# LOAD: rank 1 load-dp mlp: CompileError: step: the ranks' shards hold 6 samples in all
#
# OUTSIDE: load-outside: CompileError: load_step: this step is data-parallel (saved from a torch.distributed process group, global batch of 8 samples): load it inside an initialized process group
