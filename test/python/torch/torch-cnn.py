# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# A CNN (Conv2d with padding, ReLU, MaxPool2d, Conv2d, AvgPool2d, Linear)
# with cross-entropy, B = 7, against PyTorch's full-batch step; then max
# pooling with overlapping, padded windows (kernel 3, stride 2, padding 1).

import sys

import torch.nn as nn
import torch.nn.functional as F

import zoo

failures = zoo.check("cnn", zoo.CNN, zoo.cnn_batch, zoo.classification_loss)
# CHECK: cnn sgd N=1: {{.*}} OK
# CHECK: cnn sgd N=3: {{.*}} OK
# CHECK: cnn sgd N=4: {{.*}} OK
# CHECK: cnn adamw N=1: {{.*}} OK
# CHECK: cnn adamw N=3: {{.*}} OK
# CHECK: cnn adamw N=4: {{.*}} OK


class OverlappingPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.fc = nn.Linear(3 * 3 * 3, 6)

    def forward(self, x):
        x = F.max_pool2d(self.conv(x), 3, stride=2, padding=1)
        return self.fc(x.flatten(1))


failures += zoo.check("overlapping-pool", OverlappingPool, zoo.cnn_batch,
                      zoo.classification_loss, optimizers=("sgd",), ns=(3,))
# CHECK: overlapping-pool sgd N=3: {{.*}} OK
sys.exit(failures)
