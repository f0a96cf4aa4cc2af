"""What the generators of the convolution steps beside it (gen_conv_step.py,
gen_depthwise_step.py) share: a model's training step exported as
ga_mlir.torch.export_train_step exports it, its inputs marked per-sample."""
import re
import sys

import torch
import torch.nn.functional as F

from ga_mlir.torch import export_train_step


def write_sgd_step(model, x, y):
    """Writes to stdout the cross-entropy SGD-with-momentum step of `model`
    (lr 0.1, momentum 0.9) on the float inputs `x` and the int64 labels `y`,
    both marked per-sample along dimension 0 (ga.batch) where they stand
    among the step's arguments."""
    text, _ = export_train_step(
        model, lambda m, x, y: F.cross_entropy(m(x), y),
        torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), (x, y))
    for value, element in ((x, "f32"), (y, "i64")):
        shape = "x".join(map(str, value.shape))
        text = re.sub(r"(%%arg\d+: tensor<%sx%s>)" % (shape, element),
                      r"\1 {ga.batch = 0 : i64}", text, count=1)
    sys.stdout.write(text)
