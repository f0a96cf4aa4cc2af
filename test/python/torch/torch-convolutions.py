# RUN: rm -rf %t.cache
# RUN: env PYTHONPATH=%ga_python_path:%torch_zoo GA_MLIR_CACHE_DIR=%t.cache %torch_python %s | FileCheck %s
#
# The convolutions torchvision's models use: grouped, depthwise, dilated,
# strided, transposed (torch-mlir lowers neither grouped convolutions nor the
# backward of transposed ones: _convolutions.py traces them in forms it
# does). First the forms against PyTorch's own kernels (values and
# gradients, eager), then a model of all of them trained against PyTorch's
# full-batch step (zoo.check: 7 samples in N = 3, two steps). Grouped
# convolutions of every stride go through the forms: torch-mlir's own
# lowering of a stride-2 depthwise convolution's weight gradient casts a
# gradient of the wrong shape into the weight's (refused by
# --ga-check-constant-indices, test/Transforms).

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import zoo
from ga_mlir.torch._convolutions import ConvolutionForms

torch.manual_seed(0)
LAYERS = [
    ("grouped", nn.Conv2d(4, 6, 3, groups=2)),
    ("depthwise", nn.Conv2d(4, 4, 3, groups=4, padding=1)),
    ("depthwise-strided", nn.Conv2d(4, 8, 5, stride=2, padding=2, groups=4)),
    # MobileNet's downsampling: stride 2 leaves the input's last row unread
    # (torch-mlir's own lowering of its weight gradient is wrong).
    ("depthwise-stride2-pad1", nn.Conv2d(8, 8, 3, stride=2, padding=1,
                                         groups=8)),
    ("grouped-dilated-same", nn.Conv2d(6, 6, 3, groups=3, dilation=2,
                                       padding="same")),
    ("conv1d-grouped", nn.Conv1d(4, 8, 3, groups=2, stride=2)),
    ("conv3d-grouped", nn.Conv3d(4, 4, 3, groups=2, padding=1)),
    ("transposed", nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                      output_padding=1)),
    ("transposed-grouped", nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2)),
    ("transposed-dilated", nn.ConvTranspose2d(4, 2, (3, 2), stride=(2, 3),
                                              padding=(1, 0),
                                              dilation=(2, 1))),
    ("transposed1d-depthwise", nn.ConvTranspose1d(4, 4, 4, stride=3,
                                                  groups=4)),
]
failures = 0
for name, layer in LAYERS:
    x = torch.randn(3, layer.in_channels, *([7] * (layer.weight.dim() - 2)),
                    requires_grad=True)
    y = layer(x)
    g = torch.randn_like(y)
    expected = torch.autograd.grad(y, [x, *layer.parameters()], g)
    with ConvolutionForms():
        y2 = layer(x)
    got = torch.autograd.grad(y2, [x, *layer.parameters()], g)
    err = max([(y - y2).abs().max().item()] +
              [(a - b).abs().max().item() for a, b in zip(expected, got)])
    failures += err > 1e-4
    # CHECK-COUNT-11: {{.*}}: forms vs PyTorch's kernels {{.*}} OK
    print(f"{name}: forms vs PyTorch's kernels {err:.2g}",
          "OK" if err <= 1e-4 else "FAIL")


class AllConvolutions(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8)
        self.grouped = nn.Conv2d(8, 12, 3, padding=1, groups=4)
        self.down = nn.Conv2d(12, 12, 3, stride=2, padding=1, groups=12)
        self.up = nn.ConvTranspose2d(12, 6, 3, stride=2, padding=1,
                                     output_padding=1, groups=2)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = F.relu(self.grouped(F.relu(self.depthwise(x))))
        x = F.relu(self.down(x))
        return self.fc(F.adaptive_avg_pool2d(self.up(x), 1).flatten(1))


def batch(gen):
    return (torch.randn(7, 3, 8, 8, generator=gen),
            torch.randint(0, 4, (7,), generator=gen))


# CHECK: convolutions sgd N=3: {{.*}} OK
# CHECK: convolutions adamw N=3: {{.*}} OK
failures += zoo.check("convolutions", AllConvolutions, batch,
                      zoo.classification_loss, ns=(3,), steps=2)
sys.exit(failures)
