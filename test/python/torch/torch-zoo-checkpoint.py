# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# transformers' gradient checkpointing (model.gradient_checkpointing_enable():
# each layer calls a functools.partial of torch.utils.checkpoint, and a hook
# makes the input embeddings' output require a gradient): the zoo's GPT-2
# (model_zoo.gpt2) with use_reentrant=True at N = 1 and with transformers'
# default (use_reentrant=False) at N = 4, a padded batch of 8, SGD with
# momentum, two steps, against PyTorch's own full-batch step with its
# checkpoints (the zoo's criterion for SGD: within 1e-4). The compiled
# step's IR is the one of the same model without checkpointing, up to
# locations (so its numbers are too, bitwise).

import copy
import re
import sys
import warnings

import torch

import model_zoo
from ga_mlir.torch import compile_train_step, export_train_step

model_zoo.quiet()
warnings.filterwarnings("ignore", category=FutureWarning)


def sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def strip_locations(text):
    text = re.sub(r" loc\(#loc\d*\)", "", text)
    return "\n".join(line for line in text.splitlines()
                     if not line.startswith("#loc"))


torch.manual_seed(0)
base = model_zoo.gpt2().train()
gen = torch.Generator().manual_seed(1)
batches = [model_zoo.MODELS["gpt2"].make_batch(gen, 8) for _ in range(2)]
plain = copy.deepcopy(base)
plain_ir, _ = export_train_step(plain, model_zoo.hf_loss, sgd(plain),
                                batches[0])
plain_ir = strip_locations(plain_ir)

ok = True
for reentrant, n in ((True, 1), (None, 4)):
    model = copy.deepcopy(base)
    model.gradient_checkpointing_enable(
        gradient_checkpointing_kwargs=None if reentrant is None else
        {"use_reentrant": reentrant})
    reference = copy.deepcopy(model)
    opt, ref_opt = sgd(model), sgd(reference)
    step = compile_train_step(model, model_zoo.hf_loss, opt,
                              example_inputs=batches[0], micro_batches=n)
    worst = 0.0
    for batch in batches:
        ours = step(*batch)
        ref = model_zoo._pytorch_step(reference, ref_opt, model_zoo.hf_loss,
                                      batch, model_zoo.next_seed())
        worst = max(worst, model_zoo._distance(
            model_zoo._tensors(model, ours), model_zoo._tensors(reference,
                                                                ref)))
    same = strip_locations(next(iter(step._variants.values())).ir) == \
        plain_ir
    good = worst <= 1e-4 and same
    ok = ok and good
    print(f"gpt2 use_reentrant={reentrant} N={n}: vs PyTorch {worst:.1e}, "
          f"same IR as without checkpointing: {same} "
          f"{'OK' if good else 'FAIL'}")
# CHECK: gpt2 use_reentrant=True N=1: {{.*}} same IR as without checkpointing: True OK
# CHECK: gpt2 use_reentrant=None N=4: {{.*}} same IR as without checkpointing: True OK
sys.exit(not ok)
