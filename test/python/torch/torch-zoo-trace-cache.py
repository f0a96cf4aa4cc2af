# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The trace cache (_cache.trace_key) with transformers' models: their
# output-capturing decorator and hooks read a ContextVar (the output
# collector), keyed by its value in the compiling context. A second
# compile_train_step of an equal model reuses the trace (no new entry in
# _cache._TRACES) and trains as PyTorch does; what changes the trace (a
# configuration's attribute, the collector's value) changes the key.

import copy

import torch

import model_zoo
from ga_mlir.torch import _cache, compile_train_step
from transformers.utils.output_capturing import _active_collector

model_zoo.quiet()
gen = torch.Generator().manual_seed(0)
batch = model_zoo.padded_text(gen, 6)


def compiled(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return opt, compile_train_step(model, model_zoo.hf_loss, opt, batch,
                                   micro_batches=3)


def key(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return _cache.trace_key(model, model_zoo.hf_loss, opt, batch, None)


torch.manual_seed(0)
first = model_zoo.gpt2()
compiled(first)
torch.manual_seed(1)
second = model_zoo.gpt2()
reference = model_zoo.hf_loss(second, *batch).item()
opt, step = compiled(second)
loss = float(step(*batch))
# CHECK: gpt2: traces 1, loss as PyTorch's: True
print(f"gpt2: traces {len(_cache._TRACES)}, loss as PyTorch's:",
      abs(loss - reference) <= 1e-5 * abs(reference))

base = key(second)


def changed(**settings):
    """The key of a copy of `second` with its configuration changed."""
    twin = copy.deepcopy(second)
    for name, value in settings.items():
        setattr(twin.config, name, value)
    return key(twin)


# CHECK-NEXT: a copy: same key True
print("a copy: same key", changed() == base)
# CHECK-NEXT: output_hidden_states: same key False
print("output_hidden_states: same key",
      changed(output_hidden_states=True) == base)
# CHECK-NEXT: attention dropout: same key False
print("attention dropout: same key", changed(attn_pdrop=0.1) == base)
token = _active_collector.context_var.set({"attentions": []})
# CHECK-NEXT: collector set: same key False
print("collector set: same key", key(second) == base)
_active_collector.context_var.reset(token)
# (A new model class enters transformers' registry of recorded outputs, a
# global the decorator reads: keys formed before it differ from later ones.)
# CHECK-NEXT: llama: a key True
print("llama: a key", key(model_zoo.llama()) is not None)
