# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/dp_worker.py mismatch short save | sort | FileCheck %s --check-prefix=MISMATCH
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache timeout 120 %torch_python -m torch.distributed.run --standalone --nproc_per_node=2 %S/dp_worker.py dead --timeout 5 | FileCheck %s --check-prefix=DEAD
#
# Ranks that compiled different steps fail at construction on every rank,
# with the first difference named, and so does a shard smaller than N;
# saving a ZeRO-1 step is refused (its library is one rank's); a
# rank that died makes the step of the others raise (gloo's error, at the
# latest after the process group's timeout of 5 s), not hang.
#
# MISMATCH: rank 0 mismatch: CompileError: the ranks of the data-parallel step were compiled differently: parameters[0] is ["net.0.weight", [16, 10], "torch.float32", true] on rank 0 but ["net.0.weight", [20, 10], "torch.float32", true] on rank 1
# MISMATCH: rank 0 save: CompileError: step.save: a shard_optimizer=True (ZeRO-1) step is compiled for one rank
# MISMATCH: rank 0 short: CompileError: micro_batches=2 but ranks [1] hold fewer samples ([1])
# MISMATCH: rank 1 mismatch: CompileError: the ranks of the data-parallel step were compiled differently: parameters
# MISMATCH: rank 1 save: CompileError: step.save: a shard_optimizer=True (ZeRO-1) step is compiled for one rank
# MISMATCH: rank 1 short: CompileError: micro_batches=2 but ranks [1] hold fewer samples ([1])
# DEAD: rank 0 dead: RuntimeError: ga-mlir: a collective of the data-parallel step failed
