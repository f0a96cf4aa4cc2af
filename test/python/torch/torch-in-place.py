# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# Zero-copy updates: the compiled step writes the new parameters and
# optimizer states into the tensors' own storage. Checked three ways, each
# against PyTorch's full-batch step: the tensors keep their storage
# (data_ptr) and hold PyTorch's values after each step; no Python copy runs
# during a call (torch.Tensor.copy_ counted); and the library itself copies
# nothing: in the lowered step, the private function that does the work takes
# only the arguments and the loss's out-parameter (every update was proven
# in place by one-shot bufferization and dropped from its results) and holds
# no memcpy. in_place=False (results into buffers, then copied) gives the
# same values; arguments that share memory are refused.

import glob
import os
import re
import sys

import torch

import zoo
from ga_mlir.torch import compile_train_step

failures = 0


def lowered_signature_ok(cache):
    """(number of libraries, whether each one's @train_step_in_place takes
    args + 1 descriptors and contains no memcpy)."""
    found, ok = 0, True
    for path in glob.glob(os.path.join(cache, "*", "step.lowered.mlir")):
        if not os.path.exists(os.path.join(os.path.dirname(path),
                                           "in-place")):
            continue
        text = open(path).read()
        impl = re.search(r"llvm\.func @train_step_in_place\(([^)]*)\)"
                         r"(.*?)\n  llvm\.func ", text, re.S)
        public = re.search(r"llvm\.func @_mlir_ciface_train_step\(([^)]*)\)",
                           text)
        found += 1
        ok &= bool(impl and public)
        if impl and public:
            # memref descriptors: two pointers each in the expanded form,
            # one pointer each in the C interface.
            ok &= impl.group(1).count("!llvm.ptr") == \
                2 * public.group(1).count("!llvm.ptr")
            ok &= "memcpy" not in impl.group(2)
    return found, ok


copies = {"n": 0}
original_copy = torch.Tensor.copy_


def counting_copy(self, *args, **kwargs):
    copies["n"] += 1
    return original_copy(self, *args, **kwargs)


for make_model, make_batch, loss_fn, opt_names, name in (
        (zoo.MLP, zoo.mlp_batch, zoo.classification_loss,
         ("sgd", "adamw", "nesterov"), "mlp"),
        (zoo.GPT, zoo.lm_batch, zoo.lm_loss, ("adamw",), "gpt")):
    for opt_name in opt_names:
        torch.manual_seed(1)
        model = make_model()
        opt = zoo.OPTIMIZERS[opt_name](model)
        batch = make_batch(torch.Generator().manual_seed(2))
        step = compile_train_step(model, loss_fn, opt, batch, micro_batches=3)
        step(*batch)  # creates the states
        torch.Tensor.copy_ = counting_copy
        try:
            step(*batch)
        finally:
            torch.Tensor.copy_ = original_copy
        # CHECK: mlp sgd: writes in place True, Python copies during a call 0
        # CHECK: mlp adamw: writes in place True, Python copies during a call 0
        # CHECK: mlp nesterov: writes in place True, Python copies during a call 0
        # CHECK: gpt adamw: writes in place True, Python copies during a call 0
        print(f"{name} {opt_name}: writes in place {step.writes_in_place()}, "
              f"Python copies during a call {copies['n']}")
        failures += not step.writes_in_place() or copies["n"] != 0
        copies["n"] = 0

libraries, ok = lowered_signature_ok(os.environ["GA_MLIR_CACHE_DIR"])
# CHECK: libraries written in place: 4, signatures and no memcpy: True
print(f"libraries written in place: {libraries}, signatures and no memcpy: "
      f"{ok}")
failures += libraries != 4 or not ok

# Values and storage against PyTorch (zoo.check: data_ptr of parameters and
# states, values after each of 3 steps), in place and not.
# CHECK: in-place sgd N=4: {{.*}} OK
# CHECK: in-place adamw N=4: {{.*}} OK
failures += zoo.check("in-place", zoo.CNN, zoo.cnn_batch,
                      zoo.classification_loss, ns=(4,))
# CHECK: copying sgd N=3: {{.*}} OK
# CHECK: copying adamw N=3: {{.*}} OK
failures += zoo.check("copying", zoo.MLP, zoo.mlp_batch,
                      zoo.classification_loss, ns=(3,), in_place=False)


class SharedViews(torch.nn.Module):
    """Two parameters that are views of one tensor."""

    def __init__(self):
        super().__init__()
        base = torch.randn(2, 12, 5)
        self.a = torch.nn.Parameter(base[0])
        self.b = torch.nn.Parameter(base[1])
        self.b.data = base.view(-1)[50:110].view(12, 5)  # overlaps a

    def forward(self, x):
        return x @ self.a + x @ self.b


model = SharedViews()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batch = zoo.mlp_batch(torch.Generator().manual_seed(0))
step = compile_train_step(model, zoo.classification_loss, opt, batch,
                          micro_batches=2)
# CHECK: shared: arguments 0 and 1 of the step share memory, and one of them is updated in place
failures += zoo.call_refused("shared", lambda: step(*batch))
sys.exit(failures)
