# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# What the held-out check of issue #42 (bench/recompute_heldout.py) found on
# models the remat/budget tests never used: an LSTM language model with
# dropout (its time loop imported in parts, _rolled) whose budget nothing
# fits was refused at "the training step (no line of the model)": the
# function built around the parts had no location, and torch-mlir's
# importer gives each part its first node's location even when that node
# has an empty stack. The refusal must name the line of the model's
# forward, with the smallest budget in the compiler's words.

import sys

import torch
from torch import nn
from torch.nn import functional as F

from ga_mlir.torch import CompileError, compile_train_step


class LSTMLM(nn.Module):
    def __init__(self, vocab=16, dim=8, p=0.2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.drop = nn.Dropout(p)
        self.lstm = nn.LSTM(dim, dim, num_layers=2, dropout=p,
                            batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        out, _ = self.lstm(self.drop(self.emb(ids)))  # FORWARD_LINE
        return self.head(self.drop(out))


def loss_fn(model, ids):
    logits = model(ids)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                           ids[:, 1:].reshape(-1))


torch.manual_seed(0)
model = LSTMLM()
ids = torch.randint(0, 16, (2, 6))
line = next(i for i, text in enumerate(open(__file__), 1)
            if text.rstrip().endswith("# FORWARD_LINE"))
try:
    compile_train_step(model, loss_fn, torch.optim.SGD(model.parameters()),
                       (ids,), max_memory=1, recompute="none")
    print("compiled under a budget of 1 byte")
    sys.exit(1)
except CompileError as error:
    first = str(error).splitlines()[1]
    located = first.startswith(f"{__file__}:{line}: error:")
    print(f"code {error.code}, located at the forward {located}, names the "
          f"smallest budget {'the smallest budget that fits is' in str(error)}")
    sys.exit(not located)
# CHECK: code budget-not-met, located at the forward True, names the smallest budget True
