# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# What compile_train_step refuses, and where it says the problem is: the
# user's line in the model (MLIR locations from the traced nodes' stack
# traces, reduced to the user's frames). BatchNorm in evaluation mode is
# accepted and exact.

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo
from ga_mlir.torch import CompileError, compile_train_step

def line_of(path, marker):
    with open(path) as f:
        return next(i + 1 for i, text in enumerate(f)
                    if text.rstrip().endswith("# " + marker))


def refused(name, model, marker=None, path=__file__, **options):
    """Prints the first line of the refusal and whether it names the line
    marked `marker` in this file."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = zoo.cnn_batch(torch.Generator().manual_seed(0)) \
        if name.startswith("bn") else \
        zoo.lm_batch(torch.Generator().manual_seed(0)) \
        if name == "mha" else zoo.mlp_batch(torch.Generator().manual_seed(0))
    loss = zoo.lm_loss if name == "mha" else zoo.classification_loss
    try:
        compile_train_step(model, loss, opt, example_inputs=batch,
                           micro_batches=2, **options)
        print(f"{name}: ACCEPTED")
    except CompileError as error:
        text = str(error)
        lines = text.splitlines()
        first = next((line for line in lines if "error" in line), lines[0])
        print(f"{name}: refused: {first}")
        if marker:
            lines = [f"{path}:{line_of(path, m)}:" for m in marker.split("|")]
            located = any(where in first for where in lines)
            print(f"{name}: located at the model's line: {located}")
    except TypeError as error:
        print(f"{name}: TypeError: {error}")


class WithNoise(zoo.MLP):
    def forward(self, x):
        return self.net(x + 0.1 * torch.randn_like(x))  # noise call


class WithBatchNorm(zoo.BatchNormCNN):
    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))  # batch norm call
        return self.fc(F.max_pool2d(x, 2).flatten(1))


# CHECK: bn-train: refused: {{.*}}torch-refusals.py:{{[0-9]+}}: error: BatchNorm2d in training mode normalizes with statistics of the whole batch
# CHECK: bn-train: located at the model's line: True
refused("bn-train", WithBatchNorm(), "batch norm call")
# Dropout, torch.bernoulli and torch.rand are drawn by sample (see
# torch-dropout.py); Gaussian noise is not.
# CHECK: noise: refused: {{.*}}: error: the step draws random numbers with torch.{{.*}}, which the compiled step cannot draw
# CHECK: noise: located at the model's line: True
refused("noise", WithNoise(), "noise call")
# nn.MultiheadAttention is traced batch-first (torch-zoo-more.py checks it);
# the forms it does not write are refused by name at the call.
# CHECK: mha: refused: {{.*}}zoo.py:{{[0-9]+}}: error: MultiheadAttention(add_bias_kv=True or add_zero_attn=True) is not supported
# CHECK: mha: located at the model's line: True
model = zoo.GPT(mha=True)
model.block.mha = nn.MultiheadAttention(16, 4, batch_first=True,
                                        add_bias_kv=True)
refused("mha", model, "mha call", zoo.__file__)


class WithIndexAdd(zoo.MLP):
    def forward(self, x):
        out = self.net(x)
        return out.index_add(1, torch.tensor([0, 2, 2, 4, 1]), out)  # add


class WithShuffle(zoo.MLP):
    def forward(self, x):
        other = x[torch.arange(x.shape[0]).flip(0)]  # shuffle
        return self.net(x) * (other > 0)[:, :5]


# A gather across the batch (sample i reads sample B - 1 - i): refused at the
# model's line, in PyTorch's words, with ga-mlir's own after them.
# CHECK: shuffle: refused: {{.*}}torch-refusals.py:{{[0-9]+}}: error: this line reads a per-sample tensor by index
# CHECK: shuffle: located at the model's line: True
refused("shuffle", WithShuffle(), "shuffle")


# index_add becomes torch-mlir's tm_tensor.scatter: refused by name.
# CHECK: index-add: refused: {{.*}}torch-refusals.py:{{[0-9]+}}: error: torch-mlir lowered part of the step to tm_tensor.scatter
# CHECK: index-add: located at the model's line: True
refused("index-add", WithIndexAdd(), "add")
# CHECK: options: TypeError: compile_train_step: unknown option 'no_such_option'
refused("options", zoo.MLP(), no_such_option=1)


# CHECK: optimizer: refused: optimizer RMSprop is not supported (SGD, Adam and AdamW are)
try:
    m = zoo.MLP()
    compile_train_step(m, zoo.classification_loss,
                       torch.optim.RMSprop(m.parameters()),
                       example_inputs=zoo.mlp_batch(torch.Generator()),
                       micro_batches=2)
except CompileError as error:
    print(f"optimizer: refused: {error}")


def eval_batch_norm():
    m = zoo.BatchNormCNN()
    m.bn.running_mean.uniform_(-1, 1)
    m.bn.running_var.uniform_(0.5, 2)
    return m.eval()


# CHECK: bn-eval sgd N=3: {{.*}} OK
failures = zoo.check("bn-eval", eval_batch_norm, zoo.cnn_batch,
                     zoo.classification_loss, optimizers=("sgd",), ns=(3,))
sys.exit(failures)
