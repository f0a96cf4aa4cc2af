# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# What the held-out check of issue #42 (bench/recompute_heldout.py) found on
# models the remat/budget tests never used: an LSTM language model with
# dropout (model_zoo.LSTMLM; its time loop imported in parts, _rolled) whose
# budget nothing fits was refused at "the training step (no line of the
# model)": the function built around the parts had no location, and
# torch-mlir's importer gives each part its first node's location even when
# that node has an empty stack. The refusal must name the line of the
# model's forward, with the smallest budget in the compiler's words.

import inspect
import sys

import torch
from torch.nn import functional as F

from ga_mlir.torch import CompileError, compile_train_step
from model_zoo import LSTMLM


def loss_fn(model, ids):
    logits = model(ids)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                           ids[:, 1:].reshape(-1))


torch.manual_seed(0)
model = LSTMLM(vocab=16, dim=8)
ids = torch.randint(0, 16, (2, 6))
source = inspect.getsourcefile(LSTMLM)
line = next(i for i, text in enumerate(open(source), 1)
            if text.rstrip().endswith("# FORWARD_LINE"))
try:
    compile_train_step(model, loss_fn, torch.optim.SGD(model.parameters()),
                       (ids,), max_memory=1, recompute="none")
    print("compiled under a budget of 1 byte")
    sys.exit(1)
except CompileError as error:
    first = str(error).splitlines()[1]
    located = first.startswith(f"{source}:{line}: error:")
    print(f"code {error.code}, located at the forward {located}, names the "
          f"smallest budget {'the smallest budget that fits is' in str(error)}")
    sys.exit(not located)
# CHECK: code budget-not-met, located at the forward True, names the smallest budget True
