# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The models of torch-moe-aux-losses.py with padded sequences, against
# PyTorch's own full-batch step: transformers' load_balancing_loss_func with
# the attention mask (token fractions and mean probabilities over the real
# tokens, their count a data-only statistic), the token-mean cross-entropy
# over the labels that are neither -100 nor padding, and a sequence-wise
# balance loss (per sample, averaged over the samples). N = 4 and 8 on a
# batch of 10 (remainders). A balance loss whose fractions are soft (the
# mean probabilities themselves: a gradient flows through both factors of
# the product) is refused at the router's line, the batch mean in a note.

import importlib.util
import os

import torch
import torch.nn.functional as F

import zoo
from ga_mlir.torch import CompileError, compile_train_step

_spec = importlib.util.spec_from_file_location(
    "moe_aux", os.path.join(os.path.dirname(__file__),
                            "torch-moe-aux-losses.py"))
moe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(moe)

failures = 0
# CHECK: lb masked seed2 sgd N=4: {{.*}} OK
# CHECK: lb masked seed2 adamw N=8: {{.*}} OK
failures += zoo.check("lb masked seed2", lambda: moe.MoE(2), moe.batch,
                      moe.loss_masked, optimizers=("sgd",), ns=(4,))
failures += zoo.check("lb masked seed2", lambda: moe.MoE(2), moe.batch,
                      moe.loss_masked, optimizers=("adamw",), ns=(8,))


def soft_balance(model, ids, labels, mask):
    logits, gates = model(ids)
    ce = F.cross_entropy(logits.reshape(-1, moe.VOCAB), labels.reshape(-1))
    probs = F.softmax(gates[0], -1)  # router probabilities
    return ce + moe.AUX * moe.E * (probs.mean(0) * probs.mean(0)).sum()  # soft


# CHECK: soft: error at the router: True
# CHECK: soft: note at the batch mean: True
# CHECK: soft: {{.*}}error: each sample's computation here uses a value computed from the whole batch
model = moe.MoE(0)
try:
    compile_train_step(model, soft_balance,
                       torch.optim.SGD(model.parameters(), lr=0.1),
                       example_inputs=moe.batch(
                           torch.Generator().manual_seed(0)),
                       micro_batches=2)
    print("soft: ACCEPTED")
except CompileError as error:
    lines = str(error).splitlines()
    router = f"{__file__}:{zoo.line_of(__file__, 'router probabilities')}:"
    mean = f"{__file__}:{zoo.line_of(__file__, 'soft')}:"
    errors = [line for line in lines if ": error: " in line]
    print("soft: error at the router:",
          bool(errors) and errors[0].startswith(router))
    print("soft: note at the batch mean:",
          any(line.startswith(mean) and ": note: " in line
              for line in lines))
    print("soft:", errors[0][:200] if errors else lines[0])

# CHECK: failures: 0
print(f"failures: {failures}")
